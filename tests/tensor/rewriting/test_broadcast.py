"""Fills read for their shape only become allocs (the forward value they were filled from is no
longer computed), and gradient switches for run-time broadcasting that cannot happen go away."""

import pickle

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import get_mode
from tensorgraph.gradient import grad, verify_grad
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor.creation import Alloc
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.subtensor import AdvancedIncSubtensor1

RNG = np.random.default_rng(7)


def _scalar_ops(f, scalar_class):
    """Elemwise nodes of ``f``'s graph computing ``scalar_class``, inside fused nodes too."""
    found = []
    for node in f.maker.fgraph.toposort():
        if not isinstance(node.op, Elemwise):
            continue
        scalar = node.op.scalar_op
        inner = getattr(scalar, "nodes", None)  # a fused Composite's scalar graph
        ops = [n.op for n in inner] if inner is not None else [scalar]
        found.extend(node for op in ops if isinstance(op, scalar_class))
    return found


def _nodes(f, op_class):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, op_class)]


def test_grad_of_sum_does_not_compute_the_forward_add():
    x = tt.dmatrix("x")
    g = grad((tt.specify_shape(x, (None, None)) + 1).sum(), x)
    f = tg.function([x], g)
    assert not _scalar_ops(f, ps.Add)
    assert not _scalar_ops(f, psm.Second)
    assert len(_nodes(f, Alloc)) == 1
    xv = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(f(xv), np.ones((3, 4)))
    # excluding the rewrite by name keeps the fill, and with it the forward add
    kept = tg.function([x], g, mode=get_mode("FAST_RUN").excluding("local_second_to_alloc"))
    assert _scalar_ops(kept, ps.Add) and _scalar_ops(kept, psm.Second)
    np.testing.assert_array_equal(kept(xv), np.ones((3, 4)))
    # the compiled function still pickles and gives the same result
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(f))(xv), np.ones((3, 4)))


def _set_rows_of_shifted(x, idx):
    t = x + 1
    return tt.set_subtensor(t[idx], t[idx] * 2)


def test_grad_through_advanced_set_subtensor_drops_the_forward_write():
    x = tt.tensor4("x", dtype="float64")
    idx = tt.ivector("idx")
    g = grad(_set_rows_of_shifted(x, idx).sum(), x)
    f = tg.function([x, idx], g)
    # the gradient writes twice (zeros at idx, then the rows' gradient); the forward
    # set_subtensor and its add are gone, and so are the run-time broadcast switches
    assert len(_nodes(f, AdvancedIncSubtensor1)) == 2
    assert not _scalar_ops(f, ps.Add) or all(
        n.op.inplace_pattern for n in _scalar_ops(f, ps.Add))
    assert not _scalar_ops(f, psm.Switch)
    xv = RNG.normal(size=(5, 2, 3, 2))
    iv = np.array([0, 3], dtype="int32")
    expected = np.ones(xv.shape)
    expected[iv] = 2.0
    np.testing.assert_allclose(f(xv, iv), expected)
    before = tg.function([x, idx], g, mode=get_mode("FAST_RUN").excluding(
        "local_second_to_alloc", "local_useless_broadcast_switch"))
    assert len(_nodes(before, AdvancedIncSubtensor1)) == 3 and _scalar_ops(before, psm.Switch)
    np.testing.assert_allclose(before(xv, iv), expected)
    verify_grad(lambda v: _set_rows_of_shifted(v, tt.constant(iv)), [xv])


def test_broadcast_switch_is_kept_where_the_value_may_broadcast():
    # y is set into rows of x; its size 1 at run time broadcasts, so the gradient sums there
    x = tt.dmatrix("x")
    y = tt.dmatrix("y")
    idx = tt.ivector("idx")
    gy = grad((tt.set_subtensor(x[idx], y) ** 2).sum(), y)
    f = tg.function([x, y, idx], gy)
    assert _scalar_ops(f, psm.Switch)
    xv, iv = RNG.normal(size=(4, 3)), np.array([1, 2], dtype="int32")
    y_row = RNG.normal(size=(1, 3))
    np.testing.assert_allclose(f(xv, y_row, iv), 2 * 2 * y_row)
    y_full = RNG.normal(size=(2, 3))
    np.testing.assert_allclose(f(xv, y_full, iv), 2 * y_full)


def test_fill_with_a_value_of_the_results_shape_is_that_value():
    x = tt.dmatrix("x")
    f = tg.function([x], tt.second(tt.exp(x), tt.log(x)))
    assert not _scalar_ops(f, psm.Exp) and not _scalar_ops(f, psm.Second)
    assert not _nodes(f, Alloc)
    xv = RNG.uniform(1, 2, size=(2, 3))
    np.testing.assert_allclose(f(xv), np.log(xv))


def test_fill_shape_mismatch_still_raises():
    a = tt.dmatrix("a")
    b = tt.dmatrix("b")
    f = tg.function([a, b], tt.second(tt.exp(a), b))
    assert not _scalar_ops(f, psm.Exp)
    np.testing.assert_allclose(f(np.ones((2, 3)), np.full((2, 3), 5.0)), np.full((2, 3), 5.0))
    with pytest.raises(ValueError):
        f(np.ones((2, 3)), np.ones((3, 3)))


class NoShapeInfo(Op):
    """An op without ``infer_shape``: its output's sizes can only be measured."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][: len(inputs[0]) // 2].copy()


def test_fill_from_a_value_whose_shape_needs_computing_stays():
    x = tt.dvector("x")
    half = NoShapeInfo()(x)
    f = tg.function([x], tt.second(half, tt.constant(3.0)))
    assert _scalar_ops(f, psm.Second) and not _nodes(f, Alloc)
    np.testing.assert_array_equal(f(np.array([1.0, -1.0, 2.0, 4.0])), [3.0, 3.0])


def test_fill_from_a_boolean_selection_allocates_its_counted_length():
    x = tt.dvector("x")
    f = tg.function([x], tt.second(x[x > 0], tt.constant(3.0)))
    assert not _scalar_ops(f, psm.Second) and _nodes(f, Alloc)
    np.testing.assert_array_equal(f(np.array([1.0, -1.0, 2.0])), [3.0, 3.0])


def test_fill_broadcasting_a_row_matches_numpy():
    x = tt.dmatrix("x")
    r = tt.TensorType("float64", (1, None))("r")
    f = tg.function([x, r], tt.second(tt.exp(x), r) * 2)
    assert not _scalar_ops(f, psm.Exp)
    xv, rv = RNG.normal(size=(3, 4)), RNG.normal(size=(1, 4))
    np.testing.assert_allclose(f(xv, rv), 2 * np.broadcast_to(rv, (3, 4)))


def test_alloc_read_by_an_elementwise_op_of_that_shape_is_not_made():
    x = tt.dmatrix("x")
    c = tt.dscalar("c")
    f = tg.function([x, c], tt.alloc(c, x.shape[0]).dimshuffle(0, "x") * x)
    assert not _nodes(f, Alloc)
    xv = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(f(xv, 2.5), 2.5 * xv)
    kept = tg.function([x, c], tt.alloc(c, x.shape[0]).dimshuffle(0, "x") * x,
                       mode=get_mode("FAST_RUN").excluding("local_elemwise_alloc"))
    assert _nodes(kept, Alloc)
    np.testing.assert_allclose(kept(xv, 2.5), 2.5 * xv)


def test_alloc_whose_size_is_not_proven_stays_and_still_checks():
    x = tt.dmatrix("x")
    c = tt.dscalar("c")
    n = tt.lscalar("n")
    f = tg.function([x, c, n], tt.alloc(c, n).dimshuffle(0, "x") * x)
    assert _nodes(f, Alloc)
    xv = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(f(xv, 2.0, 3), 2.0 * xv)
    with pytest.raises(ValueError):
        f(xv, 2.0, 5)


def test_grad_of_a_row_sum_times_a_matrix_matches_finite_differences():
    # the fill of the mean's gradient becomes an alloc, which the product then drops
    def cost(x, t):
        return (x.sum(axis=1).dimshuffle(0, "x") * t).mean()

    x = tt.dmatrix("x")
    t = tt.dmatrix("t")
    f = tg.function([x, t], grad(cost(x, t), x))
    assert not _scalar_ops(f, psm.Second)
    xv, tv = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 5))
    expected = np.repeat(tv.sum(axis=1, keepdims=True), 4, axis=1) / tv.size
    np.testing.assert_allclose(f(xv, tv), expected)
    verify_grad(cost, [xv, tv])
