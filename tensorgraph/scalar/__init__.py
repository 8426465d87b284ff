"""Scalar ops: the elementwise computations that ``Elemwise`` maps over arrays."""

from tensorgraph.scalar.basic import *  # noqa: F401,F403
from tensorgraph.scalar.math import *  # noqa: F401,F403
