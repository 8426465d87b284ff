"""Shape ops: ``shape``, ``Shape_i``, ``reshape``, ``flatten``, ``squeeze``, ``expand_dims``,
``specify_shape``, ``transpose`` and the left/right padding helpers.

Shapes are int64. Wherever a shape is an argument it may be a Python int, a 0-d integer
variable, a sequence mixing both, or a symbolic int vector of known length (``x.shape``). Static
sizes are carried into the output types whenever they are known when the graph is built, so
that ``reshape(x, (2, -1))`` of a float (2, 3) tensor is typed (2, 3), not (?, ?).
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.op import Op
from tensorgraph.raise_op import assert_op
from tensorgraph.tensor import math
from tensorgraph.tensor.basic import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
)
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.type import DISCRETE_DTYPES, INT_DTYPES, TensorType

__all__ = [
    "Shape", "Shape_i", "Reshape", "SpecifyShape", "shape", "shape_i", "reshape", "flatten",
    "squeeze", "expand_dims", "specify_shape", "shape_padleft", "shape_padright", "transpose",
    "get_vector_length", "shape_tuple", "specify_broadcastable",
]

_INT64 = "int64"


def _disconnected():
    from tensorgraph.gradient import disconnected_type

    return disconnected_type()


def _float_zeros_like(x):
    """The gradient of an integer input: zeros of ``config.floatX`` (the Elemwise convention)."""
    from tensorgraph.tensor.creation import zeros_like

    return zeros_like(x, dtype=config.floatX)


# ----------------------------------------------------------------------------------------------
# Helpers shared by the shape-taking functions of this package


class AxisError(np.exceptions.AxisError):
    """An axis out of range for a tensor's dimensions: numpy's ``AxisError`` (so code catching
    it, or ``ValueError`` / ``IndexError`` as numpy users do, works) with tensorgraph's
    message, which also says what was being done and the valid range."""

    def __init__(self, message: str):
        super().__init__(message)   # numpy's one-argument form: the message as given

    def __str__(self) -> str:
        return self.args[0]


def normalize_axis(axis, ndim: int, what: str = "axis") -> int:
    """``axis`` (may be negative, numpy's way) as an index into ``ndim`` dimensions.

    The one rule every function and Op taking an axis follows: ``-ndim <= axis < ndim``, else
    an ``AxisError`` naming ``what``, the axis and the valid range."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (numbers.Integral,)):
        raise TypeError(f"{what} must be an int, got {type(axis).__name__}: {axis!r}")
    axis = int(axis)
    if not -ndim <= axis < ndim:
        # numpy's wording (ported tests match it), then the valid range
        raise AxisError(f"{what}: axis {axis} is out of bounds for array of dimension {ndim} "
                        f"(out of range; valid: {-ndim}..{ndim - 1})" if ndim else
                        f"{what}: axis {axis} is out of bounds for array of dimension 0: a 0-d "
                        "tensor has no axes (use axis=None where allowed)")
    return axis % ndim


def scalar_axes(axes, what: str) -> list[int]:
    """The axes of a 0-d tensor, numpy's way: ``np.sum(np.float64(5), axis=-1)`` and
    ``np.squeeze(a0d, axis=0)`` work, because numpy lets axis 0 or -1 name a 0-d array
    itself (code written for "the last axis" then runs on scalars too). Such axes name no
    dimension, so the result is ``[]``; any other axis is an ``AxisError`` naming them all."""
    bad = [a for a in axes if not isinstance(a, (bool, np.bool_))
           and isinstance(a, numbers.Integral) and int(a) not in (0, -1)]
    if bad or any(not isinstance(a, numbers.Integral) or isinstance(a, (bool, np.bool_))
                  for a in axes):
        if not bad:
            raise TypeError(f"{what} must be ints, got {tuple(axes)!r}")
        raise AxisError(f"{what}: axis {tuple(int(a) for a in axes)!r} is out of bounds for "
                        "array of dimension 0: a 0-d tensor takes only axis 0 or -1 (itself, "
                        "as in numpy) or None")
    return []


def with_props(op, **props):
    """``op`` itself when its props already have these values, else a copy that has them (an
    Op whose axis was given negative makes its node with the normalized copy, so equal
    computations compare equal and the C sees one axis numbering)."""
    if all(getattr(op, name) == value for name, value in props.items()):
        return op
    new = copy.copy(op)
    new.__dict__.update(props)
    return new


def as_int_scalar(value, what: str = "size") -> Variable:
    """A 0-d int64 variable from a Python int, a numpy integer or a 0-d integer variable."""
    if isinstance(value, Variable):
        var = as_tensor_variable(value)
        if var.ndim != 0 or var.dtype not in DISCRETE_DTYPES or var.dtype == "bool":
            raise TypeError(f"{what} must be an integer scalar, got {var} ({var.type})")
        if var.dtype != _INT64:
            from tensorgraph.tensor.math import cast

            var = cast(var, _INT64)
        return var
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.name in INT_DTYPES:
            return constant(int(value), dtype=_INT64)
        raise TypeError(f"{what} must be an int or an integer scalar variable (sizes must be "
                        f"integer types), got {type(value).__name__}: {value!r}")
    return constant(int(value), dtype=_INT64)


def constant_int(var) -> int | None:
    """The value of a 0-d integer variable when it is known at build time, else ``None``."""
    if isinstance(var, Constant) and np.ndim(var.data) == 0:
        return int(var.data)
    if var.owner is not None and isinstance(var.owner.op, Shape_i):
        size = var.owner.inputs[0].type.shape[var.owner.op.i]
        return size
    if var.owner is not None and getattr(var.type, "ndim", None) == 0:
        # arithmetic of known values (``100 // n`` with n a constant, a cast of a static
        # size): the static shapes of reshape, alloc, specify_shape know it, as PyTensor's do

        try:
            value = get_underlying_scalar_constant_value(var)
        except NotScalarConstantError:
            return None
        if value is not None and np.asarray(value).dtype.kind in "iu":
            return int(value)
    return None


def as_shape_scalars(shape, what: str = "shape") -> list[Variable]:
    """One 0-d int64 variable per dimension of ``shape``.

    ``shape`` is an int, a sequence of ints / integer scalars, or an integer vector variable of
    known length; ``x.shape`` gives ``Shape_i(i)(x)`` (its static size known to ``constant_int``).
    """
    if isinstance(shape, (Variable, np.ndarray)) and shape.ndim == 0:
        return [as_int_scalar(shape, what)]
    if isinstance(shape, Variable) or isinstance(shape, np.ndarray):
        vec = as_tensor_variable(shape)
        if vec.ndim == 1 and vec.type.shape[0] == 0:
            return []          # no sizes (a 0-d result), whatever dtype the empty vector has
        if vec.ndim != 1 or vec.dtype not in DISCRETE_DTYPES or vec.dtype == "bool":
            raise TypeError(f"{what} must be an integer vector, got {vec} ({vec.type})")
        owner = vec.owner
        if owner is not None and isinstance(owner.op, Shape):
            # Shape_i nodes even where a size is static (their static value is known to
            # constant_int, and the compiled graph folds them): a graph rebuilt for another
            # x (clone_replace(..., rebuild_strict=False)) then follows the new x's sizes
            x = owner.inputs[0]
            return [Shape_i(i)(x) for i in range(x.ndim)]
        from tensorgraph.tensor.join import MakeVector

        if owner is not None and isinstance(owner.op, MakeVector):
            return [as_int_scalar(v, what) for v in owner.inputs]
        if isinstance(vec, Constant):
            return [constant(int(v), dtype=_INT64) for v in vec.data]
        length = vec.type.shape[0]
        if length is None:
            raise ValueError(f"{what} {vec} is a vector of unknown length. Use specify_shape to "
                             "set the length (specify_shape(v, (n,))), or give ndim=...")
        from tensorgraph.tensor.subtensor import getitem

        return [as_int_scalar(getitem(vec, i), what) for i in range(length)]
    if isinstance(shape, (list, tuple)):
        return [as_int_scalar(s, f"{what}[{i}]") for i, s in enumerate(shape)]
    return [as_int_scalar(shape, what)]


def _static_entries(vec: Variable) -> list:
    """The build-time known entries (int or None) of an int vector of known length."""
    length = vec.type.shape[0]
    if isinstance(vec, Constant):
        return [int(v) for v in vec.data]
    owner = vec.owner
    if owner is not None:
        from tensorgraph.tensor.join import MakeVector

        if isinstance(owner.op, MakeVector):
            return [constant_int(v) for v in owner.inputs]
        if isinstance(owner.op, Shape):
            return list(owner.inputs[0].type.shape)
    return [None] * (length or 0)


# ----------------------------------------------------------------------------------------------
# Shape and Shape_i


class Shape(Op):
    """The shape of a tensor as an int64 vector (``x.shape``)."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType(_INT64, (x.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype=_INT64)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(node.inputs[0].ndim,)]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


class Shape_i(Op):
    """The size of dimension ``i`` of a tensor, as an int64 scalar."""

    __props__ = ("i",)

    def __init__(self, i: int):
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral) or i < 0:
            raise TypeError(f"Shape_i needs a non-negative int dimension, got {i!r}")
        self.i = int(i)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.i >= x.ndim:
            raise IndexError(f"Shape_i({self.i}): {x} has only {x.ndim} dimensions")
        return Apply(self, [x], [TensorType(_INT64, ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype=_INT64)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


_shape = Shape()


def shape(x) -> Variable:
    """The symbolic shape vector of ``x`` (int64, length ``x.ndim``)."""
    return _shape(as_tensor_variable(x))


def shape_i(x, i: int) -> Variable:
    """The size of dimension ``i`` of ``x``: a constant when it is static, else ``Shape_i``."""
    x = as_tensor_variable(x)
    i = normalize_axis(i, x.ndim, "dimension")
    if x.type.shape[i] is not None:
        return constant(x.type.shape[i], dtype=_INT64)
    return Shape_i(i)(x)


def shape_tuple(x) -> tuple:
    """The shape of ``x`` as a tuple of 0-d int64 variables (constants where sizes are static)."""
    x = as_tensor_variable(x)
    return tuple(shape_i(x, d) for d in range(x.ndim))


def get_vector_length(v) -> int:
    """The length of the 1-d tensor ``v`` when it is known while the graph is built (a static
    size, ``x.shape``, a vector made of scalars, a constant); else a ValueError."""
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError(f"get_vector_length: {v} is {v.ndim}-d, not a vector")
    if v.type.shape[0] is not None:
        return v.type.shape[0]
    owner = v.owner
    if owner is not None:
        from tensorgraph.tensor.join import MakeVector

        if isinstance(owner.op, MakeVector):
            return len(owner.inputs)
        if isinstance(owner.op, Shape):
            return owner.inputs[0].ndim
    raise ValueError(f"Length of {v} ({v.type}) is not known before it is computed "
                     "(get_vector_length); give it with specify_shape(v, (n,))")


# ----------------------------------------------------------------------------------------------
# SpecifyShape


class SpecifyShape(Op):
    """``x`` itself, with sizes asserted at run time and recorded in the output's static type.

    ``checked`` lists the dimensions given a size; each has one int64 scalar input after ``x``.
    """

    __props__ = ("checked",)
    _output_type_depends_on_input_value = True   # static sizes from known values
    view_map = {0: [0]}

    def __init__(self, checked=None):
        self.checked = None if checked is None else tuple(int(d) for d in checked)

    def make_node(self, x, *sizes):
        if self.checked is None:
            # PyTensor's form, SpecifyShape()(x, *shape): one entry per dimension, None for
            # "any"; the node is that of the dimensions given
            out = specify_shape(x, list(sizes))
            return out.owner if out.owner is not None and isinstance(
                out.owner.op, SpecifyShape) else SpecifyShape(())(x).owner
        x = as_tensor_variable(x)
        if len(sizes) != len(self.checked):
            raise TypeError(f"{self} expects {len(self.checked)} sizes, got {len(sizes)}")
        if self.checked and max(self.checked) >= x.ndim:
            raise TypeError(f"{self}: {x} has only {x.ndim} dimensions")
        sizes = [as_int_scalar(s, "specify_shape size") for s in sizes]
        static = list(x.type.shape)
        for d, s in zip(self.checked, sizes):
            value = constant_int(s)
            if value is None:
                continue
            if value < 0:
                raise ValueError(f"specify_shape: size {value} of dimension {d} is negative")
            if static[d] is not None and static[d] != value:
                raise ValueError(f"specify_shape: {x} has static shape {x.type.shape}, which "
                                 f"contradicts size {value} for dimension {d}")
            static[d] = value
        return Apply(self, [x, *sizes], [TensorType(x.dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        x, *sizes = inputs
        if x.ndim != len(node.outputs[0].type.shape):
            raise AssertionError(f"specify_shape: expected {node.outputs[0].type.ndim} "
                                 f"dimensions, got an array of shape {x.shape}")
        for d, size in zip(self.checked, sizes):
            if x.shape[d] != size:
                expected = tuple("?" if i not in self.checked else
                                 int(sizes[self.checked.index(i)]) for i in range(x.ndim))
                raise AssertionError(f"SpecifyShape: dimension {d} has size {x.shape[d]}, "
                                     f"expected {int(size)} (expected shape {expected}, got "
                                     f"{x.shape})")
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        out = list(input_shapes[0])
        for d, size in zip(self.checked, node.inputs[1:]):
            out[d] = size
        return [tuple(out)]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * len(self.checked)

    def L_op(self, inputs, outputs, output_grads):
        x, *sizes = inputs
        if x.dtype in DISCRETE_DTYPES:
            gx = _float_zeros_like(x)
        else:
            # the gradient has x's shape, so it carries the same sizes (static ones included)
            gx = SpecifyShape(self.checked)(output_grads[0], *sizes)
        return [gx] + [_disconnected() for _ in self.checked]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [SpecifyShape(self.checked)(eval_points[0], *inputs[1:])]


def specify_shape(x, shape) -> Variable:
    """``x`` with the given sizes (int, integer scalar or None for "any"; one ``...`` stands
    for the sizes not given) asserted at run time.

    The output's static type records every size known at build time; when that adds nothing to
    ``x``'s type, ``x`` itself is returned.
    """
    x = as_tensor_variable(x)
    if isinstance(shape, Variable) or isinstance(shape, np.ndarray):
        entries = as_shape_scalars(shape, "specify_shape shape")
    else:
        entries = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if any(e is Ellipsis for e in entries):   # ``...`` stands for the unspecified sizes
            if sum(e is Ellipsis for e in entries) > 1:
                raise ValueError("Multiple Ellipsis in specify_shape: the shape may hold one "
                                 "Ellipsis (...)")
            k = next(i for i, e in enumerate(entries) if e is Ellipsis)
            fill = max(x.ndim - (len(entries) - 1), 0)
            entries = entries[:k] + [None] * fill + entries[k + 1:]
    if len(entries) != x.ndim:
        raise ValueError(f"specify_shape: {x} has {x.ndim} dimensions but the shape "
                         f"{tuple(entries)} has {len(entries)} entries; it will never match")
    checked, sizes = [], []
    for d, s in enumerate(entries):
        if s is None:
            continue
        s = as_int_scalar(s, f"specify_shape size of dimension {d}")
        value = constant_int(s)
        if value is not None and value == x.type.shape[d]:
            continue
        checked.append(d)
        sizes.append(s)
    if not checked:
        return x
    return SpecifyShape(checked)(x, *sizes)


def specify_broadcastable(x, *axes) -> Variable:
    """``x`` with the dimensions ``axes`` asserted (at run time) to have size 1, so that they
    broadcast in elementwise operations."""
    x = as_tensor_variable(x)
    if not axes:
        return x
    wanted = {normalize_axis(a, x.ndim, "specify_broadcastable") for a in axes}
    return specify_shape(x, [1 if d in wanted else None for d in range(x.ndim)])


# ----------------------------------------------------------------------------------------------
# Reshape


class Reshape(Op):
    """``x`` reshaped to ``ndim`` dimensions given by an int64 vector (one entry may be -1).

    The output is a view of ``x`` when numpy can make one.
    """

    __props__ = ("ndim",)
    _output_type_depends_on_input_value = True   # static sizes from known values
    view_map = {0: [0]}

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def make_node(self, x, shp):
        x = as_tensor_variable(x)
        shp = as_tensor_variable(shp)
        if shp.ndim != 1 or shp.dtype not in INT_DTYPES:
            raise TypeError(f"reshape: the shape must be an integer vector, got {shp} ({shp.type})")
        if shp.type.shape[0] not in (None, self.ndim):
            raise TypeError(f"reshape: the shape {shp} has {shp.type.shape[0]} entries but "
                            f"ndim={self.ndim}")
        if shp.dtype != _INT64:
            from tensorgraph.tensor.math import cast

            shp = cast(shp, _INT64)
        static = _reshape_static(x, _static_entries(shp) if shp.type.shape[0] is not None
                                 else [None] * self.ndim)
        return Apply(self, [x, shp], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, shp = inputs
        if len(shp) != self.ndim:
            raise ValueError(f"reshape: got a shape with {len(shp)} entries, expected {self.ndim}")
        requested = tuple(int(s) for s in shp)
        if sum(s == -1 for s in requested) > 1 or any(s < -1 for s in requested):
            raise ValueError(f"reshape: invalid shape {requested}: sizes must be >= 0, with at "
                             "most one -1")
        try:
            output_storage[0][0] = np.reshape(x, requested)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} (size "
                             f"{x.size}) into shape {requested}") from None

    def infer_shape(self, fgraph, node, input_shapes):
        from tensorgraph.tensor.subtensor import getitem

        x, shp = node.inputs
        static = node.outputs[0].type.shape
        if all(s is not None for s in static):
            return [static]
        entries = [getitem(shp, i) for i in range(self.ndim)]
        size = math.mul(*input_shapes[0]) if input_shapes[0] else constant(1, dtype=_INT64)
        # with one -1 entry, the product of all entries is minus the product of the others
        others = math.neg(math.mul(*entries))
        out = []
        for i, s in enumerate(static):
            if s is not None:
                out.append(s)
            else:
                missing = math.int_div(size, others)
                out.append(math.switch(math.eq(entries[i], -1), missing, entries[i]))
        return [tuple(out)]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, _ = inputs
        if x.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(x), _disconnected()]
        return [reshape(output_grads[0], shape(x), ndim=x.ndim), _disconnected()]


def _reshape_static(x, entries) -> tuple:
    """The static output shape of reshaping ``x`` to ``entries`` (ints, -1 or None)."""
    requested = tuple(entries)
    known = [e for e in entries if e is not None]
    if sum(e == -1 for e in known) > 1 or any(e < -1 for e in known):
        raise ValueError(f"reshape: invalid shape {requested}: sizes must be >= 0, with at "
                         "most one -1")
    size = int(np.prod(x.type.shape)) if all(s is not None for s in x.type.shape) else None
    out = [None if e is None or e == -1 else e for e in entries]
    unresolved = [i for i, e in enumerate(out) if e is None]
    if size is None:
        return tuple(out)
    rest = int(np.prod([e for e in out if e is not None]))
    if not unresolved:
        if rest != size:
            raise ValueError(f"Reshape: Input shape {x.type.shape} is incompatible with new "
                             f"shape {requested}: cannot reshape {x} (size {size})")
    elif len(unresolved) == 1 and rest != 0:
        if size % rest:
            raise ValueError(f"reshape: cannot reshape {x} of static shape {x.type.shape} (size "
                             f"{size}) into shape {requested}")
        out[unresolved[0]] = size // rest
    return tuple(out)


def reshape(x, newshape, ndim: int | None = None) -> Variable:
    """``x`` with shape ``newshape`` (ints, integer scalars or an integer vector; one -1 entry
    is inferred). ``ndim`` is needed only for a symbolic vector of unknown length."""
    x = as_tensor_variable(x)
    if isinstance(newshape, Variable) and newshape.ndim == 1:
        vec = as_tensor_variable(newshape)
        length = vec.type.shape[0]
        if length is None and ndim is None:
            raise ValueError(f"reshape: the length of the shape vector {vec} is unknown; pass "
                             "ndim=... (the number of output dimensions)")
        if length is not None and ndim is not None and length != ndim:
            raise ValueError(f"reshape: ndim={ndim} but the shape vector {vec} has {length} "
                             "entries")
        return Reshape(ndim if ndim is not None else length)(x, vec)
    entries = as_shape_scalars(newshape, "reshape shape")
    if ndim is not None and ndim != len(entries):
        raise ValueError(f"reshape: ndim={ndim} but the shape has {len(entries)} entries")
    from tensorgraph.tensor.join import make_vector

    return Reshape(len(entries))(x, make_vector(*entries, dtype=_INT64))


def flatten(x, ndim: int = 1) -> Variable:
    """``x`` with its last dimensions merged so that ``ndim`` remain (1: a vector)."""
    x = as_tensor_variable(x)
    if isinstance(ndim, bool) or not isinstance(ndim, numbers.Integral) or not (
            1 <= ndim <= max(x.ndim, 1)):
        raise ValueError(f"flatten: ndim must be between 1 and {max(x.ndim, 1)} for {x} "
                         f"({x.ndim}-d), got {ndim!r}")
    if ndim == x.ndim:
        return x

    kept = [shape_i(x, i) for i in range(ndim - 1)]
    merged = [shape_i(x, i) for i in range(ndim - 1, x.ndim)]
    static = [constant_int(s) for s in merged]
    if all(s is not None for s in static):
        last = constant(int(np.prod(static, dtype=np.int64)), dtype=_INT64)
    else:
        last = math.mul(*merged)
    return reshape(x, kept + [last])


# ----------------------------------------------------------------------------------------------
# Dimension shuffles: squeeze, expand_dims, padding, transpose


def _axes(axis, ndim: int, what: str) -> list[int]:
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if ndim == 0:
        return scalar_axes(axes, what)
    normalized = [normalize_axis(a, ndim, what) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{what} {tuple(axes)} repeats an axis")
    return normalized


def squeeze(x, axis=None) -> Variable:
    """``x`` without size-1 dimensions.

    With ``axis=None`` the dimensions whose static size is 1 are removed (others are unknown
    until run time). Named axes of unknown size are checked to be 1 at run time.
    """
    x = as_tensor_variable(x)
    if axis is None:
        axes = [d for d, s in enumerate(x.type.shape) if s == 1]
    else:
        axes = _axes(axis, x.ndim, "squeeze axis")
    if not axes:
        return x
    for d in axes:
        if x.type.shape[d] not in (None, 1):
            raise ValueError(f"squeeze: dimension {d} of {x} has size {x.type.shape[d]}, not 1")
    unknown = [d for d in axes if x.type.shape[d] is None]
    if unknown:
        # a size that is not 1 is a ValueError (numpy's and PyTensor's), in every back end

        ones = [math.eq(shape_i(x, d), 1) for d in unknown]
        x = assert_op(x, *ones, msg=f"squeeze: dimension{'s' if len(unknown) > 1 else ''} "
                      f"{', '.join(map(str, unknown))} of {x} must have size 1",
                      error="ValueError")
        x = specify_shape(x, [1 if d in unknown else None for d in range(x.ndim)])
    return DimShuffle(x.ndim, [d for d in range(x.ndim) if d not in axes])(x)


def expand_dims(x, axis) -> Variable:
    """``x`` with new size-1 dimensions at ``axis`` (positions in the output, as in numpy)."""
    x = as_tensor_variable(x)
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out_ndim = x.ndim + len(axes)
    new = set(_axes(axes, out_ndim, "expand_dims axis"))
    order, src = [], iter(range(x.ndim))
    for d in range(out_ndim):
        order.append("x" if d in new else next(src))
    return DimShuffle(x.ndim, order)(x)


def shape_padleft(x, n_ones: int = 1) -> Variable:
    """``x`` with ``n_ones`` size-1 dimensions added in front."""
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, ["x"] * n_ones + list(range(x.ndim)))(x)


def shape_padright(x, n_ones: int = 1) -> Variable:
    """``x`` with ``n_ones`` size-1 dimensions added at the end."""
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, list(range(x.ndim)) + ["x"] * n_ones)(x)


def transpose(x, axes=None) -> Variable:
    """``x`` with its dimensions permuted (reversed when ``axes`` is None), as numpy.

    An order that moves nothing (a vector's transpose) gives ``x`` itself, no node; the
    reversed transpose of a named ``x`` is named ``x.T`` (as PyTensor, for readable prints)."""
    x = as_tensor_variable(x)
    if axes is None:
        normalized = list(reversed(range(x.ndim)))
    else:
        normalized = _axes(axes, x.ndim, "transpose axis")
        if len(normalized) != x.ndim:
            raise ValueError(f"transpose: axes {tuple(axes)} do not match the {x.ndim} "
                             f"dimensions of {x}")
    if list(normalized) == list(range(x.ndim)):
        return x
    out = DimShuffle(x.ndim, normalized)(x)
    if axes is None and x.name:
        out.name = f"{x.name}.T"
    return out
