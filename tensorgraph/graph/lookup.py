"""The one rule by which anything registered for an op class reaches its subclasses: every back
end's op table (C, JAX, NUMBA, PYTORCH, their scalar tables included), the rewrites that track
an op class, and the batching rules of ``vectorize_graph``.

Something registered for a class serves its subclasses, but only those that compute as that
class does: a subclass that overrides one of the methods saying what the op computes
(``perform`` for an op, ``impl`` / ``compute`` for a scalar op) would otherwise silently get
its parent's result from a back end, or its parent's algebra from a rewrite (``log`` of a
user's ``Softmax`` subclass turned into ``LogSoftmax``). Such a subclass needs an
implementation of its own; without one it runs its ``perform`` (C, the Python VM), is refused
(whole-graph back ends), is left alone by the parent's rewrites and is batched as a
``Blockwise``.

tensorgraph's own op classes are written with their parents' registrations in mind (tested by
their own tests and DebugMode), so the rule judges only the classes between the registered one
and the op's class that are defined outside the package.
"""

from __future__ import annotations

import functools

__all__ = ["OP_SAME", "SCALAR_SAME", "computes_as", "nearest"]

#: the methods of an op that say what it computes
OP_SAME = ("perform",)
#: the methods of a scalar op that say what one element computes
SCALAR_SAME = ("impl", "compute")


def _own(klass: type) -> bool:
    return klass.__module__.split(".", 1)[0] == "tensorgraph"


@functools.cache  # asked per node by rewrites and table lookups, for a few classes
def computes_as(op_class: type, klass: type, same: tuple = OP_SAME) -> bool:
    """Whether ``op_class`` (a subclass of ``klass``, or ``klass``) computes as ``klass`` does:
    no class of its MRO below ``klass`` and defined outside tensorgraph defines one of the
    methods named in ``same``."""
    if not issubclass(op_class, klass):
        return False
    for sub in op_class.__mro__:
        if sub is klass:
            return True
        if not _own(sub) and any(name in vars(sub) for name in same):
            return False
    return True


def nearest(table: dict, op_class: type, same: tuple = OP_SAME):
    """What ``table`` holds for the nearest class in ``op_class``'s MRO, or None if there is
    none or ``op_class`` computes otherwise than that class (``computes_as``)."""
    for klass in op_class.__mro__:
        impl = table.get(klass)
        if impl is not None:
            return impl if computes_as(op_class, klass, same) else None
    return None
