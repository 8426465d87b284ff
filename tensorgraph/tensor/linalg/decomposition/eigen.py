"""Eigendecompositions (PyTensor's ``linalg.decomposition.eigen``): ``eig``, ``eigh`` (also
the generalized symmetric problem) and ``eigvalsh``, batched by ``Blockwise``; the symmetric
ones differentiable."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.creation import eye
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, fold_to_triangle, linalg_dtype, matrix_error,
    matrix_input, real_dtype, transposed,
)
from tensorgraph.tensor.math import eq, switch
from tensorgraph.tensor.type import TensorType

__all__ = ["Eig", "eig", "Eigh", "GeneralizedEigh", "eigh", "Eigvalsh", "eigvalsh"]


class Eig(Op):
    """numpy's ``eig``: eigenvalues and right eigenvectors of a square matrix, complex
    (complex64 for single precision inputs, else complex128). No gradient."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m),(m,m)"

    def make_node(self, x):
        x = as_matrix(x, "eig", square=True)
        dtype = "complex64" if linalg_dtype(x.type.dtype) in ("float32", "complex64") \
            else "complex128"
        m = x.type.shape[0]
        return Apply(self, [x], [TensorType(dtype, (m,))(), TensorType(dtype, (m, m))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("eig", x)
        w, v = np.linalg.eig(x)
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(v, dtype=node.outputs[1].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), = input_shapes
        return [(m,), (m, m)]


def eig(x):
    """Eigenvalues and eigenvectors of ``x`` (or of each matrix of a stack), complex."""
    return batched(Eig())(matrix_input(x, 2, "eig"))


def _uplo(lower, UPLO):
    if UPLO is not None:
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        return UPLO == "L"
    return bool(lower)


class Eigh(Op):
    """numpy's ``eigh``: ascending eigenvalues and orthonormal eigenvectors of a symmetric
    (Hermitian) matrix, read from its lower (or upper) triangle."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m)->(m),(m,m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, x):
        x = as_matrix(x, "eigh", square=True)
        dtype = linalg_dtype(x.type.dtype)
        m = x.type.shape[0]
        return Apply(self, [x], [TensorType(real_dtype(dtype), (m,))(),
                                 TensorType(dtype, (m, m))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("eigh", x)
        a = np.asarray(x, dtype=node.outputs[1].type.dtype)
        w, v = np.linalg.eigh(a, UPLO="L" if self.lower else "U")
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = v

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), = input_shapes
        return [(m,), (m, m)]

    def L_op(self, inputs, outputs, output_grads):
        """``V (diag(gw) + F * (V.T gV)) V.T`` with ``F_ij = 1 / (w_j - w_i)`` off the
        diagonal, folded onto the triangle ``eigh`` reads."""

        w, v = outputs
        gw, gv = output_grads
        n = w.shape[0]
        diff = w.dimshuffle("x", 0) - w.dimshuffle(0, "x")
        f = (1 - eye(n, dtype=w.dtype)) / switch(eq(diff, 0), 1, diff)
        inner = gw * eye(n, dtype=w.dtype) + f * transposed(v).dot(gv)
        grad = v.dot(inner).dot(transposed(v))
        return [fold_to_triangle(0.5 * (grad + transposed(grad)), self.lower)]


class GeneralizedEigh(Op):
    """scipy's ``eigh(a, b)``: ascending ``w`` and ``v`` with ``a @ v == b @ v * w`` and
    ``v.T @ b @ v == I``, for symmetric ``a`` and symmetric positive definite ``b`` (both
    read from their lower, or upper, triangle)."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m),(m,m)->(m),(m,m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, a, b):
        a = as_matrix(a, "eigh", square=True)
        b = as_matrix(b, "eigh", square=True)
        dtype = linalg_dtype(a.type.dtype, b.type.dtype)
        m = a.type.shape[0] if a.type.shape[0] is not None else b.type.shape[0]
        return Apply(self, [a, b], [TensorType(real_dtype(dtype), (m,))(),
                                    TensorType(dtype, (m, m))()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        check_square("eigh", a)
        check_square("eigh", b)
        if a.shape != b.shape:
            raise ValueError(f"eigh: a and b differ in shape: {a.shape} and {b.shape}")
        dtype = node.outputs[1].type.dtype
        try:
            w, v = scipy.linalg.eigh(np.asarray(a, dtype), np.asarray(b, dtype),
                                     lower=self.lower, check_finite=False)
        except np.linalg.LinAlgError:
            raise matrix_error("eigh", "b is not positive definite") from None
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(v, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), _ = input_shapes
        return [(m,), (m, m)]

    def L_op(self, inputs, outputs, output_grads):
        """From ``dw_j = v_j.T (dA - w_j dB) v_j`` and ``dV = V C`` (``C_ij`` =
        ``v_i.T (dA - w_j dB) v_j / (w_j - w_i)`` off the diagonal, ``-v_j.T dB v_j / 2`` on
        it), with ``G = V.T gV`` and ``F_ij = 1 / (w_j - w_i)``:
        ``gA = V (diag(gw) + G * F) V.T`` and
        ``gB = -V (diag(gw * w) + (G * F) w_j + diag(G) / 2) V.T``, folded onto the
        triangles read."""
        w, v = outputs
        gw, gv = output_grads
        n = w.shape[0]
        identity = eye(n, dtype=w.dtype)
        diff = w.dimshuffle("x", 0) - w.dimshuffle(0, "x")
        gf = transposed(v).dot(gv) * (1 - identity) / switch(eq(diff, 0), 1, diff)
        g_a = v.dot(gw * identity + gf).dot(transposed(v))
        inner = (gw * w) * identity + gf * w.dimshuffle("x", 0) + 0.5 * transposed(v).dot(gv) * identity
        g_b = -v.dot(inner).dot(transposed(v))
        return [fold_to_triangle(0.5 * (g + transposed(g)), self.lower) for g in (g_a, g_b)]


def eigh(a, b=None, lower: bool = True, UPLO=None, driver: str = "evr"):
    """Eigenvalues (ascending) and eigenvectors of the symmetric ``a`` (or of each matrix of
    a stack): ``(w, v)``; with ``b`` the generalized problem ``a v = w b v`` (scipy's).
    ``UPLO`` ('L' / 'U', numpy's spelling) overrides ``lower``."""
    a = matrix_input(a, 2, "eigh")
    if b is not None:
        return batched(GeneralizedEigh(_uplo(lower, UPLO)))(a, matrix_input(b, 2, "eigh"))
    return batched(Eigh(_uplo(lower, UPLO)))(a)


class Eigvalsh(Op):
    """The eigenvalues (ascending) of a symmetric matrix, without the vectors."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m)->(m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, x):
        x = as_matrix(x, "eigvalsh", square=True)
        dtype = real_dtype(linalg_dtype(x.type.dtype))
        return Apply(self, [x], [TensorType(dtype, x.type.shape[:1])()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("eigvalsh", x)
        w = np.linalg.eigvalsh(x, UPLO="L" if self.lower else "U")
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:1]]

    def L_op(self, inputs, outputs, output_grads):
        """``V diag(gw) V.T`` with the eigenvectors of ``eigh``, on the triangle read."""
        (x,) = inputs
        _, v = eigh(x, lower=self.lower)
        return [fold_to_triangle((v * output_grads[0]).dot(transposed(v)), self.lower)]


def eigvalsh(a, b=None, lower: bool = True):
    """The eigenvalues (ascending) of the symmetric ``a`` (or of each matrix of a stack);
    with ``b`` those of the generalized problem ``a v = w b v``."""
    if b is not None:
        return eigh(a, b, lower=lower)[0]
    return batched(Eigvalsh(lower))(matrix_input(a, 2, "eigvalsh"))
