"""``line_plot``: a curve as a small SVG, for the tutorials (a loss over training steps).

The notebooks need one kind of plot, a line over steps; drawing it as SVG here avoids a
plotting library in the ``notebook`` extra. The SVG uses ``currentColor`` so it reads in light
and dark themes, and it is static: nbconvert and GitHub show it as it is.

>>> line_plot([3.0, 2.0, 1.5], title="loss")        # doctest: +ELLIPSIS
<LinePlot 'loss': 3 points, from 3 to 1.5>
"""

from __future__ import annotations

from html import escape

import numpy as np

__all__ = ["line_plot", "LinePlot"]


class LinePlot:
    """A line over its index (or over ``xs``); displays as SVG."""

    def __init__(self, ys, xs=None, *, title: str = "", xlabel: str = "", ylabel: str = "",
                 width: int = 520, height: int = 220):
        self.ys = np.asarray(ys, dtype=float).ravel()
        if self.ys.size == 0:
            raise ValueError("line_plot needs at least one value, got none")
        self.xs = (np.arange(self.ys.size, dtype=float) if xs is None
                   else np.asarray(xs, dtype=float).ravel())
        if self.xs.shape != self.ys.shape:
            raise ValueError(f"line_plot: {self.xs.size} x values for {self.ys.size} y values")
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.width, self.height = int(width), int(height)

    def _repr_svg_(self) -> str:
        w, h, left, right, top, bottom = self.width, self.height, 56, 12, 24, 34
        finite = np.isfinite(self.ys)
        lo, hi = (self.ys[finite].min(), self.ys[finite].max()) if finite.any() else (0, 1)
        if hi == lo:
            lo, hi = lo - 1, hi + 1
        x0, x1 = self.xs.min(), self.xs.max() if self.xs.size > 1 else self.xs.min() + 1

        def px(x, y):
            return (left + (x - x0) / (x1 - x0 or 1) * (w - left - right),
                    top + (hi - y) / (hi - lo) * (h - top - bottom))

        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in
                          (px(x, y) for x, y in zip(self.xs[finite], self.ys[finite])))
        text = "font-size='10' fill='currentColor'"
        return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' "
                f"role='img' aria-label='{escape(self.title or 'line plot')}' "
                f"style='color:var(--jp-ui-font-color1,#333)'>"
                f"<text x='{left}' y='14' font-size='12' fill='currentColor'>"
                f"{escape(self.title)}</text>"
                f"<line x1='{left}' y1='{h - bottom}' x2='{w - right}' y2='{h - bottom}' "
                f"stroke='currentColor' stroke-opacity='0.4'/>"
                f"<line x1='{left}' y1='{top}' x2='{left}' y2='{h - bottom}' "
                f"stroke='currentColor' stroke-opacity='0.4'/>"
                f"<text x='{left - 4}' y='{top + 4}' text-anchor='end' {text}>{hi:.4g}</text>"
                f"<text x='{left - 4}' y='{h - bottom}' text-anchor='end' {text}>{lo:.4g}</text>"
                f"<text x='{left}' y='{h - bottom + 14}' {text}>{x0:.4g}</text>"
                f"<text x='{w - right}' y='{h - bottom + 14}' text-anchor='end' {text}>"
                f"{x1:.4g}</text>"
                f"<text x='{(left + w - right) / 2}' y='{h - 4}' text-anchor='middle' {text}>"
                f"{escape(self.xlabel)}</text>"
                f"<text x='12' y='{(top + h - bottom) / 2}' text-anchor='middle' {text} "
                f"transform='rotate(-90 12 {(top + h - bottom) / 2})'>{escape(self.ylabel)}"
                f"</text><polyline points='{points}' fill='none' "
                f"stroke='var(--jp-brand-color1,#1976d2)' stroke-width='2'/></svg>")

    def __repr__(self) -> str:
        return (f"<LinePlot {self.title!r}: {self.ys.size} points, from {self.ys[0]:.4g} to "
                f"{self.ys[-1]:.4g}>")


def line_plot(ys, xs=None, **kwargs) -> LinePlot:
    """A line plot of ``ys`` (over their index, or ``xs``) that displays as SVG; keywords:
    ``title``, ``xlabel``, ``ylabel``, ``width``, ``height``.

    >>> line_plot([0.7, 0.3, 0.1], title="loss", xlabel="step")
    <LinePlot 'loss': 3 points, from 0.7 to 0.1>
    """
    return LinePlot(ys, xs, **kwargs)
