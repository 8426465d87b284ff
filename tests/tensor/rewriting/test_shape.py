"""The shape feature (inferred static and symbolic shapes), the shape rewrites that use it, and
the run-time shape asserts (kept by safe presets, removed by 'unsafe')."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.graph import FunctionGraph
from tensorgraph.graph.basic import Apply, Constant
from tensorgraph.graph.op import Op
from tensorgraph.printing import pp
from tensorgraph.raise_op import Assert, assert_op
from tensorgraph.tensor.rewriting.shape import ShapeFeature, shape_feature
from tensorgraph.tensor.rewriting.utils import same_structure
from tensorgraph.tensor.shape import Shape_i


class NoShapeInfo(Op):
    """An op without ``infer_shape``: its output's sizes can only be measured."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()


def test_shape_feature_infers_through_ops_and_falls_back_to_measuring():
    x = tt.dmatrix("x")
    r = tt.TensorType("float64", (1, 3))("r")
    opaque = NoShapeInfo()(x)
    fg = FunctionGraph([x, r], [tt.exp(x + r).T, tt.dot(x, x.T), opaque, tt.sum(x, axis=0)])
    feature = shape_feature(fg)
    assert isinstance(feature, ShapeFeature) and shape_feature(fg) is feature
    transposed, gram, opaque_out, summed = fg.outputs
    t0, t1 = feature.shape_tuple(transposed)
    assert isinstance(t0, Constant) and int(t0.data) == 3  # static, from r
    assert same_structure(t1, Shape_i(0)(fg.inputs[0]))
    assert all(same_structure(s, Shape_i(0)(fg.inputs[0])) for s in feature.shape_tuple(gram))
    assert same_structure(feature.size(opaque_out, 1), Shape_i(1)(opaque_out))
    assert same_structure(feature.size(summed, 0), Shape_i(1)(fg.inputs[0]))
    with pytest.raises(ValueError, match="already has a ShapeFeature"):
        fg.attach_feature(ShapeFeature())


def test_sizes_come_from_inputs_and_proven_specify_shapes_go():
    x, y = tt.dmatrices("x", "y")
    e = tt.exp(x)
    outs = [tt.specify_shape(e, x.shape) * 2, tt.specify_shape(x, y.shape) + y,
            tt.dot(e, y).shape[1]]
    f = tg.function([x, y], outs, mode=Mode("py", "fast_run"))
    ops = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert ops.count("SpecifyShape") == 1  # x's size against y's cannot be proven
    assert "Dot" not in ops and "Dot22" not in ops  # the size needs no product
    X, Y = np.ones((2, 2)), np.zeros((2, 2))
    a, b, n = f(X, Y)
    np.testing.assert_allclose(a, 2 * np.e)
    assert n == 2
    with pytest.raises(AssertionError, match="specify_shape"):
        f(np.ones((2, 3)), np.zeros((2, 2)))


def test_assert_op_checks_conditions_and_keeps_gradients():
    x = tt.dvector("x")
    ok = tt.eq(x.shape[0], 2)
    checked = assert_op(x * 3, ok, msg="x must have 2 elements")
    assert assert_op(x) is x
    with pytest.raises(TypeError, match="0-d bool"):
        Assert("m")(x, x)
    g = tg.grad(checked.sum(), x)
    for mode in (Mode("py", None), "FAST_RUN"):
        f = tg.function([x], [checked, g], mode=mode)
        value, grad = f(np.array([1.0, 2.0]))
        np.testing.assert_allclose(value, [3.0, 6.0])
        np.testing.assert_allclose(grad, [3.0, 3.0])
        with pytest.raises(Exception, match="x must have 2 elements"):
            f(np.ones(3))


def test_asserts_proven_at_compile_time_disappear():
    x = tt.TensorType("float64", (2,))("x")
    f = tg.function([x], assert_op(x * 2, tt.eq(x.shape[0], 2)), mode=Mode("py", "fast_run"))
    assert pp(f) == "([2.] * x)"


def test_shape_of_infers_on_lookup():
    m = tt.iscalar("m")
    x = tt.matrix("x")
    out = tt.ones((m, 3)) + x
    fg = FunctionGraph(outputs=[out], clone=False, features=[ShapeFeature()])
    feature = fg.shape_feature
    assert out not in feature.shape_of and feature.shape_of.get(out) is None
    entries = feature.shape_of[out]  # indexing infers, as PyTensor's eager shape_of reads
    assert out in feature.shape_of and len(entries) == 2
    f = tg.function([m, x], list(entries), on_unused_input="ignore")
    assert [int(v) for v in f(4, np.zeros((4, 3)))] == [4, 3]
    with pytest.raises(KeyError):
        feature.shape_of["not a variable"]
