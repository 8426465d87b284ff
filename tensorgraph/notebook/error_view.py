"""Errors of compiled functions shown where they happen: after the usual traceback (which stays
intact for scripts and logs), a graph view with the failing node marked and selected.

The extension registers ``after_cell`` as a ``post_run_cell`` callback: when a cell raised an
error that names a node (the core's errors carry ``.node`` and, from a running function,
``.fgraph``), the view is displayed right under the traceback. DebugMode's errors get more:
``BadThunkOutput`` the two disagreeing values side by side with the largest difference;
``BadOptimization`` the graph before and after the rewrite and both values.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
from IPython.display import display

from tensorgraph.notebook.bundles import StaticFallback, with_static_forms
from tensorgraph.notebook.graph_view import GraphView
from tensorgraph.notebook.value_preview import preview_html

__all__ = ["error_display", "show_error", "after_cell"]


def _node_view(node, fgraph, title: str) -> GraphView:
    view = GraphView(fgraph if fgraph is not None and node in fgraph.apply_nodes
                     else node.outputs, title=title, height=420)
    view.marks = {view.model.resolve(node): "error"}
    view.select(node)
    return view


def _side_by_side(labels, values, largest=None) -> widgets.HTML:
    cells = "".join(f"<div style='flex:1;min-width:0'>{preview_html(label, value)}</div>"
                    for label, value in zip(labels, values))
    extra = (f"<div>largest difference: <code>{html.escape(str(largest))}</code></div>"
             if largest is not None else "")
    return widgets.HTML(f"<div class='tg-error-values'>{extra}<div style='display:flex;"
                        f"gap:16px'>{cells}</div></div>")


class ErrorView(StaticFallback, widgets.VBox):
    """What ``error_display`` shows when there is more than the graph: a widget with a
    static form (the error's first line, the values as HTML) for nbconvert and GitHub."""

    def __init__(self, children, headline: str):
        super().__init__(children)
        self.headline = headline
        self.add_class("tg-error-view")

    def _repr_mimebundle_(self, **kwargs):
        return with_static_forms(super()._repr_mimebundle_(**kwargs), {
            "text/plain": self.headline,
            "text/html": "".join(c.value for c in self.children if isinstance(c, widgets.HTML))})


def error_display(exc):
    """The widget shown for ``exc``, or None when it names no node."""
    from tensorgraph.compile.debugmode import BadOptimization, BadThunkOutput

    name = type(exc).__name__
    try:
        if isinstance(exc, BadOptimization) and exc.old is not None and exc.new is not None:
            rewrite = getattr(exc.step, "name", "the rewrite")
            before = GraphView(exc.old, title=f"before {rewrite}", height=360)
            after = GraphView(exc.new, title=f"after {rewrite}", height=360)
            return ErrorView([
                widgets.HTML(f"<b>{name}</b>: {html.escape(rewrite)} changed the value"),
                widgets.HBox([before, after]),
                _side_by_side(["before the rewrite", "after the rewrite"],
                              [exc.old_value, exc.new_value], exc.largest_difference)],
                headline=f"{name}: {rewrite} changed the value")
        node = getattr(exc, "node", None)
        if node is None or not hasattr(node, "outputs"):
            return None
        view = _node_view(node, getattr(exc, "fgraph", None), f"{name} in this node")
        if isinstance(exc, BadThunkOutput) and len(exc.values) == 2:
            kinds = list(exc.kinds) or ["first", "second"]
            return ErrorView([view, _side_by_side(
                [f"output {exc.output_index} by {k}" for k in kinds], exc.values,
                exc.largest_difference)], headline=f"{name}: " + str(exc).split("\n")[0])
        return view
    except (KeyError, TypeError, ValueError):
        return None  # a picture of the error must never hide the error


def show_error(exc) -> None:
    """Display the widget for ``exc`` once (a magic that shows it first marks it shown)."""
    if getattr(exc, "_tg_shown", False):
        return
    shown = error_display(exc)
    if shown is None:
        return
    try:
        exc._tg_shown = True
    except AttributeError:
        pass
    display(shown)


def after_cell(result) -> None:
    """``post_run_cell`` callback: the failing node of the cell's error, under its traceback."""
    exc = getattr(result, "error_in_exec", None)
    if exc is not None:
        show_error(exc)
