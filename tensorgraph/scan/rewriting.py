"""Rewrites of scan nodes, registered into ``optdb`` (tag ``scan``; every one is a step of
the rewrite history like any other rewrite).

* ``scan_pushout`` (canonicalize): inner computations that read only non-sequences and
  constants move out of the loop and are computed once: ``dot(x_t, W.T)`` inside becomes
  ``dot(x_t, W_T)`` with ``W_T = W.T`` computed outside; non-sequences nothing reads any
  more and outputs nobody reads (not fed back) are removed.
* ``scan_merge`` (phase ``scan_opt``): two loops over the same number of steps, neither
  reading the other's results, become one loop (its inner graph holds both steps); equal
  sequences and non-sequences are read once, and states that turn out to compute the same
  thing (the same initial value and step) are computed once.
* ``scan_save_mem`` (phase ``scan_opt``): an output read only through its last ``k`` steps
  (``h[-1]``, ``h[-k:]``, as ``reduce`` does) keeps only those: the loop holds a ring of
  ``max(k, taps)`` steps instead of ``n_steps``.

The inner graph itself is rewritten by the outer function's mode when the function is
compiled (``Scan.prepare_for_mode``): canonicalize, stabilize, fusion, BLAS, inplace... run on
it as on any graph, and its rewrite history is the compiled inner function's
(``Scan.runner_of(node).function.maker.fgraph.rewrite_history``).
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant, ancestors, clone_replace, io_toposort
from tensorgraph.rewriting.basic import graph_rewriter, node_rewriter
from tensorgraph.rewriting.db import EquilibriumDB
from tensorgraph.rewriting.optdb import optdb, register_canonicalize
from tensorgraph.scan.op import Scan, ScanInfo

__all__ = ["scan_pushout", "scan_merge", "scan_save_mem"]


class _Item:
    """One input or output group of a scan, with the inner and outer variables it ties."""

    __slots__ = ("outer", "taps", "phs", "inner_out", "outer_out", "keep", "label")

    def __init__(self, outer=None, taps=None, phs=(), inner_out=None, outer_out=None,
                 keep=None, label=""):
        self.outer, self.taps, self.phs = outer, taps, list(phs)
        self.inner_out, self.outer_out, self.keep, self.label = (inner_out, outer_out, keep,
                                                                 label)


class _Parts:
    """A scan node taken apart into lists rewrites edit, then put together by ``build``."""

    def __init__(self, node):
        op = node.op
        info, fg = op.info, op.fgraph
        self.op, self.node = op, node
        self.n_steps = node.inputs[0]
        labels = op.labels

        def lab(kind, i):
            names = labels.get(kind, ())
            return names[i] if i < len(names) else ""

        self.seqs = [_Item(outer=node.inputs[1 + j], taps=info.seq_taps[j],
                           phs=[fg.inputs[p] for p in ps], label=lab("sequences", j))
                     for j, ps in enumerate(info.inner_seq_positions())]
        self.states = [_Item(outer=node.inputs[info.outer_state_start + k],
                             taps=info.state_taps[k], phs=[fg.inputs[p] for p in ps],
                             inner_out=fg.outputs[k], outer_out=node.outputs[k],
                             keep=info.kept(k), label=lab("states", k))
                       for k, ps in enumerate(info.inner_state_positions())]
        self.nits = [_Item(inner_out=fg.outputs[info.n_states + m],
                           outer_out=node.outputs[info.n_states + m],
                           keep=info.kept(info.n_states + m), label=lab("nit_sot", m))
                     for m in range(info.n_nit_sot)]
        k0 = info.n_steps_outputs
        self.shared = [_Item(outer=node.inputs[info.outer_shared_start + q],
                             phs=[fg.inputs[info.inner_shared_start + q]],
                             inner_out=fg.outputs[k0 + q], outer_out=node.outputs[k0 + q],
                             label=lab("shared", q))
                       for q in range(info.n_shared)]
        self.non_seqs = [_Item(outer=node.inputs[info.outer_non_seq_start + r],
                               phs=[fg.inputs[info.inner_non_seq_start + r]],
                               label=lab("non_sequences", r))
                         for r in range(info.n_non_seqs)]
        self.cond = fg.outputs[-1] if info.as_while else None
        self.info = info
        self.name = op.name
        #: (dropped item, twin): outputs computed once, by the twin
        self.aliases = []

    def inner_outputs(self) -> list:
        return ([s.inner_out for s in self.states] + [m.inner_out for m in self.nits]
                + [s.inner_out for s in self.shared]
                + ([self.cond] if self.cond is not None else []))

    def replace_inner(self, mapping) -> None:
        """Replace inner variables (placeholders or expressions) in every inner output."""
        new = clone_replace(self.inner_outputs(), mapping)
        it = iter(new)
        for item in self.states + self.nits + self.shared:
            item.inner_out = next(it)
        if self.cond is not None:
            self.cond = next(it)

    def build(self) -> dict:
        """A new scan node from the parts (``self.new_node``); {old outer output: new outer
        output}."""
        items_with_keep = self.states + self.nits
        keep = tuple(i.keep for i in items_with_keep)
        info = ScanInfo(seq_taps=[s.taps for s in self.seqs],
                        state_taps=[s.taps for s in self.states], n_nit_sot=len(self.nits),
                        n_shared=len(self.shared), n_non_seqs=len(self.non_seqs),
                        as_while=self.cond is not None,
                        truncate_gradient=self.info.truncate_gradient,
                        keep=keep if any(k is not None for k in keep) else None,
                        lengths_must_match=self.info.lengths_must_match)
        inputs = ([ph for s in self.seqs for ph in s.phs] + [ph for s in self.states
                                                            for ph in s.phs]
                  + [s.phs[0] for s in self.shared] + [r.phs[0] for r in self.non_seqs])
        labels = {"sequences": [s.label for s in self.seqs],
                  "states": [s.label for s in self.states],
                  "nit_sot": [m.label for m in self.nits],
                  "shared": [s.label for s in self.shared],
                  "non_sequences": [r.label for r in self.non_seqs]}
        op = Scan(inputs, self.inner_outputs(), info, name=self.name, mode=self.op.mode,
                  labels=labels, allow_gc=self.op.allow_gc)
        outer = ([s.outer for s in self.seqs] + [s.outer for s in self.states]
                 + [s.outer for s in self.shared] + [r.outer for r in self.non_seqs])
        node = self.new_node = op.make_node(self.n_steps, *outer)
        mapping = {}
        for item, new in zip(self.states + self.nits + self.shared, node.outputs):
            if item.outer_out is not None:
                mapping[item.outer_out] = new
        for dropped, twin in self.aliases:
            mapping[dropped.outer_out] = mapping[twin.outer_out]
        return mapping


def _clients(fgraph, var) -> list:
    return fgraph.clients.get(var, [])


# ----------------------------------------------------------------------------------------------
# Invariants out of the loop, unused parts away


@register_canonicalize("scan")
@node_rewriter([Scan])
def scan_pushout(fgraph, node):
    """Inner values computed from non-sequences and constants only move out of the loop;
    unused non-sequences and unread outputs not fed back go away."""
    parts = _Parts(node)
    changed = _push_out_invariants(parts)
    changed |= _drop_unread_outputs(fgraph, parts)
    changed |= _drop_unused_non_seqs(parts)
    if not changed:
        return None
    return parts.build()


def _push_out_invariants(parts: _Parts) -> bool:
    outputs = parts.inner_outputs()
    non_seq_phs = {r.phs[0]: r.outer for r in parts.non_seqs}
    inputs = [ph for s in parts.seqs for ph in s.phs] + [ph for s in parts.states
                                                         for ph in s.phs]
    inputs += [s.phs[0] for s in parts.shared] + list(non_seq_phs)
    nodes = io_toposort(inputs, outputs)
    invariant = set(non_seq_phs)
    constant = set()  # computed from constants only: folded inside, copied out when read
    movable = []
    for n in nodes:
        if all(isinstance(i, Constant) or i in constant for i in n.inputs):
            constant.update(n.outputs)
        elif all(i in invariant or i in constant or isinstance(i, Constant) for i in n.inputs):
            invariant.update(n.outputs)
            movable.append(n)
    if not movable:
        return False
    moved = set(movable)
    # the values the varying part (or the outputs) reads from the invariant part
    wanted, seen = [], set()
    for n in nodes:
        if n in moved:
            continue
        for i in n.inputs:
            if i.owner in moved and i not in seen:
                seen.add(i)
                wanted.append(i)
    for out in outputs:
        if out.owner in moved and out not in seen:
            seen.add(out)
            wanted.append(out)
    if not wanted:
        return False
    outer_values = clone_replace(wanted, non_seq_phs)
    mapping = {}
    for var, outer in zip(wanted, outer_values):
        ph = var.type(var.name)
        mapping[var] = ph
        parts.non_seqs.append(_Item(outer=outer, phs=[ph], label=var.name or ""))
    parts.replace_inner(mapping)
    return True


def _drop_unread_outputs(fgraph, parts: _Parts) -> bool:
    kept = [m for m in parts.nits
            if _clients(fgraph, m.outer_out) or m.outer_out in fgraph.outputs]
    if len(kept) == len(parts.nits):
        return False
    parts.nits = kept
    return True


def _drop_unused_non_seqs(parts: _Parts) -> bool:
    used = set(ancestors(parts.inner_outputs()))
    kept = [r for r in parts.non_seqs if r.phs[0] in used]
    if len(kept) == len(parts.non_seqs):
        return False
    parts.non_seqs = kept
    return True


# ----------------------------------------------------------------------------------------------
# Merging loops


def _mergeable(a, b) -> bool:
    ia, ib = a.op.info, b.op.info
    return (a.inputs[0] is b.inputs[0] and not ia.as_while and not ib.as_while
            and ia.keep is None and ib.keep is None
            and ia.truncate_gradient == ib.truncate_gradient
            and ia.lengths_must_match == ib.lengths_must_match and a.op.mode == b.op.mode
            and a.op.allow_gc == b.op.allow_gc)


def _depends(fgraph, node, other) -> bool:
    """Whether ``node`` reads (through any path) an output of ``other``."""
    outs = set(other.outputs)
    return any(v in outs for v in ancestors(node.inputs))


@graph_rewriter
def scan_merge(fgraph):
    """Loops over the same ``n_steps`` that do not read each other's results become one."""
    from tensorgraph.rewriting.basic import RewriteSettings, apply_replacement

    settings = RewriteSettings.from_config()
    merged = 0
    while True:
        scans = [n for n in fgraph.toposort() if isinstance(n.op, Scan)]
        pair = next(((a, b) for i, a in enumerate(scans) for b in scans[i + 1:]
                     if _mergeable(a, b) and not _depends(fgraph, b, a)
                     and not _depends(fgraph, a, b)), None)
        if pair is None:
            return merged
        a, b = pair
        mapping = _merged(a, b)
        if not apply_replacement(fgraph, scan_merge, a, list(mapping.items()), settings):
            return merged
        merged += 1


def _merged(a, b) -> dict:
    """{outputs of a and b: outputs of the merged loop}."""
    pa, pb = _Parts(a), _Parts(b)
    rename = {}
    for s in pb.seqs:  # the same sequence with the same taps is read once
        twin = next((t for t in pa.seqs if t.outer is s.outer and t.taps == s.taps), None)
        if twin is None:
            pa.seqs.append(s)
        else:
            rename.update(zip(s.phs, twin.phs))
    for r in pb.non_seqs:
        twin = next((t for t in pa.non_seqs if t.outer is r.outer), None)
        if twin is None:
            pa.non_seqs.append(r)
        else:
            rename[r.phs[0]] = twin.phs[0]
    if rename:
        pb.replace_inner(rename)
    pa.states += pb.states
    pa.nits += pb.nits
    pa.shared += pb.shared
    names = [n for n in (a.op.name, b.op.name) if n]
    pa.name = "+".join(names) if names else None
    _unify_recurrences(pa)
    return pa.build()


def _unify_recurrences(parts: _Parts) -> None:
    """Compute once the states (and shared states) with the same initial value, taps and
    step: assume all such pairs equal, keep the pairs whose steps are then identical, repeat
    until none is dropped (equal starts and equal steps give equal values at every step)."""
    def candidates(items, same):
        pairs, kept = [], []
        for b in items:
            twin = next((a for a in kept if same(a, b)), None)
            if twin is None:
                kept.append(b)
            else:
                pairs.append((twin, b))
        return pairs

    states = candidates(parts.states, lambda a, b: a.outer is b.outer and a.taps == b.taps
                        and a.keep == b.keep)
    shared = candidates(parts.shared, lambda a, b: a.outer is b.outer)
    pairs = states + shared
    while pairs:
        rename = {pb: pa for a, b in pairs for pa, pb in zip(a.phs, b.phs)}
        keys = {}
        good = [(a, b) for a, b in pairs
                if _key(a.inner_out, rename, keys) == _key(b.inner_out, rename, keys)]
        if len(good) == len(pairs):
            break
        pairs = good
    if pairs:
        _drop_twins(parts, pairs)
    _drop_twin_nits(parts)


def _drop_twins(parts: _Parts, pairs) -> None:
    rename = {pb: pa for a, b in pairs for pa, pb in zip(a.phs, b.phs)}
    dropped = {id(b): a for a, b in pairs}
    parts.replace_inner(rename)
    parts.states = [s for s in parts.states if id(s) not in dropped]
    parts.shared = [s for s in parts.shared if id(s) not in dropped]
    parts.aliases += [(b, a) for a, b in pairs]


def _drop_twin_nits(parts: _Parts) -> None:
    nit_twins = {}
    unique_nits = []
    keys = {}
    for m in parts.nits:
        key = (_key(m.inner_out, {}, keys), m.keep)
        if key in nit_twins:
            parts.aliases.append((m, nit_twins[key]))
        else:
            nit_twins[key] = m
            unique_nits.append(m)
    parts.nits = unique_nits


def _key(var, rename, memo):
    """A structural key of an inner expression (placeholders through ``rename``): equal keys,
    equal values."""
    def leaf(v):
        v = rename.get(v, v)
        if isinstance(v, Constant):
            return ("const", v.signature())
        return memo[v] if v.owner is not None else ("input", id(v))

    var = rename.get(var, var)
    if var.owner is None:
        return leaf(var)
    for node in io_toposort([v for v in ancestors([var]) if v.owner is None], [var]):
        if node.outputs[0] in memo:
            continue
        inputs = tuple(leaf(i) for i in node.inputs)
        for out in node.outputs:
            memo[out] = (node.op, inputs, out.index)
    return memo[var]


# ----------------------------------------------------------------------------------------------
# Keeping only the last steps


def _last_steps_read(fgraph, var):
    """How many last steps the clients of ``var`` read (``var[-k]``, ``var[-k:]`` with a
    constant k), or None if some client reads more (or ``var`` is a function output)."""
    from tensorgraph.tensor.subtensor import Subtensor

    if var in fgraph.outputs:
        return None
    need = 0
    for client, _ in _clients(fgraph, var):
        if client == "output" or not isinstance(client.op, Subtensor):
            return None
        if client.inputs[0] is not var:
            return None
        entry = client.op.idx_list[0] if client.op.idx_list else None
        first = client.inputs[1] if len(client.inputs) > 1 else None
        if entry == "int" and isinstance(first, Constant) and int(first.data) < 0:
            need = max(need, -int(first.data))
        elif (isinstance(entry, tuple) and entry[1] == "int" and entry[2] is None
              and entry[3] is None and isinstance(first, Constant) and int(first.data) < 0):
            need = max(need, -int(first.data))
        else:
            return None
    return need


@node_rewriter([Scan])
def scan_save_mem(fgraph, node):
    """Outputs read only through their last k steps keep only those."""
    parts = _Parts(node)
    changed_items = []
    for item in parts.states + parts.nits:
        if item.keep is not None:
            continue
        need = _last_steps_read(fgraph, item.outer_out)
        if need is not None:
            item.keep = need
            changed_items.append(item)
    if not changed_items:
        return None
    mapping = parts.build()
    result = {}
    for old, new in mapping.items():
        if not any(i.outer_out is old for i in changed_items):
            result[old] = new
            continue
        # the readers of the last steps read them from the shorter output (the output
        # itself is not the same value any more)
        for client, _ in list(_clients(fgraph, old)):
            rebuilt = client.clone_with_new_inputs([new] + list(client.inputs[1:]), strict=False)
            for o, n in zip(client.outputs, rebuilt.outputs):
                result[o] = n
    return result


scan_opt = EquilibriumDB()
optdb.register("scan_opt", scan_opt, position=3.5)
scan_opt.register("scan_merge", scan_merge, "fast_run", "fast_compile", "scan")
scan_opt.register("scan_save_mem", scan_save_mem, "fast_run", "fast_compile", "scan")
