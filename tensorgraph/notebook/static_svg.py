"""The graph view's picture as standalone SVG: what nbconvert, nbviewer and GitHub show, where
no widget runs. Drawn from the same payload and layout as the browser view (the boxes' text
lines too: the layout's ``text``), with fixed light colours (no theme to follow there)."""

from __future__ import annotations

import math
from html import escape

from tensorgraph.notebook.layout import CHAR_W, LINE_H, PAD_Y

#: the heat map's colour ramp, light yellow to dark red (nbext/draw.js draws the same;
#: a test checks they agree)
HEAT_STOPS = ((255, 245, 200), (253, 190, 110), (240, 110, 60), (190, 30, 45), (120, 0, 40))
#: text on a heat-coloured box: whichever of these reads better on its fill, in any theme
DARK_TEXT, LIGHT_TEXT = (0, 0, 0), (255, 255, 255)


def heat_rgb(t: float) -> tuple[int, int, int]:
    """The ramp's colour at ``t`` in [0, 1]."""
    x = max(0.0, min(1.0, t)) * (len(HEAT_STOPS) - 1)
    i = min(len(HEAT_STOPS) - 2, int(x))
    f = x - i
    return tuple(round(a + (b - a) * f) for a, b in zip(HEAT_STOPS[i], HEAT_STOPS[i + 1]))


def _luminance(rgb) -> float:
    def channel(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG contrast ratio of two RGB colours (1 to 21; body text wants 4.5)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_on(fill) -> tuple[int, int, int]:
    """Dark or white text, whichever contrasts more with ``fill``."""
    return DARK_TEXT if contrast(fill, DARK_TEXT) >= contrast(fill, LIGHT_TEXT) else LIGHT_TEXT


def _hex(rgb) -> str:
    return "#%02x%02x%02x" % tuple(rgb)


_FILL = {"apply": "#eef2f8", "input": "#e3f2e1", "shared": "#fbefd3", "constant": "#ffffff"}
_STROKE = {"apply": "#6b8cc7", "input": "#3d8b37", "shared": "#b8860b", "constant": "#bdbdbd"}
#: a loop's inner inputs by role (graph_view.css draws the same): (fill, stroke, dash)
_ROLE = {"state": ("#efe3f4", "#8e44ad", ""), "non-sequence": ("#f7f7f7", "#666666", "4 2"),
         "shared": ("#fbefd3", "#b8860b", "")}
#: a loop's group, closed (box) and open (frame): (fill, stroke)
_LOOP = ("#f4eef7", "#8e44ad")


def _path(points) -> str:
    if len(points) < 4:
        return ""
    d = [f"M{points[0]},{points[1]}"]
    rest = len(points) // 2 - 1
    if rest >= 3 and (rest - 1) % 3 == 0:
        for i in range(2, len(points) - 2, 6):
            d.append("C" + " ".join(f"{points[j]},{points[j + 1]}" for j in range(i, i + 6, 2)))
        d.append(f"L{points[-2]},{points[-1]}")
    else:
        d.extend(f"L{points[i]},{points[i + 1]}" for i in range(2, len(points), 2))
    return " ".join(d)


#: the lines of what folded into a box (folding.py): constants' ports, the shape badge
_FOLD_INK = {"port": "#1f5fa8", "shape": "#5f5f5f"}

#: what the view's marks look like in the static picture: (fill, stroke)
_MARKS = {"current": (None, "#1976d2"), "done": ("#cfdcf0", None),
          "error": ("#f6d5d5", "#d32f2f"), "nonfinite": ("#f6d5d5", "#d32f2f"),
          "added": (None, "#2e7d32"), "removed": (None, "#d32f2f")}


def static_svg(payload: dict, layout: dict, marks: dict | None = None,
               overlay: dict | None = None) -> str:
    """SVG text of the laid-out visible graph (closed groups as dashed boxes); ``marks``
    ({id: mark}, the view's trait) colours marked nodes as the browser does, and so does
    ``overlay`` (``{title, values: {id: number}}``, the heat map) with its legend below."""
    marks = marks or {}
    heat = _heat_fills((overlay or {}).get("values") or {})
    # a rewrite step drawn at its places in the union of all steps covers only its ``bbox``
    left, top, right, bottom = layout.get("bbox") or [0, 0, *layout.get("size", [10, 10])]
    width, height = right - left, bottom - top
    legend = 22 if heat else 0
    nodes = {n["id"]: n for n in payload.get("nodes", ())}
    groups = {g["id"]: g for g in payload.get("groups", ())}
    text = layout.get("text", {})
    folded = layout.get("folded", {})  # what a box's third and fourth lines stand for
    if any(n.get("o") for n in nodes.values() if n["id"] in layout.get("items", {})):
        bottom += 12  # room for the "output 0" under the lowest boxes
        height += 12
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 20}" '
           f'height="{height + 20 + legend}" '
           f'viewBox="{left - 10} {top - 10} {width + 20} {height + 20 + legend}" '
           'font-family="monospace" font-size="11">',
           '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
           'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker>'
           '</defs>', f"<title>{escape(payload.get('title', 'graph'))}</title>"]
    for gid, (x0, y0, x1, y1) in layout.get("frames", {}).items():
        label = escape(groups.get(gid, {}).get("label", gid))
        fill, stroke = (("#faf7fc", _LOOP[1]) if groups.get(gid, {}).get("k") == "loop"
                        else ("#f4f7fc", "#1976d2"))
        out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="8" '
                   f'fill="{fill}" stroke="{stroke}" stroke-dasharray="4 3" stroke-opacity="0.5"/>'
                   f'<text x="{x0 + 8}" y="{y0 + 13}" fill="{stroke}" font-size="10">{label}</text>')
    for a, b, n, label, points in layout.get("edges", ()):
        out.append(f'<path d="{_path(points)}" fill="none" stroke="#888" '
                   f'marker-end="url(#a)"/>')
    for item_id, (cx, cy, w, h) in layout.get("items", {}).items():
        x, y = cx - w / 2, cy - h / 2
        lines = text.get(item_id, ())
        if item_id.startswith("G:"):
            fill, stroke, dash, rx = "#f7f7f7", "#1976d2", ' stroke-dasharray="5 3"', 6
            if groups.get(item_id[2:], {}).get("k") == "loop":
                (fill, stroke), dash = _LOOP, ' stroke-width="2"'
            # a closed loop (inner graph) box "in:E" shows the value of its node E, as
            # nbext/draw.js does (a scan's time holds its iterations)
            hot = item_id[5:] if item_id.startswith("G:in:") and item_id[5:] in heat else None
            if hot is not None:
                fill = _hex(heat[hot])
        else:
            n = nodes.get(item_id)
            if n is None:
                continue
            fill, stroke = _FILL.get(n["k"], "#eeeeee"), _STROKE.get(n["k"], "#999999")
            dash = ' stroke-dasharray="2 2"' if n["k"] == "constant" else ""
            rx = h / 2 if n["k"] in ("input", "shared") else 5
            if n.get("r") in _ROLE:
                fill, stroke, role_dash = _ROLE[n["r"]]
                dash = f' stroke-dasharray="{role_dash}"' if role_dash else ""
            if n.get("o"):
                stroke, dash = "#c0392b", ' stroke-width="2.2"'
            hot = item_id if item_id in heat else None
            if hot is not None:
                fill = _hex(heat[hot])
            mark_fill, mark_stroke = _MARKS.get(marks.get(item_id), (None, None))
            if mark_fill or mark_stroke:
                fill = mark_fill or fill
                stroke, dash = (mark_stroke, ' stroke-width="3"') if mark_stroke else (stroke,
                                                                                       dash)
        out.append(f'<g id="{escape(item_id)}"><rect x="{x}" y="{y}" width="{w}" height="{h}" '
                   f'rx="{rx}" fill="{fill}" stroke="{stroke}"{dash}/>')
        ink = _hex(text_on(heat[hot])) if hot is not None else None
        kinds = [kind for kind, _ids in folded.get(item_id, ())]
        for k, line in enumerate(lines):
            kind = kinds[k - 2] if 2 <= k < len(kinds) + 2 else None
            color = ink or _FOLD_INK.get(kind) or ("#1a1a1a" if k == 0 else "#666666")
            style = ' font-style="italic" font-size="10"' if kind == "shape" else ""
            out.append(f'<text x="{cx}" y="{y + PAD_Y / 2 + 11 + k * LINE_H}" '
                       f'text-anchor="middle" fill="{color}"{style}>{escape(line)}</text>')
        outputs = nodes.get(item_id, {}).get("o")
        if outputs:  # "output 0", "update of w": as the browser writes them under the box
            out.append(f'<text x="{cx}" y="{y + h + 11}" text-anchor="middle" fill="#b03a2e" '
                       f'font-size="10">{escape(", ".join(outputs)[:40])}</text>')
        out.append("</g>")
    if heat:
        out.append(_legend(overlay, left, bottom + 8))
    out.append("</svg>")
    return "\n".join(out)


def _heat_fills(values: dict) -> dict:
    """{id: fill} of a heat map, scaled from its smallest to its largest finite value."""
    finite = {k: v for k, v in values.items() if math.isfinite(v)}
    if not finite:
        return {}
    lo, hi = min(finite.values()), max(finite.values())
    return {k: heat_rgb((v - lo) / (hi - lo) if hi > lo else 1.0) for k, v in finite.items()}


def _legend(overlay: dict, x0: float, y: float) -> str:
    """The heat map's title, its ramp and its range, as the browser's legend shows them."""
    finite = [v for v in overlay["values"].values() if math.isfinite(v)]
    stops = "".join(f'<stop offset="{k / (len(HEAT_STOPS) - 1):.2f}" stop-color="{_hex(c)}"/>'
                    for k, c in enumerate(HEAT_STOPS))
    title = escape(overlay.get("title") or "")
    x = x0 + len(title) * CHAR_W + 8
    return (f'<defs><linearGradient id="heat">{stops}</linearGradient></defs>'
            f'<text x="{x0}" y="{y + 10}" fill="#444444">{title}</text>'
            f'<rect x="{x}" y="{y + 1}" width="90" height="10" fill="url(#heat)"/>'
            f'<text x="{x + 96}" y="{y + 10}" fill="#444444">'
            f'{_number(min(finite))} .. {_number(max(finite))}</text>')


def _number(v: float) -> str:
    a = abs(v)
    return f"{v:.2e}" if a and (a < 1e-3 or a >= 1e5) else f"{round(v, 3):g}"
