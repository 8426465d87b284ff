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
)
from tensorgraph.tensor.random.op import RandomVariable
from tensorgraph.tensor.random.basic import (
    bernoulli,
    beta,
    binomial,
    choice,
    exponential,
    gamma,
    integers,
    normal,
    permutation,
    poisson,
    standard_normal,
    uniform,
)
from tensorgraph.tensor.random.utils import RandomStream

__all__ = [
    "RandomGeneratorSharedVariable", "RandomGeneratorType", "RandomVariable", "RandomStream",
    "bernoulli", "beta", "binomial", "choice", "exponential", "gamma", "integers", "normal",
    "permutation", "poisson", "standard_normal", "uniform",
]
