"""Elementwise ops through ``Elemwise``: numpy broadcasting (hypothesis over shapes), the
operators of tensor variables with Python and numpy scalars on either side, and the errors
for shapes that cannot broadcast."""

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt

pytestmark = pytest.mark.usefixtures("reference_mode")


def run(inputs, outputs, *values):
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE")(*values)


# -- broadcasting ------------------------------------------------------------------------------


@st.composite
def broadcastable_inputs(draw, n_inputs):
    """``n_inputs`` (static shape, value shape) pairs that broadcast together: each input drops
    some leading dimensions and has size 1 (declared static) where it is broadcast."""
    ndim = draw(st.integers(0, 4))
    full = draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim))
    specs = []
    for _ in range(n_inputs):
        own = draw(st.integers(0, ndim))
        static, shape = [], []
        for size in full[ndim - own:]:
            mode = draw(st.sampled_from(["unknown", "known", "broadcast"]))
            if mode == "broadcast":
                static.append(1)
                shape.append(1)
            else:
                static.append(size if mode == "known" else None)
                shape.append(size)
        specs.append((tuple(static), tuple(shape)))
    return specs


FUNCS = [
    (tt.add, np.add), (tt.mul, np.multiply), (tt.sub, np.subtract), (tt.maximum, np.maximum),
    (tt.arctan2, np.arctan2), (tt.lt, np.less), (lambda a, b: a ** 2 + b, lambda a, b: a ** 2 + b),
]


@settings(max_examples=30, deadline=None)
@given(specs=broadcastable_inputs(2), which=st.integers(0, len(FUNCS) - 1),
       dtype=st.sampled_from(["float64", "float32"]), seed=st.integers(0, 2 ** 16))
def test_binary_broadcasting_matches_numpy(specs, which, dtype, seed):
    rng = np.random.default_rng(seed)
    fn, ref = FUNCS[which]
    variables = [tt.tensor(dtype, shape=static) for static, _ in specs]
    values = [rng.normal(size=shape).astype(dtype) for _, shape in specs]
    out = fn(*variables)
    expected = ref(*values)
    # the static shape is what numpy gives wherever it is known
    assert out.ndim == expected.ndim
    for known, size in zip(out.type.shape, expected.shape):
        assert known is None or known == size
    got = run(variables, out, *values)
    assert isinstance(got, np.ndarray) and got.shape == expected.shape
    np.testing.assert_allclose(got, expected.astype(got.dtype), rtol=1e-5)


@settings(max_examples=30, deadline=None)
@given(specs=broadcastable_inputs(3), seed=st.integers(0, 2 ** 16))
def test_ternary_broadcasting_matches_numpy(specs, seed):
    rng = np.random.default_rng(seed)
    c, a, b = (tt.tensor(dtype, shape=static) for dtype, (static, _) in
               zip(["bool", "int16", "float32"], specs))
    cv = rng.random(specs[0][1]) < 0.5
    av = rng.integers(-5, 5, size=specs[1][1]).astype("int16")
    bv = rng.normal(size=specs[2][1]).astype("float32")
    got_switch, got_clip = run([c, a, b], [tt.switch(c, a, b), tt.clip(b, a, 2)], cv, av, bv)
    np.testing.assert_array_equal(got_switch, np.where(cv, av, bv))
    np.testing.assert_array_equal(got_clip, np.clip(bv, av, 2).astype("float32"))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), seed=st.integers(0, 2 ** 16),
       step=st.sampled_from([-2, -1, 2]))
def test_strided_inputs(shape, seed, step):
    rng = np.random.default_rng(seed)
    big = rng.normal(size=[s * 2 for s in shape])
    view = big[tuple(slice(None, None, step) for _ in shape)]
    x = tt.tensor("float64", shape=(None,) * len(shape))
    got_exp, got_sum = run([x, ], [tt.exp(x), x + x.T.T], view)
    np.testing.assert_allclose(got_exp, np.exp(view))
    np.testing.assert_allclose(got_sum, view + view)


def test_undeclared_runtime_broadcast_is_an_error():
    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    f = tensorgraph.function([x, y], x + y, mode="FAST_COMPILE")
    np.testing.assert_array_equal(f(np.ones((1, 3)), np.ones((1, 3))), np.full((1, 3), 2.0))
    with pytest.raises(ValueError, match="broadcastable"):
        f(np.ones((1, 3)), np.ones((2, 3)))


def test_incompatible_static_shapes_fail_at_build_time():
    a = tt.tensor("float64", shape=(2, 3))
    b = tt.tensor("float64", shape=(4, 3))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        tt.maximum(a, b)


def test_incompatible_runtime_shapes():
    x, y = tt.dvectors("x", "y")
    f = tensorgraph.function([x, y], tt.switch(x > 0, x, y), mode="FAST_COMPILE")
    with pytest.raises(ValueError, match=r"\(3,\), \(2,\)"):
        f(np.ones(3), np.ones(2))


def test_scalar_outputs_are_0d_arrays():
    x = tt.dscalar("x")
    for got in run([x], [tt.exp(x), x > 0, tt.switch(x > 0, x, 1.0), x // 2], 1.5):
        assert isinstance(got, np.ndarray) and got.shape == ()


# -- operators ---------------------------------------------------------------------------------

ARITH_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.mod, operator.pow]


@pytest.mark.parametrize("op", ARITH_OPS, ids=lambda o: o.__name__)
def test_arithmetic_operators_both_sides(op):
    x = tt.dvector("x")
    v = np.array([0.5, 1.5, 2.5])
    outs = [op(x, x), op(x, 2), op(2, x), op(x, 1.5), op(1.5, x), op(x, np.float64(3)),
            op(np.float64(3), x), op(np.array([1.0, 2.0, 3.0]), x)]
    expected = [op(v, v), op(v, 2), op(2, v), op(v, 1.5), op(1.5, v), op(v, 3.0), op(3.0, v),
                op(np.array([1.0, 2.0, 3.0]), v)]
    for out, got, e in zip(outs, run([x], outs, v), expected):
        assert out.dtype == "float64"
        np.testing.assert_allclose(got, e)


@pytest.mark.parametrize("op", ARITH_OPS[:3] + ARITH_OPS[4:], ids=lambda o: o.__name__)
def test_integer_operators(op):
    i = tt.ivector("i")
    v = np.array([1, 2, 7], dtype="int32")
    outs = [op(i, i), op(i, 3), op(3, i)]
    for out, got, e in zip(outs, run([i], outs, v), [op(v, v), op(v, 3), op(3, v)]):
        assert out.dtype == "int32"
        np.testing.assert_array_equal(got, e)


def test_unary_operators():
    x = tt.dvector("x")
    v = np.array([-1.5, 0.0, 2.0])
    got = run([x], [-x, +x, abs(x), x.abs(), abs(-x)], v)
    for g, e in zip(got, [-v, v, np.abs(v), np.abs(v), np.abs(v)]):
        np.testing.assert_array_equal(g, e)


def test_numpy_scalar_on_the_left_keeps_float32():
    x = tt.fvector("x")
    for expr in (np.float32(2) * x, x * np.float32(2), np.float32(1) + x, np.float32(1) / x):
        assert expr.dtype == "float32" and expr.owner is not None
    got = run([x], np.float32(2) * x, np.array([1, 2], "float32"))
    np.testing.assert_array_equal(got, [2, 4])


def test_numpy_float64_scalar_is_a_typed_float64():
    x = tt.fvector("x")
    assert (np.float64(2) * x).dtype == "float64"


def test_methods_call_the_math_functions():
    x = tt.dvector("x")
    v = np.array([0.2, 0.7])
    got = run([x], [x.exp(), x.log(), x.sqrt(), x.tanh(), x.astype("float32"),
                    round(x), x.clip(0.3, 0.5)], v)
    for g, e in zip(got, [np.exp(v), np.log(v), np.sqrt(v), np.tanh(v), v.astype("float32"),
                          np.round(v), np.clip(v, 0.3, 0.5)]):
        np.testing.assert_allclose(g, e, rtol=1e-7)
    assert got[4].dtype == "float32"


# -- test values -------------------------------------------------------------------------------


def test_test_values_are_computed_as_expressions_are_built():
    x, y = tt.dvector("x"), tt.dvector("y")
    with tensorgraph.config.change_flags(compute_test_value="raise"):
        x.tag.test_value = np.array([-1.0, 0.5, 2.0])
        y.tag.test_value = np.array([1.0, 2.0])
        z = tt.switch(x > 0, tt.sqrt(abs(x)), x ** 2) // 0.5
        np.testing.assert_array_equal(z.tag.test_value, [2.0, 1.0, 2.0])
        assert z.tag.test_value.dtype == "float64"
        with pytest.raises(ValueError, match=r"\(3,\), \(2,\)") as info:
            tt.maximum(x, y)
        assert "test_elemwise.py" in str(info.value)  # the line that built the bad node


@pytest.mark.parametrize("linker", ["py", "c|py"])
def test_ieee_results_come_without_numpy_warnings(linker):
    # log(0) = -inf, 0/0 = nan, exp(1000) = inf: the C kernels give them silently and so does
    # the numpy reference, so the two linkers behave alike (NanGuardMode finds such values)
    import warnings

    x = tt.vector("x")
    f = tensorgraph.function([x], [tt.log(x), x / x, tt.exp(x * 1000)],
                             mode=tensorgraph.Mode(linker=linker, optimizer=None))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log, div, exp = f(np.array([0.0, 1.0]))
    assert log[0] == -np.inf and np.isnan(div[0]) and exp[1] == np.inf


def test_infer_shape_of_dimensions_every_input_broadcasts():
    # an Elemwise subclass may declare outputs less static than its inputs; where every input
    # has static size 1 the output size is 1 (it was an IndexError)
    from tensorgraph.graph.basic import Apply
    from tensorgraph.tensor.elemwise import Elemwise
    from tensorgraph.tensor.type import TensorType

    class TwoOutputs(Elemwise):
        def make_node(self, *args):
            node = super().make_node(*args)
            return Apply(self, node.inputs, [TensorType("float64", (None, None))()
                                             for _ in range(2)])

    z1, z2 = TwoOutputs(tensorgraph.scalar.add)(np.eye(1), np.eye(1))
    shapes = z1.owner.op.infer_shape(None, z1.owner, [(1, 1), (1, 1)])
    assert [tuple(int(s.eval()) for s in shp) for shp in shapes] == [(1, 1), (1, 1)]


def test_infer_shape_gives_int64_variables_for_static_sizes():
    x, y = tt.tensor("float64", shape=(None, 1)), tt.tensor("float64", shape=(50, 10))
    z = x * y
    (shape,) = z.owner.op.infer_shape(None, z.owner, [(tt.lscalar(), 1), (50, 10)])
    assert [(s.type.dtype, s.type.ndim, int(s.eval())) for s in shape] == [("int64", 0, 50),
                                                                          ("int64", 0, 10)]


# -- DimShuffle dropping dimensions ------------------------------------------------------------


def test_dimshuffle_refuses_to_drop_a_dimension_of_static_size_other_than_1():
    from tensorgraph.tensor.elemwise import DimShuffle

    x = tt.tensor("float64", shape=(2, 1, None))
    with pytest.raises(TypeError, match="dimension 0 .* static size 2"):
        DimShuffle(3, (1, 2))(x)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN", "c", "NUMBA"])
def test_dimshuffle_drops_a_dimension_of_unknown_size_checked_at_run_time(mode):
    # PyTensor's rule: an unknown static size may be dropped; it must be 1 when the node runs
    from tensorgraph.tensor.elemwise import DimShuffle

    if mode == "NUMBA":
        pytest.importorskip("numba")
    if mode == "c":
        mode = tensorgraph.Mode(linker="c", optimizer=None)
    x = tt.tensor("float64", shape=(None, 1, None))
    y = DimShuffle(3, (1, 2))(x)
    assert y.type.shape == (1, None)
    f = tensorgraph.function([x], tt.exp(y) * 2, mode=mode)
    value = np.arange(4.0).reshape(1, 1, 4)
    np.testing.assert_allclose(f(value), np.exp(value[0]) * 2)
    with pytest.raises(ValueError, match=r"DimShuffle\{1,2\}: dimension 0 of the input is "
                                         r"dropped, so it must have size 1"):
        f(np.ones((2, 1, 4)))


def test_dimshuffle_dropping_an_unknown_dimension_has_a_gradient():
    x = tt.tensor("float64", shape=(None, 3))
    g = tensorgraph.grad((x.dimshuffle(1) ** 2).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.array([[1.0, 2.0, 3.0]])}), [[2.0, 4.0, 6.0]])


# -- ufunc-like methods, names, run-time shape messages ----------------------------------------


@pytest.mark.parametrize("fn, np_fn", [(tt.add, np.add), (tt.mul, np.multiply),
                                       (tt.sub, np.subtract), (tt.maximum, np.maximum),
                                       (tt.true_div, np.true_divide)])
@pytest.mark.parametrize("shape_x, shape_y", [((3, 5), (7, 1, 3)), ((2,), ()), ((), (4,))])
def test_outer_of_binary_functions_matches_numpy(fn, np_fn, shape_x, shape_y):
    rng = np.random.default_rng(3)
    xv, yv = rng.uniform(1, 2, size=shape_x), rng.uniform(1, 2, size=shape_y)
    x = tt.tensor("float64", shape=shape_x, name="x")
    y = tt.tensor("float64", shape=shape_y, name="y")
    z = fn.outer(x, y)
    assert z.type.shape == shape_x + shape_y
    np.testing.assert_allclose(run([x, y], z, xv, yv), np_fn.outer(xv, yv))


def test_elemwise_op_outer_and_its_arity_check():
    from tensorgraph.tensor.elemwise import Elemwise

    x, y = tt.vector("x"), tt.matrix("y")
    z = Elemwise(tensorgraph.scalar.add).outer(x, y)
    assert z.ndim == 3
    np.testing.assert_allclose(run([x, y], z, np.arange(2.0), np.ones((3, 4))),
                               np.add.outer(np.arange(2.0), np.ones((3, 4))))
    with pytest.raises(TypeError, match="needs a binary op"):
        Elemwise(tensorgraph.scalar.exp).outer(x, y)
    assert not hasattr(tt.exp, "outer")


def test_elemwise_name_is_how_it_prints_and_not_a_prop():
    from tensorgraph.tensor.elemwise import Elemwise

    named = Elemwise(tensorgraph.scalar.add, name="my_add")
    assert str(named) == "my_add"
    assert str(Elemwise(tensorgraph.scalar.add)) == "Elemwise{add}"
    assert named == Elemwise(tensorgraph.scalar.add)
    x = tt.vector("x")
    np.testing.assert_array_equal(run([x], named(x, x), np.array([1.0, 2.0])), [2.0, 4.0])


@pytest.mark.parametrize("linker", ["py", "c|py", "cvm"])
def test_runtime_shape_errors_give_the_pair_of_sizes(linker):
    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    f = tensorgraph.function([x, y], x * y, mode=tensorgraph.Mode(linker=linker))
    with pytest.raises(ValueError, match=r"Runtime broadcasting not allowed: input (y|1) has "
                                         r"size 1 in dimension 1.*\(input\[0\]\.shape\[1\] = 4, "
                                         r"input\[1\]\.shape\[1\] = 1\)"):
        f(np.zeros((5, 4)), np.zeros((5, 1)))
    with pytest.raises(ValueError, match=r"cannot be broadcast together.*Input dimension "
                                         r"mismatch: \(input\[0\]\.shape\[1\] = 4, "
                                         r"input\[1\]\.shape\[1\] = 3\)"):
        f(np.zeros((5, 4)), np.zeros((5, 3)))


# -- scalar ops written for PyTensor: grad(), their own make_node ------------------------------


class _Scale(tensorgraph.scalar.basic.ScalarOp):
    """n * x, with a PyTensor-style ``grad``: none implemented for n."""

    nin = 2
    name = "scale"

    def output_rule(self, *dtypes):
        return ("float64",)

    def impl(self, n, x):
        return n * x

    def grad(self, inputs, output_grads):
        from tensorgraph.gradient import grad_not_implemented

        n, _ = inputs
        (gz,) = output_grads
        return [grad_not_implemented(self, 0, n), gz * n]


def test_scalar_op_grad_method_is_used_and_grad_not_implemented_is_reported():
    from tensorgraph.gradient import NullTypeGradError, verify_grad
    from tensorgraph.tensor.elemwise import Elemwise

    scale = Elemwise(_Scale())
    x = tt.dvector("x")
    g = tensorgraph.grad(scale(3.0, x).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.array([1.0, 2.0])}), [3.0, 3.0])
    verify_grad(lambda v: scale(2.5, v), [np.array([0.5, -1.0])])
    with pytest.raises(NullTypeGradError, match="not implemented"):
        tensorgraph.grad(scale(x, 2.0).sum(), x)


def test_scalar_op_without_any_gradient_still_says_so():
    from tensorgraph.tensor.elemwise import Elemwise

    class NoGrad(_Scale):
        grad = tensorgraph.graph.op.Op.grad
        name = "nograd"

    x = tt.dvector("x")
    with pytest.raises(NotImplementedError, match="the scalar op nograd has no gradient"):
        tensorgraph.grad(Elemwise(NoGrad())(2.0, x).sum(), x)


def test_scalar_op_with_its_own_make_node_sets_the_outputs():
    from tensorgraph.graph.basic import Apply
    from tensorgraph.scalar.basic import ScalarType
    from tensorgraph.tensor.elemwise import Elemwise

    class SplitOp(tensorgraph.scalar.basic.ScalarOp):
        name = "split"
        nin = 1

        def make_node(self, x):
            return Apply(self, [ScalarType("float64")()],
                         [ScalarType("float64")(), ScalarType("int32")()])

        def impl(self, x):
            return np.trunc(x) * 0 + x, np.trunc(x).astype("int32")

        def L_op(self, inputs, outputs, output_grads):
            return [output_grads[0] * 2]

    x = tt.dvector("x")
    y, k = Elemwise(SplitOp())(x)
    assert (y.dtype, k.dtype) == ("float64", "int32")
    values = run([x], [y, k], np.array([1.5, 2.5]))
    np.testing.assert_array_equal(values[0], [1.5, 2.5])
    np.testing.assert_array_equal(values[1], [1, 2])
    np.testing.assert_array_equal(tensorgraph.grad(y.sum(), x).eval({x: np.ones(2)}), [2.0, 2.0])


def test_verify_grad_checks_an_inplace_op():
    from tensorgraph.gradient import verify_grad
    from tensorgraph.tensor.elemwise import Elemwise

    point = np.array([[1.5, -0.5], [2.0, 0.1]])
    verify_grad(Elemwise(tensorgraph.scalar.exp, {0: 0}), [point])
    np.testing.assert_array_equal(point, [[1.5, -0.5], [2.0, 0.1]])  # the caller's is kept


def test_ops_compare_equal_to_the_functions_that_apply_them():
    x = tt.dvector("x")
    assert tt.exp(x).owner.op == tt.exp and tt.exp == tt.exp(x).owner.op
    assert (x + x).owner.op == tt.add and (x * x).owner.op == tt.mul
    assert (x - x).owner.op == tt.sub and (-x).owner.op == tt.neg
    assert tt.exp(x).owner.op != tt.log and (x * x).owner.op != tt.add
    assert tt.exp(x).owner.op != "exp"
    assert hash(tt.exp(x).owner.op) == hash(tt.exp.elemwise_op)
