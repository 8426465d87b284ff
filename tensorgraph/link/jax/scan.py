"""JAX for ``Scan``: the loop as ``jax.lax.scan`` (or ``lax.while_loop`` for ``until``).

The step is the scan's inner graph, as rewritten for the function's mode
(``node.tag.scan_inner_fgraph``, set by ``Scan.prepare_for_mode``; the graph as written when
the node was not prepared), evaluated by the same ``GraphFunction`` that evaluates the
program's graph, so every op JAX runs outside a loop runs inside one too, nested scans
included.

What the loop carries, per ``ScanInfo``:

* a state with taps ``(-L, ..., -1)``: a window of its last ``L`` values (the last ``L`` rows
  of its initial value at first); tap ``k`` reads row ``L + k``, and each step shifts the new
  value in;
* a sequence with taps: one slice of the sequence per tap, of ``n_steps`` rows
  (``x[k - lo : k - lo + n_steps]``), scanned over;
* an output not fed back (nit_sot): stacked by ``lax.scan``;
* a shared state: its value, the final one returned;
* the run-time checks of the step (an index out of range): the first failing one, carried.

``n_steps`` must be known when tracing (XLA's arrays have static sizes): computed from
shapes or constants it is; computed from an input's value, the program makes its integer
scalar inputs static (one compile per value, see ``tensorgraph.link.jax.linker``). An
``n_steps`` whose stacked outputs no array could hold is numpy's "array is too big", raised
while tracing the step: XLA aborts the process on such a shape.

A while loop (``until``) runs as ``lax.while_loop`` bounded by ``n_steps``. Its outputs have
as many rows as steps ran, known only when running, and XLA cannot return an array whose
size is known only then. So a while loop is supported when every output it has keeps only
its last step (``h[-1]``, which the ``scan_save_mem`` rewrite makes ``keep=1``: one row
whenever ``n_steps >= 1``); a while loop whose full history is read is refused when
compiling, with that reason.

Random draws inside the step: the loop carries the generator as a shared state, which in the
program is a JAX key (made from the input generator at each call); the step's draws split it
as draws outside loops do, and the loop's final key is the generator's advanced state
(``RandomPlan`` counts the loop as one link of the generator's chain of draws).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.link.backend_scan import (
    check_initial_rows,
    check_rows,
    check_sequences,
    loop_layout,
    refusal,
    traced_step,
    while_refusal,
)
from tensorgraph.link.jax import register
from tensorgraph.scan.op import Scan


@register(Scan)
def jax_scan(op, node):
    import jax
    import jax.numpy as jnp

    from tensorgraph.link.jax.linker import GraphFunction, checks_scope, current_checks
    from tensorgraph.link.jax.shape import static_ints

    reason = refusal(op, node, "JAX", draws=True) or while_refusal(op, "JAX")
    if reason:
        raise NotImplementedError(reason)
    fgraph, step = traced_step(node, GraphFunction, "JAX")
    info = op.info
    # a random generator is a JAX key, carried as it is
    n_states, n_nit, n_shared, out_dtypes, lengths = loop_layout(op, fgraph)

    def as_dtype(value, dtype):
        return value if dtype is None else jnp.asarray(value, dtype=dtype)

    def call_step(seq_values, windows, shared, non_seqs):
        """One step: the inner outputs (cast to their types) and the checks' code."""
        args = list(seq_values)
        for k, window in enumerate(windows):
            for tap in info.state_taps[k]:
                args.append(window[lengths[k] + tap])
        args.extend(shared)
        args.extend(non_seqs)
        with checks_scope(node) as scope:
            outputs = step(*args)
        outputs = [as_dtype(v.data if isinstance(v, Constant) else o, d)
                   for v, o, d in zip(fgraph.outputs, outputs, out_dtypes)]
        return outputs, scope.result()

    def shift(window, new):
        return jnp.concatenate([window[1:], new[None].astype(window.dtype)], axis=0)

    def merge(code, new):
        return jnp.where(code == 0, new, code)

    def loop(n_steps, *outer):
        n = static_ints(n_steps, f"the number of steps of {op.title}")[0]
        seqs = outer[:info.n_seqs]
        inits = outer[info.n_seqs:info.n_seqs + n_states]
        shared = [as_dtype(v, d) for v, d in
                  zip(outer[info.outer_shared_start - 1:info.outer_non_seq_start - 1],
                      out_dtypes[n_states + n_nit:n_states + n_nit + n_shared])]
        non_seqs = outer[info.outer_non_seq_start - 1:]
        check_sequences(op, [np.shape(x)[0] for x in seqs], n)
        check_initial_rows(op, inits)
        sliced = []  # one array of n rows per (sequence, tap)
        for j, x in enumerate(seqs):
            lo, _ = info.seq_span(j)
            x = jnp.asarray(x)
            for tap in info.seq_taps[j]:
                sliced.append(jax.lax.slice_in_dim(x, tap - lo, tap - lo + n, axis=0))
        windows = []
        for k, init in enumerate(inits):
            dtype = out_dtypes[k]
            init = jnp.asarray(init, dtype=dtype)
            windows.append(init[init.shape[0] - lengths[k]:] if info.is_buffer_init(k)
                           else init[None])
        if info.as_while:
            return _while(n, sliced, windows, shared, non_seqs)
        code0 = jnp.int32(0)

        def body(carry, xs):
            windows, shared, code = carry
            outputs, step_code = call_step(xs, windows, shared, non_seqs)
            for y in outputs[:n_states + n_nit]:  # lax.scan stacks n rows of each
                check_rows(n, y.shape, y.dtype)
            windows = [shift(w, o) for w, o in zip(windows, outputs[:n_states])]
            shared = outputs[n_states + n_nit:n_states + n_nit + n_shared]
            return (windows, shared, merge(code, step_code)), tuple(outputs[:n_states + n_nit])

        (windows, shared, code), ys = jax.lax.scan(body, (windows, shared, code0), sliced,
                                                   length=n)
        current_checks().merge(code)
        results = []
        for i, y in enumerate(ys):
            keep = info.kept(i)
            if keep is not None:
                y = y[n - min(n, keep):]
            results.append(y)
        results.extend(shared)
        return results[0] if len(results) == 1 else tuple(results)

    def _while(n, sliced, windows, shared, non_seqs):
        """``until``: at most ``n`` steps, stopping after the step whose condition holds;
        every output keeps its last step only (see the module docstring)."""
        if n == 0:
            results = [jnp.zeros((0,) + w.shape[1:], w.dtype) for w in windows]
            shapes = jax.eval_shape(lambda: call_step([s[0] for s in sliced], windows, shared,
                                                      non_seqs)[0]) if n_nit else []
            results += [jnp.zeros((0,) + s.shape, s.dtype)
                        for s in shapes[n_states:n_states + n_nit]]
            results += shared
            return results[0] if len(results) == 1 else tuple(results)
        shapes = jax.eval_shape(
            lambda: call_step([s[0] for s in sliced], windows, shared, non_seqs)[0])
        lasts = [jnp.zeros(s.shape, s.dtype) for s in shapes[n_states:n_states + n_nit]]

        def cond(carry):
            t, stop = carry[0], carry[1]
            return (t < n) & jnp.logical_not(stop)

        def body(carry):
            t, _, windows, lasts, shared, code = carry
            xs = [jax.lax.dynamic_index_in_dim(s, t, axis=0, keepdims=False) for s in sliced]
            outputs, step_code = call_step(xs, windows, shared, non_seqs)
            windows = [shift(w, o) for w, o in zip(windows, outputs[:n_states])]
            lasts = list(outputs[n_states:n_states + n_nit])
            shared = outputs[n_states + n_nit:n_states + n_nit + n_shared]
            stop = outputs[-1] != 0
            return t + 1, stop, windows, lasts, shared, merge(code, step_code)

        carry = (jnp.int64(0), jnp.bool_(False), windows, lasts, shared, jnp.int32(0))
        _, _, windows, lasts, shared, code = jax.lax.while_loop(cond, body, carry)
        current_checks().merge(code)
        rows = [w[-1:] for w in windows] + [v[None] for v in lasts]
        results = [r if info.kept(i) == 1 else r[:0] for i, r in enumerate(rows)]
        results += list(shared)
        return results[0] if len(results) == 1 else tuple(results)

    return loop
