"""One format for "this node failed" errors, used by test values, every linker and every mode.

Theano's "Apply node that caused the error" walls are hard to read. Here an error raised inside
a node is re-raised as the same exception type with a short paragraph: what failed, which node
(and its position in the toposort), the input shapes and dtypes, and the user's line where the
node was built. ``config.exception_verbosity='high'`` adds a debugprint of the node's inputs,
the frames where a rewrite made the node (``config.traceback__compile_limit``) and keeps the
original traceback chained. DebugMode and NanGuardMode build their reports with ``node_report``
so every mode speaks the same way.

Nodes made by rewrites during compilation have no user line of their own; ``InheritUserTrace``
(attached by ``FunctionMaker`` while it rewrites) gives each one the user trace of the node it
replaces, so a failure in a fused or rewritten node still points at the expression the user
wrote.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.fg import Feature
from tensorgraph.graph.utils import format_user_line


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
                verbosity: str | None = None, describe=describe_value) -> str:
    """``headline`` followed by the node, its position, its inputs (``describe(value)`` each,
    or their types when no values are given) and the user's line; with ``verbosity='high'``
    (default ``config.exception_verbosity``) also a debugprint of the inputs and the frames
    where compilation made the node."""
    from tensorgraph.configdefaults import config

    verbosity = verbosity or config.exception_verbosity
    lines = [headline]
    where = f"  in node {node}"
    if position is not None:
        where += f" (toposort position {position})"
    lines.append(where)
    if input_values is not None:
        parts = [f"{var} {describe(val)}" for var, val in zip(node.inputs, input_values)]
        lines.append("  inputs: " + ", ".join(parts))
    else:
        parts = [f"{var}: {var.type}" for var in node.inputs]
        lines.append("  input types: " + ", ".join(parts))
    user_line = format_user_line(node)
    lines.append(f"  created at {user_line}" if user_line else
                 "  created at an unknown line (set config.traceback__limit > 0 to record it)")
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


def node_error_message(exc: BaseException, node, input_values=None, position=None,
                       verbosity: str | None = None) -> str:
    """The short paragraph describing ``exc`` raised while computing ``node``."""
    headline = f"{exc}".strip() or type(exc).__name__
    return node_report(headline, node, input_values, position, verbosity)


def reraise_with_node(exc: BaseException, node, input_values=None, position=None):
    """Raise ``exc`` again, same type, with the node's description as its message."""
    from tensorgraph.configdefaults import config

    message = node_error_message(exc, node, input_values, position)
    try:
        new = type(exc)(message)
    except Exception:  # exception classes with unusual constructors keep their own message
        new = None
    if new is None or str(new) != message:
        raise exc
    new.node = node
    new.__traceback__ = None
    if config.exception_verbosity == "high":
        raise new from exc
    raise new from None


class InheritUserTrace(Feature):
    """Give nodes that compilation created (empty ``tag.trace``) the user trace of the node
    whose output they replace, so errors in rewritten graphs name the user's line."""

    def on_change_input(self, fgraph, node, i, old, new, reason):
        if old.owner is None or new.owner is None:
            return
        trace = getattr(old.owner.tag, "trace", ())
        if not trace:
            return
        stack = [new.owner]
        while stack:
            current = stack.pop()
            if getattr(current.tag, "trace", ()):
                continue
            current.tag.trace = trace
            stack.extend(inp.owner for inp in current.inputs if inp.owner is not None)
