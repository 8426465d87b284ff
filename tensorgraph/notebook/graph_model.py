"""What the graph view shows, computed in the kernel: nodes, edges, groups and node details.

A pure function of core objects (no widget, no browser), tested on its own. The graph of a
variable, a list of them, an Apply, a FunctionGraph or a compiled function becomes:

* nodes: every Apply node and every leaf (input, shared variable, constant), each named by the
  id ``dprint`` prints (``tensorgraph.graph.ids``); the nodes computing outputs and updates
  say so (``o``: ``["output 0", "update of w"]``); constants and shape plumbing say what
  they are (``p``: ``'c'`` small constant, ``'C'`` large one, ``'shape'``, ``'pass'``: see
  ``folding.py``), so that the view can fold them;
* edges between them (an intermediate value's type on its edge, which the view shows on
  hover and on the selected node's edges);
* groups, for big graphs: one per line of user code that built the nodes, and inside a big
  line group one per named input it works on (a layer built in a Python loop reads its own
  weights ``W3``), so that a 64-layer network opens as a handful of boxes;
* for a node whose op holds an inner graph (a scan's step, an OpFromGraph), a group whose
  inside is that graph (``inner_graphs.py``): the node itself and the inner nodes, with the
  inner inputs marked by role (sequence, recurrent state with its tap, non-sequence) and
  edges from the outer inputs into them, and from the inner outputs to the node; inner ids
  are prefixed with the node's (``D/B``); the group is closed until opened, as any other;
* details of one node on request (its op's parameters, types, user lines, C or Python, the
  inner graph of a fused loop, a scan's layout), for the view's panel.

Only short texts travel: about 100-200 bytes per node (see ``payload_bytes``).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

from tensorgraph.graph.basic import Apply, Constant
from tensorgraph.graph.ids import graph_ids, roots_of
from tensorgraph.graph.utils import format_frame
from tensorgraph.notebook.folding import constant_kind, fold_kind
from tensorgraph.notebook.inner_graphs import (
    SEP,
    inner_graph,
    input_roles,
    is_scan,
    loop_summary,
    outer_to_inner,
    output_roles,
)
from tensorgraph.notebook.unwrapping import as_tensorgraph
from tensorgraph.printing import debugprint, leaf_kind, op_label, type_label

__all__ = ["GraphModel", "graph_model", "payload_bytes", "AUTO_OPEN", "GROUP_MAX"]

#: graphs with at most this many op nodes (shape plumbing not counted) open flat (no groups)
AUTO_OPEN = 80
#: a group with more members than this is split (by the named input it works on, then by order)
GROUP_MAX = 40


class GraphModel:
    """The graph of one object as the view sees it (see the module docstring).

    Attributes
    ----------
    nodes : list of dict, in id order, outputs last (the payload's node entries)
    edges : list of [source id, target id, label]
    groups : list of dict (id, label, parent, size; an inner graph's group also ``k``
        ('loop' for a scan, 'inner' otherwise), ``node`` (the node's id) and ``note``)
    by_id : {id: Apply node or leaf Variable or output Variable}, inner ones included
    scopes : {id prefix: the GraphIds of that graph}: ``''`` for the graph itself, ``'D/'``
        for the inner graph of node D
    """

    def __init__(self, obj, title: str | None = None, maker=None):
        obj = as_tensorgraph(obj)  # a PyTensor / PyMC function: the tensorgraph one behind it
        self.obj = obj
        # whose outputs these are: a compiled function's maker names its update outputs
        # ("update of w") also on a graph of it without the function (a profile's FunctionGraph,
        # a rewrite step's rebuilt graph), so every view says the same
        self._maker = maker
        self.ids = graph_ids(obj)
        maker = getattr(obj, "maker", None)
        self.function = obj if maker is not None else None
        self.fgraph = maker.fgraph if maker is not None else (
            obj if type(obj).__name__ == "FunctionGraph" else None)
        self.title = title or _title(obj)
        self.kinds = _runtime_kinds(obj)
        self.lines: list[str] = []
        self._line_index: dict[str, int] = {}
        self.by_id: dict = {}
        self.nodes: list[dict] = []
        self.edges: list[list] = []
        self.groups: list[dict] = []
        self.scopes: dict = {"": self.ids}
        self._folds = 0
        self._build()

    # -- building ---------------------------------------------------------------------------

    def _line_of(self, key) -> int | None:
        trace = getattr(getattr(key, "tag", None), "trace", ()) if isinstance(key, Apply) else ()
        if not trace:
            return None
        text = format_frame(trace[0])
        if text not in self._line_index:
            self._line_index[text] = len(self.lines)
            self.lines.append(text)
        return self._line_index[text]

    def _build(self) -> None:
        ids = self.ids
        self._add_nodes(ids, "", self.kinds)
        self._outer_nodes = len(self.nodes)
        maker = getattr(self.function, "maker", None) or self._maker
        roots = roots_of(self.obj)
        if maker is not None and len(roots) != len(maker.fgraph.outputs):
            maker = None  # not a graph of that function: outputs by position
        n_out = len(maker.outputs) if maker is not None else len(roots)
        targets = list(getattr(maker, "update_targets", ())) if maker is not None else []
        index = {n["id"]: n for n in self.nodes}
        for k, var in enumerate(roots):
            if k < n_out:
                text = f"output {k}" + (f": {var.name}" if var.name else "")
            else:
                target = targets[k - n_out] if k - n_out < len(targets) else None
                text = f"update of {target}" if target is not None else f"output {k}"
            index[ids[var]].setdefault("o", []).append(text)
        if self.count_apply(math_only=True) > AUTO_OPEN:
            self._group()
        for key in ids.order:
            if isinstance(key, Apply):
                self._add_inner(key, ids[key], "", index)

    def _add_nodes(self, ids, prefix: str, kinds) -> list[dict]:
        """Entries and edges of every node and leaf of one graph (``ids``), their ids prefixed
        with ``prefix`` (an inner graph's: ``'D/'``); the entries added."""
        added = []
        for key in ids.order:
            node_id = prefix + ids[key]
            self.by_id[node_id] = key
            if isinstance(key, Apply):
                entry = {"id": node_id, "k": "apply", "op": op_label(key.op),
                         "cls": type(key.op).__name__,
                         "t": type_label(key.outputs[0]) if len(key.outputs) == 1 else
                         f"{len(key.outputs)} outputs"}
                line = self._line_of(key)
                if line is not None:
                    entry["l"] = line
                flags = ""
                if getattr(key.op, "destroy_map", None):
                    flags += "i"
                if getattr(key.op, "view_map", None):
                    flags += "v"
                if type(getattr(key.op, "scalar_op", None)).__name__ == "Composite":
                    flags += "f"
                if flags:
                    entry["f"] = flags
                if kinds is not None and key in kinds:
                    entry["c"] = kinds[key]
                plumbing = fold_kind(key)
                if plumbing:
                    entry["p"] = plumbing
                for inp in key.inputs:
                    label = type_label(inp) if inp.owner is not None else ""
                    self.edges.append([prefix + ids[inp], node_id, label])
                variables = key.outputs
            else:
                text = key._label() if isinstance(key, Constant) else str(key)
                entry = {"id": node_id, "k": leaf_kind(key), "op": text, "t": type_label(key)}
                if isinstance(key, Constant):
                    entry["p"] = constant_kind(key)
                variables = [key]
            tv = _test_value_line(variables)
            if tv:
                entry["tv"] = tv
            self.nodes.append(entry)
            added.append(entry)
        return added

    def _add_inner(self, node, node_id: str, prefix: str, index: dict) -> None:
        """The inner graph of ``node`` (id ``node_id`` in the graph of ids prefix ``prefix``),
        when its op has one: a group holding the node and the inner graph, the inner inputs
        marked by role, edges from the node's inputs into the inner inputs they feed and from
        the inner outputs to the node (see the module docstring); inner graphs of inner nodes
        likewise, nested."""
        fgraph, function = inner_graph(node)
        if fgraph is None:
            return
        inner_ids = graph_ids(function if function is not None else fgraph)
        inner_prefix = node_id + SEP
        self.scopes[inner_prefix] = inner_ids
        entries = self._add_nodes(inner_ids, inner_prefix, _runtime_kinds(function))
        index.update((e["id"], e) for e in entries)
        outer = index[node_id]
        gid = f"in:{node_id}"
        n_apply = sum(1 for e in entries if e["k"] == "apply")
        loop = is_scan(node.op)
        self.groups.append({
            "id": gid, "label": f"{op_label(node.op)} [{node_id}]", "parent": outer.get("g"),
            "n": n_apply + 1, "k": "loop" if loop else "inner", "node": node_id,
            "note": (f"loop of {n_apply} inner node{'s' if n_apply != 1 else ''}: open it"
                     if loop else f"inner graph, {n_apply} node{'s' if n_apply != 1 else ''}: "
                     "open it")})
        outer["g"] = gid
        for entry in entries:
            entry["g"] = gid
        for pos, ((role, text, tap), var) in enumerate(zip(input_roles(node, fgraph),
                                                           fgraph.inputs)):
            if var in inner_ids and var.owner is None:
                entry = index[inner_prefix + inner_ids[var]]
                entry.update(op=text, r=role)
                if tap is not None:
                    entry["tap"] = tap
        for text, var in zip(output_roles(node, fgraph), fgraph.outputs):
            source = inner_prefix + inner_ids[var]
            index[source].setdefault("o", []).append(text)
            self.edges.append([source, node_id, ""])  # its "o" label says what it becomes
        # each outer input goes into the inner inputs it feeds, not into the node
        scope = self.scopes[prefix]
        dropped, routed = [], []
        for inp, feeds in zip(node.inputs, outer_to_inner(node, fgraph)):
            targets = [inner_prefix + inner_ids[fgraph.inputs[i]] for i in feeds
                       if fgraph.inputs[i] in inner_ids]
            if targets:
                source = prefix + scope[inp]
                dropped.append(source)
                label = type_label(inp) if inp.owner is not None else ""
                routed += [[source, t, label] for t in dict.fromkeys(targets)]
        for source in dropped:
            at = next(k for k, e in enumerate(self.edges) if e[0] == source and e[1] == node_id)
            del self.edges[at]
        self.edges += routed
        for key in inner_ids.order:
            if isinstance(key, Apply):
                self._add_inner(key, inner_prefix + inner_ids[key], inner_prefix, index)

    def count_apply(self, math_only: bool = False) -> int:
        """Op nodes of the graph itself (inner graphs' nodes not counted); ``math_only``:
        without the shape plumbing the view folds (``folding.fold_kind``), so a graph is
        grouped by what it draws."""
        return sum(1 for n in self.nodes[:self._outer_nodes]
                   if n["k"] == "apply" and not (math_only and n.get("p")))

    # -- groups -----------------------------------------------------------------------------

    def _group(self) -> None:
        """Groups by user line, then by the named input each node works on, then by order."""
        apply_nodes = [n for n in self.nodes if n["k"] == "apply"]
        by_line: dict = defaultdict(list)
        for n in apply_nodes:
            by_line[n.get("l")].append(n)
        consumers = defaultdict(list)  # leaf id -> the apply nodes reading it
        for src, dst, _ in self.edges:
            consumers[src].append(dst)
        index = {n["id"]: n for n in self.nodes}
        nearest = _nearest_named_inputs(apply_nodes, self.by_id, self.ids)
        # groups come in the user's creation order: a line's first node, a layer's weights
        born = {}
        for n in apply_nodes:
            for inp in self.by_id[n["id"]].inputs:
                if inp.owner is None and inp.name:
                    born[inp.name] = min(born.get(inp.name, _born(inp)), _born(inp))
        self._name_born = born
        for line, members in sorted(by_line.items(), key=lambda kv: (
                kv[0] is None, min(_born(self.by_id[m["id"]]) for m in kv[1]))):
            if len(members) < 2:
                continue
            text = self.lines[line] if line is not None else "made while compiling (no user line)"
            gid = self._new_group(f"{_short_line(text)}", None, members)
            if len(members) > GROUP_MAX:
                self._split(gid, members, nearest)
        # a leaf joins the (innermost) group of the first node that reads it
        for n in self.nodes:
            if n["k"] in ("input", "shared", "constant"):
                grouped = [index[c]["g"] for c in consumers.get(n["id"], ())
                           if c in index and "g" in index[c]]
                if grouped:
                    n["g"] = grouped[0]

    def _new_group(self, label: str, parent: str | None, members: list) -> str:
        gid = f"g{len(self.groups)}"
        self.groups.append({"id": gid, "label": label, "parent": parent, "n": len(members)})
        for m in members:
            m["g"] = gid
        return gid

    def _split(self, gid: str, members: list, nearest: dict) -> None:
        """Subgroups of a big group: by the named input (weights, data) nearest upstream of
        each member (see ``_nearest_named_inputs``); big or unnamed remainders in chunks."""
        key_of = {m["id"]: self.by_id[m["id"]] for m in members}
        ids = self.ids
        order = sorted(members, key=lambda m: -ids.number(key_of[m["id"]]))
        label = {m["id"]: nearest.get(m["id"]) for m in members}
        _merge_small_classes(label, key_of, ids)
        buckets: dict = defaultdict(list)
        for m in order:
            buckets[label[m["id"]]].append(m)
        if len(buckets) == 1:
            self._chunks(gid, order)
            return
        for name, part in sorted(buckets.items(), key=lambda kv: (
                kv[0] is None, self._name_born.get(kv[0], math.inf), str(kv[0]))):
            sub = self._new_group(f"{name}" if name else "other", gid, part)
            if len(part) > GROUP_MAX:
                self._chunks(sub, part)

    def _chunks(self, gid: str, members: list) -> None:
        members = sorted(members, key=lambda m: _born(self.by_id[m["id"]]))
        for start in range(0, len(members), GROUP_MAX):
            part = members[start:start + GROUP_MAX]
            self._new_group(f"part {start // GROUP_MAX + 1}", gid, part)

    # -- folds: groups a user picks --------------------------------------------------------

    def fold(self, node_ids: list[str], label: str) -> str:
        """Put the nodes ``node_ids`` (ids, at least two) into a new closed group of their own;
        returns its id (``f1``, ``f2``, ...).  They must sit in the same group (or all at the
        top): groups nest, they never overlap.  Nothing changes when this raises."""
        index = {n["id"]: n for n in self.nodes}
        picked = list(dict.fromkeys(node_ids))
        unknown = [i for i in picked if i not in index]
        if unknown:
            raise KeyError(f"fold: no node {unknown[0]!r} in this graph")
        if len(picked) < 2:
            raise ValueError(f"fold: pick at least two nodes, got {len(picked)}")
        where = {index[i].get("g") for i in picked}
        if len(where) > 1:
            shown = ", ".join(f"{i} in {index[i].get('g') or 'the top level'}" for i in picked[:6])
            raise ValueError("fold: the nodes must be in the same group (groups nest, they never "
                             f"overlap); got {shown}")
        self._folds += 1
        gid = f"f{self._folds}"
        self.groups.append({"id": gid, "label": label or f"{len(picked)} nodes folded",
                            "parent": where.pop(), "n": len(picked), "fold": True})
        for i in picked:
            index[i]["g"] = gid
        return gid

    def unfold(self, gid: str) -> None:
        """Undo ``fold``: the group's nodes go back to the group around it."""
        group = next((g for g in self.groups if g["id"] == gid), None)
        if group is None or not group.get("fold"):
            folds = [g["id"] for g in self.groups if g.get("fold")]
            raise ValueError(f"unfold: {gid!r} is not a fold (folds here: {folds or 'none'}; "
                             "groups by source line open with expand())")
        for n in self.nodes:
            if n.get("g") == gid:
                if group["parent"] is None:
                    del n["g"]
                else:
                    n["g"] = group["parent"]
        for g in self.groups:
            if g["parent"] == gid:
                g["parent"] = group["parent"]
        self.groups.remove(group)

    # -- reading ----------------------------------------------------------------------------

    def payload(self) -> dict:
        """The dict the view's ``graph`` trait holds (copies: a fold then reads as a change)."""
        return {"title": self.title, "nodes": [dict(n) for n in self.nodes],
                "edges": self.edges, "groups": [dict(g) for g in self.groups],
                "lines": self.lines, "function": self.function is not None}

    def group_path(self, node_id: str) -> list[str]:
        """The groups containing a node, outermost first."""
        parents = {g["id"]: g["parent"] for g in self.groups}
        entry = next((n for n in self.nodes if n["id"] == node_id), None)
        path, gid = [], entry.get("g") if entry else None
        while gid is not None:
            path.append(gid)
            gid = parents[gid]
        return path[::-1]

    def resolve(self, node_or_id) -> str:
        """The id of a node, variable or id text; KeyError naming what was asked otherwise."""
        if isinstance(node_or_id, str):
            text = node_or_id.strip()
            if text in self.by_id:
                return text
            if text.upper() in self.by_id:
                return text.upper()
            raise KeyError(f"no node with id {node_or_id!r} in this graph (ids look like 'A', "
                           "'BK', as dprint prints them)")
        for prefix, ids in self.scopes.items():  # the graph itself first, then inner graphs
            if node_or_id in ids:
                return prefix + ids[node_or_id]
        raise KeyError(f"{node_or_id} is not part of this graph")

    def scope_of(self, node_id: str) -> str:
        """The id prefix of the graph a node is in: ``''``, or ``'D/'`` for ``'D/B'``."""
        return node_id[:node_id.rfind(SEP) + 1]

    def detail(self, node_id: str) -> dict:
        """Everything the panel shows about one node (see the module docstring)."""
        key = self.by_id[node_id]
        entry = next(n for n in self.nodes if n["id"] == node_id)
        prefix = self.scope_of(node_id)
        ids = self.scopes[prefix]
        if not isinstance(key, Apply):
            out = {"id": node_id, "kind": entry["k"], "title": entry["op"], "type": entry["t"]}
            if "r" in entry:
                out["role"] = _role_text(entry)
            value = _leaf_value(key)
            if value is not None:
                out["value"] = value
            tests = _test_values([key])
            if tests:
                out["test_values"] = tests
            return out
        op = key.op
        detail = {
            "id": node_id, "kind": "apply", "title": str(op)[:400], "class": type(op).__name__,
            "params": {name: _short(getattr(op, name, None))
                       for name in (getattr(op, "__props__", None) or ())
                       if name != "scalar_op" or type(op.scalar_op).__name__ != "Composite"},
            "inputs": [{"id": prefix + ids[v], "label": v._label()[:80], "type": type_label(v)}
                       for v in key.inputs],
            # an output's own label repeats the (long) op: its name, or its index, says more
            "outputs": [{"label": (v.name or f"out{k}")[:80], "type": type_label(v)}
                        for k, v in enumerate(key.outputs)],
            "lines": _lines(key),
        }
        if entry.get("o"):
            detail["outputs_of_graph"] = entry["o"]
        if getattr(op, "destroy_map", None):
            detail["destroy_map"] = {str(k): v for k, v in op.destroy_map.items()}
        if getattr(op, "view_map", None):
            detail["view_map"] = {str(k): v for k, v in op.view_map.items()}
        if entry.get("c"):
            kind = entry["c"]
            detail["runs"] = "C" if kind == "C" else "Python (perform)"
            if kind != "C":
                detail["why_python"] = _why_python(key)
        inner = getattr(op, "scalar_op", None)
        if type(inner).__name__ == "Composite":
            detail["inner"] = _inner_graph(inner)
        elif _op_inner_fgraph(op) is not None:   # OpFromGraph, Scan: the inner graph's tree
            # the graph drawn in the node's group (a compiled step as it runs): its ids are
            # the group's without the prefix
            detail["inner"] = debugprint(inner_graph(key)[0], file="str").splitlines()
            detail["inner_group"] = f"in:{node_id}"
        loop = loop_summary(key)
        if loop is not None:
            detail["loop"] = loop
        tests = _test_values(key.outputs)
        if tests:
            detail["test_values"] = tests
        return detail

    def search(self, text: str) -> list[str]:
        """Ids of the nodes matching ``text``: an id, or words in the op, name or type."""
        text = text.strip()
        if not text:
            return []
        exact = [n["id"] for n in self.nodes if n["id"].lower() == text.lower()]
        lowered = text.lower()
        found = [n["id"] for n in self.nodes if n["id"] not in exact and (
            lowered in n["op"].lower() or lowered in n.get("t", "").lower()
            or lowered in n.get("cls", "").lower())]
        return exact + found


def graph_model(obj, title: str | None = None, maker=None) -> GraphModel:
    return GraphModel(obj, title, maker)


def payload_bytes(payload: dict) -> int:
    """Bytes of the payload as it travels (JSON)."""
    return len(json.dumps(payload, separators=(",", ":")).encode("utf-8"))


# ----------------------------------------------------------------------------------------------
# helpers


def _title(obj) -> str:
    name = getattr(obj, "name", None)
    if getattr(obj, "maker", None) is not None:
        return f"function {name}" if name else "compiled function"
    if type(obj).__name__ == "FunctionGraph":
        return "FunctionGraph"
    if isinstance(obj, (list, tuple)):
        names = [v.name for v in obj if getattr(v, "name", None)]
        if len(obj) <= 3:
            return ", ".join(str(v) for v in obj)[:80]
        return f"{len(obj)} outputs" + (f": {', '.join(names[:3])}, ..." if names else "")
    return str(obj)[:80]


def _runtime_kinds(obj):
    """{Apply: 'C' | 'Py'} for a compiled function (what its VM runs), else None."""
    vm = getattr(obj, "vm", None)
    if vm is None or getattr(obj, "maker", None) is None:
        return None
    nodes = getattr(vm, "nodes", None)
    thunks = getattr(vm, "thunks", None)
    if nodes is None or thunks is None:
        return None
    kinds = {node: str(getattr(t, "kind", "py")).lower() for node, t in zip(nodes, thunks)}
    return {node: "C" if kind.startswith("c") or kind == "quick" else "Py"  # quick: C too
            for node, kind in kinds.items()}


def _short_line(text: str, limit: int = 70) -> str:
    where, _, code = text.partition(": ")
    place = where.rsplit("/", 1)[-1]
    line = f"{place}: {code}" if code else place
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _merge_small_classes(label: dict, key_of: dict, ids, smallest: int = 3) -> None:
    """Nodes whose label few others share (the ``DimShuffle`` of a bias ``b3``) join the label
    of a node of the group reading them (the layer's ``W3``), and the labels join too."""
    counts: dict = defaultdict(int)
    for name in label.values():
        counts[name] += 1
    readers: dict = defaultdict(list)
    for node_id, node in key_of.items():
        for inp in node.inputs:
            if inp.owner is not None and ids[inp] in label:
                readers[ids[inp]].append(node_id)
    renamed: dict = {}
    for node_id, name in list(label.items()):
        if name is None or counts[name] >= smallest:
            continue
        for reader in readers.get(node_id, ()):
            other = renamed.get(label[reader], label[reader])
            if other is not None and other != name and counts[other] >= smallest:
                renamed[name] = other
                break
    for node_id, name in label.items():
        if name in renamed:
            label[node_id] = renamed[name]


def _nearest_named_inputs(entries: list, by_id: dict, ids) -> dict:
    """{node id: the name of the named graph input (``W3``) nearest to it upstream, or None}.
    A layer built in a loop reads its own weights: its nodes are nearer to them than to the
    previous layer's, in the forward and in the gradient graph."""
    order = sorted(entries, key=lambda m: -ids.number(by_id[m["id"]]))
    key_of = {m["id"]: by_id[m["id"]] for m in order}
    best: dict = {m["id"]: (None, float("inf")) for m in order}
    for _ in range(len(order)):  # relax until stable (few passes: order is nearly topological)
        changed = False
        for m in order:
            node = key_of[m["id"]]
            name, distance = best[m["id"]]
            named = [inp for inp in node.inputs if inp.owner is None and inp.name
                     and not isinstance(inp, Constant)]
            if named and distance > 0:
                # a layer is its parameters: a shared variable names it before the data
                named.sort(key=lambda v: leaf_kind(v) != "shared")
                name, distance = named[0].name, 0
            for inp in node.inputs:
                if inp.owner is not None and ids[inp] in best:
                    other, d = best[ids[inp]]
                    if other is not None and d + 1 < distance:
                        name, distance = other, d + 1
            if (name, distance) != best[m["id"]]:
                best[m["id"]] = (name, distance)
                changed = True
        if not changed:
            break
    return {node_id: name for node_id, (name, _) in best.items()}


def _born(key) -> float:
    """When a variable or an Apply node (its first output) was created: its ``auto_name``
    counter (the user's creation order; inf when unknown)."""
    var = key.outputs[0] if isinstance(key, Apply) else key
    try:
        return int(var.auto_name.rsplit("_", 1)[1])
    except (AttributeError, IndexError, ValueError):
        return math.inf


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _lines(node) -> list[str]:
    from tensorgraph.graph.utils import other_user_lines

    trace = getattr(node.tag, "trace", ())
    first = [format_frame(trace[0])] if trace else []
    return first + other_user_lines(node, limit=8)


def _leaf_value(var):

    value = None
    if isinstance(var, Constant):
        value = var.data
    elif hasattr(var, "get_value"):
        try:
            value = var.get_value(borrow=True)
        except TypeError:
            value = var.get_value()
    if value is None:
        return None
    return _array_summary(value)


def _array_summary(value) -> dict:
    """What travels of an array: shape, dtype, min/max/mean over the finite values, NaN and
    Inf counts and the first 8 values (never the array: it may be big)."""
    import numpy as np

    arr = np.asarray(value)
    summary = {"shape": list(arr.shape), "dtype": str(arr.dtype)}
    if arr.size and arr.dtype.kind in "biuf":
        if arr.dtype.kind == "f":
            finite = np.isfinite(arr)
            summary.update(nan=int(np.isnan(arr).sum()), inf=int(np.isinf(arr).sum()))
            arr_ok = arr[finite] if not finite.all() else arr
        else:
            arr_ok = arr
        if arr_ok.size:
            summary.update(min=float(arr_ok.min()), max=float(arr_ok.max()),
                           mean=float(arr_ok.mean(dtype="float64")))
    summary["preview"] = np.array2string(arr.ravel()[:8], precision=4, separator=", ")
    return summary


def _test_values(variables) -> list[dict]:
    """The test values (``var.tag.test_value``, set when ``compute_test_value`` is on) of
    ``variables``, summarised, each labelled with its variable."""
    found = []
    for k, var in enumerate(variables):
        value = getattr(getattr(var, "tag", None), "test_value", None)
        if value is not None:
            found.append({"label": var.name or f"out{k}", **_array_summary(value)})
    return found


def _test_value_line(variables) -> str:
    """One line per test value for the node's hover text: shape, range, mean, NaN/Inf."""
    lines = []
    for tv in _test_values(variables):
        text = f"test value {tv['label']}: {tv['dtype']} {tuple(tv['shape'])}"
        if "min" in tv:
            text += f" min {tv['min']:.4g} max {tv['max']:.4g} mean {tv['mean']:.4g}"
        bad = [f"{tv[k]} {name}" for k, name in (("nan", "NaN"), ("inf", "Inf")) if tv.get(k)]
        if bad:
            text += " (" + ", ".join(bad) + ")"
        lines.append(text)
    return "\n".join(lines)


def _role_text(entry: dict) -> str:
    """What an inner input of a loop is, in words: ``state h0, tap -1 (its value one step
    back)``."""
    role, text = entry["r"], entry["op"]
    tap = entry.get("tap")
    if role == "sequence":
        where = "this step's entry" if tap == 0 else f"entry t{tap:+d}"
        return f"{text}: a sequence, read at {where} in each step"
    if role == "state":
        return (f"{text}: a recurrent state, its value {-tap} step{'s' if tap != -1 else ''} "
                "back (the initial value before the first steps)")
    if role == "non-sequence":
        return f"{text}: the same value at every step"
    if role == "shared":
        return f"{text}: a shared variable the loop updates"
    return text


def _why_python(node) -> str:
    from tensorgraph.ifelse import IfElse

    if is_scan(node.op):
        _, step = inner_graph(node)
        kinds = _runtime_kinds(step) or {}
        in_c = sum(kind == "C" for kind in kinds.values())
        return (f"the loop is driven by the Scan op; its step is compiled: {in_c} of "
                f"{len(kinds)} inner nodes run C" + (" (open the group to see them)"
                                                     if kinds else ""))
    if isinstance(node.op, IfElse) or getattr(node.op, "lazy", False):
        return "a lazy op: the VM's Python loop runs it, so only the branch taken is computed"
    from tensorgraph.link.c.codegen import c_implementation

    if c_implementation(node.op) is None:
        return f"{type(node.op).__name__} has no C implementation (its numpy perform runs)"
    return "its C code declined these types (e.g. a dtype without C); perform runs"


def _op_inner_fgraph(op):
    """``op.fgraph`` when the op holds an inner graph (OpFromGraph, Scan), else None."""
    from tensorgraph.graph.fg import FunctionGraph

    inner = getattr(op, "fgraph", None)
    return inner if isinstance(inner, FunctionGraph) else None


def _inner_graph(composite) -> list[str]:
    """The fused loop's scalar graph, one assignment per line: ``t2 = mul(t0, i1)``."""
    names = {v: f"i{k}" for k, v in enumerate(composite.inputs)}
    lines = []
    for j, node in enumerate(composite.nodes):
        args = [names.get(v, str(getattr(v, "data", "?"))) for v in node.inputs]
        for out in node.outputs:
            names[out] = f"t{j}"
        lines.append(f"t{j} = {node.op.name}({', '.join(args)})  [{node.outputs[0].type.dtype}]")
    outs = ", ".join(names.get(v, "?") for v in composite.outputs)
    lines.append(f"-> {outs}")
    return lines
