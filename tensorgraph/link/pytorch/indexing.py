"""PyTorch for indexing: ``Subtensor``, ``AdvancedSubtensor1``, ``AdvancedSubtensor`` (read) and
``IncSubtensor``, ``AdvancedIncSubtensor1``, ``AdvancedIncSubtensor`` (set and add),
``TakeAlongLastAxis`` and ``PutAlongLastAxis``.

Every index computed at run time is checked (``runtime_check``), so an index out of range is
an ``IndexError`` naming the node, as in every other mode. Slice bounds and boolean masks fix
the result's shape, so they must be known when tracing (computed from shapes or constants);
a known mask is indexed as its ``nonzero()`` positions, which is what numpy does. PyTorch
slices take no negative steps: such an axis is flipped first and sliced forwards.

numpy's rule for integers among index arrays (an integer is one more index array, and index
arrays separated by a slice put their dimensions first) is ``aten.index``'s for 0-d index
tensors: an index with arrays, or with integers known only at run time, reads through it.

Writes (``set_subtensor``, ``inc_subtensor``) are out of place: basic indices write into a
copy; advanced ones put the values at the flat positions the index selects (``index_put``,
accumulating for an increment, so repeated indices add up as numpy's ``np.add.at``).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import traced_indices
from tensorgraph.link.pytorch import as_tensor, register, runtime_check, traced
from tensorgraph.link.pytorch.linker import static_ints
from tensorgraph.link.traced_shape import shape_of
from tensorgraph.tensor.special import PutAlongLastAxis, TakeAlongLastAxis
from tensorgraph.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    _check_fits,
)


def checked_position(value, size: int, axis: int, what):
    """An integer index (or index array) into an axis of ``size``: checked now when known,
    else at run time. Known scalars come back as Python ints, arrays as int64 tensors."""
    import torch

    checked = traced_indices.check_position(value, size, axis, what, traced, runtime_check)
    if traced(checked):
        # read in bounds (the check fails the call afterwards): Inductor's kernels would stop
        # the process's call with their own assertion
        return checked.to(torch.int64).clamp(-size, max(size - 1, -size))
    return int(checked) if checked.ndim == 0 else as_tensor(checked.astype(np.int64))


class Index:
    """An index of a tensor of ``shape`` as PyTorch takes it: ``flips`` (axes to reverse
    first, for slices with negative steps), ``entries`` (one per indexed axis: a slice, a
    Python int, or an int64 tensor: an index array, a traced integer, one axis of a mask)
    and ``standin`` (numpy values with the same result shape, for shape arithmetic)."""

    def __init__(self, op, idx_list, values, shape):
        values = iter(values)
        self.flips, self.entries, self.standin = [], [], []
        d = 0
        for entry in idx_list:
            if entry == "int":
                value = next(values)
                self.entries.append(checked_position(value, shape[d], d, op))
                self.standin.append(0)
                d += 1
            elif entry == "array":
                value = next(values)
                if (value.dtype if traced(value) else np.asarray(value).dtype) == bool:
                    mask = traced_indices.known_mask(op, value, tuple(shape[d:]), "PyTorch",
                                                   traced)
                    for axis_positions in np.nonzero(mask):
                        self.entries.append(as_tensor(axis_positions.astype(np.int64)))
                    self.standin.append(mask)
                    d += mask.ndim
                else:
                    self.entries.append(checked_position(value, shape[d], d, op))
                    self.standin.append(np.zeros(np.shape(value), dtype=np.intp))
                    d += 1
            else:
                parts = [None if p is None else static_ints(next(values), "a slice bound")[0]
                         for p in entry[1:]]
                whole = slice(*parts)
                self.standin.append(whole)
                start, stop, step = whole.indices(shape[d])
                if step < 0:
                    n = len(range(start, stop, step))
                    self.flips.append(d)
                    first = shape[d] - 1 - start
                    self.entries.append(slice(first, first + (n - 1) * -step + 1 if n else first,
                                              -step))
                else:
                    self.entries.append(slice(start, max(start, stop), step))
                d += 1
        #: only slices and known ints: PyTorch's basic indexing (views), numpy's too
        self.basic = not any(traced(e) for e in self.entries)

    def shape(self, shape) -> tuple:
        """The shape of ``x[index]`` for an ``x`` of ``shape`` (no data is touched)."""
        return np.broadcast_to(np.zeros((), dtype=np.int8), shape)[tuple(self.standin)].shape

    def select(self, x):
        """``x[index]`` (``x`` already flipped). With index tensors: the slices first, then
        ``aten.index`` with every integer as a 0-d index tensor, which is numpy's rule for
        integers among index arrays (PyTorch's ``x[...]`` would read a 0-d tensor's value
        as a Python int, which a traced tensor does not have)."""
        import torch

        if self.basic:
            return x[tuple(self.entries)]
        x = x[tuple(e if isinstance(e, slice) else slice(None) for e in self.entries)]
        indices = [None if isinstance(e, slice) else
                   e if traced(e) else torch.tensor(e, dtype=torch.int64)
                   for e in self.entries]
        return torch.ops.aten.index.Tensor(x, indices)

    def read(self, x):
        return self.select(x.flip(self.flips) if self.flips else x)

    def write(self, x, y, add: bool):
        """A copy of ``x`` with ``y`` written into (added to) the indexed part."""
        if self.flips:
            return self._write(x.flip(self.flips), y, add).flip(self.flips)
        return self._write(x, y, add)

    def _write(self, x, y, add):
        import torch

        if self.basic:
            out = x.clone()
            view = out[tuple(self.entries)]
            if add:
                view.add_(y)
            else:
                view.copy_(y.expand(view.shape))
            return out
        positions = self.select(torch.arange(x.numel(), dtype=torch.int64).reshape(x.shape))
        values = y.expand(positions.shape).reshape(-1)
        flat = x.reshape(-1).index_put((positions.reshape(-1),), values, accumulate=add)
        return flat.reshape(x.shape)


@register(Subtensor)
@register(AdvancedSubtensor)
def torch_subtensor(op, node):
    def subtensor(x, *index):
        x = as_tensor(x)
        return Index(op, op.idx_list, index, shape_of(x)).read(x)

    return subtensor


@register(IncSubtensor)
@register(AdvancedIncSubtensor)
def torch_inc_subtensor(op, node):
    dtype = node.outputs[0].dtype

    def inc_subtensor(x, y, *index):
        x = as_tensor(x, dtype)
        index = Index(op, op.idx_list, index, shape_of(x))
        _check_fits(op, y, index.shape(shape_of(x)))
        return index.write(x, as_tensor(y, dtype), add=not op.set_instead_of_inc)

    return inc_subtensor


@register(AdvancedSubtensor1)
def torch_advanced_subtensor1(op, node):
    def take(x, ilist):
        x = as_tensor(x)
        positions = checked_position(ilist, shape_of(x)[0], 0, op)
        return x[positions]

    return take


@register(AdvancedIncSubtensor1)
def torch_advanced_inc_subtensor1(op, node):
    dtype = node.outputs[0].dtype

    def inc(x, y, ilist):
        x = as_tensor(x, dtype)
        positions = checked_position(ilist, shape_of(x)[0], 0, op)
        rows = (1 if isinstance(positions, int) else int(positions.shape[0]),)
        _check_fits(op, y, rows + shape_of(x)[1:])
        positions = as_tensor(np.asarray([positions])) if isinstance(positions, int) else positions
        y = as_tensor(y, dtype).expand((positions.shape[0],) + tuple(x.shape[1:]))
        return x.index_put((positions,), y, accumulate=not op.set_instead_of_inc)

    return inc


def _check_labels(op, x_shape, labels):
    """The labels checked, traced ones clamped into range (a wrong one fails the call, but
    the gather runs first)."""
    traced_indices.check_labels(op, x_shape, labels, traced, runtime_check, checked_position)
    if traced(labels):
        return labels.to(_torch_int64()).clamp(0, max(x_shape[-1] - 1, 0))
    return labels


def _torch_int64():
    import torch

    return torch.int64


@register(TakeAlongLastAxis)
def torch_take_along(op, node):
    import torch

    def take_along(x, labels):
        x = as_tensor(x)
        labels = as_tensor(_check_labels(op, shape_of(x), labels)).to(torch.int64)
        return torch.gather(x, -1, labels[..., None])[..., 0]

    return take_along


@register(PutAlongLastAxis)
def torch_put_along(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def put_along(values, labels, like):
        shape = shape_of(like)
        labels = _check_labels(op, shape, labels)
        hit = as_tensor(labels)[..., None] == torch.arange(shape[-1])
        return torch.where(hit, as_tensor(values, dtype)[..., None],
                           torch.zeros((), dtype=as_tensor(values, dtype).dtype))

    return put_along
