"""One layout for every rewrite step of a function: nodes that survive a step keep their place.

The compile report steps through the graphs a rewrite history rebuilds. Laid out one by one,
every box would move at every step. Instead the union of all of them (every node some step
had, every edge some step drew) is laid out once, and each step draws its own nodes at their
places in the union, with a gap where a removed node stood: the eye sees only what changed.
A node is the same across steps when it comes from the same recorded node of the history
(``history.rebuild(n, memo)`` maps each recorded node and variable to its copy).

Flat graphs only: a step whose graph is grouped (more than ``graph_model.AUTO_OPEN`` op
nodes), or a union of more than ``UNION_MAX`` boxes, gets a layout of its own. Every node is
drawn (constants and shape plumbing are not folded, ``folding.py``): a rewrite changes them
too.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant
from tensorgraph.notebook.layout import box_text, visible_graph
from tensorgraph.notebook.layout import layout as compute_layout
from tensorgraph.printing import op_label, type_label

__all__ = ["StepLayout", "UNION_MAX"]

#: boxes in the union from which steps are laid out one by one (a union this big is slow to
#: lay out and too wide to read)
UNION_MAX = 500


class StepLayout:
    """The union layout of a rewrite history, computed on first use (``place``)."""

    def __init__(self, history):
        self.history = history
        self._uid: dict = {}       # id(recorded node or leaf) -> union id
        self._layout: dict | None = None
        self._edges: dict = {}
        self.too_big = False

    def place(self, model, memo: dict) -> dict | None:
        """The layout of one step's graph (``model``, built from ``history.rebuild(n,
        memo)``) at the union's places; None when the union cannot serve (see the module)."""
        if model.groups or self.too_big:
            return None
        union = self._union()
        if union is None:
            return None
        original = {id(copy): recorded for recorded, copy in memo.items()}
        visible = visible_graph(model.payload(), [])
        items, where = {}, {}
        for vid in visible["items"]:
            key = model.by_id[vid]
            uid = self._uid.get(id(original.get(id(key), key)))
            if uid is None or uid not in union["items"]:
                return None  # a node the history did not record: lay the step out alone
            items[vid], where[vid] = union["items"][uid], uid
        if not items:
            return None
        edges = []
        for a, b, n, label in visible["edges"]:
            pts = self._edges.get((where[a], where[b]))
            if pts is None:  # an edge of this step only: straight, box to box
                (ax, ay, _, ah), (bx, by, _, bh) = items[a], items[b]
                pts = [ax, ay + ah // 2, bx, by - bh // 2]
            edges.append([a, b, n, label, pts])
        boxes = items.values()
        bbox = [min(x - w // 2 for x, _, w, _ in boxes), min(y - h // 2 for _, y, _, h in boxes),
                max(x + w // 2 for x, _, w, _ in boxes), max(y + h // 2 for _, y, _, h in boxes)]
        return {"size": union["size"], "bbox": bbox, "items": items, "frames": {},
                "edges": edges, "text": box_text(visible), "engine": "dot (union of the steps)",
                "seconds": union["seconds"], "union": f"{id(self):x}"}

    def _union(self) -> dict | None:
        if self._layout is None and not self.too_big:
            visible = self._union_graph()
            if visible is None:
                self.too_big = True
                return None
            self._layout = compute_layout(visible)
            self._edges = {(a, b): pts for a, b, _n, _label, pts in self._layout["edges"]}
        return self._layout

    def _union_graph(self) -> dict | None:
        """Every recorded node and leaf, and every edge any step had, as a visible graph."""
        nodes, edges = [], {}

        def uid(obj) -> str:
            found = self._uid.get(id(obj))
            if found is None:
                found = self._uid[id(obj)] = f"u{len(self._uid)}"
                if hasattr(obj, "op"):
                    t = (type_label(obj.outputs[0]) if len(obj.outputs) == 1
                         else f"{len(obj.outputs)} outputs")
                    nodes.append({"id": found, "k": "apply", "op": op_label(obj.op), "t": t})
                else:
                    kind = "constant" if isinstance(obj, Constant) else "input"
                    text = obj._label() if isinstance(obj, Constant) else str(obj)
                    nodes.append({"id": found, "k": kind, "op": text, "t": type_label(obj)})
            return found

        def edge(var, node) -> None:
            source = uid(var.owner if var.owner is not None else var)
            edges.setdefault((source, uid(node)), type_label(var) if var.owner else "")

        history = self.history
        for var in history.original_inputs:
            uid(var)
        records = list(history.original_nodes)
        for step in history.steps:
            records += step.added
        for record in records:
            for var in record.inputs:
                edge(var, record.node)
        for step in history.steps:
            for node, _i, _old, new in step.changes:
                if node != "output":
                    edge(new, node)
        if len(nodes) > UNION_MAX:
            return None
        payload = {"nodes": nodes, "groups": [],
                   "edges": [[a, b, label] for (a, b), label in edges.items()]}
        return visible_graph(payload, [])
