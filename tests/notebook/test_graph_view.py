"""The graph view without a browser: its payload (ids as dprint prints them, every node, fused
nodes with their inner graph, user lines), the grouping of big graphs, the bounded layout, the
widget's Python API and its static fallbacks, the display registration and %tg_show."""

import html
import json
import pathlib
import re

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from display_checks import displayed
from readable_graphs import seed_program
from tensorgraph.graph.ids import graph_ids
from tensorgraph.notebook import GraphView, show
from tensorgraph.notebook.graph_model import AUTO_OPEN, GROUP_MAX, graph_model, payload_bytes
from tensorgraph.notebook.layout import box_size, item_text, layered_layout, layout, visible_graph


def seed(features=20):
    cost, train, _ = seed_program(features)
    return cost, train


def deep_mlp(layers=64, width=8):
    rng = np.random.default_rng(0)
    x, y = tt.matrix("x"), tt.ivector("y")
    h, params = x, []
    for k in range(layers):
        W = tg.shared(rng.normal(size=(width, width)) * 0.1, name=f"W{k}")
        b = tg.shared(np.zeros(width), name=f"b{k}")
        h = tt.tanh(tt.dot(h, W) + b)  # the layer line
        params += [W, b]
    cost = tt.special.categorical_crossentropy(tt.special.softmax(h), y).mean()
    return tg.grad(cost, params)  # the grad line


@pytest.mark.parametrize("which", ["graph", "function"])
def test_payload_ids_are_the_ids_dprint_prints_and_every_node_is_there(which):
    cost, train = seed()
    obj = cost if which == "graph" else train
    model = graph_model(obj)
    printed = set(re.findall(r"\[id ([A-Z]+)\]", tg.dprint(obj, file="str")))
    assert {n["id"] for n in model.nodes} == printed
    ids = graph_ids(obj)
    assert all(model.by_id[n["id"]] is ids.find(n["id"]) for n in model.nodes)
    edges = {(a, b) for a, b, _ in model.edges}
    for key in ids.order:
        for inp in getattr(key, "inputs", ()):
            assert (ids[inp], ids[key]) in edges


def test_compiled_payload_marks_c_nodes_fused_loops_outputs_and_updates():
    _, train = seed()
    model = graph_model(train)
    applies = [n for n in model.nodes if n["k"] == "apply"]
    assert applies and all(n["c"] == "C" for n in applies)
    fused = [n for n in applies if "f" in n.get("f", "")]
    assert fused
    detail = model.detail(fused[0]["id"])
    assert detail["inner"][-1].startswith("-> ") and "t0 = " in detail["inner"][0]
    outs = [o for n in model.nodes for o in n.get("o", ())]
    assert {"output 0", "output 1", "update of w", "update of b"} <= set(outs)
    assert any(n["k"] == "shared" and n["op"] == "w" for n in model.nodes)
    gemv = next(n for n in applies if n["cls"] == "Gemv")
    assert model.lines[gemv["l"]].endswith("p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))")
    detail = model.detail(gemv["id"])
    assert detail["runs"] == "C" and any("tg.grad" in line for line in detail["lines"])
    assert payload_bytes(model.payload()) / len(model.nodes) < 300


def test_a_node_detail_names_types_inputs_and_the_user_line():
    cost, _ = seed()
    model = graph_model(cost)
    dot = next(n for n in model.nodes if n.get("cls") == "Dot")
    detail = model.detail(dot["id"])
    assert [i["label"] for i in detail["inputs"]] == ["x", "w"]
    assert detail["inputs"][0]["type"] == "float32 (?, ?)"
    assert detail["lines"][0].endswith("p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))")
    leaf = model.detail(next(n["id"] for n in model.nodes if n["op"] == "w"))
    assert leaf["kind"] == "shared" and leaf["value"]["shape"] == [20]


def test_small_graphs_open_flat_and_big_ones_in_groups_by_line_then_by_layer():
    cost, _ = seed()
    assert graph_model(cost).groups == []
    grads = deep_mlp()
    model = graph_model(grads)
    assert model.count_apply() > 900
    top = [g for g in model.groups if g["parent"] is None]
    assert len(top) <= 4  # the layer line, the cost line, the grad line
    layer = next(g for g in top if "the layer line" in g["label"])
    per_layer = [g for g in model.groups if g["parent"] == layer["id"]]
    assert len(per_layer) == 64 and {g["label"] for g in per_layer} == {f"W{k}" for k in range(64)}
    grad = next(g for g in top if "the grad line" in g["label"])
    subs = [g for g in model.groups if g["parent"] == grad["id"]]
    assert sum(1 for g in subs if re.fullmatch(r"W\d+", g["label"])) >= 60
    assert all(g["n"] <= GROUP_MAX or any(c["parent"] == g["id"] for c in model.groups)
               for g in model.groups)
    assert all("g" in n for n in model.nodes)  # leaves sit in a reader's group
    assert AUTO_OPEN < model.count_apply()
    assert payload_bytes(model.payload()) / len(model.nodes) < 300


def test_visible_graph_replaces_closed_groups_by_one_box_and_merges_their_edges():
    model = graph_model(deep_mlp(layers=16))
    payload = model.payload()
    closed = visible_graph(payload, [])
    assert all(item.get("group") for item in closed["items"].values())
    assert len(closed["items"]) == len([g for g in model.groups if g["parent"] is None])
    grad = next(g["id"] for g in model.groups if g["parent"] is None and "grad" in g["label"])
    opened = visible_graph(payload, [grad])
    assert grad in opened["frames"] and len(opened["items"]) > len(closed["items"])
    assert all(a != b for a, b, *_ in opened["edges"])


def test_layout_places_every_visible_item_and_is_cached():
    model = graph_model(deep_mlp(layers=16))
    visible = visible_graph(model.payload(), [g["id"] for g in model.groups
                                               if g["parent"] is None])
    first = layout(visible)
    assert set(first["items"]) == set(visible["items"]) and first["engine"].startswith("dot")
    for item_id, (cx, cy, w, h) in first["items"].items():
        assert (w, h) == pytest.approx(box_size(item_text(visible["items"][item_id])), abs=1)
    assert layout(visible)["cached"] is True
    python = layered_layout(visible)
    assert set(python["items"]) == set(visible["items"])


def test_each_box_text_is_made_once_in_python_and_travels_with_the_layout():
    """The lines of every box come with the layout (``text``): the browser and the static
    picture draw them as they are. Two graphs laid out alike (equal DOT text: the cache
    answers the second) still say their own things."""
    x = tt.vector("x")
    first = visible_graph(graph_model(tt.exp(x) + 2).payload(), [])
    second = visible_graph(graph_model(tt.log(x) + 2).payload(), [])
    placed = [layout(first), layout(second)]
    assert placed[1]["cached"] and placed[1]["items"] == placed[0]["items"]
    for visible, result in zip((first, second), placed):
        assert result["text"] == {i: item_text(item) for i, item in visible["items"].items()}
    assert any("log" in line for lines in placed[1]["text"].values() for line in lines)
    assert not any("exp" in line for lines in placed[1]["text"].values() for line in lines)
    # a closed group's box says what it holds; the static picture writes the same lines
    view = GraphView(deep_mlp(layers=8)).wait()
    group, lines = next((k, v) for k, v in view.layout["text"].items() if k.startswith("G:"))
    assert lines[1].endswith("nodes, closed")
    svg = view.to_svg()
    for lines in view.layout["text"].values():
        for line in lines:
            assert f">{html.escape(line)}</text>" in svg


def test_the_graph_views_modules_join_into_the_one_anywidget_loads(tmp_path):
    """nbext's parts (one job each) import their siblings; the kernel joins them: each once,
    after what it imports, without those imports and exports; the entry keeps its default
    export. A circle, or an import the joining cannot keep, is refused by name."""
    from tensorgraph.notebook.assets import es_module

    files = {"entry.js": 'import { b } from "./b.js";\nimport { a } from "./a.js";\n'
                         "function render() { return a() + b(); }\nexport default { render };\n",
             "a.js": "export function a() { return 1; }\n",
             "b.js": 'import { a } from "./a.js";\nexport const b = () => a() + 1;\n'}
    joined = es_module("entry.js", read=files.__getitem__)
    assert [line for line in joined.splitlines() if line.startswith("// ---- ")] == [
        "// ---- nbext/a.js", "// ---- nbext/b.js", "// ---- nbext/entry.js"]
    assert "import " not in joined and joined.count("export ") == 1
    assert "function a()" in joined and "const b = " in joined
    with pytest.raises(ValueError, match="circle: entry.js -> b.js -> a.js -> entry.js"):
        es_module("entry.js",
                  read={**files, "a.js": 'import { x } from "./entry.js";\n'}.__getitem__)
    with pytest.raises(ValueError, match="nbext/a.js: 'import \\* as d3"):
        es_module("entry.js", read={**files, "a.js": 'import * as d3 from "d3";\n'}.__getitem__)

    # the real one: every part of nbext, and it loads as one module where node is installed
    import shutil
    import subprocess

    esm = GraphView._esm
    assert esm == es_module("graph_view.js")
    other_widgets = {"compare.js"}  # the modules of other widgets: not graph-view parts
    parts = {p.name for p in (pathlib.Path(__file__).resolve().parents[2] / "nbext").glob("*.js")
             } - other_widgets
    assert {line[len("// ---- nbext/"):] for line in esm.splitlines()
            if line.startswith("// ---- ")} == parts
    assert "model.off" not in esm  # anywidget drops a view's listeners on the model
    if shutil.which("node"):
        module = tmp_path / "graph_view.mjs"
        module.write_text(esm)
        done = subprocess.run(["node", "--input-type=module", "-e",
                               f"import({json.dumps(module.as_uri())}).then((m) => "
                               "console.log(typeof m.default.render))"],
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "function", done.stderr


def test_a_layout_without_graphviz_falls_back_to_python(monkeypatch):
    from tensorgraph import graphviz_run
    from tensorgraph.notebook import layout as layout_module

    def missing(*args, **kwargs):
        raise graphviz_run.GraphvizNotFound("no dot here")

    monkeypatch.setattr(layout_module, "run_dot", missing)
    x = tt.vector("novel_name_for_a_new_cache_entry")
    visible = visible_graph(graph_model(tt.exp(x) + 2).payload(), [])
    result = layout(visible)
    assert result["engine"] == "python (layered)" and "no dot here" in result["notes"][0]


def test_the_widget_api_selects_expands_highlights_and_colours():
    grads = deep_mlp(layers=8)
    view = GraphView(grads).wait()
    assert view.layout["items"] and view.status == ""
    target = view.model.ids[grads[5]]  # a node inside closed groups
    view.select(target)
    assert view.selected == target and view.detail["id"] == target
    assert set(view.model.group_path(target)) <= set(view.expanded)  # its groups opened
    view.wait()
    assert target in view.layout["items"]
    view.highlight([grads[5], grads[6]], label="two grads")
    assert view.highlight_ids == [view.model.ids[grads[5]], view.model.ids[grads[6]]]
    view.set_overlay({target: 2.0, grads[6]: 1.0}, title="time")
    assert view.overlay == {"title": "time", "values": {target: 2.0,
                                                       view.model.ids[grads[6]]: 1.0}}
    view.collapse(target)
    assert view.model.group_path(target)[-1] not in view.expanded
    view.collapse()
    assert view.expanded == []
    with pytest.raises(KeyError, match="no node with id 'ZZZZ'"):
        view.select("ZZZZ")
    view.expand_all()
    assert len(view.expanded) == len(view.graph["groups"])


def test_a_fold_puts_picked_nodes_in_one_closed_box_and_unfold_restores_the_graph():
    cost, _ = seed()
    view = GraphView(cost).wait()
    before = json.dumps(view.graph, sort_keys=True)
    apply_ids = [n["id"] for n in view.graph["nodes"] if n["k"] == "apply"]
    picked = [cost.owner, *apply_ids[1:4]]  # a node (as an Apply) and three ids
    gid = view.fold(picked, label="four nodes")
    group = next(g for g in view.graph["groups"] if g["id"] == gid)
    assert group == {"id": gid, "label": "four nodes", "parent": None, "n": 4, "fold": True}
    members = {n["id"] for n in view.graph["nodes"] if n.get("g") == gid}
    assert members == {view.model.ids[cost.owner], *apply_ids[1:4]}
    view.wait()
    assert f"G:{gid}" in view.layout["items"]
    assert not members & set(view.layout["items"])  # drawn as one box
    view.unfold(gid)
    view.wait()
    assert json.dumps({**view.graph, "serial": 1}, sort_keys=True) == before
    assert view.graph["serial"] == view.layout["graph"] == 3  # the layout of this graph
    assert members <= set(view.layout["items"])


def test_a_refused_fold_says_why_and_changes_nothing():
    view = GraphView(deep_mlp(layers=8)).wait()
    before = json.dumps(view.graph, sort_keys=True)
    first_of_group = {}
    for n in view.graph["nodes"]:
        if n["k"] == "apply":
            first_of_group.setdefault(n["g"], n["id"])
    a, b = list(first_of_group.values())[:2]  # two nodes in different groups
    with pytest.raises(ValueError, match="must be in the same group"):
        view.fold([a, b])
    with pytest.raises(ValueError, match="at least two nodes, got 1"):
        view.fold([a])
    with pytest.raises(KeyError, match="no node with id 'ZZZZ'"):
        view.fold([a, "ZZZZ"])
    with pytest.raises(ValueError, match="'g0' is not a fold"):
        view.unfold("g0")
    assert json.dumps(view.graph, sort_keys=True) == before
    # the browser's fold button sends a message; a refusal shows in the status line
    view._on_front_msg(view, {"type": "fold", "ids": [a, b], "label": "x"}, [])
    assert "must be in the same group" in view.status
    assert json.dumps(view.graph, sort_keys=True) == before


def test_a_selection_from_the_browser_fills_the_panel():
    cost, _ = seed()
    view = GraphView(cost)
    view.set_state({"selected": "A"})  # what a click sends
    assert view.detail["id"] == "A" and view.detail["title"].startswith("Elemwise")
    view.set_state({"expanded": ["no-such-group"]})
    assert view.expanded == []


def test_display_bundle_has_the_widget_a_static_svg_and_text():
    _, train = seed()
    view = GraphView(train)
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    svg = data["image/svg+xml"]
    assert svg.startswith("<svg") and "Gemv" in svg and 'id="A"' in svg
    assert data["text/plain"].startswith("<GraphView function train:")
    json.dumps(data)  # what the kernel sends must be JSON


def test_the_extension_displays_functions_as_views_and_keeps_plain_reprs(ipython_shell):
    _, train = seed()
    live, static = displayed(ipython_shell, train)
    assert "application/vnd.jupyter.widget-view+json" in live
    assert 'class="tg-static-fallback"' in static["text/html"] and "Gemv" in static["text/html"]
    x = tt.vector("x")
    assert repr(x) == "x" and repr([x, x]) == "[x, x]"
    assert "application/vnd.jupyter.widget-view+json" not in ipython_shell.display_formatter.format(
        x)[0]


def test_tg_show_magic(ipython_shell):
    from IPython.core.error import UsageError

    ipython_shell.user_ns.update(vx=tt.vector("vx"), tt=tt)
    view = ipython_shell.run_line_magic("tg_show", "tt.exp(vx) * 2 --height 300")
    assert isinstance(view, GraphView) and view.height == 300
    for bad in ("--bogus vx", "undefined_name_here", "42", "vx --height 10"):
        with pytest.raises(UsageError, match="^%tg_show: "):
            ipython_shell.run_line_magic("tg_show", bad)


def test_show_returns_a_view():
    x = tt.vector("x")
    assert isinstance(show([tt.exp(x), x + 1]), GraphView)


def test_test_values_show_on_hover_and_in_the_panel_summarised():
    with tg.config.change_flags(compute_test_value="raise"):
        x = tt.vector("x")
        x.tag.test_value = np.array([1.0, np.nan, -2.0, 4.0] + [0.5] * 996)
        y = tt.log(x)
    model = graph_model(y)
    ids = graph_ids(y)
    leaf = next(n for n in model.nodes if n["id"] == ids[x])
    assert leaf["tv"].startswith("test value x: float64 (1000,) min -2 max 4 mean")
    assert leaf["tv"].endswith("(1 NaN)")
    node = next(n for n in model.nodes if n["id"] == ids[y.owner])
    assert "2 NaN" in node["tv"]  # log(nan) and log(-2)
    panel = model.detail(ids[y.owner])["test_values"][0]
    assert panel["nan"] == 2 and panel["inf"] == 0 and panel["shape"] == [1000]
    assert panel["min"] == pytest.approx(np.log(0.5)) and panel["max"] == pytest.approx(np.log(4))
    assert len(panel["preview"]) < 120  # a preview travels, never the array
    assert "tv" not in next(n for n in graph_model(tt.exp(tt.vector("z"))).nodes if n["k"] == "apply")


def test_the_browser_and_the_static_picture_use_one_heat_ramp():
    """nbext/draw.js (the live heat map), its CSS legend and static_svg draw the same
    colours."""
    import pathlib

    from tensorgraph.notebook.static_svg import HEAT_STOPS, contrast, heat_rgb, text_on

    nbext = pathlib.Path(__file__).resolve().parents[2] / "nbext"
    js = (nbext / "draw.js").read_text()
    found = re.search(r"const HEAT_STOPS = (\[\[.*?\]\]);", js)
    assert found and json.loads(found.group(1)) == [list(c) for c in HEAT_STOPS]
    css = (nbext / "graph_view.css").read_text()
    ramp = re.search(r"\.tg-ramp \{[^}]*linear-gradient\(90deg, ([^;]*)\);", css).group(1)
    assert [tuple(map(int, c)) for c in re.findall(r"rgb\((\d+),\s*(\d+),\s*(\d+)\)", ramp)] \
        == list(HEAT_STOPS)
    # every colour of the ramp carries its text at AA contrast
    assert min(contrast(heat_rgb(t / 20), text_on(heat_rgb(t / 20))) for t in range(21)) >= 4.5


def test_an_opened_group_shows_its_children_in_the_users_creation_order():
    """The gradient of a 64-layer network, grouped per layer: the layers' groups come W0, W1,
    ..., W63 (not W0, W1, W10, ...), and dot draws them in that order top to bottom, though
    data runs from layer k+1's box to layer k's."""
    model = graph_model(deep_mlp(layers=64))
    grad = next(g["id"] for g in model.groups if g["parent"] is None and "tg.grad" in g["label"])
    kids = [g for g in model.groups if g["parent"] == grad]
    layers = [g["label"] for g in kids if re.fullmatch(r"W\d+", g["label"])]
    assert layers == [f"W{k}" for k in range(64)]
    placed = layout(visible_graph(model.payload(), [grad]))
    assert placed["engine"] == "dot"
    drawn = sorted((placed["items"][f"G:{g['id']}"][1], g["label"]) for g in kids
                   if g["label"] in layers)
    assert [label for _, label in drawn] == layers
    # the ordering edges are not drawn
    assert all(a in placed["items"] and b in placed["items"] for a, b, *_ in placed["edges"])
    assert len(placed["edges"]) == len(visible_graph(model.payload(), [grad])["edges"])


def test_a_displayed_view_is_the_widget_then_its_static_form_that_hides_where_it_draws(
        ipython_shell):
    """nbconvert --execute keeps widget state, and its HTML then shows the widget output alone
    (blank offline): the static form is an output of its own after the widget's, with a style
    that hides it where the widget before it drew."""
    from tensorgraph.notebook.bundles import FALLBACK_STYLE

    _, train = seed()
    live, static = displayed(ipython_shell, GraphView(train))
    assert set(live) == {"application/vnd.jupyter.widget-view+json", "text/plain"}
    assert list(static) == ["text/html"]  # nothing for a terminal to print twice
    html = static["text/html"]
    assert html.startswith('<div class="tg-static-fallback">' + FALLBACK_STYLE + "<svg")
    assert ".jp-OutputArea-child:has(.tg-graph-host) + .jp-OutputArea-child" in FALLBACK_STYLE


def test_the_static_picture_names_outputs_and_updates_as_the_browser_does():
    _, train = seed()
    svg = GraphView(train).to_svg()
    for label in ("output 0", "output 1", "update of w", "update of b"):
        assert f">{label}</text>" in svg
    # under the lowest boxes, inside the picture
    height = float(re.search(r'viewBox="[^ ]+ [^ ]+ [^ ]+ ([^"]+)"', svg).group(1))
    lowest = max(y + h / 2 for _, y, _, h in GraphView(train).wait().layout["items"].values())
    assert lowest + 11 + 3 <= height - 10
