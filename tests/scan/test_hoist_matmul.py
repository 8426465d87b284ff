"""Products taken out of loops (tensorgraph/scan/hoist_matmul.py): a sequence's rows times a
weight become one product before the loop, accumulated products (a weight's gradient in
back-propagation through time) one product after it; same values as the loops they replace."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import get_mode
from tensorgraph.scan import reduce, scan
from tensorgraph.scan.op import Scan
from tensorgraph.tensor.dot import Dot

BATCHING = ["scan_pushout_seq_dots", "scan_pushout_add"]


def _scans(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def _inner_dots(node):
    return [n for n in node.op.fgraph.apply_nodes if isinstance(n.op, Dot)]


def _both(inputs, outputs, args, **kwargs):
    """(values with the rewrites, values without them, the function with them)."""
    f = tensorgraph.function(inputs, outputs, mode="FAST_RUN", **kwargs)
    g = tensorgraph.function(inputs, outputs,
                             mode=get_mode("FAST_RUN").excluding(*BATCHING), **kwargs)
    return f(*args), g(*args), f


def _rnn(taps=None, go_backwards=False, truncate=-1):
    rng = np.random.default_rng(0)
    x, h0 = tt.dtensor3("x"), tt.dmatrix("h0")
    w_x = tensorgraph.shared(rng.normal(size=(3, 4)) * 0.5, name="W_x")
    w_h = tensorgraph.shared(rng.normal(size=(4, 4)) * 0.5, name="W_h")
    b = tensorgraph.shared(rng.normal(size=4) * 0.1, name="b")
    seq = x if taps is None else dict(input=x, taps=taps)

    def step(*args):
        *xs, h = args
        return tt.tanh(sum(tt.dot(x_t, w_x) for x_t in xs) + tt.dot(h, w_h) + b)

    h, _ = scan(step, sequences=seq, outputs_info=h0, go_backwards=go_backwards,
                truncate_gradient=truncate, name="rnn")
    args = (rng.normal(size=(7, 2, 3)), rng.normal(size=(2, 4)))
    return x, h0, (w_x, w_h, b), h, args


def test_a_sequence_times_a_weight_is_one_product_before_the_loop():
    x, h0, _, h, args = _rnn()
    with_rw, without, f = _both([x, h0], h, args)
    np.testing.assert_allclose(with_rw, without, rtol=1e-12)
    (node,) = _scans(f)
    # the step keeps only the recurrent product; the input product reads the sequence
    (dot,) = _inner_dots(node)
    assert dot.inputs[0].name == "h0[t-1]"
    history = f.maker.fgraph.rewrite_history
    assert any(str(step.rewriter) == "scan_pushout_seq_dots" for step in history.steps)


@pytest.mark.parametrize("taps, go_backwards", [([-1, 0], False), ([0], True), ([-2, 1], False)])
def test_sequence_products_with_taps_and_backwards(taps, go_backwards):
    x, h0, _, h, args = _rnn(taps, go_backwards)
    with_rw, without, f = _both([x, h0], h, args)
    np.testing.assert_allclose(with_rw, without, rtol=1e-12)
    assert len(_inner_dots(_scans(f)[0])) == 1


@pytest.mark.parametrize("truncate", [-1, 3])
def test_bptt_weight_gradients_are_products_after_the_loop(truncate):
    x, h0, params, h, args = _rnn(truncate=truncate)
    cost = (h[-1] ** 2).sum() + (h ** 3).sum()
    grads = tensorgraph.grad(cost, list(params) + [h0])
    with_rw, without, f = _both([x, h0], grads, args)
    for a, b in zip(with_rw, without):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    forward, backward = _scans(f)
    # the backward loop carries the gradient of h only: the weights' sums left the loop
    assert backward.op.info.n_states == 1
    assert len(_inner_dots(backward)) == 1  # dh @ W_h.T, the recurrence


def test_bptt_against_numpy():
    rng = np.random.default_rng(4)
    x = tt.dtensor3("x")
    w_x = tensorgraph.shared(rng.normal(size=(3, 5)) * 0.4)
    w_h = tensorgraph.shared(rng.normal(size=(5, 5)) * 0.4)
    h, _ = scan(lambda x_t, h: tt.tanh(tt.dot(x_t, w_x) + tt.dot(h, w_h)), sequences=x,
                outputs_info=tt.zeros((x.shape[1], 5), dtype="float64"))
    g_x, g_h = tensorgraph.grad(h[-1].sum(), [w_x, w_h])
    f = tensorgraph.function([x], [g_x, g_h])
    xv = rng.normal(size=(6, 2, 3))
    hs = [np.zeros((2, 5))]
    for x_t in xv:
        hs.append(np.tanh(x_t @ w_x.get_value() + hs[-1] @ w_h.get_value()))
    dh, want_x, want_h = np.ones((2, 5)), 0, 0
    for t in range(len(xv) - 1, -1, -1):
        da = dh * (1 - hs[t + 1] ** 2)
        want_x, want_h = want_x + xv[t].T @ da, want_h + hs[t].T @ da
        dh = da @ w_h.get_value().T
    got_x, got_h = f(xv)
    np.testing.assert_allclose(got_x, want_x, rtol=1e-12)
    np.testing.assert_allclose(got_h, want_h, rtol=1e-12)


def test_a_pure_accumulation_is_a_sum_without_loop():
    x = tt.dvector("x")
    n = tt.lscalar("n")
    total, _ = reduce(lambda v, acc: acc + v, sequences=x, outputs_info=tt.constant(1.0))
    first, _ = scan(lambda v, acc: acc + v, sequences=x, outputs_info=tt.constant(0.0),
                    n_steps=n)
    with_rw, without, f = _both([x, n], [total, first[-1]], (np.arange(6.0), 4))
    np.testing.assert_allclose(with_rw, without)
    assert with_rw[0] == 16.0 and with_rw[1] == 6.0
    assert not _scans(f)


def test_accumulators_read_step_by_step_or_elsewhere_stay_in_the_loop():
    x = tt.dvector("x")
    # read at every step (the whole output): stays
    s, _ = scan(lambda v, acc: acc + v, sequences=x, outputs_info=tt.constant(0.0))
    # its past value also feeds another output: stays
    (a, b), _ = scan(lambda v, acc, other: (acc + v, acc * other), sequences=x,
                     outputs_info=[tt.constant(10.0), tt.constant(1.0)])
    with_rw, without, f = _both([x], [s, a[-1], b[-1]], (np.arange(1.0, 5.0),))
    for u, w in zip(with_rw, without):
        np.testing.assert_allclose(u, w)
    assert sum(n.op.info.n_states for n in _scans(f)) == 3
