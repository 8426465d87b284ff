"""The compile report of a function holding a scan (tensorgraph/notebook/compile_report.py):
the rewrite steps of the scan's inner graph (its step compiled with the function's mode)
follow the function's own, labelled with the scan's id, and showing one draws that inner
graph at that step."""

import html

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.ids import graph_ids
from tensorgraph.notebook.compile_report import CompileReport
from tensorgraph.scan import scan


def test_the_inner_graphs_rewrite_steps_are_listed_and_shown():
    x, h0 = tt.dmatrix("x"), tt.dvector("h0")
    w = tg.shared(np.eye(3) * 0.5, name="w")
    h, _ = scan(lambda x_t, h_prev: tt.tanh(tt.dot(h_prev, w) + x_t), sequences=x,
                outputs_info=h0, name="rnn")
    f = tg.function([x, h0], (h[-1] ** 2).sum(), mode="FAST_RUN")
    node = next(n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "Scan")
    sid = graph_ids(f)[node]
    inner_history = node.tag.scan_runner.function.maker.fgraph.rewrite_history
    outer_history = f.maker.fgraph.rewrite_history
    assert len(inner_history) > 0
    rep = CompileReport(f)
    assert len(rep.steps) == len(outer_history) + len(inner_history)
    # the summary counts them apart from the function's own (the record's count)
    assert rep.loop_steps == len(inner_history)
    assert f"and {len(inner_history)} in its loops' inner graphs" in html.unescape(rep._summary.value)
    plain = rep._repr_mimebundle_()
    plain = (plain[0] if isinstance(plain, tuple) else plain)["text/plain"]
    assert f"and {len(inner_history)} rewrite steps in its loops' inner graphs" in plain
    first_inner = len(outer_history)
    assert rep.step_scope(first_inner) == sid and rep.step_scope(0) == ""
    labels = [label for label, _ in rep._list.options]
    assert sum(f"(loop {sid})" in label for label in labels) == len(inner_history)
    rep._filter.value = f"loop {sid}"  # the list filters by loop too
    assert [v for _, v in rep._list.options] == list(range(first_inner, len(rep.steps)))
    # the step that made the Gemv of the inner graph (Dot -> Gemv), shown: the inner graph
    gemv_step = next(k for k in range(first_inner, len(rep.steps))
                     if any(type(r.node.op).__name__ == "Gemv" for r in rep.steps[k].added))
    rep.show_step(gemv_step)
    assert rep.mode == "steps" and rep._slider.value == gemv_step
    assert rep.view.graph["title"].startswith(f"inner graph of loop {sid}, after step")
    assert "Gemv" in {n.get("cls") for n in rep.view.graph["nodes"]}
    assert "added" in rep.view.marks.values()
    assert f"loop <code>{sid}</code>" in rep._step_info.value
    rep.show_step(gemv_step, before=True)
    assert "Gemv" not in {n.get("cls") for n in rep.view.graph["nodes"]}
    rep.show_step(0)  # the function's own steps still show its graph
    assert not rep.view.graph["title"].startswith("inner graph")


def test_a_step_from_the_cache_of_rewritten_graphs_still_shows_its_steps():
    # the second compile of the same graph in a process takes the rewritten inner graph from
    # the cache, which keeps no history: the report rewrites it again, recording the steps
    def compiled():
        x, h0 = tt.dmatrix("x"), tt.dvector("h0")
        w = tg.shared(np.eye(3) * 0.5, name="w")
        h, _ = scan(lambda x_t, h_prev: tt.tanh(tt.dot(h_prev, w) + x_t), sequences=x,
                    outputs_info=h0, name="again")
        return tg.function([x, h0], h.sum(), mode="FAST_RUN")

    counts = []
    with tg.config.change_flags(cache_rewritten_graphs=True):
        for _ in range(2):
            rep = CompileReport(compiled())
            counts.append(sum(1 for k in range(len(rep.steps)) if rep.step_scope(k)))
    assert counts[0] > 0 and counts[1] == counts[0]
