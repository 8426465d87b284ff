"""What a widget shows of an array: computed in the kernel, small enough to travel.

``preview(value)`` gives shape, dtype, min/max/mean/std over the finite values, NaN and Inf
counts, a corner of the array as text and a histogram of the finite values; ``preview_html``
draws that as HTML with the histogram as a small inline SVG. The array itself never leaves the
kernel: a 1e8-element array previews in the time numpy takes to reduce it once.
"""

from __future__ import annotations

import html

import numpy as np

__all__ = ["preview", "preview_html"]

BINS = 24
CORNER = 6  # rows and columns of the corner shown


def preview(value) -> dict:
    """A summary of ``value`` (an array, a scalar, or anything else: its type and repr)."""
    if not isinstance(value, (np.ndarray, np.generic, int, float, complex, bool)):
        return {"kind": type(value).__name__, "text": repr(value)[:200]}
    arr = np.asarray(value)
    out = {"kind": "array", "shape": list(arr.shape), "dtype": str(arr.dtype),
           "size": int(arr.size)}
    if arr.size and arr.dtype.kind in "biuf":
        data = arr.astype("float64", copy=False) if arr.dtype.kind in "biu" else arr
        finite = np.isfinite(data)
        if arr.dtype.kind == "f":
            out["nan"] = int(np.count_nonzero(np.isnan(data)))
            out["inf"] = int(np.count_nonzero(np.isinf(data)))
        good = data if finite.all() else data[finite]
        if good.size:
            out.update(min=float(good.min()), max=float(good.max()),
                       mean=float(good.mean(dtype="float64")), std=float(good.std(dtype="float64")))
            if good.size > 1 and out["max"] > out["min"]:
                counts, edges = np.histogram(good, bins=BINS)
                out["hist"] = [int(c) for c in counts]
                out["edges"] = [float(edges[0]), float(edges[-1])]
    corner = arr[tuple(slice(0, CORNER) for _ in range(arr.ndim))] if arr.ndim else arr
    out["corner"] = np.array2string(corner, precision=4, suppress_small=True, threshold=64,
                                    edgeitems=3, max_line_width=72)
    out["cut"] = bool(arr.ndim and corner.size < arr.size)
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def histogram_svg(p: dict, width: int = 180, height: int = 36) -> str:
    """The histogram of a preview as a small SVG (bars scaled to the fullest bin)."""
    counts = p.get("hist")
    if not counts:
        return ""
    top = max(counts) or 1
    bar = width / len(counts)
    bars = "".join(
        f"<rect x='{k * bar:.1f}' y='{height - c / top * height:.1f}' width='{bar - 1:.1f}' "
        f"height='{c / top * height:.1f}'></rect>" for k, c in enumerate(counts) if c)
    lo, hi = p["edges"]
    return (f"<svg class='tg-hist' width='{width}' height='{height + 12}' role='img' "
            f"aria-label='histogram from {_fmt(lo)} to {_fmt(hi)}'>"
            f"<g fill='currentColor' opacity='0.6'>{bars}</g>"
            f"<text x='0' y='{height + 11}' font-size='9' fill='currentColor'>{_fmt(lo)}</text>"
            f"<text x='{width}' y='{height + 11}' font-size='9' text-anchor='end' "
            f"fill='currentColor'>{_fmt(hi)}</text></svg>")


def preview_html(label: str, value) -> str:
    """One value as HTML: a heading line, the statistics, NaN/Inf in red, histogram, corner."""
    p = preview(value)
    head = f"<b>{html.escape(label)}</b>"
    if p["kind"] != "array":
        return f"<div class='tg-value'>{head}: <code>{html.escape(p['text'])}</code></div>"
    stats = f"<code>{p['dtype']} {tuple(p['shape'])}</code>"
    if "min" in p:
        stats += (f" min {_fmt(p['min'])} max {_fmt(p['max'])} mean {_fmt(p['mean'])} "
                  f"std {_fmt(p['std'])}")
    bad = [f"{p[k]} {name}" for k, name in (("nan", "NaN"), ("inf", "Inf")) if p.get(k)]
    if bad:
        stats += f" <b style='color:var(--jp-error-color1,#d32f2f)'>{', '.join(bad)}</b>"
    corner = html.escape(p["corner"]) + ("\n..." if p["cut"] else "")
    return (f"<div class='tg-value'>{head} {stats}<div style='display:flex;gap:12px;"
            f"align-items:flex-start'>{histogram_svg(p)}<pre style='margin:0;font-size:11px'>"
            f"{corner}</pre></div></div>")
