"""The types of gradients that hold no value: ``DisconnectedType`` (no path from the input to
the outputs) and ``NullType`` (a gradient that is undefined or not implemented).

They are graph objects, below the tensor layer, so that an op with no tensor code of its own
(``raise_op.Assert``, whose conditions have no gradient) can say so in its ``L_op`` without
importing ``tensorgraph.gradient``; ``gradient`` uses them and keeps their names.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Variable
from tensorgraph.graph.type import Type

__all__ = ["DisconnectedType", "disconnected_type", "NullType"]


class DisconnectedType(Type):
    """Type of the gradient of an input that does not influence the outputs.

    Such variables have no value; they only carry the information "no path" through ``grad``.
    """

    def filter(self, data, strict=False, allow_downcast=None):
        raise TypeError("a DisconnectedType variable marks a missing gradient path and holds "
                        "no value; it cannot be computed")

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "DisconnectedType"


def disconnected_type() -> Variable:
    """A fresh variable meaning "this input is disconnected from the outputs" (for ``L_op``)."""
    return DisconnectedType()()


class NullType(Type):
    """Type of an undefined gradient; ``why_null`` says why (shown in the error ``grad`` raises)."""

    def __init__(self, why_null: str = "(no explanation given)"):
        self.why_null = why_null

    def filter(self, data, strict=False, allow_downcast=None):
        raise TypeError(f"a NullType variable (undefined gradient) holds no value: {self.why_null}")

    def __eq__(self, other):
        return type(self) is type(other) and self.why_null == other.why_null

    def __hash__(self):
        return hash((type(self), self.why_null))

    def __str__(self):
        return "NullType"
