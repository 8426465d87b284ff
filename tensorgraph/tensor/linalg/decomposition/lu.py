"""LU factorizations (PyTensor's ``linalg.decomposition.lu``): ``lu``, ``lu_factor`` and
``pivot_to_permutation``, batched by ``Blockwise``, differentiable for square matrices."""

from __future__ import annotations

import warnings

import numpy as np

from tensorgraph.gradient import disconnected_type
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.raise_op import assert_op
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.creation import tril, triu
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, linalg_dtype, matrix_error, matrix_input, transposed,
)
from tensorgraph.tensor.math import eq, minimum
from tensorgraph.tensor.type import TensorType

__all__ = ["LU", "lu", "LUFactor", "lu_factor", "PivotToPermutations", "pivot_to_permutation"]


class LU(Op):
    """scipy's ``lu``: ``x == P @ L @ U`` with ``L`` unit lower and ``U`` upper; outputs
    ``(P, L, U)``, ``(P @ L, U)`` with ``permute_l``, or the row indices instead of ``P``
    with ``p_indices``."""

    __props__ = ("permute_l", "p_indices")

    def __init__(self, permute_l: bool = False, p_indices: bool = False):
        self.permute_l = bool(permute_l)
        self.p_indices = bool(p_indices)

    @property
    def gufunc_signature(self):
        return "(m,n)->(m,k),(k,n)" if self.permute_l else "(m,n)->(m,m),(m,k),(k,n)"

    def make_node(self, x):
        x = as_matrix(x, "lu")
        dtype = linalg_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        lower, upper = TensorType(dtype, (m, k))(), TensorType(dtype, (k, n))()
        if self.permute_l:
            return Apply(self, [x], [lower, upper])
        perm = TensorType("int32", (m,))() if self.p_indices else TensorType(dtype, (m, m))()
        return Apply(self, [x], [perm, lower, upper])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        outs = scipy.linalg.lu(x, permute_l=self.permute_l, p_indices=self.p_indices)
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        m, n = input_shapes[0]
        k = minimum(m, n)
        if self.permute_l:
            return [(m, k), (k, n)]
        return [(m,) if self.p_indices else (m, m), (m, k), (k, n)]

    def L_op(self, inputs, outputs, output_grads):
        """For a square matrix (the permutation is piecewise constant): see ``_lu_grad``;
        with ``permute_l`` the gradient of ``P @ L`` reaches ``L`` as ``P.T @ g``."""
        (x,) = inputs
        if self.permute_l or self.p_indices:
            p, l, u = lu(x)
        else:
            p, l, u = outputs
        if self.permute_l:
            gpl, gu = output_grads
            gl = transposed(p).dot(gpl)
        else:
            gl, gu = output_grads[1:]
        return [_lu_grad(x, p, l, u, gl, gu)]


def _lu_grad(x, p, l, u, gl, gu):
    """With ``X = L^-1 P.T dA U^-1`` (``L^-1 dL`` its strict lower part, ``dU U^-1`` its
    upper part): ``gA = P L^-T (tril(L.T gL, -1) + triu(gU U.T)) U^-T``; square matrices
    only (a ValueError when the gradient runs on another)."""
    from tensorgraph.tensor.linalg.solvers import solve_triangular

    u = assert_op(u, eq(x.shape[0], x.shape[1]), error="ValueError",
                  msg="lu: the gradient needs a square matrix")
    middle = tril(transposed(l).dot(gl), -1) + triu(gu.dot(transposed(u)))
    left = solve_triangular(l, middle, trans=1, lower=True, unit_diagonal=True)
    return p.dot(transposed(solve_triangular(u, transposed(left), lower=False)))


def lu(a, permute_l: bool = False, check_finite: bool = True, p_indices: bool = False,
       overwrite_a: bool = False):
    """scipy's ``lu`` of ``a`` (or of each matrix of a stack), see ``LU``."""
    a = matrix_input(a, 2, "lu")
    return batched(LU(permute_l, p_indices))(a)


class LUFactor(Op):
    """scipy's ``lu_factor``: the packed LU factors and the pivot indices (int32), the input
    of ``lu_solve``. A singular matrix raises ``numpy.linalg.LinAlgError``."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m),(m)"

    def make_node(self, x):
        x = as_matrix(x, "lu_factor", square=True)
        dtype = linalg_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, x.type.shape)(),
                                 TensorType("int32", x.type.shape[:1])()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        check_square("lu_factor", x)
        a = np.asarray(x, dtype=node.outputs[0].type.dtype)
        with warnings.catch_warnings():   # scipy warns of a singular matrix: we raise
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            factors, piv = scipy.linalg.lu_factor(a, check_finite=False)
        if a.size and not np.all(np.diagonal(factors)):
            raise matrix_error("lu_factor", "is singular")
        output_storage[0][0] = factors
        output_storage[1][0] = np.asarray(piv, dtype="int32")

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        return [shape, shape[:1]]

    def connection_pattern(self, node):
        return [[True, False]]

    def L_op(self, inputs, outputs, output_grads):
        """The packed factors hold L's strict lower part and U: their gradients split the
        same way, then as ``lu``'s (the pivots are piecewise constant)."""
        (x,), g = inputs, output_grads[0]
        p, l, u = lu(x)
        return [_lu_grad(x, p, l, u, tril(g, -1), triu(g))]


def lu_factor(a, *, check_finite: bool = True, overwrite_a: bool = False):
    """``(LU, pivots)`` of ``a`` (or of each matrix of a stack), for ``lu_solve``."""
    a = matrix_input(a, 2, "lu_factor")
    return batched(LUFactor())(a)


class PivotToPermutations(Op):
    """The row order of ``lu_factor``'s pivots (LAPACK's sequence of row swaps): with
    ``inverse`` the rows ``q`` with ``A[q] == L @ U``, without it their inverse
    permutation (int64)."""

    __props__ = ("inverse",)
    gufunc_signature = "(m)->(m)"

    def __init__(self, inverse: bool = True):
        self.inverse = bool(inverse)

    def make_node(self, pivots):
        pivots = as_tensor_variable(pivots)
        if pivots.type.ndim != 1 or not pivots.type.dtype.startswith(("int", "uint")):
            raise TypeError(f"pivot_to_permutation: expected an integer vector of pivots, got "
                            f"{pivots} ({pivots.type})")
        return Apply(self, [pivots], [TensorType("int64", pivots.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (pivots,) = inputs
        rows = np.arange(len(pivots), dtype="int64")
        for i, j in enumerate(pivots):
            rows[i], rows[j] = rows[j], rows[i]
        output_storage[0][0] = rows if self.inverse else np.argsort(rows)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]


def pivot_to_permutation(p, inverse: bool = False):
    """The permutation of ``lu_factor``'s pivots ``p`` (or of each vector of a stack): the
    inverse of the row order ``q`` with ``A[q] == L @ U``, or ``q`` itself with ``inverse``."""
    return batched(PivotToPermutations(inverse))(
        matrix_input(p, 1, "pivot_to_permutation"))
