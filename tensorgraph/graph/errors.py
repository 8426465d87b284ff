"""One format for "this node failed" errors, used by test values, every linker and every mode.

Theano's "Apply node that caused the error" walls are hard to read. Here an error raised inside
a node is re-raised as the same exception type with a short paragraph: what failed, which node
(and its position in the toposort), the input shapes and dtypes, and the user's line where the
node was built. ``config.exception_verbosity='high'`` adds a debugprint of the node's inputs,
the frames where a rewrite made the node (``config.traceback__compile_limit``) and keeps the
original traceback chained. DebugMode and NanGuardMode build their reports with ``node_report``
so every mode speaks the same way.

Nodes made by rewrites during compilation have no user line of their own;
``inherit_user_traces`` (run by ``FunctionMaker`` after rewriting, over the rewrite history)
gives each one the lines of the user expressions it replaced, so a failure in a fused or
rewritten node still points at what the user wrote: the most telling line first (for a
``Gemv`` the ``tt.dot`` line rather than the ``grad`` line), the others after it. A node made
by a rewrite defined outside tensorgraph (the user's own) also keeps that rewrite's name and
location (``tag.made_by``), which the report adds as one more line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.ids import graph_ids
from tensorgraph.graph.utils import SourceFrame, format_user_line, other_user_lines


def describe_value(value) -> str:
    """``float32 (3, 4)`` for arrays, the type name and value for anything else."""
    if isinstance(value, np.ndarray) or np.isscalar(value) and hasattr(value, "dtype"):
        arr = np.asarray(value)
        return f"{arr.dtype} {tuple(arr.shape)}"
    if value is None:
        return "not computed"
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}"


def node_report(headline: str, node, input_values=None, position=None,
                verbosity: str | None = None, describe=describe_value, fgraph=None) -> str:
    """``headline`` followed by the node, its position, its inputs (``describe(value)`` each,
    or their types when no values are given) and the user's line; the node's id (the one
    ``dprint`` prints) when ``fgraph`` is given; with ``verbosity='high'``
    (default ``config.exception_verbosity``) also a debugprint of the inputs and the frames
    where compilation made the node."""
    verbosity = verbosity or config.exception_verbosity
    lines = [headline]
    where = f"  in node {node}"
    if fgraph is not None and node in fgraph.apply_nodes:
        where += f" [id {graph_ids(fgraph)[node]}]"
    if position is not None:
        where += f" (toposort position {position})"
    lines.append(where)
    shown = _shown_inputs(node, verbosity)
    if input_values is not None:
        parts = [f"{node.inputs[k]} {describe(input_values[k])}" for k in shown]
        lines.append("  inputs: " + ", ".join(parts) + _hidden_count(node, shown))
    else:
        parts = [f"{node.inputs[k]}: {node.inputs[k].type}" for k in shown]
        lines.append("  input types: " + ", ".join(parts) + _hidden_count(node, shown))
    user_line = format_user_line(node)
    lines.append(f"  created at {user_line}" if user_line else
                 "  created at an unknown line (set config.traceback__limit > 0 to record it)")
    others = other_user_lines(node)
    if others:
        lines.append("  also from: " + "; ".join(others))
    made_by = getattr(node.tag, "made_by", None)
    if made_by:  # by a rewrite of the user's (tensorgraph's own are not named)
        lines.append(f"  made by your rewrite {made_by}")
    if verbosity == "high":
        from tensorgraph.printing import debugprint

        lines.append("  inputs of the node:")
        text = debugprint(node.inputs, file="str", print_type=True)
        lines.extend("    " + line for line in text.rstrip().splitlines())
        compile_trace = getattr(node.tag, "compile_trace", ())
        if compile_trace:
            lines.append("  made during compilation at (innermost first):")
            lines.extend("    " + str(frame).replace("\n", "\n    ") for frame in compile_trace)
    return "\n".join(lines)


#: nodes with more inputs than this list only those the user named (rewrites fuse many
#: intermediates into one node; exception_verbosity='high' lists all)
_MAX_LISTED_INPUTS = 4


def _shown_inputs(node, verbosity) -> list[int]:
    """Positions of the inputs an error lists: all of them for small nodes, else the ones with
    a user name (x, w, ...)."""
    every = list(range(len(node.inputs)))
    if len(every) <= _MAX_LISTED_INPUTS or verbosity == "high":
        return every
    named = [k for k in every if getattr(node.inputs[k], "name", None)]
    return named or every[:_MAX_LISTED_INPUTS]


def _hidden_count(node, shown) -> str:
    hidden = len(node.inputs) - len(shown)
    return (f" (and {hidden} intermediate value{'s' if hidden != 1 else ''}; "
            "exception_verbosity='high' lists them)") if hidden else ""


def node_error_message(exc: BaseException, node, input_values=None, position=None,
                       verbosity: str | None = None, fgraph=None) -> str:
    """The short paragraph describing ``exc`` raised while computing ``node`` (its first line
    from ``node.op.error_headline`` when the op can say it in the user's names)."""
    headline = _headline_of(node, input_values) or f"{exc}".strip() or type(exc).__name__
    return node_report(headline, node, input_values, position, verbosity, fgraph=fgraph)


def _headline_of(node, input_values) -> str | None:
    if input_values is None or any(v is None for v in input_values):
        return None
    try:
        return node.op.error_headline(node, list(input_values))
    except Exception:  # noqa: BLE001 - a better wording must never hide the error itself
        return None


def reraise_with_node(exc: BaseException, node, input_values=None, position=None, fgraph=None):
    """Raise ``exc`` again, same type, with the node's description as its message (and
    ``.node``, ``.fgraph`` attributes, for tools that show the node)."""
    message = node_error_message(exc, node, input_values, position, fgraph=fgraph)
    try:
        new = type(exc)(message)
    except Exception:  # exception classes with unusual constructors keep their own message
        new = None
    if new is None or str(new) != message:
        raise exc
    new.node = node
    new.fgraph = fgraph
    new.__traceback__ = None
    if config.exception_verbosity == "high":
        raise new from exc
    raise new from None


@dataclass(frozen=True)
class Source:
    """A user expression a node came from: its innermost user frame (``frame``), the whole user
    trace, whether ``grad`` built it, and its op's family (see ``op_family``)."""

    frame: SourceFrame
    trace: tuple
    from_grad: bool
    family: str


_DOT_OPS = {"Dot", "Dot22", "Dot22Scalar", "Gemv", "Gemm", "Ger", "MatMul", "TensorDot",
            "BatchedDot", "Outer"}


def op_family(op) -> str:
    """What kind of computation an op is, to match a rewritten node with the user expression it
    mostly stands for (a ``Gemv`` with a ``dot``, a fused loop with an elementwise op)."""
    name = type(op).__name__
    if name in _DOT_OPS:
        return "dot"
    return "elemwise" if hasattr(op, "scalar_op") and not hasattr(op, "axis") else name


def sources_of(node) -> tuple:
    """The user expressions ``node`` came from (itself, when the user built it)."""
    sources = getattr(node.tag, "sources", None)
    if sources is not None:
        return sources
    trace = getattr(node.tag, "trace", ())
    if not trace:
        return ()
    return (Source(trace[0], trace, bool(getattr(node.tag, "from_grad", False)),
                   op_family(node.op)),)


def primary_source(node, sources):
    """The source that best names ``node``: of the same family and not built by ``grad``
    (``tt.dot(x, w)`` for a Gemv that also computes the gradient), else not built by ``grad``,
    else the first."""
    family = op_family(node.op)
    for accept in (lambda s: s.family == family and not s.from_grad,
                   lambda s: not s.from_grad, lambda s: True):
        for source in sources:
            if accept(source):
                return source
    return None


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _users_rewrite(step) -> bool:
    """Whether the step's rewrite is defined outside tensorgraph (a user's own rewrite)."""
    location = step.location
    return bool(location) and not location.startswith(_PACKAGE_DIR)


def inherit_user_traces(history) -> None:
    """Give the nodes rewriting created the user lines of the nodes their steps removed.

    Nodes made during compilation have no user line of their own. Replaying the rewrite
    history in order, each step's new nodes get the sources of every node the step removed
    (``tag.sources``, passed on through later steps: a fused ``Gemv`` pair keeps the line of
    ``tt.dot(x, w)`` from the Gemv it absorbed) and take the most telling one as their own
    ``tag.trace`` (``primary_source``); errors list the others briefly."""
    for step in history.steps:
        if _users_rewrite(step):
            for record in step.added:
                tag = record.node.tag
                if getattr(tag, "made_by", None) is None and not (
                        getattr(tag, "trace", ()) and getattr(tag, "sources", None) is None):
                    tag.made_by = f"{step.name} ({step.location})"  # named in its errors
        sources, seen = [], set()
        for record in step.removed:
            for source in sources_of(record.node):
                key = (source.frame.filename, source.frame.lineno, source.family)
                if key not in seen:
                    seen.add(key)
                    sources.append(source)
        if not sources:
            continue
        sources = tuple(sources)
        for record in step.added:
            node = record.node
            if getattr(node.tag, "trace", ()) and getattr(node.tag, "sources", None) is None:
                continue  # a node the user built (brought back by the step)
            node.tag.sources = sources
            node.tag.trace = primary_source(node, sources).trace
