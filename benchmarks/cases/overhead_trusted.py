"""Call overhead with ``trust_input = True`` (no input checks): ``f(x) = x + 1``, 10 floats.

The target (issue 5: "call overhead of ``x + 1`` <= 0.5x PyTensor C, and <= 0.3 us more with
``trust_input``", next to "numpy expression 0.6 us"): a trusted call costs at most 0.3 us more
than numpy evaluating ``x + 1`` itself. The ratio to PyTensor's trusted call is in the table
too. JAX by hand has no call without checks: its column repeats the checked call."""

import functools

from cases import overhead

NAME = "overhead_trusted"
TITLE = "call overhead, trust_input=True"
TARGET = ("numpy", 0.3e-6, "plus")
size = overhead.size
make_numpy = overhead.make_numpy
make_tensorgraph = functools.partial(overhead.tensorgraph_fn, trust=True)
make_pytensor = functools.partial(overhead.pytensor_fn, trust=True)
make_jax = overhead.make_jax   # jax.jit has no unchecked call: the same call as above
