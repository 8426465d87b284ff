"""Platform constants PyTensor code reads from ``pytensor.utils``.

``LOCAL_BITWIDTH`` is the width of a pointer (``size_t``): 64 on 64-bit platforms.
``PYTHON_INT_BITWIDTH`` is the width of numpy's default integer, the dtype a Python ``int``
becomes in an array (``np.array([1]).dtype``) and in ``shared(1)``: 64 on Linux and macOS, and
on Windows with numpy 2. (A Python int written into a graph as a constant takes the smallest
dtype holding it, ``int8`` for 3; see docs/porting.md.)
"""

import struct

import numpy as np

__all__ = ["LOCAL_BITWIDTH", "PYTHON_INT_BITWIDTH"]

LOCAL_BITWIDTH = struct.calcsize("P") * 8
PYTHON_INT_BITWIDTH = np.dtype(np.int_).itemsize * 8
