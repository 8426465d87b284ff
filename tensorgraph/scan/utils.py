"""Small pieces of scan shared by the builder, the op and its gradient.

``until(condition)``: returned by a step function (with its outputs) to stop the loop after
the step where ``condition`` is true, as in Theano and PyTensor (``n_steps`` is then a bound).
"""

from __future__ import annotations

import tensorgraph.tensor as tt
from tensorgraph.graph.basic import Variable

__all__ = ["until"]


class until:
    """Stop the scan after the current step when ``condition`` (a scalar) is true.

    The step that makes the condition true is kept in the outputs.
    """

    def __init__(self, condition):
        condition = condition if isinstance(condition, Variable) else tt.as_tensor_variable(
            condition)
        if getattr(condition.type, "ndim", None) != 0:
            raise TypeError(f"until: the condition must be a scalar, got {condition} of type "
                            f"{condition.type}; reduce it (e.g. tt.all(...)) first")
        dtype = condition.type.dtype
        if dtype.startswith("complex"):
            raise TypeError(f"until: the condition must be a boolean or real scalar, got "
                            f"{condition.type}")
        self.condition = condition if dtype == "bool" else tt.neq(condition, 0)

    def __repr__(self):
        return f"until({self.condition})"


def label(var, fallback: str) -> str:
    """How messages name a user's variable: its name, else ``fallback``."""
    name = getattr(var, "name", None)
    return name if name else fallback


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
