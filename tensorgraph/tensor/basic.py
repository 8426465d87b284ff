"""Turning Python values into tensor variables: ``as_tensor_variable`` and ``constant``.

Python numbers get their dtype from ``config.cast_policy`` (``python_scalar_dtype``, defined
with the scalar types in ``tensorgraph.scalar.basic``):

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

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.raise_op import CheckAndRaise
from tensorgraph.scalar.basic import (  # noqa: F401  (python_scalar_dtype: re-exported)
    Cast,
    Identity,
    ScalarOp,
    ScalarType,
    python_scalar_dtype,
)
from tensorgraph.scalar.math import Second
from tensorgraph.tensor.scalar_convert import (
    ScalarFromTensor,
    TensorFromScalar,
    scalar_to_tensor,
)
from tensorgraph.tensor.type import TensorType, normalize_dtype
from tensorgraph.tensor.type_other import NoneTypeT


def constant(value, name: str | None = None, ndim: int | None = None, dtype=None):
    """A ``TensorConstant`` holding ``value``, with its whole shape static.
 ``ndim`` adds leading size-1
    dimensions (or checks the ndim); ``dtype`` forces the dtype (Python numbers are converted
    without loss checks, arrays must convert safely). A numpy masked array is refused: a
    constant holds every element, so its mask would be silently lost.
    """
    if isinstance(value, np.ma.MaskedArray):
        raise NotImplementedError("MaskedArrays are not supported: a tensor holds every element, "
                                  "so the mask would be lost; give value.filled(fill_value) or "
                                  "value.data explicitly")

    if isinstance(value, Constant) and isinstance(value.type, TensorType):
        if (ndim is None or ndim == value.ndim) and (
                dtype is None or normalize_dtype(dtype) == value.dtype):
            return value               # already a tensor constant: itself, as PyTensor
        value = value.data
    if dtype is not None:
        dtype = normalize_dtype(dtype)
        arr = np.asarray(value, dtype=dtype)
    elif isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, np.generic):
        arr = np.asarray(value, dtype=python_scalar_dtype(value))
    elif isinstance(value, np.ndarray) and not isinstance(value, np.matrix):
        arr = value                    # not copied (a np.memmap stays one), as PyTensor
    else:
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"cannot make a tensor constant from {type(value).__name__} "
                            f"{value!r}: numpy sees it as Python objects")
    if ndim is not None and arr.ndim > ndim:
        extra = arr.ndim - ndim
        if any(s != 1 for s in arr.shape[:extra]):
            raise ValueError(f"constant of shape {arr.shape} cannot have ndim={ndim}: only "
                             "leading dimensions of size 1 can be dropped")
        arr = arr.reshape(arr.shape[extra:])
    elif ndim is not None:
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    ttype = TensorType(arr.dtype.name, arr.shape)
    return ttype.make_constant(arr, name=name)


def as_tensor_variable(x, name: str | None = None, ndim: int | None = None, dtype=None) -> Variable:
    """``x`` as a tensor variable: tensor variables pass through, values become constants.

    Lists/tuples containing symbolic tensors are stacked (``as_tensor_variable([x, y])``; a
    list of constants is one constant; a ``range`` is the ``arange`` node computing it).
    ``dtype`` applies to values only: a variable keeps its dtype. ``ndim`` checks the number
    of dimensions, dropping leading dimensions of static size 1 or adding leading size-1
    dimensions to reach it. An ``Apply`` node gives its default output. A scalar variable (``ScalarType``) becomes a 0-d tensor (``scalar_to_tensor``).
    (A Python ``bool`` is a bool constant, docs/dtypes.md; PyTensor refuses it.)
    """
    if isinstance(x, Apply):
        x = _default_output(x)
    if isinstance(x, Variable) and isinstance(x.type, ScalarType):
        x = scalar_to_tensor(x)
    if isinstance(x, Variable):
        if not isinstance(x.type, TensorType):
            raise TypeError(f"expected a tensor (a TensorType variable), got {x} of type {x.type}")
        if ndim is not None and x.ndim != ndim:
            x = _with_ndim(x, ndim)
        return x                       # dtype is for values: a variable keeps its own
    if isinstance(x, range):
        return _range_as_arange(x, name, ndim, dtype)
    if hasattr(x, "owner") and hasattr(x, "type"):
        raise TypeError(f"cannot convert {x} ({type(x).__name__}) to a tensor variable")
    if isinstance(x, (list, tuple)) and any(isinstance(e, Variable) for e in _flatten(x)):
        if all(isinstance(e, Constant) and isinstance(e.type, (TensorType, ScalarType))
               or isinstance(e, numbers.Number) for e in _flatten(x)):
            values = _constant_values(x)
            return constant(np.asarray(values), name=name, ndim=ndim, dtype=dtype)
        from tensorgraph.tensor.join import stack

        return stack([as_tensor_variable(e) for e in x])
    if isinstance(x, (list, tuple)) and not _flatten_list(x) and dtype is None:
        dtype = config.floatX   # an empty list has no dtype of its own: floatX, as PyTensor
    return constant(x, name=name, ndim=ndim, dtype=dtype)


def _range_as_arange(r: range, name, ndim, dtype):
    """A Python ``range`` as the ``arange`` node computing it (int64 unless ``dtype``), as
    PyTensor gives; the compiled graph folds it to a constant."""
    if ndim is not None and ndim != 1:
        raise ValueError(f"as_tensor_variable: ndim for range must be 1 (a range is a vector), "
                         f"got ndim={ndim}")
    from tensorgraph.tensor.creation import arange

    out = arange(r.start, r.stop, r.step, dtype="int64" if dtype is None else dtype)
    if name is not None:
        out.name = name
    return out


def is_flat(var, ndim: int = 1) -> bool:
    """Whether ``var`` (a tensor variable, or anything ``as_tensor_variable`` takes) has
    ``ndim`` dimensions, the check PyTensor code makes before treating a tensor as flat."""
    return as_tensor_variable(var).ndim == ndim


def _default_output(node):
    """The output an ``Apply`` node stands for: its op's ``default_output`` when it sets one
    (which must then be an int naming an output, even of a one-output node), else its only
    output."""
    index = getattr(node.op, "default_output", None)
    if index is None:
        if len(node.outputs) == 1:
            return node.outputs[0]
        raise TypeError(f"as_tensor_variable: {node}: Multi-output Op without default_output "
                        f"({len(node.outputs)} outputs); pick one (node.outputs[k])")
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise TypeError(f"as_tensor_variable: default_output of {node.op} must be an int, got "
                        f"{index!r}")
    if not -len(node.outputs) <= index < len(node.outputs):
        raise IndexError(f"as_tensor_variable: default_output {index} of {node.op} is not one "
                         f"of its {len(node.outputs)} outputs")
    return node.outputs[index]


def _with_ndim(x, ndim):
    """``x`` with leading static size-1 dimensions dropped down to ``ndim`` dimensions, or
    size-1 dimensions added in front up to ``ndim`` (numpy's broadcasting view of a smaller
    tensor, as PyTensor: ``as_tensor_variable(x.shape[0], ndim=1)`` is a length-1 vector)."""
    from tensorgraph.tensor.elemwise import DimShuffle

    extra = x.ndim - ndim
    if extra < 0:
        return DimShuffle(x.ndim, ("x",) * -extra + tuple(range(x.ndim)))(x)
    if extra <= 0 or any(s != 1 for s in x.type.shape[:extra]):
        raise ValueError(f"Tensor of type {x.type} could not be cast to have {ndim} dimensions: "
                         f"as_tensor_variable expected a {ndim}-d tensor, got {x} ({x.ndim}-d); "
                         "only leading dimensions of size 1 can be dropped")
    return DimShuffle(x.ndim, tuple(range(extra, x.ndim)))(x)


def _constant_values(x):
    if isinstance(x, (list, tuple)):
        return [_constant_values(e) for e in x]
    return x.data if isinstance(x, Constant) else x


def _flatten_list(seq) -> list:
    return list(_flatten(seq))


def _flatten(seq):
    for e in seq:
        if isinstance(e, (list, tuple)):
            yield from _flatten(e)
        else:
            yield e


as_tensor = as_tensor_variable


class NotScalarConstantError(ValueError):
    """Raised by ``get_scalar_constant_value`` for a variable whose value is not known (as one
    number) while the graph is built."""


def get_underlying_scalar_constant_value(v, elemwise: bool = True,
                                         only_process_constants: bool = False,
                                         max_recur: int = 10, raise_not_constant: bool = True):
    """The value of ``v`` as a 0-d numpy array when it is known while the graph is built: a
    number, a constant whose entries are all equal, or what casts, dimshuffles, conversions
    between scalars and 0-d tensors, ``x.shape[i]`` of a static size and (with ``elemwise``)
    elementwise and scalar ops of known values give. Otherwise a ``NotScalarConstantError``
    (or ``v`` itself when ``raise_not_constant`` is False)."""
    try:
        return _scalar_constant(v, elemwise, only_process_constants, max_recur)
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def get_scalar_constant_value(v, elemwise: bool = True, only_process_constants: bool = False,
                              max_recur: int = 10, raise_not_constant: bool = True):
    """``get_underlying_scalar_constant_value`` of a 0-d ``v`` only: an array or a tensor with
    dimensions is not a scalar, even when all its entries are equal."""
    ndim = v.ndim if isinstance(v, np.ndarray) else (
        getattr(v.type, "ndim", 0) if isinstance(v, Variable) else 0)
    if ndim != 0:
        if raise_not_constant:
            raise NotScalarConstantError(f"{v} has {ndim} dimensions, it is not a scalar")
        return v
    return get_underlying_scalar_constant_value(v, elemwise, only_process_constants, max_recur,
                                                raise_not_constant)


def _scalar_constant(v, elemwise, only_constants, depth):
    if isinstance(v, (numbers.Number, np.number, np.bool_)) and not isinstance(v, Variable):
        return np.asarray(v)
    if isinstance(v, np.ndarray):
        return _single_value(v, v)
    if not isinstance(v, Variable):
        raise NotScalarConstantError(f"{v!r} is not a number or a variable")
    if isinstance(v, Constant):
        if v.data is None and isinstance(v.type, NoneTypeT):
            return None                   # NoneConst: its value is None, as in PyTensor
        return _single_value(np.asarray(v.data), v)
    if only_constants or depth <= 0 or v.owner is None:
        raise NotScalarConstantError(f"{v} is not a constant")
    op, inputs = v.owner.op, v.owner.inputs
    from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
    from tensorgraph.tensor.shape import Shape_i, SpecifyShape

    if isinstance(op, Shape_i):
        size = inputs[0].type.shape[op.i]
        if size is not None:
            return np.asarray(size, dtype="int64")
    elif _is_entry_of_vector(v.owner):
        vec, index = inputs[0], int(_scalar_constant(inputs[1], elemwise, only_constants,
                                                     depth - 1))
        if isinstance(vec, Constant):
            return np.asarray(np.asarray(vec.data)[index])
        source = vec.owner
        if source is not None and type(source.op).__name__ == "Shape":
            size = source.inputs[0].type.shape[index]
            if size is not None:
                return np.asarray(size, dtype="int64")
        elif source is not None and type(source.op).__name__ == "MakeVector":
            return _scalar_constant(source.inputs[index], elemwise, only_constants, depth - 1)
    elif _is_entry_of_constant(v.owner):          # c[i, j] of a constant c
        index = tuple(int(_scalar_constant(i, elemwise, only_constants, depth - 1))
                      for i in inputs[1:])
        return np.asarray(np.asarray(inputs[0].data)[index])
    elif isinstance(op, (DimShuffle, SpecifyShape, TensorFromScalar, ScalarFromTensor)):
        return _scalar_constant(inputs[0], elemwise, only_constants, depth - 1)
    elif _is_assert(op):
        # the value passes through when every condition is known to hold
        if all(bool(_scalar_constant(c, elemwise, only_constants, depth - 1))
               for c in inputs[1:]):
            return _scalar_constant(inputs[0], elemwise, only_constants, depth - 1)
    elif isinstance(op, (Elemwise, ScalarOp)) and len(v.owner.outputs) == 1:
        scalar_op = op.scalar_op if isinstance(op, Elemwise) else op

        if isinstance(scalar_op, Second):         # fill(shape_source, value): the value
            return _scalar_constant(inputs[1], elemwise, only_constants, depth - 1)
        if elemwise or isinstance(scalar_op, (Cast, Identity)):
            values = [_scalar_constant(i, elemwise, only_constants, depth - 1) for i in inputs]
            return np.asarray(scalar_op.impl(*values), dtype=v.type.dtype)
    raise NotScalarConstantError(f"{v} is not known to be constant")


def _is_entry_of_constant(node) -> bool:
    """Whether ``node`` is ``c[i, j, ...]`` of a constant ``c`` at integer indices only."""
    from tensorgraph.tensor.subtensor import Subtensor

    return (isinstance(node.op, Subtensor) and isinstance(node.inputs[0], Constant)
            and all(e == "int" for e in node.op.idx_list)
            and len(node.op.idx_list) == node.inputs[0].ndim)


def _is_assert(op) -> bool:
    return isinstance(op, CheckAndRaise)


def _is_entry_of_vector(node) -> bool:
    """Whether ``node`` is ``v[i]`` of a vector ``v`` at one integer index."""
    from tensorgraph.tensor.subtensor import Subtensor

    return (isinstance(node.op, Subtensor) and list(node.op.idx_list) == ["int"]
            and node.inputs[0].ndim == 1)


def _single_value(data, what):
    if data.size == 0 or (data.size > 1 and not np.all(data == data.flat[0])):
        raise NotScalarConstantError(f"{what} does not hold a single value")
    return np.asarray(data.flat[0])
