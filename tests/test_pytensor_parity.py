"""Results that PyTensor's own test suite expects, found wrong here and fixed (each checked by
hand against numpy and PyTensor 3.0.7): default updates of shared variables a function never
computes, ifelse gradients of branches of different shapes, shape inference of boolean-mask
indexing, negative axes given to Ops, set/inc values that broadcast at run time. Every check
runs with the numpy reference (``py``) and the C linkers."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.ifelse import ifelse
from tensorgraph.tensor.join import Join, Split
from tensorgraph.tensor.reduction import Argmax, Max, Sum
from tensorgraph.tensor.shape import AxisError
from tensorgraph.tensor.special import LogSoftmax, Softmax

MODES = {"py": tg.Mode("py", "fast_run"), "c": tg.Mode("cvm", "fast_run"),
         "none": tg.Mode("py", None)}


@pytest.fixture(params=sorted(MODES))
def mode(request):
    return MODES[request.param]


def test_default_update_of_a_shared_variable_behind_an_input_does_not_fire(mode):
    a = tg.shared(0)
    a.default_update = a + 1
    b = 2 * a
    f = tg.function([b], b, mode=mode)
    assert f(21) == 21
    assert a.get_value() == 0  # b is an input: a is not read, so not updated
    g = tg.function([], b, mode=mode)  # here a is read: its default update fires
    assert g() == 0 and a.get_value() == 1


def test_ifelse_gradient_gives_the_branch_not_taken_zeros_of_its_own_shape(mode):
    c = tt.iscalar("c")
    x1, x2, y1, y2 = (tt.dvector(n) for n in ("x1", "x2", "y1", "y2"))
    z = ifelse(c, (x1, x2), (y1, y2))
    grads = tg.grad(z[0].sum() + z[1].sum(), [x1, x2, y1, y2])
    f = tg.function([c, x1, x2, y1, y2], grads, mode=mode)
    values = [np.ones(3), np.ones(4), np.ones(5), np.ones(6)]
    for taken, expected in ((1, [1, 1, 0, 0]), (0, [0, 0, 1, 1])):
        got = f(taken, *values)
        assert [g.shape for g in got] == [(3,), (4,), (5,), (6,)]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, np.full(g.shape, float(e)))


def test_shape_of_boolean_mask_indexing_follows_broadcasting(mode):
    n = tt.dmatrix("n")
    y = n[n[:, 0] > 2, n[0, :] > 2]
    f = tg.function([n], [y, y.shape], mode=mode)
    value, shape = f(np.arange(6.0).reshape(2, 3))  # masks select 1 row and 0 columns
    assert value.shape == (0,) and list(shape) == [0]
    value, shape = f(np.array([[3.0, 0.0, 4.0], [5.0, 1.0, 1.0]]))  # 2 rows and 2 columns
    assert value.shape == (2,) and list(shape) == [2]
    value, shape = f(np.array([[3.0, 0.0, 1.0], [5.0, 1.0, 1.0]]))  # 2 rows, 1 column
    assert value.shape == (2,) and list(shape) == [2]
    value, shape = f(np.array([[3.0, 0.0, 4.0], [1.0, 1.0, 1.0]]))  # 1 row, 2 columns
    assert value.shape == (2,) and list(shape) == [2]


@pytest.mark.parametrize("make, call, expected", [
    (lambda: Softmax(-1), lambda x: x, lambda v: np.exp(v) / np.exp(v).sum(-1, keepdims=True)),
    (lambda: LogSoftmax(-1), lambda x: x,
     lambda v: v - np.log(np.exp(v).sum(-1, keepdims=True))),
    (lambda: Sum((-1,)), lambda x: x, lambda v: v.sum(-1)),
    (lambda: Max((-2,)), lambda x: x, lambda v: v.max(-2)),
    (lambda: Argmax((-1,)), lambda x: x, lambda v: v.argmax(-1)),
])
def test_ops_taking_an_axis_accept_negative_axes(make, call, expected, mode):
    x = tt.dmatrix("x")
    out = make()(call(x))
    assert all(a >= 0 for a in np.atleast_1d(out.owner.op.axis))  # normalized on the node
    v = np.arange(6.0).reshape(2, 3) / 7
    np.testing.assert_allclose(tg.function([x], out, mode=mode)(v), expected(v))


def test_join_split_and_tensordot_ops_accept_negative_axes(mode):
    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    v = np.arange(6.0).reshape(2, 3)
    joined = Join(-1)(x, y)
    assert joined.owner.op == Join(1)  # equal to the op with the positive axis
    np.testing.assert_array_equal(tg.function([x, y], joined, mode=mode)(v, v),
                                  np.concatenate([v, v], -1))
    a, b = Split(2, -1)(x, tt.as_tensor_variable(np.array([1, 2])))
    got = tg.function([x], [a, b], mode=mode)(v)
    np.testing.assert_array_equal(got[1], v[:, 1:])
    from tensorgraph.tensor.dot import TensorDot

    t = TensorDot((-1,), (0,))(x, y.T)
    np.testing.assert_allclose(tg.function([x, y], t, mode=mode)(v, v), v @ v.T)


def test_out_of_range_axes_raise_one_error_for_every_op():
    x = tt.dmatrix("x")
    for build in (lambda: Softmax(2)(x), lambda: Sum((-3,))(x), lambda: Join(5)(x, x),
                  lambda: Argmax((2,))(x), lambda: tt.sum(x, axis=2), lambda: tt.concatenate(
                      [x, x], axis=-3)):
        with pytest.raises(AxisError, match=r"axis -?\d is out of bounds for array of dimension 2"):
            build()
    assert issubclass(AxisError, ValueError) and issubclass(AxisError, IndexError)


@pytest.mark.parametrize("kind", ["inc", "set"])
def test_set_and_inc_values_broadcast_at_run_time_as_in_numpy(kind, mode):
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    build = tt.inc_subtensor if kind == "inc" else tt.set_subtensor
    f = tg.function([a, b], build(a[2:4], b), mode=mode)
    base, value = np.arange(20.0).reshape(5, 4), np.array([[10.0, 20.0, 30.0, 40.0]])
    expected = base.copy()
    if kind == "inc":
        expected[2:4] += value
    else:
        expected[2:4] = value
    np.testing.assert_array_equal(f(base, value), expected)
    with pytest.raises(ValueError, match="cannot put a value of shape"):
        f(base, np.ones((3, 4)))
    # advanced indices too
    i = tt.lvector("i")
    g = tg.function([a, b, i], build(a[i], b), mode=mode)
    expected = base.copy()
    if kind == "inc":
        np.add.at(expected, [0, 3], value)
    else:
        expected[[0, 3]] = value
    np.testing.assert_array_equal(g(base, value, np.array([0, 3])), expected)


def test_gradient_of_a_value_broadcast_at_run_time_has_its_shape(mode):
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    cost = (tt.inc_subtensor(a[1:4], b) ** 2).sum()
    gb = tg.function([a, b], tg.grad(cost, b), mode=mode)
    base = np.arange(20.0).reshape(5, 4)
    for value in (np.ones((1, 4)), np.ones((3, 4))):
        got = gb(base, value)
        assert got.shape == value.shape
        full = base.copy()
        full[1:4] += value
        np.testing.assert_allclose(got, (2 * full[1:4]).sum(0, keepdims=True)
                                   if value.shape[0] == 1 else 2 * full[1:4])
    rng = np.random.default_rng(0)
    verify_grad(lambda v: (tt.inc_subtensor(tt.as_tensor_variable(base)[1:4], v) ** 2).sum(),
                [rng.normal(size=(1, 4))], rng=rng)
