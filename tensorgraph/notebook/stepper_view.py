"""``tgn.Stepper(f, *args)`` and ``%tg_step f(args)``: step through one call of a compiled
function on its graph.

The widget drives a core stepper (``f.stepper(*args)``, ``tensorgraph.compile.stepper``: the
same C thunks as a call, in the same order) and shows it on a graph view: the node that runs
next marked ``current``, the nodes that ran ``done`` (shaded), a node that failed or made the
first NaN/Inf ``error`` / ``nonfinite``. Buttons: step, step N, run to the selected node, run
to the first NaN/Inf, finish, restart. The panel shows the last node run (or the selected
one): its inputs and outputs as previews computed in the kernel (statistics, NaN/Inf counts,
a histogram, a corner of the array) and its time.

A scan is stepped into (the core stepper's ``ScanVisit``): ``step`` on a scan node enters its
inner graph, drawn in the scan's group, which opens; the status says the iteration; "to
iteration" runs the loop to the start of iteration k, "step over" runs the rest of the loop
(or the next node whole); the panel shows an inner node's values in the current iteration
(``values_at(id, k)`` for others); "run to NaN/Inf" names the iteration and the inner node.

Everything is Python too: ``widget.run`` is the core stepper (``run.position``,
``run.values``, ``run.current_id``, ``run.iteration``), and ``step(n)``, ``run_to(node)``,
``run_to_nonfinite()``, ``run_to_iteration(k)``, ``step_over()``, ``finish()``,
``restart()`` do what the buttons do; ``iteration`` and ``current`` are synced traits. Running many nodes updates the view once, at the end
(Jupyter drops messages past 1000 a second).
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import traitlets

from tensorgraph.notebook.bundles import StaticFallback, svg_or_empty, with_static_forms
from tensorgraph.notebook.graph_view import GraphView
from tensorgraph.notebook.unwrapping import as_tensorgraph_call
from tensorgraph.notebook.value_preview import preview_html

__all__ = ["Stepper", "step"]


class Stepper(StaticFallback, widgets.VBox):
    """Step through ``function(*args, **kwargs)`` (see the module docstring).

    >>> st = Stepper(train, X, Y)                             # doctest: +SKIP
    >>> st.step(3).run.position                               # doctest: +SKIP
    3
    >>> st.run_to_nonfinite()                                 # doctest: +SKIP
    """

    position = traitlets.Int(0)
    status = traitlets.Unicode("")
    #: the id of the node that runs next, inside the scans entered ('D/B'); '' when done
    current = traitlets.Unicode("")
    #: the iteration of the scan stepped into, -1 outside a scan
    iteration = traitlets.Int(-1)

    def __init__(self, function, *args, **kwargs):
        # a PyTensor / PyMC function: the tensorgraph one behind it (a PyMC point: by name)
        function, args, kwargs = as_tensorgraph_call(function, args, kwargs)
        if not hasattr(function, "stepper"):
            raise TypeError(f"Stepper takes a compiled function (tensorgraph.function(...)), "
                            f"got {type(function).__name__}")
        self.function = function
        self._args, self._kwargs = args, kwargs
        self.run = function.stepper(*args, **kwargs)
        self.outputs = None
        self.view = GraphView(function, height=480)
        button = lambda text, tip: widgets.Button(  # noqa: E731 - four alike
            description=text, tooltip=tip, layout=widgets.Layout(width="auto"))
        self._step = button("step", "run the next node")
        self._step_n = button("step n nodes", "run the next n nodes (n: the box on the right)")
        self._n = widgets.BoundedIntText(10, min=1, max=10**6, layout=widgets.Layout(width="80px"))
        self._to = button("run to selected", "run until the node selected in the graph has run")
        self._nan = button("run to NaN/Inf", "run until a node makes the first NaN or Inf")
        self._finish = button("finish", "run the rest; return the outputs, write the updates")
        self._restart = button("restart", "the same call from the start")
        self._over = button("step over", "run the scan stepped into to its end, or the next "
                                         "node whole")
        self._to_iter = button("to iteration", "run the scan (stepped into, or the next one) "
                                               "to the start of iteration k")
        self._k = widgets.BoundedIntText(1, min=0, max=10**9, layout=widgets.Layout(width="80px"))
        for b, cls in ((self._step, "tg-step-one"), (self._step_n, "tg-step-n"),
                       (self._to, "tg-step-to"), (self._nan, "tg-step-nan"),
                       (self._finish, "tg-step-finish"), (self._restart, "tg-step-restart"),
                       (self._over, "tg-step-over"), (self._to_iter, "tg-step-iteration"),
                       (self._k, "tg-step-k")):
            b.add_class(cls)
        self._status = widgets.HTML()
        self._panel = widgets.HTML()
        bar = widgets.HBox([self._step, self._step_n, self._n, self._over, self._to_iter,
                            self._k, self._to, self._nan, self._finish, self._restart],
                           layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([bar, self._status, self.view, self._panel])
        self.add_class("tg-stepper")
        self._step.on_click(lambda _: self._act(self.step))
        self._step_n.on_click(lambda _: self._act(lambda: self.step(self._n.value)))
        self._to.on_click(lambda _: self._act(self._run_to_selected))
        self._nan.on_click(lambda _: self._act(self.run_to_nonfinite))
        self._finish.on_click(lambda _: self._act(self.finish))
        self._restart.on_click(lambda _: self._act(self.restart))
        self._over.on_click(lambda _: self._act(self.step_over))
        self._to_iter.on_click(lambda _: self._act(lambda: self.run_to_iteration(self._k.value)))
        self.view.observe(lambda _: self._show_panel(), names="selected")
        self._error_node = None
        self._nonfinite = None
        self._refresh()

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus static forms for nbconvert and GitHub: the status line, the graph
        as SVG with the run's marks and the panel as HTML; the stepper's state as text."""
        return with_static_forms(super()._repr_mimebundle_(**kwargs), {
            "text/html": self._status.value + svg_or_empty(self.view) + self._panel.value,
            "text/plain": repr(self.run)})

    # -- what the buttons do ---------------------------------------------------------------

    def step(self, n: int = 1) -> Stepper:
        """Run the next ``n`` nodes."""
        self.run.step(n)
        self._refresh()
        return self

    def run_to(self, node_or_id) -> Stepper:
        """Run until a node (an Apply, an output of it, or its id) has run."""
        self.run.run_to(node_or_id)
        self._refresh()
        return self

    def step_over(self) -> Stepper:
        """Run the scan stepped into to its end, or the next node whole (a scan without
        stepping into it)."""
        self.run.step_over()
        self._refresh()
        return self

    def run_to_iteration(self, k: int) -> Stepper:
        """Run the scan stepped into (or the next scan) to the start of iteration ``k``."""
        self.run.run_to_iteration(k)
        self._refresh()
        return self

    def values_at(self, node_id: str, k: int):
        """What inner variable ``node_id`` (``'D/B'``) held in iteration ``k``."""
        return self.run.values_at(node_id, k)

    def run_to_nonfinite(self):
        """Run until the first node that makes a NaN or Inf; where it stopped (or None)."""
        found = self.run.run_until_nonfinite()
        self._nonfinite = found
        self._refresh()
        return found

    def finish(self):
        """Run the rest; the outputs (as the function returns them), updates written."""
        self.outputs = self.run.finish()
        self._refresh()
        return self.outputs

    def restart(self) -> Stepper:
        """The same call from the start."""
        self.run = self.function.stepper(*self._args, **self._kwargs)
        self.outputs, self._error_node, self._nonfinite = None, None, None
        self._refresh()
        return self

    # -- inside -----------------------------------------------------------------------------

    def _run_to_selected(self) -> None:
        if not self.view.selected:
            raise ValueError("select a node in the graph first")
        self.run_to(self.view.selected)

    def _act(self, action) -> None:
        """A button: errors go to the status line (the kernel keeps running)."""
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - shown to the user, who clicked
            node = getattr(exc, "node", None)
            if node is not None:
                self._error_node = node
            self._refresh(error=f"{type(exc).__name__}: {exc}")

    def _refresh(self, error: str = "") -> None:
        run, ids = self.run, self.run.ids
        marks = {ids[node]: "done" for node in run.ran}
        level, prefix = run, ""
        while level.scan is not None:  # the scans entered: their nodes run this iteration
            prefix += level.ids[level.scan.node] + "/"
            inner = level.scan.inner
            if inner is None:
                break
            marks.update((prefix + inner.ids[node], "done") for node in inner.ran)
            level = inner
        current = run.current_id if not run.failed else None
        if current is not None:
            marks[current] = "current"
            self.view.expand(current)
        if self._error_node is not None and self._error_node in ids:
            marks[ids[self._error_node]] = "error"
        if self._nonfinite is not None:
            culprits = ([self._nonfinite.node] if self._nonfinite.node is not None
                        else self._nonfinite.variables)
            if getattr(self._nonfinite, "scan", None) is not None:
                marks[self._nonfinite.node_id] = "nonfinite"
                self.view.expand(self._nonfinite.node_id)
            else:
                for item in culprits:
                    if item in ids:
                        marks[ids[item]] = "nonfinite"
        with self.hold_trait_notifications():
            self.view.marks = marks
            self.position = run.position
            self.current = current or ""
            self.iteration = -1 if run.iteration is None else run.iteration
        total = len(run.vm.nodes)
        spent = sum(run.times.values())
        if run.finished:
            state = "finished: outputs returned, updates written"
        elif run.failed is not None:
            state = "stopped by an error"
        elif run.done:
            state = "every node has run: finish for the outputs and the updates"
        else:
            state = (f"next: <code>[{current}] "
                     f"{html.escape(str(run.current_node.op)[:80])}</code>")
            if run.scan is not None:
                visit = run.scan
                state = (f"in <b>iteration {visit.loop.t}</b> of "
                         f"<code>{html.escape(str(visit.node.op)[:60])}</code> "
                         f"(at most {visit.loop.n_steps}) &middot; " + state)
        text = (f"<b>{run.position}</b> of {total} nodes run ({spent * 1e3:.2f} ms in their "
                f"thunks) &middot; {state}")
        if getattr(run, "tier", "optimized") == "quick":
            kinds = [getattr(t, "kind", "py") for t in run.vm.thunks]
            in_c, quick = kinds.count("c"), kinds.count("quick")
            text += (f"<br><i>quick tier: {in_c} node{'s' if in_c != 1 else ''} run C found in "
                     f"the module cache, {quick} the quick tier's C (the optimized bits), "
                     f"{total - in_c - quick} numpy while the optimized code compiles</i>")
        if self._nonfinite is not None:
            what = "first NaN/Inf" if self._nonfinite.node is not None else "NaN/Inf in the inputs"
            text += (f"<br><b style='color:var(--jp-error-color1,#d32f2f)'>{what}:</b> "
                     f"{html.escape(str(self._nonfinite))}")
        if error:
            text += (f"<br><b style='color:var(--jp-error-color1,#d32f2f)'>"
                     f"{html.escape(error.splitlines()[0][:400])}</b>")
        self.status = text
        self._status.value = f"<div class='tg-step-status'>{text}</div>"
        self._show_panel()

    def _show_panel(self) -> None:
        """The selected node or variable when it has a value, else the last node run."""
        run, ids = self.run, self.run.ids
        selected = self.view.selected
        found = self._nonfinite
        if not selected and getattr(found, "scan", None) is not None:
            self._panel.value = self._inner_panel(found.node_id, found.iteration)
            return
        if "/" in (selected or "") or (not selected and run.scan is not None
                                       and run.scan.inner is not None and run.scan.inner.ran):
            self._panel.value = self._inner_panel(selected)
            return
        target = ids.find(selected) if selected else None
        if target is None and run.ran:
            target = run.ran[-1]
        if target is None:
            self._panel.value = "<i>nothing has run yet: step, or run to a node</i>"
            return
        values = run.values
        parts = []
        if hasattr(target, "op"):
            took = run.times.get(target)
            parts.append(f"<div><b>[{ids[target]}] {html.escape(str(target.op)[:200])}</b>"
                         + (f" &middot; {took * 1e6:.1f} &micro;s" if took is not None else
                            " &middot; not run yet") + "</div>")
            for k, var in enumerate(target.inputs):
                label = f"input {k}: {var.name or ids.get(var, '') or var}"
                if var in values:
                    parts.append(preview_html(label, values[var]))
            for k, var in enumerate(target.outputs):
                if var in values:
                    parts.append(preview_html(f"output {k}" + (f" ({var.name})" if var.name
                                                               else ""), values[var]))
        elif target in values:
            parts.append(preview_html(f"[{ids[target]}] {target}", values[target]))
        self._panel.value = "<div class='tg-step-panel'>" + "".join(parts) + "</div>"


    def _inner_panel(self, selected: str, t: int | None = None) -> str:
        """An inner node of a scan (``'D/B'``; none selected: the last one run): its values
        in iteration ``t`` (default: the one stepped through now when the node ran in it,
        else the last one)."""
        run = self.run
        level, prefix = run, ""
        while level.scan is not None and level.scan.inner is not None:
            prefix += level.ids[level.scan.node] + "/"
            level = level.scan.inner
        if not selected:
            selected = prefix + level.ids[level.ran[-1]]
        scan_id, _, rest = selected.partition("/")
        try:
            visit = run._visit_of(scan_id, selected)
        except KeyError as exc:
            return f"<div class='tg-step-panel'><i>{html.escape(str(exc.args[0]))}</i></div>"
        if t is None:
            t = visit.loop.t
            if visit.inner is None or not any(rest == visit.inner.ids[n]
                                              for n in visit.inner.ran):
                t = max(visit.steppers, default=t)
        inner = visit.steppers.get(t) or (visit.inner if visit.loop.t == t else None)
        if inner is None or "/" in rest:
            return ("<div class='tg-step-panel'><i>step into the loop to see its values"
                    "</i></div>")
        target = inner.ids.find(rest)
        parts = [f"<div><b>[{html.escape(selected)}] iteration {t}</b></div>"]
        if hasattr(target, "op"):
            took, runs = visit.times.get(target), visit.runs.get(target, 0)
            parts[0] = (f"<div><b>[{html.escape(selected)}] {html.escape(str(target.op)[:200])}"
                        f"</b> &middot; iteration {t}" + (
                            f" &middot; {took * 1e6:.1f} &micro;s over {runs} iterations"
                            if took is not None else "") + "</div>")
            for k, var in enumerate(target.outputs):
                if var in inner.values:
                    parts.append(preview_html(f"output {k}" + (f" ({var.name})" if var.name
                                                               else ""), inner.values[var]))
            for k, var in enumerate(target.inputs):
                label = f"input {k}: {var.name or scan_id + '/' + inner.ids.get(var, '?')}"
                if var in inner.values:
                    parts.append(preview_html(label, inner.values[var]))
        elif target is not None and target in inner.values:
            parts.append(preview_html(f"{target}", inner.values[target]))
        return "<div class='tg-step-panel'>" + "".join(parts) + "</div>"


def step(function, *args, **kwargs) -> Stepper:
    """A stepper widget for ``function(*args, **kwargs)`` (see ``Stepper``)."""
    return Stepper(function, *args, **kwargs)
