"""Rewrites that take matrix products out of a loop and make one product over all its steps
(tag ``scan``, phase canonicalize, ``fast_run``).

A product inside a loop multiplies a few rows per step (an RNN's batch of 32): one product
over every step's rows at once (3200 rows) runs the same arithmetic at the speed of a large
product, and the loop keeps only what truly depends on the previous step.

* ``scan_pushout_seq_dots``: ``dot(x_t, W)`` of a sequence's row ``x_t`` and a value ``W``
  the same at every step becomes a new sequence ``Y = dot(X, W)`` computed before the loop
  (``X`` reshaped to one matrix of all rows); the step reads ``y_t``. An RNN's input
  projection ``dot(x_t, W_x)`` is the case.
* ``scan_pushout_add``: an accumulator, a state ``s`` updated as ``s + f_t`` (``s`` read by
  nothing else) of which only the final value is used, becomes an output ``f_t`` of every step
  and ``s_0 + sum_t f_t`` after the loop; when ``f_t = dot(a_t.T, b_t)`` (a weight's gradient
  in back-propagation through time), the sum is one product ``dot(A.T, B)`` of all steps'
  rows (``a_t`` read from its sequence when it is one, else output by the loop). Sums are
  then added in another order than the loop's (float rounding differs, values do not).
"""

from __future__ import annotations

import tensorgraph.tensor as tt
from tensorgraph.graph.basic import Constant, Variable, ancestors
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize
from tensorgraph.scalar.basic import Add
from tensorgraph.scan.op import Scan
from tensorgraph.scan.rewriting import _clients, _Item, _last_steps_read, _Parts
from tensorgraph.tensor.dot import Dot
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.shape import specify_shape

__all__ = ["scan_pushout_seq_dots", "scan_pushout_add"]


def _is_dot(node) -> bool:
    return node is not None and isinstance(node.op, Dot)


def _is_transpose(var) -> bool:
    node = var.owner
    return (node is not None and isinstance(node.op, DimShuffle)
            and node.op.new_order == (1, 0))


def _sequence_tap(parts: _Parts, var):
    """(sequence item, tap index) of a sequence placeholder, else None."""
    for item in parts.seqs:
        for i, ph in enumerate(item.phs):
            if ph is var:
                return item, i
    return None


def _rows_of_tap(parts: _Parts, item: _Item, i: int):
    """The outer rows a sequence tap reads at steps 0 .. n_steps - 1."""
    lo = min(min(item.taps), 0)
    offset = item.taps[i] - lo
    return item.outer[offset:offset + parts.n_steps]


def _invariant(parts: _Parts, var) -> bool:
    return isinstance(var, Constant) or any(var is r.phs[0] for r in parts.non_seqs)


def _outer_invariant(parts: _Parts, var):
    if isinstance(var, Constant):
        return var
    return next(r.outer for r in parts.non_seqs if var is r.phs[0])


# ----------------------------------------------------------------------------------------------
# dot(x_t, W) -> a sequence dot(X, W)


@register_canonicalize("scan")
@node_rewriter([Scan])
def scan_pushout_seq_dots(fgraph, node):
    """``dot(x_t, W)`` (``x_t`` a sequence's row, ``W`` the same at every step) is computed for
    all steps before the loop and read as a sequence."""
    parts = _Parts(node)
    outputs = parts.inner_outputs()
    inputs = [ph for s in parts.seqs for ph in s.phs] + [ph for s in parts.states
                                                         for ph in s.phs]
    inputs += [s.phs[0] for s in parts.shared] + [r.phs[0] for r in parts.non_seqs]
    mapping, made = {}, {}
    for var in ancestors(outputs, blockers=inputs):
        dot = var.owner
        if not _is_dot(dot) or var in mapping:
            continue
        x, w = dot.inputs
        tap = _sequence_tap(parts, x)
        if tap is None or not _invariant(parts, w) or w.ndim != 2 or x.ndim not in (1, 2):
            continue
        item, i = tap
        key = (id(item.outer), item.taps[i], w)
        if key not in made:
            seq = item.outer
            w_out = _outer_invariant(parts, w)
            if x.ndim == 1:  # X: steps x features
                product = tt.dot(seq, w_out)
            else:  # X: steps x rows x features, one matrix of all rows
                flat = seq.reshape((seq.shape[0] * seq.shape[1], seq.shape[2]))
                product = tt.dot(flat, w_out).reshape((seq.shape[0], seq.shape[1],
                                                       w_out.shape[1]))
            lo = min(min(item.taps), 0)
            offset = item.taps[i] - lo
            ph = var.type(f"{var.name or 'dot'}[t]" if var.name else
                          f"{item.label or 'seq'}_dot[t]")
            made[key] = ph
            parts.seqs.append(_Item(outer=product[offset:offset + parts.n_steps], taps=(0,),
                                    phs=[ph], label=f"{item.label or 'sequence'} @ W"))
        mapping[var] = made[key]
    if not mapping:
        return None
    parts.replace_inner(mapping)
    return parts.build()


# ----------------------------------------------------------------------------------------------
# accumulators: s + f_t -> s_0 + sum_t f_t


def _increment(out, ph):
    """f when ``out`` is ``ph + f`` (or ``f + ph``) of the state's dtype and ndim, else None."""
    node = out.owner
    if (node is None or not isinstance(node.op, Elemwise) or not isinstance(node.op.scalar_op, Add)
            or len(node.inputs) != 2 or out.type.dtype != ph.type.dtype
            or out.ndim != ph.ndim):
        return None
    a, b = node.inputs
    f = b if a is ph else a if b is ph else None
    if f is None or f.type.dtype != ph.type.dtype or f.ndim != ph.ndim:
        return None
    return f


@register_canonicalize("scan")
@node_rewriter([Scan])
def scan_pushout_add(fgraph, node):
    """Accumulators whose final value alone is used are summed after the loop (see the module
    docstring)."""
    parts = _Parts(node)
    if parts.cond is not None:
        return None
    found = []
    for s in parts.states:
        if s.taps != (-1,) or s.outer_out is None:
            continue
        if not (s.keep == 1 or (s.keep is None and _last_steps_read(fgraph, s.outer_out) == 1)):
            continue
        f = _increment(s.inner_out, s.phs[0])
        if f is not None:
            found.append((s, f))
    if not found:
        return None
    # the state's past value must be read by its own increment only
    usable = []
    for s, f in found:
        others = [o for o in parts.inner_outputs() if o is not s.inner_out]
        if s.phs[0] not in set(ancestors(others + [f])):
            usable.append((s, f))
    if not usable:
        return None
    rows = {}  # inner per-step value -> an outer variable whose rows are its steps

    def steps_of(var):
        if var not in rows:
            tap = _sequence_tap(parts, var)
            if tap is not None:
                rows[var] = _rows_of_tap(parts, *tap)
            else:
                item = _Item(inner_out=var, label=var.name or "")
                parts.nits.append(item)
                rows[var] = item  # the outer output, once the new node exists
        return rows[var]

    sums = []
    for s, f in usable:
        parts.states.remove(s)
        dot = f.owner
        if (_is_dot(dot) and all(i.ndim == 2 for i in dot.inputs)
                and _is_transpose(dot.inputs[0])
                and not _invariant(parts, dot.inputs[0].owner.inputs[0])
                and not _invariant(parts, dot.inputs[1])):
            sums.append((s, "dot", steps_of(dot.inputs[0].owner.inputs[0]),
                         steps_of(dot.inputs[1])))
        else:
            sums.append((s, "sum", steps_of(f), None))
    mapping = parts.build()
    new_node = parts.new_node

    def outer(value):
        if isinstance(value, Variable):
            return value
        return new_node.outputs[len(parts.states) + parts.nits.index(value)]

    result = dict(mapping)
    for s, kind, a, b in sums:
        if kind == "dot":
            a, b = outer(a), outer(b)
            a2 = a.reshape((a.shape[0] * a.shape[1], a.shape[2]))
            b2 = b.reshape((b.shape[0] * b.shape[1], b.shape[2]))
            total = tt.dot(a2.T, b2)
        else:
            total = outer(a).sum(axis=0)
        final = tt.shape_padleft(s.outer + total)
        if s.keep == 1:
            result[s.outer_out] = _with_sizes_of(final, s.outer_out)
        else:  # every reader reads the last step only: the same reads of one row
            for client, _ in list(_clients(fgraph, s.outer_out)):
                rebuilt = client.clone_with_new_inputs([final] + list(client.inputs[1:]),
                                                       strict=False)
                result.update((old, _with_sizes_of(new, old))
                              for old, new in zip(client.outputs, rebuilt.outputs))
    return result


def _with_sizes_of(new, old):
    """``new`` with the static sizes ``old``'s type knows and its own does not (so it can
    replace ``old``)."""
    merged = tuple(n if n is not None else o for n, o in zip(new.type.shape, old.type.shape))
    return specify_shape(new, merged) if merged != tuple(new.type.shape) else new
