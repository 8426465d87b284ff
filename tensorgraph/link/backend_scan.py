"""What the whole-graph back ends share to run a ``Scan`` (``link/jax/scan.py``,
``link/numba/scan.py``, ``link/pytorch/scan.py``): the inner graph to run, what none of them
can run (and why), and the checks of the outer values FAST_RUN makes (``scan/loop.py``),
with the same messages, for the back ends that know the sizes while tracing."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.traced import inner_function

__all__ = ["inner_fgraph", "traced_step", "loop_layout", "refusal", "while_refusal",
           "sequence_messages", "check_sequences", "check_initial_rows", "check_rows", "TOO_BIG"]


def inner_fgraph(node):
    """The step to trace: rewritten for the mode when the node was prepared, else as
    written."""
    found = getattr(node.tag, "scan_inner_fgraph", None)
    return found if found is not None else node.op.fgraph


def traced_step(node, graph_function, backend: str):
    """``(inner fgraph, step)``: the step evaluated by the back end's ``graph_function``
    (its ``GraphFunction`` class), or NotImplementedError naming the inner ops it lacks."""
    fgraph = inner_fgraph(node)
    return fgraph, inner_function(fgraph, graph_function, backend)


def loop_layout(op, fgraph) -> tuple:
    """``(n_states, n_nit, n_shared, out_dtypes, lengths)`` of a scan: its counts of states,
    per-step outputs and shared values, the inner outputs' dtypes (None: a random generator,
    carried as the back end represents it) and each state's window length."""
    info = op.info
    out_dtypes = [getattr(v.type, "dtype", None) for v in fgraph.outputs]
    lengths = [info.state_length(k) for k in range(info.n_states)]
    return info.n_states, info.n_nit_sot, info.n_shared, out_dtypes, lengths


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


def sequence_messages(op, j: int) -> dict:
    """The errors of sequence ``j`` too short for the loop, as templates over ``{0}`` (its
    entries), ``{1}`` (the steps it gives) and ``{2}`` (``n_steps``): ``short`` (fewer
    entries than its taps span), ``unequal`` (its steps differ from sequence 0's, when no
    ``n_steps`` was given), ``fewer`` (fewer steps than ``n_steps``). ``check_sequences``
    formats them; a back end checking in compiled code (Numba) raises them with the values
    and formats them when the error comes out, so every mode says the same."""
    info = op.info
    lo, hi = info.seq_span(j)

    def text(value) -> str:
        return str(value).replace("{", "{{").replace("}", "}}")

    head = f"{text(op.title)}: {text(op.outer_label('sequences', j))}"
    return {
        "short": (f"{head} has {{0}} entries but its taps {text(list(info.seq_taps[j]))} "
                  f"need at least {hi - lo}{'' if hi == lo else ' plus one per step'}"),
        "unequal": (f"{head} gives {{1}} steps ({{0}} entries) but "
                    f"{text(op.outer_label('sequences', 0))} gives {{2}}; the sequences must "
                    "have the same length (pass n_steps to use the first n_steps entries of "
                    "each)"),
        "fewer": f"{head} gives {{1}} steps ({{0}} entries) but n_steps is {{2}}",
    }


def check_sequences(op, seq_lengths, n: int) -> None:
    """The errors FAST_RUN gives for sequences too short for ``n`` steps (shapes are known
    while tracing)."""
    info = op.info
    if n < 0:
        what = "n_steps" + (" (the bound of the while loop)" if info.as_while else "")
        raise ValueError(f"{op.title}: {what} is {n}; the number of steps cannot be negative")
    for j, length in enumerate(seq_lengths):
        lo, hi = info.seq_span(j)
        steps = length - (hi - lo)
        messages = sequence_messages(op, j)
        if length < hi - lo:
            raise ValueError(messages["short"].format(length, steps, n))
        if info.lengths_must_match and steps != n:
            raise ValueError(messages["unequal"].format(length, steps, n))
        if steps < n:
            raise ValueError(messages["fewer"].format(length, steps, n))


#: numpy's error for an array whose size in bytes no integer of the platform can hold: the
#: one FAST_RUN and Numba raise (``np.empty``) for the rows of a loop too long for memory
TOO_BIG = ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
           "possible size.")


def check_rows(n: int, row_shape, dtype) -> None:
    """numpy's ValueError (``TOO_BIG``) when ``n`` rows of ``row_shape`` and ``dtype`` make
    an array too big for any; XLA aborts the whole process on such a shape instead."""
    nbytes = n * np.dtype(dtype).itemsize
    for size in row_shape:
        nbytes *= int(size)
    if nbytes > np.iinfo(np.intp).max:
        raise ValueError(TOO_BIG)


def check_initial_rows(op, inits) -> None:
    info = op.info
    for k, init in enumerate(inits):
        if info.is_buffer_init(k) and np.shape(init)[0] < info.state_length(k):
            raise ValueError(
                f"{op.title}: the initial value of {op.outer_label('states', k)} has "
                f"{np.shape(init)[0]} rows but its taps {list(info.state_taps[k])} read "
                f"{info.state_length(k)} steps back")
