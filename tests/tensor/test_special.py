"""``tt.special.softmax``/``log_softmax``/``logsumexp``, ``tt.relu`` and the cross-entropies
against numpy/scipy (axes, dtypes, extreme values), their errors, and their gradients with
``verify_grad``."""

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor.special import LogSoftmax, PutAlongLastAxis, Softmax, TakeAlongLastAxis

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(99)


def run(inputs, outputs, *values):
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE")(*values)


def sym(value, name="x"):
    return tt.tensor(value.dtype.name, shape=(None,) * value.ndim, name=name)


# -- softmax / log_softmax ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2**16),
       data=st.data())
def test_softmax_matches_scipy(name, shape, seed, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    value = np.random.default_rng(seed).normal(scale=3, size=shape)
    x = sym(value)
    got = run([x], getattr(tt.special, name)(x, axis=axis), value)
    np.testing.assert_allclose(got, getattr(scipy.special, name)(value, axis=axis), rtol=1e-12,
                               atol=1e-12)


def test_default_axis_is_the_last_and_ops_are_used():
    value = RNG.normal(size=(3, 4))
    x = sym(value)
    out = tt.special.softmax(x)
    assert isinstance(out.owner.op, Softmax) and out.owner.op.axis == (1,)
    np.testing.assert_allclose(run([x], out, value).sum(axis=1), np.ones(3))
    assert isinstance(tt.special.log_softmax(x, axis=-2).owner.op, LogSoftmax)
    assert tt.special.log_softmax(x, axis=-2).owner.op.axis == (0,)


def test_softmax_is_stable_for_extreme_inputs():
    value = np.array([[1000.0, 1000.0, -1000.0], [-1e4, -1e4 - 1, -np.inf]])
    x = sym(value)
    sm, lsm = run([x], [tt.special.softmax(x), tt.special.log_softmax(x)], value)
    np.testing.assert_allclose(sm, scipy.special.softmax(value, axis=-1))
    np.testing.assert_allclose(lsm, scipy.special.log_softmax(value, axis=-1))
    assert np.isfinite(sm).all() and lsm[1, 2] == -np.inf


def test_softmax_dtypes():
    for dtype, out_dtype in (("float32", "float32"), ("float64", "float64"),
                             ("int8", "float32"), ("int64", "float64")):
        value = RNG.integers(-3, 3, size=(2, 5)).astype(dtype)
        x = sym(value)
        out = tt.special.softmax(x)
        assert out.dtype == out_dtype
        got = run([x], out, value)
        assert got.dtype == out_dtype
        np.testing.assert_allclose(got, scipy.special.softmax(value.astype("float64"), axis=1),
                                   rtol=1e-6)


def test_softmax_non_contiguous_input_and_empty_rows():
    base = RNG.normal(size=(6, 8))
    value = base[::-2, ::3]
    x = sym(value)
    np.testing.assert_allclose(run([x], tt.special.softmax(x, axis=0), value),
                               scipy.special.softmax(value, axis=0))
    assert run([x], tt.special.softmax(x), np.zeros((0, 3))).shape == (0, 3)


def test_softmax_axis_errors_and_infer_shape():
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        tt.special.softmax(tt.matrix("m"), axis=2)
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        tt.special.softmax(tt.matrix("m"), axis=(0, 2))
    with pytest.raises(TypeError, match="axis must be an int or None, or a tuple of ints"):
        tt.special.log_softmax(tt.matrix("m"), axis=(0, 1.5))
    with pytest.raises(ValueError, match="repeated axis"):
        tt.special.log_softmax(tt.matrix("m"), axis=(0, -2))
    out = tt.special.softmax(tt.matrix("m", shape=(2, None)))
    assert out.type.shape == (2, None)
    assert out.owner.op.infer_shape(None, out.owner, [(2, 7)]) == [(2, 7)]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_softmax_gradients(name, axis):
    value = RNG.normal(size=(3, 4))
    verify_grad(lambda x: getattr(tt.special, name)(x, axis=axis), [value],
                rng=np.random.default_rng(0))
    verify_grad(lambda x: getattr(tt.special, name)(x, axis=axis), [value.astype("float32")],
                rng=np.random.default_rng(0))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_second_derivatives(name):
    value = RNG.normal(size=(2, 3))

    def first_grad(x):
        cost = tt.sum(getattr(tt.special, name)(x) * tt.constant(np.arange(6.0).reshape(2, 3)))
        return tensorgraph.grad(cost, x)

    verify_grad(first_grad, [value], rng=np.random.default_rng(0))


def test_softmax_r_op():
    x, v = tt.matrix("x"), tt.matrix("v")
    xv, vv = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    sm = scipy.special.softmax(xv, axis=1)
    expected = {"softmax": sm * (vv - (vv * sm).sum(axis=1, keepdims=True)),
                "log_softmax": vv - (vv * sm).sum(axis=1, keepdims=True)}
    for name, want in expected.items():
        rop = tensorgraph.gradient.Rop(getattr(tt.special, name)(x), x, v)
        np.testing.assert_allclose(run([x, v], rop, xv, vv), want)


# -- relu -----------------------------------------------------------------------------------


def test_relu_and_leaky_relu():
    value = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], dtype="float32")
    x = sym(value)
    for alpha in (0, 0.1):
        out = tt.relu(x, alpha)
        assert out.dtype == "float32"
        np.testing.assert_allclose(run([x], out, value), np.where(value > 0, value, alpha * value))
    a = tt.scalar("a", dtype="float32")
    np.testing.assert_allclose(run([x, a], tt.relu(x, a), value, np.float32(0.2)),
                               np.where(value > 0, value, 0.2 * value))
    xi = tt.vector("xi", dtype="int32")
    assert tt.relu(xi).dtype == "int32"
    assert run([xi], tt.relu(xi), np.array([-1, 2], dtype="int32")).tolist() == [0, 2]


@pytest.mark.parametrize("alpha", [0, 0.3])
def test_relu_gradient(alpha):
    value = RNG.uniform(0.2, 2, size=(3, 4)) * RNG.choice([-1, 1], size=(3, 4))
    verify_grad(lambda x: tt.relu(x, alpha), [value], rng=np.random.default_rng(0))


# -- cross-entropies ------------------------------------------------------------------------


def probabilities(shape):
    p = RNG.uniform(0.1, 1, size=shape)
    return p / p.sum(axis=-1, keepdims=True)


def test_categorical_crossentropy_with_labels_and_with_distributions():
    p = probabilities((4, 5))
    labels = np.array([0, 4, 2, 2])
    one_hot = np.eye(5)[labels]
    coding, y, t = sym(p, "p"), tt.vector("y", dtype="int64"), sym(one_hot, "t")
    want = -np.log(p[np.arange(4), labels])
    np.testing.assert_allclose(run([coding, y], tt.categorical_crossentropy(coding, y), p,
                                   labels), want)
    np.testing.assert_allclose(run([coding, t], tt.categorical_crossentropy(coding, t), p,
                                   one_hot), want)
    soft = probabilities((4, 5))
    np.testing.assert_allclose(run([coding, t], tt.categorical_crossentropy(coding, t), p, soft),
                               -(soft * np.log(p)).sum(axis=1))


def test_categorical_crossentropy_float32_and_3d():
    p = probabilities((2, 3, 4)).astype("float32")
    labels = RNG.integers(0, 4, size=(2, 3)).astype("int32")
    coding, y = sym(p, "p"), sym(labels, "y")
    out = tt.categorical_crossentropy(coding, y)
    assert out.dtype == "float32" and out.type.ndim == 2
    want = -np.log(np.take_along_axis(p, labels[..., None], axis=-1)[..., 0])
    np.testing.assert_allclose(run([coding, y], out, p, labels), want, rtol=1e-6)


def test_categorical_crossentropy_errors():
    coding, y = tt.matrix("p"), tt.vector("y", dtype="int64")
    with pytest.raises(IndexError, match="label 5 is out of range for 5 classes"):
        run([coding, y], tt.categorical_crossentropy(coding, y), probabilities((2, 5)),
            np.array([0, 5]))
    with pytest.raises(ValueError, match=r"labels of shape \(3,\) do not match"):
        run([coding, y], tt.categorical_crossentropy(coding, y), probabilities((2, 5)),
            np.array([0, 1, 2]))
    with pytest.raises(TypeError, match="labels must be integers"):
        tt.categorical_crossentropy(coding, tt.vector("f"))
    with pytest.raises(TypeError, match="one dimension less"):
        tt.categorical_crossentropy(coding, tt.scalar("s", dtype="int64"))


def test_categorical_crossentropy_gradients():
    p = probabilities((4, 5))
    labels = tt.constant(np.array([0, 4, 2, 2]))
    verify_grad(lambda c: tt.categorical_crossentropy(c, labels), [p],
                rng=np.random.default_rng(0))
    verify_grad(lambda c, t: tt.categorical_crossentropy(c, t), [p, probabilities((4, 5))],
                rng=np.random.default_rng(0))
    # the usual classifier: cross-entropy of a softmax, differentiated twice
    verify_grad(lambda z: tensorgraph.grad(
        tt.sum(tt.categorical_crossentropy(tt.special.softmax(z), labels)), z),
        [RNG.normal(size=(4, 5))], rng=np.random.default_rng(0))


def test_take_and_put_along_last_axis_are_each_others_gradient():
    value = RNG.normal(size=(3, 4))
    labels = np.array([3, 0, 1])
    x, y = sym(value), tt.vector("y", dtype="int64")
    taken = TakeAlongLastAxis()(x, y)
    np.testing.assert_array_equal(run([x, y], taken, value, labels), value[np.arange(3), labels])
    g = tensorgraph.grad(tt.sum(taken * tt.constant(np.array([1.0, 2.0, 3.0]))), x)
    expected = np.zeros((3, 4))
    expected[np.arange(3), labels] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(run([x, y], g, value, labels), expected)
    verify_grad(lambda v: PutAlongLastAxis()(v, tt.constant(labels), tt.constant(value)),
                [RNG.normal(size=3)], rng=np.random.default_rng(0))
    node = taken.owner
    assert node.op.infer_shape(None, node, [(3, 4), (3,)]) == [(3,)]


def test_binary_crossentropy():
    out_v = RNG.uniform(0.05, 0.95, size=(3, 4))
    target_v = RNG.integers(0, 2, size=(3, 4)).astype("float64")
    o, t = sym(out_v, "o"), sym(target_v, "t")
    want = -(target_v * np.log(out_v) + (1 - target_v) * np.log(1 - out_v))
    np.testing.assert_allclose(run([o, t], tt.binary_crossentropy(o, t), out_v, target_v), want)
    ti = tt.matrix("ti", dtype="int8")
    of = tt.matrix("of", dtype="float32")
    assert tt.binary_crossentropy(of, ti).dtype == "float32"
    verify_grad(tt.binary_crossentropy, [out_v, RNG.uniform(0, 1, size=(3, 4))],
                rng=np.random.default_rng(0))
