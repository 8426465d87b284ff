"""The optional libraries of the back ends (jax, numba, torch): whether one is installed, and
importing it with an ImportError naming the extra that installs it."""

from __future__ import annotations

import importlib
import importlib.util

__all__ = ["available", "require"]

def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None


def require(module: str, extra: str, mode: str):
    """Import ``module``, or an ImportError saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"mode {mode} needs {module}, which is not installed here ({exc}); "
                          f"install it with: pip install tensorgraph[{extra}]") from None
