"""The dtype rules of elementwise expressions (documented in docs/dtypes.md): tensor with
tensor promotion, Python numbers per ``cast_policy``, ``int_division``, ``warn_float64``, and
float32 graphs that stay float32 without casts."""

import warnings

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.graph.basic import ancestors

pytestmark = pytest.mark.usefixtures("reference_mode")


def var(dtype):
    return tt.tensor(dtype, shape=(None,))


def run(inputs, outputs, *values):
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE")(*values)


# (dtype a, dtype b) -> dtype of a + b, for each policy and floatX
TENSOR_TABLE = [
    # a, b, custom (any floatX), numpy+floatX with floatX=float32
    ("int8", "int16", "int16", "int16"),
    ("uint8", "int8", "int16", "int16"),
    ("int32", "int64", "int64", "int64"),
    ("bool", "bool", "int8", "int8"),
    ("bool", "int32", "int32", "int32"),
    ("int16", "float32", "float32", "float32"),
    ("int32", "float32", "float64", "float32"),
    ("int64", "float32", "float64", "float32"),
    ("float16", "float32", "float32", "float32"),
    ("float32", "float64", "float64", "float64"),
    ("int8", "float16", "float16", "float16"),
    ("int32", "float16", "float64", "float32"),
    ("float32", "complex64", "complex64", "complex64"),
]


@pytest.mark.parametrize("a, b, custom, numpy_floatx32", TENSOR_TABLE)
def test_tensor_with_tensor(a, b, custom, numpy_floatx32):
    for floatx in ("float32", "float64"):
        with config.change_flags(cast_policy="custom", floatX=floatx):
            assert (var(a) + var(b)).dtype == custom
            assert (var(b) * var(a)).dtype == custom
    with config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        assert (var(a) + var(b)).dtype == numpy_floatx32
        assert (var(b) * var(a)).dtype == numpy_floatx32
    with config.change_flags(cast_policy="numpy+floatX", floatX="float64"):
        assert (var(a) + var(b)).dtype == (np.result_type(a, b).name if a != "bool" else custom)


def test_tensor_promotion_never_looks_at_values():
    # unlike numpy < 2 on 0-d arrays, a scalar int32 tensor upcasts a float32 vector
    assert (tt.fvector() + tt.iscalar()).dtype == "float64"


# (tensor dtype, Python number) -> dtype, for (custom, floatX=float32), (custom, float64),
# (numpy+floatX, float32), (numpy+floatX, float64)
SCALAR_TABLE = [
    ("float32", 2, "float32", "float32", "float32", "float64"),
    ("float32", 2.0, "float32", "float64", "float32", "float64"),
    ("float32", 0.01, "float32", "float64", "float32", "float64"),
    ("float64", 2.0, "float64", "float64", "float64", "float64"),
    ("float16", 2, "float16", "float16", "float32", "float64"),
    ("int8", 2, "int8", "int8", "int64", "int64"),
    ("int8", 1000, "int16", "int16", "int64", "int64"),
    ("int32", 2, "int32", "int32", "int64", "int64"),
    ("int32", 2 ** 40, "int64", "int64", "int64", "int64"),
    ("uint8", 2, "int16", "int16", "int64", "int64"),
    ("int32", 0.5, "float64", "float64", "float32", "float64"),
    ("int8", 0.5, "float32", "float64", "float32", "float64"),
    ("bool", True, "int8", "int8", "int8", "int8"),
]


@pytest.mark.parametrize("dtype, number, c32, c64, n32, n64", SCALAR_TABLE)
def test_tensor_with_python_number(dtype, number, c32, c64, n32, n64):
    for policy, floatx, expected in [("custom", "float32", c32), ("custom", "float64", c64),
                                     ("numpy+floatX", "float32", n32),
                                     ("numpy+floatX", "float64", n64)]:
        with config.change_flags(cast_policy=policy, floatX=floatx):
            x = var(dtype)
            assert (x + number).dtype == expected, (policy, floatx)
            assert (number + x).dtype == expected, (policy, floatx)


def test_numpy_scalars_keep_their_dtype():
    with config.change_flags(floatX="float32"):
        x = tt.fvector()
        assert (x * np.float32(0.5)).dtype == "float32"
        assert (x * np.float64(0.5)).dtype == "float64"
        assert (np.int32(2) * x).dtype == "float64"
        assert (tt.ivector() + np.int8(2)).dtype == "int32"


# -- float functions of integers ---------------------------------------------------------------


@pytest.mark.parametrize("dtype, expected", [("bool", "float32"), ("int8", "float32"),
                                             ("uint16", "float32"), ("int32", "float64"),
                                             ("int64", "float64"), ("float16", "float16"),
                                             ("float32", "float32")])
def test_float_functions_of_integers(dtype, expected):
    for policy in ("custom", "numpy+floatX"):
        with config.change_flags(cast_policy=policy, floatX="float32"):
            for fn in (tt.exp, tt.sqrt, tt.sigmoid, tt.erf, tt.reciprocal):
                assert fn(var(dtype)).dtype == expected


# -- int_division ------------------------------------------------------------------------------


def test_int_division_int_floors():
    a, b = tt.ivectors("a", "b")
    with config.change_flags(int_division="int"):
        q = a / b
    assert q.dtype == "int32"
    np.testing.assert_array_equal(run([a, b], q, np.array([7, -7], "int32"),
                                      np.array([2, 2], "int32")), [3, -4])


@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_int_division_floatx(floatx):
    a, b = tt.ivectors("a", "b")
    with config.change_flags(int_division="floatX", floatX=floatx):
        q = a / b
        q2 = a / 2
    assert q.dtype == floatx and q2.dtype == floatx
    got = run([a, b], [q, q2], np.array([7, -7], "int32"), np.array([2, 2], "int32"))
    np.testing.assert_array_equal(got[0], [3.5, -3.5])
    np.testing.assert_array_equal(got[1], [3.5, -3.5])


def test_int_division_raise():
    a = tt.ivector("a")
    with config.change_flags(int_division="raise"):
        with pytest.raises(TypeError, match="int_division='raise'; use //"):
            a / a
        with pytest.raises(TypeError, match="int_division"):
            3 / a
        assert (a // 2).dtype == "int32"  # floor division is always allowed
        assert (a / 2.0).dtype == "float64"  # a float operand makes it a float division


# -- warn_float64 ------------------------------------------------------------------------------


def test_warn_float64_warns_on_upcasts():
    x, i = tt.fvector("x"), tt.ivector("i")
    with config.change_flags(warn_float64="warn"):
        with pytest.warns(UserWarning, match="float64"):
            x + i
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x + 1
            tt.exp(tt.bvector())


def test_warn_float64_raise():
    x, i = tt.fvector("x"), tt.ivector("i")
    with config.change_flags(warn_float64="raise", floatX="float32"):
        with pytest.raises(TypeError, match="float64"):
            tt.exp(i)
        with pytest.raises(TypeError, match="float64"):
            x * np.float64(2)
        assert (x * 2.0).dtype == "float32"


def test_warn_float64_ignore():
    with config.change_flags(warn_float64="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tt.fvector() + tt.ivector()


# -- float32 graphs stay float32 -----------------------------------------------------------------


def no_float64(*outputs):
    return [v for v in ancestors(outputs) if getattr(v.type, "dtype", None) == "float64"]


def test_float32_expressions_stay_float32():
    with config.change_flags(floatX="float32", warn_float64="raise"):
        x, w = tt.fvector("x"), tt.fmatrix("w")
        exprs = [1 / (1 + tt.exp(-x)), 0.01 * w, w ** 2, w ** 0.5, (w - 1.5) / 3, x % 2.5,
                 tt.maximum(x, 0), tt.switch(x > 0, x, 0.1 * x), tt.clip(x, 1e-7, 1 - 1e-7),
                 -x * tt.log(x) - (1 - x) * tt.log1p(-x), tt.sqrt(x) + tt.sqr(x), abs(x) // 2]
        for e in exprs:
            assert e.dtype == "float32", e
            assert not no_float64(e)


def test_float32_gradients_stay_float32():
    with config.change_flags(floatX="float32", warn_float64="raise"):
        x = tt.fvector("x")
        cost = (tt.sigmoid(x) * 0.5 + x ** 3 + tt.softplus(x) / 7 + tt.maximum(x, 0.1)).sum()
        g = tensorgraph.grad(cost, x)
        assert g.dtype == "float32" and not no_float64(g)


def test_float32_logistic_regression_stays_float32():
    rng = np.random.default_rng(0)
    n, features = 40, 5
    data_x = rng.normal(size=(n, features)).astype("float32")
    data_y = (data_x @ rng.normal(size=features) > 0).astype("float32")
    with config.change_flags(floatX="float32", warn_float64="raise"):
        x, y = tt.matrix("x"), tt.vector("y")
        w = tensorgraph.shared(rng.normal(size=features).astype("float32"), name="w")
        b = tensorgraph.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        prediction = p_1 > 0.5
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tensorgraph.grad(cost, [w, b])
        assert not no_float64(cost, gw, gb)
        train = tensorgraph.function([x, y], [prediction, xent],
                                     updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)],
                                     mode="FAST_COMPILE")
        for _ in range(200):
            pred, err = train(data_x, data_y)
    assert err.dtype == "float32" and w.get_value().dtype == "float32"
    assert np.asarray(b.get_value()).dtype == "float32"
    assert (pred == data_y).mean() > 0.9


@pytest.mark.parametrize("bad", ["float32*/", 'float32"', "%s", "bogus", "float33", ""])
def test_unknown_dtype_strings_raise_naming_the_valid_dtypes(bad):
    for make in (lambda: tt.tensor(dtype=bad, shape=(None,)), lambda: tt.matrix(dtype=bad),
                 lambda: tt.TensorType(bad, (None,)), lambda: tt.vector("v").astype(bad)):
        with pytest.raises(TypeError, match="expected one of bool, int8.*float32.*complex128"):
            make()


def test_tensor_takes_a_name_first_and_a_dtype_by_keyword():
    assert tt.tensor("x", shape=(2,)).name == "x"
    assert tt.tensor("float32", shape=(None,)).dtype == "float32"
    assert tt.tensor(dtype="int8", shape=(None,), name="k").type.dtype == "int8"
    with pytest.raises(TypeError, match="got a dtype twice"):
        tt.tensor("float32", shape=(None,), dtype="float64")


def _int_division_warnings(build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build()
    return [w for w in caught if issubclass(w.category, tt.IntDivisionWarning)]


def test_int_division_int_warns_once_per_user_line():
    """A chi-squared log-density written as ``xlogy(nu / 2 - 1, x)`` with an integer ``nu``
    silently floors under 'int' (issue 31, 5): the user's line gets a warning naming the flag
    and the value that divides as floats."""
    nu, x = tt.lvector("nu"), tt.dvector("x")

    def build():
        for _ in range(3):
            tt.xlogy(nu / 2 - 1, x)  # the same line thrice: one warning

    with config.change_flags(int_division="int"):
        (w,) = _int_division_warnings(build)
        message = str(w.message)
        assert "int_division='floatX'" in message and "config.int_division='int'" in message
        assert "tt.xlogy(nu / 2 - 1, x)" in message
        assert w.filename == __file__ and "xlogy" in open(__file__).read().splitlines()[
            w.lineno - 1]
        assert len(_int_division_warnings(lambda: 1 / nu)) == 1  # another line, another one
        assert not _int_division_warnings(build)  # already warned for that line
        assert not _int_division_warnings(lambda: nu // 2)  # // floors, as asked
        assert not _int_division_warnings(lambda: nu / 2.0)  # a float division
    with config.change_flags(int_division="floatX"):
        assert not _int_division_warnings(lambda: nu / 2)
        f = tensorgraph.function([nu, x], tt.xlogy(nu / 2 - 1, x))
    np.testing.assert_allclose(f(np.array([1, 2, 3]), np.array([0.5, 2.0, 2.0])),
                               [0.5 * np.log(2), 0.0, 0.5 * np.log(2)])
    assert issubclass(tt.IntDivisionWarning, UserWarning)


def test_scalar_int_division_warns_too():
    import tensorgraph.scalar as ts

    i = ts.int32("i")
    with config.change_flags(int_division="int"):
        (w,) = _int_division_warnings(lambda: i / 2)
    assert w.filename == __file__ and ts.IntDivisionWarning is tt.IntDivisionWarning


def test_int_division_inside_tensorgraph_does_not_blame_the_user():
    """Only a ``/`` the user wrote warns, not one of tensorgraph's own code (here: a function
    whose code lives in the package, as a rewrite or a gradient would)."""
    from tensorgraph.tensor import math as tm

    scope = {}
    exec(compile("def halve(a):\n    return a / 2\n", tm.__file__, "exec"), scope)
    a = tt.lvector("a")
    with config.change_flags(int_division="int"):
        assert not _int_division_warnings(lambda: scope["halve"](a))
