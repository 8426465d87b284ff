"""Lazy ifelse: only the taken branch is computed; types, shapes and gradients."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.gradient import Rop, grad, verify_grad
from tensorgraph.graph import Apply, Op
from tensorgraph.ifelse import IfElse, ifelse

pytestmark = pytest.mark.usefixtures("reference_mode")

MODE = "FAST_COMPILE"


def fn(inputs, outputs, **kwargs):
    return tensorgraph.function(inputs, outputs, mode=MODE, on_unused_input="ignore", **kwargs)


class Counted(Op):
    """x * factor, counting its perform calls (to see which branch ran)."""

    __props__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor
        self.calls = 0

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        self.calls += 1
        output_storage[0][0] = inputs[0] * self.factor


class Explode(Op):
    """Raises if it ever runs."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise RuntimeError("the branch not taken was computed")


def test_picks_the_branch():
    c, x, y = tt.lscalar("c"), tt.dvector("x"), tt.dvector("y")
    f = fn([c, x, y], ifelse(c, x * 2.0, y * 3.0))
    np.testing.assert_allclose(f(1, [1.0, 2.0], [5.0, 5.0]), [2.0, 4.0])
    np.testing.assert_allclose(f(0, [1.0, 2.0], [5.0, 5.0]), [15.0, 15.0])


def test_only_the_taken_branch_runs():
    then_op, else_op = Counted(2.0), Counted(3.0)
    c, x = tt.bscalar("c"), tt.dvector("x")
    f = fn([c, x], ifelse(c, then_op(x), else_op(x)))
    f(1, np.ones(2))
    assert (then_op.calls, else_op.calls) == (1, 0)
    f(0, np.ones(2))
    f(0, np.ones(2))
    assert (then_op.calls, else_op.calls) == (1, 2)


def test_a_branch_that_would_raise_is_never_computed():
    c, x = tt.lscalar("c"), tt.dvector("x")
    f = fn([c, x], ifelse(c, x + 1.0, Explode()(x)))
    np.testing.assert_allclose(f(5, np.zeros(2)), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="not taken"):
        f(0, np.zeros(2))


def test_the_thunk_follows_the_lazy_protocol():
    c, a, b = tt.lscalar("c"), tt.dscalar("a"), tt.dscalar("b")
    node = ifelse(c, a, b).owner
    storage = {v: [None] for v in node.inputs + node.outputs}
    computed = {v: [False] for v in storage}
    thunk = node.op.make_py_thunk(node, storage, computed)
    assert thunk.lazy
    assert thunk() == [0]  # the condition first
    storage[c][0], computed[c][0] = np.int64(0), True
    assert thunk() == [2]  # then only the else value
    storage[b][0], computed[b][0] = np.float64(7.0), True
    assert not thunk()
    assert storage[node.outputs[0]][0] == 7.0 and computed[node.outputs[0]][0]


def test_several_outputs_share_one_node():
    c, x, y = tt.lscalar("c"), tt.dvector("x"), tt.dscalar("y")
    out = ifelse(c, [x, y], [x * 2.0, y * 2.0])
    assert isinstance(out, list) and len(out) == 2
    assert out[0].owner is out[1].owner and out[0].owner.op == IfElse(2)
    xs, ys = fn([c, x, y], out)(0, [1.0], 4.0)
    np.testing.assert_allclose(xs, [2.0])
    assert float(ys) == 8.0


def test_output_is_a_copy_not_the_input():
    c, x = tt.lscalar("c"), tt.dvector("x")
    f = fn([c, x], ifelse(c, x, x * 2.0))
    value = np.array([1.0, 2.0])
    out = f(1, value)
    out[0] = 100.0
    assert value[0] == 1.0


def test_type_checks():
    c, x, m = tt.lscalar("c"), tt.dvector("x"), tt.dmatrix("m")
    with pytest.raises(TypeError, match="same ndim"):
        ifelse(c, x, m)
    with pytest.raises(TypeError, match="The condition argument must be a scalar"):
        ifelse(tt.lvector("cv"), x, x)
    with pytest.raises(ValueError, match="2 values"):
        ifelse(c, [x, x], [x])
    with pytest.raises(TypeError, match="neither casts safely"):
        ifelse(c, tt.fvector("f"), tt.lvector("l"))
    with pytest.raises(TypeError, match="then branch of type"):
        IfElse(1)(c, tt.fvector("f"), x)


def test_safe_upcast_between_branches():
    c = tt.lscalar("c")
    i, d = tt.ivector("i"), tt.dvector("d")
    out = ifelse(c, i, d)
    assert out.type.dtype == "float64"
    f = fn([c, i, d], out)
    np.testing.assert_allclose(f(1, np.array([1, 2], dtype="int32"), [0.5, 0.5]), [1.0, 2.0])


def test_static_shapes_are_joined():
    c = tt.lscalar("c")
    a = tt.tensor("float64", shape=(3, None), name="a")
    b = tt.tensor("float64", shape=(3, 4), name="b")
    assert ifelse(c, a, b).type.shape == (3, None)
    d = tt.tensor("float64", shape=(2, 4), name="d")
    assert ifelse(c, b, d).type.shape == (None, 4)


def test_infer_shape_uses_the_common_size_or_a_lazy_choice():
    c, x, y = tt.lscalar("c"), tt.dvector("x"), tt.dvector("y")
    node = ifelse(c, x, y).owner
    n, m = tt.lscalar("n"), tt.lscalar("m")
    ((same,),) = node.op.infer_shape(None, node, [(), (n,), (n,)])
    assert same is n
    ((chosen,),) = node.op.infer_shape(None, node, [(), (n,), (m,)])
    assert isinstance(chosen.owner.op, IfElse)
    assert int(fn([c, n, m], chosen)(0, 3, 4)) == 4


def test_gradient_flows_into_the_taken_branch():
    c, x = tt.lscalar("c"), tt.dvector("x")
    cost = tt.sum(ifelse(c, x * x, x * 3.0))
    g = grad(cost, x)
    f = fn([c, x], g)
    np.testing.assert_allclose(f(1, [1.0, 2.0]), [2.0, 4.0])
    np.testing.assert_allclose(f(0, [1.0, 2.0]), [3.0, 3.0])
    assert grad(cost, c, disconnected_inputs="ignore").type.dtype == config.floatX


def test_gradient_of_several_outputs_and_verify_grad():
    rng = np.random.default_rng(0)
    for cond in (0, 1):
        verify_grad(lambda a, b: ifelse(np.int8(cond), a * b, a + b),
                    [rng.normal(size=3), rng.normal(size=3)], rng=rng, mode=MODE)
    c, a, b = tt.lscalar("c"), tt.dvector("a"), tt.dvector("b")
    u, v = ifelse(c, [a, b], [b, a])
    ga, gb = grad(tt.sum(u * 2.0) + tt.sum(v * 5.0), [a, b])
    out = fn([c, a, b], [ga, gb])(1, np.ones(2), np.ones(2))
    np.testing.assert_allclose(out[0], [2.0, 2.0])
    np.testing.assert_allclose(out[1], [5.0, 5.0])


def test_rop_through_ifelse():
    c, x, v = tt.lscalar("c"), tt.dvector("x"), tt.dvector("v")
    r = Rop(ifelse(c, x * x, x * 3.0), x, v)
    f = fn([c, x, v], r)
    np.testing.assert_allclose(f(1, [1.0, 2.0], [1.0, 1.0]), [2.0, 4.0])
    np.testing.assert_allclose(f(0, [1.0, 2.0], [1.0, 1.0]), [3.0, 3.0])


def test_test_values_are_computed_eagerly():
    with config.change_flags(compute_test_value="raise"):
        c, x = tt.lscalar("c"), tt.dvector("x")
        c.tag.test_value = 0
        x.tag.test_value = np.array([1.0, 2.0])
        out = ifelse(c, x, x * 2.0)
    np.testing.assert_allclose(out.tag.test_value, [2.0, 4.0])


def test_str_spells_name_and_inplace_as_pytensor():
    c, x, y = tt.lscalar("c"), tt.dvector("x"), tt.dvector("y")
    assert str(ifelse(c, x, y).owner).startswith("if{}(")
    assert str(IfElse(1, name="pick").__str__()) == "if{pick}"
    assert str(IfElse(2, as_view=True, name="pick")) == "if{pick,inplace}"
    assert str(IfElse(1, as_view=True)) == "if{inplace}"
