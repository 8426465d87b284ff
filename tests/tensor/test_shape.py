"""Shape ops against numpy: shape, Shape_i, reshape, flatten, squeeze, expand_dims,
specify_shape, padding and transpose, with their static types, infer_shape and gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape

from op_checks import check_infer_shape, fn

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(0)


def randn(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# shape, shape_i


def test_shape_values_and_type():
    x = tt.tensor3("x")
    s = x.shape
    assert isinstance(s.owner.op, Shape)
    assert s.type == tt.TensorType("int64", (3,))
    v = randn(2, 3, 4)
    np.testing.assert_array_equal(fn([x], s)(v), [2, 3, 4])
    assert fn([x], s)(v).dtype == np.int64
    assert int(fn([x], x.shape[1])(v)) == 3


def test_shape_i_is_constant_when_static():
    x = tt.matrix("x", shape=(4, None))
    assert isinstance(tt.shape_i(x, 0), tt.TensorConstant)
    assert int(tt.shape_i(x, 0).data) == 4
    s1 = tt.shape_i(x, -1)
    assert isinstance(s1.owner.op, Shape_i) and s1.owner.op.i == 1
    assert int(fn([x], s1)(randn(4, 7))) == 7
    with pytest.raises(IndexError, match="out of range"):
        tt.shape_i(x, 2)


def test_shape_is_not_differentiable():
    x = tt.vector("x")
    cost = tt.sum(x) + tt.cast(x.shape[0], "float64")
    g = tensorgraph.grad(cost, x)
    np.testing.assert_allclose(fn([x], g)(randn(3)), np.ones(3))


# ----------------------------------------------------------------------------------------------
# reshape


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("newshape", [(12,), (3, 4), (-1, 2), (2, -1, 3), (1, 12, 1), (-1,)])
def test_reshape_constant_shape(dtype, newshape):
    x = tt.matrix("x", dtype=dtype)
    y = x.reshape(newshape)
    v = np.arange(12).reshape(4, 3).astype(dtype)
    out = fn([x], y)(v)
    np.testing.assert_array_equal(out, v.reshape(newshape))
    assert out.dtype == dtype
    assert y.type.shape == tuple(None if s == -1 else s for s in newshape)
    check_infer_shape(y, [x], [v])


def test_reshape_non_contiguous_input():
    x = tt.matrix("x")
    v = randn(4, 6)[::-1, ::2]
    np.testing.assert_array_equal(fn([x], x.reshape((3, 4)))(v), v.reshape(3, 4))
    np.testing.assert_array_equal(fn([x], x.T.reshape((-1,)))(v), v.T.reshape(-1))


def test_reshape_symbolic_shape():
    x, y = tt.matrix("x"), tt.tensor3("y")
    n = tt.lscalar("n")
    v = randn(2, 6)
    out = fn([x, n], x.reshape((n, -1)))(v, 3)
    np.testing.assert_array_equal(out, v.reshape(3, -1))
    # the shape of another tensor
    w = randn(3, 2, 2)
    np.testing.assert_array_equal(fn([x, y], tt.reshape(x, y.shape))(v.ravel()[:12].reshape(2, 6),
                                                                      w), v.reshape(3, 2, 2))
    # a vector of unknown length needs ndim
    s = tt.lvector("s")
    with pytest.raises(ValueError, match="ndim"):
        tt.reshape(x, s)
    r = tt.reshape(x, s, ndim=2)
    np.testing.assert_array_equal(fn([x, s], r)(v, np.array([4, 3])), v.reshape(4, 3))
    check_infer_shape(r, [x, s], [v, np.array([-1, 4])])
    check_infer_shape(x.reshape((n, -1)), [x, n], [v, 3])


def test_reshape_static_shape_inference():
    x = tt.matrix("x", shape=(2, 6))
    assert x.reshape((3, -1)).type.shape == (3, 4)
    assert x.reshape((-1,)).type.shape == (12,)
    n = tt.lscalar("n")
    assert x.reshape((n, 4)).type.shape == (3, 4)  # n can only be 3
    assert x.reshape((n, -1)).type.shape == (None, None)
    y = tt.matrix("y")
    assert y.reshape((5, -1)).type.shape == (5, None)


def test_reshape_errors():
    x = tt.matrix("x")
    f = fn([x], x.reshape((5, -1)))
    with pytest.raises(ValueError, match=r"shape \(3, 4\).*into shape \(5, -1\)"):
        f(randn(3, 4))
    with pytest.raises(ValueError, match="at most one -1"):
        x.reshape((-1, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        tt.matrix("z", shape=(2, 3)).reshape((4, 2))
    n = tt.lscalar("n")
    f2 = fn([x, n], x.reshape((n, -1)))
    with pytest.raises(ValueError, match="at most one -1"):
        f2(randn(2, 2), -1)
    with pytest.raises(TypeError, match="integer"):
        x.reshape((2.5, 2))


def test_reshape_is_a_view_when_possible():
    x = tt.matrix("x")
    node = x.reshape((-1,)).owner
    assert node.op.view_map == {0: [0]}
    v = randn(3, 4)
    storage = [[None]]
    node.op.perform(node, [v, np.array([-1])], storage)
    assert np.shares_memory(storage[0][0], v)


def test_reshape_grad():
    verify_grad(lambda x: x.reshape((2, -1, 3)), [randn(4, 3)], rng=RNG)
    verify_grad(lambda x: tt.flatten(x, 2), [randn(2, 3, 4)], rng=RNG)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_reshape_matches_numpy(dims, data):
    size = int(np.prod(dims))
    v = np.arange(size, dtype="float64").reshape(dims)
    perm = data.draw(st.permutations(range(len(dims))))
    newshape = list(data.draw(st.permutations(dims)))
    if data.draw(st.booleans()):
        newshape[data.draw(st.integers(0, len(newshape) - 1))] = -1
    x = tt.tensor("float64", (None,) * len(dims), "x")
    out = fn([x], tt.transpose(x, perm).reshape(newshape))(v)
    np.testing.assert_array_equal(out, v.transpose(perm).reshape(newshape))


# ----------------------------------------------------------------------------------------------
# flatten, squeeze, expand_dims


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_flatten(ndim):
    x = tt.tensor3("x")
    v = randn(2, 3, 4)[:, ::-1]
    y = tt.flatten(x, ndim)
    expected = v.reshape(v.shape[:ndim - 1] + (-1,))
    np.testing.assert_array_equal(fn([x], y)(v), expected)
    assert y.ndim == ndim
    assert fn([x], x.flatten())(v).shape == (24,)


def test_flatten_empty_and_static():
    x = tt.tensor3("x")
    assert fn([x], tt.flatten(x, 2))(np.zeros((0, 3, 4))).shape == (0, 12)
    assert tt.flatten(tt.tensor3("s", shape=(2, 3, 4)), 2).type.shape == (2, 12)
    with pytest.raises(ValueError, match="ndim"):
        tt.flatten(x, 4)


def test_squeeze():
    x = tt.tensor("float64", (None, 1, None, 1), "x")
    v = randn(3, 1, 2, 1)
    y = tt.squeeze(x)
    assert y.type.shape == (None, None)
    np.testing.assert_array_equal(fn([x], y)(v), np.squeeze(v))
    np.testing.assert_array_equal(fn([x], x.squeeze(-1))(v), np.squeeze(v, -1))
    # a named axis of unknown size is checked at run time
    m = tt.matrix("m")
    f = fn([m], tt.squeeze(m, 0))
    w = randn(1, 3)
    np.testing.assert_array_equal(f(w), w[0])
    # numpy's (and PyTensor's) ValueError, from C as from Python
    for mode in (tensorgraph.Mode("c", "fast_run"), tensorgraph.Mode("py", None)):
        g = tensorgraph.function([m], tt.squeeze(m, 0), mode=mode)
        with pytest.raises(ValueError, match="squeeze: dimension 0 of m must have size 1"):
            g(randn(2, 3))
    with pytest.raises(ValueError, match="not 1"):
        tt.squeeze(tt.matrix("k", shape=(2, 3)), 0)
    verify_grad(lambda a: tt.squeeze(a, 1), [randn(3, 1)], rng=RNG)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3, (0, 2), (0, -1)])
def test_expand_dims(axis):
    x = tt.matrix("x")
    v = randn(2, 3)
    y = tt.expand_dims(x, axis)
    np.testing.assert_array_equal(fn([x], y)(v), np.expand_dims(v, axis))
    assert sum(y.type.broadcastable) == (len(axis) if isinstance(axis, tuple) else 1)


def test_padding_and_transpose():
    x = tt.matrix("x")
    v = randn(2, 3)
    assert fn([x], tt.shape_padleft(x, 2))(v).shape == (1, 1, 2, 3)
    assert fn([x], tt.shape_padright(x))(v).shape == (2, 3, 1)
    t = tt.tensor3("t")
    w = randn(2, 3, 4)
    np.testing.assert_array_equal(fn([t], tt.transpose(t))(w), w.T)
    np.testing.assert_array_equal(fn([t], tt.transpose(t, (1, -1, 0)))(w),
                                  np.transpose(w, (1, 2, 0)))
    with pytest.raises(ValueError, match="do not match"):
        tt.transpose(t, (0, 1))
    verify_grad(lambda a: tt.transpose(a, (2, 0, 1)), [w], rng=RNG)


# ----------------------------------------------------------------------------------------------
# specify_shape


def test_specify_shape_refines_type_and_checks():
    x = tt.matrix("x")
    y = tt.specify_shape(x, (3, None))
    assert isinstance(y.owner.op, SpecifyShape)
    assert y.type.shape == (3, None)
    f = fn([x], y)
    v = randn(3, 5)
    np.testing.assert_array_equal(f(v), v)
    with pytest.raises(AssertionError, match=r"dimension 0 has size 2, expected 3"):
        f(randn(2, 5))
    check_infer_shape(y, [x], [v])


def test_specify_shape_symbolic_and_noop():
    x = tt.matrix("x", shape=(3, None))
    assert tt.specify_shape(x, (3, None)) is x
    assert tt.specify_shape(x, (None, None)) is x
    n = tt.lscalar("n")
    y = tt.specify_shape(x, (None, n))
    assert y.type.shape == (3, None)
    f = fn([x, n], y)
    f(randn(3, 4), 4)
    with pytest.raises(AssertionError, match="expected 5"):
        f(randn(3, 4), 5)
    with pytest.raises(ValueError, match="contradicts"):
        tt.specify_shape(x, (4, None))
    with pytest.raises(ValueError, match="2 dimensions"):
        tt.specify_shape(x, (3,))


def test_specify_shape_from_convert_variable_and_grad():
    x = tt.matrix("x")
    target = tt.TensorType(x.dtype, (2, None))
    converted = target.convert_variable(x)
    assert converted.type == target and isinstance(converted.owner.op, SpecifyShape)
    verify_grad(lambda a: tt.specify_shape(a, (2, 3)) * 2, [randn(2, 3)], rng=RNG)


def test_reshape_op_equality():
    assert Reshape(2) == Reshape(2) and Reshape(2) != Reshape(3)
    assert SpecifyShape((0,)) == SpecifyShape([0])


def test_specify_shape_op_in_pytensors_form():
    """SpecifyShape()(x, *shape), one entry per dimension and None for any size."""
    x = tt.dmatrix("x")
    out = SpecifyShape()(x, 2, None)
    assert out.type.shape == (2, None) and out.owner.op == SpecifyShape((0,))
    np.testing.assert_array_equal(fn([x], out)(np.ones((2, 5))), np.ones((2, 5)))
    with pytest.raises(AssertionError):
        fn([x], out)(np.ones((3, 5)))
    assert SpecifyShape()(x, None, None).type == x.type


def test_specify_shape_with_an_ellipsis():
    x = tt.dtensor4("x")
    assert tt.specify_shape(x, (...,)) is x
    assert tt.specify_shape(x, (2, ..., 3)).type.shape == (2, None, None, 3)
    assert tt.specify_shape(x, (..., 1, 2, 3, 4)).type.shape == (1, 2, 3, 4)
    with pytest.raises(ValueError, match="one Ellipsis"):
        tt.specify_shape(x, (..., 2, ...))


def test_static_shape_from_arithmetic_of_known_values():
    n = tt.as_tensor_variable(50)
    i = tt.vector("i")
    assert tt.reshape(i, (100 // n, n)).type.shape == (2, 50)
    assert tt.alloc(0.0, n * 2, 3 + 4).type.shape == (100, 7)
    assert tt.alloc(0.0, tt.lscalar("k") * 2, 3).type.shape == (None, 3)


def test_clone_replace_non_strict_remakes_shapes_from_values():
    # the replacement has the old type (an int64 scalar) but another value: the ops whose
    # static shape reads input values are remade (PyTensor's _output_type_depends_on_input_value)
    from tensorgraph.graph.basic import clone_replace

    n, i, m = tt.as_tensor_variable(50), tt.vector("i"), tt.matrix("m")
    y = tt.reshape(i, (100 // n, n))
    z = tt.specify_shape(m, (None, n))
    y2, z2 = clone_replace([y, z], {n: tt.as_tensor_variable(25)}, rebuild_strict=False)
    assert y2.type.shape == (4, 25) and z2.type.shape == (None, 25)
    assert y2.eval({i: np.zeros(100)}).shape == (4, 25)
    # strict keeps every output type (PyTensor's default)
    assert clone_replace(y, {n: tt.as_tensor_variable(25)}, rebuild_strict=True).type == y.type
    # ... and a new value of a static size upstream reaches them (alloc keeps its static size
    # entries as constants, so zeros(v.shape) is not rebuilt)
    v = tt.vector(shape=(50,))
    w = tt.reshape(tt.vector("w"), (v.shape[0] // 2, 2))
    assert clone_replace(w, {v: tt.vector(shape=(100,))}, rebuild_strict=False).type.shape \
        == (50, 2)


def test_transpose_that_moves_nothing_is_the_input_and_names_follow():
    v, m = tt.dvector("v"), tt.dmatrix("m")
    assert tt.transpose(v) is v and tt.transpose(m, [0, 1]) is m
    assert tt.transpose(m).name == "m.T" and tt.transpose(tt.dmatrix()).name is None
    t = tt.transpose(tt.tensor3("t"), [0, 2, 1])
    assert t.eval({t.owner.inputs[0]: np.zeros((2, 3, 4))}).shape == (2, 4, 3)


def test_specify_shape_gradient_and_rop_carry_the_sizes():
    # the gradient (and the R-op) of specify_shape has x's shape: it states the same sizes, so
    # a symbolic size is checked on the gradient too and a static one reaches its type
    x, n = tt.dmatrix("x"), tt.lscalar("n")
    y = tt.specify_shape(x, (n, 3))
    g = tensorgraph.grad((y ** 2).sum(), x)
    assert isinstance(g.owner.op, SpecifyShape) and g.type.shape == (None, 3)
    f = fn([x, n], g)
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(xv, 2), 2 * xv)
    with pytest.raises(AssertionError, match="SpecifyShape"):
        f(xv, 4)
    verify_grad(lambda a: tt.specify_shape(a, (2, 3)) ** 2, [xv])
    v = tt.dmatrix("v")
    r = tensorgraph.Rop(y, x, v)
    assert isinstance(r.owner.op, SpecifyShape)
    np.testing.assert_allclose(fn([v, n], r)(xv + 1, 2), xv + 1)
    # an integer input still gets a zero gradient (tensorgraph's rule)
    i = tt.lmatrix("i")
    gi = tensorgraph.grad(tt.cast(tt.specify_shape(i, (2, 3)), "float64").sum(), i,
                          disconnected_inputs="ignore")
    assert not fn([i], gi)(np.ones((2, 3), dtype="int64")).any()
