"""Display bundles of the widgets: the live widget plus static forms (HTML with inline SVG, an
SVG picture, plain text) that nbconvert, GitHub and a kernel-less viewer show instead.

Where a notebook keeps the widgets' state (``jupyter nbconvert --execute`` does), nbconvert's
HTML shows the widget output alone, drawn by a script from a CDN: offline it stays blank. So a
displayed widget (``StaticFallback``) is two outputs: the widget, then its static form in a
``tg-static-fallback`` block that hides itself where the widget right before it has drawn."""

from __future__ import annotations

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: hides a fallback whose widget (the output just before it) has drawn: JupyterLab, Notebook 7
#: and nbconvert's lab template put each output in a .jp-OutputArea-child; graph_view.css has
#: the same rule for front ends that drop <style> from outputs
FALLBACK_STYLE = ("<style>.jp-OutputArea-child:has(.tg-graph-host) + "
                  ".jp-OutputArea-child:has(.tg-static-fallback) { display: none; }</style>")


def with_static_forms(bundle, forms: dict) -> tuple[dict, dict]:
    """``bundle`` (what ``DOMWidget._repr_mimebundle_`` returned: data, or (data, metadata))
    with the mime types of ``forms`` added."""
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
    return {**data, **forms}, metadata


def svg_or_empty(view) -> str:
    """``view.to_svg()``, or "" when there is no view or no picture can be made (a static
    form is a fallback: it never keeps the widget from displaying)."""
    if view is None:
        return ""
    try:
        return view.to_svg()
    except Exception:  # noqa: BLE001 - see the docstring
        return ""


def fallback_html(data: dict) -> str:
    """The static form of a display bundle (its HTML, else its SVG) in a block that hides
    itself where the live widget drew (see the module docstring); "" when it has none."""
    static = data.get("text/html") or data.get("image/svg+xml") or ""
    if not static:
        return ""
    return f'<div class="tg-static-fallback">{FALLBACK_STYLE}{static}</div>'


class StaticFallback:
    """Mixed into a widget whose ``_repr_mimebundle_`` has static forms: displayed in IPython
    (``display(w)``, or the last expression of a cell), it is the widget's output (the widget,
    its text) followed by an output with the static form, shown only where the widget cannot
    be (an exported HTML page offline, GitHub, a notebook reopened without its kernel)."""

    def _ipython_display_(self, **kwargs):
        from IPython.display import display

        data, metadata = with_static_forms(self._repr_mimebundle_(**kwargs), {})
        live = {k: v for k, v in data.items() if k in (WIDGET_VIEW, "text/plain")}
        display(live, metadata=metadata, raw=True)
        static = fallback_html(data)
        if static:
            display({"text/html": static}, raw=True)
