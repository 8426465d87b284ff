"""Creation ops against numpy: alloc, zeros/ones/full and *_like, arange, eye, tri/tril/triu."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor.creation import Alloc, ARange

from op_checks import check_infer_shape, fn

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(0)


def randn(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# alloc, zeros, ones, full


def test_alloc_scalar_and_broadcast_value():
    v = tt.vector("v")
    n = tt.lscalar("n")
    out = tt.alloc(v, n, 3)
    assert isinstance(out.owner.op, Alloc)
    assert out.type.shape == (None, 3)
    w = randn(3)
    np.testing.assert_array_equal(fn([v, n], out)(w, 2), np.broadcast_to(w, (2, 3)))
    check_infer_shape(out, [v, n], [w, 4])
    s = tt.scalar("s")
    np.testing.assert_array_equal(fn([s], tt.alloc(s, 2, 2))(np.asarray(1.5, dtype=s.dtype)),
                                  np.full((2, 2), 1.5, dtype=s.dtype))


def test_alloc_errors():
    v = tt.vector("v")
    f = fn([v], tt.alloc(v, 2, 3))
    with pytest.raises(ValueError, match=r"dimension 0 of the value has size 4, the target 3"):
        f(randn(4))
    with pytest.raises(ValueError, match="broadcastable"):
        f(randn(1))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        tt.alloc(tt.vector("w", shape=(4,)), 2, 3)
    with pytest.raises(ValueError, match="more than"):
        tt.alloc(tt.matrix("m"), 3)
    with pytest.raises(TypeError, match="integer"):
        tt.alloc(v, 2.0, 3)


def test_alloc_result_is_fresh_each_call():
    s = tt.scalar("s")
    f = fn([s], tt.alloc(s, 3))
    a = f(np.asarray(1, dtype=s.dtype))
    f(np.asarray(2, dtype=s.dtype))
    np.testing.assert_array_equal(a, [1, 1, 1])


@pytest.mark.parametrize("dtype", [None, "int32", "float32", "bool"])
def test_zeros_ones_full(dtype):
    n = tt.lscalar("n")
    expected_dtype = dtype or config.floatX
    z, o = tt.zeros((n, 2), dtype=dtype), tt.ones([3, n], dtype=dtype)
    got_z, got_o = fn([n], [z, o])(4)
    np.testing.assert_array_equal(got_z, np.zeros((4, 2), dtype=expected_dtype))
    np.testing.assert_array_equal(got_o, np.ones((3, 4), dtype=expected_dtype))
    assert got_z.dtype == expected_dtype and got_o.dtype == expected_dtype
    assert z.type.shape == (None, 2) and o.type.shape == (3, None)
    assert fn([n], tt.zeros(n, dtype=dtype))(3).shape == (3,)


def test_full_dtypes_and_array_fill():
    f = tt.full((2, 3), 7, dtype="int16")
    assert f.dtype == "int16"
    np.testing.assert_array_equal(f.eval(), np.full((2, 3), 7, dtype="int16"))
    row = tt.vector("row")
    out = tt.full((2, 3), row)
    w = randn(3)
    np.testing.assert_array_equal(fn([row], out)(w), np.full((2, 3), w))
    assert tt.full((2,), 1.5).dtype == config.floatX


def test_like_functions_keep_shape_and_dtype():
    x = tt.matrix("x", dtype="float32", shape=(None, 3))
    v = randn(2, 3, dtype="float32")[::-1]
    z, o, f = tt.zeros_like(x), tt.ones_like(x, dtype="int8"), tt.full_like(x, 2.5)
    assert z.type == x.type and o.type.shape == (None, 3) and o.dtype == "int8"
    got = fn([x], [z, o, f])(v)
    np.testing.assert_array_equal(got[0], np.zeros_like(v))
    np.testing.assert_array_equal(got[1], np.ones_like(v, dtype="int8"))
    np.testing.assert_array_equal(got[2], np.full_like(v, 2.5))
    s = tt.scalar("s")
    assert tt.zeros_like(s).ndim == 0


def test_zeros_of_a_shape_vector():
    x = tt.tensor3("x", shape=(2, None, 4))
    z = tt.zeros(x.shape)
    assert z.type.shape == (2, None, 4)
    assert fn([x], z)(randn(2, 5, 4)).shape == (2, 5, 4)


def test_zeros_of_a_shape_follows_a_rebuilt_input():
    from tensorgraph.graph.basic import clone_replace

    x = tt.vector("x", shape=(5,))
    for make in (tt.zeros, tt.empty, lambda s: tt.full(s, 2.0), lambda s: tt.alloc(1.0, *s)):
        y = make(x.shape)
        assert y.type.shape == (5,)
        x_new = tt.vector("x_new", shape=(8,))
        y_new = clone_replace(y, {x: x_new}, rebuild_strict=False)
        assert y_new.type.shape == (8,)
        assert fn([x_new], y_new)(np.zeros(8, dtype=config.floatX)).shape == (8,)
        # a rebuilt graph with an input of unknown size takes its size at run time
        x_any = tt.vector("x_any")
        y_any = clone_replace(y, {x: x_any}, rebuild_strict=False)
        assert y_any.type.shape == (None,)
        assert fn([x_any], y_any)(np.zeros(3, dtype=config.floatX)).shape == (3,)


def test_alloc_grad_sums_back_to_value_shape():
    verify_grad(lambda v: tt.alloc(v, 4, 3), [randn(3)], rng=RNG)
    verify_grad(lambda s: tt.alloc(s, 2, 3), [randn()], rng=RNG)
    verify_grad(lambda r: tt.alloc(r.dimshuffle("x", 0).T, 3, 5), [randn(3)], rng=RNG)
    verify_grad(lambda x: tt.ones_like(x) * x + tt.zeros_like(x), [randn(2, 2)], rng=RNG)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=4), st.data())
def test_alloc_broadcast_matches_numpy(shape, data):
    value_ndim = data.draw(st.integers(0, len(shape)))
    value_shape = tuple(1 if data.draw(st.booleans()) else s for s in shape[len(shape) - value_ndim:])
    value = np.arange(int(np.prod(value_shape)), dtype="float64").reshape(value_shape)
    v = tt.TensorType("float64", tuple(1 if s == 1 else None for s in value_shape))("v")
    out = fn([v], tt.alloc(v, *shape))(value)
    np.testing.assert_array_equal(out, np.broadcast_to(value, shape))


# ----------------------------------------------------------------------------------------------
# arange


@pytest.mark.parametrize("args", [(5,), (2, 9), (2, 9, 3), (10, 0, -3), (5, 2), (0,)])
def test_arange_ints(args):
    out = tt.arange(*args)
    assert out.dtype == "int64"
    np.testing.assert_array_equal(out.eval(), np.arange(*args))
    assert out.type.shape == (len(np.arange(*args)),)


def test_arange_symbolic_bounds_and_floats():
    a, b = tt.lscalar("a"), tt.lscalar("b")
    r = tt.arange(a, b, 2)
    assert r.dtype == "int64" and r.type.shape == (None,)
    f = fn([a, b], r)
    np.testing.assert_array_equal(f(1, 8), np.arange(1, 8, 2))
    np.testing.assert_array_equal(f(8, 1), np.arange(8, 1, 2))
    check_infer_shape(r, [a, b], [1, 8])
    check_infer_shape(r, [a, b], [8, 1])
    x = tt.scalar("x", dtype="float32")
    with config.change_flags(floatX="float32"):  # Python floats are floatX
        rf = tt.arange(x, 2.0, 0.25)
    assert rf.dtype == "float32"
    np.testing.assert_allclose(fn([x], rf)(np.float32(0.5)), np.arange(0.5, 2.0, 0.25))
    d = tt.dscalar("d")
    assert tt.arange(d).dtype == "float64"
    assert tt.arange(3, dtype="float32").dtype == "float32"
    assert isinstance(rf.owner.op, ARange)


def test_arange_errors():
    s = tt.lscalar("s")
    with pytest.raises(ValueError, match="step"):
        tt.arange(0, 5, 0)
    with pytest.raises(ValueError, match="step"):
        fn([s], tt.arange(0, 5, s))(0)
    with pytest.raises(TypeError, match="scalar"):
        tt.arange(tt.lvector("v"))


def test_arange_grad():
    verify_grad(lambda start, step: tt.arange(start, 3.0, step) ** 2,
                [np.asarray(0.5), np.asarray(0.7)], rng=RNG)


# ----------------------------------------------------------------------------------------------
# eye, identity_like, tri, tril, triu


@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 4, 1), (4, 2, -1), (0, 3, 0)])
def test_eye_and_tri(n, m, k):
    e, t = tt.eye(n, m, k), tt.tri(n, m, k, dtype="int32")
    np.testing.assert_array_equal(e.eval(), np.eye(n, m, k, dtype=config.floatX))
    np.testing.assert_array_equal(t.eval(), np.tri(n, m, k, dtype="int32"))
    assert e.type.shape == (n, n if m is None else m)


def test_eye_symbolic_and_identity_like():
    n = tt.lscalar("n")
    e = tt.eye(n, dtype="int8")
    assert e.dtype == "int8"
    np.testing.assert_array_equal(fn([n], e)(3), np.eye(3, dtype="int8"))
    check_infer_shape(e, [n], [3])
    x = tt.matrix("x")
    v = randn(2, 3)
    np.testing.assert_array_equal(fn([x], tt.identity_like(x))(v), np.eye(2, 3))
    with pytest.raises(ValueError, match="negative"):
        fn([n], e)(-1)


def test_eye_and_tri_ops_default_to_floatx():
    from tensorgraph.tensor.creation import Eye, Tri

    a, b, k = tt.iscalar("a"), tt.iscalar("b"), tt.iscalar("k")
    with config.change_flags(floatX="float32"):
        assert Eye().dtype == Tri().dtype == "float32"
        assert Eye() == Eye("float32") and Eye() != Eye("float64")
    out = Eye()(a, b, k)
    assert out.dtype == config.floatX
    np.testing.assert_array_equal(fn([a, b, k], out)(3, 5, 1), np.eye(3, 5, 1))
    check_infer_shape(out, [a, b, k], [4, 5, 0])
    np.testing.assert_array_equal(fn([a, b, k], Tri()(a, b, k))(3, 4, -1), np.tri(3, 4, -1))


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_triu(k):
    x = tt.tensor3("x")
    v = randn(2, 3, 4)
    lo, up = fn([x], [tt.tril(x, k), tt.triu(x, k)])(v)
    np.testing.assert_array_equal(lo, np.tril(v, k))
    np.testing.assert_array_equal(up, np.triu(v, k))
    verify_grad(lambda a: tt.tril(a, k) + 2 * tt.triu(a, k), [randn(3, 3)], rng=RNG)


def test_arange_dtype_under_numpy_cast_policies_is_numpys():
    start, stop, step = tt.fscalar("start"), tt.fscalar("stop"), tt.fscalar("step")
    with config.change_flags(cast_policy="custom"):
        assert tt.arange(start, stop, step).dtype == "float32"
    with config.change_flags(cast_policy="numpy+floatX", floatX="float64"):
        out = tt.arange(start, stop, step)
        want = np.arange(np.float32(-5), np.float32(1.1), np.float32(1.2))
        assert out.dtype == want.dtype.name == "float64"
        got = tensorgraph.function([start, stop, step], out, mode="FAST_COMPILE",
                                  allow_input_downcast=True)(-5, 1.1, 1.2)
        np.testing.assert_allclose(got, want)
    with config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        assert tt.arange(start, stop, step).dtype == "float32"
        assert tt.arange(tt.dscalar(), stop, step).dtype == "float64"
    with config.change_flags(cast_policy="numpy+floatX"):
        assert tt.arange(tt.iscalar(), 5).dtype == "int64"
