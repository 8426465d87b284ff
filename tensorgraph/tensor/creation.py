"""Creating tensors: ``alloc``, ``zeros``/``ones``/``full`` and their ``*_like`` forms,
``arange``, ``eye``, ``identity_like``, ``tri``, ``tril`` and ``triu``.

Shapes may be Python ints, integer scalars or an integer vector (``zeros(x.shape)``); sizes
known when the graph is built become static sizes of the result. Dtypes default to
``config.floatX`` (``zeros``, ``ones``, ``eye``), to the input's dtype (``*_like``) or follow
numpy's rule (``arange``: integers give int64).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.op import Op
from tensorgraph.scalar.basic import upcast
from tensorgraph.tensor import math
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.math import cast, sub, switch
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import (
    _disconnected,
    _float_zeros_like,
    as_int_scalar,
    as_shape_scalars,
    constant_int,
    shape_i,
)
from tensorgraph.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    IncSubtensor,
)
from tensorgraph.tensor.type import DISCRETE_DTYPES, TensorType, normalize_dtype

__all__ = [
    "Alloc", "ARange", "Eye", "Tri", "alloc", "zeros", "ones", "full", "empty", "zeros_like",
    "ones_like", "full_like", "arange", "eye", "identity_like", "tri", "tril", "triu",
]

#: Alloc results larger than this many elements are not constant-folded (they would be stored
#: in the compiled graph; filling them at run time is as fast).
_FOLD_LIMIT = 10_000


def _dtype_or_floatx(dtype) -> str:
    return normalize_dtype("floatX" if dtype is None else dtype)


# ----------------------------------------------------------------------------------------------
# Alloc


def check_alloc(value_type, value, shape: tuple) -> None:
    """``value`` fills ``shape`` (broadcasting only along dimensions its type declares of size
    1), or ValueError; every back end's Alloc checks with this one rule and message."""
    offset = len(shape) - np.ndim(value)
    for d, vsize in enumerate(np.shape(value)):
        size = shape[d + offset]
        if vsize != size and not (vsize == 1 and value_type.shape[d] == 1):
            detail = ("its type does not declare the dimension broadcastable (size 1)"
                      if vsize == 1 else "the sizes differ")
            why = "Runtime broadcasting not allowed: " if vsize == 1 else ""
            raise ValueError(f"alloc: {why}cannot fill shape {shape} with a value of shape "
                             f"{tuple(np.shape(value))}: dimension {d} of the value has size "
                             f"{vsize}, the target {size} ({detail})")


class Alloc(Op):
    """A new array of a given shape filled with ``value`` broadcast to it (numpy rules, with
    only static size-1 dimensions of ``value`` broadcast, as in ``Elemwise``)."""

    __props__ = ()
    _output_type_depends_on_input_value = True   # static sizes from known values

    def make_node(self, value, *shape):
        value = as_tensor_variable(value)
        sizes = [as_int_scalar(s, f"alloc size {i}") for i, s in enumerate(shape)]
        ndim = len(sizes)
        if value.ndim > ndim:
            raise ValueError(f"alloc: the value {value} has {value.ndim} dimensions, more than "
                             f"the {ndim} of the requested shape")
        offset = ndim - value.ndim
        static = []
        for d, s in enumerate(sizes):
            size = constant_int(s)
            vsize = value.type.shape[d - offset] if d >= offset else 1
            if size is not None and size < 0:
                raise ValueError(f"alloc: size {size} of dimension {d} is negative")
            if vsize not in (None, 1) and size is not None and size != vsize:
                raise ValueError(f"alloc: Alloc static input type and target shape are "
                                 f"incompatible: the value {value} (static shape "
                                 f"{value.type.shape}) cannot be broadcast to size {size} in "
                                 f"dimension {d}")
            static.append(size if size is not None else (vsize if vsize != 1 else None))
        return Apply(self, [value, *sizes], [TensorType(value.dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        value, *sizes = inputs
        shape = tuple(int(s) for s in sizes)
        check_alloc(node.inputs[0].type, value, shape)
        out = np.empty(shape, dtype=node.outputs[0].type.dtype)
        out[...] = value
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        static = node.outputs[0].type.shape
        return [tuple(s if s is not None else v for s, v in zip(static, node.inputs[1:]))]

    def do_constant_folding(self, fgraph, node) -> bool:
        """Fold small allocs of static shape, except where a constant would only be copied:
        a graph output (a constant output is copied on every call) and the array an
        inc/set-subtensor writes into (it could fill a fresh alloc in place, but must copy a
        constant first)."""
        static = node.outputs[0].type.shape
        if None in static or int(np.prod(static)) > _FOLD_LIMIT:
            return False

        writers = (IncSubtensor, AdvancedIncSubtensor1, AdvancedIncSubtensor)
        for client, i in fgraph.clients.get(node.outputs[0], ()):
            if client == "output" or (i == 0 and isinstance(client.op, writers)):
                return False
        return True

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        value, *sizes = inputs
        rest = [_disconnected() for _ in sizes]
        if value.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(value)] + rest
        return [_sum_to_value(output_grads[0], value, outputs[0])] + rest


def _sum_to_value(g, value, out):
    """``g`` (shaped like ``out``) summed over the dimensions where ``value`` was broadcast."""
    offset = out.ndim - value.ndim
    if offset:
        g = tsum(g, axis=list(range(offset)))
    axes = [d for d in range(value.ndim)
            if value.type.shape[d] == 1 and out.type.shape[d + offset] != 1]
    if axes:
        g = tsum(g, axis=axes, keepdims=True)
    return g if g.dtype == value.dtype else cast(g, value.dtype)


_alloc = Alloc()


def alloc(value, *shape) -> Variable:
    """An array of ``shape`` filled with ``value`` (a scalar or an array broadcast to it).

    ``alloc(v, 3, n)``; the shape may also be given as one sequence or an integer vector.
    """
    if len(shape) == 1 and (isinstance(shape[0], (list, tuple, np.ndarray))
                            or isinstance(shape[0], Variable) and shape[0].ndim == 1):
        shape = tuple(as_shape_scalars(shape[0], "alloc shape"))
    return _alloc(value, *shape)


def full(shape, fill_value, dtype=None) -> Variable:
    """numpy's ``full``: ``shape`` filled with ``fill_value`` (its dtype unless ``dtype``)."""
    value = as_tensor_variable(fill_value)
    if dtype is not None:
        value = cast(value, dtype)
    return _alloc(value, *as_shape_scalars(shape, "shape"))


def zeros(shape, dtype=None) -> Variable:
    """An array of zeros (``config.floatX`` unless ``dtype``)."""
    return full(shape, constant(0, dtype=_dtype_or_floatx(dtype)))


def empty(shape, dtype=None) -> Variable:
    """An array of ``shape`` whose values the caller will overwrite (``np.empty``'s role;
    ``config.floatX`` unless ``dtype``). Its values are unspecified; here they are zeros, from
    the same allocation as ``zeros``, so a graph never reads uninitialized memory."""
    return zeros(shape, dtype=dtype)


def ones(shape, dtype=None) -> Variable:
    """An array of ones (``config.floatX`` unless ``dtype``)."""
    return full(shape, constant(1, dtype=_dtype_or_floatx(dtype)))


def full_like(x, fill_value, dtype=None) -> Variable:
    """An array shaped like ``x`` filled with ``fill_value``, of ``x``'s dtype unless ``dtype``."""
    x = as_tensor_variable(x)
    dtype = normalize_dtype(x.dtype if dtype is None else dtype)
    value = as_tensor_variable(fill_value)
    if value.dtype != dtype:
        value = cast(value, dtype)
    return _alloc(value, *[shape_i(x, i) for i in range(x.ndim)])


def zeros_like(x, dtype=None) -> Variable:
    """Zeros shaped like ``x``, of ``x``'s dtype unless ``dtype``."""
    x = as_tensor_variable(x)
    return full_like(x, 0, dtype=dtype)


def ones_like(x, dtype=None) -> Variable:
    """Ones shaped like ``x``, of ``x``'s dtype unless ``dtype``."""
    x = as_tensor_variable(x)
    return full_like(x, 1, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# ARange


class ARange(Op):
    """numpy's ``arange(start, stop, step)`` with scalar inputs, as a ``dtype`` vector."""

    __props__ = ("dtype",)
    _output_type_depends_on_input_value = True   # static sizes from known values

    def __init__(self, dtype):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, start, stop, step):
        inputs = [as_tensor_variable(v) for v in (start, stop, step)]
        for name, v in zip(("start", "stop", "step"), inputs):
            if v.ndim != 0:
                raise TypeError(f"arange: {name} must be a scalar, got {v} ({v.type})")
            if v.dtype not in DISCRETE_DTYPES and not v.dtype.startswith("float"):
                raise TypeError(f"arange: {name} must be a real number, got dtype {v.dtype}")
        length = None
        known = [_constant_number(v) for v in inputs]
        if None not in known:
            if known[2] == 0:
                raise ValueError("arange: step must not be zero")
            length = _arange_length(*known)
        return Apply(self, inputs, [TensorType(self.dtype, (length,))()])

    def perform(self, node, inputs, output_storage):
        start, stop, step = (v.item() for v in inputs)
        if step == 0:
            raise ValueError(f"arange: step must not be zero (start={start}, stop={stop})")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        static = node.outputs[0].type.shape[0]
        if static is not None:
            return [(static,)]

        start, stop, step = (math.cast(v, "float64") for v in node.inputs)
        length = math.ceil(math.true_div(math.sub(stop, start), step))
        return [(math.cast(math.maximum(length, 0), "int64"),)]

    def L_op(self, inputs, outputs, output_grads):
        if self.dtype in DISCRETE_DTYPES:
            return [_float_zeros_like(v) for v in inputs]

        start, stop, step = inputs
        (gz,) = output_grads
        positions = arange(shape_i(outputs[0], 0), dtype=gz.dtype)
        return [math.cast(tsum(gz), start.dtype) if start.dtype not in DISCRETE_DTYPES
                else _float_zeros_like(start),
                zeros_like(stop) if stop.dtype not in DISCRETE_DTYPES
                else _float_zeros_like(stop),
                math.cast(tsum(math.mul(gz, positions)), step.dtype)
                if step.dtype not in DISCRETE_DTYPES else _float_zeros_like(step)]


def _arange_length(start, stop, step) -> int:
    """How many values numpy's arange gives (its own formula, without building the array)."""
    return max(0, int(np.ceil((stop - start) / step)))


def _constant_number(var):
    if isinstance(var, Constant):
        return np.asarray(var.data).item()
    return None


def arange(start, stop=None, step=1, dtype=None) -> Variable:
    """numpy's ``arange`` with symbolic bounds; integer inputs give int64, float inputs the
    upcast float dtype (Python floats count as ``config.floatX``)."""
    if stop is None:
        start, stop = 0, start
    inputs = [as_tensor_variable(v) for v in (start, stop, step)]
    if dtype is None:
        dtype = upcast(*[v.dtype for v in inputs])
        if dtype in DISCRETE_DTYPES:
            dtype = "int64"
        if config.cast_policy in ("numpy", "numpy+floatX") and dtype.startswith("float"):
            dtype = _numpy_arange_dtype(inputs, dtype)
    return ARange(dtype)(*inputs)


def _numpy_arange_dtype(inputs, dtype: str) -> str:
    """Under a numpy cast policy, the dtype numpy's arange gives for bounds of these dtypes
    (float32 bounds give float64), except that 'numpy+floatX' with floatX float32 keeps
    float32 when no bound is float64."""
    bounds = [np.array(k, dtype=v.dtype) for k, v in zip((0, 1, 1), inputs)]
    numpy_dtype = np.arange(*bounds).dtype.name
    if (numpy_dtype == "float64" and config.cast_policy == "numpy+floatX"
            and config.floatX == "float32" and all(v.dtype != "float64" for v in inputs)):
        return "float32"
    return numpy_dtype


# ----------------------------------------------------------------------------------------------
# Eye and Tri


class _Matrix2D(Op):
    """Shared make_node/infer_shape of the (n, m, k) matrix constructors ``Eye`` and ``Tri``."""

    __props__ = ("dtype",)
    _output_type_depends_on_input_value = True   # static sizes from known values
    numpy_function = None

    def __init__(self, dtype=None):
        self.dtype = _dtype_or_floatx(dtype)   # Eye() is a config.floatX eye, as PyTensor's

    def make_node(self, n, m, k):
        n, m, k = (as_int_scalar(v, name) for v, name in ((n, "n"), (m, "m"), (k, "k")))
        static = tuple(constant_int(v) for v in (n, m))
        for name, s in zip(("n", "m"), static):
            if s is not None and s < 0:
                raise ValueError(f"{type(self).__name__.lower()}: {name}={s} is negative")
        return Apply(self, [n, m, k], [TensorType(self.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        n, m, k = (int(v) for v in inputs)
        if n < 0 or m < 0:
            raise ValueError(f"{type(self).__name__.lower()}: negative size ({n}, {m})")
        output_storage[0][0] = type(self).numpy_function(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(s if s is not None else v
                      for s, v in zip(node.outputs[0].type.shape, node.inputs[:2]))]

    def connection_pattern(self, node):
        return [[False], [False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


class Eye(_Matrix2D):
    """An (n, m) matrix with ones on diagonal ``k`` (numpy's ``eye``)."""

    numpy_function = staticmethod(lambda n, m, k, dtype: np.eye(n, m, k, dtype=dtype))


class Tri(_Matrix2D):
    """An (n, m) matrix with ones at and below diagonal ``k`` (numpy's ``tri``)."""

    numpy_function = staticmethod(lambda n, m, k, dtype: np.tri(n, m, k, dtype=dtype))


def eye(n, m=None, k=0, dtype=None) -> Variable:
    """numpy's ``eye``: ``config.floatX`` unless ``dtype``."""
    return Eye(_dtype_or_floatx(dtype))(n, n if m is None else m, k)


def tri(n, m=None, k=0, dtype=None) -> Variable:
    """numpy's ``tri``: ones at and below diagonal ``k``; ``config.floatX`` unless ``dtype``."""
    return Tri(_dtype_or_floatx(dtype))(n, n if m is None else m, k)


def identity_like(x, dtype=None) -> Variable:
    """An identity matrix shaped like the matrix ``x``, of ``x``'s dtype unless ``dtype``."""
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"identity_like needs a matrix, got {x} ({x.ndim}-d)")
    return eye(shape_i(x, 0), shape_i(x, 1), dtype=x.dtype if dtype is None else dtype)


def _masked(x, k, lower: bool) -> Variable:
    x = as_tensor_variable(x)
    if x.ndim < 2:
        raise TypeError(f"{'tril' if lower else 'triu'} needs at least 2 dimensions, got {x} "
                        f"({x.ndim}-d)")
    rows, cols = shape_i(x, -2), shape_i(x, -1)
    if lower:
        mask = tri(rows, cols, k, dtype="bool")
        return switch(mask, x, zeros_like(x))

    mask = tri(rows, cols, sub(as_int_scalar(k, "k"), 1), dtype="bool")
    return switch(mask, zeros_like(x), x)


def tril(x, k: int = 0) -> Variable:
    """numpy's ``tril``: ``x`` with the elements above diagonal ``k`` zeroed (last two axes)."""
    return _masked(x, k, lower=True)


def triu(x, k: int = 0) -> Variable:
    """numpy's ``triu``: ``x`` with the elements below diagonal ``k`` zeroed (last two axes)."""
    return _masked(x, k, lower=False)
