"""Linkers by name: ``get_linker('cvm')``, and ``register_linker`` for a back end's names.

A linker is any object with ``make_vm(fgraph, input_storage=None, storage_map=None)`` returning
a VM-like callable (see ``tensorgraph.link.vm.VM`` for the attributes modes and tools rely on).
Modes find linkers by name here, so a back end adds its names with ``register_linker`` instead
of editing the modes:

* here: 'py' and 'vm' (Python loop, gc per ``config.allow_gc``), 'vm_nogc' (never gc);
* the C backend registers 'c', 'c|py', 'c|py_nogc', 'cvm', 'cvm_nogc'; the whole-graph back
  ends 'jax', 'numba' and 'pytorch' (``link/jax``, ``link/numba``, ``link/pytorch``; they
  import their library only when a graph is linked). Their modules are listed in
  ``_LAZY_LINKER_MODULES`` so that asking for one of these names imports it on demand.

This is a module of its own, not the ``tensorgraph.link`` package: every module of the link
layer runs the package's ``__init__``, which would otherwise reach every back end through
this table (issue 32: the largest run-time import cycle spanned the whole link layer).
"""

from __future__ import annotations

import importlib

from tensorgraph.link.vm import PyVMLinker

__all__ = ["register_linker", "is_registered", "available_linkers", "get_linker"]

# name -> zero-argument factory returning a fresh linker
_LINKERS: dict = {}
# linker name -> module that registers it when imported (backends loaded on first use)
_LAZY_LINKER_MODULES: dict[str, str] = {
    name: "tensorgraph.link.c.linkers" for name in ("c", "c|py", "c|py_nogc", "cvm", "cvm_nogc")}
_LAZY_LINKER_MODULES.update({"jax": "tensorgraph.link.jax.linker",
                             "numba": "tensorgraph.link.numba.linker",
                             "pytorch": "tensorgraph.link.pytorch.linker"})


def register_linker(name: str, factory) -> None:
    """Make ``get_linker(name)`` return ``factory()``; re-registering a name replaces it."""
    if not callable(factory):
        raise TypeError(f"register_linker({name!r}, ...): factory must be callable, got "
                        f"{type(factory).__name__}")
    _LINKERS[name] = factory


def is_registered(name: str) -> bool:
    """Whether a linker of that name exists (importing its backend module if needed)."""
    if name not in _LINKERS and name in _LAZY_LINKER_MODULES:
        try:
            importlib.import_module(_LAZY_LINKER_MODULES[name])
        except ImportError:
            return False
    return name in _LINKERS


def available_linkers() -> list[str]:
    """The names ``get_linker`` accepts right now."""
    return sorted(n for n in set(_LINKERS) | set(_LAZY_LINKER_MODULES) if is_registered(n))


def get_linker(name: str):
    """A new linker for ``name``; a ``ValueError`` listing the known names if there is none."""
    if not isinstance(name, str):
        raise TypeError(f"a linker name must be a string, got {type(name).__name__}")
    if not is_registered(name):
        raise ValueError(f"linker {name!r} is not available; available linkers: "
                         f"{', '.join(available_linkers())}")
    return _LINKERS[name]()


register_linker("py", lambda: PyVMLinker(None, "py"))
register_linker("vm", lambda: PyVMLinker(None, "vm"))
register_linker("vm_nogc", lambda: PyVMLinker(False, "vm_nogc"))
