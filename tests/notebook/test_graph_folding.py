"""Constants inside their consumer, shape plumbing folded (issue 36), on the payload: the
share of constants and plumbing among the boxes of the default view, each toggle restoring
the full graph, ids and search unchanged, a selected or marked folded node drawn."""

import numpy as np
import pytest

import tensorgraph.tensor as tt
from readable_graphs import all_graphs, opened, seed_graphs
from tensorgraph.notebook import GraphView
from tensorgraph.notebook.folding import fold_plan, plumbing_share
from tensorgraph.notebook.graph_model import graph_model
from tensorgraph.notebook.layout import visible_graph

GRAPHS = all_graphs()


@pytest.fixture(scope="module")
def payloads():
    return {title: graph_model(obj).payload() for title, obj in GRAPHS.items()}


@pytest.mark.parametrize("title", list(GRAPHS))
def test_constants_and_plumbing_are_at_most_a_tenth_of_the_default_view(payloads, title):
    payload = payloads[title]
    before = plumbing_share(visible_graph(payload, opened(payload)))
    after = plumbing_share(visible_graph(payload, opened(payload), {}))
    assert before["share"] > 0.1  # the complaint, on this graph
    assert after["share"] <= 0.1, after
    assert after["boxes"] < before["boxes"]


@pytest.mark.parametrize("title", list(GRAPHS))
def test_each_toggle_brings_its_boxes_back_and_both_the_full_graph(payloads, title):
    payload = payloads[title]
    groups = opened(payload)
    full = visible_graph(payload, groups)
    nodes = {n["id"]: n for n in payload["nodes"]}

    def drawn(**fold):
        return visible_graph(payload, groups, fold)

    constants_shown = drawn(constants=False)
    assert not any(nodes[i]["k"] == "constant" for i in constants_shown["hidden"])
    shape_shown = drawn(shape_code=True)
    assert not any(nodes[i].get("p") in ("shape", "pass") for i in shape_shown["hidden"])
    both = drawn(shape_code=True, constants=False)
    assert list(both["items"]) == list(full["items"])
    assert both["edges"] == full["edges"]
    assert both["hidden"] == {}


def test_a_folded_node_says_where_it_went_and_its_edges_follow():
    payload = graph_model(seed_graphs(20)["seed train (compiled)"]).payload()
    nodes = {n["id"]: n for n in payload["nodes"]}
    plan = fold_plan(payload)
    shown = visible_graph(payload, [], {})
    # every folded node is named on a box it folded into, and ids are dprint's
    named = {i for item in shown["items"].values() for _k, _t, ids in item.get("extra", ())
             for i in ids}
    assert set(plan["hidden"]) <= named
    assert set(shown["items"]) | set(plan["hidden"]) == set(nodes)
    # a DimShuffle adding an axis to b: b's edge now goes to what the DimShuffle fed
    dims = [i for i in plan["hidden"] if nodes[i].get("cls") == "DimShuffle"]
    assert dims
    for d in dims:
        sources = [a for a, b, _ in payload["edges"] if b == d]
        for host in plan["hosts"][d]:
            assert all([s, host] in [e[:2] for e in plan["edges"]] for s in sources
                       if s not in plan["hidden"])
    # a small constant is a port of its reader, in words: "× [0.02]"
    lines = [line for item in shown["items"].values() for line in item["lines"][2:]]
    assert any(line.startswith("× ") for line in lines)
    assert any(line.startswith("shape: Alloc(0.0)") for line in lines)


def test_a_large_constant_is_a_chip_naming_it():
    import numpy as np

    x = tt.dmatrix("x")
    big = tt.constant(np.arange(12.0).reshape(3, 4))
    payload = graph_model(x + big).payload()
    shown = visible_graph(payload, [], {})
    const = next(n for n in payload["nodes"] if n["k"] == "constant")
    assert const["p"] == "C"
    (item,) = [i for i in shown["items"].values() if i["k"] == "apply"]
    assert item["extra"][0][1] == f"+ ▪{const['id']} float64 (3, 4)"


def test_a_selected_highlighted_or_marked_folded_node_is_drawn():
    view = GraphView(seed_graphs(20)["seed train (compiled)"]).wait()
    alloc = next(n["id"] for n in view.graph["nodes"] if n.get("cls") == "Alloc")
    assert alloc not in view.layout["items"]
    view.select(alloc)
    assert view.unfolded == [alloc]
    assert alloc in view.wait().layout["items"]
    view.select(None)
    assert alloc not in view.wait().layout["items"]
    view.marks = {alloc: "nonfinite"}  # the stepper found a NaN there
    assert alloc in view.wait().layout["items"]
    view.marks = {alloc: "done"}
    assert alloc not in view.wait().layout["items"]
    view.highlight([alloc])
    assert alloc in view.wait().layout["items"]
    assert alloc in view.model.search(alloc)  # search finds it by id, as dprint prints it


def test_the_toggles_are_traits_and_a_method():
    view = GraphView(seed_graphs(20)["seed train (compiled)"]).wait()
    folded = len(view.layout["items"])
    view.set_folding(shape_code=True)
    assert view.show_shape_code and len(view.wait().layout["items"]) > folded
    view.set_folding(constants=False)
    assert len(view.wait().layout["items"]) == len(view.graph["nodes"])
    view.set_folding(shape_code=False, constants=True)
    assert len(view.wait().layout["items"]) == folded
    svg = view.to_svg()
    assert "× [0.02]" in svg and "shape: " in svg  # the static picture folds the same


def test_a_graph_is_grouped_by_its_math_not_its_plumbing():
    # 60 additions of a broadcast row: 120 op nodes, of which 60 DimShuffles add an axis
    x = tt.dmatrix("x")
    out = x
    for k in range(60):
        out = out + tt.dvector(f"v{k}")
    model = graph_model(out)
    assert model.count_apply() == 120 and model.count_apply(math_only=True) == 60
    assert model.groups == []  # drawn flat: 60 boxes of math plus its inputs


def test_every_folded_node_has_a_drawn_host_and_outputs_never_fold():
    x = tt.dmatrix("x")
    # a shape as an output, and size arithmetic feeding only an Alloc
    n = x.shape[0] * 2
    outs = [x.shape[1], tt.alloc(np.float64(1.0), n, 3) + x.sum()]
    payload = graph_model(outs).payload()
    plan = fold_plan(payload)
    nodes = {e["id"]: e for e in payload["nodes"]}
    assert all(plan["hosts"][h] for h in plan["hidden"])
    assert not any(nodes[h].get("o") for h in plan["hidden"])
    assert any(nodes[h]["k"] == "apply" and not nodes[h].get("p") for h in plan["hidden"])


def test_selecting_a_constant_in_a_rewrite_step_keeps_the_steps_shared_layout():
    """The compile report draws each step at its places in the union of all steps (every
    node, nothing folded): selecting a constant there must not lay the step out anew."""
    from tensorgraph.notebook.compile_report import report

    rep = report(seed_graphs(20)["seed train (compiled)"])
    rep.show_step(3)
    view = rep.view.wait()
    assert view.layout["engine"] == "dot (union of the steps)"
    const = next(n["id"] for n in view.graph["nodes"]
                 if n["k"] == "constant" and n["id"] in view.layout["items"])
    assert view.layout["fixed"]  # the browser hides the folding buttons
    view.select(const)
    assert view.wait().layout["engine"] == "dot (union of the steps)"
