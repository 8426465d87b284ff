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

import functools

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.op import Op
from tensorgraph.graph.type import Type

__all__ = [
    "ScalarType", "ScalarOp", "as_scalar", "upcast", "same_out", "upcast_out",
    "upcast_out_nobool", "upgrade_to_float", "upgrade_to_float_no_complex", "bool_out",
    "DISCRETE", "COMPLEX", "Add", "Mul", "Sub", "TrueDiv", "Neg", "Identity", "Cast",
    "add", "mul", "sub", "true_div", "neg", "identity",
]

DISCRETE = frozenset(("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64"))
COMPLEX = frozenset(("complex64", "complex128"))


class ScalarType(Type):
    """The type of one number of a given dtype (used inside fused/composite graphs)."""

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype).name

    def __eq__(self, other):
        return type(self) is type(other) and self.dtype == other.dtype

    def __hash__(self):
        return hash((ScalarType, self.dtype))

    def __str__(self):
        return self.dtype

    __repr__ = __str__

    def filter(self, data, strict=False, allow_downcast=None):
        arr = np.asarray(data)
        if arr.ndim != 0:
            raise TypeError(f"expected a {self.dtype} scalar, got an array of shape {arr.shape}")
        if arr.dtype.name == self.dtype:
            return arr[()]
        if strict:
            raise TypeError(f"expected a {self.dtype} scalar, got {arr.dtype.name} (strict mode)")
        if allow_downcast or np.can_cast(arr.dtype, self.dtype, "safe"):
            return np.asarray(arr, dtype=self.dtype)[()]
        raise TypeError(f"expected a {self.dtype} scalar, got {arr.dtype.name}: converting "
                        "would lose precision")


def as_scalar(value) -> Variable:
    """A scalar variable from a scalar variable or a Python/numpy number."""
    if isinstance(value, Variable):
        if not isinstance(value.type, ScalarType):
            raise TypeError(f"expected a scalar variable, got {value} of type {value.type}")
        return value
    arr = np.asarray(value)
    return Constant(ScalarType(arr.dtype.name), arr[()])


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
        ``None`` for an input the output does not depend on differentiably."""
        raise NotImplementedError(f"the scalar op {self.name} has no gradient")


# A scalar op's gradient is a tensor graph (``Elemwise.L_op`` asks its scalar op for it), built
# with the tensor layer's operations. The scalar layer cannot import that higher layer: the
# tensor layer registers them here when it is imported (``tensorgraph.tensor.math``), which
# always happens before a gradient is asked for (``grad`` and ``Elemwise`` import it).
_tensor_ops: dict = {}


def register_tensor_ops(math, constant) -> None:
    """Give scalar gradients the tensor layer's ``math`` module (``mul``, ``switch``, ...) and
    ``constant(array)``; called by ``tensorgraph.tensor.math``."""
    _tensor_ops.update(math=math, constant=constant)


def _tensor_op(name: str):
    try:
        return _tensor_ops[name]
    except KeyError:
        raise RuntimeError("scalar gradients are tensor graphs: import tensorgraph.tensor "
                           "before asking a scalar op for its gradient") from None


def _tt():
    return _tensor_op("math")


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
            grads.append(_tt().mul(gz, *others) if others else gz)
        return grads


class Sub(ScalarOp):
    nin = 2
    nfunc = staticmethod(np.subtract)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "-"

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        return [gz, _tt().neg(gz)]


class TrueDiv(ScalarOp):
    nin = 2
    nfunc = staticmethod(np.true_divide)
    output_rule = staticmethod(upgrade_to_float)
    symbol = "/"

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        m = _tt()
        return [m.true_div(gz, y), m.neg(m.true_div(m.mul(gz, x), m.mul(y, y)))]


class Neg(ScalarOp):
    nin = 1
    nfunc = staticmethod(np.negative)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "-"

    def L_op(self, inputs, outputs, output_grads):
        return [_tt().neg(output_grads[0])]


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
        return np.asarray(x).astype(self.dtype)

    def L_op(self, inputs, outputs, output_grads):
        return [_tt().cast(output_grads[0], inputs[0].type.dtype)]


add = Add()
mul = Mul()
sub = Sub()
true_div = TrueDiv()
neg = Neg()
identity = Identity()
