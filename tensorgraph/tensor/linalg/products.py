"""Products and functions of matrices (PyTensor's ``pytensor.tensor.linalg.products`` and
``constructors``): ``expm``, ``kron``, ``matrix_dot``, ``matrix_power`` and ``block_diag``."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.scalar.basic import upcast
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.creation import eye, zeros_like
from tensorgraph.tensor.dot import dot, matmul
from tensorgraph.tensor.join import concatenate
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, linalg_dtype, matrix_input,
)
from tensorgraph.tensor.linalg.inverse import pinv
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import reshape
from tensorgraph.tensor.type import TensorType

__all__ = ["Expm", "expm", "KroneckerProduct", "kron", "matrix_dot", "matrix_power",
           "BlockDiagonal", "block_diag"]


class Expm(Op):
    """scipy's ``expm``: the exponential of a square matrix."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"

    def make_node(self, x):
        x = as_matrix(x, "expm", square=True)
        return Apply(self, [x], [TensorType(linalg_dtype(x.type.dtype), x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        check_square("expm", x)
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(scipy.linalg.expm(np.asarray(x, dtype)), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        """The Fréchet derivative at ``A.T`` in the direction ``g``: the upper right block
        of ``expm([[A.T, g], [0, A.T]])`` (Najfeld and Havel)."""

        (x,), (g,) = inputs, output_grads
        n = x.shape[0]
        top = concatenate([x.T, g], axis=1)
        bottom = concatenate([zeros_like(x), x.T], axis=1)
        big = expm(concatenate([top, bottom], axis=0))
        return [big[:n, n:]]


def expm(A):
    """The matrix exponential of ``A`` (or of each matrix of a stack)."""
    return batched(Expm())(matrix_input(A, 2, "expm"))


class KroneckerProduct(Op):
    """numpy's ``kron`` of two matrices: the (m*p, n*q) matrix of blocks ``a[i, j] * b``."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_matrix(a, "kron"), as_matrix(b, "kron")

        shape = tuple(None if s is None or t is None else s * t
                      for s, t in zip(a.type.shape, b.type.shape))
        return Apply(self, [a, b], [TensorType(upcast(a.type.dtype, b.type.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(np.kron(*inputs), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (m, n), (p, q) = input_shapes
        return [(m * p, n * q)]

    def L_op(self, inputs, outputs, output_grads):
        """With ``g`` seen as (m, p, n, q): ``ga = sum over p, q of g * b``, ``gb = sum
        over m, n of g * a``."""

        a, b = inputs
        g = reshape(output_grads[0], (a.shape[0], b.shape[0], a.shape[1], b.shape[1]))
        ga = tsum(g * b.dimshuffle("x", 0, "x", 1), axis=(1, 3))
        gb = tsum(g * a.dimshuffle(0, "x", 1, "x"), axis=(0, 2))
        return [ga, gb]


def kron(a, b):
    """numpy's ``kron``: for vectors and matrices the ``KroneckerProduct`` op (a vector with
    a vector gives a vector); tensors of more dimensions (the smaller one padded with
    leading 1s) as the broadcast product of their axes interleaved, reshaped."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise TypeError(f"kron: expected tensors of at least one dimension, got {a} ({a.type}) "
                        f"and {b} ({b.type})")
    if a.type.ndim <= 2 and b.type.ndim <= 2:
        vectors = a.type.ndim == b.type.ndim == 1
        a2 = a.dimshuffle("x", 0) if a.type.ndim == 1 else a
        b2 = b.dimshuffle("x", 0) if b.type.ndim == 1 else b
        out = KroneckerProduct()(a2, b2)
        return reshape(out, (-1,)) if vectors else out
    nd = max(a.type.ndim, b.type.ndim)
    a = a.dimshuffle(*["x"] * (nd - a.type.ndim), *range(a.type.ndim))
    b = b.dimshuffle(*["x"] * (nd - b.type.ndim), *range(b.type.ndim))
    product = _interleaved(a, nd, first=True) * _interleaved(b, nd, first=False)
    return reshape(product, [a.shape[d] * b.shape[d] for d in range(nd)])


def _interleaved(x, nd, first):
    """``x`` with a broadcast axis after (``first``) or before each of its axes, so that
    the product of the two operands pairs axis d of one with axis d of the other."""
    order = []
    for d in range(nd):
        order += [d, "x"] if first else ["x", d]
    return x.dimshuffle(*order)


def matrix_dot(*args):
    """``args[0] @ args[1] @ ...`` (``dot`` in turn, left to right)."""

    if not args:
        raise TypeError("matrix_dot: expected at least one matrix")
    out = args[0]
    for a in args[1:]:
        out = dot(out, a)
    return out


def matrix_power(M, n: int):
    """The square ``M`` (or each matrix of a stack) to the integer power ``n``, by repeated
    squaring; a negative ``n`` uses the pseudo-inverse (as PyTensor)."""

    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: expected an integer power, got {n!r}")
    M = matrix_input(M, 2, "matrix_power")
    if n < 0:

        M, n = pinv(M), -n
    if n == 0:   # the identity, shaped like M (whatever M holds: NaN * 0 is not 0)

        return zeros_like(M) + eye(M.shape[-1], dtype=M.dtype)
    result, base = None, M
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


class BlockDiagonal(Op):
    """scipy's ``block_diag`` of ``n_inputs`` matrices: each on the diagonal of a zero
    matrix, in order."""

    __props__ = ("n_inputs",)

    def __init__(self, n_inputs: int):
        self.n_inputs = int(n_inputs)

    @property
    def gufunc_signature(self):
        return ",".join(f"(m{k},n{k})" for k in range(self.n_inputs)) + "->(m,n)"

    def make_node(self, *matrices):
        if len(matrices) != self.n_inputs:
            raise TypeError(f"block_diag: expected {self.n_inputs} matrices, got "
                            f"{len(matrices)}")

        matrices = [as_matrix(m, "block_diag") for m in matrices]
        shape = tuple(None if any(m.type.shape[d] is None for m in matrices)
                      else sum(m.type.shape[d] for m in matrices) for d in (0, 1))
        dtype = upcast(*(m.type.dtype for m in matrices))
        return Apply(self, matrices, [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        output_storage[0][0] = np.asarray(scipy.linalg.block_diag(*inputs),
                                          dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        rows, cols = input_shapes[0]
        for r, c in input_shapes[1:]:
            rows, cols = rows + r, cols + c
        return [(rows, cols)]

    def L_op(self, inputs, outputs, output_grads):
        """Each matrix gets its block of the output's gradient."""
        (g,) = output_grads
        grads, r, c = [], 0, 0
        for m in inputs:
            r2, c2 = r + m.shape[0], c + m.shape[1]
            grads.append(g[r:r2, c:c2])
            r, c = r2, c2
        return grads


def block_diag(*matrices):
    """The matrices on the diagonal of a zero matrix (scipy's ``block_diag``); stacks of
    matrices give a stack of block-diagonal matrices."""
    if not matrices:
        raise TypeError("block_diag: expected at least one matrix")
    matrices = [matrix_input(m, 2, "block_diag") for m in matrices]
    return batched(BlockDiagonal(len(matrices)))(*matrices)
