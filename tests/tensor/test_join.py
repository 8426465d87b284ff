"""Joining ops against numpy: concatenate/join, stack, make_vector, split, hstack, vstack."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor.join import Join, MakeVector, Split

from op_checks import check_infer_shape, fn

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(0)


def randn(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# concatenate / join


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_concatenate_matrices(axis):
    a, b = tt.matrix("a"), tt.matrix("b")
    va = randn(2, 3)
    # non-contiguous, negative-stride second input
    vb = randn(5, 3)[::-2] if axis in (0, -2) else randn(2, 4)[:, ::-1]
    out = tt.concatenate([a, b], axis=axis)
    assert isinstance(out.owner.op, Join)
    np.testing.assert_array_equal(fn([a, b], out)(va, vb), np.concatenate([va, vb], axis=axis))
    check_infer_shape(out, [a, b], [va, vb])
    assert tt.join(axis, a, b).owner.op == out.owner.op


def test_concatenate_upcasts_and_static_shapes():
    a = tt.matrix("a", dtype="int32", shape=(2, 3))
    b = tt.matrix("b", dtype="float32", shape=(None, 3))
    out = tt.concatenate([a, b])
    assert out.dtype == "float64" and out.type.shape == (None, 3)
    c = tt.matrix("c", dtype="int32", shape=(4, 3))
    assert tt.concatenate([a, c]).type.shape == (6, 3)
    va, vb = np.ones((2, 3), "int32"), randn(1, 3, dtype="float32")
    got = fn([a, b], out)(va, vb)
    np.testing.assert_array_equal(got, np.concatenate([va, vb]))
    assert got.dtype == "float64"
    assert tt.concatenate([a]) is a


def test_concatenate_errors():
    a, b = tt.matrix("a", shape=(2, 3)), tt.matrix("b", shape=(2, 4))
    with pytest.raises(ValueError, match="dimension 1 has sizes"):
        tt.concatenate([a, b])
    with pytest.raises(ValueError, match="same number of dimensions"):
        tt.concatenate([a, tt.vector("v")])
    # a type mismatch (PyTensor's TypeError) that numpy code catches as its ValueError
    with pytest.raises(TypeError, match="same number of dimensions"):
        tt.join(0, tt.vector("v"), a)
    with pytest.raises(ValueError, match="zero-dimensional"):
        tt.concatenate([tt.scalar("s"), tt.scalar("t")])
    with pytest.raises(IndexError, match="out of range"):
        tt.concatenate([a, a], axis=2)
    with pytest.raises(TypeError, match="list"):
        tt.concatenate(a)
    x, y = tt.matrix("x"), tt.matrix("y")
    f = fn([x, y], tt.concatenate([x, y], axis=1))
    with pytest.raises(ValueError, match=r"shapes \(2, 3\), \(3, 3\)"):
        f(randn(2, 3), randn(3, 3))


def test_join_grad():
    verify_grad(lambda a, b, c: tt.concatenate([a, b, c], axis=1),
                [randn(2, 1), randn(2, 3), randn(2, 2)], rng=RNG)
    verify_grad(lambda a, b: tt.concatenate([a, b * 2]), [randn(3), randn(2)], rng=RNG)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.data())
def test_concatenate_matches_numpy(ndim, data):
    axis = data.draw(st.integers(-ndim, ndim - 1))
    base = [data.draw(st.integers(0, 3)) for _ in range(ndim)]
    n = data.draw(st.integers(1, 4))
    values = []
    for _ in range(n):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        values.append(np.arange(int(np.prod(shape)), dtype="float64").reshape(shape))
    variables = [tt.tensor("float64", (None,) * ndim, f"x{i}") for i in range(n)]
    out = fn(variables, tt.concatenate(variables, axis=axis))(*values)
    np.testing.assert_array_equal(out, np.concatenate(values, axis=axis))


# ----------------------------------------------------------------------------------------------
# stack, make_vector


def test_stack_scalars_is_make_vector():
    a, b = tt.lscalar("a"), tt.iscalar("b")
    v = tt.stack([a, b, 3])
    assert isinstance(v.owner.op, MakeVector)
    assert v.dtype == "int64" and v.type.shape == (3,)
    np.testing.assert_array_equal(fn([a, b], v)(1, 2), [1, 2, 3])
    verify_grad(lambda x, y: tt.stack([x, y * 3, x * y]), [randn(), randn()], rng=RNG)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(axis):
    a, b = tt.matrix("a"), tt.matrix("b")
    va, vb = randn(2, 3), randn(4, 3)[::2]
    out = tt.stack([a, b], axis=axis)
    np.testing.assert_array_equal(fn([a, b], out)(va, vb), np.stack([va, vb], axis=axis))
    assert out.type.shape[axis] == 2
    verify_grad(lambda x, y: tt.stack([x, y], axis=axis), [va, vb], rng=RNG)


def test_stack_errors_and_as_tensor_variable():
    a, v = tt.matrix("a"), tt.vector("v")
    with pytest.raises(ValueError, match="same shape"):
        tt.stack([a, v])
    with pytest.raises(IndexError, match="out of range"):
        tt.stack([a, a], axis=3)
    x, y = tt.dscalar("x"), tt.dscalar("y")
    vec = tt.as_tensor_variable([x, y, 1.5])
    np.testing.assert_array_equal(fn([x, y], vec)(1.0, 2.0), [1.0, 2.0, 1.5])


def test_hstack_vstack():
    a, b = tt.vector("a"), tt.vector("b")
    va, vb = randn(3), randn(2)
    np.testing.assert_array_equal(fn([a, b], tt.hstack([a, b]))(va, vb), np.hstack([va, vb]))
    vc = randn(3)
    np.testing.assert_array_equal(fn([a, b], tt.vstack([a, b]))(va, vc), np.vstack([va, vc]))
    m, n = tt.matrix("m"), tt.matrix("n")
    vm, vn = randn(2, 3), randn(2, 1)
    np.testing.assert_array_equal(fn([m, n], tt.hstack([m, n]))(vm, vn), np.hstack([vm, vn]))


# ----------------------------------------------------------------------------------------------
# split


def test_split_values_static_shapes_and_views():
    x = tt.matrix("x")
    pieces = tt.split(x, [1, 3, 0], axis=1)
    assert isinstance(pieces[0].owner.op, Split)
    assert [p.type.shape for p in pieces] == [(None, 1), (None, 3), (None, 0)]
    v = randn(2, 4)
    got = fn([x], pieces)(v)
    for g, e in zip(got, np.split(v, [1, 4], axis=1)):
        np.testing.assert_array_equal(g, e)
    check_infer_shape(pieces[1], [x], [v])
    assert pieces[0].owner.op.view_map == {0: [0], 1: [0], 2: [0]}


def test_split_symbolic_sizes_and_errors():
    x = tt.vector("x")
    sizes = tt.lvector("sizes")
    with pytest.raises(ValueError, match="n_splits"):
        tt.split(x, sizes)
    a, b = tt.split(x, sizes, n_splits=2)
    f = fn([x, sizes], [a, b])
    v = randn(5)
    got = f(v, np.array([2, 3]))
    np.testing.assert_array_equal(got[0], v[:2])
    np.testing.assert_array_equal(got[1], v[2:])
    with pytest.raises(ValueError, match=r"sizes \[2, 2\] \(sum 4\).*size 5"):
        f(v, np.array([2, 2]))
    with pytest.raises(ValueError, match="add up to"):
        tt.split(tt.vector("w", shape=(5,)), [2, 2])


def test_split_grad_including_unused_pieces():
    verify_grad(lambda x: tt.split(x, [2, 1, 1], axis=0)[1] * 3, [randn(4, 2)], rng=RNG)
    verify_grad(lambda x: tt.concatenate(tt.split(x, [1, 2], axis=1)[::-1], axis=1),
                [randn(2, 3)], rng=RNG)


def test_make_vector_casts_inputs_that_convert_without_loss():
    from tensorgraph.tensor.join import MakeVector

    b, i, d = tt.bscalar("b"), tt.iscalar("i"), tt.dscalar("d")
    v = MakeVector("float64")(b, i, d)
    assert v.dtype == "float64" and v.type.shape == (3,)
    np.testing.assert_allclose(v.eval({b: np.int8(2), i: np.int32(-3), d: 0.5}), [2, -3, 0.5])
    assert MakeVector()().dtype == "int64"
    with pytest.raises(TypeError, match="without loss"):
        MakeVector("int8")(i)
    with pytest.raises(ValueError, match="input 1 .* must be a scalar, got 1-d"):
        MakeVector("float64")(d, tt.dvector())
    assert MakeVector()(i).type.shape == (1,)


def test_split_takes_the_axis_as_an_input_as_in_pytensor():
    x = tt.dmatrix("x")
    first, second = Split(2)(x, 1, [1, 2])
    assert second.type.shape == (None, 2) and first.owner.op == Split(2, 1)
    value = np.arange(6.0).reshape(2, 3)
    got = fn([x], [first, second])(value)
    np.testing.assert_allclose(got[0], value[:, :1])
    np.testing.assert_allclose(got[1], value[:, 1:])
    assert Split(len_splits=2)(x, tt.constant(0), [1, 1])[0].type.shape == (1, None)
    with pytest.raises(TypeError, match="n_splits or len_splits"):
        Split()


def test_axis_may_be_an_expression_of_constants():
    from tensorgraph.tensor.join import Join

    a = tt.tensor(dtype="float64", shape=(None, None, 1))
    b = tt.tensor(dtype="float64", shape=(1, None, 1))
    c = Join()(tt.cast(tt.constant(1), "int32"), a, b)
    assert c.owner.op == Join(1) and c.type.shape == (1, None, 1)
    assert tt.concatenate([a, b], axis=tt.constant(2) - 1).owner.op == Join(1)
    symbolic = tt.concatenate([a, b], axis=tt.lscalar("ax"))
    assert symbolic.owner.op == Join() and symbolic.type.shape == (None, None, None)


# ----------------------------------------------------------------------------------------------
# an axis known only when the function runs (an integer scalar input)


def test_join_along_a_symbolic_axis_matches_numpy_for_every_axis():
    a, b, c = tt.dtensor3("a"), tt.dtensor3("b"), tt.dtensor3("c")
    ax = tt.iscalar("ax")
    out = tt.join(ax, a, b, c)
    assert out.owner.op == Join() and out.owner.inputs[0] is ax
    f = fn([ax, a, b, c], out)
    for axis in (0, 1, 2, -1, -2, -3):
        shapes = [[2, 3, 4] for _ in range(3)]
        for k, s in enumerate(shapes):
            s[axis] = k + 1
        values = [randn(*s) for s in shapes]
        np.testing.assert_array_equal(f(axis, *values), np.concatenate(values, axis=axis))
        check_infer_shape(out, [ax, a, b, c], [axis, *values])


@pytest.mark.parametrize("axis", [3, -4, 100])
def test_a_symbolic_join_axis_out_of_range_is_a_value_error_at_run_time(axis):
    a, b = tt.dtensor3("a"), tt.dtensor3("b")
    ax = tt.lscalar("ax")
    f = fn([ax, a, b], tt.concatenate([a, b], axis=ax))
    with pytest.raises(ValueError, match=rf"join: axis {axis} is out of range for 3-d inputs "
                                         r"\(it must be in \[-3, 2\]\)"):
        f(axis, randn(2, 2, 2), randn(2, 2, 2))


def test_a_symbolic_join_axis_with_mismatched_sizes_names_the_shapes():
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    ax = tt.lscalar("ax")
    f = fn([ax, a, b], tt.join(ax, a, b))
    with pytest.raises(ValueError, match=r"join along axis 1: inputs of shapes \(2, 3\), "
                                         r"\(3, 3\) do not fit"):
        f(1, randn(2, 3), randn(3, 3))


def test_symbolic_join_axis_types_and_static_shapes():
    a = tt.tensor(dtype="float32", shape=(1, None, 4))
    b = tt.tensor(dtype="float32", shape=(1, 2, 4))
    ax = tt.lscalar("ax")
    assert tt.join(ax, a, b).type.shape == (None, None, None)     # any dimension may grow
    assert Join()(ax, a).type.shape == (1, None, 4)              # one tensor: unchanged
    assert tt.join(ax, a) is a                                   # join() of one tensor is it
    assert tt.join(ax, a, b.astype("int8")).dtype == "float32"   # upcast as for a fixed axis
    with pytest.raises(TypeError, match="axis must be an integer"):
        tt.join(tt.dscalar(), a, b)
    with pytest.raises(TypeError, match="axis must be an integer scalar"):
        tt.join(tt.lvector(), a, b)
    with pytest.raises(TypeError, match="zero-dimensional"):
        tt.join(ax, tt.dscalar(), tt.dscalar())
    with pytest.raises(TypeError, match="same number of dimensions"):
        Join()(ax, a, tt.fmatrix())
    # a constant axis (or an expression of constants) gives the fixed-axis node
    assert Join()(tt.constant(-1), a, b).owner.op == Join(2)


def test_zero_dimensional_joins_are_type_and_value_errors():
    with pytest.raises(TypeError, match="zero-dimensional"):
        tt.join(0, tt.as_tensor_variable(1), tt.as_tensor_variable(2))
    with pytest.raises(ValueError, match="zero-dimensional"):
        tt.concatenate([tt.dscalar(), tt.dscalar()])


def test_gradient_of_a_join_along_a_symbolic_axis():
    for axis, shapes in [(0, [(1, 3), (2, 3)]), (-1, [(2, 1), (2, 3)]), (1, [(2, 2), (2, 1)])]:
        shared_axis = tensorgraph.shared(np.int64(axis))     # symbolic, known only at run time
        verify_grad(lambda a, b: Join()(shared_axis, a, b) * 1.5,
                    [randn(*s) for s in shapes], rng=RNG)
    ax = tt.lscalar("ax")
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    w = tt.dmatrix("w")
    cost = (tt.join(ax, a, b) * w).sum()
    ga, gb = tensorgraph.grad(cost, [a, b])
    f = fn([ax, a, b, w], [ga, gb])
    va, vb = randn(2, 3), randn(2, 4)
    vw = randn(2, 7)
    got_a, got_b = f(1, va, vb, vw)
    np.testing.assert_array_equal(got_a, vw[:, :3])
    np.testing.assert_array_equal(got_b, vw[:, 3:])
    # the axis is an integer input: no gradient flows to it
    with pytest.raises(tensorgraph.gradient.DisconnectedInputError):
        tensorgraph.grad(cost, ax)


def test_split_along_a_symbolic_axis_matches_numpy():
    x = tt.dtensor3("x")
    ax = tt.iscalar("ax")
    sizes = tt.ivector("sizes")
    pieces = Split(3)(x, ax, sizes)
    assert pieces[0].owner.op == Split(3) and pieces[0].owner.inputs[1] is ax
    assert Split(3)(x, 1, sizes)[0].owner.op == Split(3, 1)
    f = fn([x, ax, sizes], pieces)
    value = randn(6, 5, 4)
    for axis, parts in [(0, [1, 2, 3]), (1, [2, 0, 3]), (-1, [2, 1, 1]), (-3, [0, 6, 0])]:
        got = f(value, axis, np.array(parts, "int32"))
        want = np.split(value, np.cumsum(parts)[:-1], axis=axis)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        for piece in pieces:
            check_infer_shape(piece, [x, ax, sizes], [value, axis, np.array(parts, "int32")])
    with pytest.raises(ValueError, match=r"split: axis 3 is out of range for 3-d inputs"):
        f(value, 3, np.array([1, 2, 3], "int32"))
    with pytest.raises(ValueError, match=r"do not divide dimension 1 of size 5"):
        f(value, 1, np.array([1, 2, 3], "int32"))
    # tt.split takes the symbolic axis too; a static size is kept where it cannot change
    y = tt.tensor(dtype="float64", shape=(4, 4))
    first, second = tt.split(y, [1, 3], 2, axis=ax)
    assert first.type.shape == (None, None) and second.type.shape == (None, None)
    assert Split(2)(y, ax, [4, 0])[0].type.shape == (4, 4)
    assert Split(1)(tt.dvector(), ax, [5]).type.shape == (5,)
    with pytest.raises(TypeError, match="axis must be an integer"):
        Split(2)(y, tt.dscalar(), [1, 3])


def test_gradient_of_a_split_along_a_symbolic_axis():
    for axis in (0, 1, -1):
        shared_axis = tensorgraph.shared(np.int64(axis))
        verify_grad(lambda x: tt.join(0, *[p.flatten() * (k + 1) for k, p in enumerate(
                        Split(2)(x, shared_axis, [1, 3]))]),
                    [randn(4, 4)], rng=RNG)
    ax = tt.lscalar("ax")
    x = tt.dmatrix("x")
    first, second = Split(2)(x, ax, tt.as_tensor_variable(np.array([1, 2])))
    g = tensorgraph.grad((first * 2).sum() + (second * 3).sum(), x)
    got = fn([x, ax], g)(randn(3, 3), 1)
    np.testing.assert_array_equal(got, [[2, 3, 3]] * 3)


def test_symbolic_axis_functions_are_thread_safe_and_pickle():
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    ax = tt.lscalar("ax")
    joined = tt.join(ax, a, b)
    back = Split(2)(joined, ax, tt.stack([a.shape[ax], b.shape[ax]]))
    for mode in ("FAST_COMPILE", "FAST_RUN"):
        f = tensorgraph.function([ax, a, b], [joined, *back], mode=mode)
        cases = [(k % 2 - (k % 4 >= 2) * 2, randn(3, 3), randn(3, 3)) for k in range(12)]

        def check(case, f=f):
            axis, va, vb = case
            out, p, q = f(axis, va, vb)
            np.testing.assert_array_equal(out, np.concatenate([va, vb], axis=axis))
            np.testing.assert_array_equal(p, va)
            np.testing.assert_array_equal(q, vb)

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(check, cases))
        check(cases[1], pickle.loads(pickle.dumps(f)))
