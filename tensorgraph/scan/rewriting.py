"""Rewrites of scan nodes, registered into ``optdb`` (tag ``scan``; every one is a step of
the rewrite history like any other rewrite).

* ``scan_pushout`` (canonicalize): inner computations that read only non-sequences and
  constants move out of the loop and are computed once: ``dot(x_t, W.T)`` inside becomes
  ``dot(x_t, W_T)`` with ``W_T = W.T`` computed outside; non-sequences nothing reads any
  more and outputs nobody reads (not fed back) are removed.
* ``scan_pushout_rewritten`` (after ``blas`` and fusion, before ``merge2`` and ``inplace``):
  what the inner graph's own rewrites make from non-sequences alone (a ``Gemv``'s ``W.T``
  and zero buffer) is computed outside too; ``scan_use_invariant_inputs`` makes the
  compiled step read it.
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
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.rewriting.basic import (
    GraphRewriter,
    RewriteSettings,
    apply_replacement,
    graph_rewriter,
    node_rewriter,
)
from tensorgraph.rewriting.db import EquilibriumDB, WalkerDB
from tensorgraph.rewriting.optdb import optdb, register_canonicalize
from tensorgraph.rewriting.presets import rewrite_for_mode
from tensorgraph.scan.op import Scan, ScanInfo
from tensorgraph.tensor.subtensor import Subtensor

__all__ = ["scan_pushout", "scan_pushout_rewritten", "scan_use_invariant_inputs",
           "scan_merge", "scan_save_mem"]


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
    """Move out what the inner graph computes from non-sequences and constants."""
    wanted, non_seq_phs = _invariant_values(parts)
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


def _invariant_values(parts: _Parts, constants_too: bool = False):
    """(the inner values computed from non-sequences and constants alone that the rest of
    the step or its outputs read, {non-sequence placeholder: outer value}).

    Nodes computed from constants alone stay inside (constant folding folds them there) and
    are copied out when an invariant node outside reads them, unless ``constants_too``: after
    the inner graph is rewritten, those left are ones folding refused (an ``Alloc`` of a
    constant shape), run at every step unless they move out too."""
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
            if constants_too and n.inputs:
                invariant.update(n.outputs)
                movable.append(n)
        elif all(i in invariant or i in constant or isinstance(i, Constant) for i in n.inputs):
            invariant.update(n.outputs)
            movable.append(n)
    if not movable:
        return [], non_seq_phs
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
    return wanted, non_seq_phs


@node_rewriter([Scan])
def scan_pushout_rewritten(fgraph, node):
    """Invariants the inner graph's own rewrites make move out of the loop too.

    ``scan_pushout`` (canonicalize) sees the step as written; the inner graph is rewritten
    later, when it is compiled with the function's mode (``Scan.prepare_for_mode``), and those
    rewrites make new values that depend on non-sequences only: ``dot(h, W)`` of a vector
    ``h`` becomes ``Gemv(zeros(W.shape[1]), 1, W.T, h, 0)`` in the ``blas`` phase, whose
    ``W.T``, ``W.shape[1]`` and zero buffer would be computed at every step.

    Here (after the outer graph's ``blas``, fusion and Gemv pair phases, before its ``merge2``
    and ``inplace``) a copy of the inner graph is rewritten as the function's mode says,
    ``inplace`` left out (a value moved out must not be one the step overwrites); each value
    of it computed from non-sequences and constants alone that the step reads is computed
    outside, once, and passed as a new non-sequence. The loop keeps its inner graph as
    written (its compile records every rewrite step, Dot -> Gemv included); the new
    non-sequence's placeholder carries the value's structural key (``tag.scan_invariant``),
    and ``scan_use_invariant_inputs``, in the same phase of the inner graph's own rewriting,
    replaces the value equal to it by the placeholder. Runs only inside a mode's rewriting
    (``fgraph.rewrite_mode``)."""
    op = node.op
    mode = op.mode if op.mode is not None else getattr(fgraph, "rewrite_mode", None)
    if isinstance(mode, str):  # scan(mode="...") by name: its inner rewriting not known here
        return None
    if mode is None or isinstance(getattr(mode, "optimizer", None), GraphRewriter):
        return None

    scratch = FunctionGraph(list(op.fgraph.inputs), list(op.fgraph.outputs), clone=True)
    rewrite_for_mode(scratch, mode, excluding=("inplace",))
    if any(n.op.destroy_map for n in scratch.apply_nodes):
        return None  # a rewrite outside 'inplace' made an op overwrite its input: leave it
    rewritten = Scan(scratch.inputs, scratch.outputs, op.info, name=op.name, mode=op.mode,
                     labels=op.labels, allow_gc=op.allow_gc)
    found = _Parts(rewritten.make_node(*node.inputs))
    wanted, non_seq_phs = _invariant_values(found, constants_too=True)
    if not wanted:
        return None
    inner_inputs = found.op.fgraph.inputs
    memo = {}
    keys = [_position_key(v, inner_inputs, memo) for v in wanted]
    parts = _Parts(node)
    known = {r.phs[0].tag.scan_invariant for r in parts.non_seqs
             if hasattr(r.phs[0].tag, "scan_invariant")}
    outer_values = clone_replace(wanted, non_seq_phs)
    added = False
    for var, key, outer in zip(wanted, keys, outer_values):
        if key in known:
            continue
        known.add(key)
        ph = var.type(var.name)
        ph.tag.scan_invariant = key
        parts.non_seqs.append(_Item(outer=outer, phs=[ph], label=var.name or ""))
        added = True
    return parts.build() if added else None


def _position_key(var, inputs, memo):
    """A structural key of an inner value: ops, constants and the positions of the inner
    inputs it reads (equal in every copy of the same inner graph)."""
    positions = {v: i for i, v in enumerate(inputs)}

    def leaf(v):
        if isinstance(v, Constant):
            return ("const", v.signature())
        if v.owner is None:
            return ("input", positions.get(v, -1))
        return memo[v]

    if var.owner is None:
        return leaf(var)
    for n in io_toposort([v for v in ancestors([var]) if v.owner is None], [var]):
        if n.outputs[0] in memo:
            continue
        args = tuple(leaf(i) for i in n.inputs)
        for out in n.outputs:
            memo[out] = (n.op, args, out.index)
    return memo[var]


@graph_rewriter
def scan_use_invariant_inputs(fgraph):
    """In a scan's inner graph, values equal to what a placeholder tagged by
    ``scan_pushout_rewritten`` stands for (``tag.scan_invariant``: its structural key) read
    the placeholder instead: the loop computes them once, outside."""
    tagged = {v.tag.scan_invariant: v for v in fgraph.inputs
              if hasattr(v.tag, "scan_invariant")}
    if not tagged:
        return 0
    memo, pairs = {}, []
    for n in fgraph.toposort():
        for out in n.outputs:
            ph = tagged.get(_position_key(out, fgraph.inputs, memo))
            if ph is not None and ph.type == out.type:
                pairs.append((out, ph))
    if not pairs:
        return 0
    settings = RewriteSettings.from_config()
    return int(apply_replacement(fgraph, scan_use_invariant_inputs, None, pairs, settings))


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

# after the phases that make new inner values (blas 4, fusion 5, gemv_pair_fusion 5.5), before
# merge2 (6: merges the moved values with equal ones outside) and inplace (7)
scan_late = WalkerDB()
optdb.register("scan_late", scan_late, position=5.8)
scan_late.register("scan_pushout_rewritten", scan_pushout_rewritten, "fast_run", "scan")
optdb.register("scan_use_invariant_inputs", scan_use_invariant_inputs, "fast_run", "scan",
               position=5.81)
