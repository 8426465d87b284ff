"""The compile report: how one function was compiled, inline, on the graph view.

``tgn.report(f)`` (and ``%%tg_compile``, once per function compiled in the cell) shows:

* a summary: name, mode, optimizer, linker, nodes before -> after, rewrite steps, where the
  compile time went (rewriting, writing C, compiling or finding it in the cache, loading),
  C and Python nodes, the warnings raised while compiling (``f.maker.compile_record``); for
  a function on the quick tier (``f.tier``, config.compile__tiers), what runs until the
  optimized code is ready, updated when it arrives (``report.tier`` follows ``f.tier``);
* the graph after rewriting, before rewriting, or at any rewrite step: a scrubber (slider,
  previous/next, a list filtered by rewrite name, phase or tag) over
  ``f.maker.fgraph.rewrite_history``; at a step, the graph after it with the nodes it added
  marked (``tg-mark-added``), or, ticked "before this step", the graph before it with the
  nodes it removed marked (``tg-mark-removed``); the rewrite's name, phase, tags, where it is
  defined (with its docstring) and the time it took;
* for the node selected in the graph after rewriting: the step that made it (a button jumps
  there) and its generated C (highlighted) with the compiler flags, or why it runs Python.
* for a whole-graph back end (modes JAX, NUMBA): the compile time split into rewriting,
  writing the back end's program and the back end's compile, and the back end's own code
  below the graph: the jaxpr and StableHLO for JAX (after the first call when the input
  shapes are open), the generated Python for Numba; a selected node shows its lines of it
  (Numba) or where it is in the program (JAX).

A function holding scans: the steps of each scan's inner graph (its step, compiled with the
function's mode: ``Scan.runner_of(node).function``) follow the function's own in the list and
on the slider, labelled ``loop D`` (the scan's id); at such a step the view shows that inner
graph. ``report.step_scope(i)`` says which graph step ``i`` rewrote ('' for the function's).

Everything is also Python: ``report.step`` (the step shown, linked to the slider),
``report.mode`` ("after", "before", "steps"), ``report.show_step(i)``, ``report.steps``
(the history's records), ``report.step_of(node)``, ``report.c_source(node)`` (and
``whole_unit=True``: with the runtime and headers), ``report.c_module(node)``,
``report.backend_source()`` and ``report.backend_node_source(node)`` (whole-graph back ends).
"""

from __future__ import annotations

import html
import inspect
import re
import threading
import time
from collections import OrderedDict

import ipywidgets as widgets
import traitlets

from tensorgraph.notebook.bundles import StaticFallback, svg_or_empty, with_static_forms
from tensorgraph.notebook.graph_view import GraphView
from tensorgraph.notebook.step_layout import StepLayout

__all__ = ["CompileReport", "report", "last_report"]

#: the reports %%tg_compile showed lately, newest last, by function name (a few: widgets are
#: heavy)
_SHOWN: OrderedDict = OrderedDict()
#: what a traced back end's code is called, for a node that has no lines of its own in it
_PROGRAM_TEXT = {"JAX": "jaxpr", "PyTorch": "FX graph"}
#: terminal colour codes: JAX colours its jaxpr when it runs in a Jupyter kernel, and in the
#: report's HTML (and in a file) they would be stray "[34;1m" text
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_KEEP = 16

MODES = [("after rewriting", "after"), ("before rewriting", "before"), ("rewrite steps", "steps")]


class CompileReport(StaticFallback, widgets.VBox):
    """The compile report of a compiled function (see the module docstring).

    >>> rep = CompileReport(train)                         # doctest: +SKIP
    >>> rep.show_step(rep.step_of(gemv_node)).step         # doctest: +SKIP
    50
    """

    step = traitlets.Int(0)
    mode = traitlets.Unicode("after")
    #: the function's tier ('quick' or 'optimized', ``f.tier``): the summary follows it (a
    #: thread waits for the optimized code and updates the report when it arrives)
    tier = traitlets.Unicode("optimized")

    def __init__(self, fn, **kwargs):
        from tensorgraph.notebook.unwrapping import as_tensorgraph

        fn = as_tensorgraph(fn)  # a PyTensor / PyMC function: the tensorgraph one behind it
        maker = getattr(fn, "maker", None)
        if maker is None:
            raise TypeError(f"report() takes a compiled function (tensorgraph.function(...)), "
                            f"got {type(fn).__name__}")
        self.function = fn
        self.record = getattr(maker, "compile_record", None)
        self.history = getattr(maker.fgraph, "rewrite_history", None)
        self.steps = list(self.history) if self.history is not None else []
        #: per step: (its history, the scan id whose inner graph it rewrote or '', maker)
        self._sources = [(self.history, "", maker)] * len(self.steps)
        own = len(self.steps)
        for scope, inner_maker in _inner_makers(fn):
            inner = getattr(inner_maker.fgraph, "rewrite_history", None)
            if inner is not None:
                self.steps += list(inner)
                self._sources += [(inner, scope, inner_maker)] * len(inner)
        self._made_by = self.history.made_by() if self.history is not None else {}
        self._catalog = _RewriteCatalog()
        self._places = StepLayout(self.history) if self.history is not None else None
        self._inner_places = {id(h): StepLayout(h) for h, scope, _ in self._sources if scope}
        self.view = GraphView(fn, height=480)

        #: rewrite steps in the loops' inner graphs (the compile record counts only the rest)
        self.loop_steps = len(self.steps) - own
        self.tier = getattr(fn, "tier", "optimized")
        self._tier_error = None
        self._summary = widgets.HTML(self._summary_value())
        self._modes = widgets.ToggleButtons(options=MODES, value="after",
                                            layout=widgets.Layout(width="auto"))
        last = max(0, len(self.steps) - 1)
        self._slider = widgets.IntSlider(0, min=0, max=last, description="step",
                                         continuous_update=False,
                                         layout=widgets.Layout(width="360px"))
        self._prev = widgets.Button(description="previous", icon="arrow-left",
                                    layout=widgets.Layout(width="auto", flex="0 0 auto"))
        self._next = widgets.Button(description="next", icon="arrow-right",
                                    layout=widgets.Layout(width="auto", flex="0 0 auto"))
        self._prev.add_class("tg-step-prev")
        self._next.add_class("tg-step-next")
        self._before = widgets.Checkbox(False, description="graph before this step",
                                        indent=False)
        self._filter = widgets.Text(placeholder="filter steps: rewrite name, phase or tag",
                                    layout=widgets.Layout(width="360px"))
        self._list = widgets.Select(options=self._options(""), rows=9,
                                    layout=widgets.Layout(width="360px"))
        self._step_info = widgets.HTML(layout=widgets.Layout(flex="1 1 auto"))
        self._steps_box = widgets.VBox([
            widgets.HBox([self._prev, self._slider, self._next, self._before]),
            widgets.HBox([widgets.VBox([self._filter, self._list],
                                       layout=widgets.Layout(flex="0 0 360px")),
                          self._step_info]),
        ])
        self._node_info = widgets.HTML()
        self._goto = widgets.Button(description="show the step that made it",
                                    layout=widgets.Layout(display="none", width="auto"))
        self._steps_box.layout.display = "none"
        self._backend_code = widgets.HTML(self._backend_html())
        super().__init__([self._summary, self._modes, self._steps_box, self.view,
                          self._goto, self._node_info, self._backend_code], **kwargs)
        self.add_class("tg-compile-report")

        widgets.link((self, "step"), (self._slider, "value"))
        widgets.link((self, "mode"), (self._modes, "value"))
        self._prev.on_click(lambda _: self.show_step(max(0, self.step - 1)))
        self._next.on_click(lambda _: self.show_step(min(last, self.step + 1)))
        self._list.observe(self._on_list, names="value")
        self._filter.observe(self._on_filter, names="value")
        self._before.observe(lambda _: self._show(), names="value")
        self._goto.on_click(self._on_goto)
        self.view.observe(self._on_node, names="selected")
        self.observe(lambda _: self._show(), names=["step", "mode"])
        self.observe(lambda _: setattr(self._summary, "value", self._summary_value()),
                     names="tier")
        if self.tier == "quick":
            threading.Thread(target=self._follow_tier, name="tensorgraph-report-tier",
                             daemon=True).start()

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus a static form for nbconvert and GitHub: the summary table and
        the picture shown, as HTML with inline SVG; the summary line as text."""
        return with_static_forms(super()._repr_mimebundle_(**kwargs), {
            "text/html": self._summary.value + svg_or_empty(self.view),
            "text/plain": (self.record.summary() + self._loop_steps_text()
                           if self.record is not None
                           else f"<CompileReport {self.function!r}>")})

    def _loop_steps_text(self) -> str:
        return (f"; and {self.loop_steps} rewrite steps in its loops' inner graphs"
                if self.loop_steps else "")

    # -- what scripts call ------------------------------------------------------------------

    def show_step(self, index: int, before: bool = False) -> CompileReport:
        """Show the graph after rewrite step ``index`` (0-based, as ``report.steps``), what it
        added marked; ``before``: the graph before it, what it removed marked."""
        if not self.steps:
            raise IndexError("this function has no rewrite steps to show")
        if not 0 <= index < len(self.steps):
            raise IndexError(f"show_step: index must be between 0 and {len(self.steps) - 1}, "
                             f"got {index}")
        with self.hold_trait_notifications():
            self._before.value = bool(before)
            self.mode = "steps"
            self.step = index
        return self

    def step_scope(self, index: int) -> str:
        """Which graph step ``index`` rewrote: '' (the function's) or a scan's id."""
        return self._sources[index][1]

    def phase(self, step) -> str | None:
        """The phase of the rewrite database a step's rewrite runs in (``"canonicalize"``,
        ``"stabilize"``, ...; None for a rewrite outside it)."""
        return self._catalog.describe(step)[0]

    def step_of(self, node_or_id) -> int | None:
        """The index of the rewrite step that made a node of the compiled graph (None: the
        node was in the graph before rewriting)."""
        node = self._final_node(node_or_id)
        return self._made_by.get(node)

    def c_source(self, node_or_id, *, whole_unit: bool = False) -> str:
        """The C function generated for a node of the compiled graph (``whole_unit``: the
        whole file it compiles in, with the runtime, headers and support code); ValueError
        saying why when the node runs Python."""
        node = self._final_node(node_or_id)
        fn = self._node_function(node)
        if fn is not None:
            if whole_unit:
                from tensorgraph.link.c.codegen import translation_unit

                return translation_unit([fn])
            return fn.text
        from tensorgraph.notebook.graph_model import _why_python

        raise ValueError(f"{self._ids()[node]} runs Python: {_why_python(node)}")

    def c_module(self, node_or_id) -> dict:
        """Where a node's C lives: ``symbol`` (its function's name, a hash of its code: the
        cache key shared by every graph with this node), ``key`` and ``path`` of the cached
        library that holds it (None when it is not in the cache)."""
        node = self._final_node(node_or_id)
        fn = self._node_function(node)
        if fn is None:
            raise ValueError(f"{self._ids()[node]} runs Python: it has no C module")
        from tensorgraph.link.c.cmodule import library_of
        from tensorgraph.link.c.codegen_version import codegen_version

        found = library_of(fn.symbol, runtime_version=codegen_version())
        return {"symbol": fn.symbol, "key": found[0] if found else None,
                "path": found[1] if found else None}

    @property
    def backend(self) -> str | None:
        """The whole-graph back end running the function ('JAX', 'Numba', 'PyTorch'), or None (C / the
        Python VM)."""
        return getattr(self.function.vm, "backend", None)

    def backend_source(self) -> str:
        """The back end's own code for the whole graph: the jaxpr and StableHLO for JAX (of
        the last compiled input shapes), the generated Python module for Numba, the FX graph
        and Inductor's code for PyTorch; ValueError
        for a function running C or Python nodes (see ``c_source``)."""
        if self.backend is None:
            raise ValueError("this function runs node by node (C or Python), not as one "
                             "back-end program: see c_source(node)")
        return _ANSI.sub("", self.function.vm.source())

    def backend_node_source(self, node_or_id) -> str:
        """A node's part of the back end's code: its lines of the generated Python (Numba,
        under the comment naming the node), or, for JAX and PyTorch (one traced program), a
        note that the node is part of the jaxpr or FX graph shown."""
        node = self._final_node(node_or_id)
        node_id = self._ids()[node]
        lines = self.backend_source().splitlines()
        marker = f"# [{node_id}] "
        start = next((i for i, line in enumerate(lines) if line.strip().startswith(marker)),
                     None)
        if start is None:
            program = _PROGRAM_TEXT.get(self.backend, "code")
            return (f"# [{node_id}] {node.op} is traced into the one {self.backend} program "
                    f"below: its operations are in the {program} shown")
        indent = len(lines[start]) - len(lines[start].lstrip())
        end = start + 1
        while end < len(lines):
            stripped = lines[end].strip()
            depth = len(lines[end]) - len(lines[end].lstrip())
            if stripped and (depth < indent or depth == indent and
                             stripped.startswith(("# [", "return "))):
                break
            end += 1
        return "\n".join(line[indent:] for line in lines[start:end]).rstrip()

    # -- inside -----------------------------------------------------------------------------

    def _summary_value(self) -> str:
        return _summary_html(self.record, self.function, self.loop_steps, self._tier_error)

    def _follow_tier(self) -> None:
        """Wait for the optimized code in a thread; then the summary says what runs now
        (ipywidgets sends the update from this thread)."""
        try:
            self.function.wait_optimized()
        except Exception as exc:  # noqa: BLE001 - the compile's own error: the summary says it
            self._tier_error = f"{type(exc).__name__}: {exc}"
            self._summary.value = self._summary_value()
            return
        self.tier = self.function.tier

    def _backend_html(self) -> str:
        if self.backend is None:
            return ""
        return _code_html(self.backend_source(), f"the {self.backend} program",
                          "python" if self.backend == "Numba" else None, opened=False)

    def _node_function(self, node):
        cgraph = getattr(self.function.vm, "cgraph", None)
        return next((fn for fn in getattr(cgraph, "functions", ()) if fn.node is node), None)

    def _ids(self):
        from tensorgraph.graph.ids import graph_ids

        return graph_ids(self.function)

    def _final_node(self, node_or_id):
        from tensorgraph.graph.basic import Apply, Variable

        if isinstance(node_or_id, Variable) and node_or_id.owner is not None:
            return node_or_id.owner
        if isinstance(node_or_id, Apply):
            return node_or_id
        ids = self._ids()
        found = ids.find(str(node_or_id).strip().upper()) if isinstance(node_or_id, str) else None
        if found is None or not isinstance(found, Apply):
            raise KeyError(f"no op node {node_or_id!r} in the compiled graph of "
                           f"{self.record.name if self.record else 'this function'}")
        return found

    def _options(self, text: str) -> list:
        words = text.lower().split()
        options = []
        for k, step in enumerate(self.steps):
            phase, tags = self._catalog.describe(step)
            scope = self._sources[k][1]
            where = f"loop {scope}" if scope else ""
            haystack = " ".join([step.name, phase or "", where, *tags]).lower()
            if all(w in haystack for w in words):
                options.append((f"{k:4d}  {step.name}  [{phase or '-'}]"
                                + (f"  ({where})" if where else ""), k))
        return options

    def _on_filter(self, change) -> None:
        self._list.options = self._options(change["new"])
        self._light_step()

    def _light_step(self) -> None:
        """The list highlights the step shown, or nothing when its filter hides that step (a
        jump from "show the step that made it" or the slider must not leave another lit)."""
        listed = self.mode == "steps" and any(v == self.step for _, v in self._list.options)
        self._list.value = self.step if listed else None

    def _on_list(self, change) -> None:
        if change["new"] is not None and change["new"] != self.step:
            self.show_step(change["new"])

    def _on_goto(self, _button) -> None:
        made = self.step_of(self.view.selected) if self.view.selected else None
        if made is not None:
            self.show_step(made)

    def _show(self) -> None:
        self._steps_box.layout.display = "" if self.mode == "steps" else "none"
        self._goto.layout.display = "none"
        self._node_info.value = ""
        if self.mode == "after":
            self.view.set_graph(self.function)
        elif self.mode == "before":
            if self.history is None:
                self.view.set_graph(self.function.maker.fgraph, title="(no rewrite history)",
                                    maker=self.function.maker)
            else:
                self.view.set_graph(self.history.rebuild(0), title="before rewriting",
                                    maker=self.function.maker)
        else:
            self._show_step()

    def _show_step(self) -> None:
        if not self.steps:
            self._step_info.value = "<i>no rewrite steps</i>"
            return
        step = self.steps[self.step]
        history, scope, maker = self._sources[self.step]
        places = self._inner_places[id(history)] if scope else self._places
        before = self._before.value
        memo: dict = {}
        graph = history.rebuild(step.index if before else step.index + 1, memo)
        records = step.removed if before else step.added
        mark = "removed" if before else "added"
        marks = {memo[r.node]: mark for r in records if r.node in memo
                 and memo[r.node] in graph.apply_nodes}
        where = "before" if before else "after"
        loop = f"inner graph of loop {scope}, " if scope else ""
        self.view.set_graph(graph, title=f"{loop}{where} step {step.index}: {step.name}",
                            marks=marks, place=lambda model: places.place(model, memo),
                            maker=maker)
        self._light_step()
        self._step_info.value = self._step_html(step, len(marks), mark, memo)

    def _records_html(self, records, memo) -> str:
        """The nodes of a step as the view names them: ``[T] Elemwise{neg}`` when the node is
        in the graph shown (same id as in the picture), else the op alone."""
        from tensorgraph.printing import op_label

        shown = {key: node_id for node_id, key in self.view.model.by_id.items()}
        items = []
        for record in records[:8]:
            node_id = shown.get(memo.get(record.node))
            label = html.escape(op_label(record.node.op))
            items.append(f"<li><code>{f'[{node_id}] ' if node_id else ''}{label}</code></li>")
        if len(records) > 8:
            items.append(f"<li>... {len(records) - 8} more</li>")
        return "".join(items) or "<li>-</li>"

    def _step_html(self, step, n_marked: int, mark: str, memo: dict) -> str:
        phase, tags = self._catalog.describe(step)
        doc = self._catalog.doc(step)
        removed = self._records_html(step.removed, memo)
        added = self._records_html(step.added, memo)
        scope = self._sources[self.step][1] if self._sources else ""
        loop = (f"the inner graph of loop <code>{html.escape(scope)}</code> (step "
                f"{step.index} of its own): ") if scope else ""
        return (f"<div class='tg-step-info'>{loop}<b>step {self.step}: "
                f"{html.escape(step.name)}</b>"
                f" &middot; phase <code>{html.escape(phase or '-')}</code>"
                f" &middot; {step.seconds * 1e3:.3f} ms<br>"
                f"tags: {html.escape(', '.join(tags) or '-')}<br>"
                f"defined at <code>{html.escape(step.location or '?')}</code>"
                + (f"<pre class='tg-doc'>{html.escape(doc)}</pre>" if doc else "")
                + f"<div>{n_marked} node(s) marked {mark} in the graph</div>"
                f"<div>removed:</div><ul>{removed}</ul>"
                f"<div>added:</div><ul>{added}</ul></div>")

    def _on_node(self, change) -> None:
        node_id = change["new"]
        self._goto.layout.display = "none"
        self._node_info.value = ""
        if self.mode != "after" or not node_id:
            return
        try:
            node = self._final_node(node_id)
        except KeyError:
            return  # a leaf: the graph view's panel says it all
        made = self._made_by.get(node)
        parts = []
        if made is not None:
            parts.append(f"<div>[{html.escape(node_id)}] was made by step {made}: "
                         f"<code>{html.escape(self.steps[made].name)}</code></div>")
            self._goto.layout.display = ""
        if self.backend is not None:
            parts.append(_code_html(self.backend_node_source(node),
                                    f"its part of the {self.backend} program",
                                    "python" if self.backend == "Numba" else None))
            self._backend_code.value = self._backend_html()  # JAX: compiled since shown?
            self._node_info.value = "".join(parts)
            return
        try:
            parts.append(_c_html(self.c_source(node), self.c_module(node)))
        except ValueError as exc:
            parts.append(f"<div>{html.escape(str(exc))}</div>")
        self._node_info.value = "".join(parts)


class _RewriteCatalog:
    """Phase, tags and docstring of the rewrites named in a history (from ``optdb``)."""

    def __init__(self):
        from tensorgraph.rewriting.optdb import optdb

        self.db = optdb

    def describe(self, step) -> tuple[str | None, list[str]]:
        if step.name not in self.db:
            return None, []
        tags = sorted(t for t in self.db.tags_of(step.name) if t != step.name)
        return self.db.phase_of(step.name), tags

    def doc(self, step) -> str:
        rewriter = step.rewriter
        if rewriter is None:
            return ""
        target = getattr(rewriter, "fn", None) or type(rewriter)
        return inspect.getdoc(target) or ""


def _inner_makers(fn) -> list:
    """``(scan id, maker)`` of each scan's compiled step in ``fn``, in id order (nested
    scans' steps after their scan's, ids joined: ``D/B``)."""
    from tensorgraph.graph.ids import graph_ids

    found = []

    def visit(function, prefix):
        ids = graph_ids(function)
        nodes = [n for n in ids.order if getattr(getattr(n, "tag", None), "scan_runner", None)
                 is not None and not n.tag.scan_runner.reference]
        for node in nodes:
            runner = node.tag.scan_runner
            inner = runner.function
            maker = inner.maker
            if not getattr(maker.fgraph, "rewrite_history", None):
                maker = _recorded_maker(runner)
            found.append((prefix + ids[node], maker))
            visit(inner, prefix + ids[node] + "/")

    visit(fn, "")
    return found


def _recorded_maker(runner):
    """The inner graph of a scan rewritten again with its mode, its steps recorded: the step
    came from the cache of rewritten graphs, which keeps no history (the same graph, the same
    rewrites: the result is the graph that runs)."""
    from tensorgraph import hooks
    from tensorgraph.compile.rewrite_cache import recording
    from tensorgraph.graph.utils import compiling

    fgraph = runner.op.fgraph
    with recording(), compiling():
        return hooks.function_maker(list(fgraph.inputs), list(fgraph.outputs), mode=runner.mode,
                                    name=f"{runner.op.title} (inner)", on_unused_input="ignore")


def _summary_html(record, fn, loop_steps: int = 0, tier_error: str | None = None) -> str:
    """The summary table; ``loop_steps``: the steps of the loops' inner graphs, which the
    slider lists after the function's own (the record counts only those); ``tier_error``:
    why the optimized code of a quick-tier function could not be built."""
    if record is None:
        return f"<b>{html.escape(getattr(fn, 'name', '') or 'function')}</b> (no compile record)"
    rows = [("mode", f"{record.mode} (optimizer {record.optimizer}, linker {record.linker})"),
            ("graph", f"{record.nodes_before} nodes before rewriting, {record.nodes_after} "
                      f"after, in {record.steps} rewrite steps"
                      + (f" (and {loop_steps} in its loops' inner graphs)" if loop_steps else ""))]
    backend = getattr(record, "backend", None)
    if backend:
        rows += [("time", f"{record.total_seconds * 1e3:.0f} ms: rewriting "
                          f"{record.rewrite_seconds * 1e3:.0f} ms, writing the {backend} program "
                          f"{record.generate_seconds * 1e3:.0f} ms, compiling it with {backend} "
                          f"{record.compile_seconds * 1e3:.0f} ms"),
                 (backend, _backend_text(record, getattr(fn, "maker", None)))]
    else:
        rows += [("time", f"{record.total_seconds * 1e3:.0f} ms: " + _split_text(record)),
                 ("C", _modules_text(record, fn, tier_error))]
    if record.warnings:
        rows.append(("warnings", "<br>".join(html.escape(w) for w in record.warnings)))
    body = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{k}</th>"
                   f"<td style='text-align:left'>{v if k == 'warnings' else html.escape(v)}</td></tr>"
                   for k, v in rows)
    return (f"<div class='tg-report-summary'><b>compile report: "
            f"{html.escape(record.name or '(unnamed function)')}</b><table>{body}</table></div>")


def _split_text(record) -> str:
    """Each phase's time and where its result came from (``CompileRecord.split``): what a
    compile of a graph seen before took from the caches."""
    texts = []
    for phase, seconds, source in record.split():
        if seconds is None:
            continue
        detail = {"now": "", "": ""}.get(source, f" ({source})")
        texts.append(f"{phase} {seconds * 1e3:.0f} ms{detail}")
    return ", ".join(texts)


def _backend_text(record, maker) -> str:
    where = {"compiled": "compiled now", "disk": f"found in {record.backend}'s cache under "
             "the compile directory",
             None: "compiled at the first call, for the shapes of its inputs"}
    left_out = getattr(getattr(maker, "mode", None), "rewrite_excluding", ())
    return (f"the whole graph runs as {record.backend_description}, "
            f"{where.get(record.modules, record.modules)}; rewrites tagged "
            f"{', '.join(left_out) or '-'} are left out (the back end does that work itself); "
            "no per-node times or stepping (there are no per-node thunks); its code is below "
            "the graph")


def _code_html(source: str, title: str, language: str | None, opened: bool = True) -> str:
    """Code, highlighted when its language is known (pygments comes with IPython)."""
    if language == "python":
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        code = highlight(source, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True))
    else:
        code = f"<pre>{html.escape(source)}</pre>"
    return (f"<details{' open' if opened else ''} class='tg-backend-source'><summary>"
            f"{html.escape(title)}</summary><div style='max-height:360px;overflow:auto;"
            f"font-size:12px'>{code}</div></details>")


def _modules_text(record, fn=None, tier_error: str | None = None) -> str:
    """Where the function's nodes run: the record's C and Python counts, or, for a function
    compiled on the quick tier (``config.compile__tiers``), what runs now: the quick tier
    until the optimized code is ready, then the optimized code."""
    if record.tier == "quick" and fn is not None:
        return _tier_text(record, fn, tier_error)
    where = {"compiled": f"compiled now ({record.units} translation unit"
                         f"{'s' if record.units != 1 else ''})",
             "disk": "found in the module cache", "memory": "already loaded by this process"}
    text = (f"{record.c_nodes} nodes run C, {where.get(record.modules, 'no C module')}"
            if record.c_nodes else "no node runs C")
    if record.py_nodes:
        text += f"; {record.py_nodes} run Python"
    return text


def _tier_text(record, fn, tier_error: str | None) -> str:
    """What a function compiled on the quick tier runs now (see ``_modules_text``)."""
    if getattr(fn, "tier", "quick") == "quick":
        counts = (("C from the module cache", record.c_nodes),
                  ("the quick tier's C (the optimized bits)", getattr(record, "quick_nodes", 0)),
                  ("numpy", record.py_nodes))
        parts = [f"{what} for {_nodes(n)}" for what, n in counts if n]
        text = f"runs on the quick tier ({', '.join(parts)})"
        if tier_error:
            return f"{text}: the optimized code could not be built ({tier_error})"
        left = max(0.1, record.tier_estimate - (time.time() - record.finished))
        return f"{text} until the optimized code is ready (~{left:.1f} s)"
    cgraph = getattr(fn.vm, "cgraph", None)
    c_nodes = len(cgraph.c_nodes) if cgraph is not None else 0
    py_nodes = len(fn.vm.nodes) - c_nodes
    units = getattr(cgraph, "units_compiled", 0) if cgraph is not None else 0
    text = (f"{_nodes(c_nodes)} run{'s' if c_nodes == 1 else ''} C" if c_nodes
            else "no node runs C") + (
        f", the optimized code compiled in the background ({units} translation unit"
        f"{'s' if units != 1 else ''})" if units else
        ", the optimized code found in the module cache")
    return text + (f"; {py_nodes} run Python" if py_nodes else "")


def _nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"


def _c_html(source: str, module: dict) -> str:
    """The generated C, highlighted (pygments comes with IPython), with the compiler flags
    and the cached library that holds it."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import CLexer

    from tensorgraph.link.c.compiler import compile_flags

    code = highlight(source, CLexer(), HtmlFormatter(noclasses=True, nobackground=True))
    flags = " ".join(compile_flags())
    return (f"<details open class='tg-c-source'><summary>generated C</summary>"
            f"<div style='max-height:360px;overflow:auto;font-size:12px'>{code}</div>"
            f"<div>compiled with <code>{html.escape(flags)}</code></div>"
            f"<div>function <code>{html.escape(module['symbol'])}</code> (its name is the "
            f"hash of its code: the cache key shared by every graph with this node), in "
            + (f"the cached library <code>{html.escape(module['path'])}</code>"
               if module["path"] else "no cached library (not compiled into the cache)")
            + "</div><div class='tg-muted'>The glue (Python.h, numpy, cffi) is one module per "
            "cache, the same for every graph, and is not shown.</div></details>")


def report(fn) -> CompileReport:
    """The compile report of a compiled function (see ``CompileReport``).

    >>> import tensorgraph.notebook as tgn                   # doctest: +SKIP
    >>> tgn.report(train)                                     # doctest: +SKIP
    """
    return CompileReport(fn)


def remember(shown: CompileReport) -> None:
    """Keep a report %%tg_compile showed, for ``last_report``."""
    name = shown.record.name if shown.record is not None else None
    _SHOWN.pop(name, None)
    _SHOWN[name] = shown
    while len(_SHOWN) > _KEEP:
        _SHOWN.popitem(last=False)


def last_report(name: str | None = None) -> CompileReport:
    """The report ``%%tg_compile`` showed last (of the function named ``name``), the very
    widget below the cell: scripts and tests drive it (``last_report("train").show_step(3)``)
    and the page follows.

    >>> tgn.last_report("train").show_step(3).step            # doctest: +SKIP
    3
    """
    if not _SHOWN:
        raise LookupError("%%tg_compile has shown no compile report in this kernel yet")
    if name is None:
        return next(reversed(_SHOWN.values()))
    if name not in _SHOWN:
        known = ", ".join(repr(k) for k in _SHOWN if k) or "only unnamed functions"
        raise LookupError(f"no compile report of a function named {name!r} was shown; "
                          f"shown: {known}")
    return _SHOWN[name]
