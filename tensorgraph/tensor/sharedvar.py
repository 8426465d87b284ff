"""Tensor shared variables: ``shared(np_array)`` gives a variable with tensor operators.

The registered constructor decides the dtype so that float32 models stay float32 without
casts: a Python float becomes a ``config.floatX`` scalar, a Python int an int64 scalar, a
Python bool a bool scalar; numpy arrays and numpy scalars keep their dtype. The static shape is
unknown in every dimension unless ``shape=`` is given, so ``set_value`` may change the size.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.shared import SharedVariable, shared_constructor
from tensorgraph.tensor.type import TensorType
from tensorgraph.tensor.variable import TensorVariable


class TensorSharedVariable(TensorVariable, SharedVariable):
    """A shared numpy array usable in expressions like any tensor variable (a TensorVariable)."""


@shared_constructor
def tensor_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False,
                       shape=None):
    """Make a TensorSharedVariable for numpy arrays, numpy scalars and Python numbers."""
    if isinstance(value, (bool, int, float, complex)):
        value = np.asarray(value, dtype=_python_scalar_dtype(value))
    elif isinstance(value, np.generic):
        value = np.asarray(value)
    elif isinstance(value, np.ndarray):
        value = value if borrow else value.copy()
    else:
        return NotImplemented
    if shape is None:
        shape = (None,) * value.ndim
    return TensorSharedVariable(TensorType(value.dtype, shape), value, strict=strict,
                                allow_downcast=allow_downcast, name=name)


def _python_scalar_dtype(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if not np.iinfo(np.int64).min <= value <= np.iinfo(np.int64).max:
            raise TypeError(f"the Python int {value} does not fit in int64")
        return "int64"
    if isinstance(value, float):
        return config.floatX
    return "complex128"
