"""What the whole-graph back ends share to run a ``Scan`` (``link/jax/scan.py``,
``link/numba/scan.py``, ``link/pytorch/scan.py``): the inner graph to run, what none of them
can run (and why), and the checks of the outer values FAST_RUN makes (``scan/loop.py``),
with the same messages, for the back ends that know the sizes while tracing."""

from __future__ import annotations

import numpy as np

__all__ = ["inner_fgraph", "traced_step", "refusal", "while_refusal", "check_sequences",
           "check_initial_rows"]


def inner_fgraph(node):
    """The step to trace: rewritten for the mode when the node was prepared, else as
    written."""
    found = getattr(node.tag, "scan_inner_fgraph", None)
    return found if found is not None else node.op.fgraph


def traced_step(node, graph_function, backend: str):
    """``(inner fgraph, step)``: the step evaluated by the back end's ``graph_function``
    (its ``GraphFunction`` class), or NotImplementedError naming the inner ops it lacks."""
    fgraph = inner_fgraph(node)
    problems: list = []
    step = graph_function(fgraph, problems)
    if problems:
        names = ", ".join(sorted({str(n.op) for n, _ in problems}))
        raise NotImplementedError(f"its inner graph has ops without {backend}: {names}")
    return fgraph, step


def refusal(op, node, backend: str, draws: bool = False) -> str | None:
    """Why ``backend`` cannot run this scan node at all, or None (shared by the back ends).
    ``draws``: the back end carries random generators through loops (a generator is then a
    shared state of the loop, whose draws advance it)."""
    from tensorgraph.tensor.random.type import RandomGeneratorType

    info = op.info
    inner = op.fgraph.inputs
    generators = [k for k, v in enumerate(inner) if isinstance(v.type, RandomGeneratorType)]
    carried = range(info.inner_shared_start, info.inner_non_seq_start)
    if generators and (not draws or any(k not in carried for k in generators)):
        return (f"{op.title} draws random numbers inside its step; the {backend} back end "
                "does not carry a random generator through a loop (compile it with "
                "mode='FAST_RUN', or draw the numbers before the loop and pass them as a "
                "sequence)")
    if any(not hasattr(v.type, "dtype") and not isinstance(v.type, RandomGeneratorType)
           for v in op.fgraph.inputs + op.fgraph.outputs):
        return f"{op.title} has inner values that are not tensors"
    return None


def while_refusal(op, backend: str) -> str | None:
    """A while loop whose outputs keep more than their last step: their number of rows is
    known only when running (an output keeping its last step has one row once ``n_steps >= 1``,
    one nobody reads keeps none)."""
    info = op.info
    if not info.as_while:
        return None
    full = [i for i in range(info.n_steps_outputs) if info.kept(i) not in (0, 1)]
    if not full:
        return None
    kinds = ["states" if i < info.n_states else "nit_sot" for i in full]
    names = ", ".join(op.outer_label(kind, i if kind == "states" else i - info.n_states)
                      for kind, i in zip(kinds, full))
    return (f"{op.title} is a while loop (until) whose {names} keep{'s' if len(full) == 1 else ''}"
            f" every step: their number of rows is known only when the loop has run, and "
            f"{backend} fixes array sizes when compiling. Read only the last step (h[-1]) of "
            "each output of a while loop, or compile it with mode='FAST_RUN'")


def check_sequences(op, seq_lengths, n: int) -> None:
    """The errors FAST_RUN gives for sequences too short for ``n`` steps (shapes are known
    while tracing)."""
    info = op.info
    if n < 0:
        what = "n_steps" + (" (the bound of the while loop)" if info.as_while else "")
        raise ValueError(f"{op.title}: {what} is {n}; the number of steps cannot be negative")
    for j, length in enumerate(seq_lengths):
        lo, hi = info.seq_span(j)
        if length < hi - lo:
            raise ValueError(
                f"{op.title}: {op.outer_label('sequences', j)} has {length} entries but its "
                f"taps {list(info.seq_taps[j])} need at least {hi - lo}"
                f"{'' if hi == lo else ' plus one per step'}")
        steps = length - (hi - lo)
        if info.lengths_must_match and steps != n:
            raise ValueError(
                f"{op.title}: {op.outer_label('sequences', j)} gives {steps} steps ({length} "
                f"entries) but {op.outer_label('sequences', 0)} gives {n}; the sequences must "
                "have the same length (pass n_steps to use the first n_steps entries of each)")
        if steps < n:
            raise ValueError(f"{op.title}: {op.outer_label('sequences', j)} gives {steps} "
                             f"steps ({length} entries) but n_steps is {n}")


def check_initial_rows(op, inits) -> None:
    info = op.info
    for k, init in enumerate(inits):
        if info.is_buffer_init(k) and np.shape(init)[0] < info.state_length(k):
            raise ValueError(
                f"{op.title}: the initial value of {op.outer_label('states', k)} has "
                f"{np.shape(init)[0]} rows but its taps {list(info.state_taps[k])} read "
                f"{info.state_length(k)} steps back")
