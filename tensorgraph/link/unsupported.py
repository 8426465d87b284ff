"""Why a whole-graph back end (JAX, NUMBA, PYTORCH) refuses a graph: ``UnsupportedOpsError``,
the one compile-time error listing every op of the graph it cannot run (never a silent
fallback to Python, never a wrong answer), the line it gives each op, and the refusal of the
C-only fused ``Gemv`` pair.
"""

from __future__ import annotations

__all__ = ["UnsupportedOpsError", "unsupported_reason", "refuse_gemv_pair"]

class UnsupportedOpsError(NotImplementedError):
    """The graph has ops the back end cannot run: raised when compiling, listing all of them.

    Attributes: ``backend`` (e.g. 'JAX') and ``problems``: one ``(node, reason)`` per node.
    """

    def __init__(self, backend: str, problems, fgraph=None):
        self.backend = backend
        self.problems = list(problems)
        super().__init__(self._message(fgraph))

    def _message(self, fgraph) -> str:
        from tensorgraph.graph.ids import graph_ids
        from tensorgraph.graph.utils import format_user_line

        ids = graph_ids(fgraph) if fgraph is not None else None
        grouped: dict = {}
        for node, reason in self.problems:
            grouped.setdefault((str(node.op), reason), []).append(node)
        n_ops = len(grouped)
        lines = [f"the {self.backend} back end cannot compile this graph: "
                 f"{n_ops} op{'s' if n_ops != 1 else ''} "
                 f"{'have' if n_ops != 1 else 'has'} no {self.backend} implementation"]
        for (op, reason), nodes in grouped.items():
            where = ", ".join(f"[id {ids[n]}]" for n in nodes[:4]) if ids is not None else ""
            if len(nodes) > 4:
                where += f" and {len(nodes) - 4} more"
            line = format_user_line(nodes[0])
            lines.append(f"  - {op} {where}: {reason}" + (f" (created at {line})" if line else ""))
        lines.append(f"Compile it with mode='FAST_RUN' (C), or give the op a {self.backend} "
                     f"implementation: tensorgraph.link.{self.backend.lower()}.register(OpClass) "
                     "(docs/backends.md).")
        return "\n".join(lines)


def unsupported_reason(op, backend: str) -> str:
    """Why ``op`` has no implementation (the message's line for it)."""
    return f"no {backend} implementation is registered for {type(op).__name__}"


def refuse_gemv_pair(op, mode: str) -> None:
    """A ``Gemv`` fusing a pair of products (``Gemv{pair}``) has C only: the whole-graph modes
    leave out the rewrite that makes it, so meeting one is NotImplementedError."""
    if op.pair is not None:
        raise NotImplementedError(f"the fused pair of products is made for C only (mode {mode} "
                                  "leaves its rewrite out)")
