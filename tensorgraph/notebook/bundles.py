"""Display bundles of the widgets: the live widget plus static forms (HTML with inline SVG, an
SVG picture, plain text) that nbconvert, GitHub and a kernel-less viewer show instead."""

from __future__ import annotations


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
