"""Indexing against numpy: basic, advanced and boolean indexing, set/inc_subtensor, static
types, infer_shape, views, errors and gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
)

from op_checks import check_infer_shape, fn

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(0)


def randn(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# basic indexing

BASIC = [
    (1,), (-1,), (slice(1, None),), (slice(None, None, -1),), (slice(-2, 0, -1),),
    (0, slice(None, None, 2)), (Ellipsis, 1), (None, 1), (slice(None), None, 2),
    (1, Ellipsis, None), (slice(5, 10),), (-3, -1, 2), (Ellipsis,), (),
    (slice(None, None, -2), slice(3, 0, -1), 1),
]


@pytest.mark.parametrize("index", BASIC, ids=str)
def test_basic_indexing_matches_numpy(index):
    x = tt.tensor3("x")
    v = randn(4, 5, 6)[:, ::-1]
    y = x[index]
    expected = v[index]
    out = fn([x], y)(v)
    np.testing.assert_array_equal(out, expected)
    assert out.shape == expected.shape and y.ndim == expected.ndim
    if isinstance(y.owner.op, Subtensor):
        check_infer_shape(y, [x], [v])


def test_symbolic_ints_and_slice_bounds():
    x = tt.matrix("x")
    i, j, k = tt.lscalar("i"), tt.iscalar("j"), tt.bscalar("k")
    v = randn(5, 6)
    f = fn([x, i, j, k], [x[i], x[i:j], x[::k, j], x[j:i:k]])
    for args in [(1, 4, 2), (-2, 1, -1), (0, 5, 3), (4, 0, -2)]:
        a, b, c = args
        got = f(v, *args)
        for g, e in zip(got, [v[a], v[a:b], v[::c, b], v[b:a:c]]):
            np.testing.assert_array_equal(g, e)
    check_infer_shape(x[j:i:k], [x, i, j, k], [v, 0, 4, -1])
    check_infer_shape(x[i:], [x, i], [v, -2])


def test_basic_static_shapes():
    x = tt.matrix("x", shape=(5, None))
    assert x[1:4].type.shape == (3, None)
    assert x[::-1].type.shape == (5, None)
    assert x[::2, 1:].type.shape == (3, None)
    assert x[None].type.shape == (1, 5, None)
    assert x[0].type.shape == (None,)
    assert tt.matrix("m")[:, ::-1].type.shape == (None, None)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        x[5]


def test_subtensor_is_a_view():
    x = tt.matrix("x")
    node = x[1:, ::-1].owner
    assert node.op.view_map == {0: [0]}
    v = randn(3, 4)
    storage = [[None]]
    node.op.perform(node, [v] + [np.int64(1), np.int64(-1)], storage)
    assert np.shares_memory(storage[0][0], v)
    storage = [[None]]
    scalar_node = x[1, 2].owner
    scalar_node.op.perform(scalar_node, [v, np.int64(1), np.int64(2)], storage)
    assert isinstance(storage[0][0], np.ndarray) and storage[0][0].ndim == 0


def test_index_errors_name_index_axis_size():
    x = tt.matrix("x")
    i = tt.lscalar("i")
    f = fn([x, i], x[1, i])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 3"):
        f(randn(2, 3), 7)
    with pytest.raises(IndexError, match="too many indices"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 1, ...]
    with pytest.raises(TypeError, match="integer"):
        x[1.5]
    with pytest.raises(TypeError, match="integer"):
        x[tt.scalar("f")]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError, match="boolean scalar"):
        x[True]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6),
       st.tuples(st.none() | st.integers(-8, 8), st.none() | st.integers(-8, 8),
                 st.none() | st.integers(-3, 3).filter(lambda s: s != 0)),
       st.tuples(st.none() | st.integers(-8, 8), st.none() | st.integers(-8, 8),
                 st.none() | st.integers(-3, 3).filter(lambda s: s != 0)))
def test_slices_match_numpy(rows, cols, s0, s1):
    v = np.arange(rows * cols, dtype="float64").reshape(rows, cols)
    x = tt.matrix("x")
    static = tt.matrix("xs", shape=(rows, cols))
    y, ys = x[slice(*s0), slice(*s1)], static[slice(*s0), slice(*s1)]
    expected = v[slice(*s0), slice(*s1)]
    np.testing.assert_array_equal(fn([x], y)(v), expected)
    assert ys.type.shape == expected.shape
    # symbolic bounds give the same result
    parts = [tt.lscalar(f"p{k}") for k in range(6)]
    flat = list(s0) + list(s1)
    sym = [None if p is None else parts[k] for k, p in enumerate(flat)]
    ysym = x[slice(*sym[:3]), slice(*sym[3:])]
    used = [parts[k] for k, p in enumerate(flat) if p is not None]
    np.testing.assert_array_equal(fn([x] + used, ysym)(v, *[p for p in flat if p is not None]),
                                  expected)


def test_basic_indexing_grad():
    verify_grad(lambda x: x[1:, ::-2], [randn(4, 5)], rng=RNG)
    verify_grad(lambda x: x[None, 1, :, None], [randn(3, 4)], rng=RNG)
    verify_grad(lambda x: x[-1, 2], [randn(3, 4)], rng=RNG)


def test_integer_input_grad_is_zero():
    x = tt.lvector("x")
    w = tt.dscalar("w")
    cost = tt.sum(tt.cast(x[1:], "float64") + tt.cast(x[[0, 0]], "float64")) * w
    gx, gw = tensorgraph.grad(cost, [x, w])
    got_gx, got_gw = fn([x], [gx, gw])(np.array([1, 2, 3]))
    np.testing.assert_array_equal(got_gx, np.zeros(3))
    assert got_gx.dtype.kind == "f" and float(got_gw) == 7.0


# ----------------------------------------------------------------------------------------------
# advanced indexing

ADVANCED = [
    ([0, 2, 2],),
    ([[0, 1], [3, 3]],),
    ([-1, 0], slice(None), 1),
    (slice(None), [0, 1], [2, 3]),       # adjacent: dims stay in place
    ([0, 1], slice(None), [2, 3]),       # separated: broadcast dims go first
    (1, slice(1, 3), [0, 2]),            # an int counts as an advanced index
    (slice(None), 1, [[0], [2]]),
    (None, [0, 3], Ellipsis, [1]),
    ([[1], [2]], [0, 1]),                # broadcast index arrays
    (Ellipsis, [4, 0, 1]),
]


@pytest.mark.parametrize("index", ADVANCED, ids=str)
def test_advanced_indexing_matches_numpy(index):
    x = tt.tensor3("x")
    v = randn(4, 5, 6)[::-1]
    y = x[index]
    expected = v[index]
    out = fn([x], y)(v)
    np.testing.assert_array_equal(out, expected)
    assert y.ndim == expected.ndim
    static = tt.tensor3("xs", shape=(4, 5, 6))[index].type.shape
    assert all(s is None or s == e for s, e in zip(static, expected.shape))
    node = y.owner
    if isinstance(node.op, (AdvancedSubtensor, AdvancedSubtensor1)):
        check_infer_shape(y, [x], [v])


def test_single_vector_uses_advanced_subtensor1():
    x = tt.matrix("x")
    idx = tt.lvector("idx")
    y = x[idx]
    assert isinstance(y.owner.op, AdvancedSubtensor1)
    assert isinstance(x[[1, 2]].owner.op, AdvancedSubtensor1)
    assert isinstance(x[:, idx].owner.op, AdvancedSubtensor)
    v = randn(5, 3)
    np.testing.assert_array_equal(fn([x, idx], y)(v, np.array([4, -1, 0, 0])), v[[4, -1, 0, 0]])
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        fn([x, idx], y)(v, np.array([5]))
    check_infer_shape(y, [x, idx], [v, np.array([1, 1, 2])])


def test_symbolic_index_arrays():
    x = tt.tensor3("x")
    a, b = tt.lmatrix("a"), tt.ivector("b")
    y = x[a, :, b]
    va, vb = np.array([[0, 1], [2, 3]]), np.array([5, 0], dtype="int32")
    v = randn(4, 5, 6)
    np.testing.assert_array_equal(fn([x, a, b], y)(v, va, vb), v[va, :, vb])
    check_infer_shape(y, [x, a, b], [v, va, vb])
    f = fn([x, a, b], y)
    with pytest.raises(IndexError, match="broadcast"):
        f(v, va, np.array([1, 2, 3], dtype="int32"))
    with pytest.raises(IndexError, match="shape mismatch"):
        x[tt.lvector("p", shape=(2,)), tt.lvector("q", shape=(3,))]


def test_boolean_masks():
    x = tt.matrix("x")
    v = randn(4, 3)
    mask_value = np.array([True, False, True, True])
    np.testing.assert_array_equal(fn([x], x[mask_value])(v), v[mask_value])
    np.testing.assert_array_equal(fn([x], x[x > 0])(v), v[v > 0])
    np.testing.assert_array_equal(fn([x], x[1:, x[0] > 0])(v), v[1:, v[0] > 0])
    m = tt.vector("m", dtype="bool")
    y = x[m, 1]
    np.testing.assert_array_equal(fn([x, m], y)(v, mask_value), v[mask_value, 1])
    check_infer_shape(x[x > 0], [x], [v])
    check_infer_shape(y, [x, m], [v, mask_value])
    with pytest.raises(IndexError, match="boolean index did not match"):
        fn([x, m], y)(v, mask_value[:3])
    with pytest.raises(IndexError, match="boolean index did not match"):
        tt.matrix("s", shape=(4, 3))[np.array([True, False])]
    assert tt.matrix("s", shape=(4, 3))[mask_value].type.shape == (3, 3)


def test_advanced_indexing_grad_accumulates_repeats():
    verify_grad(lambda x: x[[0, 2, 2, -1]], [randn(4, 3)], rng=RNG)
    verify_grad(lambda x: x[[1, 1], :, [0, 2]], [randn(3, 2, 4)], rng=RNG)
    verify_grad(lambda x: x[1:, [0, 0, 2]], [randn(3, 4)], rng=RNG)
    verify_grad(lambda x: x[np.array([[True, False], [True, True]])], [randn(2, 2)], rng=RNG)
    x = tt.vector("x")
    g = tensorgraph.grad(tt.sum(x[[0, 0, 1]]), x)
    np.testing.assert_array_equal(fn([x], g)(randn(3)), [2.0, 1.0, 0.0])


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_advanced_indexing_hypothesis(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    v = np.arange(int(np.prod(shape)), dtype="float64").reshape(shape)
    n_index = data.draw(st.integers(1, len(shape)))
    index_shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    surely_array = data.draw(st.integers(0, n_index - 1))
    index = []
    for d in range(n_index):
        kind = data.draw(st.sampled_from(["array", "slice", "int"]))
        if kind == "array" or d == surely_array:
            index.append(RNG.integers(-shape[d], shape[d], size=index_shape))
        elif kind == "slice":
            index.append(slice(data.draw(st.none() | st.integers(-4, 4)), None,
                               data.draw(st.sampled_from([None, 1, -1, 2]))))
        else:
            index.append(int(data.draw(st.integers(-shape[d], shape[d] - 1))))
    index = tuple(index)
    x = tt.tensor("float64", (None,) * len(shape), "x")
    np.testing.assert_array_equal(fn([x], x[index])(v), v[index])


# ----------------------------------------------------------------------------------------------
# set_subtensor / inc_subtensor


SET_CASES = [
    ((slice(1, 3),), (2, 4)),
    ((0,), (4,)),
    ((slice(None, None, -2), 1), ()),
    ((None, 1), (1, 4)),
    (([0, 2],), (4,)),                      # AdvancedIncSubtensor1, y broadcast on rows
    (([2, 0], [1, 3]), (2,)),
    ((slice(None), [3, 0]), (3, 2)),
    ((np.array([True, False, True]),), (1, 4)),
]


@pytest.mark.parametrize("index, y_shape", SET_CASES, ids=str)
def test_set_and_inc_match_numpy(index, y_shape):
    x = tt.matrix("x")
    y = tt.TensorType("float64", tuple(1 if s == 1 else None for s in y_shape))("y")
    v, w = randn(3, 4)[::-1], randn(*y_shape)
    s, i = tt.set_subtensor(x[index], y), tt.inc_subtensor(x[index], y)
    assert s.type == x.type and i.type == x.type
    got_s, got_i = fn([x, y], [s, i])(v, w)
    expected_s, expected_i = v.copy(), v.copy()
    expected_s[index] = w
    expected_i[index] += w
    np.testing.assert_array_equal(got_s, expected_s)
    np.testing.assert_array_equal(got_i, expected_i)
    check_infer_shape(s, [x, y], [v, w])
    # verify_grad's inputs have no static sizes: give b y's (size-1 dimensions broadcast)
    verify_grad(lambda a, b: tt.set_subtensor(a[index], tt.specify_shape(b, y.type.shape)),
                [v, w], rng=RNG)
    verify_grad(lambda a, b: tt.inc_subtensor(a[index], tt.specify_shape(b, y.type.shape)),
                [v, w], rng=RNG)


def test_inc_with_repeated_indices_accumulates():
    x = tt.vector("x")
    idx = tt.lvector("idx")
    out = tt.inc_subtensor(x[idx], 1.0)
    assert isinstance(out.owner.op, AdvancedIncSubtensor1)
    got = fn([x, idx], out)(np.zeros(4), np.array([0, 0, 3, 0]))
    np.testing.assert_array_equal(got, [3, 0, 0, 1])
    m = tt.matrix("m")
    out2 = tt.inc_subtensor(m[[0, 0], [1, 1]], 2.0)
    assert isinstance(out2.owner.op, AdvancedIncSubtensor)
    np.testing.assert_array_equal(fn([m], out2)(np.zeros((2, 2))), [[0, 4], [0, 0]])
    verify_grad(lambda a, b: tt.inc_subtensor(a[[1, 1, 0]], b), [randn(3, 2), randn(3, 2)],
                rng=RNG)


def test_set_inc_do_not_modify_inputs_and_ops():
    x = tt.matrix("x")
    v = randn(2, 3)
    before = v.copy()
    out = tt.set_subtensor(x[0], 5.0)
    assert isinstance(out.owner.op, IncSubtensor) and out.owner.op.set_instead_of_inc
    fn([x], out)(v)
    np.testing.assert_array_equal(v, before)
    assert isinstance(tt.set_subtensor(x[x > 0], 0.0).owner.op, AdvancedIncSubtensor)


def test_set_inc_errors():
    x = tt.matrix("x")
    with pytest.raises(TypeError, match="result of indexing"):
        tt.set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match="cannot put float64"):
        tt.set_subtensor(tt.lmatrix("i")[0], tt.dvector("d"))
    with pytest.raises(TypeError, match="more than"):   # ndim is part of the type
        tt.set_subtensor(x[0], tt.matrix("big"))
    y = tt.vector("y")
    f = fn([x, y], tt.set_subtensor(x[0], y))
    with pytest.raises(ValueError, match=r"shape \(2,\) into the indexed part of shape \(3,\)"):
        f(randn(2, 3), randn(2))
    base, one = randn(2, 3), randn(1)  # a value of size 1 broadcasts, as in numpy
    expected = base.copy()
    expected[0] = one
    np.testing.assert_array_equal(f(base, one), expected)
    with pytest.raises(ValueError, match="does not fit"):
        tt.set_subtensor(tt.matrix("s", shape=(4, 3))[0], tt.vector("w", shape=(2,)))


def test_set_subtensor_casts_compatible_values():
    x = tt.fmatrix("x")
    out = tt.set_subtensor(x[0], tt.dvector("d"))
    assert out.dtype == "float32"
    i = tt.imatrix("i")
    assert tt.inc_subtensor(i[0], 1).dtype == "int32"


def test_op_identity_and_printing():
    x = tt.matrix("x")
    a, b = x[1:3], x[2:5]
    assert a.owner.op == b.owner.op and hash(a.owner.op) == hash(b.owner.op)
    assert a.owner.op != x[1:].owner.op
    assert str(x[1, ::2].owner.op) == "Subtensor{i, ::step}"
    assert "Inc" in str(tt.inc_subtensor(x[0], 1.0).owner.op)


def test_set_through_chained_basic_indexing_updates_the_base():
    x = tt.matrix("x")
    y = tt.vector("y")
    v, w = randn(3, 4), randn(2)
    got = fn([x, y], tt.set_subtensor(x[1:][0, ::2], y))(v, w)
    expected = v.copy()
    expected[1:][0, ::2] = w
    np.testing.assert_array_equal(got, expected)
    got = fn([x], tt.inc_subtensor(x[:, None][1:, 0, 2], 1.0))(v)
    expected = v.copy()
    expected[:, None][1:, 0, 2] += 1.0
    np.testing.assert_array_equal(got, expected)
    verify_grad(lambda a, b: tt.inc_subtensor(a[::-1][1, 1:3], b), [v, w], rng=RNG)


def test_pp_writes_indexing_as_python():
    x = tt.matrix("x")
    i = tt.lscalar("i")
    idx = tt.lvector("idx")
    assert tensorgraph.pp(x[1:3, i]) == "x[1:3, i]"
    assert tensorgraph.pp(x[::-1]) == "x[::-1]"
    assert tensorgraph.pp(x[idx]) == "x[idx]"
    assert tensorgraph.pp(x[:2, idx]) == "x[:2, idx]"
    assert tensorgraph.pp(tt.set_subtensor(x[i], 0.0)) == "set_subtensor(x[i], 0.0)"
    assert tensorgraph.pp(tt.inc_subtensor(x[idx], 1.0)) == "inc_subtensor(x[idx], 1.0)"


def test_slices_empty_for_any_size_have_static_length_0():
    from tensorgraph.tensor.shape import get_vector_length

    v = tt.lvector("v")
    for empty in (v[1:1], v[-1:-1:3], v[3:1], v[-1:-3], v[1:3:-1]):
        assert empty.type.shape == (0,) and get_vector_length(empty) == 0
        assert empty.eval({v: np.arange(5)}).shape == (0,)
    for unknown in (v[1:3], v[-3:-1], v[1:-1], v[3:1:-1]):
        assert unknown.type.shape == (None,)
    with pytest.raises(ValueError, match=r"^Length of .* not known"):
        get_vector_length(v[tt.lscalar():])


def test_canonical_form_of_an_index_gives_known_values_as_ints():
    from tensorgraph.scalar import as_scalar
    from tensorgraph.tensor.subtensor import get_canonical_form_slice
    from tensorgraph.tensor.type_other import NoneConst

    n = tt.lscalar("n")
    for known in (3, np.int64(3), tt.as_tensor_variable(3), as_scalar(3)):
        index, direction = get_canonical_form_slice(known, n)
        assert index == 3 and type(index) is int and direction == 1
    index, _ = get_canonical_form_slice(as_scalar(-1), n)
    assert fn([n], index)(5) == 4
    for bad in (NoneConst, None, tt.vector(), tt.scalar("f")):
        with pytest.raises(ValueError, match="not a supported slice"):
            get_canonical_form_slice(bad, n)


def test_lists_mixing_booleans_and_integers_are_refused():
    x = tt.matrix("x")
    # numpy would read [0, False] as [0, 0]: refused instead of silently taking row 0 twice
    with pytest.raises(TypeError, match="mixes booleans with integers"):
        x[[0, 1], [0, False]]
    with pytest.raises(TypeError, match="mixes booleans with integers"):
        x[[0, tt.scalar("b", dtype="bool")]]
    # all integers or all booleans stay indices and masks
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(x[[0, 1], [0, 2]].eval({x: xv}), xv[[0, 1], [0, 2]])
    np.testing.assert_array_equal(x[:, [True, False, True]].eval({x: xv}),
                                  xv[:, [True, False, True]])
    # a Python bool is a bad index type; a 0-d boolean array is valid numpy not done here
    with pytest.raises(TypeError, match="boolean scalar"):
        x[True]
    with pytest.raises(NotImplementedError, match="boolean scalar"):
        x[np.array(True)]
