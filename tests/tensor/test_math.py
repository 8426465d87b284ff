"""Elementwise math functions of ``tt`` against numpy/scipy, and their gradients.

Each op is compared with its numpy reference on several dtypes, with non-contiguous and
negative-stride inputs, and every differentiable one is checked with ``verify_grad`` on points
away from its singularities.
"""

import numpy as np
import pytest
import scipy.special

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(1234)


def run(inputs, outputs, *values):
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE")(*values)


def ref_dtype_of(dtype):
    """The float dtype tensorgraph computes float functions of ``dtype`` in."""
    return {"int8": "float32", "int16": "float32", "uint8": "float32", "int32": "float64",
            "int64": "float64", "bool": "float32"}.get(dtype, dtype)


def tolerance(dtype):
    return {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-13, atol=1e-14)}[dtype]


# name -> (numpy/scipy reference on float64, (low, high) of the test/gradient domain)
FLOAT_UNARY = {
    "exp": (np.exp, (-3, 3)),
    "exp2": (np.exp2, (-3, 3)),
    "expm1": (np.expm1, (-3, 3)),
    "log": (np.log, (0.2, 5)),
    "log2": (np.log2, (0.2, 5)),
    "log10": (np.log10, (0.2, 5)),
    "log1p": (np.log1p, (-0.5, 4)),
    "sqrt": (np.sqrt, (0.2, 5)),
    "reciprocal": (np.reciprocal, (0.5, 3)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1.2, 1.2)),
    "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)),
    "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)),
    "cosh": (np.cosh, (-3, 3)),
    "tanh": (np.tanh, (-3, 3)),
    "arcsinh": (np.arcsinh, (-3, 3)),
    "arccosh": (np.arccosh, (1.2, 4)),
    "arctanh": (np.arctanh, (-0.9, 0.9)),
    "sigmoid": (scipy.special.expit, (-6, 6)),
    "softplus": (lambda x: np.logaddexp(0, x), (-6, 6)),
    "log1mexp": (lambda x: np.log(-np.expm1(x)), (-5, -0.1)),
    "erf": (scipy.special.erf, (-2, 2)),
    "erfc": (scipy.special.erfc, (-2, 2)),
    "erfinv": (scipy.special.erfinv, (-0.9, 0.9)),
    "erfcinv": (scipy.special.erfcinv, (0.1, 1.9)),
    "gamma": (scipy.special.gamma, (0.5, 4)),
    "gammaln": (scipy.special.gammaln, (0.5, 5)),
    "psi": (scipy.special.psi, (0.5, 5)),
    "tri_gamma": (lambda x: scipy.special.polygamma(1, x), (0.5, 5)),
}
NO_GRADIENT = {"tri_gamma"}


def points(low, high, shape, dtype="float64"):
    return RNG.uniform(low, high, size=shape).astype(dtype)


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_unary_matches_numpy(name, dtype):
    ref, (low, high) = FLOAT_UNARY[name]
    x = tt.tensor(dtype, shape=(None, None), name="x")
    y = getattr(tt, name)(x)
    assert y.dtype == dtype
    value = points(low, high, (4, 6), dtype)
    # a transposed view and a negative-stride view go through the same code
    for v in (value, value.T, value[::-1, ::-2]):
        xt = tt.tensor(dtype, shape=(None, None))
        got = run([xt], getattr(tt, name)(xt), v)
        assert got.dtype == dtype and got.shape == v.shape
        np.testing.assert_allclose(got, ref(v.astype("float64")), **tolerance(dtype))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "sigmoid", "erf", "gammaln"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "bool"])
def test_float_unary_on_integers_computes_in_the_upgraded_float(name, dtype):
    ref, _ = FLOAT_UNARY[name]
    x = tt.tensor(dtype, shape=(None,))
    y = getattr(tt, name)(x)
    out_dtype = ref_dtype_of(dtype)
    assert y.dtype == out_dtype
    value = np.array([1, 2, 3, 1], dtype=dtype) if dtype != "bool" else np.array([True, True])
    got = run([x], y, value)
    assert got.dtype == out_dtype
    # computed in float32 (not numpy's float16 for int8) or float64
    np.testing.assert_allclose(got, ref(value.astype("float64")), **tolerance(out_dtype))


@pytest.mark.parametrize("name", sorted(set(FLOAT_UNARY) - NO_GRADIENT))
def test_float_unary_gradient(name):
    _, (low, high) = FLOAT_UNARY[name]
    verify_grad(getattr(tt, name), [points(low, high, (2, 3))], rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "log1p", "softplus"])
def test_float32_gradient_stays_float32(name):
    _, (low, high) = FLOAT_UNARY[name]
    x = tt.fvector("x")
    g = tensorgraph.grad(getattr(tt, name)(x).sum(), x)
    assert g.dtype == "float32"
    verify_grad(getattr(tt, name), [points(low, high, (4,), "float32")],
                rng=np.random.default_rng(0))


def test_tri_gamma_has_no_gradient():
    x = tt.dvector("x")
    with pytest.raises(NotImplementedError, match="tri_gamma"):
        tensorgraph.grad(tt.tri_gamma(x).sum(), x)


# -- numerically delicate functions ------------------------------------------------------------


def test_sigmoid_softplus_do_not_overflow():
    x = tt.dvector("x")
    big = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        s, sp = run([x], [tt.sigmoid(x), tt.softplus(x)], big)
    np.testing.assert_allclose(s, [0.0, scipy.special.expit(-40.0), 0.5,
                                   scipy.special.expit(40.0), 1.0], rtol=1e-15, atol=0)
    assert s[1] > 0  # not flushed to zero by 1 / (1 + inf)
    np.testing.assert_allclose(sp, [0.0, np.exp(-40.0), np.log(2.0), 40.0, 1000.0], rtol=1e-15)
    assert sp[1] > 0  # log1p(exp(-40)) keeps the tiny value


def test_sigmoid_float32_extremes():
    x = tt.fvector("x")
    got = run([x], tt.sigmoid(x), np.array([-200, -88, 88, 200], dtype="float32"))
    assert got.dtype == "float32"
    expected = scipy.special.expit(np.array([-200, -88, 88, 200.0])).astype("float32")
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-44)


def test_log1mexp_accurate_at_both_ends():
    x = tt.dvector("x")
    value = np.array([-1e-20, -1e-10, -0.5, -np.log(2), -2.0, -50.0, 0.0, 1.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        got = run([x], tt.log1mexp(x), value)
    expected = [np.log(1e-20), np.log(-np.expm1(-1e-10)), np.log(-np.expm1(-0.5)),
                np.log(0.5), np.log1p(-np.exp(-2.0)), -np.exp(-50.0), -np.inf, np.nan]
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log1mexp_gradient_at_zero_is_the_limit_from_below(mode, dtype):
    # d/da log(1 - e^a) = -1 / expm1(-a) -> -inf as a -> 0-, at +0.0 as at -0.0; nan above 0
    x = tt.vector("x", dtype=dtype)
    g = tensorgraph.grad(tt.log1mexp(x).sum(), x)
    with np.errstate(divide="ignore", invalid="ignore"):
        got = tensorgraph.function([x], g, mode=mode)(
            np.array([0.0, -0.0, -1.0, 1.0, np.nan], dtype=dtype))
    assert got.dtype == dtype
    assert got[0] == -np.inf and got[1] == -np.inf
    np.testing.assert_allclose(got[2], -1 / np.expm1(1.0), rtol=1e-6)
    assert np.isnan(got[3]) and np.isnan(got[4])


def test_log1mexp_scalar():
    x = tt.dscalar("x")
    got = run([x], tt.log1mexp(x), -3.0)
    assert got.shape == () and np.isclose(got, np.log1p(-np.exp(-3.0)), rtol=1e-15)


# -- arithmetic --------------------------------------------------------------------------------

BINARY = {
    "add": (np.add, lambda a, b: a + b),
    "sub": (np.subtract, lambda a, b: a - b),
    "mul": (np.multiply, lambda a, b: a * b),
    "int_div": (np.floor_divide, lambda a, b: a // b),
    "mod": (np.mod, lambda a, b: a % b),
    "pow": (np.power, lambda a, b: a ** b),
    "maximum": (np.maximum, None),
    "minimum": (np.minimum, None),
}
DTYPE_PAIRS = [("float64", "float64"), ("float32", "float32"), ("int32", "int32"),
               ("int8", "int64"), ("float32", "int16"), ("uint8", "int8"), ("float32", "float64")]


def binary_values(name, dtype_a, dtype_b):
    a = RNG.integers(-9, 10, size=(3, 4)).astype(dtype_a)
    b = RNG.integers(1, 5, size=(3, 4)).astype(dtype_b)
    if name in ("int_div", "mod"):
        b = b * np.where(RNG.random((3, 4)) < 0.5, -1, 1).astype(dtype_b) if b.dtype.kind != "u" else b
    if name == "pow":
        a = np.abs(a) % 4 + (a.dtype.kind == "f") * 0.5
        a = a.astype(dtype_a)
    if a.dtype.kind == "f":
        a = (a + 0.25).astype(dtype_a)
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=lambda d: "-".join(d))
def test_binary_matches_numpy(name, dtypes):
    nfunc, operator = BINARY[name]
    a_val, b_val = binary_values(name, *dtypes)
    a = tt.tensor(dtypes[0], shape=(None, None), name="a")
    b = tt.tensor(dtypes[1], shape=(None, None), name="b")
    outputs = [getattr(tt, name)(a, b)]
    if operator is not None:
        outputs.append(operator(a, b))
    expected = nfunc(a_val, b_val)
    if name != "pow":
        assert outputs[0].dtype == expected.dtype.name
    for got in run([a, b], outputs, a_val, b_val):
        assert got.dtype == outputs[0].dtype
        np.testing.assert_allclose(got, expected.astype(got.dtype), rtol=1e-6)
    # non-contiguous and reversed views
    got = run([a, b], outputs[0], a_val.T.copy().T[::-1], b_val[::-1, ::-1][::-1, ::-1][::-1])
    np.testing.assert_allclose(got, nfunc(a_val[::-1], b_val[::-1]).astype(got.dtype), rtol=1e-6)


def test_int_div_and_mod_follow_numpy_signs():
    a, b = tt.ivectors("a", "b")
    av = np.array([7, -7, 7, -7, 0], dtype="int32")
    bv = np.array([2, 2, -2, -2, 3], dtype="int32")
    q, r = run([a, b], [a // b, a % b], av, bv)
    np.testing.assert_array_equal(q, [3, -4, -4, 3, 0])
    np.testing.assert_array_equal(r, [1, 1, -1, -1, 0])
    np.testing.assert_array_equal(q * bv + r, av)
    x, y = tt.dvectors("x", "y")
    fq, fr = run([x, y], [x // y, x % y], np.array([7.5, -7.5]), np.array([2.0, 2.0]))
    np.testing.assert_array_equal(fq, [3.0, -4.0])
    np.testing.assert_array_equal(fr, [1.5, 0.5])


def test_integer_to_negative_power_raises_like_numpy():
    a, b = tt.ivectors("a", "b")
    f = tensorgraph.function([a, b], a ** b, mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.array([2], "int32"), np.array([-1], "int32"))


def test_abs_sign_sqr_neg():
    x = tt.dvector("x")
    v = np.array([-2.5, -0.0, 0.0, 3.0, np.nan])
    got = run([x], [abs(x), tt.abs(x), tt.abs_(x), tt.sign(x), tt.sqr(x), tt.square(x), -x], v)
    for g, e in zip(got, [np.abs(v)] * 3 + [np.sign(v), v * v, v * v, -v]):
        np.testing.assert_array_equal(g, e)
    i = tt.bvector("i")
    iv = np.array([-128, -3, 0, 5], dtype="int8")
    got = run([i], [abs(i), tt.sign(i), tt.sqr(i)], iv)
    assert [g.dtype for g in got] == ["int8"] * 3
    np.testing.assert_array_equal(got[0], np.abs(iv))  # wraps like numpy: |-128| == -128
    b = tt.vector("b", dtype="bool")
    assert tt.sign(b).dtype == "int8"
    np.testing.assert_array_equal(run([b], tt.sign(b), np.array([True, False])), [1, 0])


def test_abs_of_complex_is_real():
    z = tt.zvector("z")
    assert abs(z).dtype == "float64"
    np.testing.assert_allclose(run([z], abs(z), np.array([3 + 4j, -1j])), [5.0, 1.0])


def test_maximum_minimum_propagate_nan():
    x, y = tt.dvectors("x", "y")
    mx, mn = run([x, y], [tt.maximum(x, y), tt.minimum(x, y)], np.array([np.nan, 1.0]),
                 np.array([0.0, np.nan]))
    assert np.isnan(mx).all() and np.isnan(mn).all()


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1, 2), (None, 0.5), (0.5, None)])
def test_clip_matches_numpy(bounds):
    x = tt.dmatrix("x")
    v = RNG.normal(size=(3, 5))
    np.testing.assert_array_equal(run([x], tt.clip(x, *bounds), v), np.clip(v, *bounds))
    np.testing.assert_array_equal(run([x], x.clip(*bounds), v), np.clip(v, *bounds))


def test_clip_with_tensor_bounds_broadcasts():
    x, lo, hi = tt.dmatrix("x"), tt.dcol("lo"), tt.drow("hi")
    v, lv, hv = RNG.normal(size=(3, 4)), np.full((3, 1), -0.5), np.full((1, 4), 0.5)
    np.testing.assert_array_equal(run([x, lo, hi], tt.clip(x, lo, hi), v, lv, hv),
                                  np.clip(v, lv, hv))


def test_clip_needs_a_bound():
    with pytest.raises(ValueError, match="at least one"):
        tt.clip(tt.dvector(), None, None)


def test_clip_keeps_integer_dtype():
    x = tt.ivector("x")
    y = tt.clip(x, 0, 10)
    assert y.dtype == "int32"
    np.testing.assert_array_equal(run([x], y, np.array([-5, 5, 50], "int32")), [0, 5, 10])


# -- selection ---------------------------------------------------------------------------------


def test_switch_and_where():
    c, a, b = tt.vector("c", dtype="bool"), tt.dvector("a"), tt.fvector("b")
    cv = np.array([True, False, True])
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([-1, -2, -3], "float32")
    s = tt.switch(c, a, b)
    assert s.dtype == "float64"
    for out in run([c, a, b], [s, tt.where(c, a, b)], cv, av, bv):
        np.testing.assert_array_equal(out, np.where(cv, av, bv))


def test_switch_condition_numeric_and_broadcast():
    x = tt.dmatrix("x")
    v = RNG.normal(size=(3, 4))
    got = run([x], tt.switch(x > 0, x, 0), v)
    np.testing.assert_array_equal(got, np.where(v > 0, v, 0))
    got = run([x], tt.switch(x, 1.0, -1.0), np.array([[0.0, 2.0]]))  # non-zero means true
    np.testing.assert_array_equal(got, [[-1.0, 1.0]])


def test_second_and_fill():
    x = tt.dmatrix("x")
    v = np.ones((2, 3))
    out = tt.second(x, 5)
    assert out.dtype == "int8" and out.type.shape == (None, None)
    np.testing.assert_array_equal(run([x], out, v), np.full((2, 3), 5))
    y = tt.dvector("y")
    got = run([x, y], tt.fill(x, y), v, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(got, [[1, 2, 3], [1, 2, 3]])


# -- comparisons and logic ---------------------------------------------------------------------

COMPARISONS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
               "eq": np.equal, "neq": np.not_equal}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int32", "float32"),
                                    ("int8", "uint8"), ("bool", "bool")], ids="-".join)
def test_comparisons(name, dtypes):
    a = tt.tensor(dtypes[0], shape=(None, None), name="a")
    b = tt.tensor(dtypes[1], shape=(None, None), name="b")
    av = RNG.integers(0, 3, size=(3, 4)).astype(dtypes[0])
    bv = RNG.integers(0, 3, size=(3, 4)).astype(dtypes[1])
    out = getattr(tt, name)(a, b)
    assert out.dtype == "bool"
    np.testing.assert_array_equal(run([a, b], out, av, bv), COMPARISONS[name](av, bv))


def test_comparison_operators():
    x = tt.dvector("x")
    v = np.array([0.0, 1.0, 2.0])
    got = run([x], [x < 1, x <= 1, x > 1, x >= 1, 1 < x, 1.0 >= x], v)
    for g, e in zip(got, [v < 1, v <= 1, v > 1, v >= 1, 1 < v, 1.0 >= v]):
        assert g.dtype == bool
        np.testing.assert_array_equal(g, e)


def test_eq_operator_stays_identity():
    x = tt.dvector("x")
    assert (x == x) is True and (x != x) is False
    assert tt.eq(x, x).dtype == "bool"


def test_isnan_isinf_isfinite():
    x = tt.dvector("x")
    v = np.array([0.0, np.nan, np.inf, -np.inf, 1e308])
    got = run([x], [tt.isnan(x), tt.isinf(x), tt.isfinite(x)], v)
    for g, e in zip(got, [np.isnan(v), np.isinf(v), np.isfinite(v)]):
        np.testing.assert_array_equal(g, e)
    i = tt.ivector("i")
    np.testing.assert_array_equal(run([i], tt.isnan(i), np.array([1, 2], "int32")), [0, 0])


@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("int32", "int32"), ("uint8", "int16"),
                                    ("bool", "int8")], ids="-".join)
def test_logic_and_bitwise(dtypes):
    a = tt.tensor(dtypes[0], shape=(None,), name="a")
    b = tt.tensor(dtypes[1], shape=(None,), name="b")
    av = RNG.integers(0, 2 if dtypes[0] == "bool" else 100, size=8).astype(dtypes[0])
    bv = RNG.integers(0, 2 if dtypes[1] == "bool" else 100, size=8).astype(dtypes[1])
    outs = [a & b, a | b, a ^ b, ~a, tt.and_(a, b), tt.or_(a, b), tt.xor(a, b), tt.invert(a)]
    expected = [av & bv, av | bv, av ^ bv, ~av] * 2
    for out, got, e in zip(outs, run([a, b], outs, av, bv), expected):
        assert out.dtype == e.dtype.name
        np.testing.assert_array_equal(got, e)


def test_logic_with_python_bools_and_reflected():
    a = tt.vector("a", dtype="bool")
    av = np.array([True, False])
    got = run([a], [True & a, False | a, True ^ a], av)
    for g, e in zip(got, [True & av, False | av, True ^ av]):
        np.testing.assert_array_equal(g, e)


def test_logic_refuses_floats():
    x = tt.dvector("x")
    with pytest.raises(TypeError, match="bool or integer inputs, got float64"):
        x & x
    with pytest.raises(TypeError, match="compare first"):
        ~x


# -- rounding ----------------------------------------------------------------------------------


def test_rounding_functions():
    x = tt.dvector("x")
    v = np.array([-2.5, -1.5, -0.5, -0.4, 0.0, 0.5, 1.5, 2.5, 2.6, 0.49999999999999994])
    got = run([x], [tt.floor(x), tt.ceil(x), tt.trunc(x), tt.round(x), x.round(),
                    tt.round_half_to_even(x), tt.round(x, mode="half_away_from_zero"),
                    tt.round_half_away_from_zero(x)], v)
    away = [-3, -2, -1, -0, 0, 1, 2, 3, 3, 0]
    for g, e in zip(got, [np.floor(v), np.ceil(v), np.trunc(v), np.round(v), np.round(v),
                          np.round(v), away, away]):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "round_half_away_from_zero"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float32"])
def test_rounding_keeps_dtype(name, dtype):
    x = tt.tensor(dtype, shape=(None,))
    y = getattr(tt, name)(x)
    assert y.dtype == dtype
    v = np.array([-3, 0, 7], dtype=dtype)
    np.testing.assert_array_equal(run([x], y, v), v)


def test_round_unknown_mode():
    with pytest.raises(ValueError, match="half_to_even"):
        tt.round(tt.dvector(), mode="half_up")


def test_rounding_refuses_complex():
    with pytest.raises(TypeError, match="complex"):
        tt.floor(tt.zvector())


# -- gradients ---------------------------------------------------------------------------------


def check_grad(fn, *values):
    verify_grad(fn, [np.asarray(v, dtype="float64") for v in values],
                rng=np.random.default_rng(0))


def test_arithmetic_gradients():
    a = RNG.uniform(0.5, 2.0, size=(2, 3))
    b = RNG.uniform(0.5, 2.0, size=(2, 3))
    check_grad(lambda x, y: x + y, a, b)
    check_grad(lambda x, y: x - y, a, b)
    check_grad(lambda x, y: x * y, a, b)
    check_grad(lambda x, y: x / y, a, b)
    check_grad(lambda x: -x, a)
    check_grad(tt.sqr, a - 1)
    check_grad(abs, a - 1.25)


def test_pow_gradient_base_and_exponent():
    base = RNG.uniform(0.5, 2.0, size=(2, 3))
    expo = RNG.uniform(-1.5, 2.5, size=(2, 3))
    check_grad(lambda x, y: x ** y, base, expo)
    check_grad(lambda x: x ** 3, base - 1.25)  # integer exponent, negative bases
    check_grad(lambda y: 2.0 ** y, expo)


def test_pow_gradient_at_zero_base_is_finite():
    x, y = tt.dvectors("x", "y")
    gx, gy = tensorgraph.grad((x ** y).sum(), [x, y])
    got = run([x, y], [gx, gy], np.array([0.0, 2.0]), np.array([2.0, 3.0]))
    np.testing.assert_allclose(got[0], [0.0, 12.0])
    np.testing.assert_allclose(got[1], [0.0, 8 * np.log(2.0)])


def test_mod_gradient():
    a = np.array([[5.3, -2.7, 1.1]])
    b = np.array([[2.0, 1.5, -0.7]])
    check_grad(lambda x, y: x % y, a, b)


def test_arctan2_gradient():
    check_grad(tt.arctan2, RNG.uniform(0.5, 2, size=(3,)), RNG.uniform(-2, -0.5, size=(3,)))


def test_maximum_minimum_gradient_goes_to_selected_input():
    a = np.array([1.0, 5.0, -2.0, 3.0])
    b = np.array([2.0, 4.0, -3.0, 3.0])  # last one is a tie
    check_grad(tt.maximum, a[:3], b[:3])
    check_grad(tt.minimum, a[:3], b[:3])
    x, y = tt.dvectors("x", "y")
    got = run([x, y], tensorgraph.grad(tt.maximum(x, y).sum(), [x, y])
              + tensorgraph.grad(tt.minimum(x, y).sum(), [x, y]), a, b)
    np.testing.assert_array_equal(got[0], [0, 1, 1, 1])
    np.testing.assert_array_equal(got[1], [1, 0, 0, 0])
    np.testing.assert_array_equal(got[2], [1, 0, 0, 1])
    np.testing.assert_array_equal(got[3], [0, 1, 1, 0])


def test_clip_gradient():
    x, lo, hi = tt.dvectors("x", "lo", "hi")
    xv = np.array([-2.0, 0.5, 3.0])
    gx, glo, ghi = run([x, lo, hi], tensorgraph.grad(tt.clip(x, lo, hi).sum(), [x, lo, hi]),
                       xv, np.zeros(3), np.ones(3))
    np.testing.assert_array_equal(gx, [0, 1, 0])
    np.testing.assert_array_equal(glo, [1, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 1])
    check_grad(lambda v: tt.clip(v, -1.0, 1.0), np.array([-2.0, 0.3, -0.4, 1.7]))


def test_switch_gradient_goes_to_branch_taken():
    c, a, b = tt.dvectors("c", "a", "b")
    cond = np.array([1.0, -1.0, 2.0])
    ga, gb, gc = run([c, a, b], tensorgraph.grad(tt.switch(c > 0, a * 3, b * 5).sum(), [a, b, c]),
                     cond, np.ones(3), np.ones(3))
    np.testing.assert_array_equal(ga, [3, 0, 3])
    np.testing.assert_array_equal(gb, [0, 5, 0])
    np.testing.assert_array_equal(gc, [0, 0, 0])
    check_grad(lambda x, y: tt.switch(x > y, x * y, x + y), np.array([1.0, -1.0, 2.0]),
               np.array([0.5, 0.5, 0.5]))


def test_second_gradient():
    # the model of second(m, v) only gives the shape: it is disconnected (as in PyTensor),
    # so asking for its gradient raises unless disconnected inputs are ignored (zeros)
    m, v = tt.dmatrix("m"), tt.dvector("v")
    cost = (tt.second(m, v) * 2).sum()
    with pytest.raises(tensorgraph.gradient.DisconnectedInputError):
        tensorgraph.grad(cost, [m, v])
    gm, gv = run([m, v], tensorgraph.grad(cost, [m, v], disconnected_inputs="ignore"),
                 np.ones((4, 3)), np.ones(3))
    np.testing.assert_array_equal(gm, np.zeros((4, 3)))
    np.testing.assert_array_equal(gv, [8, 8, 8])


def test_hessian_vector_product_ignores_nan_in_the_seed_shape():
    # the cost's seed fill(cost, 1) reads x only for its shape: a nan x must not leak into
    # a Hessian-vector product that does not depend on x (d2/dx2 of x**2 - y**2)
    from tensorgraph.gradient import hessian_vector_product

    x, y, px, py = (tt.dvector(n) for n in ("x", "y", "px", "py"))
    hx, hy = hessian_vector_product((x ** 2 - y ** 2).sum(), [x, y], [px, py])
    f = tensorgraph.function([x, y, px, py], [hx, hy])
    got = f(np.full(3, np.nan), np.full(3, np.inf), [1.0, 2.0, 3.0], [3.0, 2.0, 1.0])
    np.testing.assert_allclose(got[0], [2, 4, 6])
    np.testing.assert_allclose(got[1], [-6, -4, -2])


@pytest.mark.parametrize("fn", [tt.floor, tt.ceil, tt.trunc, tt.round, tt.round_half_away_from_zero,
                                tt.sign, lambda x: tt.cast(x > 0, "float64"),
                                lambda x: tt.cast(tt.isnan(x), "float64"),
                                lambda x: x // 0.7],
                         ids=["floor", "ceil", "trunc", "round", "round_away", "sign", "gt",
                              "isnan", "int_div"])
def test_piecewise_constant_ops_have_zero_gradient(fn):
    x = tt.dvector("x")
    g = tensorgraph.grad(fn(x).sum(), x)
    assert g.dtype == "float64"
    np.testing.assert_array_equal(run([x], g, np.array([-1.3, 0.2, 2.7])), np.zeros(3))


def test_integer_inputs_get_float_zero_gradients():
    i, x = tt.ivector("i"), tt.dvector("x")
    gi, gx = tensorgraph.grad((tt.exp(i) * x).sum(), [i, x], disconnected_inputs="ignore")
    assert gi.dtype == tensorgraph.config.floatX
    got = run([i, x], [gi, gx], np.array([0, 1], "int32"), np.ones(2))
    np.testing.assert_array_equal(got[0], [0, 0])
    np.testing.assert_allclose(got[1], np.exp([0, 1]))


def test_gradient_sums_over_broadcast_dims():
    check_grad(lambda m, r: tt.maximum(m, r.dimshuffle("x", 0)) * tt.exp(r.dimshuffle("x", 0)),
               RNG.normal(size=(3, 4)), RNG.normal(size=(4,)))
    check_grad(lambda c, v: tt.switch(c > 0, c, v.dimshuffle(0, "x")) ** 2,
               RNG.normal(size=(3, 4)), RNG.normal(size=(3,)))
    m, r = tt.dmatrix("m"), tt.drow("r")
    gr = tensorgraph.grad((tt.sin(m) * r).sum(), r)
    assert gr.type.shape == (1, None)
    mv = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(run([m, r], gr, mv, np.ones((1, 4))), np.sin(mv).sum(0, keepdims=True))


# -- errors ------------------------------------------------------------------------------------


def test_wrong_number_of_arguments():
    with pytest.raises(TypeError, match=r"switch\(cond, ift, iff\) takes 3 arguments, got 2"):
        tt.switch(tt.dvector(), tt.dvector())
    with pytest.raises(TypeError, match=r"exp\(a\) takes 1 argument, got 2"):
        tt.exp(tt.dvector(), tt.dvector())


def test_function_metadata():
    assert tt.exp.__name__ == "exp" and "e ** a" in tt.exp.__doc__
    assert tt.abs is tt.abs_ and tt.expit is tt.sigmoid   # where: numpy's forms, see test_where_forms
    assert tt.log1pexp is tt.softplus and tt.fill is tt.second and tt.floor_div is tt.int_div
    assert str(tt.exp(tt.dvector()).owner.op) == "Elemwise{exp}"
    assert tt.exp(tt.dvector()).owner.op == tt.exp(tt.fvector()).owner.op
