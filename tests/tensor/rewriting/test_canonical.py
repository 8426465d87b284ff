"""Canonical add/mul chains and stable sigmoid products: the forms the rewrites produce, the
values they keep (hypothesis chains), and the seed's cross-entropy gradient at |z| = 800."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.configdefaults import config
from tensorgraph.printing import pp

CANONICAL = Mode("py", "fast_compile")


def compiled(inputs, output, mode=CANONICAL):
    return tg.function(inputs, output, mode=mode, on_unused_input="ignore")


@pytest.mark.parametrize("build, expected", [
    (lambda x: (x + 2) + 3, "(x + [5.])"),
    (lambda x: 2 * (3 * x), "([6.] * x)"),
    (lambda x: (x - 2) - 3, "(x - [5.])"),
    (lambda x: 1 - (x - (2 - x)), "([3.] - (x + x))"),
    (lambda x: x / 4, "([0.25] * x)"),
    (lambda x: x / 3, "(x / [3.])"),
    (lambda x: -(-x) * 1 + 0, "x"),
    (lambda x: (-x) * (2 * -tt.exp(x)), "([2.] * x * exp(x))"),
])
def test_chains_get_their_canonical_form(build, expected):
    x = tt.dvector("x")
    f = compiled([x], build(x))
    assert pp(f) == expected
    value = np.array([-1.5, 0.25, 3.0])
    np.testing.assert_allclose(f(value), compiled([x], build(x), Mode("py", None))(value))


def test_a_term_minus_itself_is_zeros_of_the_full_shape():
    ints = tt.ivector("i")
    g = compiled([ints], ints - ints)
    assert g(np.array([4, 5], dtype="int32")).tolist() == [0, 0]
    assert g(np.array([4, 5], dtype="int32")).dtype == "int32"
    m, r = tt.dmatrix("m"), tt.drow("r")
    kept = compiled([m, r], m - m + r)  # float x - x is nan for inf: safe presets keep it
    assert np.isnan(kept(np.full((3, 2), np.inf), np.ones((1, 2)))).all()
    f = compiled([m, r], m - m + r, Mode("py", "unsafe"))
    assert not any("sub" in str(n.op) for n in f.maker.fgraph.apply_nodes)
    got = f(np.ones((3, 2)), np.array([[1.0, 2.0]]))
    np.testing.assert_array_equal(got, [[1.0, 2.0]] * 3)


def test_division_by_itself_cancels_only_where_never_zero():
    x = tt.dvector("x")
    f = compiled([x], tt.exp(x) / tt.exp(x) * x)
    assert pp(f) == "x"
    risky = (2 * x) / (2 * x)
    safe = compiled([x], risky)
    assert np.isnan(safe(np.array([0.0, 1.0]))[0])  # 0/0 as written
    unsafe = compiled([x], risky, Mode("py", "unsafe"))
    assert "local_mul_canonical_unsafe" in {s.name for s in unsafe.maker.fgraph.rewrite_history}
    np.testing.assert_array_equal(unsafe(np.array([0.0, 1.0])), [1.0, 1.0])


LEAVES = ["x", "y", "r", 2.0, -3.0, 0.5, 4.0]


@st.composite
def arithmetic_chains(draw):
    x, y, r = tt.dmatrix("x"), tt.dmatrix("y"), tt.drow("r")
    env = {"x": x, "y": y, "r": r}

    def leaf():
        choice = draw(st.sampled_from(LEAVES))
        return env[choice] if isinstance(choice, str) else choice

    expr = env["x"]
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["add", "radd", "sub", "rsub", "mul", "div", "neg", "exp"]))
        other = leaf()
        expr = {"add": lambda: expr + other, "radd": lambda: other + expr,
                "sub": lambda: expr - other, "rsub": lambda: other - expr,
                "mul": lambda: expr * other, "div": lambda: expr / (1.5 + tt.sqr(other)),
                "neg": lambda: -expr, "exp": lambda: tt.exp(-tt.sqr(expr))}[op]()
        if not isinstance(expr, tt.TensorVariable):
            expr = tt.as_tensor_variable(expr)
    return [x, y, r], expr


@settings(max_examples=40, deadline=None)
@given(arithmetic_chains(), st.integers(0, 2 ** 16))
def test_canonical_chains_keep_their_values(graph, seed):
    inputs, out = graph
    rng = np.random.default_rng(seed)
    values = [rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(1, 2))]
    reference = compiled(inputs, out, Mode("py", None))(*values)
    for preset in ("fast_compile", "fast_run", "unsafe"):
        got = compiled(inputs, out, Mode("py", preset))(*values)
        assert got.shape == reference.shape
        np.testing.assert_allclose(got, reference, rtol=1e-9, atol=1e-12, err_msg=preset)


@pytest.mark.parametrize("preset", ["fast_compile", "fast_run"])
@pytest.mark.parametrize("floatX", ["float32", "float64"])
def test_seed_cross_entropy_gradient_is_finite_and_exact_at_extreme_inputs(preset, floatX):
    with config.change_flags(floatX=floatX):
        z, y = tt.vector("z"), tt.vector("y")
        p_1 = 1 / (1 + tt.exp(-z))
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        f = tg.function([z, y], [xent, tg.grad(xent.sum(), z)], mode=Mode("py", preset))
    zs = np.array([-800, -100, -1, 0, 2, 100, 800], dtype=floatX)
    for ys in (np.zeros(7, floatX), np.ones(7, floatX)):
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            _, gz = f(zs, ys)
        expected = 1 / (1 + np.exp(-zs.astype(float).clip(-700, 700))) - ys
        assert gz.dtype == floatX and np.all(np.isfinite(gz))
        np.testing.assert_allclose(gz, expected, rtol=1e-5, atol=1e-7)


def test_sigmoid_products_take_their_short_forms():
    z, g = tt.dvector("z"), tt.dvector("g")
    cases = [
        (tt.exp(z) * tt.sigmoid(-z), "sigmoid(z)"),
        (g / (1 + tt.exp(-z)), "(g * sigmoid(z))"),
        (tt.exp(-z) / (1 + tt.exp(-z)) ** 2 * g, "(g * sigmoid(z) * sigmoid(-z))"),
    ]
    values = np.array([-800.0, -3.0, 0.0, 3.0, 800.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    for expr, expected in cases:
        f = compiled([z, g], expr, Mode("py", "fast_compile").excluding("fusion"))
        assert pp(f) == expected
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            assert np.all(np.isfinite(f(*values)))
    shorter = compiled([z], tt.sigmoid(z) * tt.exp(-z) / tt.sigmoid(z))
    assert pp(shorter) == "exp(-z)"


def test_dropped_variables_of_unproven_size_are_checked_at_run_time():
    x, y = tt.ivectors("x", "y")
    checked = compiled([x, y], x - x + y, Mode("py", "fast_run"))
    assert [type(n.op).__name__ for n in checked.maker.fgraph.toposort()][-1] == "Assert"
    ints = np.arange(2, dtype="int32")
    np.testing.assert_array_equal(checked(ints, ints), [0, 1])
    with pytest.raises(AssertionError, match="local_add_canonical removed dimension 0 of x"):
        checked(np.ones(3, dtype="int32"), ints)
    with pytest.raises(ValueError):  # what the graph does without rewriting
        compiled([x, y], x - x + y, Mode("py", None))(np.ones(3, dtype="int32"), ints)
    unsafe = compiled([x, y], x - x + y, Mode("py", "unsafe"))
    assert pp(unsafe) == "y"
    assert "local_remove_all_assert" in {s.name for s in unsafe.maker.fgraph.rewrite_history}
    included = compiled([x, y], x - x + y, Mode("py", "fast_run").including("unsafe"))
    assert pp(included) == "y"


def test_sizes_proven_equal_need_no_check():
    x = tt.dvector("x")
    f = compiled([x], tt.exp(x) * 0 + (x - x) + 2 * x, Mode("py", "fast_run"))
    assert "Assert" not in pp(f)
    g = compiled([x], tt.sigmoid(x) * tt.exp(-x) / tt.sigmoid(x) + (tt.exp(x) - tt.exp(x)))
    assert "Assert" not in pp(g)
