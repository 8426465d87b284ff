"""Call overhead with ``trust_input = True`` (no input checks): ``f(x) = x + 1``, 10 floats."""

import functools

from cases import overhead

NAME = "overhead_trusted"
TITLE = "call overhead, trust_input=True"
TARGET = ("pytensor", 0.5)
size = overhead.size
make_numpy = overhead.make_numpy
make_tensorgraph = functools.partial(overhead.tensorgraph_fn, trust=True)
make_pytensor = functools.partial(overhead.pytensor_fn, trust=True)
