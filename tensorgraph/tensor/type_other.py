"""Graph values that are not tensors: ``None`` as a graph constant.

PyTensor code passes ``NoneConst`` where an optional input of an op is left out (a slice bound,
a random variable's ``size``) and asks ``get_underlying_scalar_constant_value(NoneConst)`` for
its value (``None``). ``NoneTypeT`` is its type: the only value it holds is ``None``.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant
from tensorgraph.graph.type import Type

__all__ = ["NoneTypeT", "none_type_t", "NoneConst"]


class NoneTypeT(Type):
    """The type whose only value is ``None``."""

    def filter(self, data, strict: bool = False, allow_downcast: bool | None = None):
        if data is not None:
            raise TypeError(f"NoneTypeT holds only None, got {data!r} ({type(data).__name__})")
        return None

    def values_eq(self, a, b) -> bool:
        return a is None and b is None

    def values_eq_approx(self, a, b) -> bool:
        return self.values_eq(a, b)

    def value_signature(self, data):
        return None

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "NoneTypeT"

    __repr__ = __str__


none_type_t = NoneTypeT()

#: ``None`` as a constant of the graph
NoneConst = Constant(none_type_t, None, name="NoneConst")
