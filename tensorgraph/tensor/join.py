"""Joining and splitting tensors: ``concatenate``/``join``, ``stack``, ``split``, ``hstack``,
``vstack`` and ``make_vector`` (a vector from scalars, the common case of ``stack``).

Inputs of different dtypes are upcast as numpy's ``concatenate`` does. Gradients split the
output gradient back into the pieces (and joining is the gradient of splitting).
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.op import Op
from tensorgraph.scalar.basic import upcast
from tensorgraph.tensor.basic import (
    NotScalarConstantError,
    as_tensor_variable,
    get_scalar_constant_value,
)
from tensorgraph.tensor.math import add, cast, eq, lt, switch
from tensorgraph.tensor.shape import (
    _disconnected,
    _float_zeros_like,
    _static_entries,
    as_shape_scalars,
    expand_dims,
    normalize_axis,
    shape_i,
    shape_padleft,
    with_props,
)
from tensorgraph.tensor.subtensor import getitem
from tensorgraph.tensor.type import (
    DISCRETE_DTYPES,
    INT_DTYPES,
    TensorType,
    normalize_dtype,
)

__all__ = [
    "MakeVector", "Join", "Split", "make_vector", "concatenate", "join", "stack", "split",
    "hstack", "vstack",
]


class ZeroDimJoinError(TypeError, ValueError):
    """Zero-dimensional tensors given to a join: they have no axis to join along (``stack``
    makes a vector of them). A TypeError as in PyTensor (the ndim is part of the type) and a
    ValueError as in numpy."""


class NdimMismatchError(TypeError, ValueError):
    """Tensors of different numbers of dimensions given to one join. The number of dimensions
    is part of a tensor's type, so this is a ``TypeError`` (as the dtype mismatch next to it,
    and as PyTensor raises); numpy raises ``ValueError`` for the same mistake, so it is one
    too, and code written for either catches it."""


def _cast_all(tensors, dtype):
    return [t if t.dtype == dtype else cast(t, dtype) for t in tensors]


# ----------------------------------------------------------------------------------------------
# MakeVector


class MakeVector(Op):
    """A vector of the given 0-d tensors, of dtype ``dtype``: inputs of other dtypes that
    convert to it without loss (int8 into int32, int32 into float64) are cast first."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str = "int64"):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, *scalars):
        scalars = [as_tensor_variable(s) for s in scalars]
        for i, s in enumerate(scalars):
            if s.ndim != 0:
                # a ValueError (a wrong shape of the right kind of value), as PyTensor's
                raise ValueError(f"{self}: input {i} ({s}) must be a scalar, got {s.ndim}-d")
            if s.dtype != self.dtype and not np.can_cast(s.dtype, self.dtype, "safe"):
                raise TypeError(f"{self}: input {i} ({s}) has dtype {s.dtype}, which does not "
                                f"convert to {self.dtype} without loss")
        scalars = _cast_all(scalars, self.dtype)
        return Apply(self, scalars, [TensorType(self.dtype, (len(scalars),))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.array(inputs, dtype=self.dtype).reshape(len(inputs))

    def infer_shape(self, fgraph, node, input_shapes):
        return [(len(node.inputs),)]

    def L_op(self, inputs, outputs, output_grads):
        if self.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(s) for s in inputs]

        return [getitem(output_grads[0], i) for i in range(len(inputs))]


def make_vector(*scalars, dtype=None) -> Variable:
    """A vector of the scalars (ints, floats or 0-d tensors), upcast to one dtype."""
    scalars = [as_tensor_variable(s) for s in scalars]
    if dtype is None:
        dtype = upcast(*[s.dtype for s in scalars]) if scalars else "int64"
    dtype = normalize_dtype(dtype)
    return MakeVector(dtype)(*_cast_all(scalars, dtype))


# ----------------------------------------------------------------------------------------------
# Join


def _joined_static(op, tensors, axis):
    shape = []
    for d in range(tensors[0].ndim):
        sizes = [t.type.shape[d] for t in tensors]
        if d == axis:
            shape.append(None if None in sizes else sum(sizes))
            continue
        known = {s for s in sizes if s is not None}
        if len(known) > 1:
            shapes = ", ".join(f"{t} {t.type.shape}" for t in tensors)
            raise ValueError(f"{op}: the inputs must have equal sizes in every dimension but the "
                             f"joined one ({axis}); dimension {d} has sizes {sorted(known)} "
                             f"({shapes}); the other dimensions must match exactly")
        shape.append(known.pop() if known else None)
    return tuple(shape)


class Join(Op):
    """The concatenation of tensors of one dtype and ndim along ``axis`` (numpy's concatenate).

    ``Join(axis)`` has the axis as a property, fixed when the graph is built: the common case,
    the one every back end compiles. ``Join()(axis, *tensors)`` (PyTensor's form) takes the axis
    as its first input: a constant axis gives the ``Join(axis)`` node, and a symbolic one (an
    integer scalar known only when the function runs) a node whose first input is that axis;
    an axis out of range for the inputs is then a ValueError at run time.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int | None = None):
        self.axis = None if axis is None else int(axis)

    def make_node(self, *tensors):
        if self.axis is None:
            if not tensors:
                raise ValueError("Join()(axis, *tensors) needs the axis and the tensors")
            axis, tensors = tensors[0], tensors[1:]
            known = _constant_axis(axis, "Join")
            if known is not None:
                return Join(known)(*tensors).owner
            return self._symbolic_node(_symbolic_axis(axis, "Join"), tensors)
        tensors = _checked_tensors(self, tensors)
        op = with_props(self, axis=normalize_axis(self.axis, tensors[0].ndim, str(self)))
        if op is not self:
            return op.make_node(*tensors)
        static = _joined_static(self, tensors, self.axis)
        return Apply(self, tensors, [TensorType(tensors[0].dtype, static)()])

    def _symbolic_node(self, axis, tensors):
        """The node of an axis known only at run time: the static sizes of one tensor, else
        none (any dimension may be the joined one, as in PyTensor)."""
        tensors = _checked_tensors(self, tensors)
        if tensors[0].ndim == 0:
            raise ZeroDimJoinError(f"{self}: zero-dimensional tensors cannot be joined; use "
                                   "stack() to make a vector of scalars")
        static = tensors[0].type.shape if len(tensors) == 1 else (None,) * tensors[0].ndim
        return Apply(self, [axis, *tensors], [TensorType(tensors[0].dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        if self.axis is None:
            axis, inputs = _runtime_axis(inputs[0], np.ndim(inputs[1]), "join"), inputs[1:]
        else:
            axis = self.axis
        try:
            out = np.concatenate(inputs, axis=axis)
        except ValueError as exc:
            shapes = ", ".join(str(np.shape(v)) for v in inputs)
            raise ValueError(f"join along axis {axis}: inputs of shapes {shapes} do not fit "
                             f"({exc})") from None
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        if self.axis is None:
            axis, input_shapes = _nonnegative_axis(node.inputs[0], node.outputs[0].ndim), \
                input_shapes[1:]
        out = []
        for d in range(node.outputs[0].type.ndim):
            static = node.outputs[0].type.shape[d]
            joined = (add(*[s[d] for s in input_shapes]) if len(input_shapes) > 1
                      else input_shapes[0][d])
            if static is not None:
                out.append(static)
            elif self.axis is None:
                out.append(switch(eq(axis, d), joined, input_shapes[0][d]))
            elif d == self.axis:
                out.append(joined)
            else:
                out.append(input_shapes[0][d])
        return [tuple(out)]

    def connection_pattern(self, node):
        if self.axis is None:
            return [[False]] + [[True]] * (len(node.inputs) - 1)
        return [[True]] * len(node.inputs)

    def L_op(self, inputs, outputs, output_grads):
        axis = self.axis
        if axis is None:
            axis, inputs = inputs[0], inputs[1:]
        if outputs[0].dtype in DISCRETE_DTYPES:
            grads = [_float_zeros_like(t) for t in inputs]
        elif len(inputs) == 1:
            grads = [output_grads[0]]
        elif self.axis is None:
            sizes = make_vector(*[getitem(t.shape, axis) for t in inputs], dtype="int64")
            grads = list(Split(len(inputs))(output_grads[0], axis, sizes))
        else:
            sizes = make_vector(*[shape_i(t, axis) for t in inputs], dtype="int64")
            grads = list(Split(len(inputs), axis)(output_grads[0], sizes))
        return grads if self.axis is not None else [_disconnected(), *grads]


def _checked_tensors(op, tensors):
    """The tensors of a join as variables, of one ndim and one dtype (else a TypeError)."""
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError(f"{op} needs at least one tensor")
    ndim, dtype = tensors[0].ndim, tensors[0].dtype
    for i, t in enumerate(tensors):
        if t.ndim != ndim:
            raise NdimMismatchError(f"{op}: all inputs must have the same number of "
                                    f"dimensions; input 0 has {ndim}, input {i} ({t}) has {t.ndim}")
        if t.dtype != dtype:
            raise TypeError(f"{op}: all inputs must have dtype {dtype}; input {i} ({t}) "
                            f"has {t.dtype} (use concatenate(), which upcasts)")
    return tensors


def _constant_axis(axis, what: str) -> int | None:
    """An axis given as an int, a numpy integer or an integer constant (or an expression of
    constants, such as a cast of one), as an int; None for an axis known only at run time."""
    if isinstance(axis, Variable):
        if axis.type.ndim != 0:
            raise TypeError(f"{what}: the axis must be an integer scalar, got {axis} "
                            f"({axis.type})")
        try:
            value = get_scalar_constant_value(axis)
        except NotScalarConstantError:
            return None
        if value.dtype.kind not in "iu":
            raise TypeError(f"{what}: the axis must be an integer, got {axis} ({value.dtype})")
        return int(value)
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        if isinstance(axis, np.ndarray) and axis.ndim == 0 and axis.dtype.kind in "iu":
            return int(axis)
        raise TypeError(f"{what}: the axis must be an integer, got {axis!r}")
    return int(axis)


def _symbolic_axis(axis, what: str):
    """A symbolic axis as a 0-d integer variable (else a TypeError naming what came)."""
    axis = as_tensor_variable(axis)
    if axis.ndim != 0 or axis.dtype not in INT_DTYPES:
        raise TypeError(f"{what}: the axis must be an integer scalar, got {axis} ({axis.type})")
    return axis


def _runtime_axis(value, ndim: int, what: str) -> int:
    """The value of a symbolic axis at run time, in [0, ndim) (else a ValueError)."""
    axis = int(value)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of range for {ndim}-d inputs (it must be "
                         f"in [{-ndim}, {ndim - 1}])")
    return axis % ndim


def _nonnegative_axis(axis, ndim: int):
    """A symbolic axis with negative values counted from the end (``axis % ndim`` in range)."""
    return switch(lt(axis, 0), add(axis, ndim), axis)


def concatenate(tensors, axis=0) -> Variable:
    """numpy's ``concatenate``: ``tensors`` joined along an existing ``axis``, dtypes upcast.

    ``axis`` is an int, or an integer scalar variable known only when the function runs (then
    an axis out of range is a ValueError at run time). One tensor is returned as it is.
    """
    if isinstance(tensors, Variable) or not isinstance(tensors, (list, tuple)):
        raise TypeError("concatenate takes a list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("concatenate needs at least one tensor")
    ndim = tensors[0].ndim
    if ndim == 0:
        raise ZeroDimJoinError("concatenate: zero-dimensional tensors cannot be concatenated; "
                               "use stack() to make a vector of scalars")
    known = _constant_axis(axis, "concatenate")
    if known is not None:
        axis = normalize_axis(known, ndim, "concatenate axis")
    else:
        axis = _symbolic_axis(axis, "concatenate")
    dtype = upcast(*[t.dtype for t in tensors])
    tensors = _cast_all(tensors, dtype)
    if len(tensors) == 1:
        return tensors[0]
    if known is None:
        return Join()(axis, *tensors)
    return Join(axis)(*tensors)


def join(axis: int, *tensors) -> Variable:
    """PyTensor's spelling of ``concatenate(tensors, axis)``."""
    return concatenate(list(tensors), axis=axis)


def stack(tensors, axis: int = 0) -> Variable:
    """numpy's ``stack``: tensors of one shape joined along a new ``axis``, dtypes upcast."""
    if isinstance(tensors, Variable) or not isinstance(tensors, (list, tuple)):
        raise TypeError("stack: First argument should be a Sequence (a list or tuple of "
                        f"tensors), got {type(tensors).__name__}")
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("stack: No tensor arguments provided; it needs at least one tensor")
    ndim = tensors[0].ndim
    for i, t in enumerate(tensors):
        if t.ndim != ndim:
            raise ValueError(f"stack: all tensors must have the same shape; tensor 0 has "
                             f"{ndim} dimensions, tensor {i} ({t}) has {t.ndim}")
    axis = normalize_axis(axis, ndim + 1, "stack axis")
    if ndim == 0:
        return make_vector(*tensors)
    return concatenate([expand_dims(t, axis) for t in tensors], axis=axis)


def hstack(tensors) -> Variable:
    """numpy's ``hstack``: along axis 1, or axis 0 for vectors."""
    tensors = [as_tensor_variable(t) for t in tensors]
    tensors = [shape_padleft(t) if t.ndim == 0 else t for t in tensors]
    return concatenate(tensors, axis=0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Variable:
    """numpy's ``vstack``: along axis 0, vectors and scalars becoming rows."""
    tensors = [as_tensor_variable(t) for t in tensors]
    tensors = [shape_padleft(t, 2 - t.ndim) if t.ndim < 2 else t for t in tensors]
    return concatenate(tensors, axis=0)


# ----------------------------------------------------------------------------------------------
# Split


class Split(Op):
    """``n_splits`` consecutive pieces of ``x`` along ``axis``, of sizes given by an int vector.

    The pieces are views of ``x``. ``Split(n, axis)(x, sizes)`` has the axis fixed when the
    graph is built; ``Split(n)(x, axis, sizes)`` (PyTensor's form) takes it as an input: a
    constant gives the ``Split(n, axis)`` node, a symbolic integer scalar a node whose second
    input is the axis, checked against ``x.ndim`` when the function runs.
    """

    __props__ = ("n_splits", "axis")

    def __init__(self, n_splits: int | None = None, axis: int | None = None, *,
                 len_splits: int | None = None):
        if (n_splits is None) == (len_splits is None):
            raise TypeError("Split takes the number of pieces, as n_splits or len_splits")
        self.n_splits = int(n_splits if n_splits is not None else len_splits)
        self.axis = None if axis is None else int(axis)
        self.view_map = {i: [0] for i in range(self.n_splits)}

    def make_node(self, x, *rest):
        if self.axis is None:
            if len(rest) != 2:
                raise TypeError("Split(n)(x, axis, sizes) takes the axis and the sizes")
            known = _constant_axis(rest[0], "Split")
            if known is not None:
                return Split(self.n_splits, known).make_node(x, rest[1])
            return self._symbolic_node(x, _symbolic_axis(rest[0], "Split"), rest[1])
        if len(rest) != 1:
            raise TypeError(f"{self}(x, sizes) takes the split sizes")
        (sizes,) = rest
        x = as_tensor_variable(x)
        op = with_props(self, axis=normalize_axis(self.axis, x.ndim, str(self)))
        if op is not self:
            return op.make_node(x, sizes)
        sizes, known = self._checked_sizes(sizes)
        total = x.type.shape[self.axis]
        if None not in known:
            if any(k < 0 for k in known):
                raise ValueError(f"{self}: split sizes {known} must be non-negative")
            if total is not None and sum(known) != total:
                raise ValueError(f"{self}: split sizes {known} add up to {sum(known)}, but "
                                 f"dimension {self.axis} of {x} has size {total}")
        outputs = []
        for k in known:
            static = list(x.type.shape)
            static[self.axis] = k
            outputs.append(TensorType(x.dtype, tuple(static))())
        return Apply(self, [x, sizes], outputs)

    def _checked_sizes(self, sizes):
        """The sizes as an integer vector of n_splits entries, and those known as constants."""
        sizes = as_tensor_variable(sizes)
        if sizes.ndim != 1 or sizes.dtype not in INT_DTYPES:
            raise TypeError(f"{self}: split sizes must be an integer vector, got {sizes} "
                            f"({sizes.type})")
        if sizes.type.shape[0] not in (None, self.n_splits):
            raise ValueError(f"{self}: {self.n_splits} splits but {sizes.type.shape[0]} sizes")
        known = (_static_entries(sizes) if sizes.type.shape[0] is not None
                 else [None] * self.n_splits)
        return sizes, known

    def _symbolic_node(self, x, axis, sizes):
        """The node of an axis known only at run time: a dimension of a piece is static when
        it is the same whether or not it is the split one."""
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise TypeError(f"{self}: cannot split the zero-dimensional {x}")
        sizes, known = self._checked_sizes(sizes)
        outputs = []
        for k in known:
            static = [k if x.ndim == 1 or size == k else None for size in x.type.shape]
            outputs.append(TensorType(x.dtype, tuple(static))())
        return Apply(self, [x, axis, sizes], outputs)

    def perform(self, node, inputs, output_storage):
        if self.axis is None:
            x, axis, sizes = inputs
            axis = _runtime_axis(axis, x.ndim, "split")
        else:
            (x, sizes), axis = inputs, self.axis
        sizes = [int(s) for s in sizes]
        if len(sizes) != self.n_splits:
            raise ValueError(f"split: expected {self.n_splits} sizes, got {len(sizes)}")
        if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
            raise ValueError(f"split: sizes {sizes} (sum {sum(sizes)}) do not divide dimension "
                             f"{axis} of size {x.shape[axis]} (input shape {x.shape})")
        pieces = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
        for cell, piece in zip(output_storage, pieces):
            cell[0] = piece

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, sizes = input_shapes[0], node.inputs[-1]
        out = []
        for i, o in enumerate(node.outputs):
            shape = []
            for d, size in enumerate(x_shape):
                if o.type.shape[d] is not None:
                    shape.append(o.type.shape[d])
                elif self.axis is None:
                    axis = _nonnegative_axis(node.inputs[1], len(x_shape))
                    shape.append(switch(eq(axis, d), getitem(sizes, i), size))
                else:
                    shape.append(getitem(sizes, i) if d == self.axis else size)
            out.append(tuple(shape))
        return out

    def connection_pattern(self, node):
        return [[True] * self.n_splits] + [[False] * self.n_splits] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        x = inputs[0]
        rest = [_disconnected() for _ in inputs[1:]]
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x), *rest]
        if self.n_splits == 1:
            return [output_grads[0], *rest]
        if self.axis is None:
            return [Join()(inputs[1], *output_grads), *rest]
        return [Join(self.axis)(*output_grads), *rest]


def split(x, splits_size, n_splits: int | None = None, axis=0):
    """``x`` cut along ``axis`` into pieces of the sizes ``splits_size`` (list of ints or
    integer scalars, or an int vector; ``n_splits`` is needed when its length is unknown).
    ``axis`` is an int or an integer scalar variable known only when the function runs."""
    x = as_tensor_variable(x)
    known = _constant_axis(axis, "split")
    if known is not None:
        axis = normalize_axis(known, x.ndim, "split axis")
    else:
        axis = _symbolic_axis(axis, "split")
    if isinstance(splits_size, Variable) and splits_size.ndim == 1:
        sizes = splits_size
        length = sizes.type.shape[0]
        if n_splits is None:
            if length is None:
                raise ValueError(f"split: the number of pieces of {sizes} is unknown; pass "
                                 "n_splits")
            n_splits = length
    else:
        entries = as_shape_scalars(splits_size, "split size")
        if n_splits is not None and n_splits != len(entries):
            raise ValueError(f"split: n_splits={n_splits} but {len(entries)} sizes were given")
        n_splits = len(entries)
        sizes = make_vector(*entries, dtype="int64")
    if isinstance(n_splits, bool) or not isinstance(n_splits, numbers.Integral) or n_splits < 1:
        raise ValueError(f"split: n_splits must be a positive int, got {n_splits!r}")
    if known is None:
        pieces = Split(n_splits)(x, axis, sizes)
    else:
        pieces = Split(n_splits, axis)(x, sizes)
    return pieces if isinstance(pieces, list) else [pieces]
