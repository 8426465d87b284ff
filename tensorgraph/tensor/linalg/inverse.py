"""Matrix inverses (PyTensor's ``pytensor.tensor.linalg.inverse``): ``inv``, ``pinv`` and
``tensorinv``; the first two are per-matrix ops batched by ``Blockwise``."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.creation import eye
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, linalg_dtype, matrix_error, matrix_input,
)
from tensorgraph.tensor.reduction import prod
from tensorgraph.tensor.shape import reshape
from tensorgraph.tensor.type import TensorType

__all__ = ["MatrixInverse", "inv", "matrix_inverse", "MatrixPinv", "pinv", "TensorInv",
           "tensorinv"]


class MatrixInverse(Op):
    """numpy's ``inv`` of a square matrix; a singular one raises
    ``numpy.linalg.LinAlgError``."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"

    def make_node(self, x):
        x = as_matrix(x, "inv", square=True)
        return Apply(self, [x], [TensorType(linalg_dtype(x.type.dtype), x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("inv", x)
        dtype = node.outputs[0].type.dtype
        try:
            output_storage[0][0] = np.asarray(np.linalg.inv(np.asarray(x, dtype)), dtype=dtype)
        except np.linalg.LinAlgError:
            raise matrix_error("inv", "is singular") from None

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        """``-X.T g X.T`` with ``X`` the inverse."""
        (xinv,), (g,) = outputs, output_grads
        return [-xinv.T.dot(g).dot(xinv.T)]


def inv(x):
    """The inverse of the square ``x`` (or of each matrix of a stack)."""
    return batched(MatrixInverse())(matrix_input(x, 2, "inv"))


matrix_inverse = inv


class MatrixPinv(Op):
    """numpy's ``pinv``: the Moore-Penrose pseudo-inverse (``hermitian``: of a symmetric
    matrix, through its eigendecomposition)."""

    __props__ = ("hermitian",)
    gufunc_signature = "(m,n)->(n,m)"

    def __init__(self, hermitian: bool = False):
        self.hermitian = bool(hermitian)

    def make_node(self, x):
        x = as_matrix(x, "pinv", square=self.hermitian)
        m, n = x.type.shape
        return Apply(self, [x], [TensorType(linalg_dtype(x.type.dtype), (n, m))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(np.linalg.pinv(np.asarray(x, dtype),
                                                         hermitian=self.hermitian), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        m, n = input_shapes[0]
        return [(n, m)]

    def L_op(self, inputs, outputs, output_grads):
        """Golub and Pereyra's derivative of ``X = pinv(A)`` (constant rank):
        ``-X.T g X.T + (I - A X) g.T X X.T + X.T X g.T (I - X A)``."""

        (a,), (x,), (g,) = inputs, outputs, output_grads
        left = eye(a.shape[0], dtype=x.dtype) - a.dot(x)
        right = eye(a.shape[1], dtype=x.dtype) - x.dot(a)
        return [-x.T.dot(g).dot(x.T) + left.dot(g.T).dot(x).dot(x.T)
                + x.T.dot(x).dot(g.T).dot(right)]


def pinv(x, hermitian: bool = False):
    """The pseudo-inverse of ``x`` (or of each matrix of a stack)."""
    return batched(MatrixPinv(hermitian))(matrix_input(x, 2, "pinv"))


class TensorInv(Op):
    """numpy's ``tensorinv``: the inverse of a tensor seen as a square matrix whose rows are
    its first ``ind`` axes; the result has the shape ``a.shape[ind:] + a.shape[:ind]``."""

    __props__ = ("ind",)

    def __init__(self, ind: int = 2):
        self.ind = int(ind)

    def make_node(self, a):
        a = as_tensor_variable(a)
        if not 0 < self.ind < a.type.ndim:
            raise ValueError(f"tensorinv: ind must be between 1 and a.ndim - 1 = "
                             f"{a.type.ndim - 1}, got {self.ind} for {a} ({a.type})")
        shape = a.type.shape[self.ind:] + a.type.shape[:self.ind]
        return Apply(self, [a], [TensorType(linalg_dtype(a.type.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        dtype = node.outputs[0].type.dtype
        try:
            out = np.linalg.tensorinv(np.asarray(a, dtype), ind=self.ind)
        except np.linalg.LinAlgError:
            raise matrix_error("tensorinv", "(as a square matrix) is singular") from None
        output_storage[0][0] = np.asarray(out, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        return [tuple(shape[self.ind:]) + tuple(shape[:self.ind])]

    def L_op(self, inputs, outputs, output_grads):
        """``inv``'s gradient on the matrix forms: ``-X.T g X.T``, reshaped back."""
        (a,), (out,), (g,) = inputs, outputs, output_grads
        rows = prod(a.shape[:self.ind])
        x = reshape(out, (-1, rows))
        gx = reshape(g, (-1, rows))
        return [reshape(-x.T.dot(gx).dot(x.T), a.shape)]


def tensorinv(a, ind: int = 2):
    """numpy's ``tensorinv`` of ``a`` (see ``TensorInv``)."""
    return TensorInv(ind)(a)
