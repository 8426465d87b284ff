"""Turning Python values into tensor variables: ``as_tensor_variable`` and ``constant``.

This is where Python numbers get their dtype (``config.cast_policy``):

* ``'custom'`` (default): a Python int becomes the narrowest signed int dtype that holds it
  (``2`` is int8), a Python float becomes ``config.floatX`` (so float32 graphs stay float32),
  a bool becomes bool;
* ``'numpy+floatX'``: numpy's own dtypes (int64, float64), except that Python floats become
  ``config.floatX``.

Lists and arrays keep numpy's dtype (a list of Python floats is float64 unless it is cast).
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorgraph.graph.basic import Variable
from tensorgraph.tensor.type import TensorType, normalize_dtype

_INT_LADDER = ("int8", "int16", "int32", "int64")


def python_scalar_dtype(value) -> str:
    """The dtype a Python number gets as a constant, per ``config.cast_policy``."""
    from tensorgraph.configdefaults import config

    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral):
        if config.cast_policy == "numpy+floatX":
            return "int64"
        for dtype in _INT_LADDER:
            info = np.iinfo(dtype)
            if info.min <= value <= info.max:
                return dtype
        return "uint64" if value >= 0 else "int64"
    if isinstance(value, numbers.Real):
        if config.floatX == "float32":
            return "float32"
        return "float64"
    if isinstance(value, numbers.Complex):
        return "complex128"
    raise TypeError(f"{value!r} is not a number")


def constant(value, name: str | None = None, ndim: int | None = None, dtype=None):
    """A ``TensorConstant`` holding ``value``, with its whole shape static.
 ``ndim`` adds leading size-1
    dimensions (or checks the ndim); ``dtype`` forces the dtype (Python numbers are converted
    without loss checks, arrays must convert safely).
    """
    if dtype is not None:
        dtype = normalize_dtype(dtype)
        arr = np.asarray(value, dtype=dtype)
    elif isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, np.generic):
        arr = np.asarray(value, dtype=python_scalar_dtype(value))
    else:
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"cannot make a tensor constant from {type(value).__name__} "
                            f"{value!r}: numpy sees it as Python objects")
    if ndim is not None:
        if arr.ndim > ndim:
            raise ValueError(f"constant {value!r} has {arr.ndim} dimensions, more than ndim={ndim}")
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    ttype = TensorType(arr.dtype.name, arr.shape)
    return ttype.make_constant(arr, name=name)


def as_tensor_variable(x, name: str | None = None, ndim: int | None = None, dtype=None) -> Variable:
    """``x`` as a tensor variable: tensor variables pass through, values become constants.

    Lists/tuples containing symbolic tensors are stacked (``as_tensor_variable([x, y])``).
    """
    if isinstance(x, Variable):
        if not isinstance(x.type, TensorType):
            raise TypeError(f"expected a tensor, got {x} of type {x.type}")
        if ndim is not None and x.ndim != ndim:
            raise TypeError(f"expected a {ndim}-d tensor, got {x} with ndim {x.ndim}")
        if dtype is not None and x.dtype != normalize_dtype(dtype):
            from tensorgraph.tensor.math import cast

            return cast(x, dtype)
        return x
    if hasattr(x, "owner") and hasattr(x, "type"):
        raise TypeError(f"cannot convert {x} ({type(x).__name__}) to a tensor variable")
    if isinstance(x, (list, tuple)) and any(isinstance(e, Variable) for e in _flatten(x)):
        from tensorgraph.tensor.join import stack

        return stack([as_tensor_variable(e) for e in x])
    return constant(x, name=name, ndim=ndim, dtype=dtype)


def _flatten(seq):
    for e in seq:
        if isinstance(e, (list, tuple)):
            yield from _flatten(e)
        else:
            yield e


as_tensor = as_tensor_variable
