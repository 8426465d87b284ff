"""Indexing rewrites: advanced indexing along one axis as ``AdvancedSubtensor1``, and useless
``Subtensor`` nodes removed.

``x[v]`` for one integer vector ``v`` is built as ``AdvancedSubtensor1`` directly (the cheap
gather of whole rows, with its own C loop). The same gather along another axis, ``x[:, v]``,
or with a higher-dimensional index, ``x[m]``, is built as the general ``AdvancedSubtensor``,
whose C walks every index combination. The specialize phase rewrites those into the gather:

* ``local_replace_AdvancedSubtensor``: ``x[:, ..., v, :, ...]`` (full slices around one
  integer index array) becomes the axis moved to the front, ``AdvancedSubtensor1``, and the
  axis moved back (an integer matrix index is flattened and the result reshaped);
* ``local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1``: the same for setting and
  incrementing, with a vector index.

The names are PyTensor's, so ``mode.including/excluding`` written for PyTensor reach them.
``local_useless_subtensor`` (canonicalize) removes ``x[:]``, ``x[0:n]`` with ``n`` the size
(known statically or as ``x.shape[d]``), and other indexing that keeps every element in order.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize, register_specialize
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.rewriting.shape import shape_feature
from tensorgraph.tensor.rewriting.utils import fits, op_is, same_structure
from tensorgraph.tensor.scalar_convert import ScalarFromTensor
from tensorgraph.tensor.shape import reshape, shape_i
from tensorgraph.tensor.subtensor import (AdvancedIncSubtensor, AdvancedIncSubtensor1,
                                          AdvancedSubtensor, AdvancedSubtensor1, Subtensor,
                                          _entry_inputs)

_FULL = ("slice", None, None, None)


def _take_axis(idx_list, index_inputs):
    """The axis of the one integer index array when every other entry is a full slice
    (``x[:, :, v, :]`` gives 2), else None."""
    arrays = [d for d, entry in enumerate(idx_list) if entry == "array"]
    if len(arrays) != 1 or any(e != _FULL for e in idx_list if e != "array"):
        return None
    (idx,) = index_inputs
    if idx.dtype == "bool" or idx.ndim == 0:
        return None
    return arrays[0]


def _swap(x, axis):
    """``x`` with ``axis`` and 0 exchanged (its own inverse)."""
    order = list(range(x.ndim))
    order[0], order[axis] = axis, 0
    return DimShuffle(x.ndim, order)(x)


@register_specialize
@node_rewriter([AdvancedSubtensor])
def local_replace_AdvancedSubtensor(fgraph, node):
    """``x[:, v]`` -> ``x.T[v].T`` and ``x[m]`` -> ``x[m.ravel()].reshape(...)``, gathers with
    ``AdvancedSubtensor1`` (see the module docstring)."""
    x, *index = node.inputs
    axis = _take_axis(node.op.idx_list, index)
    if axis is None:
        return None
    (idx,) = index
    flat = idx if idx.ndim == 1 else idx.flatten()
    moved = x if axis == 0 else _swap(x, axis)
    out = AdvancedSubtensor1()(moved, flat)
    if axis != 0:
        out = _swap(out, axis)
    if idx.ndim != 1:
        sizes = ([shape_i(x, d) for d in range(axis)]
                 + [shape_i(idx, d) for d in range(idx.ndim)]
                 + [shape_i(x, d) for d in range(axis + 1, x.ndim)])
        out = reshape(out, sizes, ndim=len(sizes))
    return [fits(node.outputs[0], out)]


@register_specialize
@node_rewriter([AdvancedIncSubtensor])
def local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1(fgraph, node):
    """``inc_subtensor(x[:, v], y)`` (and ``set_subtensor``) with one integer vector ``v``
    among full slices -> the axis moved to the front, ``AdvancedIncSubtensor1``, moved back."""
    x, y, *index = node.inputs
    axis = _take_axis(node.op.idx_list, index)
    if axis is None or index[0].ndim != 1:
        return None
    op = AdvancedIncSubtensor1(node.op.inplace, node.op.set_instead_of_inc)
    if axis == 0:
        return [fits(node.outputs[0], op(x, y, index[0]))]
    # the indexed part has x's ndim; y broadcasts against it from the right
    if y.ndim < x.ndim:
        y = DimShuffle(y.ndim, ["x"] * (x.ndim - y.ndim) + list(range(y.ndim)))(y)
    out = _swap(op(_swap(x, axis), _swap(y, axis), index[0]), axis)
    return [fits(node.outputs[0], out)]


def _is_size_of(stop, x, d, fgraph) -> bool:
    """Whether ``stop`` is at least dimension ``d`` of ``x``: a constant at least its static
    size, or the same expression as its size."""
    if isinstance(stop, Constant):
        size = x.type.shape[d]
        return size is not None and int(stop.data) >= size
    if stop.owner is not None and op_is(stop.owner, ScalarFromTensor):
        stop = stop.owner.inputs[0]
    feature = shape_feature(fgraph)
    return same_structure(feature.size(x, d), stop) or same_structure(shape_i(x, d), stop)


@register_canonicalize("useless")
@node_rewriter([Subtensor])
def local_useless_subtensor(fgraph, node):
    """``x[:]``, ``x[0:n:1]`` with ``n`` the size (or more): ``x`` itself."""
    x, *index = node.inputs
    for d, (entry, parts) in enumerate(_entry_inputs(node.op.idx_list, index)):
        if entry == "int":
            return None
        start, stop, step = parts
        if start is not None and not (isinstance(start, Constant) and int(start.data) == 0):
            return None
        if step is not None and not (isinstance(step, Constant) and int(step.data) == 1):
            return None
        if stop is not None and not _is_size_of(stop, x, d, fgraph):
            return None
    return [fits(node.outputs[0], x)]
