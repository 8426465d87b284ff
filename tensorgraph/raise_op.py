"""``Assert``: a value passed through unchanged once run-time conditions hold.

Rewrites insert it where they rely on something they cannot prove when compiling, typically
that two sizes are equal (``x - x + y`` -> ``y`` assumes ``x`` did not broadcast ``y`` to a
larger shape). A failing condition raises ``AssertionError`` (or the ``error`` the rewrite
names, e.g. ``ValueError`` for tensordot's lengths, as numpy raises) with the rewrite's message
instead of silently computing something else, from ``perform`` and from the C alike. The ``unsafe`` preset removes these checks
(``local_remove_all_assert``); conditions proven true at compile time are dropped by every
preset (``local_useless_assert``).

It sits in the graph layer, as ``printing.Print`` does: a plain value given to it becomes a
tensor through ``tensorgraph.hooks.as_variable``, so it imports nothing of the tensor layer,
which imports it (``tensor.basic``, ``shape``, ``extra_ops``).
"""

from __future__ import annotations

import numpy as np

from tensorgraph import hooks
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.gradient_types import disconnected_type
from tensorgraph.graph.op import Op

__all__ = ["Assert", "CheckAndRaise", "assert_op"]


#: what a failing Assert may raise (the C names it by message prefix, see link/c/linkers.py)
ERRORS = {"AssertionError": AssertionError, "ValueError": ValueError}


class _Check(Op):
    """``x`` passed through (a view) once every 0-d bool condition holds; subclasses say what
    is raised otherwise (``_failure``)."""

    view_map = {0: [0]}

    def make_node(self, x, *conditions):
        x = hooks.as_variable(x)
        conds = [hooks.as_variable(c) for c in conditions]
        for c in conds:
            if c.ndim != 0 or c.dtype != "bool":
                raise TypeError(f"{self}: conditions must be 0-d bool tensors, got {c} "
                                f"({c.type})")
        return Apply(self, [x, *conds], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, *conds = inputs
        for k, c in enumerate(conds):
            if not bool(np.asarray(c)):
                raise self._failure(k)
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]] + [disconnected_type() for _ in inputs[1:]]


class CheckAndRaise(_Check):
    """PyTensor's general check: ``CheckAndRaise(exc_type, msg)(x, *conditions)`` is ``x``
    when every condition holds, else ``exc_type(msg)`` (any exception class). It runs in
    Python; ``Assert`` (AssertionError or ValueError) also has C."""

    __props__ = ("exc_type", "msg")

    def __init__(self, exc_type, msg: str = ""):
        if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
            raise TypeError(f"CheckAndRaise needs an exception class, got {exc_type!r}")
        if not isinstance(msg, str):
            raise TypeError(f"CheckAndRaise needs a str message, got {type(msg).__name__}")
        self.exc_type = exc_type
        self.msg = msg

    def __str__(self):
        return f"CheckAndRaise{{{self.exc_type.__name__}}}"

    def _failure(self, k):
        return self.exc_type(self.msg)


class Assert(CheckAndRaise):
    """``Assert(msg, error='AssertionError')(x, *conditions)``: ``x`` (a view of it) when every
    0-d condition is true, else ``error(msg)``."""

    __props__ = ("msg", "error")

    def __init__(self, msg: str = "assertion failed", error: str = "AssertionError"):
        if not isinstance(msg, str):
            raise TypeError(f"Assert needs a str message, got {type(msg).__name__}")
        if error not in ERRORS:
            raise ValueError(f"Assert: error must be one of {', '.join(ERRORS)}, got {error!r}")
        self.msg = msg
        self.error = error
        self.exc_type = ERRORS[error]

    def __str__(self):
        return "Assert"

    def _failure(self, k):
        return self.exc_type(f"{self.msg} (condition {k} is false)")


def assert_op(x, *conditions, msg: str = "assertion failed", error: str = "AssertionError"):
    """``x``, checked at run time: every condition (0-d bool) must be true, else ``error``."""
    return Assert(msg, error)(x, *conditions) if conditions else x
