"""``ScalarVariable`` and ``ScalarConstant``: variables of a ``ScalarType`` with Python operators.

A scalar variable stands for one number (``tensorgraph.scalar.float64('x')``); PyTensor code
builds small scalar graphs with them (``xs + ys``, ``xs * 2``) and compiles them with
``function`` like tensor graphs. Each operator applies a scalar op of ``tensorgraph.scalar``
directly (no ``Elemwise``), with the dtype rules of ``docs/dtypes.md``: Python numbers are weak
(``xs_float32 * 2`` stays float32), ``/`` between integers obeys ``config.int_division``.

An operation with a tensor variable gives a tensor: the scalar becomes a 0-d tensor
(``tensor_from_scalar``), whichever side it is on. ``==`` keeps Python's identity meaning, as
for tensors (variables are dict keys); ``eq`` / ``neq`` compare.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant, Variable
from tensorgraph.scalar.int_division import warn_int_division


def _basic():
    from tensorgraph.scalar import basic

    return basic


def _ops():
    """The scalar package: every scalar op instance by name (``add``, ``mod``, ``lt``, ...)."""
    import tensorgraph.scalar

    return tensorgraph.scalar


def _binary(op_name: str, reflected: bool = False):
    """The method applying the scalar op ``op_name`` to ``self`` and another operand; a tensor
    operand is left to the tensor's reflected method (the result is then a tensor)."""

    def method(self, other):
        if isinstance(other, Variable) and not isinstance(other.type, _basic().ScalarType):
            return NotImplemented
        op = getattr(_ops(), op_name)
        return op(other, self) if reflected else op(self, other)

    method.__name__ = op_name
    return method


def _divide(a, b):
    """``a / b`` of scalars: a true division, except between two integers, where
    ``config.int_division`` decides as it does for tensors (docs/dtypes.md, section 4)."""
    basic = _basic()
    a, b = basic.as_scalar(a), basic.as_scalar(b)
    if a.type.dtype in basic.DISCRETE and b.type.dtype in basic.DISCRETE:
        policy = config.int_division
        if policy == "int":
            warn_int_division(a.type.dtype, b.type.dtype)
            return _ops().int_div(a, b)
        if policy == "raise":
            raise basic.IntegerDivisionError(
                f"{a} / {b} divides integers ({a.type.dtype}, {b.type.dtype}) and "
                "config.int_division='raise'; use // or cast to a float first")
        return basic.true_div(basic.cast(a, config.floatX), basic.cast(b, config.floatX))
    return basic.true_div(a, b)


def _divide_method(reflected: bool):
    def method(self, other):
        if isinstance(other, Variable) and not isinstance(other.type, _basic().ScalarType):
            return NotImplemented
        return _divide(other, self) if reflected else _divide(self, other)

    method.__name__ = "__rtruediv__" if reflected else "__truediv__"
    return method


class ScalarOperators:
    """Operators and methods of scalar variables and constants."""

    # numpy gives way to us in mixed expressions like ``np.float32(2) * xs``
    __array_priority__ = 1000
    #: a scalar has no dimensions (code handling tensors and scalars alike reads it)
    ndim = 0

    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", True)
    __truediv__, __rtruediv__ = _divide_method(False), _divide_method(True)
    __floordiv__, __rfloordiv__ = _binary("int_div"), _binary("int_div", True)
    __mod__, __rmod__ = _binary("mod"), _binary("mod", True)
    __pow__, __rpow__ = _binary("pow_"), _binary("pow_", True)
    __lt__, __le__ = _binary("lt"), _binary("le")
    __gt__, __ge__ = _binary("gt"), _binary("ge")
    __and__, __rand__ = _binary("and_"), _binary("and_", True)
    __or__, __ror__ = _binary("or_"), _binary("or_", True)
    __xor__, __rxor__ = _binary("xor"), _binary("xor", True)

    def __neg__(self):
        return _basic().neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops().abs_(self)

    def __invert__(self):
        return _ops().invert(self)

    # Python needs a concrete value for these; a symbolic one has none yet
    def _no_value(self, what: str):
        raise TypeError(f"the {what} of the symbolic scalar {self} is unknown until it is "
                        "computed; use .astype(...) for a symbolic conversion, switch/ifelse "
                        "for a symbolic condition")

    def __bool__(self):
        self._no_value("truth value")

    def __int__(self):
        self._no_value("integer value")

    __index__ = __int__

    def __float__(self):
        self._no_value("float value")

    def __complex__(self):
        self._no_value("complex value")

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def shape(self):
        """The shape of a scalar: an empty int64 vector (a tensor constant)."""
        return _basic()._tensor_op("constant")(np.zeros(0, dtype="int64"))

    def astype(self, dtype):
        """This scalar converted to ``dtype`` (itself when it already has it)."""
        return _basic().cast(self, dtype)

    def zeros_like(self, dtype=None):
        """A scalar 0 of ``dtype`` (this scalar's dtype by default)."""
        return _basic().constant(0, dtype=dtype or self.type.dtype)

    def ones_like(self, dtype=None):
        """A scalar 1 of ``dtype`` (this scalar's dtype by default)."""
        return _basic().constant(1, dtype=dtype or self.type.dtype)


class ScalarVariable(ScalarOperators, Variable):
    """A symbolic number (made by calling a ``ScalarType``: ``tensorgraph.scalar.int32('i')``)."""


class ScalarConstant(ScalarOperators, Constant):
    """A number fixed when the graph is built (``tensorgraph.scalar.constant(2.5)``)."""
