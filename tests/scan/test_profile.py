"""A scan in the profile (tensorgraph/compile/profiling.py, the profile view): the inner
nodes' time summed over every iteration (calls = iterations; ids D/B as dprint and the graph
view name them), the scan row's iterations, inner time and the loop's own overhead; inner
rows kept out of the totals; in FAST_RUN (timed in C, the loop in C) and FAST_COMPILE
(hooks)."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.ids import graph_ids
from tensorgraph.notebook.profile_view import ProfileView
from tensorgraph.scan import scan


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_inner_nodes_are_timed_over_the_iterations(mode):
    x, h0 = tt.dmatrix("x"), tt.dvector("h0")
    w = tg.shared(np.eye(4) * 0.5, name="w")
    h, _ = scan(lambda x_t, h_prev: tt.tanh(tt.dot(h_prev, w) + x_t), sequences=x,
                outputs_info=h0, name="rnn")
    f = tg.function([x, h0], (h[-1] ** 2).sum(), mode=mode, profile=True)
    for n in (7, 7, 3):
        f(np.ones((n, 4)), np.ones(4))
    rows = f.profile.as_records()
    (scan_row,) = [r for r in rows if "iterations" in r]
    node = next(n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "Scan")
    sid = graph_ids(f)[node]
    assert scan_row["node_id"] == sid and scan_row["calls"] == 3
    assert scan_row["iterations"] == 17
    inner = [r for r in rows if r.get("inside") == sid]
    step = node.tag.scan_runner.function
    assert {r["node_id"] for r in inner} == {f"{sid}/{graph_ids(step)[n]}"
                                            for n in step.maker.fgraph.apply_nodes}
    assert all(r["calls"] == 17 for r in inner)
    assert all(r["seconds"] > 0 for r in inner)
    inner_seconds = sum(r["seconds"] for r in inner)
    assert scan_row["inner_seconds"] == pytest.approx(inner_seconds)
    assert scan_row["loop_overhead"] == pytest.approx(scan_row["seconds"] - inner_seconds)
    assert scan_row["loop_overhead"] > 0
    # the totals count the inner nodes once: in the scan's time
    outer = sum(r["seconds"] for r in rows if "inside" not in r)
    assert f.profile.node_time == pytest.approx(outer)
    text = f.profile.summary_text()
    assert f"Loop {sid} Scan{{rnn" in text and "17 iterations in 3 calls" in text
    assert "the loop's own overhead" in text
    if mode == "FAST_RUN":  # the scan node has no C, but its step is C: no fallback tip
        assert "fell back to Python perform" not in text
    # the view: the inner rows under the scan, cumulative % over the outer rows only
    view = ProfileView(f.profile)
    shown = view.rows()
    assert {r["node_id"] for r in inner} <= {r["node_id"] for r in shown}
    assert "in loop " + sid in view._table.value and "loop overhead" in view._table.value
    assert set(view.heat()) >= {r["node_id"] for r in inner}
    assert set(view.view.overlay["values"]) >= {r["node_id"] for r in inner}
    view.grouping = "op_class"
    assert sum(r["percent"] for r in view.rows()) == pytest.approx(100.0)


def test_ignore_first_call_leaves_the_first_calls_iterations_out():
    x = tt.dvector("x")
    s, _ = scan(lambda v, acc: tt.tanh(acc * v), sequences=x, outputs_info=tt.constant(0.5))
    f = tg.function([x], s[-1], profile=True)
    f.profile.ignore_next_call()
    f(np.ones(10))
    f(np.ones(4))
    (scan_row,) = [r for r in f.profile.as_records() if "iterations" in r]
    assert scan_row["iterations"] == 4
    assert all(r["calls"] == 4 for r in f.profile.as_records() if "inside" in r)
