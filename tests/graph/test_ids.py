"""One node id scheme: the id dprint prints is the one graph pictures, profiles and errors use,
stable for a compiled function, recomputed when a graph changes."""

import re

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.ids import graph_ids, id_letters
from tensorgraph.printing import pydotprint, to_graphviz


def seed():
    x, y = tt.dmatrix("x"), tt.dvector("y")
    w = tg.shared(np.zeros(5), name="w")
    b = tg.shared(0.0, name="b")
    p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
    xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = tg.grad(cost, [w, b])
    train = tg.function([x, y], [p_1 > 0.5, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    return cost, train


def printed_ids(text):
    """{id: the text of the first line that prints it}"""
    found = {}
    for line in text.splitlines():
        match = re.search(r"\[id ([A-Z]+)\]", line)
        if match and match.group(1) not in found:
            found[match.group(1)] = line
    return found


@pytest.mark.parametrize("which", ["graph", "function"])
def test_every_printed_id_names_the_same_node(which):
    cost, train = seed()
    obj = cost if which == "graph" else train
    ids = graph_ids(obj)
    printed = printed_ids(tg.dprint(obj, file="str"))
    assert set(printed) == {ids[key] for key in ids.order}
    for key in ids.order:
        label = str(key.op) if hasattr(key, "op") else None
        if label is not None:
            assert label in printed[ids[key]]
        assert ids.find(ids[key]) is key


def test_ids_are_stable_for_a_function_and_follow_changes_of_a_graph():
    from tensorgraph.graph import FunctionGraph

    _, train = seed()
    first = graph_ids(train)
    assert graph_ids(train) is first  # cached
    assert tg.dprint(train, file="str") == tg.dprint(train, file="str")
    x = tt.dvector("x")
    fgraph = FunctionGraph([x], [tt.exp(x) + 1], clone=False)
    before = graph_ids(fgraph)
    assert len(before) == len(printed_ids(tg.dprint(fgraph, file="str")))
    fgraph.replace(fgraph.outputs[0], tt.log(x))
    after = graph_ids(fgraph)
    assert after is not before and len(after) == 2
    assert after[fgraph.outputs[0]] == "A" and after[x] == "B"


def test_id_letters_count_like_dprint():
    assert [id_letters(n) for n in (0, 25, 26, 27, 26 * 26)] == ["A", "Z", "BA", "BB", "BAA"]


def test_to_graphviz_names_nodes_by_their_ids_and_marks_outputs_and_updates():
    cost, train = seed()
    ids = graph_ids(train)
    source = to_graphviz(train).source
    for key in ids.order:
        assert re.search(rf"^\s*{ids[key]} \[label=", source, re.M)
    assert "update of w" in source and "update of b" in source and "out 0" in source
    assert "float64 (?,)" in source  # intermediate values' types on edges


def test_pydotprint_writes_a_picture_with_the_ids(tmp_path):
    cost, _ = seed()
    path = pydotprint(cost, outfile=str(tmp_path / "cost.svg"), format="svg")
    svg = (tmp_path / "cost.svg").read_text()
    assert path.endswith("cost.svg") and "<svg" in svg
    assert f"<title>{graph_ids(cost)[cost]}</title>" in svg


def test_pydotprint_pytensor_options(tmp_path, capsys, monkeypatch):
    cost, _ = seed()
    data = pydotprint(cost, format="svg", return_image=True)
    assert isinstance(data, bytes) and b"<svg" in data
    monkeypatch.chdir(tmp_path)
    path = pydotprint(cost, format="svg")
    assert f"The output file is available at {path}" in capsys.readouterr().out
    pydotprint(cost, format="svg", print_output_file=False)
    assert capsys.readouterr().out == ""
    short = to_graphviz(cost, max_label_size=5).source
    full = to_graphviz(cost).source
    assert "..." in short and short.count("->") == full.count("->")
