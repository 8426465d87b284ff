"""``tgn.Stepper(f, *args)`` and ``%tg_step f(args)``: step through one call of a compiled
function on its graph.

The widget drives a core stepper (``f.stepper(*args)``, ``tensorgraph.compile.stepper``: the
same C thunks as a call, in the same order) and shows it on a graph view: the node that runs
next marked ``current``, the nodes that ran ``done`` (shaded), a node that failed or made the
first NaN/Inf ``error`` / ``nonfinite``. Buttons: step, step N, run to the selected node, run
to the first NaN/Inf, finish, restart. The panel shows the last node run (or the selected
one): its inputs and outputs as previews computed in the kernel (statistics, NaN/Inf counts,
a histogram, a corner of the array) and its time.

Everything is Python too: ``widget.run`` is the core stepper (``run.position``,
``run.values``), and ``step(n)``, ``run_to(node)``, ``run_to_nonfinite()``, ``finish()``,
``restart()`` do what the buttons do. Running many nodes updates the view once, at the end
(Jupyter drops messages past 1000 a second).
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import traitlets

from tensorgraph.notebook.bundles import StaticFallback, svg_or_empty, with_static_forms
from tensorgraph.notebook.graph_view import GraphView
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

    def __init__(self, function, *args, **kwargs):
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
        self._step_n = button("step", "run the next N nodes")
        self._n = widgets.BoundedIntText(10, min=1, max=10**6, layout=widgets.Layout(width="80px"))
        self._to = button("run to selected", "run until the node selected in the graph has run")
        self._nan = button("run to NaN/Inf", "run until a node makes the first NaN or Inf")
        self._finish = button("finish", "run the rest; return the outputs, write the updates")
        self._restart = button("restart", "the same call from the start")
        for b, cls in ((self._step, "tg-step-one"), (self._step_n, "tg-step-n"),
                       (self._to, "tg-step-to"), (self._nan, "tg-step-nan"),
                       (self._finish, "tg-step-finish"), (self._restart, "tg-step-restart")):
            b.add_class(cls)
        self._status = widgets.HTML()
        self._panel = widgets.HTML()
        bar = widgets.HBox([self._step, self._step_n, self._n, self._to, self._nan,
                            self._finish, self._restart])
        super().__init__([bar, self._status, self.view, self._panel])
        self.add_class("tg-stepper")
        self._step.on_click(lambda _: self._act(self.step))
        self._step_n.on_click(lambda _: self._act(lambda: self.step(self._n.value)))
        self._to.on_click(lambda _: self._act(self._run_to_selected))
        self._nan.on_click(lambda _: self._act(self.run_to_nonfinite))
        self._finish.on_click(lambda _: self._act(self.finish))
        self._restart.on_click(lambda _: self._act(self.restart))
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
        if run.current is not None and not run.failed:
            marks[ids[run.current]] = "current"
            self.view.expand(run.current)
        if self._error_node is not None and self._error_node in ids:
            marks[ids[self._error_node]] = "error"
        if self._nonfinite is not None:
            culprits = ([self._nonfinite.node] if self._nonfinite.node is not None
                        else self._nonfinite.variables)
            for item in culprits:
                if item in ids:
                    marks[ids[item]] = "nonfinite"
        with self.hold_trait_notifications():
            self.view.marks = marks
            self.position = run.position
        total = len(run.vm.nodes)
        spent = sum(run.times.values())
        if run.finished:
            state = "finished: outputs returned, updates written"
        elif run.failed is not None:
            state = "stopped by an error"
        elif run.done:
            state = "every node has run: finish for the outputs and the updates"
        else:
            state = (f"next: <code>[{ids[run.current]}] "
                     f"{html.escape(str(run.current.op)[:80])}</code>")
        text = (f"<b>{run.position}</b> of {total} nodes run ({spent * 1e3:.2f} ms in their "
                f"thunks) &middot; {state}")
        if getattr(run, "tier", "optimized") == "quick":
            in_c = sum(getattr(t, "kind", "py") == "c" for t in run.vm.thunks)
            text += (f"<br><i>quick tier: {in_c} node{'s' if in_c != 1 else ''} run C found in "
                     f"the module cache, {total - in_c} run numpy while the optimized code "
                     "compiles</i>")
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
        target = ids.find(self.view.selected) if self.view.selected else None
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


def step(function, *args, **kwargs) -> Stepper:
    """A stepper widget for ``function(*args, **kwargs)`` (see ``Stepper``)."""
    return Stepper(function, *args, **kwargs)
