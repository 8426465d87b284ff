"""The one table from op class to "how this back end runs it": every back end's op table (C,
JAX, NUMBA, PYTORCH), their scalar tables and the batching rules of ``vectorize_graph`` are
instances of ``Registry``, so they register, look up and load the same way.

Why one class: the tables used to be four hand-written dicts with different inheritance rules
(one of them let a user's subclass silently run its parent's C). Now each is a ``Registry``:

* ``@table.register(OpClass)`` makes the decorated implementation ``OpClass``'s (the
  decorated object is returned unchanged, so a class stays usable); a ``make`` hook given to
  the table turns it into what the table stores (C stores an instance of the decorated
  ``CImplementation`` subclass and checks that it is one). ``table.add(OpClass, value)`` stores
  an already made value.
* ``table.lookup(op)`` finds the implementation of the nearest registered class in ``op``'s
  MRO, by the rule of ``tensorgraph.graph.lookup``: only when ``op``'s class computes as that
  class does (the methods named in ``same``), so a subclass overriding ``perform`` gets its own
  entry or runs its ``perform``.
* ``builtin`` names the modules of ``package`` that register tensorgraph's own ops; they are
  imported on the first lookup (``import tensorgraph`` stays fast, and a back end's library is
  imported only when a graph is compiled for it).
* Registration and the first load take a lock: any thread may register or look up.

One signature family for what is registered: an implementation is called with the op, then
what the table is about (the node; the dtypes for a scalar op), then the back end's context:

=============  ===============================================  ==============================
table          op implementation                                scalar op implementation
=============  ===============================================  ==============================
C              ``code(op, node, name, inputs, outputs, sub)``   ``(op, in_dtypes, out_dtypes,
               (a ``CImplementation`` method)                   args) -> C expression``
NUMBA          ``impl(op, node, code)`` (writes the node's      ``(op, in_dtypes, out_dtypes,
               lines into ``code``)                             args, code) -> expression``
JAX, PyTorch   ``impl(op, node) -> function of the inputs``     ``(op, in_dtypes, out_dtypes)
                                                                -> function of the inputs``
vectorize      ``rule(op, node, *batched_inputs)``              (none)
=============  ===============================================  ==============================

Raising ``NotImplementedError(reason)`` from an implementation declines that node (C runs
its ``perform``; a whole-graph back end names the reason in its ``UnsupportedOpsError``).
"""

from __future__ import annotations

import importlib
import threading

from tensorgraph.graph.lookup import OP_SAME, SCALAR_SAME, nearest

__all__ = ["Registry"]


class Registry:
    """Op class -> implementation, for one back end or rule set (see the module docstring).

    ``name`` says whose table it is (errors name it); ``package`` and ``builtin`` name the
    modules imported on the first lookup; ``same`` the methods a subclass must not override to
    inherit an entry (``OP_SAME`` or ``SCALAR_SAME``); ``make(op_class, impl)`` turns a
    decorated implementation into the stored value (default: stored as it is).
    """

    def __init__(self, name: str, package: str = "", builtin: tuple = (),
                 same: tuple = OP_SAME, make=None):
        self.name = name
        self.package = package
        self.builtin = tuple(builtin)
        self.same = tuple(same)
        self._make = make
        self._table: dict = {}
        self._loaded = not self.builtin
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Registry({self.name!r}, {len(self._table)} entries)"

    def register(self, op_class: type):
        """Decorator: ``@register(OpClass)`` makes the decorated implementation ``OpClass``'s
        (and its subclasses' that compute as it does). Registering a class again replaces its
        implementation."""
        _check_class(self.name, op_class)

        def decorate(impl):
            value = impl if self._make is None else self._make(op_class, impl)
            with self._lock:
                self._table[op_class] = value
            return impl

        return decorate

    def add(self, op_class: type, value) -> None:
        """Store ``value`` (already made: no ``make`` hook) as ``op_class``'s implementation."""
        _check_class(self.name, op_class)
        with self._lock:
            self._table[op_class] = value

    def lookup(self, op):
        """The implementation registered for ``op``'s class or its nearest base class that
        ``op``'s class computes as, or None."""
        if not self._loaded:
            self._load_builtin()
        return nearest(self._table, type(op), self.same)

    def registered(self) -> list[type]:
        """The op classes with an implementation (the built-in ones included)."""
        if not self._loaded:
            self._load_builtin()
        with self._lock:
            return list(self._table)

    def _load_builtin(self) -> None:
        # an RLock: a builtin module may look something up while it is being imported
        with self._lock:
            if self._loaded:
                return
            for module in self.builtin:
                importlib.import_module(f"{self.package}.{module}")
            self._loaded = True


#: the modules of a whole-graph back end's package that fill its tables (JAX, NUMBA, PYTORCH)
BACKEND_MODULES = ("elemwise", "shape", "indexing", "reduction", "dot", "control", "random",
                   "scan", "linalg")


def backend_tables(name: str, package: str) -> tuple[Registry, Registry]:
    """A whole-graph back end's two tables: op class -> its implementation, and scalar op
    class -> the scalar function an ``Elemwise`` of it maps (looked up with the scalar rule),
    both filled by ``BACKEND_MODULES`` of ``package``."""
    return (Registry(name, package, BACKEND_MODULES),
            Registry(f"{name} scalar", package, BACKEND_MODULES, same=SCALAR_SAME))


def _check_class(name: str, op_class) -> None:
    if not isinstance(op_class, type):
        raise TypeError(f"{name} register() takes an op class, got {op_class!r} "
                        f"(a {type(op_class).__name__})")
