"""Issue 36's table: per graph, the boxes the graph view draws by default, how many are
constants or shape plumbing, their share, and the edge crossings of the laid-out drawing,
before (every node drawn) and after folding.

    python tools/graph_readability.py

The graphs are tests/readable_graphs.py's. Crossings are counted on the ``dot -Tjson``
layout the view draws: each edge's spline is sampled (8 points per cubic piece) into a
polyline, and two edges cross where two of their segments properly intersect; edges sharing
an end box are not compared (they meet there, they do not cross). A development tool (not in
the wheel)."""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from readable_graphs import all_graphs, opened  # noqa: E402

from tensorgraph.notebook.folding import plumbing_share  # noqa: E402
from tensorgraph.notebook.graph_model import graph_model  # noqa: E402
from tensorgraph.notebook.layout import layout, visible_graph  # noqa: E402


def _polyline(points: list) -> list:
    """The drawn curve of an edge (layout's flat [x, y, ...]: a B-spline's start then
    (ctrl, ctrl, end) triples, or straight segments), as points."""
    pts = list(zip(points[::2], points[1::2]))
    pieces = len(pts) - 1
    if pieces < 3 or (pieces - 1) % 3:
        return pts
    line = [pts[0]]
    for i in range(0, len(pts) - 2, 3):
        if i + 3 >= len(pts):
            break
        p0, p1, p2, p3 = pts[i:i + 4]
        for k in range(1, 9):
            t = k / 8
            u = 1 - t
            line.append(tuple(u ** 3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t ** 3 * d
                              for a, b, c, d in zip(p0, p1, p2, p3)))
    line.append(pts[-1])  # the arrow's tip
    return line


def _cross(a, b, c, d) -> bool:
    def orient(p, q, r):
        v = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
        return (v > 1e-9) - (v < -1e-9)
    return (orient(a, b, c) * orient(a, b, d) < 0) and (orient(c, d, a) * orient(c, d, b) < 0)


def edge_crossings(laid_out: dict) -> int:
    """Pairs of drawn edges (not sharing an end) whose curves cross, counted once each."""
    edges = [(a, b, _polyline(points)) for a, b, _n, _label, points in laid_out["edges"]]
    boxes = []
    for _a, _b, line in edges:
        xs, ys = [p[0] for p in line], [p[1] for p in line]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    count = 0
    for i in range(len(edges)):
        a1, b1, l1 = edges[i]
        for j in range(i + 1, len(edges)):
            a2, b2, l2 = edges[j]
            if {a1, b1} & {a2, b2}:
                continue
            bi, bj = boxes[i], boxes[j]
            if bi[2] < bj[0] or bj[2] < bi[0] or bi[3] < bj[1] or bj[3] < bi[1]:
                continue
            if any(_cross(p, q, r, s) for p, q in zip(l1, l1[1:]) for r, s in zip(l2, l2[1:])):
                count += 1
    return count


def measure(obj) -> dict:
    payload = graph_model(obj).payload()
    groups = opened(payload)
    row = {}
    for when, fold in (("before", None), ("after", {})):
        visible = visible_graph(payload, groups, fold)
        row[when] = {**plumbing_share(visible), "crossings": edge_crossings(layout(visible)),
                     "edges": len(visible["edges"])}
    return row


def main() -> None:
    print("| graph | boxes | constants + plumbing | share | edges | edge crossings |")
    print("|---|---|---|---|---|---|")
    for title, obj in all_graphs().items():
        row = measure(obj)
        b, a = row["before"], row["after"]
        print(f"| {title} | {b['boxes']} → {a['boxes']} | {b['plumbing']} → {a['plumbing']} | "
              f"{b['share']:.0%} → {a['share']:.0%} | {b['edges']} → {a['edges']} | "
              f"{b['crossings']} → {a['crossings']} |")


if __name__ == "__main__":
    main()
