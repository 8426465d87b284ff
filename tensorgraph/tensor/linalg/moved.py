"""The old module paths of the linear algebra names (``tensor.nlinalg``, ``tensor.slinalg``):
each name still reads, from ``tensorgraph.tensor.linalg``, with a DeprecationWarning that
says where it lives now (PyTensor 3 moved them the same way)."""

from __future__ import annotations

import warnings

from tensorgraph.tensor import linalg


def moved_names(module: str, names: tuple[str, ...]):
    """The ``__getattr__`` and ``__dir__`` of the old module ``module`` for ``names``."""
    known = frozenset(names)

    def __getattr__(name):
        if name not in known:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        pytensor_module = module.replace("tensorgraph", "pytensor", 1)
        warnings.warn(f"{module}.{name} moved: import it from tensorgraph.tensor.linalg, as "
                      f"PyTensor 3 moved {pytensor_module}.{name} to pytensor.tensor.linalg",
                      DeprecationWarning, stacklevel=2)
        return getattr(linalg, name)

    def __dir__():
        return sorted(known)

    return __getattr__, __dir__
