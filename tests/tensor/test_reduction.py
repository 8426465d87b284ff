"""Reductions of ``tt`` (sum, prod, max, min, all, any, argmax, argmin, mean, var, std,
logsumexp) against numpy/scipy: axes (None, ints, negatives, tuples), keepdims, dtypes,
zero-size axes, non-contiguous inputs; gradients with ``verify_grad``."""

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor import reduction

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(20240)


def run(inputs, outputs, *values):
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE")(*values)


def sym(value, name="x"):
    """A symbolic input of ``value``'s dtype and ndim (no static sizes)."""
    return tt.tensor(value.dtype.name, shape=(None,) * value.ndim, name=name)


def check(fn, np_fn, value, **kwargs):
    x = sym(value)
    out = fn(x, **kwargs)
    got = run([x], out, value)
    want = np.asarray(np_fn(value, **kwargs))
    assert got.shape == want.shape
    assert got.dtype == np.dtype(out.dtype)
    if want.dtype.kind in "fc":
        rtol = 1e-5 if value.dtype in (np.float32, np.int8) else 1e-10
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)
    return got


@st.composite
def shapes_and_axes(draw, min_dims=0, max_dims=4):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=max_dims)))
    ndim = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-ndim, ndim - 1))
    else:
        chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
        axis = tuple(a - ndim if draw(st.booleans()) else a for a in chosen)
    return shape, axis


SIMPLE = {
    "sum": (tt.sum, np.sum), "prod": (tt.prod, np.prod), "max": (tt.max, np.max),
    "min": (tt.min, np.min), "all": (tt.all, np.all), "any": (tt.any, np.any),
    "mean": (tt.mean, np.mean),
}


@pytest.mark.parametrize("name", sorted(SIMPLE))
@settings(max_examples=30, deadline=None)
@given(shape_axis=shapes_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_reduction_matches_numpy(name, shape_axis, keepdims, seed):
    shape, axis = shape_axis
    value = np.random.default_rng(seed).uniform(-2, 2, size=shape)
    if name in ("all", "any"):
        value = np.round(value)  # some zeros
    fn, np_fn = SIMPLE[name]
    check(fn, np_fn, value, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["var", "std"])
@settings(max_examples=30, deadline=None)
@given(shape_axis=shapes_and_axes(), keepdims=st.booleans(), ddof=st.integers(0, 1),
       seed=st.integers(0, 2**16))
def test_var_std_match_numpy(name, shape_axis, keepdims, ddof, seed):
    shape, axis = shape_axis
    value = np.random.default_rng(seed).normal(size=shape)
    n = int(np.prod([shape[a] for a in reduction.normalize_axis(axis, len(shape))]))
    if n - ddof <= 0:
        ddof = 0
    check(getattr(tt, name), getattr(np, name), value, axis=axis, ddof=ddof, keepdims=keepdims)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), keepdims=st.booleans(),
       seed=st.integers(0, 2**16), data=st.data())
def test_argmax_argmin_match_numpy(name, shape, keepdims, seed, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    value = np.random.default_rng(seed).integers(-3, 3, size=shape).astype("float64")
    got = check(getattr(tt, name), getattr(np, name), value, axis=axis, keepdims=keepdims)
    assert got.dtype == np.int64


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_over_several_axes_flattens_them(name):
    value = RNG.normal(size=(3, 4, 5))
    x = sym(value)
    got = run([x], getattr(tt, name)(x, axis=(0, 2)), value)
    flat = value.transpose(1, 0, 2).reshape(4, 15)
    np.testing.assert_array_equal(got, getattr(np, name)(flat, axis=1))
    got = run([x], getattr(tt, name)(x, axis=(-1, 0), keepdims=True), value)
    assert got.shape == (1, 4, 1)


def test_ties_resolve_to_the_first_index():
    value = np.array([[1.0, 3.0, 3.0], [0.0, 0.0, -1.0]])
    x = sym(value)
    np.testing.assert_array_equal(run([x], tt.argmax(x, axis=1), value), [1, 0])
    assert run([x], tt.argmin(x), value) == 5


@pytest.mark.parametrize("fn", [tt.sum, tt.prod, tt.max, tt.mean, tt.argmax, tt.any])
def test_non_contiguous_and_negative_stride_inputs(fn):
    base = RNG.normal(size=(6, 8))
    np_fn = getattr(np, fn.__name__)
    for value in (base[::-1, ::2], base.T, base[1::2, ::-3]):
        check(fn, np_fn, value, axis=0)
        check(fn, np_fn, value, axis=None)


# -- dtypes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, expected", [
    ("bool", "int64"), ("int8", "int64"), ("int16", "int64"), ("int32", "int64"),
    ("int64", "int64"), ("uint8", "uint64"), ("uint32", "uint64"), ("float32", "float32"),
    ("float64", "float64"), ("complex64", "complex64"),
])
@pytest.mark.parametrize("fn", [tt.sum, tt.prod])
def test_sum_prod_output_dtypes_follow_numpy(fn, dtype, expected):
    value = RNG.integers(0, 3, size=(3, 4)).astype(dtype)
    x = sym(value)
    assert fn(x).dtype == expected
    np_fn = getattr(np, fn.__name__)
    assert np.asarray(np_fn(value)).dtype == expected
    check(fn, np_fn, value, axis=1)


def test_int8_sum_does_not_overflow():
    value = np.full(100, 100, dtype="int8")
    x = sym(value)
    assert run([x], tt.sum(x), value) == 10000


def test_float32_sum_accumulates_wide_but_stays_float32():
    x = tt.vector("x", dtype="float32")
    out = tt.sum(x)
    assert out.dtype == "float32"
    assert out.owner.op.acc_dtype == "float64"
    value = np.full(10**6, 0.1, dtype="float32")
    assert abs(run([x], out, value) - np.float32(0.1) * 10**6) < 1e-3


def test_dtype_and_acc_dtype_arguments():
    value = np.array([100, 100, 100], dtype="int8")
    x = sym(value)
    out = tt.sum(x, dtype="int16")
    assert out.dtype == "int16" and run([x], out, value) == 300
    assert tt.sum(x, dtype="float32").dtype == "float32"
    assert tt.sum(x, acc_dtype="int32").owner.op.acc_dtype == "int32"
    with pytest.raises(TypeError, match="acc_dtype=int8 cannot hold every int16"):
        tt.sum(tt.vector(dtype="int16"), acc_dtype="int8")


def test_mean_keeps_float32_and_gives_float64_for_integers():
    xf = tt.matrix("xf", dtype="float32")
    out = tt.mean(xf, axis=0)
    assert out.dtype == "float32"
    value = RNG.normal(size=(5, 3)).astype("float32")
    got = run([xf], out, value)
    assert got.dtype == np.float32
    # float32 sums of values of both signs cancel: compare with an absolute tolerance too
    np.testing.assert_allclose(got, value.mean(axis=0), rtol=1e-6, atol=1e-6)
    assert tt.mean(tt.vector(dtype="float16")).dtype == "float16"
    xi = tt.vector("xi", dtype="int32")
    assert tt.mean(xi).dtype == "float64"
    assert run([xi], tt.mean(xi), np.array([1, 2], dtype="int32")) == 1.5
    assert tt.mean(xf, dtype="float64").dtype == "float64"
    # an integer dtype is the sum's (PyTensor's meaning): the mean of the int32 sum, in float64
    as_ints = tt.mean(xf, dtype="int32")
    assert as_ints.dtype == "float64"
    assert run([xf], as_ints, np.array([[1.5, 2.5]], dtype="float32")) == 2.0   # int32(4.0) / 2
    assert tt.mean(xi, dtype="bool").dtype == "float64"


def test_mean_divides_by_the_runtime_length_or_the_static_one():
    dynamic = tt.matrix("d")
    static = tt.matrix("s", shape=(2, 3))
    value = np.arange(6.0).reshape(2, 3)
    for x in (dynamic, static):
        np.testing.assert_allclose(run([x], tt.mean(x, axis=1), value), [1.0, 4.0])
    assert run([static], tt.var(static), value) == pytest.approx(value.var())


def test_reductions_are_methods_of_tensor_variables():
    value = RNG.normal(size=(3, 4))
    x = sym(value)
    outs = [x.sum(axis=0), x.prod(), x.mean(keepdims=True), x.var(ddof=1), x.std(axis=1),
            x.max(axis=-1), x.min(), x.argmax(axis=0), x.argmin(), x.all(), x.any(axis=1)]
    got = tensorgraph.function([x], outs, mode="FAST_COMPILE")(value)
    wants = [value.sum(axis=0), value.prod(), value.mean(keepdims=True), value.var(ddof=1),
             value.std(axis=1), value.max(axis=-1), value.min(), value.argmax(axis=0),
             value.argmin(), value.all(), value.any(axis=1)]
    for g, w in zip(got, wants):
        np.testing.assert_allclose(g, w)


# -- logsumexp ------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(shape_axis=shapes_and_axes(min_dims=1, max_dims=3), keepdims=st.booleans(),
       seed=st.integers(0, 2**16))
def test_logsumexp_matches_scipy(shape_axis, keepdims, seed):
    shape, axis = shape_axis
    value = np.random.default_rng(seed).normal(scale=3, size=shape)
    check(tt.logsumexp, scipy.special.logsumexp, value, axis=axis, keepdims=keepdims)


def test_logsumexp_is_stable_and_handles_infinities():
    value = np.array([[1000.0, 1000.0], [-1000.0, -1001.0], [-np.inf, 0.0], [-np.inf, -np.inf]])
    x = sym(value)
    with np.errstate(divide="ignore"):
        got = run([x], tt.logsumexp(x, axis=1), value)
        np.testing.assert_allclose(got, scipy.special.logsumexp(value, axis=1))
    assert got[-1] == -np.inf
    xf = tt.vector("xf", dtype="float32")
    assert tt.logsumexp(xf).dtype == "float32"
    assert tt.special.logsumexp is tt.logsumexp


# -- zero-size axes -----------------------------------------------------------------------


def test_zero_size_axes_behave_like_numpy():
    value = np.zeros((0, 3))
    x = sym(value)
    np.testing.assert_array_equal(run([x], tt.sum(x, axis=0), value), np.zeros(3))
    np.testing.assert_array_equal(run([x], tt.prod(x, axis=0), value), np.ones(3))
    assert run([x], tt.all(x), value) and not run([x], tt.any(x), value)
    assert run([x], tt.max(x, axis=1), value).shape == (0,)  # nothing is reduced: fine
    with pytest.raises(ValueError, match=r"max over axes \(0,\) of an array of shape \(0, 3\)"):
        run([x], tt.max(x, axis=0), value)
    with pytest.raises(ValueError, match="zero-size axis has no argmin"):
        run([x], tt.argmin(x), value)


# -- bad arguments --------------------------------------------------------------------------


def test_bad_axes_are_reported():
    x = tt.matrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        tt.sum(x, axis=2)
    with pytest.raises(ValueError, match="axis -3 is out of bounds for array of dimension 2"):
        tt.max(x, axis=-3)
    with pytest.raises(ValueError, match=r"repeated axis 1"):
        tt.sum(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis must be None, an int or a tuple"):
        tt.prod(x, axis=1.0)
    with pytest.raises(ValueError, match="0-d tensor"):
        tt.sum(tt.scalar("s"), axis=1)
    with pytest.raises(ValueError, match="ddof must be a non-negative int"):
        tt.var(x, ddof=-1)


# -- static shapes and infer_shape ----------------------------------------------------------


def test_static_shapes_and_infer_shape():
    x = tt.tensor("float64", shape=(2, None, 4), name="x")
    assert tt.sum(x, axis=1).type.shape == (2, 4)
    assert tt.max(x, axis=(0, 2), keepdims=True).type.shape == (1, None, 1)
    assert tt.argmax(x, axis=-1).type.shape == (2, None)
    for out in (tt.sum(x, axis=(0, 2)), tt.all(x, axis=1), tt.argmin(x, axis=0)):
        node = out.owner
        assert node.op.infer_shape(None, node, [(2, 7, 4)]) == [
            tuple(s for d, s in enumerate((2, 7, 4)) if d not in node.op.axis)]


def test_ops_compare_by_props():
    assert reduction.Sum((0,), "int64", "int64") == reduction.Sum((0,), "int64", "int64")
    assert reduction.Sum((0,)) != reduction.Sum((1,))
    assert reduction.Max((0, 1)) == reduction.Max([1, 0])
    assert str(reduction.Sum((1,))) == "Sum{axis=(1,)}"


# -- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda x: tt.sum(x),
    lambda x: tt.sum(x, axis=1),
    lambda x: tt.sum(x, axis=(0, 2), keepdims=True),
    lambda x: tt.prod(x, axis=-1),
    lambda x: tt.prod(x, axis=(0, 1)),
    lambda x: tt.max(x, axis=1),
    lambda x: tt.min(x, axis=(0, 2), keepdims=True),
    lambda x: tt.mean(x, axis=0),
    lambda x: tt.var(x, axis=2, ddof=1),
    lambda x: tt.std(x, axis=(1, 2)),
    lambda x: tt.logsumexp(x, axis=1),
    lambda x: tt.logsumexp(x, keepdims=True),
], ids=["sum", "sum1", "sum02k", "prod", "prod01", "max", "min02k", "mean", "var", "std",
        "lse", "lse_all"])
def test_gradients(fn):
    value = RNG.uniform(0.5, 1.5, size=(2, 3, 4)) * RNG.choice([-1, 1], size=(2, 3, 4))
    verify_grad(fn, [value], rng=np.random.default_rng(0))


def test_float32_gradients():
    value = RNG.uniform(0.5, 1.5, size=(3, 4)).astype("float32")
    for fn in (tt.sum, tt.prod, tt.max, tt.mean, tt.logsumexp):
        verify_grad(lambda x: fn(x, axis=1), [value], rng=np.random.default_rng(0))
    x = tt.matrix("x", dtype="float32")
    for fn in (tt.sum, tt.prod, tt.max, tt.mean, tt.var):
        assert tensorgraph.grad(fn(x), x).dtype == "float32"


def test_prod_gradient_is_exact_with_zeros():
    value = np.array([[2.0, 0.0, 3.0, 4.0],   # one zero: its gradient is the product of others
                      [0.0, 1.5, 0.0, 2.0],   # two zeros: all gradients are zero
                      [1.0, -2.0, 0.5, 3.0]])  # no zero
    verify_grad(lambda x: tt.prod(x, axis=1), [value], rng=np.random.default_rng(0))
    x = sym(value)
    g = run([x], tensorgraph.grad(tt.sum(tt.prod(x, axis=1)), x), value)
    np.testing.assert_allclose(g[0], [0, 24, 0, 0])
    np.testing.assert_allclose(g[1], [0, 0, 0, 0])
    np.testing.assert_allclose(g[2], value[2].prod() / value[2])


def test_max_gradient_goes_to_every_tied_position():
    value = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    x = sym(value)
    g = run([x], tensorgraph.grad(tt.sum(tt.max(x, axis=1)), x), value)
    np.testing.assert_array_equal(g, [[0, 1, 1], [1, 0, 0]])


def test_non_differentiable_reductions_give_zero_gradients():
    x = tt.matrix("x")
    value = RNG.normal(size=(2, 3))
    for fn in (tt.argmax, tt.argmin, tt.all, tt.any):
        out = fn(x, axis=0)
        (g,) = out.owner.op.L_op([out.owner.inputs[0]], out.owner.outputs,
                                 [tt.zeros_like(out, dtype="float64")])
        np.testing.assert_array_equal(run([x], g, value), np.zeros_like(value))


def test_integer_inputs_get_float_zero_gradients():
    xi = tt.vector("xi", dtype="int32")
    out = tt.sum(xi)
    (g,) = out.owner.op.L_op([xi], [out], [tt.constant(1.0)])
    assert g.dtype == tensorgraph.config.floatX
    np.testing.assert_array_equal(run([xi], g, np.array([1, 2], dtype="int32")), [0, 0])


def test_elemwise_broadcast_gradient_sums_back():
    row, mat = tt.row("r"), tt.matrix("m")
    g = tensorgraph.grad(tt.sum(row * mat), row)
    rv, mv = RNG.normal(size=(1, 3)), RNG.normal(size=(4, 3))
    np.testing.assert_allclose(run([row, mat], g, rv, mv), mv.sum(axis=0, keepdims=True))


def test_r_op_of_sum_and_max():
    x, v = tt.matrix("x"), tt.matrix("v")
    value, direction = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    for fn, expected in ((lambda a: tt.sum(a, axis=0), direction.sum(axis=0)),
                         (lambda a: tt.max(a, axis=1),
                          direction[np.arange(3), value.argmax(axis=1)])):
        rop = tensorgraph.gradient.Rop(fn(x), x, v)
        f = tensorgraph.function([x, v], rop, mode="FAST_COMPILE", on_unused_input="ignore")
        np.testing.assert_allclose(f(value, direction), expected)


def test_reduction_ops_take_an_int_or_none_axis():
    """Prod(axis=1), Sum(None): PyTensor code builds the ops so; the node's op gets the tuple."""
    from tensorgraph.tensor.reduction import Argmax, Max, Prod, Sum

    x = tt.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3) + 1
    assert Prod(axis=1)(x).owner.op == Prod((1,))
    assert Sum(None)(x).owner.op == Sum((0, 1))
    np.testing.assert_allclose(run([x], Prod(axis=1)(x), value), value.prod(1))
    np.testing.assert_allclose(run([x], Max(0)(x), value), value.max(0))
    assert int(run([x], Argmax(None)(x), value)) == 5


def test_axes_given_as_0d_arrays_or_constants():
    x = tt.dtensor3("x")
    v = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(tt.sum(x, axis=[np.array(0), np.array(2)]).eval({x: v}),
                               v.sum(axis=(0, 2)))
    np.testing.assert_allclose(tt.max(x, axis=(np.int64(1), tt.constant(2))).eval({x: v}),
                               v.max(axis=(1, 2)))
    with pytest.raises(TypeError, match="axis must be None, an int or a tuple of ints"):
        tt.sum(x, axis=[np.array([0, 1])])


@pytest.mark.parametrize("axis", [0, -1, (0,), (-1,)])
def test_axis_0_or_minus_1_of_a_0d_tensor_names_the_tensor_itself(axis):
    # numpy: np.sum(np.float64(5), axis=-1) == 5 and np.squeeze(a0d, axis=0) works; a
    # reduction or squeeze over "the last axis" written for n-d code runs on scalars too
    x = tt.scalar("x")
    outs = [tt.sum(x, axis=axis), tt.max(x, axis=axis), tt.mean(x, axis=axis),
            tt.squeeze(x, axis=axis), tt.argmax(x, axis=axis),
            reduction.CAReduce(tensorgraph.scalar.add, axis=axis)(x)]
    for out in outs:
        assert out.ndim == 0
    values = tensorgraph.function([x], outs)(5.0)
    assert [float(v) for v in values] == [5.0, 5.0, 5.0, 5.0, 0.0, 5.0]


@pytest.mark.parametrize("make", [lambda x: tt.sum(x, axis=1), lambda x: tt.squeeze(x, axis=-2),
                                  lambda x: tt.max(x, axis=(0, 1))])
def test_other_axes_of_a_0d_tensor_are_refused_naming_them(make):
    with pytest.raises(np.exceptions.AxisError, match=r"axis \(.*\) is out of bounds for array "
                                                      r"of dimension 0"):
        make(tt.scalar("x"))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_all_and_any_of_complex_numbers_test_nonzero(mode, dtype):
    # numpy's truth of a complex number: nonzero (a purely imaginary one is true)
    value = np.array([[1j, 0], [2 + 0j, np.nan], [0, 0]], dtype=dtype)
    x = tt.tensor(dtype, shape=(None, None), name="x")
    f = tensorgraph.function([x], [tt.all(x, axis=1), tt.any(x, axis=1), tt.all(x)], mode=mode)
    for got, want in zip(f(value), [np.all(value, axis=1), np.any(value, axis=1),
                                    np.all(value)]):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want)


def test_careduce_str_names_scalar_op_and_axes():
    from tensorgraph.scalar import basic as ps

    assert str(reduction.CAReduce(ps.add, axis=None)) == "CAReduce{add, axes=None}"
    assert str(reduction.CAReduce(ps.add, axis=(1,))) == "CAReduce{add, axis=1}"
    node = reduction.CAReduce(ps.mul, axis=None)(tt.matrix()).owner
    assert str(node.op) == "CAReduce{mul, axes=[0, 1]}"   # the node's op has the axes
