"""Scalar types, dtype promotion rules, and the ``ScalarOp`` framework used by ``Elemwise``.

A ``ScalarOp`` describes one elementwise computation once: its numpy implementation (``nfunc``,
applied to whole arrays by ``Elemwise.perform``), the dtype of its outputs given those of its
inputs (``output_dtypes``), and its gradient (``L_op``, written with tensor functions on the
Elemwise node's tensors). How an element computes in C lives with the C backend
(``tensorgraph.link.c.ops.scalar``: a table from scalar op class to its C expression), and
fusion composes scalar ops into one loop.

Dtype promotion (documented for users in ``tensorgraph.tensor``):

* tensors of different dtypes combine as numpy combines those dtypes (``np.result_type`` on
  dtypes, never on values): int32 with float32 gives float64, as in numpy (under
  ``cast_policy='numpy+floatX'`` such int-made float64 results are narrowed to floatX, see
  ``upcast``);
* Python numbers are *weak*: they become the narrowest dtype that holds them (``cast_policy``
  'custom') or numpy's default with Python floats as ``floatX`` ('numpy+floatX'), so
  ``x_float32 * 2.0`` and ``1 / (1 + x_float32)`` stay float32;
* ops that need a float (exp, true division, ...) turn integers into float32 (8 and 16 bit)
  or float64 (32 and 64 bit), and divide integers as ``config.int_division`` says.
"""

from __future__ import annotations

import builtins
import functools
import numbers

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.op import Op, defines_pullback
from tensorgraph.graph.type import Type
from tensorgraph.scalar.variable import ScalarConstant, ScalarVariable

__all__ = [
    "ScalarType", "ScalarVariable", "ScalarConstant", "ScalarOp", "as_scalar", "constant",
    "get_scalar_type", "cast", "ComplexError", "IntegerDivisionError",
    "python_scalar_dtype", "NumpyAutocaster", "autocast_int", "autocast_float",
    "autocast_float_as", "convert",
    "upcast", "same_out", "upcast_out",
    "upcast_out_nobool", "upgrade_to_float", "upgrade_to_float_no_complex", "bool_out",
    "DISCRETE", "COMPLEX", "Add", "Mul", "Sub", "TrueDiv", "Neg", "Identity", "Cast",
    "add", "mul", "sub", "true_div", "neg", "identity",
    # the scalar types by dtype name, and their groups (PyTensor's names)
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
    "int_types", "uint_types", "integer_types", "float_types", "complex_types",
    "discrete_types", "continuous_types", "all_types", "discrete_dtypes",
    "convert_to_bool", "convert_to_int8", "convert_to_int16", "convert_to_int32",
    "convert_to_int64", "convert_to_uint8", "convert_to_uint16", "convert_to_uint32",
    "convert_to_uint64", "convert_to_float16", "convert_to_float32", "convert_to_float64",
    "convert_to_complex64", "convert_to_complex128",
]

DISCRETE = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64"))
COMPLEX = frozenset(("complex64", "complex128"))


class ComplexError(NotImplementedError):
    """An operation that has no meaning for complex numbers was given one."""


class IntegerDivisionError(TypeError):
    """``/`` between two integers while ``config.int_division`` is 'raise'."""


class ScalarType(Type):
    """The type of one number of a given dtype.

    Fused and composite graphs are made of scalar variables; PyTensor code also builds scalar
    graphs itself (``tensorgraph.scalar.float64('x') + 1``). The instances named after their
    dtype (``int32``, ``float64``, ...) are called to make variables and compare equal to
    their variables' types (``x.type == float64``).
    """

    variable_type = ScalarVariable
    constant_type = ScalarConstant
    #: a scalar has no dimensions (code handling tensors and scalars alike reads these)
    ndim = 0
    shape = ()

    def __init__(self, dtype: str):
        if dtype == "floatX":
            dtype = config.floatX
        self.dtype = np.dtype(dtype).name

    def __eq__(self, other):
        return type(self) is type(other) and self.dtype == other.dtype

    def __hash__(self):
        return hash((ScalarType, self.dtype))

    def __str__(self):
        return self.dtype

    __repr__ = __str__

    def clone(self, dtype=None, **kwargs) -> ScalarType:
        """This type, or the scalar type of ``dtype``."""
        return ScalarType(self.dtype if dtype is None else dtype)

    def upcast(self, *others) -> str:
        """The dtype of combining this type with ``others`` (types or variables)."""
        return upcast(self.dtype, *[o.dtype for o in others])

    def filter(self, data, strict=False, allow_downcast=None):
        """``data`` as a numpy scalar of this dtype, or ``TypeError`` saying why.

        As for tensors: numpy values convert when their dtype casts safely; plain Python
        numbers when their value survives (``3`` for int8, ``3.5`` for float32) or, for a
        Python float, when this dtype is ``config.floatX``; ``allow_downcast`` allows any.
        """
        if hasattr(data, "type") and hasattr(data, "owner"):
            raise TypeError(f"expected a {self.dtype} value, got the symbolic variable {data}; "
                            "symbolic inputs are given to function(), values to its calls")
        try:
            arr = np.asarray(data)
        except Exception as exc:   # noqa: BLE001  (numpy refuses many things in many ways)
            raise TypeError(f"expected a {self.dtype} scalar, got {type(data).__name__}: "
                            f"{exc}") from None
        if arr.ndim != 0:
            raise TypeError(f"expected a {self.dtype} scalar, got an array of shape {arr.shape}")
        if arr.dtype.name == self.dtype:
            return arr[()]
        if strict:
            raise TypeError(f"expected a {self.dtype} scalar, got {arr.dtype.name} (strict mode)")
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"expected a {self.dtype} scalar, got {type(data).__name__} "
                            f"{data!r}")
        if allow_downcast or np.can_cast(arr.dtype, self.dtype, "safe"):
            return np.asarray(arr, dtype=self.dtype)[()]
        if allow_downcast is None and not isinstance(data, (np.ndarray, np.generic)):
            if isinstance(data, float) and self.dtype == config.floatX:
                return np.asarray(arr, dtype=self.dtype)[()]
            kept = _exact(arr, self.dtype)
            if kept is not None:
                return kept
        raise TypeError(f"expected a {self.dtype} scalar, got {arr.dtype.name} {data!r}: "
                        "converting would lose precision (cast it, or compile with "
                        "allow_input_downcast=True)")

    def values_eq_approx(self, a, b, tolerance: float = 1e-4) -> bool:
        """Equal within a relative ``tolerance`` (exactly, for bools)."""
        if self.dtype == "bool":
            return builtins.bool(a == b)
        if a == b:
            return True
        return builtins.bool(abs(a - b) <= tolerance * (abs(a) + abs(b)))


def _exact(arr, dtype):
    """The 0-d ``arr`` as a ``dtype`` scalar when its value survives the conversion, else None."""
    with np.errstate(all="ignore"):
        converted = arr.astype(dtype)
        same = np.array_equal(converted, arr, equal_nan=arr.dtype.kind in "fc")
    return converted[()] if same else None


_SCALAR_TYPES: dict[str, ScalarType] = {}


def get_scalar_type(dtype) -> ScalarType:
    """The ``ScalarType`` of ``dtype`` ('floatX' allowed; one shared instance per dtype)."""
    new = ScalarType(dtype)
    return _SCALAR_TYPES.setdefault(new.dtype, new)


# ----------------------------------------------------------------------------------------------
# Python numbers in graphs: the dtype they get (``config.cast_policy``, docs/dtypes.md)


class NumpyAutocaster:
    """The dtype rule of one kind of Python number under ``cast_policy='custom'`` (PyTensor's
    ``autocast_int`` / ``autocast_float``): a number gets the first of ``dtypes`` that holds it
    exactly, the last one when none does; a Python float gets ``config.floatX`` when floatX is
    listed and is not float64.

    tensorgraph's own rule is this one with ``dtypes`` (int8, int16, int32, int64) for ints and
    just floatX (float64 when floatX is float16) for floats, so a Python float never depends on
    its value; ``autocast_float_as`` changes the float dtypes for a block of code.
    """

    def __init__(self, dtypes, default=None):
        self._dtypes = tuple(dtypes) if dtypes else None
        self._default = default

    @property
    def dtypes(self) -> tuple[str, ...]:
        if self._dtypes is not None:
            return self._dtypes
        return self._default()

    @dtypes.setter
    def dtypes(self, dtypes) -> None:
        self._dtypes = tuple(dtypes) if dtypes is not None else None

    def dtype_of(self, x) -> str:
        """The dtype of the Python number ``x`` under ``cast_policy='custom'``."""
        floatx = config.floatX
        if isinstance(x, float) and floatx in self.dtypes and floatx != "float64":
            return floatx
        # float16 only when it is floatX: it keeps about 3 digits
        candidates = [d for d in self.dtypes if d != "float16" or floatx == "float16"]
        for dtype in candidates:
            if np.dtype(dtype).kind in "iu":
                info = np.iinfo(dtype)
                if info.min <= x <= info.max:
                    return dtype
            elif float(np.asarray(x, dtype=dtype)) == x:
                return dtype
        return candidates[-1]

    def __call__(self, x) -> np.ndarray:
        """``x`` as a 0-d array of the dtype the current ``cast_policy`` gives it."""
        if not isinstance(x, (numbers.Number, np.ndarray)) or np.ndim(x) != 0:
            raise TypeError(f"an autocaster converts one Python number, got {x!r}")
        if config.cast_policy != "custom" or isinstance(x, (np.ndarray, np.generic)):
            return convert(x)
        return np.asarray(x, dtype=self.dtype_of(x))


def _default_float_dtypes() -> tuple[str, ...]:
    return ("float32",) if config.floatX == "float32" else ("float64",)


autocast_int = NumpyAutocaster(("int8", "int16", "int32", "int64"))
autocast_float = NumpyAutocaster(None, default=_default_float_dtypes)


class autocast_float_as:  # noqa: N801  (PyTensor's name)
    """Within the block, Python floats get the first of ``dtypes`` that holds them exactly
    (``config.floatX`` if listed and not float64): ``autocast_float_as('float32')`` keeps
    ``fvector() + 1.1`` in float32 whatever floatX is. Needs ``cast_policy='custom'``."""

    def __init__(self, *dtypes):
        self.dtypes = tuple(np.dtype(d).name for d in dtypes)
        self._check_policy()

    @staticmethod
    def _check_policy():
        if config.cast_policy != "custom":
            raise ValueError("autocast_float_as changes cast_policy='custom' only; "
                             f"config.cast_policy is {config.cast_policy!r}")

    def __enter__(self):
        self._check_policy()
        self._saved = autocast_float._dtypes
        autocast_float.dtypes = self.dtypes
        return self

    def __exit__(self, *exc):
        autocast_float._dtypes = self._saved
        return False


def python_scalar_dtype(value) -> str:
    """The dtype a Python number gets as a constant, per ``config.cast_policy``:
    'custom' (default) gives an int the narrowest of int8..int64 that holds it and a float
    ``config.floatX`` (``autocast_float``); 'numpy+floatX' gives int64 and floatX."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral):
        if config.cast_policy == "numpy+floatX":
            return "int64"
        if not -2 ** 63 <= value < 2 ** 63:
            return "uint64" if value >= 0 else "int64"
        return autocast_int.dtype_of(value)
    if isinstance(value, numbers.Real):
        if config.cast_policy == "numpy+floatX":
            return config.floatX
        return autocast_float.dtype_of(value)
    if isinstance(value, numbers.Complex):
        return "complex128"
    raise TypeError(f"{value!r} is not a number")


def convert(x, dtype=None) -> np.ndarray:
    """``x`` as an array: of ``dtype`` when given ('floatX' allowed), else a Python number
    gets its dtype from ``python_scalar_dtype`` and anything else numpy's."""
    if dtype is not None:
        return np.asarray(x).astype(config.floatX if dtype == "floatX" else dtype)
    if isinstance(x, (numbers.Number, np.bool_)) and not isinstance(x, np.generic):
        return np.asarray(x, dtype=python_scalar_dtype(x))
    return np.asarray(x)


def constant(x, name: str | None = None, dtype=None) -> ScalarConstant:
    """A scalar constant holding the number ``x`` (a Python number gets its dtype as in
    tensor graphs, docs/dtypes.md; ``dtype`` forces one)."""
    arr = convert(x, dtype)
    if arr.ndim != 0:
        raise TypeError(f"a scalar constant holds one number, got an array of shape "
                        f"{arr.shape}")
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"a scalar constant holds a number, got {type(x).__name__} {x!r}")
    return ScalarConstant(get_scalar_type(arr.dtype.name), arr[()], name=name)


def as_scalar(value, name: str | None = None) -> Variable:
    """A scalar variable: scalar variables as they are, a 0-d tensor converted (a constant
    stays one, else ``scalar_from_tensor``), the output of a one-output ``Apply``, a number as
    a constant."""
    if isinstance(value, Apply):
        if len(value.outputs) != 1:
            raise ValueError(f"as_scalar: {value.op} has {len(value.outputs)} outputs; pick "
                             "one of node.outputs")
        value = value.outputs[0]
    if isinstance(value, Variable):
        if isinstance(value.type, ScalarType):
            return value
        if getattr(value.type, "ndim", None) == 0 and hasattr(value.type, "dtype"):
            return _tensor_op("tensor_to_scalar")(value)
        raise TypeError(f"expected a scalar variable, got {value} of type {value.type}")
    return constant(value, name=name)


def cast(x, dtype):
    """The scalar ``x`` converted to ``dtype`` ('floatX' allowed); ``x`` itself if it has it."""
    x = as_scalar(x)
    dtype = config.floatX if dtype == "floatX" else np.dtype(dtype).name
    if x.type.dtype == dtype:
        return x
    if x.type.dtype in COMPLEX and dtype not in COMPLEX:
        raise ComplexError(f"cast({x}, {dtype!r}) would drop the imaginary part; take the "
                           "real part, the modulus or the angle explicitly")
    return Cast(dtype)(x)


# ----------------------------------------------------------------------------------------------
# Dtype rules: each maps input dtypes to the output dtypes of a scalar op.


_FLOAT_WIDTH = {"float16": 16, "float32": 32, "float64": 64}


def upcast(*dtypes: str) -> str:
    """The dtype of combining tensors of ``dtypes``: numpy's promotion on dtypes, never values.

    One exception, under ``cast_policy='numpy+floatX'`` only: a float result wider than both
    ``config.floatX`` and every float input (it got wide from an integer, as int32 with float32
    gives float64 in numpy) is narrowed to the widest of ``config.floatX`` and the float inputs.
    So with floatX=float32, int32 with float32 gives float32 there, as it did in Theano.
    """
    out = np.result_type(*[np.dtype(d) for d in dtypes]).name
    if out not in _FLOAT_WIDTH:
        return out
    if config.cast_policy != "numpy+floatX":
        return out
    floats = [d for d in dtypes if d in _FLOAT_WIDTH]
    widest_input = max(floats, key=_FLOAT_WIDTH.__getitem__) if floats else config.floatX
    narrowed = max(widest_input, config.floatX, key=_FLOAT_WIDTH.__getitem__)
    return narrowed if _FLOAT_WIDTH[out] > _FLOAT_WIDTH[narrowed] else out


def same_out(*dtypes):
    return (dtypes[0],)


def upcast_out(*dtypes):
    return (upcast(*dtypes),)


def _bool_as_int8(value):
    array = np.asarray(value)
    return array.astype(np.int8) if array.dtype == np.bool_ else value


def upcast_out_nobool(*dtypes):
    """Like ``upcast_out`` but arithmetic on booleans counts in int8 (True + True == 2)."""
    out = upcast(*dtypes)
    return ("int8" if out == "bool" else out,)


_TO_FLOAT = {"bool": "float32", "int8": "float32", "uint8": "float32", "int16": "float32",
             "uint16": "float32", "int32": "float64", "uint32": "float64", "int64": "float64",
             "uint64": "float64"}


def upgrade_to_float(*dtypes):
    """Float output for ops such as exp: integers become float32 (<=16 bit) or float64."""
    out = upcast(*dtypes)
    return (_TO_FLOAT.get(out, out),)


def upgrade_to_float_no_complex(*dtypes):
    for d in dtypes:
        if d in COMPLEX:
            raise TypeError(f"complex input ({d}) is not supported by this operation")
    return upgrade_to_float(*dtypes)


def bool_out(*dtypes):
    return ("bool",)


# ----------------------------------------------------------------------------------------------
# The op framework


class ScalarOp(Op):
    """One elementwise computation; see the module docstring.

    Subclasses set ``nin`` (-1 for any number of inputs), ``nfunc`` (numpy function applied to
    whole arrays), ``output_rule`` (one of the dtype rules above) and define ``L_op``.
    """

    __props__ = ()
    nin = -1
    nout = 1
    nfunc = None
    output_rule = staticmethod(upcast_out)
    #: True for ops whose output is the same for permuted inputs (add, mul, eq, ...).
    commutative = False
    #: True for ops where op(op(a, b), c) == op(a, op(b, c)) (add, mul, and, or, ...).
    associative = False
    #: How pp() shows the op: an infix symbol like '+', or None for ``name(args)``.
    symbol: str | None = None

    @property
    def name(self) -> str:
        return type(self).__name__.lower()

    def __str__(self):
        return self.name

    def output_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        if self.nin != -1 and len(dtypes) != self.nin:
            raise TypeError(f"{self.name} takes {self.nin} inputs, got {len(dtypes)}")
        return tuple(self.output_rule(*dtypes))

    def impl(self, *inputs):
        """Compute the op on numbers or whole arrays (numpy broadcasting)."""
        if self.output_rule is upcast_out_nobool:
            # arithmetic counts booleans in int8 (True + True == 2, -True == -1), where numpy
            # would stay in bool or refuse (np.negative, np.subtract of bools)
            inputs = [_bool_as_int8(i) for i in inputs]
        if self.nin == -1 and len(inputs) > 2:  # add, mul of several: left to right, as in C
            return functools.reduce(self.nfunc, inputs)
        return self.nfunc(*inputs)

    def make_node(self, *inputs) -> Apply:
        inputs = [as_scalar(i) for i in inputs]
        dtypes = self.output_dtypes(*[i.type.dtype for i in inputs])
        return Apply(self, inputs, [ScalarType(d)() for d in dtypes])

    def perform(self, node, inputs, output_storage):
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for cell, out, value in zip(output_storage, node.outputs, results):
            cell[0] = np.asarray(value, dtype=out.type.dtype)[()]

    def L_op(self, inputs, outputs, output_grads):
        """Gradients w.r.t. each input, as tensor expressions (see ``Elemwise.L_op``);
        ``None`` for an input the output does not depend on differentiably.

        A scalar op written for PyTensor defines ``grad(inputs, output_grads)`` (or
        ``pullback``) instead: it is called with the same tensor variables, so arithmetic and
        ``tensorgraph.tensor`` functions build the gradient, and ``grad_not_implemented`` /
        ``grad_undefined`` mark an input without one."""
        if type(self).grad is not Op.grad or defines_pullback(self):
            return super().L_op(inputs, outputs, output_grads)
        raise NotImplementedError(f"the scalar op {self.name} has no gradient")


# A scalar op's gradient is a tensor graph (``Elemwise.L_op`` asks its scalar op for it), built
# with the tensor layer's operations. The scalar layer cannot import that higher layer: the
# tensor layer registers them here when it is imported (``tensorgraph.tensor.math``), which
# always happens before a gradient is asked for (``grad`` and ``Elemwise`` import it).
_tensor_ops: dict = {}


def register_tensor_ops(math=None, constant=None, tensor_to_scalar=None,
                        gradient=None) -> None:
    """Give scalar gradients the tensor layer's ``math`` module (``mul``, ``switch``, ...) and
    ``constant(array)``, and ``as_scalar`` the conversion of a 0-d tensor
    (``tensor_to_scalar``); called by ``tensorgraph.tensor.math``. ``gradient`` (the module,
    for ``grad_not_implemented``) is registered by ``tensorgraph.gradient`` itself, which
    ``Elemwise.L_op`` imports before asking a scalar op for its gradient."""
    given = dict(math=math, constant=constant, tensor_to_scalar=tensor_to_scalar,
                 gradient=gradient)
    _tensor_ops.update({name: value for name, value in given.items() if value is not None})


def _tensor_op(name: str):
    try:
        return _tensor_ops[name]
    except KeyError:
        raise RuntimeError(f"scalar ops reach tensors ({name}) through the tensor layer: "
                           "import tensorgraph.tensor first") from None


class Add(ScalarOp):
    nfunc = staticmethod(np.add)
    output_rule = staticmethod(upcast_out_nobool)
    commutative = associative = True
    symbol = "+"

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]] * len(inputs)


class Mul(ScalarOp):
    nfunc = staticmethod(np.multiply)
    output_rule = staticmethod(upcast_out_nobool)
    commutative = associative = True
    symbol = "*"

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        grads = []
        for i in range(len(inputs)):
            others = inputs[:i] + inputs[i + 1:]
            grads.append(_tensor_op("math").mul(gz, *others) if others else gz)
        return grads


class Sub(ScalarOp):
    nin = 2
    nfunc = staticmethod(np.subtract)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "-"

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        return [gz, _tensor_op("math").neg(gz)]


class TrueDiv(ScalarOp):
    nin = 2
    nfunc = staticmethod(np.true_divide)
    output_rule = staticmethod(upgrade_to_float)
    symbol = "/"

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        return [m.true_div(gz, y), m.neg(m.true_div(m.mul(gz, x), m.mul(y, y)))]


class Neg(ScalarOp):
    nin = 1
    nfunc = staticmethod(np.negative)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "-"

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").neg(output_grads[0])]


class Identity(ScalarOp):
    nin = 1
    output_rule = staticmethod(same_out)

    def impl(self, x):
        return x

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]


class Cast(ScalarOp):
    """Conversion to ``dtype`` (numpy's ``astype`` semantics: float -> int truncates)."""

    __props__ = ("dtype",)
    nin = 1

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype).name

    @property
    def name(self) -> str:
        return f"cast{{{self.dtype}}}"

    def output_rule(self, *dtypes):
        return (self.dtype,)

    def impl(self, x):
        x = np.asarray(x)
        if self.dtype == "uint32" and x.dtype.kind == "f":
            # through int64: numpy's contiguous uint32 loop gives other results than its
            # 0-d and strided conversions for values uint32 cannot hold; this is the C's
            # (tg_scalar.h, tg_f2i_u32) and numpy's 0-d result, for every length
            x = x.astype("int64")
        return x.astype(self.dtype)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").cast(output_grads[0], inputs[0].type.dtype)]


add = Add()
mul = Mul()
sub = Sub()
true_div = TrueDiv()
neg = Neg()
identity = Identity()


# ----------------------------------------------------------------------------------------------
# The scalar types by dtype name and their groups, as PyTensor names them (``bool`` shadows the
# builtin in this module only: the code above uses ``builtins.bool``)

bool = get_scalar_type("bool")  # noqa: A001
int8 = get_scalar_type("int8")
int16 = get_scalar_type("int16")
int32 = get_scalar_type("int32")
int64 = get_scalar_type("int64")
uint8 = get_scalar_type("uint8")
uint16 = get_scalar_type("uint16")
uint32 = get_scalar_type("uint32")
uint64 = get_scalar_type("uint64")
float16 = get_scalar_type("float16")
float32 = get_scalar_type("float32")
float64 = get_scalar_type("float64")
complex64 = get_scalar_type("complex64")
complex128 = get_scalar_type("complex128")

int_types = (int8, int16, int32, int64)
uint_types = (uint8, uint16, uint32, uint64)
integer_types = int_types + uint_types
float_types = (float16, float32, float64)
complex_types = (complex64, complex128)
discrete_types = (bool, *integer_types)
continuous_types = float_types + complex_types
all_types = discrete_types + continuous_types
discrete_dtypes = tuple(t.dtype for t in discrete_types)

# the conversion op to each dtype (``convert_to_int32(x)`` is ``cast(x, 'int32')``)
convert_to_bool = Cast("bool")
convert_to_int8 = Cast("int8")
convert_to_int16 = Cast("int16")
convert_to_int32 = Cast("int32")
convert_to_int64 = Cast("int64")
convert_to_uint8 = Cast("uint8")
convert_to_uint16 = Cast("uint16")
convert_to_uint32 = Cast("uint32")
convert_to_uint64 = Cast("uint64")
convert_to_float16 = Cast("float16")
convert_to_float32 = Cast("float32")
convert_to_float64 = Cast("float64")
convert_to_complex64 = Cast("complex64")
convert_to_complex128 = Cast("complex128")
