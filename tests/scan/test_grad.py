"""Gradients through scan (back-propagation through time), checked by finite differences
(``verify_grad``), with truncate_gradient, while loops, random draws, shared weights used
without being passed; and forward mode (Rop)."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import Rop, verify_grad
from tensorgraph.scan import Scan, scan, until
from tensorgraph.tensor.random.utils import RandomStream

GRAD_MODES = ["FAST_RUN", "FAST_COMPILE"]


@pytest.fixture(params=GRAD_MODES)
def grad_mode(request):
    return request.param


def test_tanh_rnn_sequences_and_non_sequences(grad_mode):
    rng = np.random.default_rng(1)

    def rnn(x, h0, w, u, b):
        h, _ = scan(lambda x_t, h, w, u: tt.tanh(tt.dot(x_t, w) + tt.dot(h, u) + b),
                    sequences=x, outputs_info=h0, non_sequences=[w, u], name="rnn")
        return h

    points = [rng.normal(size=(5, 2, 3)), rng.normal(size=(2, 4)), rng.normal(size=(3, 4)),
              rng.normal(size=(4, 4)) * 0.5, rng.normal(size=4)]
    verify_grad(rnn, points, rng=rng, mode=grad_mode)


def test_state_taps_minus_two_and_minus_one(grad_mode):
    rng = np.random.default_rng(2)

    def fib_like(init, x):
        out, _ = scan(lambda x_t, a, b: a * 0.5 + tt.sin(b) * x_t, sequences=x,
                      outputs_info=dict(initial=init, taps=[-2, -1]))
        return out

    verify_grad(fib_like, [rng.normal(size=(3, 2)), rng.normal(size=(5, 2))], rng=rng,
                mode=grad_mode)


def test_only_tap_minus_two(grad_mode):
    rng = np.random.default_rng(3)

    def skip(init):
        out, _ = scan(lambda a: a * 0.9 + 0.1, outputs_info=dict(initial=init, taps=[-2]),
                      n_steps=5)
        return out ** 2

    verify_grad(skip, [rng.normal(size=(2, 3))], rng=rng, mode=grad_mode)


def test_sequence_taps_and_nit_sot_outputs(grad_mode):
    rng = np.random.default_rng(4)

    def seqtaps(x, w):
        def step(x_m2, x_0, x_p1, h, w):
            return h * w + x_m2 * x_p1, tt.exp(x_0 * w)
        (h, y), _ = scan(step, sequences=dict(input=x, taps=[-2, 0, 1]),
                         outputs_info=[tt.zeros_like(w), None], non_sequences=w)
        return h.sum(axis=0) + y[-2]

    verify_grad(seqtaps, [rng.normal(size=(7, 2)), rng.normal(size=2) * 0.5], rng=rng,
                mode=grad_mode)


def test_go_backwards_gradient(grad_mode):
    rng = np.random.default_rng(5)

    def backwards(x, h0):
        h, _ = scan(lambda x_t, h: tt.tanh(h * x_t + 1), sequences=x, outputs_info=h0,
                    go_backwards=True)
        return h

    verify_grad(backwards, [rng.normal(size=(4, 3)), rng.normal(size=3)], rng=rng,
                mode=grad_mode)


def test_shared_weight_used_without_being_passed(grad_mode):
    rng = np.random.default_rng(6)
    w = tensorgraph.shared(rng.normal(size=(3, 3)) * 0.5, name="w")
    x = tt.dmatrix("x")
    h, _ = scan(lambda x_t, h: tt.tanh(tt.dot(h, w) + x_t), sequences=x,
                outputs_info=tt.zeros((3,), dtype="float64"))
    cost = (h ** 2).sum()
    f = tensorgraph.function([x], [cost, tensorgraph.grad(cost, w)], mode=grad_mode)
    xv = rng.normal(size=(4, 3))
    _, analytic = f(xv)
    w0, eps, numeric = w.get_value(), 1e-6, np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        for sign in (1, -1):
            shifted = w0.copy()
            shifted[idx] += sign * eps
            w.set_value(shifted)
            numeric[idx] += sign * f(xv)[0] / (2 * eps)
    w.set_value(w0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("truncate", [-1, 1, 2, 5, 10])
def test_truncate_gradient(truncate, grad_mode):
    # h_t = a h_{t-1} + x_t: d sum(h) / d x_t = sum_{s >= t} a^(s - t), for the last
    # `truncate` steps only; the initial value gets a gradient only without truncation
    x = tt.dvector("x")
    h0 = tt.dscalar("h0")
    h, _ = scan(lambda x_t, h: 0.5 * h + x_t, sequences=x, outputs_info=h0,
                truncate_gradient=truncate)
    gx, gh0 = tensorgraph.grad(h.sum(), [x, h0])
    f = tensorgraph.function([x, h0], [gx, gh0], mode=grad_mode)
    n = 5
    full = np.array([sum(0.5 ** (s - t) for s in range(t, n)) for t in range(n)])
    kept = n if truncate == -1 else min(truncate, n)
    expected = np.where(np.arange(n) >= n - kept, full, 0.0)
    got_x, got_h0 = f(np.ones(n), 1.0)
    np.testing.assert_allclose(got_x, expected)
    assert got_h0 == pytest.approx(sum(0.5 ** (s + 1) for s in range(n)) if kept == n else 0.0)


def test_until_gradient(grad_mode):
    v0 = tt.dvector("v0")

    def step(v):
        w = v * 0.5
        return w, until(w.sum() < 0.1)

    vs, _ = scan(step, outputs_info=v0, n_steps=100)
    f = tensorgraph.function([v0], [vs.shape[0], tensorgraph.grad(vs.sum(), v0)],
                             mode=grad_mode)
    steps, g = f(np.ones(2))
    assert steps == 5
    np.testing.assert_allclose(g, [sum(0.5 ** k for k in range(1, 6))] * 2)


def test_gradient_through_random_draws_sees_the_forward_draws(grad_mode):
    srng = RandomStream(seed=3)
    s = tt.dscalar("s")
    pos, updates = scan(lambda p, s: p + s * srng.normal(0.0, 1.0, dtype="float64"),
                        outputs_info=tt.constant(0.0, dtype="float64"), non_sequences=s,
                        n_steps=4)
    f = tensorgraph.function([s], [pos, tensorgraph.grad(pos.sum(), s)], updates=updates,
                             mode=grad_mode)
    for _ in range(2):  # the second call draws new values; the gradient follows them
        p, g = f(2.0)
        assert g == pytest.approx(p.sum() / 2.0)


def test_gradient_through_a_float_shared_variable_the_loop_updates(grad_mode):
    # acc is carried by the updates, not by outputs_info: its values are recorded by a copy of
    # the forward loop and its gradient carried back like a state's
    acc = tensorgraph.shared(0.5, name="acc")
    x = tt.dvector("x")
    out, updates = scan(lambda v: (acc * v, {acc: acc + v * v}), sequences=x)
    cost = out.sum() + updates[acc] ** 2
    f = tensorgraph.function([x], [cost, *tensorgraph.grad(cost, [x, acc])], mode=grad_mode)

    def numpy_cost(xv, a):
        total = 0.0
        for v in xv:
            total, a = total + a * v, a + v * v
        return total + a ** 2

    xv, eps = np.array([1.0, 2.0, -1.0]), 1e-6
    value, gx, gacc = f(xv)
    assert value == pytest.approx(numpy_cost(xv, 0.5))
    numeric_x = [(numpy_cost(xv + eps * e, 0.5) - numpy_cost(xv - eps * e, 0.5)) / (2 * eps)
                 for e in np.eye(3)]
    np.testing.assert_allclose(gx, numeric_x, rtol=1e-6)
    assert gacc == pytest.approx((numpy_cost(xv, 0.5 + eps) - numpy_cost(xv, 0.5 - eps))
                                 / (2 * eps), rel=1e-6)


def test_gradient_of_a_shared_variable_s_final_value():
    s = tensorgraph.shared(np.float64(1.0))
    _, updates = scan(lambda: ([], {s: s * 1.5 + 1.0}), n_steps=4)
    assert tensorgraph.function([], tensorgraph.grad(updates[s], s))() == pytest.approx(1.5 ** 4)


def test_integer_states_get_no_gradient():
    w = tt.dscalar("w")
    n = tt.constant(np.array([0, 1], dtype="int64"))
    (fib, scaled), _ = scan(lambda a, b, w: (a + b, tt.cast(b, "float64") * w),
                            outputs_info=[dict(initial=n, taps=[-2, -1]), None],
                            non_sequences=w, n_steps=5)
    g = tensorgraph.function([w], tensorgraph.grad(scaled.sum(), w))(2.0)
    assert g == pytest.approx(sum([1, 1, 2, 3, 5]))


def test_nested_scan_gradient(grad_mode):
    rng = np.random.default_rng(7)

    def nested(m, w):
        def row_fn(row, w):
            out, _ = scan(lambda v, acc, w: tt.tanh(acc * w + v), sequences=row,
                          outputs_info=tt.zeros_like(w), non_sequences=w, name="inner")
            return out[-1]
        out, _ = scan(row_fn, sequences=m, non_sequences=w, name="outer")
        return out

    verify_grad(nested, [rng.normal(size=(2, 3)), np.array(0.7)], rng=rng, mode=grad_mode)


def test_rop_matches_finite_differences(grad_mode):
    rng = np.random.default_rng(8)
    x = tt.dmatrix("x")
    w = tt.dmatrix("w")
    v = tt.dmatrix("v")
    h0 = tt.dvector("h0")
    dh0 = tt.dvector("dh0")
    h, _ = scan(lambda x_t, h, w: tt.tanh(tt.dot(h, w) + x_t), sequences=x, outputs_info=h0,
                non_sequences=w)
    tangent = Rop(h, [w, h0], [v, dh0])
    f = tensorgraph.function([x, h0, w, v, dh0], tangent, mode=grad_mode)
    fh = tensorgraph.function([x, h0, w], h, mode=grad_mode)
    xv, h0v = rng.normal(size=(4, 3)), rng.normal(size=3)
    wv, vv, dv = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 3)), rng.normal(size=3)
    eps = 1e-6
    numeric = (fh(xv, h0v + eps * dv, wv + eps * vv) - fh(xv, h0v - eps * dv, wv - eps * vv)) / (
        2 * eps)
    np.testing.assert_allclose(f(xv, h0v, wv, vv, dv), numeric, rtol=1e-6, atol=1e-8)


def test_second_derivative_of_a_linear_loop():
    # d/d init of sum(outputs) does not depend on init: its own gradient is zero (the check's
    # random projection then reads nothing, which verify_grad accepts)
    def sum_of_grad(init):
        out, _ = scan(lambda x: x * 2, outputs_info=[init], n_steps=5)
        return tensorgraph.grad(out.sum(), init).sum()

    verify_grad(sum_of_grad, [np.random.default_rng(0).random(3)])


def test_integer_initial_values_get_zero_gradients():
    a0 = tt.lvector("a0")
    b0 = tt.dvector("b0")
    (a, b), _ = scan(lambda a2, a1, b2, b1: (a1 + a2, b1 * b2 + tt.cast(a1, "float64")),
                     outputs_info=[dict(initial=a0, taps=[-2, -1]),
                                   dict(initial=b0, taps=[-2, -1])], n_steps=2)
    ga, gb = tensorgraph.grad(b[-1], [a0, b0])
    f = tensorgraph.function([a0, b0], [ga, gb])
    got_a, got_b = f(np.array([1, 2]), np.array([0.5, 2.0]))
    np.testing.assert_array_equal(got_a, [0.0, 0.0])
    # b[0] = b0[1] b0[0] + 2 and b[1] = b[0] b0[1] + 3, so
    # d b[1] / d b0 = [b0[1]^2, 2 b0[0] b0[1] + 2]
    np.testing.assert_allclose(got_b, [4.0, 2 * 0.5 * 2.0 + 2.0])


def test_outputs_the_cost_does_not_read_add_no_backward_work():
    x = tt.dvector("x")
    (kept, unused), _ = scan(lambda v, h: (h + v, tt.exp(h) * v),
                             sequences=x, outputs_info=[tt.constant(0.0, dtype="float64"), None])
    g = tensorgraph.grad(kept.sum(), x)
    (back,) = [n for n in ancestors_nodes(g) if isinstance(n.op, Scan)
               and n.op.name == "grad of scan"]
    # one sequence: the gradient of the output read; none for the other (zeros)
    assert back.op.info.n_seqs == 1
    np.testing.assert_allclose(tensorgraph.function([x], g)(np.ones(3)), [3.0, 2.0, 1.0])


def ancestors_nodes(var):
    from tensorgraph.graph.basic import io_toposort, graph_inputs

    return io_toposort(graph_inputs([var]), [var])


def test_an_initial_value_the_steps_never_read_is_disconnected():
    from tensorgraph.gradient import DisconnectedInputError

    x0, y0, z0 = tt.dvector("x0"), tt.dvector("y0"), tt.dvector("z0")
    (x, y, z), _ = scan(lambda x, y, z: (x ** 2, y, x + 1), outputs_info=[x0, y0, z0],
                        n_steps=10)
    cost = (x + y + z).sum()
    tensorgraph.grad(cost, [x0, y0])
    pattern = x.owner.op.connection_pattern(x.owner)
    assert [row[2] for row in pattern] == [False, True, False, False]  # z reads x0 only
    with pytest.raises(DisconnectedInputError):
        tensorgraph.grad(cost, z0)
