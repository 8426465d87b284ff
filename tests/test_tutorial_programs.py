"""The classic Theano tutorial programs, with tensorgraph names, in FAST_COMPILE.

Each test is one tutorial section: the program as users know it, then the results the
tutorial shows.
"""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import In, function, shared
from tensorgraph.configdefaults import config
from tensorgraph.gradient import hessian, jacobian
from tensorgraph.ifelse import ifelse
from tensorgraph.tensor.random.utils import RandomStream


@pytest.fixture(autouse=True)
def fast_compile():
    with config.change_flags(mode="FAST_COMPILE"):
        yield


def test_algebra_adding_scalars_and_matrices():
    x = tt.dscalar("x")
    y = tt.dscalar("y")
    z = x + y
    f = function([x, y], z)
    assert f(2, 3) == 5.0
    assert np.allclose(f(16.3, 12.1), 28.4)
    assert np.allclose(z.eval({x: 16.3, y: 12.1}), 28.4)

    x = tt.dmatrix("x")
    y = tt.dmatrix("y")
    f = function([x, y], x + y)
    np.testing.assert_array_equal(f([[1, 2], [3, 4]], [[10, 20], [30, 40]]),
                                  [[11.0, 22.0], [33.0, 44.0]])
    np.testing.assert_array_equal(f(np.array([[1, 2], [3, 4]]), np.array([[10, 20], [30, 40]])),
                                  [[11.0, 22.0], [33.0, 44.0]])

    # the exercise: a + a ** 10
    a = tt.vector()
    out = a + a ** 10
    f = function([a], out)
    np.testing.assert_allclose(f([0, 1, 2]), [0.0, 2.0, 1026.0])


def test_logistic_function():
    x = tt.dmatrix("x")
    s = 1 / (1 + tt.exp(-x))
    logistic = function([x], s)
    expected = [[0.5, 0.73105858], [0.26894142, 0.11920292]]
    np.testing.assert_allclose(logistic([[0, 1], [-1, -2]]), expected, rtol=1e-7)
    s2 = (1 + tt.tanh(x / 2)) / 2
    logistic2 = function([x], s2)
    np.testing.assert_allclose(logistic2([[0, 1], [-1, -2]]), expected, rtol=1e-7)


def test_computing_more_than_one_thing_at_once():
    a, b = tt.dmatrices("a", "b")
    diff = a - b
    abs_diff = abs(diff)
    diff_squared = diff ** 2
    f = function([a, b], [diff, abs_diff, diff_squared])
    d, ad, d2 = f([[1, 1], [1, 1]], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(d, [[1.0, 0.0], [-1.0, -2.0]])
    np.testing.assert_array_equal(ad, [[1.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(d2, [[1.0, 0.0], [1.0, 4.0]])


def test_default_values():
    x, y = tt.dscalars("x", "y")
    z = x + y
    f = function([x, In(y, value=1)], z)
    assert f(33) == 34.0
    assert f(33, 2) == 35.0

    x, y, w = tt.dscalars("x", "y", "w")
    z = (x + y) * w
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], z)
    assert f(33) == 68.0
    assert f(33, 2) == 70.0
    assert f(33, 0, 1) == 33.0
    assert f(33, w_by_name=1) == 34.0
    assert f(33, w_by_name=1, y=0) == 33.0


def test_shared_state_updates_and_givens():
    state = shared(0)
    inc = tt.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert state.get_value() == 0
    assert accumulator(1) == 0
    assert state.get_value() == 1
    assert accumulator(300) == 1
    assert state.get_value() == 301
    state.set_value(-1)
    assert accumulator(3) == -1
    assert state.get_value() == 2

    decrementor = function([inc], state, updates=[(state, state - inc)])
    assert decrementor(2) == 2
    assert state.get_value() == 0

    fn_of_state = state * 2 + inc
    foo = tt.scalar(dtype=state.dtype)  # the type of the value givens puts in place of state
    skip_shared = function([inc, foo], fn_of_state, givens=[(state, foo)])
    assert skip_shared(1, 3) == 7
    assert state.get_value() == 0  # the old state is unchanged


def test_copying_functions():
    state = shared(0)
    inc = tt.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    accumulator(10)
    assert state.get_value() == 10

    new_state = shared(0)
    new_accumulator = accumulator.copy(swap={state: new_state})
    assert new_accumulator(100) == 0
    assert new_state.get_value() == 100
    assert state.get_value() == 10

    null_accumulator = accumulator.copy(delete_updates=True)
    assert null_accumulator(9000) == 10
    assert state.get_value() == 10


def test_derivatives():
    x = tt.dscalar("x")
    y = x ** 2
    gy = tg.grad(y, x)
    assert "x" in tg.pp(gy) and "**" in tg.pp(gy)
    f = function([x], gy)
    assert f(4) == 8.0
    assert np.allclose(f(94.2), 188.4)

    x = tt.dmatrix("x")
    s = tt.sum(1 / (1 + tt.exp(-x)))
    gs = tg.grad(s, x)
    dlogistic = function([x], gs)
    np.testing.assert_allclose(dlogistic([[0, 1], [-1, -2]]),
                               [[0.25, 0.19661193], [0.19661193, 0.10499359]], rtol=1e-7)


def test_jacobian_and_hessian():
    x = tt.dvector("x")
    y = x ** 2
    J = jacobian(y, x)
    f = function([x], J)
    np.testing.assert_array_equal(f([4, 4]), [[8.0, 0.0], [0.0, 8.0]])

    cost = y.sum()
    H = hessian(cost, x)
    f = function([x], H)
    np.testing.assert_array_equal(f([4, 4]), [[2.0, 0.0], [0.0, 2.0]])


def test_switch_vs_lazy_ifelse():
    a, b = tt.scalars("a", "b")
    x, y = tt.matrices("x", "y")
    z_switch = tt.switch(tt.lt(a, b), tt.mean(x), tt.mean(y))
    z_lazy = ifelse(tt.lt(a, b), tt.mean(x), tt.mean(y))
    f_switch = function([a, b, x, y], z_switch, mode=tg.Mode(linker="vm"))
    f_lazyifelse = function([a, b, x, y], z_lazy, mode=tg.Mode(linker="vm"))

    rng = np.random.default_rng(0)
    val1, val2 = 0.0, 1.0
    big_mat1 = rng.random((100, 100)).astype(config.floatX)
    big_mat2 = rng.random((100, 100)).astype(config.floatX)

    def means_run(f):
        """Run ``f`` and count the nodes of it that read a whole big matrix."""
        ran = []
        f.vm.post_hook = lambda i, node, thunk: ran.append(
            any(getattr(cell[0], "size", 0) == 10000 for cell in thunk.inputs))
        result = f(val1, val2, big_mat1, big_mat2)
        f.vm.post_hook = None
        return result, sum(ran)

    switch_result, switch_big = means_run(f_switch)
    lazy_result, lazy_big = means_run(f_lazyifelse)
    np.testing.assert_allclose(switch_result, big_mat1.mean(), rtol=1e-5)
    np.testing.assert_allclose(lazy_result, big_mat1.mean(), rtol=1e-5)
    assert lazy_big < switch_big  # the lazy version computes only the mean it returns
    assert f_lazyifelse.vm.lazy and not f_switch.vm.lazy
    np.testing.assert_allclose(f_lazyifelse(val2, val1, big_mat1, big_mat2), big_mat2.mean(),
                               rtol=1e-5)


def test_random_streams():
    srng = RandomStream(seed=234)
    rv_u = srng.uniform(0, 1, size=(2, 2))
    rv_n = srng.normal(0, 1, size=(2, 2))
    f = function([], rv_u)
    g = function([], rv_n, no_default_updates=True)
    nearly_zeros = function([], rv_u + rv_u - 2 * rv_u)

    f_val0, f_val1 = f(), f()
    assert not np.array_equal(f_val0, f_val1)  # a new draw each call
    g_val0, g_val1 = g(), g()
    np.testing.assert_array_equal(g_val0, g_val1)  # no updates: the same draw
    np.testing.assert_allclose(nearly_zeros(), np.zeros((2, 2)), atol=1e-12)
    assert ((f_val0 >= 0) & (f_val0 < 1)).all()

    srng.seed(902340)
    first = f()
    srng.seed(902340)
    np.testing.assert_array_equal(f(), first)  # seeding reproduces the draws


def test_printing_the_logistic_regression_graph():
    rng = np.random.default_rng(1)
    x = tt.dmatrix("x")
    y = tt.dvector("y")
    w = shared(rng.standard_normal(5), name="w")
    b = shared(0.0, name="b")
    p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = tg.grad(cost, [w, b])
    train = function([x, y], [prediction, xent],
                     updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    predict = function([x], prediction)

    text = tg.pp(prediction)
    assert text.startswith("((1 / (1 + exp(") and text.endswith("> 0.5)")
    assert "w" in text and "b" in text and "x" in text
    printed = tg.debugprint(predict, file="str")
    assert printed.splitlines()[0].startswith("Elemwise{gt} [id A]")
    assert "w [id" in printed and "b [id" in printed
    full = tg.debugprint(train, file="str", print_type=True)
    assert full.count("(update of ") == 2
    for bad in ("bound method", "object at 0x"):
        assert bad not in full
