"""How ops run in C: one table from op class to its C implementation.

An op says *what* it computes (``make_node``, ``perform``, ``infer_shape``, ``grad``); *how* a
back end runs it lives with that back end. For C that is this package: a ``CImplementation``
per op class, registered with ``@register(OpClass)``. The modules of this package hold the
implementations of tensorgraph's own ops, one module per family (elementwise, reductions,
BLAS, indexing, ...); large static C lives in real ``.h`` files beside them, read with
``read_c``.

A user's op gets C the same way::

    from tensorgraph.link.c.ops import CImplementation, register

    @register(Double)
    class DoubleC(CImplementation):
        def code(self, op, node, name, inputs, outputs, sub):
            ...

or by subclassing ``tensorgraph.link.c.op.COp`` and defining PyTensor's ``c_code`` methods on
the op, which registers them here when the class is created (see docs/extending.md).

Lookup follows the op's class hierarchy: an implementation registered for a base class serves
its subclasses that register none of their own, as long as they compute as the base class does
(``tensorgraph.graph.lookup``, the rule of every back end's table): a subclass with its own
``perform`` runs it, never its parent's C. Codegen asks ``implementation(op)`` (None: the op
has no C; its ``perform`` runs).
"""

from __future__ import annotations

import os

from tensorgraph.graph.registry import Registry

__all__ = ["CImplementation", "register", "implementation", "read_c", "TABLE"]

_HERE = os.path.dirname(__file__)
#: the modules holding tensorgraph's own implementations, imported on the first lookup
_BUILTIN = ("reduction", "special", "subtensor", "advanced_index", "join", "shape", "creation",
            "raise_op", "blas", "dot", "elemwise", "scalar_special", "batched", "linalg",
            "linalg_spectral", "special_functions", "extra")


class CImplementation:
    """How the nodes of one op class compute in C. Every method gets the op (its props say
    what to generate) and, where it matters, the node (its types).

    ``perform_exact``: the op's ``perform`` gives the C's bits whatever the inputs (copies,
    indexing, shapes, integer results), so the quick tier may run it (link/c/quick.py);
    ``tests/link/test_tier_bits.py`` checks it."""

    perform_exact = False

    def code(self, op, node, name: str, inputs: list[str], outputs: list[str],
             sub: dict) -> str | None:
        """The body of the node's C function: ``inputs`` / ``outputs`` are C expressions of
        the operands (``tg_array *``), ``sub`` holds ``fail`` (the statement that fails the
        node after ``tg_error``) and ``ctx``. None, or raising NotImplementedError, declines
        this node (its ``perform`` runs)."""
        raise NotImplementedError

    def support_code(self, op, node) -> str:
        """C placed before the node functions of a unit (helpers, once per unit)."""
        return ""

    def headers(self, op, node) -> list[str]:
        """Headers to include (``<math.h>`` or ``"file.h"``)."""
        return []

    def libraries(self, op, node) -> list[str]:
        return []

    def library_dirs(self, op, node) -> list[str]:
        return []

    def include_dirs(self, op, node) -> list[str]:
        return []

    def compile_args(self, op, node) -> list[str]:
        return []

    def complex_operands(self, op) -> bool:
        """Whether this C reads and writes complex64 / complex128 operands of ``op`` (as
        pairs of floats); the nodes of other ops with complex operands run ``perform``."""
        return False

    def cacheable(self, op) -> bool:
        """Whether compiled code may be kept on disk for other processes: its text (hashed
        into the cache key) says everything. False for code that depends on something the
        text does not show."""
        return True

    def key(self, op) -> str:
        """Text hashed into the node function's name besides its C (a version, say)."""
        return ""


def _instance(op_class: type, impl_class) -> CImplementation:
    """What ``@register(OpClass)`` stores: an instance of the decorated class, which must be a
    ``CImplementation`` subclass."""
    if not (isinstance(impl_class, type) and issubclass(impl_class, CImplementation)):
        raise TypeError(f"@register({op_class.__name__}) decorates a CImplementation "
                        f"subclass, got {impl_class!r}")
    return impl_class()


#: op class -> its ``CImplementation`` instance (``COp`` classes ``TABLE.add`` themselves)
TABLE = Registry("C", __name__, _BUILTIN, make=_instance)


def register(op_class: type):
    """Class decorator: ``@register(OpClass)`` makes an instance of the decorated
    ``CImplementation`` subclass the C of ``OpClass`` (and of its subclasses that register
    nothing of their own). Registering a class again replaces its implementation."""
    return TABLE.register(op_class)


def implementation(op) -> CImplementation | None:
    """The C implementation of ``op``'s class (the nearest registered class in its MRO, if
    ``op``'s class computes as that one does), or None."""
    return TABLE.lookup(op)


_C_FILES: dict[str, str] = {}


def read_c(name: str) -> str:
    """The text of a C file shipped beside the implementations (``ops/<name>``)."""
    text = _C_FILES.get(name)
    if text is None:
        with open(os.path.join(_HERE, name), encoding="utf-8") as f:
            text = _C_FILES[name] = f.read()
    return text
