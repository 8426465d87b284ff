"""Platform constants and small helpers PyTensor code reads from ``pytensor.utils``.

``LOCAL_BITWIDTH`` is the width of a pointer (``size_t``): 64 on 64-bit platforms.
``PYTHON_INT_BITWIDTH`` is the width of numpy's default integer, the dtype a Python ``int``
becomes in an array (``np.array([1]).dtype``) and in ``shared(1)``: 64 on Linux and macOS, and
on Windows with numpy 2. (A Python int written into a graph as a constant takes the smallest
dtype holding it, ``int8`` for 3; see docs/porting.md.)

``to_return_values`` / ``from_return_values`` convert between a list of output values and
what a one-output callable returns (the value itself), as the linkers' ``make_function`` does.
"""

import struct

import numpy as np

__all__ = ["LOCAL_BITWIDTH", "PYTHON_INT_BITWIDTH", "from_return_values", "to_return_values"]

LOCAL_BITWIDTH = struct.calcsize("P") * 8
PYTHON_INT_BITWIDTH = np.dtype(np.int_).itemsize * 8


def to_return_values(values):
    """The single value of a one-element list (or tuple), else ``values`` unchanged."""
    return values[0] if len(values) == 1 else values


def from_return_values(values):
    """The inverse of ``to_return_values``: a list or tuple unchanged, anything else wrapped
    in a one-element list."""
    return values if isinstance(values, (list, tuple)) else [values]
