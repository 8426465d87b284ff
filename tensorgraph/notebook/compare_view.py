"""``CompareView``: a ``Comparison`` (``tgn.compare``) inline.

Two parts: the table of modes (``CompareTable``, an anywidget drawn by ``nbext/compare.js``:
bars for the cold and warm compile times and the time per call, agreement, node counts, the
error of a mode that failed), and below it the graph view of the selected mode's graph after
rewriting (the ``GraphView`` every other view embeds, with the ids ``dprint`` prints). A click
on a row sets ``selected``; scripts set it too (``view.selected = "JAX"``). While compile times
are measured in the background (``compare(..., wait=False)``, ``%tg_compare``) the table fills
its columns as they come, with a progress line and a cancel button (the trait ``cancelled``,
or ``Comparison.cancel()``).

The display bundle also holds the table as HTML, each mode's graph as ``dprint`` text, and the
text table, for nbconvert and GitHub, where no widget runs.
"""

from __future__ import annotations

import html

import anywidget
import ipywidgets as widgets
import traitlets

from tensorgraph.notebook.assets import asset
from tensorgraph.notebook.bundles import StaticFallback, with_static_forms
from tensorgraph.notebook.compare import _diff, _seconds
from tensorgraph.notebook.graph_view import GraphView

__all__ = ["CompareView", "CompareTable"]


class CompareTable(anywidget.AnyWidget):
    """The table of a comparison (``nbext/compare.js``): ``rows`` as ``Comparison.rows``."""

    _esm = asset("compare.js")
    _css = asset("compare.css")

    rows = traitlets.List().tag(sync=True)
    reference = traitlets.Unicode("").tag(sync=True)
    fastest = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    #: "" when no compile time is being measured, else e.g. "compile times: 3 of 8 measured"
    progress = traitlets.Unicode("").tag(sync=True)
    #: set (by the cancel button, or a script) to stop measuring compile times
    cancelled = traitlets.Bool(False).tag(sync=True)


class CompareView(StaticFallback, widgets.VBox):
    """The view of a ``Comparison`` (see the module docstring).

    >>> view = tgn.compare(y, [x], ["FAST_RUN", "JAX"], args=(data,)).view()  # doctest: +SKIP
    >>> view.selected = "JAX"; view.graph.model.title                         # doctest: +SKIP
    'JAX: the graph after rewriting'
    """

    selected = traitlets.Unicode("")

    def __init__(self, comparison, **kwargs):
        self.comparison = comparison
        rows = [_plain(r) for r in comparison.rows]
        self.table = CompareTable(rows=rows, reference=comparison.reference or "",
                                  fastest=comparison.fastest() or "",
                                  title=f"{comparison.name}: {len(rows)} modes compared")
        first = comparison.reference
        shown = next((r["mode"] for r in comparison.rows if r["error"] is None
                      and comparison.graph_function(r["mode"]) is not None), None)
        self.graph = (GraphView(comparison.graph_function(shown), title=_graph_title(shown),
                                height=420) if shown is not None else None)
        self._graph_note = widgets.HTML()
        children = [self.table, self._graph_note] + ([self.graph] if self.graph else [])
        super().__init__(children, **kwargs)
        self.add_class("tg-compare-view")
        widgets.link((self, "selected"), (self.table, "selected"))
        self.observe(self._on_selected, names="selected")
        self.selected = first or (rows[0]["mode"] if rows else "")
        self.table.observe(self._on_cancel, names="cancelled")
        self._show_progress()
        comparison.on_change(self._show_progress)

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus static forms: the table and each mode's graph (dprint) as HTML,
        the text table as text."""
        return with_static_forms(super()._repr_mimebundle_(**kwargs), {
            "text/html": static_html(self.comparison),
            "text/plain": self.comparison.table()})

    def _show_progress(self) -> None:
        """The rows and the progress line as the comparison has them now (called from the
        thread measuring compile times as each one comes in)."""
        cmp = self.comparison
        finished, total = cmp.progress
        self.table.rows = [_plain(r) for r in cmp.rows]
        self.table.progress = ("" if cmp.done else
                               f"compile times: {finished} of {total} measured in new processes")

    def _on_cancel(self, change) -> None:
        if change["new"]:
            self.comparison.cancel()
            self._show_progress()

    def _on_selected(self, change) -> None:
        mode = change["new"]
        if self.graph is None or not mode:
            return
        try:
            fn = self.comparison.graph_function(mode)
        except (KeyError, RuntimeError):
            row = next((r for r in self.comparison.rows if r["mode"] == mode), None)
            why = row["error"] if row else "not compared"
            self._graph_note.value = (f"<div class='tg-muted'><b>{html.escape(mode)}</b> has no "
                                      f"graph to show: {html.escape(str(why))}</div>")
            return
        if fn is None:  # one of PyTensor's own modes: its graph is PyTensor's, as text
            text = self.comparison.graph_text(mode)
            self._graph_note.value = (f"<div class='tg-muted'><b>{html.escape(mode)}</b> runs "
                                      f"PyTensor's graph (PyTensor's debugprint):</div><pre>"
                                      f"{html.escape(text)}</pre>")
            return
        self._graph_note.value = ""
        self.graph.set_graph(fn, title=_graph_title(mode), maker=fn.maker)


def _graph_title(mode: str) -> str:
    return f"{mode}: the graph after rewriting"


def _plain(row: dict) -> dict:
    """A row as JSON-safe data for the browser (infinities become None)."""
    import math

    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return {k: clean(v) for k, v in row.items() if k != "summary"}


def static_html(comparison) -> str:
    """The comparison as HTML without scripts: the table, then each mode's graph after
    rewriting as ``dprint`` text in a collapsed block."""
    head = ("<tr><th>mode</th><th>compile, cold</th><th>compile, warm</th><th>time per call "
            "(median, 25-75 %)</th><th>results vs "
            f"{html.escape(comparison.reference or '-')}</th><th>nodes</th></tr>")
    lines = []
    for r in comparison.rows:
        mode = f"<th style='text-align:left'><code>{html.escape(r['mode'])}</code></th>"
        if r["error"] is not None:
            lines.append(f"<tr>{mode}<td colspan='5'>{html.escape(r['error'])}</td></tr>")
            continue
        agrees = ("reference" if r["agrees"] is None else
                  ("agrees" if r["agrees"] else "DIFFERS") + f" (max |diff| {_diff(r['max_abs_diff'])})")
        lines.append(
            f"<tr>{mode}<td>{_seconds(r['compile_cold'])}</td><td>{_seconds(r['compile_warm'])}"
            f"</td><td>{_seconds(r['call_median'])} ({_seconds(r['call_p25'])}-"
            f"{_seconds(r['call_p75'])}, {r['calls']} calls)</td><td>{agrees}</td>"
            f"<td>{r['nodes']}</td></tr>")
    graphs = []
    for r in comparison.rows:
        if r["error"] is None:
            graphs.append(f"<details><summary>{html.escape(r['mode'])}: the graph after "
                          f"rewriting ({r['nodes']} nodes)</summary><pre>"
                          f"{html.escape(comparison.graph_text(r['mode']))}</pre></details>")
    return (f"<div class='tg-compare-static'><b>{html.escape(comparison.name)}</b>"
            f"<table>{head}{''.join(lines)}</table>{''.join(graphs)}</div>")
