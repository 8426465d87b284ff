"""Shared variables where PyTensor code imports them (``pytensor.compile.sharedvalue``).

They are defined in the graph layer (``tensorgraph.graph.shared``); importing them from here
also registers the tensor constructors, so ``shared(array)`` gives a tensor.
"""

import tensorgraph.tensor.sharedvar  # noqa: F401  (registers shared(array), shared(number))
from tensorgraph.graph.shared import (
    Container, SharedVariable, copy_value, generic_constructor, shared, shared_constructor,
)

__all__ = ["Container", "SharedVariable", "copy_value", "generic_constructor", "shared",
           "shared_constructor"]
