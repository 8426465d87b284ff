"""Where a tensor is non-zero: ``nonzero``, ``flatnonzero`` and ``nonzero_values``, as numpy's
``nonzero``, ``flatnonzero`` and ``a[a != 0]``.

One op, ``Nonzero``: the int64 matrix of the indices of the non-zero entries, one row per
dimension (its length is known only when it runs). It runs numpy under every linker (no C);
indices are not differentiable.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.shape import _disconnected, flatten
from tensorgraph.tensor.type import TensorType

__all__ = ["Nonzero", "nonzero", "flatnonzero", "nonzero_values"]


class Nonzero(Op):
    """The indices of the non-zero entries of ``a``: an int64 matrix with one row per
    dimension of ``a`` (C order of the entries, as ``np.nonzero``)."""

    __props__ = ()

    def make_node(self, a):
        a = as_tensor_variable(a)
        if a.ndim == 0:
            raise ValueError(f"nonzero: {a} is 0-d; index a 1-d (or larger) tensor")
        return Apply(self, [a], [TensorType("int64", (a.ndim, None))()])

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        output_storage[0][0] = np.array(np.nonzero(a), dtype="int64").reshape(a.ndim, -1)

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


def nonzero(a, return_matrix: bool = False):
    """The indices of the non-zero entries of ``a``: a tuple of int64 vectors, one per
    dimension (``np.nonzero``), or with ``return_matrix`` one matrix of them as rows."""
    matrix = Nonzero()(a)
    if return_matrix:
        return matrix
    return tuple(matrix[d] for d in range(matrix.type.shape[0]))


def flatnonzero(a):
    """The indices of the non-zero entries of the flattened ``a`` (``np.flatnonzero``)."""
    return nonzero(flatten(as_tensor_variable(a), 1))[0]


def nonzero_values(a):
    """The non-zero entries of ``a``, flattened in C order (``a[a != 0]``)."""
    flat = flatten(as_tensor_variable(a), 1)
    return flat[flatnonzero(flat)]
