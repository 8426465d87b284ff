"""The scan rewrites (each a recorded step: pushout, merge, save_mem), the inner graph
rewritten by the outer mode, shape inference."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.monitormode import MonitorMode
from tensorgraph.scan import map, reduce, scan
from tensorgraph.scan.op import Scan
from tensorgraph.tensor.random.utils import RandomStream

from op_checks import check_infer_shape


def scan_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def step_names(f):
    return [s.name for s in f.maker.fgraph.rewrite_history.steps]


def inner_ops(node):
    return [type(n.op).__name__ for n in node.op.fgraph.toposort()]


def _rnn():
    x = tt.dmatrix("x")
    w = tt.dmatrix("w")
    h0 = tt.dvector("h0")
    h, _ = scan(lambda x_t, h, w: tt.tanh(tt.dot(h, w.T * 2) + x_t), sequences=x,
                outputs_info=h0, non_sequences=w, name="rnn")
    return x, w, h0, h


def test_pushout_moves_invariant_computation_out_of_the_loop():
    x, w, h0, h = _rnn()
    f = tensorgraph.function([x, h0, w], h)
    (node,) = scan_nodes(f)
    assert "scan_pushout" in step_names(f)
    # inside: the product and the tanh; w.T * 2 is computed once, outside
    assert inner_ops(node).count("DimShuffle") == 0
    outer_ops = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert "DimShuffle" in outer_ops or "Elemwise" in outer_ops
    rng = np.random.default_rng(0)
    xv, h0v, wv = rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(3, 3))
    reference = tensorgraph.function([x, h0, w], h, mode=tensorgraph.Mode("py", None))
    np.testing.assert_allclose(f(xv, h0v, wv), reference(xv, h0v, wv))


def test_pushout_drops_outputs_nobody_reads():
    x = tt.dvector("x")
    (a, b), _ = scan(lambda v: (v * 2, tt.exp(v)), sequences=x)
    f = tensorgraph.function([x], a)
    (node,) = scan_nodes(f)
    assert len(node.outputs) == 1
    assert "Elemwise" in inner_ops(node)
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_merge_loops_over_the_same_sequence():
    x = tt.dmatrix("x")
    h0 = tt.dvector("h0")
    sums, _ = scan(lambda row: row.sum(), sequences=x, name="rowsum")
    acc, _ = scan(lambda row, a: a + row, sequences=x, outputs_info=h0, name="acc")
    f = tensorgraph.function([x, h0], [sums, acc])
    (node,) = scan_nodes(f)
    assert node.op.name == "rowsum+acc"
    assert node.op.info.n_seqs == 1  # x is read once
    assert "scan_merge" in step_names(f)
    xv = np.arange(6.0).reshape(3, 2)
    s, a = f(xv, np.zeros(2))
    np.testing.assert_allclose(s, xv.sum(axis=1))
    np.testing.assert_allclose(a, np.cumsum(xv, axis=0))


def test_merge_leaves_dependent_loops_apart():
    x = tt.dvector("x")
    first, _ = scan(lambda v: v * 2, sequences=x)
    second, _ = scan(lambda v: v + 1, sequences=first)  # reads the first loop's result
    f = tensorgraph.function([x], second)
    assert len(scan_nodes(f)) == 2
    np.testing.assert_allclose(f(np.arange(3.0)), [1.0, 3.0, 5.0])


def test_merge_computes_equal_recurrences_once():
    x = tt.dvector("x")
    h0 = tt.dscalar("h0")
    a, _ = scan(lambda v, h: 0.5 * h + v, sequences=x, outputs_info=h0)
    b, _ = scan(lambda v, h: 0.5 * h + v, sequences=x, outputs_info=h0)
    f = tensorgraph.function([x, h0], [a, b * 2])
    (node,) = scan_nodes(f)
    assert node.op.info.n_states == 1
    out_a, out_b = f(np.ones(3), 0.0)
    np.testing.assert_allclose(out_b, 2 * out_a)


def test_gradient_through_draws_runs_one_forward_loop():
    # the gradient records the draws with a copy of the forward loop; merging runs the two
    # copies as one loop drawing once per step
    srng = RandomStream(seed=1)
    s = tt.dscalar("s")
    pos, updates = scan(lambda p, s: p + s * srng.normal(0.0, 1.0, dtype="float64"),
                        outputs_info=tt.constant(0.0, dtype="float64"), non_sequences=s,
                        n_steps=5, name="walk")
    g = tensorgraph.grad(pos.sum(), s)
    f = tensorgraph.function([s], [pos, g], updates=updates)
    forward = [n for n in scan_nodes(f) if not n.op.name.startswith("grad")]
    assert len(forward) == 1
    assert forward[0].op.info.n_shared == 1
    p, gv = f(3.0)
    assert gv == pytest.approx(p.sum() / 3.0)


def _scan_output_shapes(f_inputs, outputs, values, **kwargs):
    shapes = []

    def post(fgraph, i, node, thunk):
        if isinstance(node.op, Scan):
            shapes.append([np.shape(cell[0]) for cell in thunk.outputs])

    f = tensorgraph.function(f_inputs, outputs, mode=MonitorMode(post_func=post), **kwargs)
    result = f(*values)
    return f, shapes, result


def test_save_mem_keeps_only_the_last_step():
    x, w, h0, h = _rnn()
    rng = np.random.default_rng(1)
    values = (rng.normal(size=(50, 3)), rng.normal(size=3), rng.normal(size=(3, 3)))
    f, shapes, last = _scan_output_shapes([x, h0, w], h[-1], values)
    (node,) = scan_nodes(f)
    assert node.op.info.keep == (1,)
    assert "scan_save_mem" in step_names(f)
    assert shapes == [[(1, 3)]]  # the loop held one step, not 50
    full = tensorgraph.function([x, h0, w], h)(*values)
    np.testing.assert_allclose(last, full[-1])


def test_save_mem_keeps_the_last_k_steps_of_a_tap_minus_two_recurrence():
    init = tt.dvector("init")
    fib, _ = scan(lambda a, b: a + b, outputs_info=dict(initial=init, taps=[-2, -1]),
                  n_steps=30)
    f, shapes, (last, last3) = _scan_output_shapes([init], [fib[-1], fib[-3:]],
                                                   [np.array([0.0, 1.0])])
    assert scan_nodes(f)[0].op.info.keep == (3,)
    assert shapes == [[(3,)]]
    seq = [0.0, 1.0]
    for _ in range(30):
        seq.append(seq[-1] + seq[-2])
    assert last == seq[-1]
    np.testing.assert_allclose(last3, seq[-3:])


def test_reduce_keeps_one_step():
    x = tt.dvector("x")
    total, _ = reduce(lambda v, acc: acc * 0.5 + v, sequences=x,
                      outputs_info=tt.constant(0.0, dtype="float64"))
    f = tensorgraph.function([x], total)
    assert scan_nodes(f)[0].op.info.keep == (1,)
    expected = 0.0
    for v in range(10):
        expected = expected * 0.5 + v
    assert f(np.arange(10.0)) == expected


def test_reading_the_whole_output_keeps_every_step():
    x, w, h0, h = _rnn()
    f = tensorgraph.function([x, h0, w], [h[-1], h.sum()])
    assert scan_nodes(f)[0].op.info.keep is None


def test_until_loop_keeps_the_last_step():
    v0 = tt.dvector("v0")
    from tensorgraph.scan import until

    vs, _ = scan(lambda v: (v * 0.5, until(v.sum() < 0.01)), outputs_info=v0, n_steps=10 ** 6)
    f = tensorgraph.function([v0], vs[-1])
    assert scan_nodes(f)[0].op.info.keep == (1,)
    np.testing.assert_allclose(f(np.ones(2)), [2.0 ** -9] * 2)  # stops after step 8


def test_inner_graph_is_rewritten_with_the_outer_mode():
    x, w, h0, h = _rnn()
    fast = tensorgraph.function([x, h0, w], h, mode="FAST_RUN")
    cheap = tensorgraph.function([x, h0, w], h, mode="FAST_COMPILE")
    fast_inner = Scan.runner_of(scan_nodes(fast)[0]).function
    cheap_inner = Scan.runner_of(scan_nodes(cheap)[0]).function
    fast_ops = [type(n.op).__name__ for n in fast_inner.maker.fgraph.toposort()]
    cheap_ops = [type(n.op).__name__ for n in cheap_inner.maker.fgraph.toposort()]
    assert "Dot" in cheap_ops and "Dot" not in fast_ops  # BLAS in FAST_RUN
    assert len(fast_inner.maker.fgraph.rewrite_history) > 0
    assert fast_inner.maker.mode.linker_name == "cvm"
    assert getattr(fast_inner.vm, "whole_graph", False)  # the step's nodes are C kernels


def test_shape_of_a_scan_output_needs_no_loop():
    x, w, h0, h = _rnn()
    f = tensorgraph.function([x, h0, w], h.shape)
    assert not scan_nodes(f)
    np.testing.assert_array_equal(f(np.ones((7, 3)), np.ones(3), np.ones((3, 3))), [7, 3])
    m = tt.dmatrix("m")
    doubled, _ = map(lambda row: tt.concatenate([row, row]), sequences=m)
    g = tensorgraph.function([m], doubled.shape)
    assert not scan_nodes(g)
    np.testing.assert_array_equal(g(np.ones((4, 5))), [4, 10])


def test_empty_loop_gives_the_inferred_step_shape():
    m = tt.dmatrix("m")
    doubled, _ = map(lambda row: tt.concatenate([row, row]), sequences=m)
    f = tensorgraph.function([m], doubled)
    assert f(np.ones((0, 5))).shape == (0, 10)


@pytest.mark.parametrize("preset", ["fast_run", "fast_compile"])
def test_rewrites_are_in_both_presets(preset):
    x, w, h0, h = _rnn()
    f = tensorgraph.function([x, h0, w], h[-1], mode=tensorgraph.Mode("py", preset))
    names = step_names(f)
    assert "scan_pushout" in names and "scan_save_mem" in names


def test_rewrites_can_be_excluded_by_tag():
    x, w, h0, h = _rnn()
    f = tensorgraph.function([x, h0, w], h[-1], mode=tensorgraph.get_mode("FAST_RUN")
                             .excluding("scan"))
    assert not any(n.startswith("scan_") for n in step_names(f))
    assert scan_nodes(f)[0].op.info.keep is None


def test_infer_shape_of_every_output_kind():
    x = tt.dmatrix("x")
    init = tt.dmatrix("init")
    h0 = tt.dvector("h0")
    outs, _ = scan(lambda x_t, a, b, h: (a + b, h + x_t, tt.concatenate([x_t, x_t])),
                   sequences=x, outputs_info=[dict(initial=init, taps=[-2, -1]), h0, None])
    values = [np.ones((4, 3)), np.ones((2, 3)), np.zeros(3)]
    for out in outs:
        check_infer_shape(out, [x, init, h0], values)


# ----------------------------------------------------------------------------------------------
# values the inner graph's own rewrites make (Gemv's W.T and zero buffer) are computed outside


def invariant_inner_nodes(f):
    """Per scan of ``f``: the nodes of its compiled step computed from non-sequences and
    constants alone (each would run at every step for the same value)."""
    from tensorgraph.graph.basic import Constant

    found = []
    for node in scan_nodes(f):
        fg = Scan.runner_of(node).function.maker.fgraph
        invariant = set(fg.inputs[node.op.info.inner_non_seq_start:])
        nodes = []
        for n in fg.toposort():
            if all(isinstance(i, Constant) or i in invariant for i in n.inputs):
                invariant.update(n.outputs)
                nodes.append(n)
        found.append(nodes)
    return found


def _vector_rnn_train():
    """A tanh RNN on one vector state (dot(h, W): a Gemv in the step, built from W.T and a
    zero buffer of W.shape[1]) and its gradient (a Gemv over W with a zero buffer too)."""
    x, h0 = tt.dmatrix("x"), tt.dvector("h0")
    w = tensorgraph.shared(np.random.default_rng(0).normal(size=(4, 4)) * 0.5, name="w")
    h, _ = scan(lambda x_t, h: tt.tanh(tt.dot(h, w) + x_t), sequences=x, outputs_info=h0,
                name="rnn")
    cost = (h[-1] ** 2).sum()
    return x, h0, w, cost, tensorgraph.grad(cost, [w, h0])


def _numpy_vector_rnn_train(x, h0, w):
    hs = [h0]
    for x_t in x:
        hs.append(np.tanh(hs[-1] @ w + x_t))
    dh, gw = 2 * hs[-1], np.zeros_like(w)
    for t in range(len(x) - 1, -1, -1):
        da = dh * (1 - hs[t + 1] ** 2)
        gw += np.outer(hs[t], da)
        dh = w @ da
    return (hs[-1] ** 2).sum(), gw, dh


def test_invariants_made_by_the_inner_rewrites_are_computed_outside():
    x, h0, w, cost, grads = _vector_rnn_train()
    f = tensorgraph.function([x, h0], [cost] + grads, mode="FAST_RUN")
    assert len(scan_nodes(f)) == 2
    assert invariant_inner_nodes(f) == [[], []]
    # the steps still hold the Gemv products, now reading W.T and the buffer from outside
    inner = [[type(n.op).__name__ for n in Scan.runner_of(node).function.maker.fgraph.toposort()]
             for node in scan_nodes(f)]
    assert all("Gemv" in ops for ops in inner)
    assert not any("DimShuffle" in ops and "Alloc" in ops for ops in inner)
    xv = np.random.default_rng(1).normal(size=(7, 4))
    hv = np.random.default_rng(2).normal(size=4)
    for got, want in zip(f(xv, hv), _numpy_vector_rnn_train(xv, hv, w.get_value())):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_without_the_rewrite_those_invariants_stay_in_the_step():
    x, h0, w, cost, grads = _vector_rnn_train()
    mode = tensorgraph.compile.mode.get_mode("FAST_RUN").excluding("scan_pushout_rewritten")
    f = tensorgraph.function([x, h0], [cost] + grads, mode=mode)
    stayed = invariant_inner_nodes(f)
    assert all(stayed)  # W.T in the forward step, the Gemv's zero buffer in the backward one
    names = {type(n.op).__name__ for nodes in stayed for n in nodes}
    assert {"DimShuffle", "Alloc"} <= names
    xv, hv = np.ones((3, 4)) * 0.1, np.zeros(4)
    g = tensorgraph.function([x, h0], [cost] + grads, mode="FAST_RUN")
    for a, b in zip(f(xv, hv), g(xv, hv)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_the_step_keeps_its_graph_as_written_and_records_the_replacement():
    x, h0, w, cost, grads = _vector_rnn_train()
    f = tensorgraph.function([x, h0], cost, mode="FAST_RUN")
    (node,) = scan_nodes(f)
    assert "scan_pushout_rewritten" in step_names(f)
    # the loop's own graph is the step as written (a Dot); its compile makes the Gemv and then
    # reads the value computed outside (both recorded steps of the inner graph)
    assert "Dot" in inner_ops(node)
    inner_steps = [s.name for s in Scan.runner_of(node).function.maker.fgraph.rewrite_history]
    assert "scan_use_invariant_inputs" in inner_steps
    tagged = [v for v in node.op.fgraph.inputs if hasattr(v.tag, "scan_invariant")]
    assert tagged and all(not node.op.fgraph.clients.get(v) for v in tagged)


def test_a_function_with_the_moved_invariants_pickles_and_runs_in_threads():
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    x, h0, w, cost, grads = _vector_rnn_train()
    f = tensorgraph.function([x, h0], [cost] + grads, mode="FAST_RUN")
    g = pickle.loads(pickle.dumps(f))
    assert invariant_inner_nodes(g) == [[], []]
    rng = np.random.default_rng(3)
    args = [(rng.normal(size=(5, 4)), rng.normal(size=4)) for _ in range(8)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda a: g(*a), args))
    for a, got in zip(args, results):
        for r, want in zip(got, _numpy_vector_rnn_train(*a, w.get_value())):
            np.testing.assert_allclose(r, want, rtol=1e-10, atol=1e-12)
