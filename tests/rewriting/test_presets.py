"""Done-when checks of the rewriting issue: every preset computes what no rewriting computes on
the tutorial programs and on random graphs mixing elementwise ops, reductions, dot products and
indexing (hypothesis); the seed history replays with the canonical and sigmoid rewrites in it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.configdefaults import config
from tensorgraph.gradient import hessian, jacobian
from tensorgraph.ifelse import ifelse
from tensorgraph.rewriting import PRESETS, structurally_equal

PRESET_NAMES = sorted(PRESETS)


def run(inputs, outputs, values, preset, updates=None):
    f = tg.function(inputs, outputs, updates=updates, mode=Mode("py", preset),
                    on_unused_input="ignore")
    return f(*values)


def assert_presets_agree(inputs, outputs, values, rtol=1e-7, atol=1e-10):
    reference = run(inputs, outputs, values, None)
    for preset in PRESET_NAMES:
        got = run(inputs, outputs, values, preset)
        for r, g in zip(reference, got):
            assert np.shape(g) == np.shape(r), preset
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=preset)


def _tutorial_programs():
    """The graphs of tests/test_tutorial_programs.py, with inputs to run them on."""
    x, y = tt.dscalars("x", "y")
    a = tt.dvector("a")
    m, n = tt.dmatrices("m", "n")
    s = 1 / (1 + tt.exp(-m))
    yield "algebra", [x, y, m, n, a], [x + y, m + n, a + a ** 10], [
        2.0, 3.0, np.ones((2, 2)), np.eye(2), np.array([0.0, 1.0, 2.0])]
    yield "logistic", [m], [s, (1 + tt.tanh(m / 2)) / 2], [np.array([[0, 1], [-1, -2.0]])]
    diff = m - n
    yield "more_than_one", [m, n], [diff, abs(diff), diff ** 2], [np.ones((2, 2)),
                                                                    np.arange(4.0).reshape(2, 2)]
    w = tt.dscalar("w")
    yield "defaults", [x, y, w], [(x + y) * w], [33.0, 2.0, 1.0]
    inc = tt.iscalar("inc")
    yield "shared_expression", [inc, x], [x * 2 + inc], [np.int32(1), 3.0]
    yield "derivatives", [x, m], [tg.grad(x ** 2, x), tg.grad(tt.sum(s), m)], [
        94.2, np.array([[0, 1], [-1, -2.0]])]
    yield "jacobian_hessian", [a], [jacobian(a ** 2, a), hessian((a ** 2).sum(), a)], [
        np.array([4.0, 3.0])]
    lt = tt.lt(x, y)
    yield "switch_ifelse", [x, y, m, n], [tt.switch(lt, tt.mean(m), tt.mean(n)),
                                          ifelse(lt, tt.mean(m), tt.mean(n))], [
        0.0, 1.0, np.ones((3, 3)), np.zeros((3, 3))]
    rng = np.random.default_rng(1)
    xs, ys = tt.dmatrix("xs"), tt.dvector("ys")
    wv, b = tt.dvector("wv"), tt.dscalar("b")
    p_1 = 1 / (1 + tt.exp(-tt.dot(xs, wv) - b))
    xent = -ys * tt.log(p_1) - (1 - ys) * tt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (wv ** 2).sum()
    gw, gb = tg.grad(cost, [wv, b])
    yield "logistic_regression", [xs, ys, wv, b], [p_1 > 0.5, xent, wv - 0.1 * gw,
                                                   b - 0.1 * gb], [
        rng.normal(size=(6, 5)), rng.integers(0, 2, 6).astype(float), rng.normal(size=5), 0.3]


TUTORIAL = {name: rest for name, *rest in _tutorial_programs()}


@pytest.mark.parametrize("program", sorted(TUTORIAL))
def test_every_preset_agrees_with_no_rewriting_on_the_tutorial_programs(program):
    inputs, outputs, values = TUTORIAL[program]
    assert_presets_agree(inputs, outputs, values)


def test_shared_updates_agree_across_presets():
    for preset in PRESET_NAMES:
        state = tg.shared(np.zeros(3), name="state")
        inc = tt.dvector("inc")
        f = tg.function([inc], state * 2, updates=[(state, state + inc - 0 * state)],
                        mode=Mode("py", preset))
        for k in range(3):
            f(np.full(3, k + 1.0))
        np.testing.assert_array_equal(state.get_value(), [6.0, 6.0, 6.0], err_msg=preset)


# -- random graphs: elementwise, reductions, dot, indexing --------------------------------------

UNARY = [tt.tanh, tt.sigmoid, lambda t: tt.exp(-tt.sqr(t)), lambda t: tt.log1p(tt.sqr(t)),
         lambda t: -t, lambda t: t * 1 + 0, lambda t: 2 * (3 * t), lambda t: (t + 2) - 3,
         lambda t: t / 4, lambda t: tt.log(1 + tt.exp(t)), lambda t: abs(t) ** 0.5]
BINARY = [tt.add, tt.sub, tt.mul, lambda p, q: p / (1 + tt.sqr(q)), tt.maximum,
          lambda p, q: p - (q - p)]
# (3, 4) matrices, 4-vectors and 3-vectors; each step makes one of them from others
STEPS = [
    ("m", lambda d, m, v, c: d(UNARY)(d(m))),
    ("m", lambda d, m, v, c: d(BINARY)(d(m), d(m))),
    ("m", lambda d, m, v, c: d(m) + d(v)),
    ("m", lambda d, m, v, c: d(c)[:, None] * d(v)[None, :]),
    ("m", lambda d, m, v, c: d(m)[::-1]),
    ("m", lambda d, m, v, c: d(m)[:, [3, 1, 2, 0]]),
    ("m", lambda d, m, v, c: tt.set_subtensor(d(m)[1], d(v))),
    ("m", lambda d, m, v, c: d(m) * tt.sum(d(m))),
    ("v", lambda d, m, v, c: tt.sum(d(m), axis=0)),
    ("v", lambda d, m, v, c: tt.mean(d(m), axis=0)),
    ("v", lambda d, m, v, c: tt.dot(d(c), d(m))),
    ("v", lambda d, m, v, c: d(UNARY)(d(v))),
    ("v", lambda d, m, v, c: d(v)[::-1] * 2),
    ("c", lambda d, m, v, c: tt.max(d(m), axis=1)),
    ("c", lambda d, m, v, c: tt.dot(d(m), d(v))),
    ("c", lambda d, m, v, c: d(BINARY)(d(c), d(c))),
    ("c", lambda d, m, v, c: d(m)[:, 2] - d(c)),
]


@st.composite
def mixed_graphs(draw):
    x, v0, c0 = tt.dmatrix("x"), tt.dvector("v"), tt.dvector("c")
    pools = {"m": [x], "v": [v0], "c": [c0]}

    def d(options):
        return draw(st.sampled_from(options))

    for _ in range(draw(st.integers(3, 12))):
        kind, step = d(STEPS)
        pools[kind].append(step(d, pools["m"], pools["v"], pools["c"]))
    return [x, v0, c0], [pools["m"][-1], pools["v"][-1], pools["c"][-1]]


@settings(max_examples=25, deadline=None)
@given(mixed_graphs(), st.integers(0, 2 ** 16))
def test_every_preset_agrees_on_random_mixed_graphs(graph, seed):
    inputs, outputs = graph
    rng = np.random.default_rng(seed)
    values = [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3)]
    assert_presets_agree(inputs, outputs, values, rtol=1e-6, atol=1e-9)


def test_seed_history_replays_with_the_canonical_and_sigmoid_rewrites():
    with config.change_flags(floatX="float64"):
        inputs, outputs, values = TUTORIAL["logistic_regression"]
        f = tg.function(inputs, outputs, mode=Mode("py", "fast_run"))
    history = f.maker.fgraph.rewrite_history
    names = {s.name for s in history}
    assert {"local_add_canonical", "local_mul_canonical", "local_sigmoid_products"} <= names
    assert structurally_equal(history.rebuild(), f.maker.fgraph)
    for k in range(0, len(history) + 1, max(1, len(history) // 5)):
        history.rebuild(k).check_integrity()
