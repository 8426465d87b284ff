"""The one lookup rule of every back end's op table (C, JAX, NUMBA, PYTORCH, their scalar
tables included).

An implementation is registered for an op class and serves its subclasses, but only those that
compute as the registered class does: a subclass that overrides one of the methods saying what
the op computes (``perform`` for an op, ``impl`` / ``compute`` for a scalar op) would otherwise
silently get its parent's result from the back end. Such a subclass needs an implementation of
its own; without one, it runs its ``perform`` (C, the Python VM) or is refused (whole-graph
back ends).
"""

from __future__ import annotations

__all__ = ["OP_SAME", "SCALAR_SAME", "nearest"]

#: the methods of an op that say what it computes
OP_SAME = ("perform",)
#: the methods of a scalar op that say what one element computes
SCALAR_SAME = ("impl", "compute")


def nearest(table: dict, op_class: type, same: tuple = OP_SAME):
    """The implementation ``table`` holds for the nearest class in ``op_class``'s MRO, or None
    if there is none or ``op_class`` computes otherwise than that class (one of the methods
    named in ``same`` is not that class's)."""
    for klass in op_class.__mro__:
        impl = table.get(klass)
        if impl is not None:
            if any(getattr(op_class, name, None) is not getattr(klass, name, None)
                   for name in same):
                return None
            return impl
    return None
