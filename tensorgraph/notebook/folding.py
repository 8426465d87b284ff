"""Which boxes the graph view folds away, so that what it draws is the user's math.

A third of a gradient graph is not math the user wrote: constants, and *shape plumbing*
(``Shape_i`` fanning out to a dozen ``Alloc``s, ``DimShuffle``s that only add broadcastable
axes, ``SpecifyShape``, scalar/tensor conversions). By default the view draws

* a small constant as a labelled port of the node that reads it (``× 0.1``), a large one as a
  chip naming it (``▪K float64 (3, 4)``), instead of a box with an edge;
* shape plumbing as a badge on the node it serves (``shape: Alloc D, Shape_i F``).

Two steps: ``fold_kind`` classifies one Apply when the payload is built (``graph_model``
stores it as the entry's ``p``), and ``fold_plan`` decides, on the payload alone, what the
visible graph hides given the view's toggles and the nodes that must stay visible (selected,
highlighted, marked: a NaN found in an ``Alloc`` is shown). ``dprint`` and the payload keep
every node; only the drawing folds. ``plumbing_share`` counts what the issue measured.
"""

from __future__ import annotations

import re

from tensorgraph.graph.basic import Constant

__all__ = ["fold_kind", "constant_kind", "fold_plan", "plumbing_share", "UNFOLD_MARKS"]

#: a constant with at most this many elements and this long a label is a port, else a chip
SMALL_SIZE, SMALL_LABEL = 8, 16
#: marks that show a folded node (what the stepper stopped on, what a rewrite changed)
UNFOLD_MARKS = frozenset({"current", "error", "nonfinite", "added", "removed"})

#: the port of a constant read by an elemwise op says how it is used
_SYMBOLS = {"mul": "×", "add": "+", "sub": "−", "true_div": "÷", "truediv": "÷", "pow": "^",
            "maximum": "max",
            "minimum": "min", "gt": ">", "lt": "<", "ge": "≥", "le": "≤", "eq": "=",
            "int_div": "//"}
_COMMUTATIVE = {"mul", "add", "maximum", "minimum", "eq"}


def fold_kind(node) -> str | None:
    """``'shape'`` for an Apply that only reads its input's shape (``Shape``, ``Shape_i``),
    ``'pass'`` for one that only passes its input on reshaped for broadcasting or sizes
    (a ``DimShuffle`` adding axes, ``SpecifyShape``, scalar/tensor conversions, a
    ``MakeVector`` of integers, an ``Alloc`` or ``fill`` of a constant), else None."""
    op = node.op
    name = type(op).__name__
    if name in ("Shape", "Shape_i"):
        return "shape"
    if name in ("SpecifyShape", "ScalarFromTensor", "TensorFromScalar"):
        return "pass"
    if name == "DimShuffle":
        kept = [d for d in op.new_order if d != "x"]
        return "pass" if kept == list(range(op.input_ndim)) else None
    if name == "MakeVector":
        return "pass" if all(v.dtype.startswith(("int", "uint")) for v in node.inputs) else None
    if name == "Alloc" and isinstance(node.inputs[0], Constant):
        return "pass"
    if (name == "Elemwise" and type(op.scalar_op).__name__ == "Second"
            and isinstance(node.inputs[1], Constant)):
        return "shape"  # fill(x, c): x read for its shape only
    return None


def constant_kind(var) -> str:
    """``'c'`` for a constant drawn as a port (small), ``'C'`` for one drawn as a chip."""
    size = getattr(getattr(var, "data", None), "size", 1)
    return "c" if size == 1 or (size <= SMALL_SIZE and len(var._label()) <= SMALL_LABEL) else "C"


def _is_int(entry: dict) -> bool:
    return entry.get("t", "").startswith(("int", "uint"))


def fold_plan(payload: dict, *, shape_code: bool = False, constants: bool = True,
              keep=()) -> dict:
    """What a view hides: ``{"hidden": {id: 'const' | 'shape'}, "hosts": {hidden id: [the
    shown node ids it folds into]}, "edges": the payload's edges with the hidden nodes'
    taken out (a passed-on input goes to the hosts), "extra": {shown id: [[kind, text,
    [ids]], ...]}}`` where ``kind`` is ``'port'`` (constants read) or ``'shape'`` (plumbing
    folded in). ``shape_code`` True shows the plumbing, ``constants`` False the constants;
    ``keep`` ids are never hidden. Graph outputs and inner-graph inputs are never hidden."""
    nodes = {n["id"]: n for n in payload["nodes"]}
    keep = set(keep)
    consumers: dict = {}
    inputs: dict = {}
    for src, dst, _label in payload["edges"]:
        consumers.setdefault(src, []).append(dst)
        inputs.setdefault(dst, []).append(src)
    hidden: dict = {}
    for node_id, n in nodes.items():
        if node_id in keep or n.get("o") or n.get("r") or node_id not in consumers:
            continue
        if constants and n["k"] == "constant":
            hidden[node_id] = "const"
        elif not shape_code and n.get("p") in ("shape", "pass"):
            hidden[node_id] = "shape"
    if not shape_code:
        # size arithmetic (x.shape[0] * 2): the integer nodes computed only from folded
        # nodes and each other, feeding only folded plumbing and each other
        sizes = {i for i, n in nodes.items() if n["k"] == "apply" and i not in hidden
                 and i not in keep and not n.get("o") and _is_int(n) and i in consumers}
        shrank = True
        while shrank:
            shrank = False
            for node_id in list(sizes):
                if not (all(s in hidden or s in sizes for s in inputs.get(node_id, ()))
                        and all(hidden.get(c) == "shape" or c in sizes
                                for c in consumers[node_id])):
                    sizes.discard(node_id)
                    shrank = True
        hidden.update(dict.fromkeys(sizes, "shape"))
    # every hidden node reaches a drawn one: it has readers, and outputs are never hidden
    hosts = _hosts(hidden, consumers)
    edges, seen_edges = [], set()
    for src, dst, label in payload["edges"]:
        if src in hidden:
            continue
        if dst not in hidden:
            edges.append([src, dst, label])
            seen_edges.add((src, dst))
        elif nodes[dst].get("p") != "shape":  # (a shape read: the badge says so)
            for t in hosts[dst]:  # passed on: to what the folded node fed, once
                if (src, t) not in seen_edges and src != t:
                    seen_edges.add((src, t))
                    edges.append([src, t, label])
    extra: dict = {}
    for host, line in _lines(nodes, hidden, hosts, consumers, inputs):
        extra.setdefault(host, []).append(line)
    return {"hidden": hidden, "hosts": hosts, "edges": edges, "extra": extra}


def _hosts(hidden: dict, consumers: dict) -> dict:
    """{hidden id: the drawn nodes it reaches through hidden nodes only}."""
    hosts: dict = {}

    def hosts_of(node_id, seen=()):
        if node_id in hosts:
            return hosts[node_id]
        found = []
        for c in consumers.get(node_id, ()):
            if c not in hidden:
                found.append(c)
            elif c not in seen:
                found += hosts_of(c, (*seen, node_id))
        hosts[node_id] = list(dict.fromkeys(found))
        return hosts[node_id]

    for node_id in hidden:
        hosts_of(node_id)
    return {h: hosts[h] for h in hidden}


def _lines(nodes, hidden, hosts, consumers, inputs):
    """``(host id, [kind, text, ids])``: a port line of the constants each shown node reads
    (a constant broadcast by a folded ``DimShuffle`` is still that constant: ``× 3``), then a
    badge line of the plumbing folded into it."""
    # a folded pass-through node of constants only (DimShuffle{x}(3)) is a constant too
    valued: dict = {}  # id -> the constant's id it passes on

    def constant_of(node_id, depth=0):
        if node_id not in valued:
            n = nodes[node_id]
            srcs = inputs.get(node_id, ())
            found = None
            if hidden.get(node_id) == "const":
                found = node_id
            elif (hidden.get(node_id) == "shape" and n.get("p") == "pass" and len(srcs) == 1
                  and depth < 20):
                found = constant_of(srcs[0], depth + 1)
            valued[node_id] = found
        return valued[node_id]

    ports: dict = {}
    plumbing: dict = {}
    for node_id in hidden:
        const = constant_of(node_id)
        for c in dict.fromkeys(consumers[node_id]):
            if c in hidden:
                continue
            if const is not None:
                ports.setdefault(c, []).append((node_id, const))
        if const is None:
            for host in hosts[node_id]:
                plumbing.setdefault(host, []).append(node_id)
    for host in nodes:
        if host in ports:
            read = {inputs[host].index(src): _const_text(nodes[const])
                    for src, const in ports[host]}
            ids = list(dict.fromkeys(i for pair in ports[host] for i in pair))
            yield host, ["port", _port_text(nodes[host], len(inputs[host]), read), ids]
        if host in plumbing:
            members = plumbing[host]
            by_text: dict = {}  # "DimShuffle L R": one op's folded nodes together
            for m in members:
                by_text.setdefault(_plumbing_text(nodes[m], nodes, hidden, consumers),
                                   []).append(m)
            text = ", ".join(f"{t} {' '.join(ids)}" for t, ids in by_text.items())
            yield host, ["shape", f"shape: {text}", members]


def _port_text(host: dict, arity: int, read: dict) -> str:
    """How ``host`` uses the constants it reads (``{input position: text}``): ``× 0.1``, or
    where the order matters the expression with · for the other operand (``1 − ·``), or
    ``← value`` for ops without a symbol."""
    found = re.match(r"Elemwise\{(\w+)", host.get("op", ""))
    name = found.group(1) if found else ""
    symbol = _SYMBOLS.get(name)
    if symbol is None:
        return "  ".join(f"← {read[k]}" for k in sorted(read))
    if arity == 2 and (name not in _COMMUTATIVE or len(read) == 2):
        return f"{read.get(0, '·')} {symbol} {read.get(1, '·')}"
    return "  ".join(f"{symbol} {read[k]}" for k in sorted(read))


def _const_text(entry: dict) -> str:
    """A small constant's value; a large one's chip: its id and type (``▪K float64 (3, 4)``)."""
    if entry.get("p") == "C":
        return f"▪{entry['id']} {entry.get('t', '')}"
    text = entry["op"]
    if len(text) > SMALL_LABEL:  # 0.9189385332046727: a port, not a paragraph
        try:
            return f"{float(text):.6g}"
        except ValueError:
            return text[:SMALL_LABEL - 1] + "…"
    return text


def _plumbing_text(entry, nodes, hidden, consumers) -> str:
    """``Alloc(0.0)``: the op, with the constants only it reads."""
    # the op as dprint writes it when short (DimShuffle{x}, Shape_i{0}), else its class
    name = entry["op"] if len(entry["op"]) <= SMALL_LABEL else entry.get("cls") or entry["op"]
    if entry.get("cls") == "Elemwise":  # fill(x, c): an array of c shaped as x
        name = "fill"
    consts = [nodes[s]["op"] for s, why in hidden.items() if why == "const"
              and entry["id"] in consumers.get(s, ()) and nodes[s].get("p") == "c"]
    return f"{name}({', '.join(consts)})" if consts else name


def plumbing_share(visible: dict) -> dict:
    """``{"boxes", "plumbing", "share"}`` of a visible graph (``layout.visible_graph``):
    drawn boxes, and those that are constants or shape plumbing (closed groups are boxes,
    never plumbing). What issue 36 counted in the default view."""
    boxes = plumbing = 0
    for item in visible["items"].values():
        boxes += 1
        if not item.get("group") and (item.get("k") == "constant"
                                      or item.get("p") in ("shape", "pass")):
            plumbing += 1
    return {"boxes": boxes, "plumbing": plumbing,
            "share": round(plumbing / boxes, 3) if boxes else 0.0}
