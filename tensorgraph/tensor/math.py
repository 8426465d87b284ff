"""Elementwise tensor functions: ``tt.add``, ``tt.exp``, ``tt.switch``, ``tt.cast``, ...

Each function wraps one ``Elemwise`` op over a scalar op of ``tensorgraph.scalar``. The dtype
rules are those of ``tensorgraph.scalar.basic`` (numpy's promotion on dtypes, weak Python
numbers, ``config.int_division`` for ``/`` between integers).
"""

from __future__ import annotations

from functools import lru_cache

from tensorgraph.scalar import basic as ps
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.type import normalize_dtype

__all__ = ["add", "mul", "sub", "neg", "true_div", "cast"]

_add = Elemwise(ps.add)
_mul = Elemwise(ps.mul)
_sub = Elemwise(ps.sub)
_true_div = Elemwise(ps.true_div)
_neg = Elemwise(ps.neg)


def add(a, b, *more):
    """a + b (+ more): elementwise sum with numpy broadcasting."""
    return _add(a, b, *more)


def mul(a, *more):
    """a * b (* more): elementwise product."""
    if not more:
        return as_tensor_variable(a)
    return _mul(a, *more)


def sub(a, b):
    """a - b."""
    return _sub(a, b)


def neg(a):
    """-a."""
    return _neg(a)


def true_div(a, b):
    """a / b. Between integers, ``config.int_division`` decides: 'int' floors (as ``//``),
    'floatX' divides in ``config.floatX``, 'raise' refuses."""
    from tensorgraph.configdefaults import config

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.dtype in ps.DISCRETE and b.dtype in ps.DISCRETE:
        policy = config.int_division
        if policy == "int":
            return int_div(a, b)
        if policy == "raise":
            raise TypeError(f"{a} / {b} divides integers ({a.dtype}, {b.dtype}) and "
                            "config.int_division='raise'; use // or cast to a float first")
        return _true_div(cast(a, config.floatX), cast(b, config.floatX))
    return _true_div(a, b)


@lru_cache(maxsize=None)
def _cast_op(dtype: str) -> Elemwise:
    return Elemwise(ps.Cast(dtype))


def cast(x, dtype):
    """``x`` converted to ``dtype`` ('floatX' allowed); ``x`` itself if it already has it."""
    x = as_tensor_variable(x)
    dtype = normalize_dtype(dtype)
    if x.dtype == dtype:
        return x
    return _cast_op(dtype)(x)
