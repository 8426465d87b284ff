"""numpy's integer rules for the back ends whose libraries differ from it (JAX, PyTorch,
Numba): one answer per op in every mode, FAST_RUN's (numpy's) being the model.

numpy's rules: integers wrap around; ``x // 0 == x % 0 == 0``; ``INT_MIN // -1 == INT_MIN``
and ``INT_MIN % -1 == 0``; an integer to a negative integer power is a ValueError. Here are
the parts the back ends share: the error's message and an integer power that reads every bit
of the exponent (``jnp.power`` reads only its low six).
"""

from __future__ import annotations

import numpy as np

__all__ = ["NEGATIVE_POWER", "negative_exponents", "power"]

#: numpy's message for an integer to a negative integer power (``np.power``'s ValueError)
NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def negative_exponents(exponent, dtype: str):
    """Where an exponent of the integer ``dtype`` is negative (None for an unsigned or a
    float dtype, which has no such error)."""
    if np.dtype(dtype).kind != "i":
        return None
    return exponent < 0


def power(xp, base, exponent, dtype: str):
    """``base ** exponent`` of two integer arrays of ``dtype`` with ``exponent >= 0``, wrapping
    as numpy's: square and multiply over every bit of the exponent. ``xp``: the array library
    (``where``, ``ones_like``)."""
    result = xp.ones_like(base)
    for _ in range(np.dtype(dtype).itemsize * 8 - (np.dtype(dtype).kind == "i")):
        result = xp.where((exponent & 1) == 1, result * base, result)
        base = base * base
        exponent = exponent >> 1
    return result
