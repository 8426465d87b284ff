"""Ops that hold an inner graph (a scan's step, an OpFromGraph), as the notebook views show them.

The graph view draws such a node as a group whose inside is the inner graph; the stepper and
the profile name the inner nodes with the same ids. This module says, for one node:

* which inner graph to show (``inner_graph``): for a scan node of a compiled function, the
  step as it was compiled and runs (``Scan.runner_of(node).function``: its rewritten graph and
  which nodes run C), else the inner graph as built (``node.op.fgraph``);
* what each inner input is (``input_roles``): a sequence (per tap: ``x[t-2]``), a recurrent
  state (per tap: ``h[t-1]``), a shared variable the loop updates, a non-sequence, or, for an
  OpFromGraph, its input; and each inner output (``output_roles``);
* which inner inputs each outer input feeds (``outer_to_inner``), so edges run from the outer
  graph into the loop;
* the loop's layout in words, for the detail panel (``loop_summary``).

Inner ids are the inner graph's own ids (as ``dprint`` prints them under "Inner graphs:"),
prefixed with the node's id: ``D/B`` is node ``B`` of the inner graph of node ``D``.
"""

from __future__ import annotations

from tensorgraph.graph.fg import FunctionGraph

__all__ = ["inner_graph", "input_roles", "output_roles", "outer_to_inner", "loop_summary",
           "is_scan", "SEP"]

#: joins a node's id and an inner node's id: ``D/B``
SEP = "/"


def is_scan(op) -> bool:
    return type(op).__name__ == "Scan" and hasattr(op, "info")


def inner_graph(node):
    """``(fgraph, function)``: the inner graph to show for ``node`` and the compiled function
    running it (None when it is not compiled yet), or ``(None, None)`` for an op without an
    inner graph."""
    op = node.op
    inner = getattr(op, "fgraph", None)
    if not isinstance(inner, FunctionGraph):
        return None, None
    runner = getattr(getattr(node, "tag", None), "scan_runner", None) if is_scan(op) else None
    if runner is not None:
        return runner.function.maker.fgraph, runner.function
    return inner, None


def _name(names, i, fallback) -> str:
    return names[i] if i < len(names) and names[i] else fallback


def input_roles(node, fgraph) -> list[tuple[str, str, int | None]]:
    """Per inner input of ``fgraph``: ``(role, text, tap)``; role is ``sequence``, ``state``,
    ``shared``, ``non-sequence`` or ``input``; text what its box says; tap the sequence's or
    state's tap (None for the others)."""
    op = node.op
    inputs = fgraph.inputs
    if not is_scan(op) or len(inputs) != op.info.n_inner_inputs:
        return [("input", f"input {k}: {v.name or v}", None) for k, v in enumerate(inputs)]
    info, labels = op.info, op.labels
    roles = []
    for j, taps in enumerate(info.seq_taps):
        for tap in taps:
            var = inputs[len(roles)]
            roles.append(("sequence", f"sequence {var.name or _name(labels.get('sequences', ()), j, f'x{j}')}", tap))
    for k, taps in enumerate(info.state_taps):
        for tap in taps:
            var = inputs[len(roles)]
            roles.append(("state", f"state {var.name or _name(labels.get('states', ()), k, f'h{k}')}", tap))
    for q in range(info.n_shared):
        var = inputs[len(roles)]
        roles.append(("shared", f"shared {_name(labels.get('shared', ()), q, var.name or str(var))}",
                      None))
    for i in range(info.n_non_seqs):
        var = inputs[len(roles)]
        name = _name(labels.get("non_sequences", ()), i, var.name or str(var))
        roles.append(("non-sequence", f"non-sequence {name}", None))
    return roles


def output_roles(node, fgraph) -> list[str]:
    """Per inner output of ``fgraph``: what it becomes (``state h[t]``, ``output y[t]``,
    ``update of rng``, ``until``)."""
    op = node.op
    outputs = fgraph.outputs
    if not is_scan(op) or len(outputs) != op.info.n_inner_outputs:
        return [f"output {k}" for k in range(len(outputs))]
    info, labels = op.info, op.labels
    # unnamed: "output k", the scan's output number, as scan names the state's inner inputs
    # ("output 0[t-1]") and dprint prints them
    texts = [f"state {_name(labels.get('states', ()), k, f'output {k}')}[t]"
             for k in range(info.n_states)]
    texts += [f"output {_name(labels.get('nit_sot', ()), m, str(info.n_states + m))}[t]"
              for m in range(info.n_nit_sot)]
    texts += [f"update of {_name(labels.get('shared', ()), q, f'shared {q}')}"
              for q in range(info.n_shared)]
    if info.as_while:
        texts.append("until (stops the loop)")
    return texts


def outer_to_inner(node, fgraph) -> list[list[int]]:
    """Per outer input of ``node``, the positions of the inner inputs it feeds (empty: it
    feeds the node itself, as a scan's ``n_steps``)."""
    op = node.op
    n_inner = len(fgraph.inputs)
    if is_scan(op) and n_inner == op.info.n_inner_inputs:
        info = op.info
        feeds = [[]]                                     # n_steps
        feeds += info.inner_seq_positions()
        feeds += info.inner_state_positions()
        feeds += [[info.inner_shared_start + q] for q in range(info.n_shared)]
        feeds += [[info.inner_non_seq_start + i] for i in range(info.n_non_seqs)]
        return feeds
    if len(node.inputs) == n_inner:
        return [[k] for k in range(n_inner)]
    return [[] for _ in node.inputs]


def loop_summary(node) -> dict | None:
    """The loop's layout in words (the panel's "loop" section), or None for a node that is not
    a scan: ``{"steps": ..., "sequences": [...], "states": [...], ...}``."""
    op = node.op
    if not is_scan(op):
        return None
    info, labels = op.info, op.labels

    def names(kind, n, first=0):
        unnamed = {"sequences": "sequence", "states": "output", "nit_sot": "output",
                   "shared": "shared", "non_sequences": "non-sequence"}[kind]
        return [_name(labels.get(kind, ()), i, f"{unnamed} {first + i}") for i in range(n)]

    def taps(values):
        return ", ".join("t" if k == 0 else f"t{k:+d}" for k in values)

    out = {"steps": ("while loop, at most n_steps" if info.as_while else "n_steps")
           + (f"; gradient truncated to {info.truncate_gradient} steps"
              if info.truncate_gradient >= 0 else "")}
    seqs = [f"{n} [{taps(t)}]" for n, t in zip(names("sequences", info.n_seqs), info.seq_taps)]
    states = [f"{n} [{taps(t)}]" for n, t in zip(names("states", info.n_states),
                                                 info.state_taps)]
    for key, items in (("sequences", seqs), ("states", states),
                       ("outputs not fed back", names("nit_sot", info.n_nit_sot, info.n_states)),
                       ("shared updated", names("shared", info.n_shared)),
                       ("non-sequences", names("non_sequences", info.n_non_seqs))):
        if items:
            out[key] = items
    if info.keep is not None:
        out["keeps"] = ", ".join("all" if k is None else f"last {k}" for k in info.keep)
    return out
