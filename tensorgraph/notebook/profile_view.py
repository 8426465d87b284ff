"""``ProfileView``: a ``ProfileStats`` inline, as a table, a heat map on the graph and a timeline.

With the extension loaded a ``ProfileStats`` (``f.profile``) as the last expression of a cell
displays as this view; ``%tg_profile -n 100 train(X, Y)`` makes a profiled copy of ``train``,
calls it ``n`` times and shows the view. It holds:

* the totals (calls, time in calls, in the node loop, in the nodes), the compile time split
  (rewriting, writing C, compiling, loading) and, with ``config.profile_memory``, the peaks;
* a table per node, per op or per op class (% of node time with a bar, cumulative %, time per
  call, calls, C or Py, output shapes), sorted by any column (``sort_by``);
* the graph view of the function with each node coloured by its share of the time;
* the last call's timeline (the start times the C loop records), and a button that writes the
  Chrome trace (``save_trace``).

Every figure comes from ``ProfileStats.as_records()`` and the records behind it, so the table,
the heat map and the printed ``summary()`` agree.
"""

from __future__ import annotations

import html
import pathlib

import ipywidgets as widgets
import traitlets

from tensorgraph.configdefaults import config
from tensorgraph.notebook.bundles import StaticFallback, svg_or_empty, with_static_forms
from tensorgraph.notebook.graph_view import GraphView

__all__ = ["ProfileView", "profile_view"]

GROUPINGS = [("by node", "node"), ("by op", "op"), ("by op class", "op_class")]
#: columns the table sorts by: (label, key, largest first)
COLUMNS = {"% time": ("percent", True), "time/call": ("seconds_per_call", True),
           "calls": ("calls", True), "id": ("node_id", False), "op": ("op", False),
           "position": ("position", False)}
ROWS = 40  # rows shown (the rest are counted)


class ProfileView(StaticFallback, widgets.VBox):
    """The view of a ``ProfileStats`` (see the module docstring).

    >>> f = tg.function([x], y, profile=True); f(data)       # doctest: +SKIP
    >>> view = ProfileView(f.profile)                         # doctest: +SKIP
    >>> view.sort_by = "calls"; view.rows()[0]["node_id"]     # doctest: +SKIP
    'C'
    """

    sort_by = traitlets.Unicode("% time")
    grouping = traitlets.Unicode("node")
    function_index = traitlets.Int(0)

    def __init__(self, profile, **kwargs):
        if not hasattr(profile, "as_records"):
            raise TypeError(f"ProfileView takes a ProfileStats (f.profile of a function "
                            f"compiled with profile=True), got {type(profile).__name__}")
        self.profile = profile
        records = profile.records
        self._totals = widgets.HTML()
        self._functions = widgets.Dropdown(
            options=[(r.name, k) for k, r in enumerate(records)], value=0 if records else None,
            description="function", layout=widgets.Layout(
                display="" if len(records) > 1 else "none"))
        self._grouping = widgets.ToggleButtons(options=GROUPINGS, value="node")
        self._sort = widgets.ToggleButtons(options=list(COLUMNS), value="% time",
                                           description="sort by")
        self._table = widgets.HTML()
        self._timeline = widgets.HTML()
        self._save = widgets.Button(description="save Chrome trace", icon="download",
                                    layout=widgets.Layout(width="auto"))
        self._saved = widgets.HTML()
        self.view = GraphView(records[0].fgraph, title="share of node time", height=440,
                              maker=records[0].maker) if records else None
        children = [self._totals, self._functions]
        if self.view is not None:
            children.append(self.view)
        children += [widgets.HBox([self._grouping]), self._sort, self._table]
        if self.view is not None:
            children += [self._timeline, widgets.HBox([self._save, self._saved])]
        super().__init__(children, **kwargs)
        self.add_class("tg-profile")
        widgets.link((self, "sort_by"), (self._sort, "value"))
        widgets.link((self, "grouping"), (self._grouping, "value"))
        if records:
            widgets.link((self, "function_index"), (self._functions, "value"))
        self._save.on_click(lambda _: self._on_save())
        self.observe(lambda _: self._render_table(), names=["sort_by", "grouping"])
        self.observe(lambda _: self._render_function(), names="function_index")
        self._render_totals()
        self._render_table()
        self._render_function()

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus static forms for nbconvert and GitHub: the totals, the table and
        the heat map as HTML with inline SVG; the printed summary as text."""
        return with_static_forms(super()._repr_mimebundle_(**kwargs), {
            "text/html": self._totals.value + self._table.value + svg_or_empty(self.view),
            "text/plain": self.profile.summary_text()})

    @traitlets.validate("sort_by")
    def _check_sort(self, proposal):
        if proposal["value"] not in COLUMNS:
            raise traitlets.TraitError(f"sort_by must be one of {', '.join(COLUMNS)}, got "
                                       f"{proposal['value']!r}")
        return proposal["value"]

    @traitlets.validate("grouping")
    def _check_grouping(self, proposal):
        known = [key for _, key in GROUPINGS]
        if proposal["value"] not in known:
            raise traitlets.TraitError(f"grouping must be one of {', '.join(known)}, got "
                                       f"{proposal['value']!r}")
        return proposal["value"]

    # -- what scripts call ------------------------------------------------------------------

    def rows(self) -> list[dict]:
        """The table's rows as shown (grouped, sorted), for the function shown."""
        record_name = self._record().name if self.profile.records else None
        rows = [r for r in self.profile.as_records() if r["function"] == record_name]
        if self.grouping != "node":
            # a scan's time holds its inner nodes': summed once, in the scan's row
            rows = _grouped([r for r in rows if "inside" not in r], self.grouping)
        key, largest_first = COLUMNS[self.sort_by]
        if self.grouping != "node" and key in ("node_id", "position"):
            key, largest_first = "op", False
        return sorted(rows, key=lambda r: r.get(key, 0), reverse=largest_first)

    def heat(self) -> dict:
        """{node id: % of node time} of the function shown (the heat map's values)."""
        name = self._record().name
        return {r["node_id"]: r["percent"] for r in self.profile.as_records()
                if r["function"] == name}

    def save_trace(self, path=None) -> pathlib.Path:
        """Write the Chrome trace (chrome://tracing, Perfetto); the path written."""
        path = pathlib.Path(path or f"{self.profile.name or 'profile'}.trace.json")
        self.profile.to_chrome_trace(path)
        return path.resolve()

    # -- inside -----------------------------------------------------------------------------

    def _record(self):
        return self.profile.records[self.function_index]

    def _on_save(self) -> None:
        try:
            path = self.save_trace()
            self._saved.value = (f"wrote <code>{html.escape(str(path))}</code>: open it in "
                                 "chrome://tracing or ui.perfetto.dev")
        except OSError as exc:
            self._saved.value = f"<b>could not write the trace: {html.escape(str(exc))}</b>"

    def _render_totals(self) -> None:
        p = self.profile
        rows = [("calls", f"{p.call_count}"),
                ("time", f"{p.call_time * 1e3:.3f} ms in calls, {p.vm_call_time * 1e3:.3f} ms "
                         f"in the node loop, {p.node_time * 1e3:.3f} ms in the nodes")]
        for record in p.records:
            compiled = getattr(record.maker, "compile_record", None)
            if compiled is not None:  # (a %tg_profile copy carries its original's record)
                text = (f"{compiled.total_seconds * 1e3:.1f} ms: rewriting "
                        f"{compiled.rewrite_seconds * 1e3:.1f} ms, writing C "
                        f"{compiled.generate_seconds * 1e3:.1f} ms, compiling "
                        f"{compiled.compile_seconds * 1e3:.1f} ms, loading "
                        f"{compiled.load_seconds * 1e3:.1f} ms")
            else:
                text = (f"rewriting {record.rewrite_seconds * 1e3:.1f} ms, linking "
                        f"{record.link_seconds * 1e3:.1f} ms")
            rows.append((f"compile {record.name}", text))
        if config.profile_memory:
            for entry in p.memory_profile():
                rows.append((f"memory {entry['function']}",
                             f"peak {entry['peak'] / 1024:.1f} KiB; without gc "
                             f"{entry['peak_without_gc'] / 1024:.1f} KiB"))
        body = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{html.escape(k)}"
                       f"</th><td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in rows)
        self._totals.value = (f"<div class='tg-profile-totals'><b>profile: "
                              f"{html.escape(p.name or '(unnamed)')}</b><table>{body}</table>"
                              "</div>")

    def _render_table(self) -> None:
        rows = self.rows()
        node = self.grouping == "node"
        head = (["id", "op"] if node else [self.grouping.replace("_", " ")]) + [
            "% time", "cum %", "time/call", "calls"] + (["C/Py", "output shapes"] if node
                                                        else ["nodes"])
        cum, lines = 0.0, []
        for r in rows[:ROWS]:
            if "inside" not in r:  # an inner node's time is in its scan's already
                cum += r["percent"]
            bar = (f"<div style='display:flex;align-items:center;gap:4px'><div style='width:"
                   f"{max(1, r['percent']):.0f}px;max-width:100px;height:9px;background:"
                   f"var(--jp-brand-color1,#1976d2)'></div>{r['percent']:.1f}</div>")
            op = html.escape(r["op"][:70]) if node else ""
            if node and "iterations" in r:
                calls = max(r["calls"], 1)
                op += (f" <span class='tg-muted'>&middot; {r['iterations'] / calls:g} iterations"
                       f"/call, inner nodes {r['inner_seconds'] / calls * 1e6:.1f} &micro;s, "
                       f"loop overhead {r['loop_overhead'] / calls * 1e6:.1f} &micro;s</span>")
            elif node and "inside" in r:
                op = (f"<span class='tg-muted'>&#8627; in loop {html.escape(r['inside'])}, "
                      f"{r['calls']} iterations:</span> " + op)
            cells = ([f"<code>{html.escape(r['node_id'])}</code>", op] if node
                     else [html.escape(r[self.grouping][:80])])
            cells += [bar, f"{cum:.1f}", f"{r['seconds_per_call'] * 1e6:.1f} &micro;s",
                      str(r["calls"])]
            if node:
                shapes = ", ".join(str(tuple(s)) if s is not None else "?"
                                   for s in (r["output_shapes"] or []))
                cells += [r["kind"], html.escape(shapes[:60])]
            else:
                cells.append(str(r["nodes"]))
            lines.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        more = (f"<div class='tg-muted'>... {len(rows) - ROWS} more rows</div>"
                if len(rows) > ROWS else "")
        self._table.value = (
            "<table class='tg-profile-table' style='border-collapse:collapse;font-size:12px'>"
            "<thead><tr>" + "".join(f"<th style='text-align:left;padding-right:10px'>{h}</th>"
                                    for h in head) + "</tr></thead><tbody>" + "".join(lines)
            + f"</tbody></table>{more}")

    def _render_function(self) -> None:
        if not self.profile.records:
            return
        record = self._record()
        self.view.set_graph(record.fgraph, title=f"{record.name}: share of node time",
                            maker=record.maker)
        self.view.set_overlay(self.heat(), title="% of node time")
        self._timeline.value = _timeline_svg(record)
        self._render_table()


def _grouped(rows: list[dict], key: str) -> list[dict]:
    """Rows summed per op or op class."""
    groups: dict = {}
    for r in rows:
        g = groups.setdefault(r[key], {key: r[key], "op": r[key], "percent": 0.0,
                                       "seconds": 0.0, "calls": 0, "nodes": 0})
        g["percent"] += r["percent"]
        g["seconds"] += r["seconds"]
        g["calls"] += r["calls"]
        g["nodes"] += 1
    for g in groups.values():
        g["seconds_per_call"] = g["seconds"] / g["calls"] if g["calls"] else 0.0
    return list(groups.values())


def _timeline_svg(record, width: int = 760) -> str:
    """The last call of a function as bars on a time axis (one row per node, in run order),
    drawn in the kernel; hover shows the node and its time."""
    from tensorgraph.graph.ids import graph_ids

    timeline = record.timeline()
    if timeline is None or not any(timeline):
        return "<div class='tg-muted'>no timeline of the last call (no call yet)</div>"
    ids = graph_ids(record.fgraph)
    spans = [(i, s, d) for i, t in enumerate(timeline) if t is not None for s, d in [t]]
    end = max(s + d for _, s, d in spans) or 1e-9
    row, left = 12, 110
    bars = []
    for k, (i, start, duration) in enumerate(sorted(spans, key=lambda x: x[1])):
        node = record.nodes[i]
        x = left + start / end * (width - left - 10)
        w = max(1.0, duration / end * (width - left - 10))
        label = f"[{ids[node]}] {str(node.op)[:40]}"
        bars.append(f"<g><title>{html.escape(label)}: {duration * 1e6:.1f} us at "
                    f"{start * 1e6:.1f} us</title><text x='{left - 4}' y='{k * row + 9}' "
                    f"text-anchor='end' font-size='9' fill='currentColor'>"
                    f"{html.escape(label[:18])}</text><rect x='{x:.1f}' y='{k * row + 1}' "
                    f"width='{w:.1f}' height='{row - 3}' fill='var(--jp-brand-color1,#1976d2)'>"
                    f"</rect></g>")
    height = len(spans) * row + 16
    axis = (f"<text x='{left}' y='{height - 2}' font-size='9' fill='currentColor'>0</text>"
            f"<text x='{width - 10}' y='{height - 2}' font-size='9' text-anchor='end' "
            f"fill='currentColor'>{end * 1e6:.0f} us</text>")
    return (f"<div class='tg-timeline'><b>last call, node by node</b><br><svg width='{width}' "
            f"height='{height}' role='img' aria-label='timeline of the last call'>"
            f"{''.join(bars)}{axis}</svg></div>")


def profile_view(profile) -> ProfileView:
    """The view of a ``ProfileStats`` (see ``ProfileView``)."""
    return ProfileView(profile)
