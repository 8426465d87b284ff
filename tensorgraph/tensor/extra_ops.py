"""numpy's array functions beyond arithmetic, under PyTensor's module name
(``tensorgraph.tensor.extra_ops``): cumulative sums and products, ``diff``, ``repeat``,
``bincount``, ``searchsorted``, ``unique``, ``compress``, ``fill_diagonal``,
``ravel_multi_index``/``unravel_index``, ``to_one_hot``, ``bartlett``, the broadcasting helpers
and ``linspace``/``logspace``/``geomspace``.

Where a function is a composition of existing ops it is one (``diff`` is slicing and
subtraction, ``bincount`` an indexed increment of zeros, ``repeat`` by a known count a
broadcast and a reshape), so it gets their C, shapes and gradients. The ops of this module
(``CumOp``, ``Repeat`` by a vector of counts, ``SearchsortedOp``, ``Unique``,
``RavelMultiIndex``, ``UnravelIndex``) have no C: they run numpy under every linker.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant
from tensorgraph.graph.op import Op
from tensorgraph.raise_op import Assert, assert_op
from tensorgraph.scalar import basic as ps
from tensorgraph.tensor import math
from tensorgraph.tensor.basic import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_scalar_constant_value,
)
from tensorgraph.tensor.creation import alloc, arange, zeros, zeros_like
from tensorgraph.tensor.elemwise import DimShuffle, _broadcast_static
from tensorgraph.tensor.join import concatenate, stack
from tensorgraph.tensor.nonzero import flatnonzero
from tensorgraph.tensor.reduction import max as tmax
from tensorgraph.tensor.reduction import min as tmin
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.reduction import zeros_gradient
from tensorgraph.tensor.shape import (
    _disconnected,
    as_int_scalar,
    as_shape_scalars,
    constant_int,
    flatten,
    normalize_axis,
    reshape,
    shape_i,
    squeeze,
)
from tensorgraph.tensor.subtensor import getitem, inc_subtensor, set_subtensor, take
from tensorgraph.tensor.type import INT_DTYPES, TensorType, normalize_dtype

__all__ = [
    "CumOp", "Repeat", "SearchsortedOp", "Unique", "RavelMultiIndex", "UnravelIndex",
    "cumsum", "cumprod", "diff", "repeat", "bincount", "searchsorted", "unique", "squeeze",
    "compress", "fill_diagonal", "fill_diagonal_offset", "ravel_multi_index", "unravel_index",
    "to_one_hot", "bartlett", "broadcast_shape", "broadcast_to", "broadcast_arrays",
    "concat_with_broadcast", "linspace", "logspace", "geomspace",
]


def _tm():
    return math


def _int_zeros_gradient(x):
    return zeros_gradient(x)


# ----------------------------------------------------------------------------------------------
# Cumulative sums and products


class CumOp(Op):
    """The cumulative sum (``mode='add'``) or product (``mode='mul'``) along ``axis``."""

    __props__ = ("axis", "mode")

    def __init__(self, axis: int = 0, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', got {mode!r}")
        self.axis = int(axis)
        self.mode = mode

    def __str__(self):
        return f"Cum{'sum' if self.mode == 'add' else 'prod'}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise TypeError(f"{self}: needs at least one dimension, got the 0-d {x}")
        normalize_axis(self.axis, x.ndim, str(self))
        dtype = np.cumsum(np.zeros(1, dtype=x.dtype)).dtype.name
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        func = np.cumsum if self.mode == "add" else np.cumprod
        output_storage[0][0] = np.asarray(func(inputs[0], axis=self.axis),
                                          dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if x.dtype in ps.DISCRETE:
            return [_int_zeros_gradient(x)]
        tm = _tm()
        if self.mode == "add":
            # d out[j] / d x[i] = 1 for j >= i: the reversed cumulative sum of gz
            return [tm.cast(_reverse_cumsum(gz, self.axis), x.dtype)]
        # d out[j] / d x[i] = out[j] / x[i] for j >= i (x without zeros, as in PyTensor)
        return [tm.cast(tm.true_div(_reverse_cumsum(tm.mul(gz, out), self.axis), x), x.dtype)]


def _reverse_cumsum(g, axis):
    g = as_tensor_variable(g)
    axis = normalize_axis(axis, g.ndim, "cumsum")
    flipped = (slice(None),) * axis + (slice(None, None, -1),)
    return getitem(CumOp(axis, "add")(getitem(g, flipped)), flipped)


def _cum(x, axis, mode):
    x = as_tensor_variable(x)
    if axis is None:
        return CumOp(0, mode)(flatten(x, 1))
    return CumOp(normalize_axis(axis, x.ndim, "cumsum" if mode == "add" else "cumprod"),
                 mode)(x)


def cumsum(x, axis=None):
    """The cumulative sum along ``axis`` (of the flattened ``x`` for None), as ``np.cumsum``."""
    return _cum(x, axis, "add")


def cumprod(x, axis=None):
    """The cumulative product along ``axis`` (of the flattened ``x`` for None), as
    ``np.cumprod``."""
    return _cum(x, axis, "mul")


# ----------------------------------------------------------------------------------------------
# diff


def diff(x, n: int = 1, axis: int = -1):
    """The ``n``-th discrete difference along ``axis``, as ``np.diff``: slicing and
    subtraction, ``n`` times."""
    x = as_tensor_variable(x)
    if x.ndim == 0:
        raise ValueError(f"diff: needs at least one dimension, got the 0-d {x}")
    axis = normalize_axis(axis, x.ndim, "diff")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    before = (slice(None),) * axis
    for _ in range(int(n)):
        x = _tm().sub(getitem(x, before + (slice(1, None),)),
                      getitem(x, before + (slice(None, -1),)))
    return x


# ----------------------------------------------------------------------------------------------
# repeat


def _check_repeats_dtype(repeats, what):
    if repeats.dtype not in INT_DTYPES:
        raise TypeError(f"{what}: repeats must be integers, got {repeats} ({repeats.type})")
    if repeats.dtype == "uint64":
        raise TypeError(f"{what}: uint64 repeats are not supported (numpy cannot index with "
                        "them); use int64")


class Repeat(Op):
    """Each entry of ``x`` along ``axis`` repeated by the matching entry of the integer vector
    ``repeats`` (``np.repeat``). (A single count is a broadcast and a reshape, see
    ``repeat``.)"""

    __props__ = ("axis",)

    def __init__(self, axis: int = 0):
        self.axis = int(axis)

    def __str__(self):
        return f"Repeat{{axis={self.axis}}}"

    def make_node(self, x, repeats):
        x, repeats = as_tensor_variable(x), as_tensor_variable(repeats)
        _check_repeats_dtype(repeats, str(self))
        if repeats.ndim != 1:
            raise TypeError(f"{self}: repeats must be a vector, got {repeats} ({repeats.type})")
        axis = normalize_axis(self.axis, x.ndim, str(self))
        shape = list(x.type.shape)
        shape[axis] = None
        if isinstance(repeats, Constant):   # known counts: a known length
            counts = np.asarray(repeats.data)
            if x.type.shape[axis] not in (None, len(counts)):
                raise ValueError(f"{self}: {len(counts)} repeat counts for the "
                                 f"{x.type.shape[axis]} entries along axis {axis} of {x}")
            shape[axis] = int(counts.sum())
        return Apply(self, [x, repeats], [TensorType(x.dtype, tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        x, repeats = inputs
        if repeats.size and repeats.min() < 0:
            raise ValueError(f"{self}: repeats must be non-negative, got {repeats}")
        if len(repeats) != x.shape[self.axis]:
            raise ValueError(f"{self}: {len(repeats)} repeat counts for {x.shape[self.axis]} "
                             f"entries along axis {self.axis} (input shape {x.shape})")
        output_storage[0][0] = np.repeat(x, repeats.astype(np.int64), axis=self.axis)

    def infer_shape(self, fgraph, node, input_shapes):
        shape = list(input_shapes[0])
        axis = normalize_axis(self.axis, len(shape), str(self))
        shape[axis] = tsum(node.inputs[1], dtype="int64")
        return [tuple(shape)]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, repeats = inputs
        if x.dtype in ps.DISCRETE:
            return [_int_zeros_gradient(x), _disconnected()]
        axis = normalize_axis(self.axis, x.ndim, str(self))
        # output entry k came from input entry source[k]: add each gz[k] back there
        source = Repeat(0)(arange(shape_i(x, axis)), repeats)
        index = (slice(None),) * axis + (source,)
        gx = inc_subtensor(getitem(zeros_like(x), index), output_grads[0])
        return [gx, _disconnected()]


def _known_int(var):
    """The value of an integer scalar known while the graph is built, else None."""
    try:
        return int(get_scalar_constant_value(var))
    except NotScalarConstantError:
        return None


def repeat(x, repeats, axis=None):
    """``np.repeat``: each entry of ``x`` along ``axis`` (of the flattened ``x`` for None)
    repeated ``repeats`` times (an int, or a vector with one count per entry)."""
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x, 1), 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    repeats = as_tensor_variable(repeats)
    _check_repeats_dtype(repeats, "repeat")
    if repeats.ndim == 1 and repeats.type.shape[0] == 1:
        repeats = repeats[0]
    if repeats.ndim == 1:
        return Repeat(axis)(x, repeats)
    if repeats.ndim != 0:
        raise ValueError(f"repeat: repeats must be an int or a vector, got {repeats} "
                         f"({repeats.type})")
    # one count: a new axis after ``axis`` broadcast to the count, merged into ``axis``

    count = as_int_scalar(repeats, "repeat count")
    pattern = list(range(axis + 1)) + ["x"] + list(range(axis + 1, x.ndim))
    expanded = DimShuffle(x.ndim, pattern)(x)
    sizes = [shape_i(x, d) for d in range(axis + 1)] + [count] + [
        shape_i(x, d) for d in range(axis + 1, x.ndim)]
    tiled = alloc(expanded, *sizes)
    size, times = _known_int(shape_i(x, axis)), _known_int(count)
    length = size * times if None not in (size, times) else _tm().mul(shape_i(x, axis), count)
    new_shape = [shape_i(x, d) for d in range(axis)] + [length] + [
        shape_i(x, d) for d in range(axis + 1, x.ndim)]
    return reshape(tiled, new_shape)


# ----------------------------------------------------------------------------------------------
# bincount, searchsorted, unique, compress


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """``np.bincount``: how many times each value ``0..max(x)`` occurs in the non-negative
    integer vector ``x`` (the sum of ``weights`` at those positions, when given); at least
    ``minlength`` counts. ``assert_nonneg`` checks at run time that no value is negative
    (otherwise a negative value is an index error)."""
    tm = _tm()
    x = as_tensor_variable(x)
    if x.dtype not in INT_DTYPES:
        raise TypeError(f"bincount: x must be integers, got {x} ({x.type})")
    if x.ndim != 1:
        raise TypeError(f"bincount: x must be a vector, got {x} ({x.type})")
    if assert_nonneg:
        x = Assert("bincount: x has negative values")(x, tm.ge(_min_or(x, 0), 0))
    # one more than the largest value (0 for an empty x)
    length = tm.add(_max_or(x, -1), 1)
    if minlength is not None:
        length = tm.maximum(length, as_int_scalar(minlength, "bincount minlength"))
    if weights is None:
        out = zeros([length], dtype="int64")
        values = constant(1, dtype="int64")
    else:
        values = as_tensor_variable(weights)
        out = zeros([length], dtype=values.dtype)
    return inc_subtensor(getitem(out, x), values)


def _extreme_or(x, value, reduce):
    """``reduce`` of the int64 vector ``x`` with ``value`` appended (defined when x is
    empty)."""
    x = _tm().cast(x, "int64")
    return reduce(concatenate([x, constant(np.full(1, value, dtype="int64"))]))


def _max_or(x, value):
    return _extreme_or(x, value, tmax)


def _min_or(x, value):
    return _extreme_or(x, value, tmin)


class SearchsortedOp(Op):
    """Where the entries of ``v`` go in the sorted vector ``x`` (``np.searchsorted``): the
    first position (``side='left'``) or the last (``'right'``) keeping ``x`` sorted."""

    __props__ = ("side",)

    def __init__(self, side: str = "left"):
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        self.side = side

    def make_node(self, x, v, sorter=None):
        x, v = as_tensor_variable(x), as_tensor_variable(v)
        if x.ndim != 1:
            raise ValueError(f"searchsorted: x must be a vector, got {x} ({x.type})")
        inputs = [x, v]
        if sorter is not None:
            sorter = as_tensor_variable(sorter)
            if sorter.ndim != 1:
                raise ValueError(f"searchsorted: sorter must be a vector, got {sorter} "
                                 f"({sorter.type})")
            if sorter.dtype not in INT_DTYPES:
                raise TypeError(f"searchsorted: sorter must be integers, got {sorter} "
                                f"({sorter.type})")
            inputs.append(sorter)
        return Apply(self, inputs, [TensorType("int64", v.type.shape)()])

    def perform(self, node, inputs, output_storage):
        x, v, *sorter = inputs
        result = np.searchsorted(x, v, side=self.side, sorter=sorter[0] if sorter else None)
        output_storage[0][0] = np.asarray(result, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def connection_pattern(self, node):
        return [[False]] * len(node.inputs)

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def searchsorted(x, v, side: str = "left", sorter=None):
    """``np.searchsorted``: int64 positions of ``v``'s entries in the sorted vector ``x``
    (sorted by the indices ``sorter`` if given)."""
    return SearchsortedOp(side)(x, v, sorter)


class Unique(Op):
    """``np.unique``: the sorted distinct values, and optionally the index of each one's
    first occurrence, the inverse map and the counts (outputs in that order)."""

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(self, return_index=False, return_inverse=False, return_counts=False,
                 axis=None):
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        self.axis = None if axis is None else int(axis)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis is None:
            values = TensorType(x.dtype, (None,))()
            inverse_shape = (None,)
        else:
            axis = normalize_axis(self.axis, x.ndim, "unique")
            shape = list(x.type.shape)
            shape[axis] = None
            values = TensorType(x.dtype, tuple(shape))()
            inverse_shape = (x.type.shape[axis],)
        outputs = [values]
        if self.return_index:
            outputs.append(TensorType("int64", (None,))())
        if self.return_inverse:
            outputs.append(TensorType("int64", inverse_shape)())
        if self.return_counts:
            outputs.append(TensorType("int64", (None,))())
        return Apply(self, [x], outputs)

    def perform(self, node, inputs, output_storage):
        results = np.unique(inputs[0], return_index=self.return_index,
                            return_inverse=self.return_inverse,
                            return_counts=self.return_counts, axis=self.axis)
        if not isinstance(results, tuple):
            results = (results,)
        for k, (cell, value) in enumerate(zip(output_storage, results)):
            if k > 0:
                value = np.asarray(value, dtype="int64").reshape(-1)
            cell[0] = np.asarray(value, dtype=node.outputs[k].type.dtype)

    def connection_pattern(self, node):
        return [[False] * len(node.outputs)]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """``np.unique`` (see ``Unique``): one variable, or a list when more is returned."""
    outputs = Unique(return_index, return_inverse, return_counts, axis)(ar)
    return outputs


def compress(condition, x, axis=None):
    """``np.compress``: the entries of ``x`` along ``axis`` (of the flattened ``x`` for None)
    where the 1-d ``condition`` is true."""
    condition = as_tensor_variable(condition)
    if condition.ndim != 1:
        raise ValueError(f"compress: condition must be 1-d, got {condition} ({condition.type})")
    return take(x, flatnonzero(condition), axis=axis)


# ----------------------------------------------------------------------------------------------
# Diagonals


def fill_diagonal(a, val):
    """``a`` with its main diagonal (``a[i, i, ...]``) set to ``val``: a copy, as
    ``np.fill_diagonal`` does in place. ``a`` has at least 2 dimensions; beyond 2 they must
    all have the same size (numpy's rule)."""
    a = as_tensor_variable(a)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: a must be at least 2-d, got {a} ({a.type})")
    val = _tm().cast(as_tensor_variable(val), a.dtype)
    if val.ndim != 0:
        raise TypeError(f"fill_diagonal: val must be a scalar, got {val} ({val.type})")
    size = tmin(stack([shape_i(a, d) for d in range(a.ndim)]))
    diagonal = arange(size)
    return set_subtensor(getitem(a, (diagonal,) * a.ndim), val)


def fill_diagonal_offset(a, val, offset):
    """The matrix ``a`` with ``val`` written on the diagonal ``offset`` above the main one
    (below it for a negative ``offset``)."""
    tm = _tm()
    a = as_tensor_variable(a)
    if a.ndim != 2:
        raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a} ({a.type})")
    val = tm.cast(as_tensor_variable(val), a.dtype)
    if val.ndim != 0:
        raise TypeError(f"fill_diagonal_offset: val must be a scalar, got {val} ({val.type})")
    offset = as_int_scalar(offset, "fill_diagonal_offset offset")
    first_row = tm.maximum(tm.neg(offset), 0)
    last_row = tm.minimum(shape_i(a, 0), tm.sub(shape_i(a, 1), offset))
    rows = arange(first_row, tm.maximum(last_row, first_row))
    return set_subtensor(getitem(a, (rows, tm.add(rows, offset))), val)


# ----------------------------------------------------------------------------------------------
# Flat and multi-dimensional indices


def _dims_vector(dims, what):
    if isinstance(dims, (list, tuple)):
        return stack([as_int_scalar(d, f"{what} dims") for d in dims])
    dims = as_tensor_variable(dims)
    if dims.ndim != 1 or dims.dtype not in INT_DTYPES:
        raise TypeError(f"{what}: dims must be a sequence or vector of integers, got {dims}")
    return dims


class RavelMultiIndex(Op):
    """``np.ravel_multi_index``: flat indices from one integer array per dimension (inputs:
    the index arrays, then the dims vector)."""

    __props__ = ("mode", "order")

    def __init__(self, mode="raise", order="C"):
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', got "
                             f"{mode!r}")
        if order not in ("C", "F"):
            raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
        self.mode, self.order = mode, order

    def make_node(self, *inputs):
        *indices, dims = [as_tensor_variable(i) for i in inputs]
        if not indices:
            raise TypeError("ravel_multi_index: needs at least one index array")
        for i in indices:
            if i.dtype not in INT_DTYPES:
                raise TypeError(f"ravel_multi_index: index arrays must be integers, got {i}")

        ndim = max(i.ndim for i in indices)
        padded = [i if i.ndim == ndim else DimShuffle(i.ndim, ("x",) * (ndim - i.ndim) + tuple(
            range(i.ndim)))(i) for i in indices]
        shape = _broadcast_static(self, padded) if ndim else ()
        return Apply(self, [*indices, dims], [TensorType("int64", shape)()])

    def perform(self, node, inputs, output_storage):
        *indices, dims = inputs
        result = np.ravel_multi_index(tuple(indices), tuple(int(d) for d in dims),
                                      mode=self.mode, order=self.order)
        output_storage[0][0] = np.asarray(result, dtype="int64")

    def connection_pattern(self, node):
        return [[False]] * len(node.inputs)

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """``np.ravel_multi_index``: flat indices into an array of shape ``dims`` from a sequence
    of index arrays, one per dimension."""
    if not isinstance(multi_index, (list, tuple)):
        raise TypeError("ravel_multi_index: multi_index must be a list or tuple of index arrays")
    return RavelMultiIndex(mode, order)(*multi_index, _dims_vector(dims, "ravel_multi_index"))


class UnravelIndex(Op):
    """``np.unravel_index``: one index array per dimension of ``dims`` from flat indices."""

    __props__ = ("order",)

    def __init__(self, order="C"):
        if order not in ("C", "F"):
            raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
        self.order = order

    def make_node(self, indices, dims):
        indices, dims = as_tensor_variable(indices), as_tensor_variable(dims)
        if indices.dtype not in INT_DTYPES:
            raise TypeError(f"unravel_index: indices must be integers, got {indices}")
        if dims.ndim != 1:
            raise TypeError(f"unravel_index: dims must be a vector, got {dims} ({dims.type})")
        if dims.type.shape[0] is None:
            # the number of outputs is the length: a bad value, not a bad type
            raise ValueError(f"unravel_index: dims must be a vector of known length, got {dims} "
                             f"({dims.type}); give its length with specify_shape(dims, (n,))")
        return Apply(self, [indices, dims],
                     [TensorType("int64", indices.type.shape)() for _ in
                      range(dims.type.shape[0])])

    def perform(self, node, inputs, output_storage):
        indices, dims = inputs
        results = np.unravel_index(indices, tuple(int(d) for d in dims), order=self.order)
        for cell, value in zip(output_storage, results):
            cell[0] = np.asarray(value, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]] * len(node.outputs)

    def connection_pattern(self, node):
        return [[False] * len(node.outputs)] * 2

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected(), _disconnected()]


def unravel_index(indices, dims, order="C"):
    """``np.unravel_index``: a tuple of int64 index arrays, one per entry of ``dims``."""
    dims = _dims_vector(dims, "unravel_index")
    outputs = UnravelIndex(order)(indices, dims)
    return tuple(outputs) if isinstance(outputs, (list, tuple)) else (outputs,)


# ----------------------------------------------------------------------------------------------
# Small constructions


def to_one_hot(y, nb_class, dtype=None):
    """One row per entry of the integer vector ``y``: 1 at column ``y[i]`` of ``nb_class``
    columns, 0 elsewhere (``dtype`` defaults to ``config.floatX``)."""
    tm = _tm()
    y = as_tensor_variable(y)
    if y.ndim != 1 or y.dtype not in INT_DTYPES:
        raise TypeError(f"to_one_hot: y must be an integer vector, got {y} ({y.type})")
    dtype = normalize_dtype("floatX" if dtype is None else dtype)
    classes = arange(as_int_scalar(nb_class, "to_one_hot nb_class"))
    return tm.cast(tm.eq(y.dimshuffle(0, "x"), classes.dimshuffle("x", 0)), dtype)


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points, as ``np.bartlett`` (float64)."""
    tm = _tm()
    M = as_int_scalar(M, "bartlett M")
    n = tm.cast(arange(tm.maximum(M, 0)), "float64")
    half = tm.true_div(tm.cast(tm.sub(M, 1), "float64"), constant(2.0, dtype="float64"))
    window = tm.sub(1.0, tm.true_div(tm.abs(tm.sub(n, half)), tm.maximum(half, 0.5)))
    return tm.switch(tm.eq(M, 1), constant(1.0, dtype="float64"), window)


# ----------------------------------------------------------------------------------------------
# Broadcasting helpers


def broadcast_shape(*arrays, arrays_are_shapes: bool = False,
                    allow_runtime_broadcast: bool = False) -> tuple:
    """The shape the tensors ``arrays`` broadcast to, as a tuple of int64 scalars (constants
    where known); with ``arrays_are_shapes``, the arguments are shapes (tuples or vectors).

    Sizes follow tensorgraph's rule: only a size known to be 1 when the graph is built
    broadcasts. Sizes unknown until run time are taken to be the common size, and an Assert
    checks, when the graph runs, that they are equal (to each other and to a known size): a
    size that turns out to be 1 there is an error, as for elementwise ops.
    ``allow_runtime_broadcast=True`` gives numpy's rule instead (a size that is 1 at run time
    broadcasts too; the others must still agree)."""
    tm = _tm()
    shapes = []
    for a in arrays:
        if arrays_are_shapes:
            shapes.append(list(as_shape_scalars(a, "broadcast_shape")))
        else:
            a = as_tensor_variable(a)
            shapes.append([shape_i(a, d) for d in range(a.ndim)])
    ndim = max((len(s) for s in shapes), default=0)
    one = constant(1, dtype="int64")
    shapes = [[one] * (ndim - len(s)) + s for s in shapes]
    result = []
    for d in range(ndim):
        sizes = [s[d] for s in shapes]
        known = [constant_int(v) for v in sizes]
        not_one = [v for v, k in zip(sizes, known) if k != 1]
        if not not_one:
            result.append(one)
            continue
        fixed = {k for k in known if k is not None and k != 1}
        if len(fixed) > 1:
            raise ValueError(f"broadcast_shape: sizes {sorted(fixed)} of dimension {d} do not "
                             "broadcast together")
        size = constant(fixed.pop(), dtype="int64") if fixed else not_one[0]
        unknown = [v for v, k in zip(sizes, known) if k is None and v is not size]
        if unknown and allow_runtime_broadcast:
            result.append(_runtime_broadcast_size(sizes if not fixed else [size, *unknown], d))
            continue
        if unknown:
            shown = ", ".join(str(v) for v in not_one)
            size = assert_op(size, *[tm.eq(v, size) for v in unknown],
                             msg=f"broadcast_shape: the sizes {shown} of dimension {d} differ "
                                 "at run time (only sizes known to be 1 when the graph is "
                                 "built broadcast)")
        result.append(size)
    return tuple(result)


def _runtime_broadcast_size(sizes, d):
    """numpy's broadcast of the int64 scalars ``sizes`` (of dimension ``d``) at run time: the
    size that is not 1 (1 when all are), asserted to be the same for all that are not 1."""
    tm = _tm()
    one = constant(1, dtype="int64")
    size = sizes[0]
    for v in sizes[1:]:
        size = tm.switch(tm.eq(size, one), v, size)
    return assert_op(size, *[tm.or_(tm.eq(v, one), tm.eq(v, size)) for v in sizes],
                     msg=f"broadcast_shape: the sizes of dimension {d} do not broadcast "
                         "together (sizes other than 1 differ)")


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``, as ``np.broadcast_to`` (a new array here, not a view)."""
    x = as_tensor_variable(x)
    return alloc(x, *as_shape_scalars(shape, "broadcast_to shape"))


def concat_with_broadcast(tensor_list, axis=0):
    """The tensors of ``tensor_list`` joined along ``axis`` after broadcasting them against
    each other in every other dimension (a size known to be 1 is repeated; sizes not known
    until run time must agree there, as ``broadcast_shape`` checks)."""
    from tensorgraph.tensor.reduction import normalize_axis

    tensors = [as_tensor_variable(t) for t in tensor_list]
    if not tensors:
        raise ValueError("Cannot concatenate an empty list of tensors (concat_with_broadcast "
                         "needs at least one)")
    ndims = [t.ndim for t in tensors]
    if len(set(ndims)) > 1:
        raise TypeError("Only tensors with the same number of dimensions can be concatenated. "
                        f"concat_with_broadcast got ndims {ndims}")
    (axis,) = normalize_axis(axis, ndims[0], "concat_with_broadcast")
    one = constant(1, dtype="int64")
    # the joined axis takes no part in the broadcast: stand in a 1 for it
    common = broadcast_shape(*[[one if d == axis else shape_i(t, d) for d in range(t.ndim)]
                               for t in tensors], arrays_are_shapes=True)
    parts = []
    for t in tensors:
        target = [shape_i(t, d) if d == axis else common[d] for d in range(t.ndim)]
        # only a size known to be 1 broadcasts; other sizes are checked by the join itself
        grows = any(t.type.shape[d] == 1 and constant_int(common[d]) != 1
                    for d in range(t.ndim) if d != axis)
        parts.append(broadcast_to(t, target) if grows else t)
    return concatenate(parts, axis=axis)


def broadcast_arrays(*args):
    """Each tensor of ``args`` broadcast to their common shape, as ``np.broadcast_arrays``."""
    tensors = [as_tensor_variable(a) for a in args]
    shape = broadcast_shape(*tensors)
    return [broadcast_to(t, shape) for t in tensors]


# ----------------------------------------------------------------------------------------------
# linspace, logspace, geomspace


def _space_dtype(dtype, *values):
    if dtype is not None:
        return normalize_dtype(dtype)
    out = ps.upcast(*[v.dtype for v in values])
    return out if out in ("float16", "float32", "float64") else config.floatX


def _compute_dtype(dtype):
    return dtype if dtype in ("float16", "float32", "float64") else "float64"


def _even_steps(start, stop, num, endpoint, dtype, what):
    """Evenly spaced values from ``start`` to ``stop`` along a new first axis (``stop``
    exactly as the last one when ``endpoint``), and the spacing, in the float ``dtype``."""
    tm = _tm()
    num = as_int_scalar(num, f"{what} num")
    count = tm.cast(num, dtype)
    one = constant(1, dtype=dtype)
    divisor = tm.maximum(tm.sub(count, one) if endpoint else count, one)
    start, stop = tm.cast(start, dtype), tm.cast(stop, dtype)
    ndim = max(start.ndim, stop.ndim)
    step = tm.true_div(tm.sub(stop, start), divisor)
    k = DimShuffle(1, (0,) + ("x",) * ndim)(arange(num))
    samples = tm.add(start, tm.mul(tm.cast(k, dtype), step))
    if endpoint:   # start + (n - 1) * step can miss stop by an ulp
        is_last = tm.and_(tm.eq(k, tm.sub(num, 1)), tm.gt(num, 1))
        samples = tm.switch(is_last, stop, samples)
    return samples, step


def _along(samples, axis, what):
    """``samples`` (the new axis first) with the new axis moved to ``axis``."""
    axis = normalize_axis(axis, samples.ndim, what)
    if not axis:
        return samples
    order = list(range(1, axis + 1)) + [0] + list(range(axis + 1, samples.ndim))
    return samples.transpose(*order)


def linspace(start, end, steps=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``steps`` evenly spaced values from ``start`` to ``end`` (``end`` excluded when not
    ``endpoint``), as ``np.linspace``; ``start`` and ``end`` may be arrays (the samples go
    along a new ``axis``). With ``retstep``, also the spacing."""
    start, end = as_tensor_variable(start), as_tensor_variable(end)
    dtype = _space_dtype(dtype, start, end)
    samples, step = _even_steps(start, end, steps, endpoint, _compute_dtype(dtype), "linspace")
    samples = _tm().cast(_along(samples, axis, "linspace"), dtype)
    return (samples, step) if retstep else samples


def logspace(start, end, steps=50, base=10.0, endpoint=True, dtype=None, axis=0):
    """``base ** linspace(start, end, steps)``, as ``np.logspace``."""
    tm = _tm()
    start, end = as_tensor_variable(start), as_tensor_variable(end)
    dtype = _space_dtype(dtype, start, end)
    compute = _compute_dtype(dtype)
    exponents, _ = _even_steps(start, end, steps, endpoint, compute, "logspace")
    values = tm.pow(constant(base, dtype=compute), exponents)
    return tm.cast(_along(values, axis, "logspace"), dtype)


def geomspace(start, end, steps=50, base=10.0, endpoint=True, dtype=None, axis=0):
    """``steps`` values from ``start`` to ``end`` spaced evenly on a log scale (a geometric
    progression), as ``np.geomspace``; ``start`` and ``end`` must not be 0 and have the same
    sign. (``base`` is accepted for PyTensor's signature; the values do not depend on it.)"""
    tm = _tm()
    start, end = as_tensor_variable(start), as_tensor_variable(end)
    dtype = _space_dtype(dtype, start, end)
    compute = _compute_dtype(dtype)
    start, end = tm.cast(start, compute), tm.cast(end, compute)
    low, high = tm.log10(tm.abs(start)), tm.log10(tm.abs(end))
    exponents, _ = _even_steps(low, high, steps, endpoint, compute, "geomspace")
    values = tm.pow(constant(10.0, dtype=compute), exponents)
    # the first value is start exactly (the last one is end: exponents end at log10|end|, and
    # 10 ** that can miss |end| by an ulp)
    num = as_int_scalar(steps, "geomspace steps")
    k = DimShuffle(1, (0,) + ("x",) * (values.ndim - 1))(arange(num))
    values = tm.switch(tm.eq(k, 0), tm.abs(start), values)
    if endpoint:
        values = tm.switch(tm.and_(tm.eq(k, tm.sub(num, 1)), tm.gt(num, 1)), tm.abs(end),
                           values)
    values = tm.mul(values, tm.sign(start))
    return tm.cast(_along(values, axis, "geomspace"), dtype)
