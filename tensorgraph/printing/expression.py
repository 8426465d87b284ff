"""``pp``: the expression a graph computes, written as math, ``(x + (y * 2))``; and
``min_informative_str``, a graph as short lettered lines.

How an op is written comes from a registry: ``pprint.assign(OpClass, printer)`` (other modules
register their ops there); elementwise ops are written from their scalar op's ``symbol``
(infix/prefix) or name (``exp(x)``); anything else falls back to ``Op(args)``.
"""

from __future__ import annotations

import itertools

from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.ids import id_letters
from tensorgraph.graph.op import Op


class OperatorPrinter:
    """Writes a node as ``(a op b op c)`` (or ``op a`` for one input), e.g. ``(x + y)``."""

    def __init__(self, symbol: str):
        self.symbol = symbol

    def __call__(self, node, args: list[str]) -> str:
        if len(args) == 1:
            return f"{self.symbol}{args[0]}"
        return "(" + f" {self.symbol} ".join(args) + ")"


class FunctionPrinter:
    """Writes a node as ``name(args, prop=value, ...)`` with the op's chosen props as keywords
    (props equal to None are left out): ``sum(x, axis=1)``."""

    def __init__(self, name: str, props: tuple[str, ...] = ()):
        self.name = name
        self.props = props

    def __call__(self, node, args: list[str]) -> str:
        parts = list(args)
        for prop in self.props:
            value = getattr(node.op, prop)
            if value is not None:
                parts.append(f"{prop}={value}")
        return f"{self.name}({_call_args(parts)})"


class PatternPrinter:
    """Writes a node from a %-pattern over its printed inputs, PyTensor's way:
    ``PatternPrinter(("|%(0)s - %(1)s|", -1000))`` prints ``|a - b|``. One pattern per output
    (a pattern is a string or a ``(string, precedence)`` pair; the precedence is kept for
    PyTensor code that reads it, the inputs arrive already parenthesized)."""

    def __init__(self, *patterns):
        if not patterns:
            raise TypeError("PatternPrinter needs at least one pattern")
        self.patterns = [(p, None) if isinstance(p, str) else tuple(p) for p in patterns]

    def __call__(self, node, args: list[str]) -> str:
        pattern = self.patterns[0][0]
        return pattern % {str(i): a for i, a in enumerate(args)}


class DefaultPrinter:
    """Writes a node as ``Op(args)`` (what ``pp`` writes for an op with no printer)."""

    def __call__(self, node, args: list[str]) -> str:
        return f"{node.op}({_call_args(args)})"


default_printer = DefaultPrinter()


def _takes_two(key) -> bool:
    import inspect

    try:
        return len(inspect.signature(key).parameters) == 2
    except (TypeError, ValueError):
        return False


class PPrinter:
    """The ``pp`` registry and printer. ``pprint.assign(key, printer)``: ``key`` is an Op class
    (applies to subclasses), an Op instance (that op), a predicate ``op -> bool`` or, as in
    PyTensor, ``(pstate, variable) -> bool``; ``printer(node, args) -> str`` gets the already
    printed inputs. A printer for an Op instance is used first; among the others, later
    assignments win."""

    def __init__(self):
        self.printers: list = []

    def assign(self, key, printer) -> None:
        self.printers.insert(0, (key, printer))

    def _find(self, op, var=None):
        # a printer given for this very op wins over classes and predicates (PyTensor keeps
        # those in a table it reads first)
        for key, printer in self.printers:
            if isinstance(key, Op) and op == key:
                return printer
        for key, printer in self.printers:
            if isinstance(key, type):
                if isinstance(op, key):
                    return printer
            elif isinstance(key, Op):
                continue
            elif _takes_two(key):
                if var is not None and key(None, var):
                    return printer
            elif key(op):
                return printer
        return None

    def node_text(self, node, args: list[str]) -> str:
        printer = self._find(node.op, node.outputs[0])
        if printer is not None:
            return printer(node, args)
        scalar_op = getattr(node.op, "scalar_op", None)
        if scalar_op is not None:
            printer = self._find(scalar_op)
            if printer is not None:
                return printer(node, args)
            symbol = getattr(scalar_op, "symbol", None)
            if symbol:
                return OperatorPrinter(symbol)(node, args)
            return f"{getattr(scalar_op, 'name', scalar_op)}({_call_args(args)})"
        return f"{node.op}({_call_args(args)})"

    def process(self, var, memo: dict) -> str:
        """The text of ``var``; ``memo`` caches nodes already written (shared subexpressions)."""
        if var in memo:
            return memo[var]
        stack = [var]
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            node = top.owner
            if node is None:
                memo[top] = _leaf_text(top)
                stack.pop()
                continue
            pending = [i for i in node.inputs if i not in memo]
            if pending:
                stack.extend(reversed(pending))
                continue
            text = self.node_text(node, [memo[i] for i in node.inputs])
            for out in node.outputs:
                memo[out] = text if len(node.outputs) == 1 else f"{text}[{out.index}]"
            stack.pop()
        return memo[var]

    def __call__(self, obj) -> str:
        """``obj`` (a variable, a list of them, a FunctionGraph or a compiled function) as
        math; several outputs give one line each."""
        from tensorgraph.graph.fg import FunctionGraph

        if isinstance(obj, Variable):
            return self.process(obj, {})
        if isinstance(obj, FunctionGraph):
            obj = obj.outputs
        elif hasattr(obj, "maker") and hasattr(obj.maker, "fgraph"):
            obj = obj.maker.fgraph.outputs
        memo: dict = {}
        return "\n".join(self.process(v, memo) for v in obj)


def _call_args(args: list[str]) -> str:
    """Arguments of ``f(...)``; a lone ``(a + b)`` loses its now redundant parentheses."""
    if len(args) == 1 and _is_wrapped(args[0]):
        return args[0][1:-1]
    return ", ".join(args)


def _is_wrapped(text: str) -> bool:
    """Whether ``text`` is one parenthesized group, like ``(a + (b * c))``."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    level = 0
    for k, char in enumerate(text):
        level += char == "("
        level -= char == ")"
        if level == 0 and k < len(text) - 1:
            return False
    return True


def _leaf_text(var) -> str:
    if isinstance(var, Constant) or var.name is not None:
        return str(var)
    return f"<{var.type}>"


def _only_broadcasts(op) -> bool:
    """A DimShuffle that keeps the order of the dimensions and only adds or drops size-1 ones:
    as math it is the same value, so ``pp`` leaves it out."""
    kept = [d for d in op.new_order if d != "x"]
    return kept == sorted(kept)


def _dimshuffle_text(node, args):
    op = node.op
    if _only_broadcasts(op):
        return args[0]
    if op.new_order == (1, 0):
        return f"{args[0]}.T"
    return f"{args[0]}.dimshuffle{op.new_order}"


def _reduction_text(node, args):
    """``sum(x, axis=1)``: a reduction named after its class, the axis left out when it spans
    every dimension."""
    op = node.op
    name = type(op).__name__.lower()
    if name == "careduce":
        name = f"reduce_{op.scalar_op}"
    axis = op.axis
    ndim = getattr(node.inputs[0].type, "ndim", None)
    if axis is None or (ndim is not None and sorted(axis) == list(range(ndim))):
        return f"{name}({_call_args(args)})"
    axis = axis[0] if len(axis) == 1 else tuple(axis)
    return f"{name}({_call_args(args)}, axis={axis})"


def min_informative_str(obj, indent_level: int = 0, _prev_obs=None, _tag_generator=None) -> str:
    """The graph of ``obj`` (a variable or an Apply) as short lines ``A. Add``: each variable
    gets a letter; a named variable prints its name and is not expanded (the name says what it
    is), one seen before prints its letter only; children are indented one space."""
    prev = {} if _prev_obs is None else _prev_obs
    tags = iter(id_letters(k) for k in itertools.count()) if _tag_generator is None \
        else _tag_generator
    pad = " " * indent_level
    if obj in prev:
        return pad + prev[obj]
    tag = next(tags)
    prev[obj] = tag
    node = obj if isinstance(obj, Apply) else obj.owner
    if isinstance(obj, Variable) and (obj.name is not None or node is None):
        return f"{pad}{tag}. {obj.name if obj.name is not None else obj}"
    label = type(node.op).__name__
    scalar_op = getattr(node.op, "scalar_op", None)
    if scalar_op is not None:
        label = type(scalar_op).__name__
    lines = [f"{pad}{tag}. {label}"]
    lines += [min_informative_str(i, indent_level + 1, prev, tags) for i in node.inputs]
    return "\n".join(lines)


pprint = PPrinter()
# ops of tensorgraph.tensor, recognised by shape so that printing never imports tensor modules
pprint.assign(lambda op: type(op).__name__ == "DimShuffle", _dimshuffle_text)
pprint.assign(lambda op: hasattr(op, "scalar_op") and hasattr(op, "axis"), _reduction_text)
pp = pprint
