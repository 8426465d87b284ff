"""Numba for ``Scan``: the loop written out as a Python ``for`` loop in the generated module,
calling the step as a function of its own (compiled by Numba into the graph's code).

The step is the scan's inner graph as rewritten for the function's mode
(``node.tag.scan_inner_fgraph``; fusion and inplace included, as for the outer graph),
written by the same ``GraphSource`` that writes the program, as helper functions
``scan<N>_body`` and its parts. The loop, per ``ScanInfo``:

* a state reading ``L`` steps back: one buffer of ``L + n_steps`` rows, the first ``L`` the
  last rows of its initial value; step ``t`` reads row ``L + t + tap`` and writes row ``L + t``;
  the output is the rows after the first ``L`` (the last ``keep`` of them when the memory
  rewrite says so);
* a sequence tap ``k``: row ``t + k - lo`` of the sequence;
* an output not fed back: its buffer is made at the first step (which fixes its shape; with
  no step, its type's sizes, 0 where the type leaves one open);
* a shared state: a local, the last step's value returned;
* ``until``: the loop breaks after the step whose condition holds, and every output has as
  many rows as steps ran (Numba's arrays are sized when running, so while loops are fully
  supported here, unlike in JAX).

Values are arrays, 0-d for scalars, as everywhere in the generated code: a row of a 1-d
buffer is turned back into a 0-d array for the step. An error inside the step (an index out
of range) names the scan node and the inner node's position in the step.

Random draws inside the step: a generator the loop carries is the outer chain's generator
(``g<chain>``, a copy of the input generator made at each call), passed to the step, whose
draws advance it in place (Numba's copies of numpy's generators: the same numbers as FAST_RUN
where numpy draws the same way); after the loop it is the generator's advanced state.
"""

from __future__ import annotations

import re

from tensorgraph.link.backend_scan import inner_fgraph, refusal, sequence_messages
from tensorgraph.link.numba import register
from tensorgraph.scan.op import Scan


def _fixed_errors(source: str, position: int, title: str) -> str:
    """The inner nodes' error prefix (``tg-node N:``, their inner position) made the scan
    node's, the inner position kept in the message (quotes written as escapes: the text goes
    inside a string literal of the source)."""
    title = title.replace("\\", "\\\\").replace("'", "\\x27").replace('"', "\\x22")
    return re.sub(r"tg-node (\d+): ",
                  lambda m: f"tg-node {position}: in the step of {title} (inner node "
                            f"{m.group(1)}): ", source)


@register(Scan)
def numba_scan(op, node, code):
    from tensorgraph.link.random_plan import RandomPlan
    from tensorgraph.link.numba.codegen import GraphSource

    reason = refusal(op, node, "Numba", draws=True)
    if reason:
        raise NotImplementedError(reason)
    fgraph = inner_fgraph(node)
    prefix = f"scan{code.position}_"
    plan = RandomPlan(fgraph)
    generator_of = _generator_chains(op, fgraph, plan)  # shared state q -> inner chain
    inner = GraphSource(fgraph, plan, prefix=prefix, inline_constants=True)
    functions = inner.as_helpers(f"{prefix}body")
    if functions is None:
        names = ", ".join(sorted({str(n.op) for n, _ in inner.problems}))
        raise NotImplementedError(f"its inner graph has ops Numba cannot run: {names}")
    for name, source in functions.items():
        code.helper(name, _fixed_errors(source, code.position, op.title))
    info = op.info
    n_states, n_nit = info.n_states, info.n_nit_sot
    n_steps, *outer = code.inputs
    seqs = outer[:info.n_seqs]
    inits = outer[info.n_seqs:info.n_seqs + n_states]
    shared = outer[info.outer_shared_start - 1:info.outer_non_seq_start - 1]
    non_seqs = outer[info.outer_non_seq_start - 1:]
    out_types = [v.type for v in fgraph.outputs]
    n, t, done, r = code.name("n"), code.name("t"), code.name("done"), code.name("r")

    code.line(f"{n} = {n_steps}[()]")
    with code.block(f"if {n} < 0:"):
        code.line(code.fail("ValueError", f"{op.title}: n_steps is negative; the number of "
                                          "steps cannot be negative"))
    for j, x in enumerate(seqs):
        lo, hi = info.seq_span(j)
        messages = sequence_messages(op, j)
        values = (f"{x}.shape[0]", f"{x}.shape[0] - {hi - lo}", n)
        with code.block(f"if {x}.shape[0] < {hi - lo}:"):
            code.line(code.fail("ValueError", messages["short"], *values))
        if info.lengths_must_match:
            with code.block(f"if {x}.shape[0] - {hi - lo} != {n}:"):
                code.line(code.fail("ValueError", messages["unequal"], *values))
        with code.block(f"if {x}.shape[0] - {hi - lo} < {n}:"):
            code.line(code.fail("ValueError", messages["fewer"], *values))
    buffers, lengths = [], []
    for k, init in enumerate(inits):
        length = info.state_length(k)
        lengths.append(length)
        buf = code.name(f"state{k}_")
        buffers.append(buf)
        dtype = out_types[k].dtype
        if info.is_buffer_init(k):
            with code.block(f"if {init}.shape[0] < {length}:"):
                code.line(code.fail("ValueError", f"{op.title}: the initial value of "
                                                  f"{op.outer_label('states', k)} has fewer "
                                                  f"rows than its taps read steps back "
                                                  f"({length})"))
            code.line(f"{buf} = np.empty(({length} + {n},) + {init}.shape[1:], np.{dtype})")
            code.line(f"{buf}[:{length}] = {init}[{init}.shape[0] - {length}:]")
        else:
            code.line(f"{buf} = np.empty((1 + {n},) + {init}.shape, np.{dtype})")
            code.line(f"{buf}[0] = {init}" if out_types[k].ndim else f"{buf}[0] = {init}[()]")
    nits = []
    for m in range(n_nit):
        var = out_types[n_states + m]
        buf = code.name(f"nit{m}_")
        nits.append(buf)
        # made again at the first step; kept when no step runs: the sizes the type knows
        sizes = "(" + "".join(f"{s or 0}, " for s in var.shape) + ")"
        code.line(f"{buf} = np.empty(({n},) + {sizes}, np.{var.dtype})")
    carried = []
    for q, value in enumerate(shared):
        if q in generator_of:  # the chain's generator, advanced in place by the draws
            carried.append(value)
            continue
        local = code.name(f"shared{q}_")
        carried.append(local)
        code.line(f"{local} = {value}.copy()")
    code.line(f"{done} = {n}")

    def read(buf, row, ndim):
        return f"{buf}[{row}]" if ndim else f"np.array({buf}[{row}])"

    with code.block(f"for {t} in range({n}):"):
        args = []
        for j, x in enumerate(seqs):
            lo, _ = info.seq_span(j)
            ndim = node.inputs[1 + j].type.ndim - 1
            args += [read(x, f"{t} + {tap - lo}", ndim) for tap in info.seq_taps[j]]
        for k, buf in enumerate(buffers):
            args += [read(buf, f"{t} + {lengths[k] + tap}", out_types[k].ndim)
                     for tap in info.state_taps[k]]
        args += [v for q, v in enumerate(carried) if q not in generator_of] + list(non_seqs)
        by_chain = {c: carried[q] for q, c in generator_of.items()}
        args += [by_chain[c] for c in range(len(plan.chains))]  # the body's g0, g1, ...
        code.line(f"{r} = {prefix}body({', '.join(args)})")
        for k, buf in enumerate(buffers):
            row = f"{buf}[{t} + {lengths[k]}]"
            code.line(f"{row} = {r}[{k}]" if out_types[k].ndim else f"{row} = {r}[{k}][()]")
        for m, buf in enumerate(nits):
            i = n_states + m
            with code.block(f"if {t} == 0:"):
                code.line(f"{buf} = np.empty(({n},) + {r}[{i}].shape, np.{out_types[i].dtype})")
            code.line(f"{buf}[{t}] = {r}[{i}]" if out_types[i].ndim
                      else f"{buf}[{t}] = {r}[{i}][()]")
        for q, local in enumerate(carried):
            if q not in generator_of:
                code.line(f"{local} = {r}[{n_states + n_nit + q}]")
        if info.as_while:
            with code.block(f"if {r}[{info.n_inner_outputs - 1}][()]:"):
                code.line(f"{done} = {t} + 1")
                code.line("break")
    for i, buf in enumerate(buffers + nits):
        start = lengths[i] if i < n_states else 0
        keep = info.kept(i)
        first = (f"{start} + {done} - min({done}, {keep})" if keep is not None else f"{start}")
        if i >= n_states:  # never ran: no row was made (the shape of a step is not known)
            code.line(f"{code.outputs[i]} = {buf}[{first}:{start} + {done}].copy()")
        else:
            code.line(f"{code.outputs[i]} = {buf}[{first}:{start} + {done}].copy()"
                      if keep is not None or info.as_while else
                      f"{code.outputs[i]} = {buf}[{start}:]")
    for q, local in enumerate(carried):
        if q not in generator_of:
            code.line(f"{code.outputs[n_states + n_nit + q]} = {local}.copy()")


def _generator_chains(op, fgraph, plan) -> dict:
    """``{shared state q: inner chain}`` for the generators the step draws from: each one
    starts one chain of draws in the step, and its new value is the end of that chain (the
    generator is advanced in place, so two chains from one generator would not draw what
    FAST_RUN draws: refused)."""
    from tensorgraph.tensor.random.type import RandomGeneratorType

    info = op.info
    found = {}
    for q in range(info.n_shared):
        pos = info.inner_shared_start + q
        if not isinstance(fgraph.inputs[pos].type, RandomGeneratorType):
            continue
        chains = [c for c, (start, _) in enumerate(plan.chains) if start == pos]
        out = info.n_steps_outputs + q
        if len(chains) != 1 or plan.outputs.get(out) != chains[0]:
            raise NotImplementedError(
                f"{op.title}: the step draws from {op.outer_label('shared', q)} in a way Numba "
                "cannot follow (one chain of draws per generator, its last state the update)")
        found[q] = chains[0]
    return found
