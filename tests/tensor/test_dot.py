"""``tt.dot``, ``matmul`` (``@``), ``outer``, ``tensordot`` and ``batched_dot`` against numpy:
every ndim combination, dtypes, batch broadcasting (hypothesis), shape errors at build and run
time, non-contiguous inputs; gradients with ``verify_grad``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor.dot import Dot, MatMul, TensorDot

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(77)


def run(inputs, outputs, *values):
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE")(*values)


def sym(value, name, static=False):
    shape = value.shape if static else tuple(1 if s == 1 else None for s in value.shape)
    return tt.tensor(value.dtype.name, shape=shape, name=name)


def compare(fn, np_fn, a, b, static=False):
    x, y = sym(a, "a", static), sym(b, "b", static)
    out = fn(x, y)
    got = run([x, y], out, a, b)
    want = np.asarray(np_fn(a, b))
    assert got.shape == want.shape
    assert got.dtype == want.dtype == np.dtype(out.dtype)
    tol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    return out


SHAPES = {0: (), 1: (4,), 2: (3, 4), 3: (2, 3, 4)}


def right_shape(ndim_a, ndim_b):
    """A shape for b whose contracted axis has a's last length (4)."""
    return {0: (), 1: (4,), 2: (4, 5), 3: (2, 4, 5)}[ndim_b] if ndim_a else SHAPES[ndim_b]


@pytest.mark.parametrize("ndim_a", [0, 1, 2, 3])
@pytest.mark.parametrize("ndim_b", [0, 1, 2, 3])
def test_dot_every_ndim_combination(ndim_a, ndim_b):
    a = RNG.normal(size=SHAPES[ndim_a])
    b = RNG.normal(size=right_shape(ndim_a, ndim_b))
    out = compare(tt.dot, np.dot, a, b)
    if 0 < ndim_a <= 2 and 0 < ndim_b <= 2:
        assert isinstance(out.owner.op, Dot)


@pytest.mark.parametrize("dtype_a, dtype_b", [
    ("float32", "float32"), ("float64", "float32"), ("int32", "int32"), ("int8", "float32"),
    ("int32", "float32"), ("bool", "bool"), ("complex64", "float32"),
])
def test_dot_output_dtype_is_numpy_upcast(dtype_a, dtype_b):
    a = RNG.integers(0, 3, size=(3, 4)).astype(dtype_a)
    b = RNG.integers(0, 3, size=(4,)).astype(dtype_b)
    compare(tt.dot, np.dot, a, b)
    compare(lambda x, y: x.dot(y), np.dot, a, b)


def test_float32_stays_float32():
    a, b = tt.matrix("a", dtype="float32"), tt.matrix("b", dtype="float32")
    for out in (tt.dot(a, b), a @ b, tt.outer(a.flatten(), b.flatten()),
                tt.tensordot(a, b, 1), tt.batched_dot(a, b)):
        assert out.dtype == "float32"


def test_non_contiguous_and_negative_stride_inputs():
    base_a, base_b = RNG.normal(size=(6, 8)), RNG.normal(size=(8, 10))
    for a, b in ((base_a[::2, ::-1], base_b[::-1, ::3]), (base_a[::-2], base_b.T[::2, ::-1].T)):
        compare(tt.dot, np.dot, a, b)
        compare(tt.matmul, np.matmul, a[None], b[None])


def test_dot_of_scalars_is_a_product():
    x, y = tt.scalar("x"), tt.vector("y")
    assert run([x, y], tt.dot(x, y), 2.0, np.array([1.0, 2.0])).tolist() == [2.0, 4.0]


# -- matmul ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape_a, shape_b", [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (6, 4, 5)), ((1, 3, 4), (2, 4, 5)),
])
def test_matmul_matches_numpy(shape_a, shape_b):
    a, b = RNG.normal(size=shape_a), RNG.normal(size=shape_b)
    compare(tt.matmul, np.matmul, a, b)
    compare(lambda x, y: x @ y, np.matmul, a, b, static=True)


@settings(max_examples=30, deadline=None)
@given(batch=st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.booleans()), max_size=3),
       extra=st.integers(0, 1), n=st.integers(1, 3), k=st.integers(1, 3), m=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_matmul_broadcasts_batch_dimensions(batch, extra, n, k, m, seed):
    rng = np.random.default_rng(seed)
    batch_a = tuple(1 if one_a else s for s, one_a, _ in batch)
    batch_b = tuple(1 if one_b else s for s, _, one_b in batch)
    a = rng.normal(size=(2,) * extra + batch_a + (n, k))
    b = rng.normal(size=batch_b + (k, m))
    compare(tt.matmul, np.matmul, a, b)


def test_matmul_refuses_scalars_and_undeclared_broadcasting():
    with pytest.raises(ValueError, match="at least 1-d"):
        tt.matmul(tt.scalar("s"), tt.vector("v"))
    a, b = tt.tensor3("a"), tt.tensor3("b")
    with pytest.raises(ValueError, match="does not declare it broadcastable"):
        run([a, b], a @ b, np.ones((1, 2, 3)), np.ones((4, 3, 2)))
    with pytest.raises(ValueError, match="batch dimension 0 differs"):
        run([a, b], a @ b, np.ones((2, 2, 3)), np.ones((4, 3, 2)))
    with pytest.raises(ValueError, match="batch dimension 0 differs"):
        tt.tensor3("c", shape=(2, None, None)) @ tt.tensor3("d", shape=(3, None, None))
    with pytest.raises(TypeError, match="same ndim"):
        MatMul()(tt.tensor3("c"), tt.matrix("d"))


# -- shape errors ---------------------------------------------------------------------------


def test_inner_dimension_mismatch_at_build_time_names_both_shapes():
    a = tt.matrix("a", shape=(2, 3))
    b = tt.matrix("b", shape=(4, 5))
    with pytest.raises(ValueError, match=r"a has shape \(2, 3\) and b has shape \(4, 5\)"):
        tt.dot(a, b)
    with pytest.raises(ValueError, match=r"inner dimensions differ"):
        tt.matmul(tt.tensor3("c", shape=(None, 2, 3)), tt.tensor3("d", shape=(None, 4, 5)))
    with pytest.raises(ValueError, match=r"axis 1 of a .* and axis 0 of b .* \(3 != 4\)"):
        tt.tensordot(a, b, [[1], [0]])


def test_inner_dimension_mismatch_at_run_time_names_both_shapes():
    a, b = tt.matrix("a"), tt.vector("b")
    with pytest.raises(ValueError, match=r"a has shape \(2, 3\) and b has shape \(4,\) "
                                         r"\(3 != 4\)"):
        run([a, b], tt.dot(a, b), np.ones((2, 3)), np.ones(4))
    c = tt.tensor3("c")
    with pytest.raises(ValueError, match="different lengths"):
        run([c, a], tt.dot(c, a), np.ones((2, 2, 3)), np.ones((4, 2)))


def test_bad_ndims_and_axes():
    with pytest.raises(TypeError, match="vectors and matrices"):
        Dot()(tt.tensor3("t"), tt.matrix("m"))
    with pytest.raises(ValueError, match="axes=3 needs tensors of at least 3"):
        tt.tensordot(tt.matrix("a"), tt.tensor3("b"), 3)
    with pytest.raises(ValueError, match="pair up"):
        tt.tensordot(tt.matrix("a"), tt.matrix("b"), [[0, 1], [0]])
    with pytest.raises(ValueError, match="out of range"):
        tt.tensordot(tt.matrix("a"), tt.matrix("b"), [[2], [0]])
    with pytest.raises(TypeError, match="2-d or 3-d"):
        tt.batched_dot(tt.vector("a"), tt.matrix("b"))


# -- tensordot, outer, batched_dot ----------------------------------------------------------


@pytest.mark.parametrize("shape_a, shape_b, axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4, 5), 0), ((3,), (3,), 1),
    ((2, 3, 4), (4, 2, 5), [[0, 2], [1, 0]]), ((2, 3, 4), (5, 3), [1, 1]),
    ((2, 3, 4), (4, 3, 2), [[-1, 1, 0], [0, 1, -1]]),
])
def test_tensordot_matches_numpy(shape_a, shape_b, axes):
    a, b = RNG.normal(size=shape_a), RNG.normal(size=shape_b)
    compare(lambda x, y: tt.tensordot(x, y, axes), lambda x, y: np.tensordot(x, y, axes), a, b)
    verify_grad(lambda x, y: tt.tensordot(x, y, axes), [a, b], rng=np.random.default_rng(0))


def test_outer_and_batched_dot():
    compare(tt.outer, np.outer, RNG.normal(size=3), RNG.normal(size=4))
    compare(tt.outer, np.outer, RNG.normal(size=(2, 2)), RNG.normal(size=3))
    for shape_a, shape_b in (((5, 3), (5, 3)), ((5, 2, 3), (5, 3)), ((5, 3), (5, 3, 2)),
                             ((5, 2, 3), (5, 3, 4))):
        a, b = RNG.normal(size=shape_a), RNG.normal(size=shape_b)
        want = lambda x, y: np.stack([np.dot(x[i], y[i]) for i in range(5)])  # noqa: E731
        compare(tt.batched_dot, want, a, b)
        verify_grad(tt.batched_dot, [a, b], rng=np.random.default_rng(0))


# -- infer_shape ----------------------------------------------------------------------------


def test_static_shapes_and_infer_shape():
    a = tt.matrix("a", shape=(2, None))
    b = tt.matrix("b", shape=(None, 5))
    out = tt.dot(a, b)
    assert out.type.shape == (2, 5)
    assert out.owner.op.infer_shape(None, out.owner, [(2, 3), (3, 5)]) == [(2, 5)]
    t = tt.tensor("float64", shape=(1, None, 3, 4), name="t")
    mm = t @ tt.tensor3("u", shape=(6, 4, None))
    assert mm.type.shape == (1, 6, 3, None)
    assert mm.owner.op.infer_shape(None, mm.owner, [(1, 6, 3, 4), (1, 6, 4, 7)]) == [(1, 6, 3, 7)]
    td = TensorDot([0, 2], [1, 0])(tt.tensor3("x"), tt.tensor3("y"))
    assert td.owner.op.infer_shape(None, td.owner, [(2, 3, 4), (4, 2, 5)]) == [(3, 5)]


# -- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape_a, shape_b", [
    ((), (3,)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
])
def test_dot_gradients(shape_a, shape_b):
    a, b = RNG.normal(size=shape_a), RNG.normal(size=shape_b)
    verify_grad(tt.dot, [a, b], rng=np.random.default_rng(0))


@pytest.mark.parametrize("shape_a, shape_b", [
    ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (6, 4, 5)),
])
def test_matmul_gradients_sum_over_broadcast_batches(shape_a, shape_b):
    a, b = RNG.normal(size=shape_a), RNG.normal(size=shape_b)

    def fn(x, y):
        x = tt.specify_shape(x, tuple(1 if s == 1 else None for s in shape_a))
        return tt.matmul(x, y)

    verify_grad(fn, [a, b], rng=np.random.default_rng(0))


def test_float32_gradients_stay_float32():
    a, b = tt.matrix("a", dtype="float32"), tt.vector("b", dtype="float32")
    ga, gb = tensorgraph.grad(tt.sum(tt.dot(a, b)), [a, b])
    assert ga.dtype == gb.dtype == "float32"
    av = RNG.normal(size=(3, 4)).astype("float32")
    bv = RNG.normal(size=4).astype("float32")
    verify_grad(tt.dot, [av, bv], rng=np.random.default_rng(0))


def test_integer_inputs_get_zero_gradients():
    a, b = tt.matrix("a", dtype="int32"), tt.matrix("b")
    out = tt.dot(a, b)
    ga, gb = out.owner.op.L_op([a, b], [out], [tt.ones_like(out)])
    av, bv = np.ones((2, 3), dtype="int32"), RNG.normal(size=(3, 2))
    f = tensorgraph.function([a, b], [ga, gb], mode="FAST_COMPILE", on_unused_input="ignore")
    ga_value, gb_value = f(av, bv)
    assert ga_value.dtype == tensorgraph.config.floatX
    np.testing.assert_array_equal(ga_value, np.zeros((2, 3)))
    np.testing.assert_allclose(gb_value, av.T @ np.ones((2, 2)))


def test_r_op_of_dot():
    a, b, va = tt.matrix("a"), tt.matrix("b"), tt.matrix("va")
    av, bv, dv = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3))
    rop = tensorgraph.gradient.Rop(tt.dot(a, b), a, va)
    f = tensorgraph.function([a, b, va], rop, mode="FAST_COMPILE", on_unused_input="ignore")
    np.testing.assert_allclose(f(av, bv, dv), dv @ bv)
