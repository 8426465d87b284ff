"""``GraphView``: the interactive graph widget, and ``show``.

The kernel computes what to draw (``graph_model``: nodes, edges, groups) and where
(``layout``: ``dot`` on the visible part, off the main thread, time-limited, cached, with each
box's text lines); the browser (``nbext/graph_view.js`` and the parts it imports, joined into
one module by ``assets.es_module``) draws it as SVG it controls, so selecting, highlighting
and colouring never need a new layout. Everything a user can click is also a synced trait or a
method, so scripts and tests drive the view:

``selected``      the selected node's id (synced both ways); ``select(node_or_id)``
``expanded``      the open groups; ``expand(...)`` / ``collapse(...)`` / ``expand_all()``
``highlight(nodes, label=...)``  mark nodes (``highlight_ids``, ``highlight_label``)
``set_overlay({node_or_id: number}, title=...)``  colour nodes by a number (a heat map)
``marks``         ``{id: 'current' | 'done' | 'error' | 'added' | 'removed' | ...}`` classes
``detail``        what the panel shows for the selected node
``show_shape_code``  draw shape plumbing as boxes (default False: folded into a badge on the
                  node it serves); ``inline_constants`` (default True): constants as ports of
                  their readers. ``set_folding(shape_code=..., constants=...)`` sets both.
                  A folded node that is selected, highlighted or marked (``UNFOLD_MARKS``) is
                  drawn anyway (``unfolded``): the stepper, the profile and the scrubber reach
                  every node.

Other widgets (the compile report, the stepper, the profile view) embed a GraphView and drive
it through these traits and methods; they do not draw graphs themselves.

The display bundle also holds a static SVG of the current picture and a text summary, for
nbconvert, nbviewer and GitHub, where no widget runs.
"""

from __future__ import annotations

import threading

import anywidget
import traitlets

from tensorgraph.notebook.assets import asset, es_module
from tensorgraph.notebook.bundles import StaticFallback, with_static_forms
from tensorgraph.notebook.folding import UNFOLD_MARKS
from tensorgraph.notebook.graph_model import GraphModel
from tensorgraph.notebook.layout import visible_graph
from tensorgraph.notebook.layout import layout as compute_layout
from tensorgraph.notebook.static_svg import static_svg

__all__ = ["GraphView", "show"]


class GraphView(StaticFallback, anywidget.AnyWidget):
    """An interactive view of a graph: a Variable, a list of them, an Apply, a FunctionGraph
    or a compiled Function.

    >>> import tensorgraph as tg, tensorgraph.tensor as tt
    >>> x = tt.vector("x")
    >>> view = GraphView(tt.exp(x) * 2)
    >>> view.select("A"); view.selected
    'A'
    """

    _esm = es_module("graph_view.js")
    _css = asset("graph_view.css")

    graph = traitlets.Dict().tag(sync=True)
    layout = traitlets.Dict().tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    detail = traitlets.Dict().tag(sync=True)
    highlight_ids = traitlets.List(traitlets.Unicode()).tag(sync=True)
    highlight_label = traitlets.Unicode("").tag(sync=True)
    overlay = traitlets.Dict().tag(sync=True)
    marks = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(520).tag(sync=True)
    show_shape_code = traitlets.Bool(False).tag(sync=True)
    inline_constants = traitlets.Bool(True).tag(sync=True)
    unfolded = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(self, obj, *, title: str | None = None, height: int = 520, maker=None,
                 **kwargs):
        self.model = GraphModel(obj, title, maker)
        self._layout_lock = threading.Lock()
        self._generation = 0
        self._done = threading.Event()
        self._serial = 0
        self._placed = False  # the layout is a rewrite step's place in the union: unfolded
        super().__init__(graph=self._stamped(self.model.payload()), height=height, **kwargs)
        self.observe(self._on_expanded, names="expanded")
        self.observe(self._on_selected, names="selected")
        self.observe(self._on_folding, names=["show_shape_code", "inline_constants"])
        self.observe(self._on_shown, names=["selected", "highlight_ids", "marks"])
        self.on_msg(self._on_front_msg)
        self._relayout()

    def set_graph(self, obj, *, title: str | None = None, marks: dict | None = None,
                  place=None, maker=None) -> GraphView:
        """Show another graph in this view (the compile report steps through graphs this
        way): selection, highlights and overlay reset; ``marks`` is ``{node_or_id: mark}``
        for the new graph (see the ``marks`` trait), and the groups holding marked nodes
        open. ``place(model)`` may give the layout itself (the report's steps share one:
        ``step_layout``); when it returns None, the graph is laid out as usual. ``maker``: the
        compiled function's maker when ``obj`` is a graph of it (its outputs are then named as
        the function's are: "update of w")."""
        model = GraphModel(obj, title, maker)
        resolved = {model.resolve(k): v for k, v in (marks or {}).items()}
        with self.hold_trait_notifications():
            self.model = model
            self.selected = ""
            self.detail = {}
            self.highlight_ids = []
            self.highlight_label = ""
            self.overlay = {}
            self.expanded = list(dict.fromkeys(g for k in resolved for g in model.group_path(k)))
            self.marks = resolved
            self.graph = self._stamped(model.payload())
            self.unfolded = self._must_show()
        placed = place(model) if place is not None and not self.expanded else None
        self._placed = placed is not None
        if placed is None:
            self._relayout()
            return self
        with self._layout_lock:
            self._generation += 1  # a layout still running for the old graph is dropped
            # "fixed": every node drawn at its union place, the folding buttons hidden
            self.layout = {**placed, "graph": self.graph["serial"], "fixed": True}
            self.status = ""
            self._done.set()
        return self

    def _stamped(self, payload: dict) -> dict:
        """The payload with a serial number; its layout carries the same number, so the
        browser keeps the old drawing until the new graph's positions arrive (never new
        labels at old places) and says which graph it drew (``data-tg-drawn``)."""
        self._serial += 1
        return {**payload, "serial": self._serial}

    # -- layout, off the kernel's main thread ---------------------------------------------

    def _relayout(self) -> None:
        self._placed = False
        with self._layout_lock:
            self._generation += 1
            generation = self._generation
            expanded = list(self.expanded)
            graph = self.graph
            fold = self.folding()
        self._done.clear()
        self.status = "laying out..."
        thread = threading.Thread(target=self._layout_job,
                                  args=(generation, graph, expanded, fold),
                                  name="tensorgraph-layout", daemon=True)
        thread.start()

    def folding(self) -> dict:
        """What the drawing folds now (``folding.fold_plan``'s keywords)."""
        return {"shape_code": self.show_shape_code, "constants": self.inline_constants,
                "keep": list(self.unfolded)}

    def _layout_job(self, generation: int, graph: dict, expanded: list, fold: dict) -> None:
        try:
            # a copy: layouts are cached and shared; the serial is this graph's
            result = {**compute_layout(visible_graph(graph, expanded, fold)),
                      "graph": graph.get("serial")}
            status = "" if result["engine"] == "dot" else f"layout: {result['engine']}"
        except Exception as exc:  # noqa: BLE001 - shown in the view, never lost in a thread
            result, status = {}, f"layout failed: {type(exc).__name__}: {exc}"
        with self._layout_lock:
            if generation != self._generation:
                return  # a newer request superseded this one
            self.layout = result
            self.status = status
            self._done.set()

    def wait(self, timeout: float = 60.0) -> GraphView:
        """Block until the current layout is drawn-ready (for scripts and tests)."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"the graph layout did not finish within {timeout} s")
        return self

    def _on_expanded(self, change) -> None:
        known = {g["id"] for g in self.graph.get("groups", ())}
        kept = [g for g in dict.fromkeys(change["new"]) if g in known]
        if kept != list(change["new"]):
            self.expanded = kept
            return
        self._relayout()

    def _on_selected(self, change) -> None:
        node_id = change["new"]
        if not node_id:
            self.detail = {}
            return
        if node_id not in self.model.by_id:
            self.detail = {"id": node_id, "title": f"no node {node_id!r} in this graph"}
            return
        path = self.model.group_path(node_id)
        if any(g not in self.expanded for g in path):
            self.expanded = list(dict.fromkeys([*self.expanded, *path]))
        self.detail = self.model.detail(node_id)

    def _must_show(self) -> list[str]:
        """The foldable nodes that are selected, highlighted or marked: drawn, not folded."""
        foldable = {n["id"] for n in self.graph.get("nodes", ())
                    if n.get("p") or n["k"] == "constant"}
        wanted = [self.selected, *self.highlight_ids,
                  *(k for k, v in self.marks.items() if v in UNFOLD_MARKS)]
        return [i for i in dict.fromkeys(wanted) if i in foldable]

    def _on_shown(self, _change) -> None:
        shown = self._must_show()
        if shown != list(self.unfolded):
            self.unfolded = shown
            if not self._placed:  # a rewrite step's union layout draws every node already
                self._relayout()

    def _on_folding(self, _change) -> None:
        if not self._placed:
            self._relayout()

    # -- what scripts call ------------------------------------------------------------------

    def set_folding(self, shape_code: bool | None = None,
                    constants: bool | None = None) -> GraphView:
        """Show shape plumbing as boxes (``shape_code=True``; False folds it into badges),
        and constants as boxes (``constants=False``; True draws them as ports); None keeps
        that setting. The view's "shape code" and "constants" buttons do the same."""
        with self.hold_trait_notifications():
            if shape_code is not None:
                self.show_shape_code = bool(shape_code)
            if constants is not None:
                self.inline_constants = bool(constants)
        return self

    def select(self, node_or_id) -> GraphView:
        """Select a node (a Variable, an Apply or an id like ``'BK'``); its groups open."""
        self.selected = "" if node_or_id is None else self.model.resolve(node_or_id)
        return self

    def highlight(self, nodes, label: str = "") -> GraphView:
        """Mark ``nodes`` (ids, Variables or Applies); an empty list clears the marks."""
        self.highlight_ids = [self.model.resolve(n) for n in nodes]
        self.highlight_label = label
        return self

    def set_overlay(self, values: dict, title: str = "") -> GraphView:
        """Colour nodes by a number each (``{node_or_id: value}``), a heat map with a legend
        titled ``title``; an empty dict removes it."""
        clean = {}
        for key, value in values.items():
            number = float(value)
            clean[self.model.resolve(key)] = number
        self.overlay = {"title": title, "values": clean} if clean else {}
        return self

    def _groups_of(self, target) -> list[str]:
        ids = {g["id"] for g in self.graph.get("groups", ())}
        if isinstance(target, str) and target in ids:
            return [target]
        return self.model.group_path(self.model.resolve(target))

    def expand(self, group_or_node) -> GraphView:
        """Open a group (its id, e.g. ``'g3'``) or every group containing a node."""
        self.expanded = list(dict.fromkeys([*self.expanded, *self._groups_of(group_or_node)]))
        return self

    def collapse(self, group_or_node=None) -> GraphView:
        """Close a group (or the innermost group containing a node; everything: None), with
        the groups inside it."""
        if group_or_node is None:
            self.expanded = []
            return self
        groups = self._groups_of(group_or_node)
        if not groups:
            return self
        closing = {groups[-1]}
        parents = {g["id"]: g["parent"] for g in self.graph.get("groups", ())}
        grew = True
        while grew:
            grew = False
            for gid, parent in parents.items():
                if parent in closing and gid not in closing:
                    closing.add(gid)
                    grew = True
        self.expanded = [g for g in self.expanded if g not in closing]
        return self

    def expand_all(self) -> GraphView:
        """Open every group (a big graph then gets the cheaper layouts: see ``layout``)."""
        self.expanded = [g["id"] for g in self.graph.get("groups", ())]
        return self

    def fold(self, nodes, label: str = "") -> str:
        """Fold ``nodes`` (ids, Variables or Applies; two or more, all in the same group) into
        one closed box labelled ``label``: a subgraph you picked, out of the way.  Returns the
        new group's id; ``unfold(id)`` undoes it.  The view's "fold" button does this for the
        highlighted ancestors or descendants of the selected node."""
        gid = self.model.fold([self.model.resolve(n) for n in nodes], label)
        self.graph = self._stamped(self.model.payload())
        self._relayout()
        return gid

    def unfold(self, group: str) -> GraphView:
        """Undo ``fold``: the folded nodes are drawn one by one again."""
        self.model.unfold(group)
        self.expanded = [g for g in self.expanded if g != group]
        self.graph = self._stamped(self.model.payload())
        self._relayout()
        return self

    def _on_front_msg(self, _widget, content, _buffers) -> None:
        """Folds asked for by the browser; a refusal is shown in the view's status line."""
        try:
            if content.get("type") == "fold":
                self.fold(list(content.get("ids", ())), str(content.get("label", "")))
            elif content.get("type") == "unfold":
                self.unfold(str(content.get("group", "")))
        except (KeyError, ValueError) as exc:
            self.status = str(exc.args[0] if exc.args else exc)

    def fit(self) -> None:
        """Fit the drawing to the view (in every browser view of this widget)."""
        self.send({"type": "fit"})

    # -- static forms -------------------------------------------------------------------------

    def to_svg(self) -> str:
        """The current picture as standalone SVG (what nbconvert and GitHub show): it waits
        for the layout in progress, if any (a group just opened, as the stepper's run to
        NaN/Inf opens a loop), so it draws what the widget draws, not the layout before."""
        self.wait()
        return static_svg(self.graph, self.layout, self.marks, self.overlay)

    def summary(self) -> str:
        g = self.graph
        n_apply = sum(1 for n in g.get("nodes", ()) if n["k"] == "apply")
        groups = len(g.get("groups", ()))
        extra = f", {groups} groups" if groups else ""
        return f"<GraphView {g.get('title', '')}: {n_apply} op nodes{extra}>"

    def __repr__(self) -> str:
        return self.summary()

    def _repr_mimebundle_(self, **kwargs):
        forms = {"text/plain": self.summary()}
        try:
            self.wait(30)
            forms["image/svg+xml"] = self.to_svg()
        except Exception:  # noqa: BLE001 - the static picture is a fallback: never block display
            pass
        return with_static_forms(super()._repr_mimebundle_(**kwargs), forms)


def show(obj, *, title: str | None = None, height: int = 520) -> GraphView:
    """The graph of ``obj`` (a Variable, a list of them, an Apply, a FunctionGraph or a
    compiled Function) as an interactive view; the last expression of a cell displays it.

    >>> import tensorgraph.notebook as tgn                     # doctest: +SKIP
    >>> tgn.show(cost)                                          # doctest: +SKIP
    """
    return GraphView(obj, title=title, height=height)
