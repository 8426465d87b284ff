"""Diagonals: ``diagonal`` (``ExtractDiag``), ``alloc_diag``, ``diag``, ``trace`` and the index
helpers ``tril_indices``, ``triu_indices`` (and ``*_from``), as numpy has them.

``ExtractDiag`` is an op (PyTensor code builds it by name): ``np.diagonal`` in ``perform``, a
strided copy in C, the array library's ``diagonal`` on the other back ends. Its gradient writes
the output gradient back on the diagonal of zeros. The other functions are compositions (advanced indexing, ``tri`` and ``nonzero``), with those ops' C and
gradients.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.creation import arange, tri, zeros, zeros_like
from tensorgraph.tensor.nonzero import nonzero
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.reduction import zeros_gradient
from tensorgraph.tensor.shape import as_int_scalar, normalize_axis, shape_i
from tensorgraph.tensor.subtensor import getitem, set_subtensor
from tensorgraph.tensor.type import TensorType

__all__ = ["ExtractDiag", "diagonal", "alloc_diag", "diag", "trace", "tril_indices",
           "triu_indices", "tril_indices_from", "triu_indices_from"]


def _diagonal_length(n1, n2, offset):
    """How many entries the diagonal ``offset`` of an (n1, n2) array has (Python ints)."""
    return max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))


class ExtractDiag(Op):
    """The diagonal ``offset`` of the planes (``axis1``, ``axis2``) of ``x``, as
    ``np.diagonal``: those two axes are removed and the diagonal is the last axis."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1, view: bool = False):
        self.offset, self.axis1, self.axis2 = int(offset), int(axis1), int(axis2)

    def axes(self, ndim):
        """(axis1, axis2) for an input of ``ndim`` dimensions, as non-negative axes."""
        a1 = normalize_axis(self.axis1, ndim, "diagonal axis1")
        a2 = normalize_axis(self.axis2, ndim, "diagonal axis2")
        if a1 == a2:
            raise ValueError(f"diagonal: axis1 and axis2 are both {a1}; they must differ")
        return a1, a2

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim < 2:
            raise ValueError(f"diagonal: needs at least 2 dimensions, {x} has {x.ndim}")
        a1, a2 = self.axes(x.ndim)
        n1, n2 = x.type.shape[a1], x.type.shape[a2]
        length = None if None in (n1, n2) else _diagonal_length(n1, n2, self.offset)
        rest = tuple(s for d, s in enumerate(x.type.shape) if d not in (a1, a2))
        return Apply(self, [x], [TensorType(x.dtype, rest + (length,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.diagonal(inputs[0], self.offset, self.axis1,
                                           self.axis2).copy()

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        a1, a2 = self.axes(len(shape))
        n1 = tm.add(shape[a1], min(self.offset, 0))
        n2 = tm.sub(shape[a2], max(self.offset, 0))
        length = tm.maximum(tm.minimum(n1, n2), 0)
        return [tuple(s for d, s in enumerate(shape) if d not in (a1, a2)) + (length,)]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        if x.dtype in ("bool",) or x.dtype.startswith(("int", "uint")):
            return [zeros_gradient(x)]
        a1, a2 = self.axes(x.ndim)
        # numpy's advanced indexing puts the diagonal's axis where the two index arrays are
        # when they are adjacent, first otherwise; the diagonal is gz's last axis
        where = min(a1, a2) if abs(a1 - a2) == 1 else 0
        order = list(range(gz.ndim - 1))
        order.insert(where, gz.ndim - 1)
        value = gz.transpose(*order) if order != list(range(gz.ndim)) else gz
        return [set_subtensor(getitem(zeros_like(x), _diagonal_index(x, self)), value)]


def _diagonal_index(x, op):
    """The advanced index of ``x`` whose result is ``op``'s diagonal (same order of axes)."""
    a1, a2 = op.axes(x.ndim)
    n1 = tm.add(shape_i(x, a1), min(op.offset, 0))
    n2 = tm.sub(shape_i(x, a2), max(op.offset, 0))
    k = arange(tm.maximum(tm.minimum(n1, n2), 0))
    rows, cols = tm.add(k, max(-op.offset, 0)), tm.add(k, max(op.offset, 0))
    index = [slice(None)] * x.ndim
    index[a1], index[a2] = rows, cols
    return tuple(index)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """``np.diagonal``: the diagonal ``offset`` of the planes (``axis1``, ``axis2``) of ``a``,
    as the last axis of the result."""
    return ExtractDiag(offset, axis1, axis2)(a)


def alloc_diag(diag, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """A tensor of one more dimension with the last axis of ``diag`` on the diagonal
    ``offset`` of its planes (``axis1``, ``axis2``), zeros elsewhere (so that
    ``diagonal(alloc_diag(v, o, a1, a2), o, a1, a2)`` is ``v``)."""
    diag = as_tensor_variable(diag)
    if diag.ndim < 1:
        raise ValueError(f"alloc_diag: needs at least 1 dimension, {diag} is 0-d")
    ndim = diag.ndim + 1
    a1 = normalize_axis(axis1, ndim, "alloc_diag axis1")
    a2 = normalize_axis(axis2, ndim, "alloc_diag axis2")
    if a1 == a2:
        raise ValueError(f"alloc_diag: axis1 and axis2 are both {a1}; they must differ")
    n = shape_i(diag, diag.ndim - 1)
    side = tm.add(n, abs(int(offset)))
    batch = [shape_i(diag, d) for d in range(diag.ndim - 1)]
    out = zeros(batch + [side, side], dtype=diag.dtype)
    k = arange(n)
    rows, cols = tm.add(k, max(-int(offset), 0)), tm.add(k, max(int(offset), 0))
    out = set_subtensor(getitem(out, (Ellipsis, rows, cols)), diag)
    # the planes are the last two axes: move them to axis1 and axis2
    order = [None] * ndim
    order[a1], order[a2] = ndim - 2, ndim - 1
    rest = iter(range(ndim - 2))
    order = [next(rest) if o is None else o for o in order]
    return out.transpose(*order)


def diag(v, k: int = 0):
    """``np.diag``: the matrix with the vector ``v`` on its diagonal ``k``, or the diagonal
    ``k`` of the matrix ``v``."""
    v = as_tensor_variable(v)
    if v.ndim == 1:
        return alloc_diag(v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: Input must be 1- or 2-d. Expected a vector or a matrix, got {v} "
                     f"({v.type})")


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """``np.trace``: the sum of the diagonal ``offset`` of the planes (``axis1``, ``axis2``)."""
    return tsum(diagonal(a, offset, axis1, axis2), axis=-1)


def _tri_indices(n, k, m, lower):
    n = as_int_scalar(n, "tril_indices n")
    m = n if m is None else as_int_scalar(m, "tril_indices m")
    if lower:
        mask = tri(n, m, k, dtype="bool")
    else:
        mask = tm.invert(tri(n, m, k - 1, dtype="bool"))
    return nonzero(mask)


def tril_indices(n, k: int = 0, m=None):
    """``np.tril_indices``: the (row, column) indices of the lower triangle of an (n, m)
    matrix, diagonal ``k`` included."""
    return _tri_indices(n, k, m, lower=True)


def triu_indices(n, k: int = 0, m=None):
    """``np.triu_indices``: the (row, column) indices of the upper triangle of an (n, m)
    matrix, diagonal ``k`` included."""
    return _tri_indices(n, k, m, lower=False)


def _from(a, what):
    a = as_tensor_variable(a)
    if a.ndim != 2:
        raise ValueError(f"{what}: a must be two dimensional (a matrix), got {a} ({a.type})")
    return shape_i(a, 0), shape_i(a, 1)


def tril_indices_from(a, k: int = 0):
    """``tril_indices`` for the shape of the matrix ``a``."""
    n, m = _from(a, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(a, k: int = 0):
    """``triu_indices`` for the shape of the matrix ``a``."""
    n, m = _from(a, "triu_indices_from")
    return triu_indices(n, k, m)
