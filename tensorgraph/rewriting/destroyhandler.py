"""``DestroyHandler``: vetoes any graph state where an overwritten input is still needed.

An op that writes into one of its inputs (``destroy_map``) is safe only if nothing else needs
that input's value. The handler keeps the rule simple and checkable, and checks it after every
replacement (``validate``), so later rewrites cannot break an earlier inplace decision either:
a destroyed variable must

* not be a graph input (the caller's arrays, shared storage) or a constant, except an
  input the function was told it may overwrite (``In(x, mutable=True)``: the graph's
  ``destroyable_inputs``),
* not be a graph output,
* have the destroying node as its only reader,
* not be a view of another variable (a view's base may have other readers).
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant
from tensorgraph.graph.fg import Feature
from tensorgraph.graph.utils import InconsistencyError

__all__ = ["DestroyHandler", "NoOutputFromInplace", "can_destroy"]


def can_destroy(fgraph, node, i: int, graph_inputs=None) -> str | None:
    """Why ``node`` may not overwrite its input ``i`` (``None`` when it may).

    ``graph_inputs``: ``set(fgraph.inputs)``, for callers that check many nodes (a list
    lookup per check made validation half of a big graph's rewriting time)."""
    var = node.inputs[i]
    if isinstance(var, Constant):
        return "it is a constant"
    if (var.owner is None and var in (fgraph.inputs if graph_inputs is None else graph_inputs)
            and var not in getattr(fgraph, "destroyable_inputs", ())):
        return "it is a graph input"
    clients = fgraph.clients.get(var, [])
    if any(c == "output" for c, _ in clients):
        return "it is a graph output"
    if clients != [(node, i)]:
        return f"it has {len(clients)} readers"
    owner = var.owner
    if owner is not None and var.index in owner.op.view_map:
        return "it is a view of another variable"
    return None


class DestroyHandler(Feature):
    """See the module docstring. Attach with ``DestroyHandler.attach_to(fgraph)``."""

    survives_pickling = True

    def __init__(self):
        self.destroyers: set = set()

    @classmethod
    def attach_to(cls, fgraph) -> DestroyHandler:
        for f in fgraph.features:
            if isinstance(f, cls):
                return f
        handler = cls()
        fgraph.attach_feature(handler)
        return handler

    def on_import(self, fgraph, node, reason):
        if node.op.destroy_map:
            self.destroyers.add(node)

    def on_prune(self, fgraph, node, reason):
        self.destroyers.discard(node)

    def validate(self, fgraph):
        if not self.destroyers:
            return
        graph_inputs = set(fgraph.inputs)
        for node in self.destroyers:
            for inputs in node.op.destroy_map.values():
                for i in inputs:
                    why = can_destroy(fgraph, node, i, graph_inputs)
                    if why is not None:
                        raise InconsistencyError(
                            f"{node} would overwrite its input {i} ({node.inputs[i]}), but {why}")


class NoOutputFromInplace(Feature):
    """Graph outputs (by position) that no inplace op may compute: with this feature attached
    before the inplace phase (``Mode.register((AddFeatureOptimizer(feature), position))``),
    the inplace rewrites leave the nodes computing them as they are, so the value handed out
    was never written over an input's buffer."""

    def __init__(self, protected_out_ids):
        self.protected = tuple(int(i) for i in protected_out_ids)

    def validate(self, fgraph):
        for i in self.protected:
            out = fgraph.outputs[i]
            node = out.owner
            if node is not None and node.op.destroy_map.get(node.outputs.index(out)):
                raise InconsistencyError(f"output {i} ({out}) may not be computed inplace")
