"""Autodiff: grad, Lop, Rop, jacobian, hessian and verify_grad.

The ops written here (Square, WrongSquare, ...) keep these tests independent of the tensor op
library: each has a numpy perform and a hand-written gradient.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    GradientError,
    IndexLoop,
    Lop,
    NullType,
    NullTypeGradError,
    Rop,
    disconnected_type,
    grad,
    grad_not_implemented,
    grad_undefined,
    hessian,
    jacobian,
    numeric_grad,
    verify_grad,
)
from tensorgraph.graph import Apply, Op

pytestmark = pytest.mark.usefixtures("reference_mode")

MODE = "FAST_COMPILE"


def fn(inputs, outputs, **kwargs):
    return tensorgraph.function(inputs, outputs, mode=MODE, on_unused_input="ignore", **kwargs)


class Square(Op):
    """x ** 2 with a correct gradient and no R_op (Rop must fall back to the L_op trick)."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] ** 2

    def grad(self, inputs, output_grads):
        return [output_grads[0] * inputs[0] * 2.0]


class WrongSquare(Square):
    """x ** 2 whose gradient is deliberately wrong (3x instead of 2x)."""

    def grad(self, inputs, output_grads):
        return [output_grads[0] * inputs[0] * 3.0]


class Floor(Op):
    """floor(x): the gradient is undefined (to exercise NullType)."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.floor(inputs[0])

    def grad(self, inputs, output_grads):
        return [grad_undefined(self, 0, inputs[0], "floor is piecewise constant")]


class NoGrad(Floor):
    def grad(self, inputs, output_grads):
        return [grad_not_implemented(self, 0, inputs[0])]


class NoneGrad(Square):
    def grad(self, inputs, output_grads):
        return [None]


class SplitScale(Op):
    """Two outputs (2a, 3b) of two inputs (a, b): a only reaches output 0, b only output 1."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = tt.as_tensor_variable(a), tt.as_tensor_variable(b)
        return Apply(self, [a, b], [a.type(), b.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2
        output_storage[1][0] = inputs[1] * 3

    def connection_pattern(self, node):
        return [[True, False], [False, True]]

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2.0, output_grads[1] * 3.0]


square, wrong_square, floor = Square(), WrongSquare(), Floor()


def test_grad_of_a_product_and_of_repeated_use():
    x = tt.dvector("x")
    cost = tt.sum(square(x) + x * 3.0)
    g = grad(cost, x)
    value = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(fn([x], g)(value), 2 * value + 3)


def test_grad_w_r_t_the_cost_itself_is_one():
    x = tt.dscalar("x")
    c = square(x)
    np.testing.assert_allclose(fn([x], grad(c, c))(3.0), 1.0)


def test_wrt_structure_is_kept():
    x, y = tt.dscalar("x"), tt.dscalar("y")
    cost = square(x) * y
    assert isinstance(grad(cost, [x, y]), list)
    assert isinstance(grad(cost, (x, y)), tuple)
    single = grad(cost, x)
    assert single.type.ndim == 0
    gx, gy = fn([x, y], list(grad(cost, (x, y))))(3.0, 2.0)
    assert (float(gx), float(gy)) == (12.0, 9.0)


def test_cost_must_be_a_scalar():
    x = tt.dvector("x")
    with pytest.raises(TypeError, match="cost must be a scalar"):
        grad(square(x), x)


def test_wrt_must_be_variables():
    x = tt.dscalar("x")
    with pytest.raises(TypeError, match=r"wrt\[1\] must be a symbolic Variable"):
        grad(square(x), [x, 3.0])


def test_consider_constant_stops_the_gradient():
    x = tt.dscalar("x")
    z = square(x)
    cost = z * x
    full = fn([x], grad(cost, x))(2.0)
    stopped = fn([x], grad(cost, x, consider_constant=[z]))(2.0)
    assert float(full) == pytest.approx(12.0)   # d(x^3)/dx
    assert float(stopped) == pytest.approx(4.0)  # z treated as a constant: d(z*x)/dx = z


def test_disconnected_inputs():
    x, unused = tt.dscalar("x"), tt.dvector("unused")
    cost = square(x)
    with pytest.raises(DisconnectedInputError, match="unused"):
        grad(cost, [x, unused])
    with pytest.warns(UserWarning, match="unused"):
        grad(cost, unused, disconnected_inputs="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = grad(cost, unused, disconnected_inputs="ignore")
    np.testing.assert_array_equal(fn([unused], g)(np.ones(3)), np.zeros(3))
    assert grad(cost, unused, disconnected_inputs="ignore", return_disconnected="None") is None
    disc = grad(cost, unused, disconnected_inputs="ignore", return_disconnected="disconnected")
    assert isinstance(disc.type, DisconnectedType)
    with pytest.raises(ValueError, match="disconnected_inputs must be one of"):
        grad(cost, x, disconnected_inputs="sometimes")


def test_connection_pattern_makes_unrelated_inputs_disconnected():
    a, b = tt.dscalar("a"), tt.dscalar("b")
    out_a, out_b = SplitScale()(a, b)
    with pytest.raises(DisconnectedInputError, match="b"):
        grad(out_a, [a, b])
    ga, gb = grad(out_a + out_b, [a, b])
    assert [float(v) for v in fn([a, b], [ga, gb])(1.0, 1.0)] == [2.0, 3.0]


def test_integer_inputs_get_zero_float_gradients():
    x = tt.dvector("x")
    i = tt.lvector("i")
    cost = tt.sum(x * i)
    gi = grad(cost, i)
    assert gi.type.dtype == config.floatX
    np.testing.assert_array_equal(fn([x, i], gi)(np.ones(2), np.array([1, 2])), np.zeros(2))
    gx = grad(cost, x)
    np.testing.assert_array_equal(fn([x, i], gx)(np.ones(2), np.array([1, 2])), [1.0, 2.0])


def test_gradient_dtype_follows_the_variable():
    x = tt.fvector("x")
    cost = tt.sum(tt.cast(x, "float64") * 2.0)
    g = grad(cost, x)
    assert g.type.dtype == "float32"
    out = fn([x], g)(np.ones(2, dtype="float32"))
    assert out.dtype == np.float32


def test_shared_variables_as_wrt():
    w = tensorgraph.shared(np.array([1.0, 2.0]), name="w")
    cost = tt.sum(square(w))
    g = grad(cost, w)
    np.testing.assert_allclose(fn([], g)(), [2.0, 4.0])


def test_add_names():
    x = tt.dscalar("x")
    cost = square(x)
    cost.name = "cost"
    assert grad(cost, x).name == "(dcost/dx)"
    assert grad(cost, x, add_names=False).name is None


def test_known_grads_seed_the_backward_pass():
    x = tt.dvector("x")
    y = square(x)
    gy = tt.dvector("gy")
    g = grad(None, x, known_grads={y: gy})
    np.testing.assert_allclose(fn([x, gy], g)(np.array([1.0, 2.0]), np.array([10.0, 1.0])),
                               [20.0, 4.0])
    with pytest.raises(ValueError, match="known_grads"):
        grad(None, x, known_grads={y: tt.dmatrix("bad")})
    with pytest.raises(TypeError, match="known_grads"):
        grad(None, x)


def test_undefined_and_unimplemented_gradients():
    x = tt.dscalar("x")
    with pytest.raises(NullTypeGradError, match="mathematically undefined.*piecewise"):
        grad(square(floor(x)), x)
    with pytest.raises(NullTypeGradError, match="not implemented"):
        grad(NoGrad()(x), x)
    null = grad(floor(x), x, null_gradients="return")
    assert isinstance(null.type, NullType)
    # an undefined part makes the whole gradient undefined
    with pytest.raises(NullTypeGradError):
        grad(floor(x) + square(x), x)
    # ... unless the undefined path is cut by consider_constant
    fx = floor(x)
    assert float(fn([x], grad(fx + square(x), x, consider_constant=[fx]))(3.0)) == 6.0


def test_l_op_returning_none_is_explained():
    x = tt.dscalar("x")
    with pytest.raises(TypeError, match="disconnected_type"):
        grad(NoneGrad()(x), x)


def test_special_types_hold_no_value():
    with pytest.raises(TypeError, match="no value"):
        disconnected_type().type.filter(1.0)
    with pytest.raises(TypeError, match="because"):
        NullType("because").filter(1.0)


# -- verify_grad ------------------------------------------------------------------------------


def test_verify_grad_accepts_correct_gradients():
    rng = np.random.default_rng(0)
    verify_grad(lambda x: square(x) * 3.0, [rng.normal(size=(2, 3))], rng=rng, mode=MODE)
    verify_grad(lambda x, y: square(x) * y, [rng.normal(size=3), rng.normal(size=3)],
                rng=rng, mode=MODE)


def test_verify_grad_accepts_a_fun_that_ignores_an_input():
    rng = np.random.default_rng(0)
    # the ignored input's gradient is zero, which the numeric gradient agrees with
    verify_grad(lambda x, y: square(x) * 2.0, [rng.normal(size=3), rng.normal(size=2)],
                rng=rng, mode=MODE)
    verify_grad(lambda x: tt.zeros((2,)), [rng.normal(size=3)], rng=rng, mode=MODE)
    with pytest.raises(GradientError, match="input 0"):
        verify_grad(lambda x, y: wrong_square(x), [np.ones(2), np.ones(2)], rng=rng,
                    mode=MODE)


def test_verify_grad_catches_a_wrong_gradient():
    rng = np.random.default_rng(0)
    point = np.array([[1.0, 2.0], [3.0, -1.0]])
    with pytest.raises(GradientError) as info:
        verify_grad(lambda x: wrong_square(x), [point], rng=rng, mode=MODE)
    err = info.value
    assert err.arg == 0 and err.shape == (2, 2)
    assert err.analytic_grad == pytest.approx(err.num_grad * 1.5, rel=1e-4)
    assert err.abs_err > err.abs_tol and err.rel_err > err.rel_tol
    message = str(err)
    assert "input 0" in message and "at index" in message and "rel error" in message


def test_verify_grad_names_the_faulty_input():
    rng = np.random.default_rng(1)
    with pytest.raises(GradientError, match="input 1"):
        verify_grad(lambda x, y: square(x) + wrong_square(y), [np.ones(2), np.ones(2) * 2],
                    rng=rng, mode=MODE)


def test_verify_grad_float32_defaults():
    rng = np.random.default_rng(2)
    point = rng.uniform(0.5, 2.0, size=(3,)).astype("float32")
    verify_grad(lambda x: square(x), [point], rng=rng, mode=MODE)
    with pytest.raises(GradientError) as info:
        verify_grad(lambda x: wrong_square(x), [point], rng=rng, mode=MODE)
    assert info.value.abs_tol == 1e-2


def test_verify_grad_refuses_integer_points_and_several_outputs():
    with pytest.raises(TypeError, match="floating-point"):
        verify_grad(lambda x: square(x), [np.array([1, 2])])
    with pytest.raises(TypeError, match="single tensor"):
        verify_grad(lambda x: [square(x), square(x)], [np.ones(2)], mode=MODE)


def test_numeric_grad_is_central_differences():
    num = numeric_grad(lambda x: float(np.sum(x ** 3)), [np.array([1.0, 2.0])])
    np.testing.assert_allclose(num.gf[0], [3.0, 12.0], rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
       seed=st.integers(0, 2 ** 16))
def test_verify_grad_on_any_shape(shape, seed):
    rng = np.random.default_rng(seed)
    point = rng.normal(size=shape)
    verify_grad(lambda x: square(x) * x, [point], rng=rng, mode=MODE)


# -- Lop / Rop --------------------------------------------------------------------------------


def test_lop_is_a_vector_jacobian_product():
    x, v = tt.dvector("x"), tt.dvector("v")
    y = square(x) * 2.0
    lop = Lop(y, x, v)
    out = fn([x, v], lop)(np.array([1.0, 2.0]), np.array([3.0, 5.0]))
    np.testing.assert_allclose(out, 4 * np.array([1.0, 2.0]) * [3.0, 5.0])


def test_rop_uses_r_op_and_falls_back_to_l_op():
    x, v = tt.dvector("x"), tt.dvector("v")
    y = square(x) * x  # Square has no R_op: the double-L_op trick; mul has an R_op
    r = Rop(y, x, v)
    xv, vv = np.array([1.0, -2.0, 0.5]), np.array([0.3, 1.0, 2.0])
    np.testing.assert_allclose(fn([x, v], r)(xv, vv), 3 * xv ** 2 * vv)


def test_rop_on_several_inputs_and_disconnected_outputs():
    x, y, vx, vy = tt.dvectors("x", "y", "vx", "vy")
    out = square(x) * y
    r = Rop(out, [x, y], [vx, vy])
    xv, yv, a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([1.0, 0.0]), np.ones(2)
    np.testing.assert_allclose(fn([x, y, vx, vy], r)(xv, yv, a, b), 2 * xv * yv * a + xv ** 2 * b)
    z = tt.dvector("z")
    with pytest.raises(DisconnectedInputError):
        Rop(square(z), x, vx)
    zero = Rop(square(z), x, vx, disconnected_outputs="ignore")
    np.testing.assert_array_equal(fn([z], zero)(np.ones(2)), np.zeros(2))


# -- jacobian / hessian -----------------------------------------------------------------------


def test_jacobian_of_a_vector_with_symbolic_length():
    x = tt.dvector("x")
    y = square(x) * 2.0
    j = jacobian(y, x)
    assert j.type.ndim == 2
    f = fn([x], j)
    for n in (1, 4):
        xv = np.arange(1.0, n + 1)
        np.testing.assert_allclose(f(xv), np.diag(4 * xv))
    assert f(np.zeros(0)).shape == (0, 0)


def test_jacobian_with_several_wrt_and_a_shared_variable():
    x = tt.dvector("x")
    w = tensorgraph.shared(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), name="w")
    y = tt.sum(square(w) * x.dimshuffle(0, "x"), axis=0)  # y_k = sum_i w_ik^2 x_i
    jx, jw = jacobian(y, [x, w])
    xv = np.array([1.0, 2.0, 3.0])
    jxv, jwv = fn([x], [jx, jw])(xv)
    np.testing.assert_allclose(jxv, (w.get_value() ** 2).T)
    expected = np.zeros((2, 3, 2))
    for k in range(2):
        expected[k, :, k] = 2 * w.get_value()[:, k] * xv
    np.testing.assert_allclose(jwv, expected)


def test_jacobian_of_a_scalar_is_its_gradient_and_of_a_matrix_has_both_shapes():
    x = tt.dvector("x")
    g = jacobian(tt.sum(square(x)), x)
    np.testing.assert_allclose(fn([x], g)(np.array([1.0, 3.0])), [2.0, 6.0])
    m = tt.dmatrix("m")
    j = fn([m, x], jacobian(square(m) * x.sum(), x))(np.ones((2, 3)), np.ones(4))
    np.testing.assert_allclose(j, np.ones((2, 3, 4)))  # (PyTensor 3; it was refused)


def test_jacobian_loop_hoists_row_independent_work():
    x = tt.dvector("x")
    j = jacobian(square(x) * 2.0, x)
    loop = j.owner.op
    assert isinstance(loop, IndexLoop)
    sizes = [(tt.lscalar(f"n{k}"),) for k in range(len(j.owner.inputs) - 1)]
    ((rows, cols),) = loop.infer_shape(None, j.owner, [()] + sizes)
    assert rows is j.owner.inputs[0] and cols is sizes[0][0]  # x is the first outer input
    # the inner graph only holds the row-dependent part: no Square node inside
    assert not any(isinstance(node.op, Square) for node in loop.fgraph.apply_nodes)


def test_hessian():
    x = tt.dvector("x")
    cost = tt.sum(square(x) * x)
    h = hessian(cost, x)
    xv = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(fn([x], h)(xv), np.diag(6 * xv))
    with pytest.raises(TypeError, match="vectors"):
        hessian(cost, tt.dmatrix("m"))


def test_hessian_of_a_cost_linear_in_an_input_is_zero_not_an_error():
    a, b = tt.dvector("a"), tt.dvector("b")
    cost = tt.stack([a, 2 * b]).sum() + tt.sum(b ** 2)  # the gradient w.r.t. a is constant
    ha, hb = hessian(cost, [a, b])
    ha_v, hb_v = fn([a, b], [ha, hb])(np.ones(3), np.ones(3))
    np.testing.assert_allclose(ha_v, np.zeros((3, 3)))
    np.testing.assert_allclose(hb_v, 2 * np.eye(3))
    with pytest.raises(DisconnectedInputError):  # the cost itself must still depend on wrt
        hessian(tt.sum(b ** 2), a)


def test_the_jacobian_loop_is_differentiable():
    rng = np.random.default_rng(3)
    verify_grad(lambda x: jacobian(square(x) * x, x), [rng.normal(size=3)], rng=rng, mode=MODE)


def test_jacobian_hessian_and_rop_with_test_values_on():
    with config.change_flags(compute_test_value="raise"):
        x, v = tt.dvector("x"), tt.dvector("v")
        x.tag.test_value = np.array([1.0, 2.0])
        v.tag.test_value = np.array([1.0, 0.0])
        j = jacobian(square(x), x)
        h = hessian(tt.sum(square(x) * x), x)
        r = Rop(square(x), x, v)
    np.testing.assert_allclose(j.tag.test_value, np.diag([2.0, 4.0]))
    np.testing.assert_allclose(h.tag.test_value, np.diag([6.0, 12.0]))
    np.testing.assert_allclose(r.tag.test_value, [2.0, 0.0])


def test_add_names_never_renames_the_users_variables():
    x, gy = tt.dvector("x"), tt.dvector()
    y = x * 2.0  # not part of the cost: its gradient is exactly the given gy
    y.name = "y"
    cost = tt.sum(x)
    cost.name = "cost"
    gx = grad(cost, x, known_grads={y: gy})
    assert gy.name is None and gx.name == "(dcost/dx)"


class _TwoInputs(Op):
    """An op whose grad returns ``self.answer`` (a list of the wrong length, or no list)."""

    __props__ = ("answer_kind",)

    def __init__(self, answer_kind):
        self.answer_kind = answer_kind

    def make_node(self, x, y):
        return Apply(self, [x, y], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + inputs[1]

    def grad(self, inputs, grads):
        return [grads[0]] if self.answer_kind == "short" else grads[0]


def test_a_grad_of_the_wrong_length_is_a_value_error_and_no_list_a_type_error():
    x, y = tt.dvector("x"), tt.dvector("y")
    with pytest.raises(ValueError, match=r"one gradient per input \(2\), got 1"):
        tensorgraph.grad(_TwoInputs("short")(x, y).sum(), x)
    with pytest.raises(TypeError, match="one gradient per input"):
        tensorgraph.grad(_TwoInputs("bare")(x, y).sum(), x)


def test_disconnected_gradient_is_fill_op_of_zero():
    # PyTensor code checks a zero gradient's node with ``node.op == fill``: fill (second) is
    # the Elemwise op itself, and calling it still builds the broadcast
    from tensorgraph.tensor.math import fill, second

    x, s, z = tt.vector("x"), tt.scalar("s"), tt.matrix("z")
    g = tensorgraph.grad((x ** 2).sum(), s, disconnected_inputs="ignore")
    assert g.owner.op == fill and fill is second
    assert g.owner.inputs[1].data == 0
    g = tensorgraph.grad((x ** 2).sum(), z, disconnected_inputs="ignore")
    assert g.owner.op == fill
    f = tensorgraph.function([z], g)
    np.testing.assert_array_equal(f(np.ones((2, 3))), np.zeros((2, 3)))
    with pytest.raises(TypeError, match="2 inputs"):
        fill(z)
