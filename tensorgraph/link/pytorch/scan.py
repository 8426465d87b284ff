"""PyTorch for ``Scan``: the loop unrolled into the FX graph, one copy of the step per step
(a while loop: PyTorch's ``while_loop`` operator).

Why unrolled: the program is one FX graph that Inductor compiles directly (not through
TorchDynamo, ``tensorgraph.link.pytorch.linker``), and a Python loop is not something an FX
graph holds: ``make_fx`` records the operations each iteration runs. PyTorch's own loop
operators (``torch._higher_order_ops.scan`` and ``while_loop``) do compile on the CPU in torch
2.13, but only through ``torch.compile``'s front end; measured here (2026-11-25 at f903a72) on a
10-step RNN of 16
units: 25.6 s to compile cold and 170 us a call, against about 12 us a call for a graph
compiled directly, and this program's evaluator cannot be traced by TorchDynamo (it keeps
Python state), which is why ``ifelse`` uses the ``cond`` operator inside ``make_fx``. The
scan operator has no such form that Inductor takes directly. So the step is traced
``n_steps`` times into the one graph, and Inductor fuses across steps as it likes.

What that means:

* ``n_steps`` must be known while tracing. Computed from shapes or constants (the sequences'
  length, ``n_steps=10``) it is, and each new input shape traces and compiles again, as for
  every PyTorch graph. Computed from an input's value (``n_steps=n`` with ``n`` an input), the
  program makes its integer scalar inputs static: each new value of ``n`` compiles again.
* Compile time grows with the number of steps (the FX graph holds every step): fine for tens
  of steps, slow for thousands. Loops longer than ``MAX_STEPS`` are refused when tracing,
  with that reason (compile them with FAST_RUN, JAX or NUMBA).
* ``until`` (a while loop) cannot be unrolled (the steps that run are known only when
  running): it is PyTorch's ``while_loop`` operator instead, traced into the FX graph as the
  ``cond`` operator is for ``ifelse`` (so such a program compiles through ``torch.compile``,
  as graphs with ``cond`` do: measured 7.9 s for a power iteration, against about 2 s for
  a graph without; 2026-11-25 at e85addc).
  As for JAX, every output of a while loop must be read at its last step
  only (its full history has as many rows as steps ran); draws inside a while loop are
  refused (the operator carries tensors only).
* Random draws inside the step run as draws outside loops do: from PyTorch's generator,
  seeded at each call from the input generator (the loop's generator is carried as the
  marker that stands for it); each unrolled step draws new numbers.

Taps: a state reading ``L`` steps back keeps its last ``L`` values (the last rows of its
initial value at first); a sequence tap ``k`` reads row ``t + k - lo``; every step's value of
a state or output not fed back is stacked (``torch.stack``) into the output, the last ``keep``
rows of it when the memory rewrite says so.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.link.backend_scan import (
    check_initial_rows,
    check_sequences,
    loop_layout,
    refusal,
    traced_step,
    while_refusal,
)
from tensorgraph.link.pytorch import as_tensor, register
from tensorgraph.scan.op import Scan

#: the longest loop unrolled (the FX graph and Inductor's compile grow with it)
MAX_STEPS = 1000


@register(Scan)
def torch_scan(op, node):
    import torch

    from tensorgraph.link.pytorch.linker import GraphFunction, static_ints

    reason = refusal(op, node, "PyTorch", draws=True) or while_refusal(op, "PyTorch")
    if not reason and op.info.as_while and refusal(op, node, "PyTorch"):
        reason = (f"{op.title} draws random numbers inside a while loop (until): PyTorch's "
                  "while_loop operator carries tensors only, not the generator (compile it "
                  "with mode='FAST_RUN', 'JAX' or 'NUMBA')")
    if reason:
        raise NotImplementedError(reason)
    fgraph, step = traced_step(node, GraphFunction, "PyTorch")
    info = op.info
    # a random generator is a marker: the draws use PyTorch's generator, seeded per call
    n_states, n_nit, n_shared, out_dtypes, lengths = loop_layout(op, fgraph)

    def loop(n_steps, *outer):
        n = static_ints(n_steps, f"the number of steps of {op.title} (PyTorch unrolls the "
                                 "loop)")[0]
        if n > MAX_STEPS:
            raise ValueError(f"{op.title} runs {n} steps; the PyTorch back end unrolls loops "
                             f"into its compiled graph and stops at {MAX_STEPS} steps (the "
                             "compile time grows with them): compile it with mode='FAST_RUN', "
                             "'JAX' or 'NUMBA'")
        seqs = outer[:info.n_seqs]
        inits = outer[info.n_seqs:info.n_seqs + n_states]
        shared = list(outer[info.outer_shared_start - 1:info.outer_non_seq_start - 1])
        non_seqs = list(outer[info.outer_non_seq_start - 1:])
        check_sequences(op, [np.shape(x)[0] for x in seqs], n)
        check_initial_rows(op, inits)
        if info.as_while:
            return _while(op, node, step, fgraph, n, seqs, inits, shared, non_seqs)
        windows = []  # per state, its last L values (oldest first)
        for k, init in enumerate(inits):
            if info.is_buffer_init(k):
                rows = np.shape(init)[0]
                windows.append([init[r] for r in range(rows - lengths[k], rows)])
            else:
                windows.append([init])
        stacks = [[] for _ in range(n_states + n_nit)]
        for t in range(n):
            args = []
            for j, x in enumerate(seqs):
                lo, _ = info.seq_span(j)
                args += [x[t + tap - lo] for tap in info.seq_taps[j]]
            for k, window in enumerate(windows):
                args += [window[lengths[k] + tap] for tap in info.state_taps[k]]
            args += shared + non_seqs
            outputs = step(*args)
            outputs = [o if d is None else as_tensor(v.data if isinstance(v, Constant) else o, d)
                       for v, o, d in zip(fgraph.outputs, outputs, out_dtypes)]
            for k, window in enumerate(windows):
                window.append(outputs[k])
                del window[0]
            for i in range(n_states + n_nit):
                stacks[i].append(outputs[i])
            shared = outputs[n_states + n_nit:n_states + n_nit + n_shared]
        results = []
        for i, rows in enumerate(stacks):
            keep = info.kept(i)
            if keep is not None:
                rows = rows[len(rows) - min(len(rows), keep):]
            if rows:
                results.append(torch.stack(rows))
            else:
                results.append(_empty(op, node, fgraph, i, inits, out_dtypes[i]))
        results += [v if d is None else as_tensor(v, d) for v, d in
                    zip(shared, out_dtypes[n_states + n_nit:n_states + n_nit + n_shared])]
        return results[0] if len(results) == 1 else tuple(results)

    return loop


def _empty(op, node, fgraph, i, inits, dtype):
    """No row: a state's rows have its shape; an output not fed back, the shape its type
    gives (unknown sizes 0)."""
    info = op.info
    if i < info.n_states:
        shape = np.shape(inits[i])
        shape = shape[1:] if info.is_buffer_init(i) else shape
    else:
        shape = tuple(s or 0 for s in fgraph.outputs[i].type.shape)
    return as_tensor(np.zeros((0,) + tuple(shape), dtype=dtype))


def _while(op, node, step, fgraph, n, seqs, inits, shared, non_seqs):
    """``until``: PyTorch's ``while_loop`` operator, traced into the FX graph as ``cond`` is
    for ``ifelse`` (the program then compiles through ``torch.compile``, the only way Inductor
    takes such operators). At most ``n`` steps, stopping after the step whose condition holds;
    every output keeps its last step only (``while_refusal``), so every size is known."""
    import torch
    from torch._higher_order_ops.while_loop import while_loop_op

    from tensorgraph.link.pytorch.linker import checks_scope, current_checks

    info = op.info
    n_states, n_nit, n_shared = info.n_states, info.n_nit_sot, info.n_shared
    dtypes = [v.type.dtype for v in fgraph.outputs]
    lengths = [info.state_length(k) for k in range(n_states)]
    if n == 0:
        results = [_empty(op, node, fgraph, i, inits, dtypes[i])
                   for i in range(n_states + n_nit)]
        results += [as_tensor(v, d) for v, d in zip(shared, dtypes[n_states + n_nit:])]
        return results[0] if len(results) == 1 else tuple(results)
    sliced = []  # per (sequence, tap): its n rows
    for j, x in enumerate(seqs):
        lo, _ = info.seq_span(j)
        x = as_tensor(x)
        sliced += [x[tap - lo:tap - lo + n] for tap in info.seq_taps[j]]
    windows = []
    for k, init in enumerate(inits):
        init = as_tensor(init, dtypes[k])
        windows.append(init[init.shape[0] - lengths[k]:].clone() if info.is_buffer_init(k)
                       else init[None].clone())
    outer = [as_tensor(v) for v in non_seqs]

    def run_step(t, windows, shared, extra):
        sliced_now, non_seq_now = extra[:len(sliced)], extra[len(sliced):]
        args = [x[t] for x in sliced_now]
        for k, window in enumerate(windows):
            args += [window[lengths[k] + tap] for tap in info.state_taps[k]]
        args += list(shared) + list(non_seq_now)
        with checks_scope(node) as scope:
            outputs = step(*args)
        outputs = [as_tensor(v.data if isinstance(v, Constant) else o, d)
                   for v, o, d in zip(fgraph.outputs, outputs, dtypes)]
        return outputs, scope.result()

    # the first step, outside the loop, fixes the shapes of the outputs not fed back
    first, code = run_step(torch.tensor(0), windows, [as_tensor(v) for v in shared],
                           sliced + outer)
    windows = [torch.cat([w[1:], o[None]]) for w, o in zip(windows, first[:n_states])]
    lasts = [o.clone() for o in first[n_states:n_states + n_nit]]
    shared = [o.clone() for o in first[n_states + n_nit:n_states + n_nit + n_shared]]
    stop = (first[-1] != 0).reshape(())
    counts = (len(windows), len(lasts), len(shared))

    def split(carried):
        a, b, c = counts
        t, stop, code = carried[:3]
        rest = carried[3:]
        return t, stop, code, rest[:a], rest[a:a + b], rest[a + b:a + b + c]

    def cond_fn(*carried):
        t, stop = carried[0], carried[1]
        return (t < n) & torch.logical_not(stop)

    def body_fn(*carried_and_extra):
        carried = carried_and_extra[:3 + sum(counts)]
        extra = carried_and_extra[3 + sum(counts):]
        t, _, code, windows, lasts, shared = split(carried)
        outputs, step_code = run_step(t, windows, shared, extra)
        windows = [torch.cat([w[1:], o[None]]) for w, o in zip(windows, outputs[:n_states])]
        lasts = [o.clone() for o in outputs[n_states:n_states + n_nit]]
        shared = [o.clone() for o in outputs[n_states + n_nit:n_states + n_nit + n_shared]]
        code = torch.where(code == 0, step_code, code)
        return (t + 1, (outputs[-1] != 0).reshape(()), code, *windows, *lasts, *shared)

    carried = (torch.tensor(1, dtype=torch.int64), stop, torch.as_tensor(code,
               dtype=torch.int32), *windows, *lasts, *shared)
    final = while_loop_op(cond_fn, body_fn, carried, tuple(sliced + outer))
    _, _, code, windows, lasts, shared = split(final)
    current_checks().merge(code)
    rows = [w[-1:] for w in windows] + [v[None] for v in lasts]
    results = [r if info.kept(i) == 1 else r[:0] for i, r in enumerate(rows)] + list(shared)
    return results[0] if len(results) == 1 else tuple(results)
