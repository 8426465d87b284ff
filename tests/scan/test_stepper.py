"""Stepping into a scan (tensorgraph/compile/stepper.py, ScanVisit; the widget in
tensorgraph/notebook/stepper_view.py): ``step`` on a scan node enters the compiled step, one
inner node at a time, iteration after iteration; ``run_to_iteration(k)``; ``values_at(id, k)``
equals a numpy loop's value; ``run_until_nonfinite`` names the iteration and the inner node
(an exploding RNN); ``step_over``; the results equal a plain call; ids are the graph view's."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.notebook import Stepper as StepperWidget
from tensorgraph.scan import scan, until

X = np.arange(15.0).reshape(5, 3) / 10


def rnn(scale=0.5, mode="FAST_RUN"):
    x, h0 = tt.dmatrix("x"), tt.dvector("h0")
    w = tg.shared(np.eye(3) * scale, name="w")
    h, _ = scan(lambda x_t, h_prev: tt.tanh(tt.dot(h_prev, w) + x_t), sequences=x,
                outputs_info=h0, name="rnn")
    return tg.function([x, h0], [(h[-1] ** 2).sum(), h], mode=mode)


def numpy_rnn(scale=0.5, h=np.ones(3)):
    out = []
    for x_t in X:
        h = np.tanh(h @ (np.eye(3) * scale) + x_t)
        out.append(h)
    return np.array(out)


def scan_id(f):
    return next(tg.graph.ids.graph_ids(f)[n]
                for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "Scan")


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_step_enters_the_loop_and_the_results_equal_a_call(mode):
    f = rnn(mode=mode)
    expected = f(X, np.ones(3))
    run = f.stepper(X, np.ones(3))
    sid = scan_id(f)
    while run.scan is None:
        run.step()
    # entered: the first inner node has run, the scan node has not
    assert run.iteration == 0 and run.current_id.startswith(sid + "/")
    assert run.scan.inner.position == 1 and run.scan.node not in run.times
    assert "iteration 0 of Scan{rnn" in repr(run)
    inner_ids = {f"{sid}/{run.scan.inner.ids[n]}" for n in run.scan.function.maker.fgraph.apply_nodes}
    assert run.current_id in inner_ids
    out = run.finish()
    np.testing.assert_allclose(out[0], expected[0])
    np.testing.assert_allclose(out[1], expected[1])
    np.testing.assert_allclose(out[1], numpy_rnn())
    (visit,) = run.visits.values()
    assert visit.loop.t == 5 and sorted(visit.steppers) == [0, 1, 2, 3, 4]
    assert set(visit.runs.values()) == {5}


def test_run_to_iteration_and_the_values_of_an_inner_variable_at_iteration_k():
    f = rnn()
    sid = scan_id(f)
    run = f.stepper(X, np.ones(3))
    run.run_to_iteration(3)  # runs the nodes before the loop, then iterations 0-2
    assert run.iteration == 3 and run.scan.inner.position == 0
    tanh = next(n for n in run.scan.function.maker.fgraph.outputs).owner
    tanh_id = f"{sid}/{run.scan.inner.ids[tanh]}"
    expected = numpy_rnn()
    for k in range(3):
        np.testing.assert_allclose(run.values_at(tanh_id, k), expected[k])
    with pytest.raises(KeyError, match="iteration 4 .* has not been stepped through"):
        run.values_at(tanh_id, 4)
    with pytest.raises(ValueError, match="is in iteration 3 already"):
        run.run_to_iteration(2)
    with pytest.raises(ValueError, match="runs at most 5 iterations"):
        run.run_to_iteration(9)
    run.run_to(tanh_id)  # the rest of iteration 3
    np.testing.assert_allclose(run.values[tanh_id], expected[3])
    run.run_to_iteration(5)  # the end of the loop: it is left
    assert run.scan is None and run.iteration is None
    np.testing.assert_allclose(run.finish()[1], expected)


def test_run_until_nonfinite_names_the_iteration_and_the_inner_node():
    x, h0 = tt.dmatrix("x"), tt.dvector("h0")
    w = tg.shared(np.eye(3) * 50, name="w")
    h, _ = scan(lambda x_t, h_prev: tt.exp(tt.dot(h_prev, w)) + x_t, sequences=x,
                outputs_info=h0, name="boom")
    f = tg.function([x, h0], h.sum())
    sid = scan_id(f)
    run = f.stepper(X, np.full(3, 0.01))
    with np.errstate(over="ignore"):
        found = run.run_until_nonfinite()
    # h1 = exp(50 * h0) ~ 1.6 + x, h2 = exp(~90) finite, h3 = exp(~5000) = inf: iteration 2
    h_ = np.full(3, 0.01)
    with np.errstate(over="ignore"):
        for t, x_t in enumerate(X):
            h_ = np.exp(h_ @ (np.eye(3) * 50)) + x_t
            if not np.isfinite(h_).all():
                break
    assert found.iteration == t == 2 and found.scan_id == sid
    assert found.node_id.startswith(sid + "/") and found.inf == 3
    assert f"in iteration 2 of Scan{{boom}} [id {sid}]" in str(found)
    assert "tt.exp(tt.dot(h_prev, w))" in found.line
    assert found.node_id.split("/")[1] in tg.printing.debugprint(f, file="str").split(
        "Inner graphs:")[1]
    assert run.step_over() is not None and run.scan is None  # the rest of the loop


def test_a_while_loop_and_step_over():
    v0 = tt.dvector("v0")
    halves, _ = scan(lambda v: (v / 2, until(v.sum() < 1.0)), outputs_info=v0, n_steps=50)
    f = tg.function([v0], halves)
    expected = f(np.full(2, 8.0))
    run = f.stepper(np.full(2, 8.0))
    with pytest.raises(ValueError, match="stopped after iteration"):
        run.run_to_iteration(20)
    assert run.scan is None
    np.testing.assert_allclose(run.finish(), expected)
    run = f.stepper(np.full(2, 8.0))
    while not run._is_scan(run._next):
        run.step()
    scan_node = run.current
    assert run.step_over() is scan_node and not run.visits  # run whole, not entered
    np.testing.assert_allclose(run.finish(), expected)


def test_the_widget_steps_into_the_loop_with_synced_traits():
    f = rnn()
    sid = scan_id(f)
    st = StepperWidget(f, X, np.ones(3))
    st.run_to_iteration(2)
    assert st.iteration == 2 and st.current.startswith(sid + "/")
    assert st.view.marks[st.current] == "current" and f"in:{sid}" in st.view.expanded
    assert "iteration 2</b> of <code>Scan{rnn" in st.status
    st.step()
    assert st.view.marks.get(st.current) == "current"
    assert any(k.startswith(sid + "/") and v == "done" for k, v in st.view.marks.items())
    tanh = st.run.scan.function.maker.fgraph.outputs[0].owner
    tanh_id = f"{sid}/{st.run.scan.inner.ids[tanh]}"
    np.testing.assert_allclose(st.values_at(tanh_id, 1), numpy_rnn()[1])
    st.view.select(tanh_id)
    assert f"[{tanh_id}]" in st._panel.value and "iteration 1" in st._panel.value
    st.step_over()
    assert st.iteration == -1 and "/" not in st.current
    st.finish()
    assert st.current == ""
