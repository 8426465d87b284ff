"""Scalar ops (the elementwise computations that ``Elemwise`` maps over arrays), the scalar
types named by dtype (``int32``, ``float64``, ...) and scalar variables with Python operators,
as PyTensor's ``pytensor.scalar`` has them."""

from tensorgraph.scalar.basic import *  # noqa: F401,F403
from tensorgraph.scalar.math import *  # noqa: F401,F403
from tensorgraph.scalar.int_division import IntDivisionWarning  # noqa: F401
from tensorgraph.scalar.special_functions import *  # noqa: F401,F403
