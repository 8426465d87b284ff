"""Random draws (``tensorgraph.tensor.random``): distributions named after the methods of
``numpy.random.Generator``, and ``RandomStream`` (in ``.utils``) for draws that advance on
every call of a compiled function.

The draws have no C code: under every linker they run their ``perform``, which calls numpy's
``Generator`` (so a seed gives the same numbers in every mode, which a C port would have to
reproduce bit for bit); the C linkers run the rest of the graph around them.
"""

from tensorgraph.tensor.random.type import (  # noqa: F401  (registers shared(generator))
    RandomGeneratorSharedVariable,
    RandomGeneratorType,
    rng,
    shared_rng,
)
from tensorgraph.tensor.random.op import RandomVariable
from tensorgraph.tensor.random.basic import *  # noqa: F401,F403
from tensorgraph.tensor.random.basic import __all__ as _distributions
from tensorgraph.tensor.random.utils import RandomStream, broadcast_params

__all__ = ["RandomGeneratorSharedVariable", "RandomGeneratorType", "RandomVariable",
           "RandomStream", "broadcast_params", "rng", "shared_rng", *_distributions]
