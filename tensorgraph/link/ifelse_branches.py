"""Which nodes each side of an ``ifelse`` owns: the nodes only one side needs, which the
whole-graph back ends compute inside that side, so the branch not taken does not run (as in
the Python VM)."""

from __future__ import annotations

__all__ = ["branch_owners"]

def branch_owners(fgraph, nodes=None) -> dict:
    """``{node: (ifelse_node, side)}`` for the nodes only one side (0: then, 1: else) of an
    ``IfElse`` needs, the innermost such side when ifelse nodes nest. A node outside every
    branch is not in the dict. ``nodes``: the toposort (computed if not given)."""
    from tensorgraph.ifelse import IfElse

    nodes = nodes if nodes is not None else fgraph.toposort()
    ifelses = [n for n in nodes if isinstance(n.op, IfElse)]
    if not ifelses:
        return {}
    owners: dict = {}
    everything = _needed(fgraph, None, None)
    for ifnode in reversed(ifelses):  # outermost first: inner branches overwrite
        n = ifnode.op.n_outs
        for side in (0, 1):
            taken = ifnode.inputs[1 + side * n:1 + (side + 1) * n]
            if_other = _needed(fgraph, ifnode, side)
            below = _needed_from(taken)
            for node in below:
                if node in everything and node not in if_other:
                    owners[node] = (ifnode, side)
    return owners


def _needed_from(variables) -> set:
    seen, stack = set(), [v.owner for v in variables if v.owner is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(i.owner for i in node.inputs if i.owner is not None)
    return seen


def _needed(fgraph, skipped_ifelse, side) -> set:
    """Nodes needed for the outputs when ``skipped_ifelse`` does *not* take ``side``."""
    seen, stack = set(), [v.owner for v in fgraph.outputs if v.owner is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        inputs = node.inputs
        if node is skipped_ifelse:
            n = node.op.n_outs
            other = 1 - side
            inputs = [node.inputs[0]] + node.inputs[1 + other * n:1 + (other + 1) * n]
        stack.extend(i.owner for i in inputs if i.owner is not None)
    return seen
