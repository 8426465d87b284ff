"""Derivatives of a scan: back-propagation through time (``L_op``) and forward mode (``R_op``).

Back-propagation through time is another scan, running over the forward steps from the last
one back (the last ``truncate_gradient`` of them when set). At forward step ``t`` it receives
the values the forward step read (sequence taps, past states, non-sequences) and the
gradients of the outputs at ``t``, and computes the step's vector-Jacobian product with the
inner graph's own gradient. What it carries from step to step:

* per state read with taps down to ``-L``: the gradient flowing into its values of the ``L``
  previous steps from the steps already processed (one value for ``L = 1``, else ``L`` rows);
* per non-sequence: the sum of its gradient over the steps processed.

After the last backward step (forward step 0), the carried state gradients are those of the
initial values (zero when truncated before step 0); sequence gradients come out step by step
and are added into a zero tensor at each tap's offset.

A shared variable the loop updates keeps only its final value. What the backward loop needs
of such states is recorded instead, by a copy of the forward loop that also outputs it step
by step (same initial values, so the same values; ``scan_merge`` then runs the copy inside
the forward loop): the values computed from a generator alone (the random draws, so the
gradient sees the very draws of the forward pass), and the values of a float shared variable
(``updates={acc: acc + x_t}``), whose gradient is carried back like a state's. A gradient
that would need a generator's state itself is reported as undefined.

Forward mode is one scan computing the outputs and their tangents side by side: the tangents
of the states are states with the same taps, computed by the inner graph's own ``Rop``.
"""

from __future__ import annotations

import numpy as np

import tensorgraph.tensor as tt
from tensorgraph.gradient import (
    DisconnectedType,
    NullType,
    Rop,
    _no_test_values,
    disconnected_type,
    grad,
    grad_not_implemented,
)
from tensorgraph.graph.basic import Constant, ancestors, clone_replace, graph_inputs
from tensorgraph.scalar.basic import Cast
from tensorgraph.scan.op import Scan, ScanInfo
from tensorgraph.scan.shapes import outer_dependencies
from tensorgraph.tensor.creation import Alloc
from tensorgraph.tensor.elemwise import DimShuffle

__all__ = ["scan_l_op", "scan_r_op"]


def _is_float(var) -> bool:
    return str(getattr(var.type, "dtype", "")).startswith(("float", "complex"))


def _is_tensor(var) -> bool:
    return hasattr(var.type, "dtype")


class _Layout:
    """The forward scan's inner and outer variables, by kind."""

    def __init__(self, op, inputs, outputs=None):
        info = self.info = op.info
        fg = op.fgraph
        self.n = inputs[0]
        self.seqs = inputs[1:info.outer_state_start]
        self.inits = inputs[info.outer_state_start:info.outer_shared_start]
        self.shared = inputs[info.outer_shared_start:info.outer_non_seq_start]
        self.non_seqs = inputs[info.outer_non_seq_start:]
        self.seq_ph = [[fg.inputs[p] for p in ps] for ps in info.inner_seq_positions()]
        self.state_ph = [[fg.inputs[p] for p in ps] for ps in info.inner_state_positions()]
        self.shared_ph = fg.inputs[info.inner_shared_start:info.inner_non_seq_start]
        self.non_seq_ph = fg.inputs[info.inner_non_seq_start:]
        self.state_out = fg.outputs[:info.n_states]
        self.nit_out = fg.outputs[info.n_states:info.n_steps_outputs]
        self.shared_out = fg.outputs[info.n_steps_outputs:info.n_steps_outputs + info.n_shared]
        self.cond = fg.outputs[-1] if info.as_while else None
        if outputs is not None:
            self.state_values = outputs[:info.n_states]
            self.nit_values = outputs[info.n_states:info.n_steps_outputs]


# ----------------------------------------------------------------------------------------------
# Back-propagation through time


def scan_l_op(op: Scan, inputs, outputs, output_grads):
    info = op.info
    lay = _Layout(op, inputs, outputs)
    result = [disconnected_type() for _ in inputs]
    requested = [g is not None and _is_tensor(g) and not isinstance(g.type, NullType)
                 for g in output_grads]
    # zeros (what grad passes for outputs the cost does not read) need no backward work
    grads = [g if ok and _is_float(out) and not _is_zeros(g) else None
             for g, ok, out in zip(output_grads, requested, outputs)]
    if info.keep is not None:
        why = ("the loop keeps only its last steps (a memory rewrite made it); take the "
               "gradient of the graph before compiling")
        return [grad_not_implemented(op, i, v, why) if _is_float(v) else result[i]
                for i, v in enumerate(inputs)]
    if info.as_while and info.n_steps_outputs == 0:
        why = "a while loop with no output per step does not say how many steps it ran"
        return [grad_not_implemented(op, i, v, why) if _is_float(v) else result[i]
                for i, v in enumerate(inputs)]
    if any(g is not None for g in grads):
        result = _Backward(op, inputs, lay, grads, result).build()
    return _integers_get_zeros(op, inputs, requested, result)


def _is_zeros(g) -> bool:
    """Whether ``g`` is an allocation of zeros (``zeros_like``), as grad makes for outputs
    the cost does not read."""
    node = g.owner
    if node is None or not isinstance(node.op, Alloc):
        return False
    value = node.inputs[0]
    while value.owner is not None and (  # casts and broadcasts of the value
            isinstance(value.owner.op, DimShuffle)
            or isinstance(getattr(value.owner.op, "scalar_op", None), Cast)):
        value = value.owner.inputs[0]
    return isinstance(value, Constant) and not np.any(np.asarray(value.data))


def _integers_get_zeros(op, inputs, requested, result):
    """Integer inputs an output with a gradient depends on get zeros (as for any op: they
    cannot move infinitesimally), not 'disconnected'."""
    deps = outer_dependencies(op)
    connected = {i for o, wanted in enumerate(requested) if wanted for i in deps[o]}
    for i in connected:
        if (_is_tensor(inputs[i]) and not _is_float(inputs[i])
                and isinstance(result[i].type, DisconnectedType)):
            result[i] = tt.zeros_like(inputs[i], dtype="float64")
    return result


class _Backward:
    """Builds the backward scan of one forward scan node (see the module docstring)."""

    def __init__(self, op, inputs, lay: _Layout, grads, result):
        self.op, self.inputs, self.lay, self.info = op, inputs, lay, op.info
        self.grads = grads
        self.result = result

    def build(self):
        op, lay, info = self.op, self.lay, self.info
        inner = _InnerCopy(op, lay, self.grads)
        n = lay.n if not info.as_while else (lay.state_values + lay.nit_values)[0].shape[0]
        n = tt.cast(n, "int64") if n.type.dtype != "int64" else n
        trunc = info.truncate_gradient
        n_back = n if trunc == -1 else tt.minimum(n, trunc)
        start = n - n_back if trunc != -1 else None

        # placeholders of the backward step and what they are bound to outside
        seqs, seq_phs = [], []

        def add_sequence(values, placeholder):
            """``values`` has one row per forward step 0..n-1: run backwards over the kept."""
            rows = values[start:n] if start is not None else values
            seqs.append(rows[::-1])
            seq_phs.append(placeholder)

        for j, (x, taps) in enumerate(zip(lay.seqs, info.seq_taps)):
            lo, _ = info.seq_span(j)
            for k, ph in zip(taps, inner.seq_ph[j]):
                add_sequence(x[k - lo:k - lo + n], ph)
        for k, (init, taps) in enumerate(zip(lay.inits, info.state_taps)):
            length = info.state_length(k)
            head = init[:length] if info.is_buffer_init(k) else tt.shape_padleft(init)
            history = tt.concatenate([head, lay.state_values[k]])
            for tap, ph in zip(taps, inner.state_ph[k]):
                add_sequence(history[tap + length:tap + length + n], ph)
        grad_phs = []
        for i, g in enumerate(self.grads[:info.n_steps_outputs]):
            if g is None:
                grad_phs.append(None)
                continue
            ph = g.type.clone(shape=g.type.shape[1:])(f"d{inner.labels[i]}[t]")
            add_sequence(g, ph)
            grad_phs.append(ph)

        # the carried gradients: per float state, per float non-sequence
        carried = []  # (placeholder, initial value, kind, index)
        adjoints = {}
        for k, out in enumerate(inner.state_out):
            if not _is_float(out):
                continue
            length = info.state_length(k)
            state_type = out.type
            init = tt.zeros_like(lay.inits[k], dtype=state_type.dtype)
            later = f"d{inner.labels[k]} from later steps"
            if length == 1:
                ph = state_type(later)
            else:
                ph = state_type.clone(shape=(length,) + tuple(state_type.shape))(later)
                init = init[:length] if info.is_buffer_init(k) else tt.shape_padleft(init)
            carried.append((ph, init, "state", k))
            pending = ph if length == 1 else ph[0]
            g = grad_phs[k]
            adjoints[out] = pending if g is None else pending + g
        for m, out in enumerate(inner.nit_out):
            g = grad_phs[info.n_states + m]
            if g is not None and _is_float(out):
                adjoints[out] = g
        for q, out in enumerate(inner.shared_out):  # a float shared state: like a state
            if not _is_float(out):
                continue
            g = self.grads[info.n_steps_outputs + q]
            ph = out.type(f"d{_name(lay.shared[q])} from later steps")
            init = g if g is not None else tt.zeros_like(lay.shared[q])
            carried.append((ph, init, "shared", q))
            adjoints[out] = ph
        wrt = []
        for j in range(info.n_seqs):
            wrt += [ph for ph in inner.seq_ph[j] if _is_float(ph)]
        for k in range(info.n_states):
            wrt += [ph for ph in inner.state_ph[k] if _is_float(ph)]
        wrt += [ph for ph in inner.shared_ph if _is_float(ph)]
        non_seq_wrt = [r for r, ph in enumerate(inner.non_seq_ph) if _is_float(ph)]
        wrt += [inner.non_seq_ph[r] for r in non_seq_wrt]
        with _no_test_values():
            step_grads = grad(None, wrt, known_grads=adjoints, disconnected_inputs="ignore",
                              return_disconnected="None", null_gradients="return")
        by_ph = dict(zip(wrt, step_grads))
        nulls = [g for g in step_grads if g is not None and isinstance(g.type, NullType)]
        if nulls:
            return self._undefined(nulls[0].type.why_null)
        for r in non_seq_wrt:
            ph = inner.non_seq_ph[r]
            if by_ph.get(ph) is None:
                continue
            dtype = ph.type.dtype
            acc_ph = ph.type(f"d{_name(ph)}(sum)")
            carried.append((acc_ph, tt.zeros_like(lay.non_seqs[r], dtype=dtype), "non_seq", r))

        new_states = []
        for ph, _, kind, index in carried:
            if kind == "non_seq":
                g = by_ph.get(inner.non_seq_ph[index])
                new_states.append(ph if g is None else ph + g)
                continue
            if kind == "shared":
                g = by_ph.get(inner.shared_ph[index])
                new_states.append(tt.zeros_like(ph) if g is None else g)
                continue
            k = index
            length = info.state_length(k)
            taps = info.state_taps[k]
            terms = {tap: by_ph.get(tap_ph) for tap, tap_ph in zip(taps, inner.state_ph[k])}
            if length == 1:
                g = terms.get(-1)
                new_states.append(tt.zeros_like(ph) if g is None else g)
                continue
            rows = []
            for i in range(length):
                row = ph[i + 1] if i + 1 < length else None
                g = terms.get(-(i + 1))
                if g is not None:
                    row = g if row is None else row + g
                rows.append(tt.zeros_like(ph[0]) if row is None else row)
            new_states.append(tt.stack(rows))
        seq_grad_outputs = []  # (j, tap, gradient of the tap's value at the step)
        for j in range(info.n_seqs):
            for k, ph in zip(info.seq_taps[j], inner.seq_ph[j]):
                g = by_ph.get(ph)
                if g is not None:
                    seq_grad_outputs.append((j, k, g))

        # the backward scan: sequences, carried states, step gradients, non-sequences
        step_outputs = new_states + [g for _, _, g in seq_grad_outputs]
        # the step's own results (tanh's output, read by its gradient) come from the forward
        # loop's outputs instead of being computed again
        needed = set(ancestors(step_outputs))
        computed = {}
        values = list(lay.state_values) + list(lay.nit_values)
        for i, out in enumerate(inner.state_out + inner.nit_out):
            if out in needed and out.owner is not None and out not in computed:
                ph = out.type(f"{inner.labels[i]}[t]")
                add_sequence(values[i], ph)
                computed[out] = ph
        if computed:
            step_outputs = clone_replace(step_outputs, computed)
        used = set(graph_inputs(step_outputs))
        recorded = [(v, ph) for v, ph in zip(inner.recordable, inner.recorded_ph) if ph in used]
        if recorded:
            for value, (_, ph) in zip(_recording_scan(op, lay, [v for v, _ in recorded]),
                                      recorded):
                add_sequence(value, ph)
        kept = [(x, ph) for x, ph in zip(seqs, seq_phs) if ph in used]
        unrecorded = [v for v in inner.shared_ph if v in used and v not in inner.recorded_ph]
        if unrecorded:
            return self._undefined(
                "the gradient would need the state of a generator the loop updates "
                f"({', '.join(map(str, unrecorded))}) at every step; draw the values outside "
                "the loop and pass them as a sequence")
        non_seq_used = [(v, ph) for v, ph in zip(lay.non_seqs, inner.non_seq_ph) if ph in used]
        back_info = ScanInfo(seq_taps=[(0,)] * len(kept), state_taps=[(-1,)] * len(carried),
                             n_nit_sot=len(seq_grad_outputs), n_shared=0,
                             n_non_seqs=len(non_seq_used))
        labels = {"sequences": [_name(ph) for _, ph in kept],
                  "states": [_name(ph) for ph, _, _, _ in carried],
                  "nit_sot": [f"d{_name(lay.seq_ph[j][0])}" for j, _, _ in seq_grad_outputs],
                  "non_sequences": [_name(ph) for _, ph in non_seq_used]}
        name = f"grad of {op.name}" if op.name else "grad of scan"
        back = Scan([ph for _, ph in kept] + [ph for ph, _, _, _ in carried]
                    + [ph for _, ph in non_seq_used], step_outputs, back_info, name=name,
                    mode=op.mode, labels=labels, allow_gc=op.allow_gc)
        outs = back(n_back, *[x for x, _ in kept], *[init for _, init, _, _ in carried],
                    *[v for v, _ in non_seq_used])
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]

        # gradients of the outer inputs
        result = self.result
        first_is_zero = None if start is None else tt.eq(start, 0)
        for (ph, init, kind, index), values in zip(carried, outs):
            final = tt.sum(values[-1:], axis=0)  # zero-step loops leave the initial zeros
            if kind == "non_seq":
                result[info.outer_non_seq_start + index] = final
                continue
            if first_is_zero is not None:
                final = tt.switch(first_is_zero, final, tt.zeros_like(final))
            if kind == "shared":
                result[info.outer_shared_start + index] = final
                continue
            k = index
            init_var = lay.inits[k]
            if info.is_buffer_init(k):
                length = info.state_length(k)
                rows = final[::-1] if length > 1 else tt.shape_padleft(final)
                final = tt.inc_subtensor(tt.zeros_like(init_var)[:length], rows)
            result[info.outer_state_start + k] = final
        seq_grads = {}
        for (j, k, _), values in zip(seq_grad_outputs, outs[len(carried):]):
            lo, _ = info.seq_span(j)
            x = lay.seqs[j]
            total = seq_grads.get(j, tt.zeros_like(x))
            begin = k - lo if start is None else k - lo + start
            seq_grads[j] = tt.inc_subtensor(total[begin:k - lo + n], values[::-1])
        for j, g in seq_grads.items():
            result[1 + j] = g
        return result

    def _undefined(self, why: str):
        """Every float input connected to a differentiated output gets an undefined
        gradient saying ``why``."""
        null = NullType(f"{self.op.title}: {why}")
        deps = outer_dependencies(self.op)
        for o, g in enumerate(self.grads):
            if g is None:
                continue
            for i in deps[o]:
                if _is_float(self.inputs[i]):
                    self.result[i] = null()
        return self.result


class _InnerCopy:
    """A copy of the forward step for the backward step to differentiate, with the values
    computed from shared states alone replaced by placeholders of recorded sequences."""

    def __init__(self, op, lay: _Layout, grads):
        info = op.info
        fg = op.fgraph
        replace = {v: v.type(v.name) for v in fg.inputs}
        record = _recorded_variables(op, lay, grads)
        for v in record:
            replace[v] = v.type.clone(shape=v.type.shape)(f"{_name(v)}[t]")
        outputs = clone_replace(list(fg.outputs), replace)
        self.outputs = outputs
        new = [replace[v] for v in fg.inputs]
        positions = info.inner_seq_positions()
        self.seq_ph = [[new[p] for p in ps] for ps in positions]
        self.state_ph = [[new[p] for p in ps] for ps in info.inner_state_positions()]
        self.shared_ph = new[info.inner_shared_start:info.inner_non_seq_start]
        self.non_seq_ph = new[info.inner_non_seq_start:]
        self.state_out = outputs[:info.n_states]
        self.nit_out = outputs[info.n_states:info.n_steps_outputs]
        self.shared_out = outputs[info.n_steps_outputs:info.n_steps_outputs + info.n_shared]
        names = list(op.labels.get("states", ())) + list(op.labels.get("nit_sot", ()))
        names += [""] * info.n_steps_outputs
        #: how the backward loop names output i of the step
        self.labels = [names[i] or f"output{i}" for i in range(info.n_steps_outputs)]
        #: values the backward loop may read as recorded sequences: the draws above, and
        #: float shared states (their placeholders)
        self.recordable = record + [v for v in lay.shared_ph if _is_float(v)]
        self.recorded_ph = [replace[v] for v in self.recordable]


def _recorded_variables(op, lay: _Layout, grads) -> list:
    """Tensor values of the step computed from shared states and nothing the gradient flows
    through (a random draw with constant parameters), that a differentiated output reads."""
    fg = op.fgraph
    shared = set(lay.shared_ph)
    if not shared:
        return []
    outs = list(lay.state_out) + list(lay.nit_out) + list(lay.shared_out)
    needed = set(ancestors([out for out, g in zip(outs, grads) if g is not None]))
    differentiable = {ph for group in lay.seq_ph + lay.state_ph for ph in group if _is_float(ph)}
    differentiable |= {ph for ph in lay.non_seq_ph if _is_float(ph)}
    differentiable |= {ph for ph in lay.shared_ph if _is_float(ph)}
    varying = set(differentiable)
    record = []
    for node in fg.toposort():
        reads_diff = any(i in varying for i in node.inputs)
        if reads_diff:
            varying.update(node.outputs)
            continue
        if any(i in shared for i in node.inputs):
            record += [o for o in node.outputs
                       if _is_tensor(o) and o in needed and o not in lay.shared_out]
    return record


def _recording_scan(op, lay: _Layout, record) -> list:
    """A copy of the forward loop that also outputs ``record`` at every step (same initial
    shared states, so the same draws); returns those outputs."""
    info = op.info
    fg = op.fgraph
    k = info.n_steps_outputs
    outputs = (list(fg.outputs[:k]) + list(record) + list(fg.outputs[k:]))
    names = list(op.labels.get("nit_sot", [])) + [_name(v) for v in record]
    labels = dict(op.labels, nit_sot=names)
    keep = None if info.keep is None else info.keep + (None,) * len(record)
    copy = Scan(fg.inputs, outputs, info.replace(n_nit_sot=info.n_nit_sot + len(record),
                                                 keep=keep),
                name=op.name, mode=op.mode, labels=labels, allow_gc=op.allow_gc)
    outs = copy(lay.n, *lay.seqs, *lay.inits, *lay.shared, *lay.non_seqs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return outs[k:k + len(record)]


def _name(var) -> str:
    return var.name or var.auto_name


# ----------------------------------------------------------------------------------------------
# Forward mode


def scan_r_op(op: Scan, inputs, eval_points):
    info = op.info
    lay = _Layout(op, inputs)
    fg = op.fgraph
    points = list(eval_points)
    if any(p is not None for p in points[info.outer_shared_start:info.outer_non_seq_start]):
        raise NotImplementedError(f"{op.title}: R_op along a shared variable the loop updates")
    seq_points = points[1:info.outer_state_start]
    init_points = points[info.outer_state_start:info.outer_shared_start]
    non_seq_points = points[info.outer_non_seq_start:]

    replace = {v: v.type(v.name) for v in fg.inputs}
    outputs = clone_replace(list(fg.outputs), replace)
    new = [replace[v] for v in fg.inputs]
    seq_ph = [[new[p] for p in ps] for ps in info.inner_seq_positions()]
    state_ph = [[new[p] for p in ps] for ps in info.inner_state_positions()]
    shared_ph = new[info.inner_shared_start:info.inner_non_seq_start]
    non_seq_ph = new[info.inner_non_seq_start:]

    tangent_seqs = [j for j, p in enumerate(seq_points) if p is not None and _is_float(lay.seqs[j])]
    tangent_states = [k for k in range(info.n_states) if _is_float(outputs[k])]
    tangent_non_seqs = [r for r, p in enumerate(non_seq_points)
                        if p is not None and _is_float(lay.non_seqs[r])]
    wrt, tangent_ph = [], []
    seq_tangent_ph = {}
    for j in tangent_seqs:
        seq_tangent_ph[j] = [ph.type(f"d{_name(ph)}") for ph in seq_ph[j]]
        wrt += seq_ph[j]
        tangent_ph += seq_tangent_ph[j]
    state_tangent_ph = {}
    for k in tangent_states:
        state_tangent_ph[k] = [ph.type(f"d{_name(ph)}") for ph in state_ph[k]]
        wrt += state_ph[k]
        tangent_ph += state_tangent_ph[k]
    non_seq_tangent_ph = {r: non_seq_ph[r].type(f"d{_name(non_seq_ph[r])}")
                          for r in tangent_non_seqs}
    wrt += [non_seq_ph[r] for r in tangent_non_seqs]
    tangent_ph += [non_seq_tangent_ph[r] for r in tangent_non_seqs]
    differentiated = [o for o in outputs[:info.n_steps_outputs] if _is_float(o)]
    if not wrt or not differentiated:
        return [None] * len(op.fgraph.outputs[:info.n_steps_outputs + info.n_shared])

    with _no_test_values():
        tangents = Rop(differentiated, wrt, tangent_ph, disconnected_outputs="ignore",
                       return_disconnected="zero")
    tangents = tangents if isinstance(tangents, list) else [tangents]
    tangent_of = dict(zip(differentiated, tangents))
    state_tangent_out = [tangent_of[outputs[k]] for k in tangent_states]
    nit_float = [m for m in range(info.n_nit_sot) if _is_float(outputs[info.n_states + m])]
    nit_tangent_out = [tangent_of[outputs[info.n_states + m]] for m in nit_float]
    for k, t in zip(tangent_states, state_tangent_out):
        if t.type.dtype != outputs[k].type.dtype:
            raise NotImplementedError(f"{op.title}: the tangent of output {k} changes dtype")

    k0 = info.n_steps_outputs
    inner_inputs = ([ph for group in seq_ph for ph in group]
                    + [ph for j in tangent_seqs for ph in seq_tangent_ph[j]]
                    + [ph for group in state_ph for ph in group]
                    + [ph for k in tangent_states for ph in state_tangent_ph[k]]
                    + list(shared_ph) + list(non_seq_ph)
                    + [non_seq_tangent_ph[r] for r in tangent_non_seqs])
    inner_outputs = (outputs[:info.n_states] + state_tangent_out
                     + outputs[info.n_states:k0] + nit_tangent_out
                     + outputs[k0:k0 + info.n_shared] + ([outputs[-1]] if info.as_while else []))
    new_info = info.replace(
        seq_taps=info.seq_taps + tuple(info.seq_taps[j] for j in tangent_seqs),
        state_taps=info.state_taps + tuple(info.state_taps[k] for k in tangent_states),
        n_nit_sot=info.n_nit_sot + len(nit_float),
        n_non_seqs=info.n_non_seqs + len(tangent_non_seqs), keep=None)
    labels = {"sequences": list(op.labels.get("sequences", [])) + [f"d{j}" for j in tangent_seqs]}
    tangent_op = Scan(inner_inputs, inner_outputs, new_info, name=op.name, mode=op.mode,
                      labels=labels, allow_gc=op.allow_gc)
    tangent_inits = [init_points[k] if init_points[k] is not None
                     else tt.zeros_like(lay.inits[k]) for k in tangent_states]
    outs = tangent_op(lay.n, *lay.seqs, *[seq_points[j] for j in tangent_seqs], *lay.inits,
                      *tangent_inits, *lay.shared, *lay.non_seqs,
                      *[non_seq_points[r] for r in tangent_non_seqs])
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    result = [None] * (k0 + info.n_shared)
    for slot, k in enumerate(tangent_states):
        result[k] = outs[info.n_states + slot]
    nit_start = info.n_states + len(tangent_states) + info.n_nit_sot
    for slot, m in enumerate(nit_float):
        result[info.n_states + m] = outs[nit_start + slot]
    return result

