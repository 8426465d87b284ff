"""Indexing: ``x[...]`` (``getitem``), ``set_subtensor`` and ``inc_subtensor``, with numpy's
semantics.

Index entries: Python or symbolic integers, slices with any (symbolic) start/stop/step,
``None``/``np.newaxis``, ``Ellipsis``, integer arrays (advanced indexing, numpy's rules on where
the broadcast index dimensions go) and boolean masks.

Ops (each with ``perform``, ``infer_shape`` and a gradient):

* ``Subtensor``: basic indexing (ints and slices); the output is a view of the input.
* ``AdvancedSubtensor1``: ``x[v]`` for one integer vector ``v`` (the embedding-lookup case).
* ``AdvancedSubtensor``: any mix with integer arrays or boolean masks.
* ``IncSubtensor``, ``AdvancedIncSubtensor1``, ``AdvancedIncSubtensor``: the result of setting
  or adding ``y`` at the index. Adding at repeated indices accumulates (``np.add.at``); setting
  at repeated indices keeps the last value, as numpy does (the gradient w.r.t. ``y`` then
  still reaches every repeated entry, as in PyTensor: use unique indices with ``set``).

Every op here has C (``tensorgraph/link/c/ops/subtensor.py`` and ``advanced_index.py``,
checked against ``perform`` in tests/link/c/ops/test_subtensor.py and tests/link/c/ops/test_advanced_indexing.py);
only ``uint64`` index values run ``perform``.

An op's ``idx_list`` describes the index's structure; the values come from the op's inputs after
``x`` (and ``y``): ``"int"`` is one integer scalar input, ``("slice", start, stop, step)`` has
an input for each of its parts that is not ``None``, and ``"array"`` is one integer or boolean
tensor input. ``None`` entries become size-1 dimensions of ``x`` (a ``DimShuffle``) indexed by
a full slice, which gives numpy's result in every case, including advanced indexing.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.op import Op
from tensorgraph.printing import pprint
from tensorgraph.tensor import math
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.math import add, cast, eq, switch
from tensorgraph.tensor.shape import (
    _disconnected,
    _float_zeros_like,
    as_int_scalar,
    constant_int,
    flatten,
    normalize_axis,
    shape_i,
)
from tensorgraph.tensor.type import DISCRETE_DTYPES, INT_DTYPES, TensorType

__all__ = [
    "Subtensor", "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1",
    "AdvancedSubtensor", "AdvancedIncSubtensor", "getitem", "set_subtensor", "inc_subtensor",
    "take", "take_along_axis", "flip", "slice_at_axis", "get_canonical_form_slice", "advanced_subtensor1",
    "advanced_inc_subtensor1", "advanced_set_subtensor1", "advanced_subtensor",
    "advanced_inc_subtensor", "advanced_set_subtensor",
]

_FULL_SLICE = ("slice", None, None, None)


# ----------------------------------------------------------------------------------------------
# Index descriptions


def _index_str(idx_list) -> str:
    parts = []
    for entry in idx_list:
        if entry == "int":
            parts.append("i")
        elif entry == "array":
            parts.append("array")
        else:
            _, a, b, c = entry
            text = f"{'start' if a else ''}:{'stop' if b else ''}"
            parts.append(text + (":step" if c else ""))
    return ", ".join(parts)


def _n_index_inputs(idx_list) -> int:
    count = 0
    for entry in idx_list:
        count += 1 if entry in ("int", "array") else sum(p is not None for p in entry[1:])
    return count


def _numpy_index(idx_list, values) -> tuple:
    """The numpy index tuple for ``idx_list`` given the index inputs' values."""
    values = iter(values)
    index = []
    for entry in idx_list:
        if entry == "int":
            index.append(int(next(values)))
        elif entry == "array":
            index.append(np.asarray(next(values)))
        else:
            index.append(slice(*(None if p is None else int(next(values)) for p in entry[1:])))
    return tuple(index)


def _entry_inputs(idx_list, inputs):
    """Pairs (entry, its input variables) in index order."""
    inputs = iter(inputs)
    for entry in idx_list:
        if entry in ("int", "array"):
            yield entry, [next(inputs)]
        else:
            yield entry, [None if p is None else next(inputs) for p in entry[1:]]


def _check_idx_list(idx_list) -> tuple:
    checked = []
    for entry in idx_list:
        if entry in ("int", "array"):
            checked.append(entry)
        elif (isinstance(entry, tuple) and len(entry) == 4 and entry[0] == "slice"
              and all(p in (None, "int") for p in entry[1:])):
            checked.append(entry)
        else:
            raise TypeError(f"invalid index description {entry!r}: expected 'int', 'array' or "
                            "('slice', start, stop, step) with parts None or 'int'")
    return tuple(checked)


def _as_index_scalar(value, what: str) -> Variable:
    try:
        return as_int_scalar(value, what)
    except TypeError:
        raise TypeError(f"{what} must be an integer (Python int or integer scalar variable), "
                        f"got {value!r}") from None


def _slice_static_length(size, parts) -> int | None:
    """Static length of slicing a dimension of static ``size`` with ``parts`` (variables)."""
    values = [None if p is None else constant_int(p) for p in parts]
    if any(p is not None and v is None for p, v in zip(parts, values)):
        return None
    start, stop, step = values
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if size is None:
        # an empty slice whatever the size: bounds of one sign (both counted from the same
        # end) in the wrong order for the step (x[1:1], x[-1:-1:3], x[3:1])
        if start is not None and stop is not None and (start < 0) == (stop < 0) and (
                start >= stop if (step or 1) > 0 else start <= stop):
            return 0
        return None
    return len(range(*slice(start, stop, step).indices(size)))


def _basic_static_shape(x, idx_list, index_inputs, op) -> tuple:
    """Static output shape of basic indexing (ints and slices)."""
    shape = []
    for d, (entry, parts) in enumerate(_entry_inputs(idx_list, index_inputs)):
        size = x.type.shape[d]
        if entry == "int":
            value = constant_int(parts[0])
            if value is not None and size is not None and not -size <= value < size:
                raise IndexError(f"{op}: index {value} is out of bounds for axis {d} with size "
                                 f"{size} ({x}: {x.type})")
            continue
        if all(p is None for p in parts[:2]) and (parts[2] is None
                                                   or constant_int(parts[2]) in (1, -1)):
            shape.append(size)
        else:
            shape.append(_slice_static_length(size, parts))
    shape.extend(x.type.shape[len(idx_list):])
    return tuple(shape)


def _broadcast_index_static(shapes, op) -> tuple:
    """Static broadcast shape of advanced index arrays (numpy rules)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = [s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0]
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            raise IndexError(f"{op}: shape mismatch: indexing tensors could not be broadcast "
                             f"together with shapes [{', '.join(str(s) for s in shapes)}]")
        if known:
            out.append(known.pop())
        elif sizes and all(s == 1 for s in sizes):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


def _advanced_layout(x, idx_list, index_inputs, op):
    """Static output shape of advanced indexing, following numpy's placement rule.

    Returns (static shape, position of the broadcast index dimensions, their number).
    """
    basic_before, basic_after, index_shapes = [], [], []
    adv_positions = []
    d = 0
    for pos, (entry, parts) in enumerate(_entry_inputs(idx_list, index_inputs)):
        if entry == "array":
            arr = parts[0]
            if arr.dtype == "bool":
                mask_shape = arr.type.shape
                for k, s in enumerate(mask_shape):
                    xs = x.type.shape[d + k]
                    if s is not None and xs is not None and s != xs:
                        raise IndexError(
                            f"{op}: boolean index did not match the indexed tensor along axis "
                            f"{d + k}: the axis has size {xs}, the mask {s} ({x}: {x.type})")
                count = (int(np.count_nonzero(arr.data)) if isinstance(arr, Constant) else None)
                index_shapes.append((count,))
                d += arr.ndim
            else:
                index_shapes.append(arr.type.shape)
                d += 1
            adv_positions.append(pos)
            continue
        size = x.type.shape[d]
        if entry == "int":
            value = constant_int(parts[0])
            if value is not None and size is not None and not -size <= value < size:
                raise IndexError(f"{op}: index {value} is out of bounds for axis {d} with size "
                                 f"{size} ({x}: {x.type})")
            index_shapes.append(())
            adv_positions.append(pos)
        else:
            target = basic_before if not adv_positions else basic_after
            if all(p is None for p in parts):
                target.append(size)
            else:
                target.append(_slice_static_length(size, parts))
        d += 1
    trailing = list(x.type.shape[d:])
    broadcast = _broadcast_index_static(index_shapes, op)
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
    if adjacent:
        before = basic_before
        after = basic_after + trailing
        where = len(before)
    else:
        before = []
        after = basic_before + basic_after + trailing
        where = 0
    return tuple(before) + broadcast + tuple(after), where, len(broadcast)


def _index_dims_consumed(idx_list, index_inputs) -> int:
    return sum(parts[0].ndim if entry == "array" and parts[0].dtype == "bool" else 1
               for entry, parts in _entry_inputs(idx_list, index_inputs))


def _check_fits(op, y, target_shape):
    """Refuse ``y`` values that do not broadcast to ``target_shape`` by numpy's rule (dimensions
    aligned on the right, size 1 stretches), with the op's message."""
    offset = len(target_shape) - np.ndim(y)
    if offset < 0:
        raise ValueError(f"{op}: the value has shape {np.shape(y)}, more dimensions than the "
                         f"indexed part of shape {target_shape}")
    for d, size in enumerate(np.shape(y)):
        target = target_shape[d + offset]
        if size != target and size != 1:
            raise ValueError(f"{op}: cannot put a value of shape {np.shape(y)} into the indexed "
                             f"part of shape {target_shape}: dimension {d} of the value has size "
                             f"{size}, the target {target} (the sizes differ)")


def _check_static_fits(op, y, target_static):
    if y.ndim > len(target_static):
        # the number of dimensions is part of the type: a type error, whatever the sizes
        raise TypeError(f"{op}: the value {y} has {y.ndim} dimensions, more than the "
                         f"{len(target_static)} of the indexed part")
    offset = len(target_static) - y.ndim
    for d, size in enumerate(y.type.shape):
        target = target_static[d + offset]
        if size not in (None, 1) and target is not None and size != target:
            raise ValueError(f"{op}: the value {y} (static shape {y.type.shape}) does not fit "
                             f"the indexed part (static shape {target_static}) in dimension {d}")


def _as_value_for(x, y, what: str) -> Variable:
    """``y`` converted to ``x``'s dtype when numpy would do so without changing kind."""
    y = as_tensor_variable(y)
    if y.dtype == x.dtype:
        return y
    if not np.can_cast(y.dtype, x.dtype, "same_kind"):
        raise TypeError(f"{what}: cannot put {y.dtype} values ({y}) into the {x.dtype} tensor "
                        f"{x}; cast them explicitly")

    return cast(y, x.dtype)


def _sum_to_value(g, y):
    """``g`` summed over the dimensions ``y`` was broadcast along, cast to ``y``'s dtype.

    Set/inc values broadcast as in numpy: also a dimension whose size is 1 only at run time.
    Where ``y``'s size is not known statically, the sum over that dimension is chosen at run
    time (``switch`` on ``y.shape[d] == 1``, then the first ``y.shape[d]`` rows), so the
    gradient always has ``y``'s shape."""
    from tensorgraph.tensor.reduction import sum as tsum

    offset = g.ndim - y.ndim
    if offset:
        g = tsum(g, axis=list(range(offset)))
    axes = [d for d in range(y.ndim) if y.type.shape[d] == 1 and g.type.shape[d] != 1]
    if axes:
        g = tsum(g, axis=axes, keepdims=True)
    for d in range(y.ndim):
        if y.type.shape[d] is None and g.type.shape[d] != 1:
            size = shape_i(y, d)
            summed = switch(eq(size, 1), tsum(g, axis=d, keepdims=True), g)
            g = summed[(slice(None),) * d + (slice(None, size),)]
    return g if g.dtype == y.dtype else cast(g, y.dtype)


# ----------------------------------------------------------------------------------------------
# Slice lengths (for infer_shape)


class _SliceLength(Op):
    """``len(range(*slice(start, stop, step).indices(size)))`` for symbolic parts."""

    __props__ = ("parts",)

    def __init__(self, parts):
        self.parts = tuple(parts)

    def make_node(self, size, *given):
        inputs = [as_int_scalar(size)] + [as_int_scalar(g) for g in given]
        return Apply(self, inputs, [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        size, *given = (int(v) for v in inputs)
        given = iter(given)
        parts = [next(given) if present else None for present in self.parts]
        output_storage[0][0] = np.asarray(len(range(*slice(*parts).indices(size))), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def connection_pattern(self, node):
        return [[False]] * len(node.inputs)

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def _slice_length(size, parts):
    if all(p is None for p in parts[:2]) and parts[2] is not None and constant_int(parts[2]) in (
            1, -1):
        return size
    if all(p is None for p in parts):
        return size
    present = tuple(p is not None for p in parts)
    return _SliceLength(present)(size, *[p for p in parts if p is not None])


# ----------------------------------------------------------------------------------------------
# Basic indexing


class _IndexedRead:
    """What the ops reading ``x[index]`` share: only ``x`` is differentiable, its gradient is
    the output gradient added into zeros at the same index (``increment_op``), and the forward
    derivative indexes the eval point the same way."""

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        from tensorgraph.tensor.creation import zeros_like

        x, *index = inputs
        rest = [_disconnected() for _ in index]
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x)] + rest
        gx = self.increment_op()(self.idx_list)(zeros_like(x), output_grads[0], *index)
        return [gx] + rest

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


class Subtensor(_IndexedRead, Op):
    """Basic indexing (ints and slices); the output is a view of ``x``."""

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list):
        self.idx_list = _check_idx_list(idx_list)
        if "array" in self.idx_list:
            raise TypeError("Subtensor does basic indexing only; use AdvancedSubtensor for arrays")

    @staticmethod
    def increment_op():
        return IncSubtensor

    def __str__(self):
        return f"Subtensor{{{_index_str(self.idx_list)}}}"

    def make_node(self, x, *index):
        x = as_tensor_variable(x)
        index = _checked_index_inputs(self, self.idx_list, index)
        if len(self.idx_list) > x.ndim:
            raise IndexError(f"{self}: too many indices for {x} ({x.ndim}-d)")
        static = _basic_static_shape(x, self.idx_list, index, self)
        return Apply(self, [x, *index], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, *index = inputs
        output_storage[0][0] = x[_numpy_index(self.idx_list, index) + (Ellipsis,)]

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        static = node.outputs[0].type.shape
        out = []
        for d, (entry, parts) in enumerate(_entry_inputs(self.idx_list, node.inputs[1:])):
            if entry != "int":
                out.append(_slice_length(x_shape[d], parts))
        out.extend(x_shape[len(self.idx_list):])
        return [tuple(s if s is not None else o for s, o in zip(static, out))]



def _checked_index_inputs(op, idx_list, index):
    if len(index) != _n_index_inputs(idx_list):
        raise TypeError(f"{op} expects {_n_index_inputs(idx_list)} index inputs, got {len(index)}")
    checked = []
    for entry, value in zip(_flat_entries(idx_list), index):
        if entry == "array":
            arr = as_tensor_variable(value)
            if arr.dtype not in INT_DTYPES and arr.dtype != "bool":
                raise TypeError(f"{op}: index arrays must be integers or booleans, got {arr} "
                                f"({arr.type})")
            if arr.ndim == 0:
                raise TypeError(f"{op}: index arrays must have at least one dimension, got {arr}")
            checked.append(arr)
        else:
            checked.append(_as_index_scalar(value, f"{op}: index"))
    return checked


def _flat_entries(idx_list):
    """One kind ('int' or 'array') per index input, in input order."""
    for entry in idx_list:
        if entry in ("int", "array"):
            yield entry
        else:
            yield from ("int" for p in entry[1:] if p is not None)


class IncSubtensor(Op):
    """``x`` with ``y`` added at (or, with ``set_instead_of_inc``, written to) a basic index."""

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")

    def __init__(self, idx_list, inplace: bool = False, set_instead_of_inc: bool = False):
        self.idx_list = _check_idx_list(idx_list)
        if "array" in self.idx_list:
            raise TypeError("IncSubtensor does basic indexing only; use AdvancedIncSubtensor")
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self):
        kind = "Set" if self.set_instead_of_inc else "Inc"
        return f"{kind}Subtensor{{{_index_str(self.idx_list)}{';inplace' if self.inplace else ''}}}"

    def make_node(self, x, y, *index):
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        if y.dtype != x.dtype:
            raise TypeError(f"{self}: the value {y} has dtype {y.dtype}, expected {x.dtype} "
                            "(set_subtensor/inc_subtensor cast it)")
        index = _checked_index_inputs(self, self.idx_list, index)
        if len(self.idx_list) > x.ndim:
            raise IndexError(f"{self}: too many indices for {x} ({x.ndim}-d)")
        _check_static_fits(self, y, _basic_static_shape(x, self.idx_list, index, self))
        return Apply(self, [x, y, *index], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, *index = inputs
        out = x if self.inplace else x.copy()
        idx = _numpy_index(self.idx_list, index) + (Ellipsis,)
        target = out[idx]
        _check_fits(self, y, target.shape)
        if self.set_instead_of_inc:
            target[...] = y
        else:
            target += y
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def L_op(self, inputs, outputs, output_grads):
        x, y, *index = inputs
        (gz,) = output_grads
        rest = [_disconnected() for _ in index]
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x), _float_zeros_like(y)] + rest
        if self.set_instead_of_inc:
            gx = IncSubtensor(self.idx_list, set_instead_of_inc=True)(
                gz, constant(0, dtype=gz.dtype), *index)
        else:
            gx = gz
        gy = _sum_to_value(Subtensor(self.idx_list)(gz, *index), y)
        return [gx, gy] + rest


# ----------------------------------------------------------------------------------------------
# Advanced indexing with one integer vector


class AdvancedSubtensor1(Op):
    """``x[v]`` for an integer vector ``v`` (negative entries count from the end)."""

    __props__ = ()

    def make_node(self, x, ilist):
        x = as_tensor_variable(x)
        ilist = as_tensor_variable(ilist)
        if x.ndim == 0:
            raise IndexError(f"{self}: cannot index the 0-d tensor {x}")
        if ilist.ndim != 1 or ilist.dtype not in INT_DTYPES:
            raise TypeError(f"{self}: the index must be an integer vector, got {ilist} "
                            f"({ilist.type})")
        static = (ilist.type.shape[0],) + x.type.shape[1:]
        return Apply(self, [x, ilist], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, ilist = inputs
        output_storage[0][0] = np.take(x, ilist, axis=0)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, i_shape = input_shapes
        return [(i_shape[0],) + tuple(x_shape[1:])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        from tensorgraph.tensor.creation import zeros_like

        x, ilist = inputs
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x), _disconnected()]
        return [AdvancedIncSubtensor1()(zeros_like(x), output_grads[0], ilist), _disconnected()]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


class AdvancedIncSubtensor1(Op):
    """``x`` with ``y`` added (accumulating over repeated indices) or written at rows ``v``."""

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False):
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self):
        kind = "Set" if self.set_instead_of_inc else "Inc"
        return f"Advanced{kind}Subtensor1{{{'inplace' if self.inplace else ''}}}"

    def make_node(self, x, y, ilist):
        x, y, ilist = (as_tensor_variable(v) for v in (x, y, ilist))
        if y.dtype != x.dtype:
            raise TypeError(f"{self}: the value {y} has dtype {y.dtype}, expected {x.dtype}")
        if x.ndim == 0:
            raise IndexError(f"{self}: cannot index the 0-d tensor {x}")
        if ilist.ndim != 1 or ilist.dtype not in INT_DTYPES:
            raise TypeError(f"{self}: the index must be an integer vector, got {ilist} "
                            f"({ilist.type})")
        _check_static_fits(self, y, (ilist.type.shape[0],) + x.type.shape[1:])
        return Apply(self, [x, y, ilist], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, ilist = inputs
        out = x if self.inplace else x.copy()
        _check_fits(self, y, (len(ilist),) + x.shape[1:])
        if self.set_instead_of_inc:
            out[ilist] = y
        else:
            np.add.at(out, ilist, y)
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, y, ilist = inputs
        (gz,) = output_grads
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x), _float_zeros_like(y), _disconnected()]
        if self.set_instead_of_inc:
            gx = AdvancedIncSubtensor1(set_instead_of_inc=True)(
                gz, constant(0, dtype=gz.dtype), ilist)
        else:
            gx = gz
        gy = _sum_to_value(AdvancedSubtensor1()(gz, ilist), y)
        return [gx, gy, _disconnected()]


# ----------------------------------------------------------------------------------------------
# General advanced indexing


class AdvancedSubtensor(_IndexedRead, Op):
    """Indexing with integer arrays and/or boolean masks, mixed with ints and slices."""

    __props__ = ("idx_list",)

    def __init__(self, idx_list):
        self.idx_list = _check_idx_list(idx_list)

    @staticmethod
    def increment_op():
        return AdvancedIncSubtensor

    def __str__(self):
        return f"AdvancedSubtensor{{{_index_str(self.idx_list)}}}"

    def make_node(self, x, *index):
        x = as_tensor_variable(x)
        index = _checked_index_inputs(self, self.idx_list, index)
        if "array" not in self.idx_list:
            raise TypeError(f"{self}: no index array; use Subtensor for basic indexing")
        if _index_dims_consumed(self.idx_list, index) > x.ndim:
            raise IndexError(f"{self}: too many indices for {x} ({x.ndim}-d)")
        static, _, _ = _advanced_layout(x, self.idx_list, index, self)
        return Apply(self, [x, *index], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, *index = inputs
        output_storage[0][0] = np.asarray(x[_numpy_index(self.idx_list, index)])

    def infer_shape(self, fgraph, node, input_shapes):
        from tensorgraph.tensor.reduction import sum as tsum

        x, *index = node.inputs
        x_shape, index_shapes = input_shapes[0], input_shapes[1:]
        _, where, n_broadcast = _advanced_layout(x, self.idx_list, index, self)
        basic, adv_shapes, d = [], [], 0
        shapes = iter(index_shapes)
        for entry, parts in _entry_inputs(self.idx_list, index):
            if entry == "array":
                shp = next(shapes)
                if parts[0].dtype == "bool":
                    adv_shapes.append(((math.cast(tsum(parts[0]), "int64"),), (None,)))
                    d += parts[0].ndim
                else:
                    adv_shapes.append((tuple(shp), parts[0].type.shape))
                    d += 1
                continue
            if entry == "int":
                next(shapes)
            else:
                for p in parts:
                    if p is not None:
                        next(shapes)
                basic.append(_slice_length(x_shape[d], parts))
            d += 1
        broadcast = []
        for k in range(n_broadcast):
            candidates = []
            for shp, static in adv_shapes:
                j = k - n_broadcast + len(shp)
                if j >= 0 and static[j] != 1:
                    candidates.append(shp[j])
            if not candidates:
                broadcast.append(1)
            else:
                # numpy's broadcasting: a size 1 gives way to the other (also to 0, where
                # ``maximum`` would say 1); sizes that differ otherwise fail in perform
                size = candidates[0]
                for c in candidates[1:]:
                    size = math.switch(math.eq(size, 1), c, size)
                broadcast.append(size)
        out = basic[:where] + broadcast + basic[where:] + list(x_shape[d:])
        static = node.outputs[0].type.shape
        return [tuple(s if s is not None else o for s, o in zip(static, out))]



class AdvancedIncSubtensor(Op):
    """``x`` with ``y`` added (accumulating over repeated indices) or written at an advanced
    index."""

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")

    def __init__(self, idx_list, inplace: bool = False, set_instead_of_inc: bool = False):
        self.idx_list = _check_idx_list(idx_list)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self):
        kind = "Set" if self.set_instead_of_inc else "Inc"
        return (f"Advanced{kind}Subtensor{{{_index_str(self.idx_list)}"
                f"{';inplace' if self.inplace else ''}}}")

    def make_node(self, x, y, *index):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        if y.dtype != x.dtype:
            raise TypeError(f"{self}: the value {y} has dtype {y.dtype}, expected {x.dtype}")
        index = _checked_index_inputs(self, self.idx_list, index)
        if _index_dims_consumed(self.idx_list, index) > x.ndim:
            raise IndexError(f"{self}: too many indices for {x} ({x.ndim}-d)")
        static, _, _ = _advanced_layout(x, self.idx_list, index, self)
        _check_static_fits(self, y, static)
        return Apply(self, [x, y, *index], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, *index = inputs
        out = x if self.inplace else x.copy()
        idx = _numpy_index(self.idx_list, index)
        # the indexed part's shape, from a zero-stride stand-in of x (no copy of x's data)
        target_shape = np.broadcast_to(np.zeros((), dtype=np.int8), x.shape)[idx].shape
        _check_fits(self, y, target_shape)
        if self.set_instead_of_inc:
            out[idx] = y
        else:
            np.add.at(out, idx, y)
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def L_op(self, inputs, outputs, output_grads):
        x, y, *index = inputs
        (gz,) = output_grads
        rest = [_disconnected() for _ in index]
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x), _float_zeros_like(y)] + rest
        if self.set_instead_of_inc:
            gx = AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=True)(
                gz, constant(0, dtype=gz.dtype), *index)
        else:
            gx = gz
        gy = _sum_to_value(AdvancedSubtensor(self.idx_list)(gz, *index), y)
        return [gx, gy] + rest


# ----------------------------------------------------------------------------------------------
# getitem, set_subtensor, inc_subtensor

def _parse_entry(entry, position):
    """One index entry as ('newaxis'|'ellipsis'|'int'|'slice'|'array', payload)."""
    if entry is None:
        return ("newaxis", None)
    if entry is Ellipsis:
        return ("ellipsis", None)
    if isinstance(entry, slice):
        parts = tuple(None if p is None else
                      _as_index_scalar(p, f"slice {('start', 'stop', 'step')[k]} (index "
                                          f"position {position})")
                      for k, p in enumerate((entry.start, entry.stop, entry.step)))
        if parts[2] is not None and constant_int(parts[2]) == 0:
            raise ValueError(f"slice step cannot be zero (index position {position})")
        return ("slice", parts)
    if isinstance(entry, (bool, np.bool_)):
        raise TypeError(f"boolean scalar indices (index position {position}) are not supported; "
                        "use a boolean array or x[None] for a new axis")
    if isinstance(entry, numbers.Integral):
        return ("int", constant(int(entry), dtype="int64"))
    if isinstance(entry, (list, tuple)) and _mixes_bools(entry):
        raise TypeError(f"the list index at position {position} mixes booleans with integers "
                        f"({entry!r}); a list must be all integers or all booleans (a mask)")
    if isinstance(entry, Variable):
        var = as_tensor_variable(entry)
    elif isinstance(entry, (list, tuple)) and _holds_variables(entry):
        var = as_tensor_variable(entry)   # x[[i, j]] with symbolic i, j: a stacked vector
    else:
        arr = np.asarray(entry)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")  # numpy reads an empty list as an integer index
        if arr.dtype.kind not in "iub":
            raise TypeError(f"index at position {position} must be integers or booleans, got "
                            f"{type(entry).__name__} of dtype {arr.dtype}")
        var = constant(arr, dtype="bool" if arr.dtype.kind == "b" else "int64")
    if var.dtype == "bool":
        if var.ndim == 0:
            # numpy reads a 0-d boolean array as a new axis (kept or emptied): valid numpy
            # that tensorgraph does not implement (a Python bool is refused as a bad type above)
            raise NotImplementedError(
                f"boolean scalar indices (index position {position}, {var}) are not "
                "supported; use a boolean array, or x[None] for a new axis")
        return ("array", var)
    if var.dtype not in INT_DTYPES:
        raise TypeError(f"index at position {position} must be integers or booleans, got {var} "
                        f"of dtype {var.dtype}")
    if var.ndim == 0:
        return ("int", var)
    return ("array", var)


def _mixes_bools(seq) -> bool:
    """Whether a (nested) list index holds booleans next to other entries: numpy would read
    ``[0, False]`` as the integers ``[0, 0]``, almost never what was meant, so it is refused."""
    kinds = set()

    def visit(e):
        if isinstance(e, (list, tuple)):
            for item in e:
                visit(item)
        elif isinstance(e, (bool, np.bool_)):
            kinds.add(True)
        elif isinstance(e, Variable):
            kinds.add(getattr(e.type, "dtype", None) == "bool")
        else:
            kinds.add(bool(np.asarray(e).dtype.kind == "b"))

    visit(seq)
    return len(kinds) > 1


def _holds_variables(seq) -> bool:
    return any(_holds_variables(e) if isinstance(e, (list, tuple)) else isinstance(e, Variable)
               for e in seq)


def _parse_index(x, index):
    """The index as a list of parsed entries, with the Ellipsis expanded."""
    if not isinstance(index, tuple):
        index = (index,)
    entries = [_parse_entry(e, i) for i, e in enumerate(index)]
    consumed = sum(p.ndim if kind == "array" and p.dtype == "bool" else 1
                   for kind, p in entries if kind in ("int", "slice", "array"))
    ellipses = [i for i, (kind, _) in enumerate(entries) if kind == "ellipsis"]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor: tensor is {x.ndim}-dimensional, but "
                         f"{consumed} {'were' if consumed != 1 else 'was'} indexed ({x})")
    if ellipses:
        i = ellipses[0]
        fill = [("slice", (None, None, None))] * (x.ndim - consumed)
        entries = entries[:i] + fill + entries[i + 1:]
    return entries


def getitem(x, index) -> Variable:
    """``x[index]`` with numpy's semantics (see the module docstring)."""
    x = as_tensor_variable(x)
    entries = _parse_index(x, index)

    if any(kind == "newaxis" for kind, _ in entries):
        order, d = [], 0
        for kind, payload in entries:
            if kind == "newaxis":
                order.append("x")
                continue
            width = payload.ndim if kind == "array" and payload.dtype == "bool" else 1
            order.extend(range(d, d + width))
            d += width
        order.extend(range(d, x.ndim))
        base = x
        x = DimShuffle(x.ndim, order)(x)
        x.tag.newaxis_of = base
        entries = [("slice", (None, None, None)) if kind == "newaxis" else (kind, payload)
                   for kind, payload in entries]

    while entries and entries[-1] == ("slice", (None, None, None)):
        entries.pop()

    idx_list, inputs = [], []
    for kind, payload in entries:
        if kind == "slice":
            idx_list.append(("slice",) + tuple(None if p is None else "int" for p in payload))
            inputs.extend(p for p in payload if p is not None)
        else:
            idx_list.append(kind)
            inputs.append(payload)

    if "array" not in idx_list:
        return Subtensor(idx_list)(x, *inputs)
    if idx_list == ["array"] and inputs[0].ndim == 1 and inputs[0].dtype != "bool":
        return AdvancedSubtensor1()(x, inputs[0])
    return AdvancedSubtensor(idx_list)(x, *inputs)


def inc_subtensor(x, y, inplace: bool = False, set_instead_of_inc: bool = False,
                  ignore_duplicates: bool = False) -> Variable:
    """The tensor indexed to get ``x`` (``x`` must be ``t[index]``), with ``y`` added at the
    index (repeated advanced indices accumulate, like ``np.add.at``), or written there.

    ``ignore_duplicates=True`` gives numpy's ``t[index] += y`` instead: a repeated index is
    updated once, by the last of its values (``set_subtensor(x, x + y)``; gradients assume
    the indices are unique).

    Chains of basic indexing are views in numpy, so ``inc_subtensor(t[1:][0], y)`` gives the
    updated ``t``, not the updated ``t[1:]``.
    """
    node = getattr(x, "owner", None)
    what = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    if node is None or not isinstance(node.op, (Subtensor, AdvancedSubtensor1, AdvancedSubtensor)):
        raise TypeError(f"{what} expects the result of indexing a tensor, like x[2:5] or "
                        f"x[idx], as its first argument; got {x}")
    if ignore_duplicates and not set_instead_of_inc:
        return inc_subtensor(x, add(x, _as_value_for(x, y, what)), inplace=inplace,
                             set_instead_of_inc=True)
    base, *index = node.inputs
    y = _as_value_for(base, y, what)
    if isinstance(node.op, Subtensor):
        op = IncSubtensor(node.op.idx_list, inplace, set_instead_of_inc)
        out = op(base, y, *index)
    elif isinstance(node.op, AdvancedSubtensor1):
        out = AdvancedIncSubtensor1(inplace, set_instead_of_inc)(base, y, *index)
    else:
        out = AdvancedIncSubtensor(node.op.idx_list, inplace, set_instead_of_inc)(base, y, *index)
    target = base
    original = getattr(base.tag, "newaxis_of", None)
    if original is not None and isinstance(base.owner.op, DimShuffle):
        kept = [i for i, d in enumerate(base.owner.op.new_order) if d != "x"]
        out = DimShuffle(out.ndim, kept)(out)
        target = original
    if target.owner is not None and isinstance(target.owner.op, Subtensor):
        # x[a][b] is a view of x in numpy: write the updated x[a] back into x
        return inc_subtensor(target, out, inplace=inplace, set_instead_of_inc=True)
    return out


def set_subtensor(x, y, inplace: bool = False) -> Variable:
    """The tensor indexed to get ``x`` (``x`` must be ``t[index]``), with ``y`` written at the
    index (numpy's ``t[index] = y`` without changing ``t``)."""
    return inc_subtensor(x, y, inplace=inplace, set_instead_of_inc=True)


# ----------------------------------------------------------------------------------------------
# PyTensor's indexing helpers


def advanced_subtensor1(x, ilist) -> Variable:
    """``x[ilist]`` for an integer vector ``ilist`` (rows of ``x``)."""
    return AdvancedSubtensor1()(x, ilist)


def advanced_inc_subtensor1(x, y, ilist) -> Variable:
    """``x`` with ``y`` added at rows ``ilist`` (repeated rows accumulate)."""
    x = as_tensor_variable(x)
    return AdvancedIncSubtensor1()(x, _as_value_for(x, y, "advanced_inc_subtensor1"), ilist)


def advanced_set_subtensor1(x, y, ilist) -> Variable:
    """``x`` with ``y`` written at rows ``ilist``."""
    x = as_tensor_variable(x)
    return AdvancedIncSubtensor1(set_instead_of_inc=True)(
        x, _as_value_for(x, y, "advanced_set_subtensor1"), ilist)


def advanced_subtensor(x, *index) -> Variable:
    """``x[index]`` for an index with integer arrays or boolean masks (``x[i, :, j]`` is
    ``advanced_subtensor(x, i, slice(None), j)``)."""
    return getitem(x, tuple(index))


def advanced_inc_subtensor(x, y, *index, inplace: bool = False,
                           set_instead_of_inc: bool = False,
                           ignore_duplicates: bool = False) -> Variable:
    """``x`` with ``y`` added at ``x[index]`` (written there with ``set_instead_of_inc``; see
    ``inc_subtensor``)."""
    return inc_subtensor(getitem(x, tuple(index)), y, inplace=inplace,
                         set_instead_of_inc=set_instead_of_inc,
                         ignore_duplicates=ignore_duplicates)


def advanced_set_subtensor(x, y, *index) -> Variable:
    """``x`` with ``y`` written at ``x[index]``."""
    return set_subtensor(getitem(x, tuple(index)), y)


def take(a, indices, axis=None, mode: str | None = "raise") -> Variable:
    """``np.take``: the entries of ``a`` at ``indices`` along ``axis`` (of the flattened ``a``
    when ``axis`` is None). ``mode`` says what out-of-range indices do: 'raise' (an
    IndexError when the function runs), 'wrap' (taken modulo the length) or 'clip' (limited
    to the first and last entries)."""
    a = as_tensor_variable(a)
    if axis is None:
        return take(flatten(a, 1), indices, 0, mode)
    axis = normalize_axis(axis, a.ndim, "take")
    mode = "raise" if mode is None else mode
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    indices = as_tensor_variable(indices)
    if indices.dtype not in INT_DTYPES:
        raise TypeError(f"take: indices must be integers, got {indices} ({indices.type})")
    if mode != "raise":
        length = shape_i(a, axis)
        if mode == "wrap":
            indices = tm.mod(indices, length)
        else:
            indices = tm.clip(indices, 0, tm.sub(length, 1))
    return getitem(a, (slice(None),) * axis + (indices,))


class IndexTypeError(TypeError, IndexError):
    """Indices that are not integers: a TypeError that is also the IndexError numpy raises
    ("arrays used as indices must be of integer type")."""


def take_along_axis(arr, indices, axis=None) -> Variable:
    """``np.take_along_axis``: ``out[..., j, ...] = arr[..., indices[..., j, ...], ...]`` along
    ``axis`` (``indices`` has ``arr``'s number of dimensions; they broadcast elsewhere);
    ``axis=None`` takes from the flattened ``arr`` with a vector of indices."""
    from tensorgraph.tensor.creation import arange

    arr, indices = as_tensor_variable(arr), as_tensor_variable(indices)
    if indices.dtype not in INT_DTYPES:
        raise IndexTypeError(f"take_along_axis: indices must be integers, got {indices} "
                             f"({indices.type})")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None the indices must be a vector, "
                             f"got {indices.ndim}-d {indices}")
        return getitem(flatten(arr, 1), indices)
    axis = normalize_axis(axis, arr.ndim, "take_along_axis")
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: indices ({indices.ndim}-d) must have the number of "
                         f"dimensions of arr ({arr.ndim}-d)")
    index = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(indices)
            continue
        pattern = ["x"] * arr.ndim
        pattern[d] = 0
        index.append(DimShuffle(1, pattern)(arange(shape_i(arr, d))))
    return getitem(arr, tuple(index))


def flip(x, axis=None) -> Variable:
    """``x`` with the order of its entries reversed along ``axis`` (an int, a sequence of
    ints, or None for every axis), as ``np.flip``."""
    from tensorgraph.tensor.reduction import normalize_axis

    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "flip")
    return getitem(x, tuple(slice(None, None, -1) if d in axes else slice(None)
                            for d in range(x.ndim)))


def slice_at_axis(sl: slice, axis: int) -> tuple:
    """The index applying ``sl`` to dimension ``axis`` alone: ``x[slice_at_axis(sl, 1)]`` is
    ``x[:, sl]`` (a negative ``axis`` counts from the end: ``x[..., sl, :]`` for -2)."""
    if axis >= 0:
        return (slice(None),) * axis + (sl, Ellipsis)
    return (Ellipsis, sl) + (slice(None),) * (-axis - 1)


def _known_int(value):
    """``value`` as a Python int when it is known while the graph is built, else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, Constant) and np.ndim(value.data) == 0:
        data = np.asarray(value.data)
        return int(data) if data.dtype.kind in "iu" else None
    return None


def get_canonical_form_slice(theslice, length):
    """A slice or index in canonical form, and the direction to read it in.

    For a slice: ``(slice(start, stop, step), direction)`` with ``0 <= start <= stop <=
    length`` and ``step > 0``, such that ``a[theslice]`` is ``a[start:stop:step][::direction]``
    for any ``a`` of that length (``direction`` is 1 or -1). For an integer index: the index
    made non-negative (``i + length`` where ``i < 0``) and direction 1. Known values give
    Python ints; symbolic ones give integer scalar variables (``direction`` too when the
    step's sign is not known)."""
    if isinstance(theslice, slice):
        return _canonical_slice(theslice, length)
    if isinstance(theslice, Variable) and (getattr(theslice.type, "ndim", None) != 0
                                           or not hasattr(theslice.type, "dtype")):
        # a vector, or a variable of a type that is no number (NoneConst)
        raise ValueError(f"get_canonical_form_slice: {theslice} is not a supported slice or "
                         "integer index (a slice, an int or an integer scalar)")
    if theslice is None or not (isinstance(theslice, (numbers.Integral, Variable))):
        raise ValueError(f"get_canonical_form_slice: {theslice!r} is not a supported slice or "
                         "integer index (a slice, an int or an integer scalar)")
    known = _known_int(theslice)
    if known is not None and known >= 0:
        return known, 1      # a constant index is known: give it as a Python int
    index = as_tensor_variable(theslice)
    if index.dtype not in INT_DTYPES:
        raise ValueError(f"get_canonical_form_slice: {theslice} is not a supported slice or "
                         "integer index (a slice, an int or an integer scalar)")
    if known is not None:
        return tm.add(index, length), 1
    return tm.switch(tm.lt(index, 0), tm.add(index, length), index), 1


def _canonical_slice(sl, length):
    parts = (sl.start, sl.stop, sl.step)
    known = [None if p is None else _known_int(p) for p in parts]
    n = _known_int(length)
    if n is not None and all(p is None or k is not None for p, k in zip(parts, known)):
        r = range(n)[slice(*known)]
        if r.step > 0:
            return slice(r.start, max(r.start, r.stop), r.step), 1
        if len(r) == 0:
            return slice(0, 0, 1), 1
        return slice(r[-1], r[0] + 1, -r.step), -1
    return _symbolic_canonical_slice(parts, length)


def _symbolic_canonical_slice(parts, length):
    def scalar(v):
        return tm.cast(_as_index_scalar(v, "get_canonical_form_slice"), "int64")

    n = scalar(length)
    zero, one = constant(0, dtype="int64"), constant(1, dtype="int64")
    step = one if parts[2] is None else scalar(parts[2])
    if parts[2] is not None and _known_int(parts[2]) == 0:
        raise ValueError("get_canonical_form_slice: slice step cannot be zero")

    def normalized(v, low, high):
        v = scalar(v)
        v = tm.switch(tm.lt(v, 0), tm.add(v, n), v)
        return tm.clip(v, low, high)

    # step > 0: the entries start, start + step, ... below stop, all inside [0, n]
    up_start = zero if parts[0] is None else normalized(parts[0], zero, n)
    up_stop = n if parts[1] is None else normalized(parts[1], zero, n)
    up_stop = tm.maximum(up_stop, up_start)
    # step < 0: start, start + step, ... above stop, in [-1, n - 1] (-1: before the first)
    last = tm.sub(n, one)
    down_start = last if parts[0] is None else normalized(parts[0], tm.neg(one), last)
    down_stop = tm.neg(one) if parts[1] is None else normalized(parts[1], tm.neg(one), last)
    stride = tm.neg(step)
    count = tm.maximum(tm.ceil_intdiv(tm.sub(down_start, down_stop), stride), zero)
    nonempty = tm.gt(count, 0)
    down_first = tm.switch(nonempty, tm.sub(down_start, tm.mul(tm.sub(count, one), stride)), zero)
    down_end = tm.switch(nonempty, tm.add(down_start, one), zero)

    known_step = _known_int(parts[2]) if parts[2] is not None else 1
    if known_step is not None:
        if known_step > 0:
            return slice(up_start, up_stop, step), 1
        return slice(down_first, down_end, stride), -1
    positive = tm.gt(step, 0)
    return (slice(tm.switch(positive, up_start, down_first), tm.switch(positive, up_stop, down_end),
                  tm.switch(positive, step, stride)),
            tm.switch(positive, one, tm.neg(one)))


# ----------------------------------------------------------------------------------------------
# pp: indexing written as ``x[1:3, idx]`` and ``set_subtensor(x[1:3], y)``


def _indexed_text(idx_list, base: str, index_args) -> str:
    args = iter(index_args)
    parts = []
    for entry in idx_list:
        if entry in ("int", "array"):
            parts.append(next(args))
            continue
        start, stop, step = (next(args) if p is not None else "" for p in entry[1:])
        parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
    return f"{base}[{', '.join(parts)}]"


def _getitem_text(node, args):
    idx_list = ("array",) if isinstance(node.op, AdvancedSubtensor1) else node.op.idx_list
    return _indexed_text(idx_list, args[0], args[1:])


def _setitem_text(node, args):
    idx_list = ("array",) if isinstance(node.op, AdvancedIncSubtensor1) else node.op.idx_list
    name = "set_subtensor" if node.op.set_instead_of_inc else "inc_subtensor"
    return f"{name}({_indexed_text(idx_list, args[0], args[2:])}, {args[1]})"


def _register_printers():
    for op_class in (Subtensor, AdvancedSubtensor1, AdvancedSubtensor):
        pprint.assign(op_class, _getitem_text)
    for op_class in (IncSubtensor, AdvancedIncSubtensor1, AdvancedIncSubtensor):
        pprint.assign(op_class, _setitem_text)


_register_printers()
