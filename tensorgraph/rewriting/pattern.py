"""``PatternNodeRewriter``: algebraic rules written as nested tuples.

``PatternNodeRewriter((mul, "x", 1), "x")`` replaces ``x * 1`` with ``x``. A pattern is

* a tuple ``(op, *sub_patterns)``: a node whose op equals ``op`` (an Op instance) or is an
  instance of it (an Op class), with exactly that many inputs, each matching its sub-pattern;
* a string: any variable, bound to that name (the same name twice must be the same variable);
* a number or array: a constant whose every element equals it (``1`` matches a ``(1, 1)`` array
  of ones);
* a dict ``{"pattern": p, "constraint": fn}``: ``p`` where ``fn(variable)`` is also true.

The replacement is a pattern of the same kind built with the bound variables (tuples call the
op), or a callable ``fn(**bindings)`` returning a variable. The rule is skipped, not an error,
when the replacement's type does not fit where the matched variable was (e.g. ``x * 1`` where
the constant broadcasts ``x`` to a larger shape).
"""

from __future__ import annotations

import sys

import numpy as np

from tensorgraph.graph.basic import Constant, Variable
from tensorgraph.rewriting.basic import NodeRewriter

__all__ = ["PatternNodeRewriter"]


def _pattern_str(pattern) -> str:
    if isinstance(pattern, tuple):
        op = pattern[0]
        name = op.__name__ if isinstance(op, type) else str(op)
        return f"{name}({', '.join(_pattern_str(p) for p in pattern[1:])})"
    if isinstance(pattern, dict):
        return _pattern_str(pattern["pattern"])
    if callable(pattern):
        return getattr(pattern, "__name__", "fn")
    return str(pattern)


class PatternNodeRewriter(NodeRewriter):
    """Replace what matches ``in_pattern`` with ``out_pattern`` (see the module docstring).

    ``allow_multiple_clients``: by default an inner matched node used elsewhere too blocks the
    match, since rewriting would then compute it twice.
    """

    def __init__(self, in_pattern, out_pattern, allow_multiple_clients: bool = False,
                 name: str | None = None):
        if not isinstance(in_pattern, tuple) or not in_pattern:
            raise TypeError(f"in_pattern must be a tuple (op, *sub_patterns), got {in_pattern!r}")
        self.in_pattern = in_pattern
        self.out_pattern = out_pattern
        self.allow_multiple_clients = allow_multiple_clients
        self.name = name or f"{_pattern_str(in_pattern)} -> {_pattern_str(out_pattern)}"
        caller = sys._getframe(1)
        self._source = (caller.f_code.co_filename, caller.f_lineno)

    def tracks(self):
        return [self.in_pattern[0]]

    def transform(self, fgraph, node):
        bindings = {}
        if not self._match_node(fgraph, node, self.in_pattern, bindings, top=True):
            return None
        new = self._build(self.out_pattern, bindings)
        if not isinstance(new, Variable):
            return None
        old = node.outputs[0]
        converted = old.type.convert_variable(new)
        if converted is None:
            return None
        return [converted] + [None] * (len(node.outputs) - 1)

    # -- matching ------------------------------------------------------------------------

    def _match_node(self, fgraph, node, pattern, bindings, top=False) -> bool:
        op, subs = pattern[0], pattern[1:]
        if isinstance(op, type):
            if not isinstance(node.op, op):
                return False
        elif node.op != op:
            return False
        if len(node.inputs) != len(subs):
            return False
        if not top and not self.allow_multiple_clients:
            if any(len(fgraph.clients.get(o, ())) > 1 for o in node.outputs):
                return False
        return all(self._match(fgraph, var, sub, bindings) for var, sub in zip(node.inputs, subs))

    def _match(self, fgraph, var, pattern, bindings) -> bool:
        if isinstance(pattern, tuple):
            return var.owner is not None and self._match_node(fgraph, var.owner, pattern, bindings)
        if isinstance(pattern, str):
            if pattern in bindings:
                return bindings[pattern] is var
            bindings[pattern] = var
            return True
        if isinstance(pattern, dict):
            return (self._match(fgraph, var, pattern["pattern"], bindings)
                    and bool(pattern["constraint"](var)))
        if isinstance(var, Constant):
            data = np.asarray(var.data)
            return data.size > 0 and bool(np.all(data == pattern))
        return False

    # -- building ------------------------------------------------------------------------

    def _build(self, pattern, bindings):
        if isinstance(pattern, tuple):
            args = [self._build(p, bindings) for p in pattern[1:]]
            return pattern[0](*args)
        if isinstance(pattern, str):
            return bindings[pattern]
        if isinstance(pattern, dict):
            return self._build(pattern["pattern"], bindings)
        if callable(pattern):
            return pattern(**bindings)
        return pattern
