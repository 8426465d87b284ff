"""Sorting: ``sort`` and ``argsort`` along one axis (``axis=None``: of the flattened tensor), as
``np.sort`` and ``np.argsort``.

``SortOp`` and ``ArgSortOp`` run numpy's sort under every linker (no C: a C sort would have to
reproduce numpy's order of equal elements for every ``kind``). The gradient of a sort sends
each output's gradient back to the position its value came from (``take_along_axis`` with the
inverse permutation); ``argsort`` is piecewise constant and gets zeros.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.shape import flatten, normalize_axis
from tensorgraph.tensor.subtensor import take_along_axis
from tensorgraph.tensor.type import TensorType

__all__ = ["SortOp", "ArgSortOp", "sort", "argsort"]

_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, what):
    if kind not in _KINDS:
        raise ValueError(f"{what}: kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    return kind


class _SortBase(Op):
    __props__ = ("axis", "kind")

    def __init__(self, axis: int = -1, kind: str = "quicksort"):
        self.axis = int(axis)
        self.kind = _check_kind(kind, type(self).__name__)

    def __str__(self):
        return f"{type(self).__name__}{{axis={self.axis}, {self.kind}}}"

    def _checked_input(self, x):
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise TypeError(f"{self}: cannot sort the 0-d tensor {x}")
        normalize_axis(self.axis, x.ndim, str(self))
        return x

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class SortOp(_SortBase):
    """The entries of ``x`` in ascending order along ``axis`` (nan last, as numpy)."""

    def make_node(self, x):
        x = self._checked_input(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.sort(inputs[0], axis=self.axis, kind=self.kind)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        order = ArgSortOp(self.axis, self.kind)(x)
        inverse = ArgSortOp(self.axis, "stable")(order)   # where each input entry went
        return [take_along_axis(gz, inverse, self.axis)]


class ArgSortOp(_SortBase):
    """The int64 indices that sort ``x`` along ``axis``."""

    def make_node(self, x):
        x = self._checked_input(x)
        return Apply(self, [x], [TensorType("int64", x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.argsort(inputs[0], axis=self.axis,
                                          kind=self.kind).astype("int64")

    def L_op(self, inputs, outputs, output_grads):
        from tensorgraph.tensor.reduction import zeros_gradient

        return [zeros_gradient(inputs[0])]


def _order_unsupported(order, what):
    if order is not None:
        raise ValueError(f"{what}: order= sorts structured arrays, which tensors are not")


def sort(a, axis=-1, kind: str = "quicksort", order=None):
    """``a`` sorted along ``axis`` (None: the flattened ``a``), as ``np.sort``."""
    _order_unsupported(order, "sort")
    a = as_tensor_variable(a)
    if axis is None:
        return SortOp(0, kind)(flatten(a, 1))
    return SortOp(normalize_axis(axis, a.ndim, "sort"), kind)(a)


def argsort(a, axis=-1, kind: str = "quicksort", order=None):
    """The indices sorting ``a`` along ``axis`` (None: the flattened ``a``), as
    ``np.argsort``."""
    _order_unsupported(order, "argsort")
    a = as_tensor_variable(a)
    if axis is None:
        return ArgSortOp(0, kind)(flatten(a, 1))
    return ArgSortOp(normalize_axis(axis, a.ndim, "argsort"), kind)(a)
