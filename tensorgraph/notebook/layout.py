"""Where the graph view draws things: the visible graph laid out by Graphviz's ``dot``, bounded.

The view never lays out a big graph whole. What is visible depends on which groups are open
(``expanded``): a closed group is one box, an open one a frame around its visible members.
That visible graph goes to ``dot -Tjson`` (positions, edge curves, frames) with a time limit;
past it, ``dot`` again with its cheap settings (straight edges, few crossing-reduction passes),
then a simple layered layout in Python. Results are cached by the DOT text, so reopening a
state costs nothing.

Boxes have fixed sizes computed here from their text (a monospace font of ``CHAR_W`` pixels
per character). The text lines travel with the layout (``text``): the browser and the static
picture draw them as they are, so the text fits the box dot placed.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict, defaultdict

from tensorgraph.graphviz_run import GraphvizError, GraphvizNotFound, GraphvizTimeout, run_dot
from tensorgraph.notebook.folding import fold_plan

__all__ = ["visible_graph", "item_text", "box_text", "layout", "dot_source", "CHAR_W", "LINE_H"]

CHAR_W = 6.6   # px per character of the view's 11px monospace font
LINE_H = 15.0  # px per text line
PAD_X, PAD_Y = 14.0, 10.0
MAX_CHARS = 44
GROUP_CHARS = 64  # a group's label is a line of user code: worth more room
#: seconds for one dot run (the whole layout is bounded by about twice this, plus Python)
DOT_TIMEOUT = 6.0
#: visible items from which dot runs with its cheap settings only, and from which the Python
#: layered layout is used alone (measured 2026-11-24 at 882d007: 1,234 items took dot > 6 s,
#: cheap dot 2 s)
CHEAP_FROM, PYTHON_FROM = 300, 1500


def item_text(entry: dict) -> list[str]:
    """The lines drawn in a node's or a closed group's box (``visible_graph`` gives every
    item its ``lines``; the layout sends them to the browser)."""
    if entry.get("group"):
        return [_cut(entry["label"], GROUP_CHARS),
                _cut(entry.get("note") or f"{entry['n']} nodes, closed", GROUP_CHARS)]
    first = _cut(entry["op"])
    if entry["k"] == "constant":
        return [first, f"[{entry['id']}]"]
    # what folded into the box (folding.fold_plan): its constants' ports, its shape badge
    folded = [_cut(text) for _kind, text, _ids in entry.get("extra", ())]
    return [first, _cut(f"[{entry['id']}] {entry.get('t', '')}"), *folded]


def _cut(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def box_size(lines: list[str]) -> tuple[float, float]:
    width = max(len(line) for line in lines) * CHAR_W + 2 * PAD_X
    return round(max(width, 48.0), 1), round(len(lines) * LINE_H + PAD_Y, 1)


def visible_graph(payload: dict, expanded, fold: dict | None = None) -> dict:
    """The items shown when the groups in ``expanded`` are open: nodes, closed groups (as
    boxes), open groups (as frames, nested), and the edges between the shown items (an edge
    from or to a member of a closed group attaches to the group's box; repeats merge). Each
    item has the ``lines`` of text its box shows.

    ``fold`` (the keywords of ``folding.fold_plan``: ``shape_code``, ``constants``, ``keep``)
    folds constants and shape plumbing into the nodes they serve; None draws every node."""
    expanded = set(expanded)
    plan = fold_plan(payload, **fold) if fold is not None else None
    hidden = plan["hidden"] if plan else {}
    extra = plan["extra"] if plan else {}
    groups = {g["id"]: g for g in payload["groups"]}

    def shown_as(gid):
        """The outermost closed group on the way to ``gid`` (None: all open)."""
        chain = []
        while gid is not None:
            chain.append(gid)
            gid = groups[gid]["parent"]
        for g in reversed(chain):
            if g not in expanded:
                return g
        return None

    owner = {}
    items: dict = OrderedDict()
    for node in payload["nodes"]:
        if node["id"] in hidden:
            continue
        closed = shown_as(node.get("g"))
        if closed is None:
            owner[node["id"]] = node["id"]
            item = dict(node, frame=node.get("g"))
            if node["id"] in extra:
                item["extra"] = extra[node["id"]]
            item["lines"] = item_text(item)
            items[node["id"]] = item
        else:
            key = f"G:{closed}"
            owner[node["id"]] = key
            if key not in items:
                g = groups[closed]
                items[key] = {"id": key, "group": closed, "label": g["label"], "n": g["n"],
                              "frame": g["parent"], "note": g.get("note")}
                items[key]["lines"] = item_text(items[key])
    frames = {}
    for gid in expanded:
        if gid in groups and shown_as(gid) is None:
            frames[gid] = {"id": gid, "label": groups[gid]["label"],
                           "parent": groups[gid]["parent"]}
    edges: dict = OrderedDict()
    for src, dst, label in (plan["edges"] if plan else payload["edges"]):
        a, b = owner.get(src), owner.get(dst)
        if a is None or b is None or a == b:
            continue
        entry = edges.setdefault((a, b), {"n": 0, "label": label})
        entry["n"] += 1
        if entry["label"] != label:
            entry["label"] = ""
    return {"items": items, "frames": frames,
            "edges": [[a, b, e["n"], e["label"] if e["n"] == 1 else f"x{e['n']}"]
                      for (a, b), e in edges.items()],
            "group_order": [g["id"] for g in payload["groups"]],
            "hidden": hidden}


def _name(item_id: str) -> str:
    return '"' + item_id.replace('"', "") + '"'


def dot_source(visible: dict, cheap: bool = False) -> str:
    """The DOT text of a visible graph (fixed-size boxes, frames as clusters)."""
    lines = ["digraph G {",
             '  graph [rankdir=TB nodesep=0.22 ranksep=0.38 nslimit=2 fontsize=10];',
             '  node [shape=box fixedsize=true label="" fontsize=10];',
             '  edge [arrowsize=0.6];']
    if cheap:
        lines.append("  graph [splines=false mclimit=0.1 nslimit=1 remincross=false];")
    children: dict = defaultdict(list)
    for item_id, item in visible["items"].items():
        children[item.get("frame") if item.get("frame") in visible["frames"] else None].append(
            item_id)
    sub_frames: dict = defaultdict(list)
    for gid, frame in visible["frames"].items():
        parent = frame["parent"] if frame["parent"] in visible["frames"] else None
        sub_frames[parent].append(gid)

    def emit(parent, indent):
        for item_id in children.get(parent, ()):
            item = visible["items"][item_id]
            w, h = box_size(item["lines"])
            lines.append(f"{indent}{_name(item_id)} [width={w / 72:.3f} height={h / 72:.3f}];")
        for gid in sub_frames.get(parent, ()):
            lines.append(f"{indent}subgraph {_name('cluster_' + gid)} {{")
            lines.append(f'{indent}  label="" margin=18;')
            emit(gid, indent + "  ")
            lines.append(f"{indent}}}")

    emit(None, "  ")
    # sibling groups keep the user's creation order (W0 above W1 above W2 ...): an invisible
    # edge runs from each closed group to the next, and the data edges between two sibling
    # groups do not rank them (in a gradient, layer 3's box feeds layer 2's)
    rank = {g: k for k, g in enumerate(visible.get("group_order", ()))}
    frame_of, order_edges = {}, []  # closed group box -> the frame it sits in
    for parent, kids in children.items():
        boxes = sorted((i for i in kids if visible["items"][i].get("group") in rank),
                       key=lambda i: rank[visible["items"][i]["group"]])
        frame_of.update(dict.fromkeys(boxes, parent))
        order_edges += zip(boxes, boxes[1:])
    for a, b, _n, _label in visible["edges"]:
        loose = a in frame_of and b in frame_of and frame_of[a] == frame_of[b]
        lines.append(f"  {_name(a)} -> {_name(b)}{' [constraint=false]' if loose else ''};")
    for a, b in order_edges:
        lines.append(f"  {_name(a)} -> {_name(b)} [style=invis];")
    lines.append("}")
    return "\n".join(lines)


_cache: OrderedDict = OrderedDict()
_cache_lock = threading.Lock()
CACHE_SIZE = 64


def layout(visible: dict, timeout: float = DOT_TIMEOUT) -> dict:
    """Positions for a visible graph (see ``parse_dot_json``), from the cache, ``dot``, cheap
    ``dot`` or the Python fallback, whichever answers first within the limits; its
    ``engine`` says which, ``seconds`` how long it took; ``text`` the lines of each box (not
    cached: equal DOT text, so equal positions, may come from boxes saying other things)."""
    source = dot_source(visible)
    key = hashlib.sha256(source.encode()).hexdigest()
    text = box_text(visible)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return dict(_cache[key], cached=True, text=text, folded=box_folded(visible))
    started = time.perf_counter()
    result = None
    notes = []
    n = len(visible["items"])
    # dot's crossing reduction and x placement grow fast: past a few hundred boxes go straight
    # to its cheap settings, past PYTHON_FROM items straight to the Python layout
    attempts = (False, True) if n <= CHEAP_FROM else (True,) if n <= PYTHON_FROM else ()
    for cheap in attempts:
        try:
            raw = run_dot(dot_source(visible, cheap) if cheap else source, "json", timeout)
            result = parse_dot_json(json.loads(raw), visible)
            result["engine"] = "dot (cheap settings)" if cheap else "dot"
            break
        except GraphvizNotFound as exc:
            notes.append(str(exc))
            break
        except (GraphvizTimeout, GraphvizError, ValueError, KeyError) as exc:
            notes.append(str(exc))
    if result is None:
        result = layered_layout(visible)
        result["engine"] = "python (layered)"
    if notes:
        result["notes"] = notes
    result["seconds"] = round(time.perf_counter() - started, 4)
    with _cache_lock:
        _cache[key] = result
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return dict(result, cached=False, text=text, folded=box_folded(visible))


def box_text(visible: dict) -> dict:
    """``{item id: [line, line]}``: what each box of a visible graph shows."""
    return {item_id: item["lines"] for item_id, item in visible["items"].items()}


def box_folded(visible: dict) -> dict:
    """``{item id: [[kind, [ids]], ...]}``: what each of a box's lines after the second
    stands for (``'port'``: constants read, ``'shape'``: plumbing folded in), and the ids of
    the folded nodes (the browser selects one on a click; hover names them)."""
    return {item_id: [[kind, ids] for kind, _text, ids in item["extra"]]
            for item_id, item in visible["items"].items() if item.get("extra")}


def _points(text: str):
    return [tuple(float(v) for v in p.split(",")[:2]) for p in text.split()]


def _px(value: float) -> int:
    """Whole pixels: the layout travels to the browser, and decimals cost bytes, not looks."""
    return int(round(value))


def _straightened(points: list) -> list:
    """An edge whose spline runs within a pixel of the straight line between its ends, as that
    line (two points instead of seven or more: most edges of a DAG, a third of the layout's
    bytes)."""
    (ax, ay), (bx, by) = points[0], points[-1]
    length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
    if len(points) <= 2 or length == 0:
        return points
    for px, py in points[1:-1]:
        if abs((bx - ax) * (ay - py) - (ax - px) * (by - ay)) / length > 1.0:
            return points
    return [points[0], points[-1]]


def parse_dot_json(data: dict, visible: dict) -> dict:
    """``{"size": [w, h], "items": {id: [cx, cy, w, h]}, "frames": {gid: [x0, y0, x1, y1]},
    "edges": [[a, b, n, label, [x, y, x, y, ...]]]}`` in pixels, y downwards."""
    x0, y0, x1, y1 = (float(v) for v in data["bb"].split(","))
    height = y1 - y0

    def fy(y):
        return _px(height - (y - y0))

    items, frames, by_gvid = {}, {}, {}
    for obj in data.get("objects", []):
        name = obj["name"]
        if name.startswith("cluster_"):
            bx0, by0, bx1, by1 = (float(v) for v in obj["bb"].split(","))
            frames[name[len("cluster_"):]] = [_px(bx0 - x0), fy(by1), _px(bx1 - x0),
                                              fy(by0)]
            continue
        if name not in visible["items"]:
            continue
        by_gvid[obj["_gvid"]] = name
        cx, cy = (float(v) for v in obj["pos"].split(","))
        items[name] = [_px(cx - x0), fy(cy), _px(float(obj["width"]) * 72),
                       _px(float(obj["height"]) * 72)]
    edge_meta = {(a, b): (n, label) for a, b, n, label in visible["edges"]}
    edges = []
    for edge in data.get("edges", []):
        if edge.get("style") == "invis":
            continue  # an ordering edge (see dot_source)
        a, b = by_gvid.get(edge["tail"]), by_gvid.get(edge["head"])
        if a is None or b is None:
            continue
        n, label = edge_meta.get((a, b), (1, ""))
        pts, end = [], None
        for part in edge.get("pos", "").split():
            if part.startswith("e,"):
                end = _points(part[2:])[0]
            elif not part.startswith("s,"):
                pts.append(_points(part)[0])
        if end is not None:
            pts.append(end)
        flat = [v for (px, py) in _straightened(pts) for v in (_px(px - x0), fy(py))]
        edges.append([a, b, n, label, flat])
    return {"size": [_px(x1 - x0), _px(height)], "items": items, "frames": frames,
            "edges": edges}


def layered_layout(visible: dict) -> dict:
    """A cheap layered layout (longest path layers, barycentre order, straight edges) for
    when ``dot`` is missing or too slow; frames enclose their members' boxes."""
    items = visible["items"]
    preds: dict = defaultdict(list)
    for a, b, *_ in visible["edges"]:
        preds[b].append(a)
    layer: dict = {}
    order = list(items)
    for _ in range(len(order) + 1):
        changed = False
        for item_id in order:
            depth = max((layer.get(p, 0) + 1 for p in preds[item_id] if p in items), default=0)
            if layer.get(item_id) != depth and depth <= len(order):
                layer[item_id] = depth
                changed = True
        if not changed:
            break
    rows: dict = defaultdict(list)
    for item_id in order:
        rows[layer.get(item_id, 0)].append(item_id)
    position: dict = {}
    y, width = 20.0, 0.0
    for depth in sorted(rows):
        row = rows[depth]
        if depth:
            row.sort(key=lambda i: sum(position.get(p, (0, 0))[0] for p in preds[i]) /
                     max(1, len(preds[i])))
        x = 20.0
        tallest = 0.0
        for item_id in row:
            w, h = box_size(items[item_id]["lines"])
            position[item_id] = (x + w / 2, y + h / 2, w, h)
            x += w + 24
            tallest = max(tallest, h)
        width = max(width, x)
        y += tallest + 40
    out_items = {k: [_px(v) for v in p] for k, p in position.items()}
    frames = {}
    for gid in visible["frames"]:
        boxes = [position[k] for k, it in items.items() if _inside(it, gid, visible)]
        if boxes:
            frames[gid] = [_px(min(b[0] - b[2] / 2 for b in boxes) - 10),
                           _px(min(b[1] - b[3] / 2 for b in boxes) - 22),
                           _px(max(b[0] + b[2] / 2 for b in boxes) + 10),
                           _px(max(b[1] + b[3] / 2 for b in boxes) + 10)]
    edges = []
    for a, b, n, label in visible["edges"]:
        if a in position and b in position:
            pa, pb = position[a], position[b]
            edges.append([a, b, n, label, [_px(v) for v in (pa[0], pa[1] + pa[3] / 2, pb[0],
                                                             pb[1] - pb[3] / 2)]])
    return {"size": [_px(width), _px(y)], "items": out_items, "frames": frames,
            "edges": edges}


def _inside(item: dict, gid: str, visible: dict) -> bool:
    frame = item.get("frame")
    while frame is not None:
        if frame == gid:
            return True
        frame = visible["frames"].get(frame, {}).get("parent")
    return False
