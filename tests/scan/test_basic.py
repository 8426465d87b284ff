"""scan's values against numpy loops, for the examples of the Theano scan tutorial (written
anew), in every linker and mode."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.scan import foldl, foldr, map, reduce, scan, until
from tensorgraph.tensor.random.utils import RandomStream


def test_power_elementwise(mode):
    A = tt.dvector("A")
    k = tt.scalar("k", dtype="int64")
    result, updates = scan(lambda prior, A: prior * A, outputs_info=tt.ones_like(A),
                           non_sequences=A, n_steps=k, name="power")
    assert not updates
    f = tensorgraph.function([A, k], result[-1], mode=mode)
    a = np.arange(1.0, 6.0)
    np.testing.assert_allclose(f(a, 3), a ** 3)
    np.testing.assert_allclose(f(a, 1), a)


def test_polynomial_evaluation(mode):
    coefficients = tt.dvector("coefficients")
    x = tt.dscalar("x")
    components, _ = scan(lambda c, power, x: c * (x ** power),
                         sequences=[coefficients, tt.arange(coefficients.shape[0])],
                         non_sequences=x, name="polynomial")
    f = tensorgraph.function([coefficients, x], components.sum(), mode=mode)
    c = np.array([1.0, 0.0, 2.0])
    assert f(c, 3.0) == pytest.approx(1 + 2 * 9)


def test_running_sum(mode):
    x = tt.dvector("x")
    total, _ = scan(lambda x_t, acc: acc + x_t, sequences=x,
                    outputs_info=tt.constant(np.float64(0.0)), name="cumsum")
    f = tensorgraph.function([x], total, mode=mode)
    v = np.array([1.0, -2.0, 3.5, 4.0])
    np.testing.assert_allclose(f(v), np.cumsum(v))
    assert f(np.zeros(0)).shape == (0,)


def test_fibonacci_taps(mode):
    n = tt.scalar("n", dtype="int64")
    init = tt.constant(np.array([0, 1], dtype="int64"))
    fib, _ = scan(lambda f2, f1: f2 + f1, outputs_info=dict(initial=init, taps=[-2, -1]),
                  n_steps=n, name="fibonacci")
    f = tensorgraph.function([n], fib, mode=mode)
    expected = [1, 2, 3, 5, 8, 13, 21, 34]
    np.testing.assert_array_equal(f(8), expected)


def _numpy_rnn(x, h0, w_in, w_rec, b):
    h, out = h0, []
    for x_t in x:
        h = np.tanh(x_t @ w_in + h @ w_rec + b)
        out.append(h)
    return np.array(out)


def test_tanh_rnn(mode):
    rng = np.random.default_rng(0)
    X = tt.dtensor3("X")  # steps x batch x features
    h0 = tt.dmatrix("h0")
    w_in = tensorgraph.shared(rng.normal(size=(3, 4)) * 0.5, name="W_in")
    w_rec = tt.dmatrix("W_rec")
    b = tt.dvector("b")
    h, _ = scan(lambda x_t, h_prev, w_rec: tt.tanh(tt.dot(x_t, w_in) + tt.dot(h_prev, w_rec) + b),
                sequences=X, outputs_info=h0, non_sequences=[w_rec], name="rnn")
    f = tensorgraph.function([X, h0, w_rec, b], h, mode=mode)
    x = rng.normal(size=(6, 2, 3))
    args = (rng.normal(size=(2, 4)), rng.normal(size=(4, 4)) * 0.5, rng.normal(size=4))
    np.testing.assert_allclose(f(x, *args), _numpy_rnn(x, args[0], w_in.get_value(), *args[1:]),
                               rtol=1e-10)


def test_until_power_iteration(mode):
    A = tt.dmatrix("A")
    v0 = tt.dvector("v0")

    def step(v, A):
        w = tt.dot(A, v)
        w = w / tt.sqrt((w ** 2).sum())
        return w, until(tt.sqrt(((w - v) ** 2).sum()) < 1e-10)

    vs, _ = scan(step, outputs_info=v0, non_sequences=A, n_steps=1000, name="power_iteration")
    f = tensorgraph.function([A, v0], [vs[-1], vs.shape[0]], mode=mode)
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    v, steps = f(a, np.array([1.0, 0.0]))
    # numpy: the same iteration, same stop rule
    u, count = np.array([1.0, 0.0]), 0
    while count < 1000:
        w = a @ u
        w = w / np.sqrt((w ** 2).sum())
        count += 1
        done = np.sqrt(((w - u) ** 2).sum()) < 1e-10
        u = w
        if done:
            break
    assert steps == count < 1000
    np.testing.assert_allclose(v, u)
    np.testing.assert_allclose(np.abs(v), np.abs(np.linalg.eigh(a)[1][:, -1]), rtol=1e-8)


def test_random_walk_state_advances_across_calls(mode):
    srng = RandomStream(seed=7)
    n = 5
    pos, updates = scan(lambda p: p + srng.normal(0.0, 1.0, dtype="float64"),
                        outputs_info=tt.constant(np.float64(0.0)), n_steps=n, name="walk")
    assert len(updates) == 1
    f = tensorgraph.function([], pos, updates=updates, mode=mode)
    g = tensorgraph.function([], pos, mode=mode)  # the default update does the same
    reference = np.random.default_rng(np.random.SeedSequence(7).spawn(1)[0])
    first = np.cumsum([reference.normal(0.0, 1.0) for _ in range(n)])
    second = np.cumsum([reference.normal(0.0, 1.0) for _ in range(n)])
    np.testing.assert_allclose(f(), first)
    np.testing.assert_allclose(f(), second)
    third = np.cumsum([reference.normal(0.0, 1.0) for _ in range(n)])
    np.testing.assert_allclose(g(), third)  # g advances the same generator, by default


def test_shared_variable_used_without_being_passed(mode):
    w = tensorgraph.shared(np.array([1.0, 2.0]), name="w")
    x = tt.dmatrix("x")
    out, _ = scan(lambda row: (row * w).sum(), sequences=x)
    f = tensorgraph.function([x], out, mode=mode)
    m = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(f(m), m @ np.array([1.0, 2.0]))
    w.set_value(np.array([0.0, 1.0]))
    np.testing.assert_allclose(f(m), m[:, 1])


def test_sequence_taps_and_several_outputs(mode):
    x = tt.dvector("x")

    def step(x_m2, x_0, x_p1, acc):
        return acc + x_0, x_m2 * x_p1

    (acc, prod), _ = scan(step, sequences=dict(input=x, taps=[-2, 0, 1]),
                          outputs_info=[tt.constant(np.float64(0.0)), None])
    f = tensorgraph.function([x], [acc, prod], mode=mode)
    v = np.arange(1.0, 8.0)
    a, p = f(v)
    steps = len(v) - 3
    np.testing.assert_allclose(a, np.cumsum(v[2:2 + steps]))
    np.testing.assert_allclose(p, v[:steps] * v[3:3 + steps])


def test_go_backwards(mode):
    x = tt.dvector("x")
    out, _ = scan(lambda x_t, acc: acc * 10 + x_t, sequences=x,
                  outputs_info=tt.constant(np.float64(0.0)), go_backwards=True)
    f = tensorgraph.function([x], out[-1], mode=mode)
    assert f(np.array([1.0, 2.0, 3.0])) == 321.0


def test_map_reduce_foldl_foldr(mode):
    x = tt.dvector("x")
    squares, _ = map(lambda v: v ** 2, sequences=x)
    zero = tt.constant(0.0, dtype="float64")
    total, _ = reduce(lambda v, acc: acc + v, sequences=x, outputs_info=zero)
    left, _ = foldl(lambda v, acc: acc * 2 + v, sequences=x, outputs_info=zero)
    right, _ = foldr(lambda v, acc: acc * 2 + v, sequences=x, outputs_info=zero)
    f = tensorgraph.function([x], [squares, total, left, right], mode=mode)
    v = np.array([1.0, 0.0, 1.0, 1.0])
    s, t, lft, rgt = f(v)
    np.testing.assert_allclose(s, v ** 2)
    assert t == 3.0
    assert lft == 0b1011
    assert rgt == 0b1101


def test_nested_scan(mode):
    m = tt.dmatrix("m")

    def row_cumsum(row):
        out, _ = scan(lambda v, acc: acc + v, sequences=row,
                      outputs_info=tt.constant(0.0, dtype="float64"), name="inner")
        return out

    out, _ = scan(row_cumsum, sequences=m, name="outer")
    f = tensorgraph.function([m], out, mode=mode)
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(a), np.cumsum(a, axis=1))


def test_a_draw_made_outside_the_step_is_the_same_at_every_step(mode):
    srng = RandomStream(seed=5)
    noise = srng.normal(0.0, 1.0, size=(2,), dtype="float64")  # drawn once per call
    total, _ = scan(lambda h: h + noise, outputs_info=tt.zeros((2,), dtype="float64"),
                    n_steps=3)
    f = tensorgraph.function([], [total, noise], mode=mode)
    values, drawn = f()
    np.testing.assert_allclose(values, [drawn, 2 * drawn, 3 * drawn])
    again, drawn_again = f()
    assert not np.allclose(drawn, drawn_again)  # its generator still advances once per call
    np.testing.assert_allclose(again[-1], 3 * drawn_again)
