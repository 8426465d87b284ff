"""A scan in the graph view (tensorgraph/notebook/graph_model.py, inner_graphs.py): one group
holding the scan node and its inner graph, closed until opened; the inner inputs marked as
sequences, recurrent states (with their taps) and non-sequences; edges from the outer inputs
into the inner inputs they feed and from the inner outputs to the node; inner ids prefixed
with the node's; a compiled function shows its step as compiled; OpFromGraph the same way;
the static picture too."""

import re

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.builders import OpFromGraph
from tensorgraph.graph.ids import graph_ids
from tensorgraph.notebook import GraphView
from tensorgraph.notebook.graph_model import graph_model
from tensorgraph.notebook.layout import visible_graph
from tensorgraph.scan import scan, until
from tensorgraph.scan.op import Scan


def rnn():
    x = tt.dmatrix("x")
    h0 = tt.dvector("h0")
    w = tg.shared(np.eye(3) * 0.5, name="w")
    h, _ = scan(lambda x_t, h_prev: tt.tanh(tt.dot(h_prev, w) + x_t), sequences=x,
                outputs_info=h0, name="rnn")
    return x, h0, w, h


def scan_id(model):
    return next(n["id"] for n in model.nodes if n.get("cls") == "Scan")


def by_role(model, prefix):
    return {n["op"]: n for n in model.nodes if n["id"].startswith(prefix) and "r" in n}


def test_a_scan_is_a_closed_group_holding_the_node_and_its_inner_graph():
    x, h0, w, h = rnn()
    model = graph_model((h[-1] ** 2).sum())
    sid = scan_id(model)
    group = next(g for g in model.groups if g.get("node") == sid)
    assert group["id"] == f"in:{sid}" and group["k"] == "loop" and group["parent"] is None
    assert group["label"] == f"Scan{{rnn}} [{sid}]" and "3 inner nodes" in group["note"]
    members = {n["id"] for n in model.nodes if n.get("g") == group["id"]}
    inner = {n["id"] for n in model.nodes if n["id"].startswith(sid + "/")}
    assert members == inner | {sid}
    # the inner ids are the inner graph's, as dprint prints it under "Inner graphs:"
    node = model.by_id[sid]
    inner_ids = graph_ids(node.op.fgraph)
    assert inner == {f"{sid}/{inner_ids[k]}" for k in inner_ids.order}
    assert all(model.by_id[f"{sid}/{inner_ids[k]}"] is k for k in inner_ids.order)
    # closed by default: one box saying what it holds; open: the node and the inner graph
    closed = visible_graph(model.payload(), [])
    box = closed["items"][f"G:{group['id']}"]
    assert box["lines"] == [f"Scan{{rnn}} [{sid}]", "loop of 3 inner nodes: open it"]
    assert not any(i.startswith(sid) for i in closed["items"])
    opened = visible_graph(model.payload(), [group["id"]])
    assert group["id"] in opened["frames"] and inner | {sid} <= set(opened["items"])


def test_inner_inputs_are_marked_by_role_and_fed_by_the_outer_inputs():
    x, h0, w, h = rnn()
    model = graph_model(h)
    sid = scan_id(model)
    ids = graph_ids(h)
    roles = by_role(model, sid + "/")
    assert {op: (n["r"], n.get("tap")) for op, n in roles.items()} == {
        "sequence x[t]": ("sequence", 0), "state h0[t-1]": ("state", -1),
        "non-sequence w": ("non-sequence", None)}
    edges = {(a, b) for a, b, _ in model.edges}
    assert (ids[x], roles["sequence x[t]"]["id"]) in edges
    assert (ids[h0], roles["state h0[t-1]"]["id"]) in edges
    assert (ids[w], roles["non-sequence w"]["id"]) in edges
    # the outer inputs go into the loop, not into the node; n_steps goes to the node
    into_node = {a for a, b, _ in model.edges if b == sid}
    assert not into_node & {ids[x], ids[h0], ids[w]}
    node = model.by_id[sid]
    assert ids[node.inputs[0]] in into_node
    # the inner output says what it becomes, and feeds the node
    tanh = next(n for n in model.nodes if n["id"].startswith(sid + "/") and "o" in n)
    assert tanh["o"] == ["state h0[t]"] and (tanh["id"], sid) in edges
    detail = model.detail(roles["state h0[t-1]"]["id"])
    assert "a recurrent state, its value 1 step back" in detail["role"]
    loop = model.detail(sid)["loop"]
    assert loop["sequences"] == ["x [t]"] and loop["states"] == ["h0 [t-1]"]
    assert loop["non-sequences"] == ["w"]


def test_taps_each_have_their_placeholder_fed_by_the_same_outer_value():
    seq = tt.dvector("seq")
    f0 = tt.dvector("f0")
    fib, _ = scan(lambda s_prev, s_now, a, b: a + b + s_prev * s_now,
                  sequences=dict(input=seq, taps=[-1, 0]),
                  outputs_info=dict(initial=f0, taps=[-2, -1]), name="fib")
    model = graph_model(fib)
    sid = scan_id(model)
    roles = by_role(model, sid + "/")
    assert {n["tap"] for n in roles.values() if n["r"] == "state"} == {-2, -1}
    assert {n["tap"] for n in roles.values() if n["r"] == "sequence"} == {-1, 0}
    ids = graph_ids(fib)
    fed = {b for a, b, _ in model.edges if a == ids[f0]}
    assert fed == {n["id"] for n in roles.values() if n["r"] == "state"}
    # closed, the two edges from f0 into the loop are one edge drawn thicker
    closed = visible_graph(model.payload(), [])
    assert [e[2] for e in closed["edges"] if e[0] == ids[f0]] == [2]


def test_a_compiled_function_shows_the_step_as_compiled_with_its_c_nodes():
    x, h0, w, h = rnn()
    f = tg.function([x, h0], (h[-1] ** 2).sum(), mode="FAST_RUN")
    model = graph_model(f)
    sid = scan_id(model)
    node = model.by_id[sid]
    step = Scan.runner_of(node).function
    step_ids = graph_ids(step)
    inner = [n for n in model.nodes if n["id"].startswith(sid + "/")]
    assert {n["id"] for n in inner} == {f"{sid}/{step_ids[k]}" for k in step_ids.order}
    assert {n["cls"] for n in inner if n["k"] == "apply"} >= {"Gemv"}  # rewritten
    assert all(n["c"] == "C" for n in inner if n["k"] == "apply")
    detail = model.detail(sid)
    # the panel's inner tree is the drawn graph: its ids are the group's without the prefix
    printed = set(re.findall(r"\[id ([A-Z]+)\]", "\n".join(detail["inner"])))
    assert {f"{sid}/{i}" for i in printed} == {n["id"] for n in inner}
    assert "inner nodes run C" in detail["why_python"]
    gemv = next(n["id"] for n in inner if n["cls"] == "Gemv")
    assert all(i["id"].startswith(sid + "/") for i in model.detail(gemv)["inputs"])
    # dprint of the function prints the step as compiled, with the ids the view draws
    text = tg.printing.debugprint(f, file="str")
    compiled = text.split("Inner graphs:")[1]
    assert f"Scan{{rnn, keep=[1]}} [id {sid}] (as compiled)" in compiled
    assert f"Gemv [id {gemv.split('/')[1]}]" in compiled
    # the graph as built still prints the inner graph as built
    assert "(as compiled)" not in tg.printing.debugprint(h, file="str")


def test_a_while_loop_output_says_until_and_nested_loops_nest_their_groups():
    v0 = tt.dvector("v0")
    halves, _ = scan(lambda v: (v / 2, until(v.sum() < 1e-3)), outputs_info=v0, n_steps=100)
    model = graph_model(halves)
    sid = scan_id(model)
    labels = [o for n in model.nodes if n["id"].startswith(sid + "/") for o in n.get("o", ())]
    assert "until (stops the loop)" in labels and model.detail(sid)["loop"]["steps"].startswith(
        "while loop")

    x = tt.dmatrix("x")
    sums, _ = scan(lambda row: scan(lambda e, acc: acc + e, sequences=row,
                                    outputs_info=tt.constant(0.0), name="inner")[0][-1],
                   sequences=x, name="outer")
    model = graph_model(sums)
    outer = scan_id(model)
    inner_scan = next(n["id"] for n in model.nodes
                      if n.get("cls") == "Scan" and n["id"].startswith(outer + "/"))
    group = next(g for g in model.groups if g.get("node") == inner_scan)
    assert group["parent"] == f"in:{outer}"
    assert any(n["id"].startswith(inner_scan + "/") and n.get("r") == "state"
               for n in model.nodes)
    assert model.group_path(inner_scan + "/A") == [f"in:{outer}", f"in:{inner_scan}"]


def test_an_op_from_graph_opens_the_same_way():
    a, b = tt.dvector("a"), tt.dvector("b")
    op = OpFromGraph([a, b], [a * b + 1], name="fma")
    u, v = tt.dvector("u"), tt.dvector("v")
    out = op(u, v) * 2
    model = graph_model(out)
    node_id = next(n["id"] for n in model.nodes if n.get("cls") == "OpFromGraph")
    group = next(g for g in model.groups if g.get("node") == node_id)
    assert group["k"] == "inner" and "inner graph" in group["note"]
    roles = by_role(model, node_id + "/")
    assert set(roles) == {"input 0: a", "input 1: b"}
    ids = graph_ids(out)
    edges = {(x, y) for x, y, _ in model.edges}
    assert (ids[u], roles["input 0: a"]["id"]) in edges
    assert (ids[v], roles["input 1: b"]["id"]) in edges


def test_the_widget_opens_the_loop_on_selection_and_draws_it_statically():
    x, h0, w, h = rnn()
    view = GraphView(h).wait()
    sid = scan_id(view.model)
    gid = f"in:{sid}"
    svg = view.to_svg()
    assert "loop of 3 inner nodes: open it" in svg and "#8e44ad" in svg  # the loop's box
    view.select(f"{sid.lower()}/a")  # ids as typed
    assert view.selected == f"{sid}/A" and view.expanded == [gid]
    view.wait()
    assert f"{sid}/A" in view.layout["items"] and gid in view.layout["frames"]
    svg = view.to_svg()
    assert "state h0[t-1]" in svg and "#efe3f4" in svg  # a state's fill
    assert "Scan{rnn} [" in svg  # the frame's label
    view.collapse(gid)
    assert view.expanded == []
    assert view.model.resolve(view.model.by_id[f"{sid}/A"]) == f"{sid}/A"


def test_an_unnamed_state_has_one_name_where_it_enters_and_leaves_the_step():
    # the initial value has no name: scan calls the state "output 0" ("output 0[t-1]" in
    # dprint), and the view's output label and loop summary say the same, not a made-up name
    from tensorgraph.notebook.inner_graphs import input_roles, loop_summary, output_roles

    x = tt.dmatrix("x")
    h, _ = scan(lambda x_t, h_prev: [h_prev + x_t, x_t * 2], sequences=x,
                outputs_info=[tt.zeros((3,)), None], name="acc")
    node = h[0].owner if isinstance(h, list) else h.owner
    fgraph = node.op.fgraph
    states = [text for role, text, _ in input_roles(node, fgraph) if role == "state"]
    assert states == ["state output 0[t-1]"]
    assert output_roles(node, fgraph) == ["state output 0[t]", "output 1[t]"]
    summary = loop_summary(node)
    assert summary["states"] == ["output 0 [t-1]"]
    assert summary["outputs not fed back"] == ["output 1"]


def test_a_closed_loop_box_takes_the_heat_of_its_scan_node():
    # a profile's heat map keys the scan node; closed, the loop's box stands for it and must
    # carry its colour (else the costliest node of an RNN drew uncoloured)
    from tensorgraph.notebook.static_svg import _hex, heat_rgb

    x, h0, w, h = rnn()
    view = GraphView(h).wait()
    sid = scan_id(view.model)
    others = [n["id"] for n in view.model.nodes if n["id"] != sid and "/" not in n["id"]]
    view.overlay = {"title": "% time", "values": {sid: 90.0, **{o: 1.0 for o in others}}}
    svg = view.to_svg()
    box = re.search(rf'<g id="G:in:{sid}"><rect [^>]*fill="([^"]+)"', svg)
    assert box is not None and box.group(1) == _hex(heat_rgb(1.0))
