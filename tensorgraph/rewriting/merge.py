"""Merging: equal constants become one constant, identical computations one node.

Two nodes are identical when their ops are equal and they read the very same input variables;
walking the graph inputs-first makes that transitive (once two nodes are merged, their clients
read the same variable and can merge in turn). Nodes that overwrite an input (``destroy_map``)
are never merged: each one needs its own buffer.
"""

from __future__ import annotations

import time

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import GraphRewriter, RewriteSettings, apply_replacement

__all__ = ["MergeRewriter"]


class MergeRewriter(GraphRewriter):
    """Merge equal constants and common subexpressions (one pass suffices; see module doc)."""

    def __init__(self, name: str | None = None):
        self.name = name or "merge"

    def apply(self, fgraph) -> int:
        settings = RewriteSettings.from_config()
        count = 0
        constants: dict = {}
        computations: dict = {}
        apply_nodes = fgraph.apply_nodes
        for node in fgraph.toposort():
            if node not in apply_nodes:
                continue
            for var in node.inputs:
                if isinstance(var, Constant):
                    count += self._merge_constant(fgraph, var, constants, settings)
            if node.op.destroy_map:
                continue
            try:
                key = (node.op, tuple(node.inputs))
                kept = computations.get(key)
            except TypeError:  # an unhashable op or constant value: leave it alone
                continue
            if kept is None or kept not in apply_nodes:
                computations[key] = node
                continue
            started = time.perf_counter()
            if apply_replacement(fgraph, self, node, list(zip(node.outputs, kept.outputs)),
                                 settings, started):
                count += 1
        for var in list(fgraph.outputs):
            if isinstance(var, Constant):
                count += self._merge_constant(fgraph, var, constants, settings)
        return count

    def _merge_constant(self, fgraph, var, constants, settings) -> int:
        try:
            signature = var.signature()
            kept = constants.setdefault(signature, var)
        except TypeError:
            return 0
        if kept is var:
            return 0
        started = time.perf_counter()
        return int(apply_replacement(fgraph, self, None, [(var, kept)], settings, started))
