"""numpy's array functions as PyTensor code calls them on tensors (issue 21, items 4 and 6 and
tensor.extra_ops): each against numpy, with static shapes, gradients (verify_grad) where
differentiable, and the methods and ufuncs of variables."""

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor import extra_ops

from op_checks import check_infer_shape, fn

pytestmark = pytest.mark.usefixtures("reference_mode")

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.random(shape)


# -- reductions --------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, (0, 2), (1, 2)])
def test_median_ptp_max_and_argmax(axis):
    x = tt.dtensor3("x")
    v = rand(3, 4, 5)
    f = fn([x], [tt.median(x, axis), tt.ptp(x, axis), *tt.max_and_argmax(x, axis)])
    median, ptp, top, where = f(v)
    np.testing.assert_allclose(median, np.median(v, axis))
    np.testing.assert_allclose(ptp, np.ptp(v, axis))
    np.testing.assert_allclose(top, np.max(v, axis))
    if not isinstance(axis, tuple):
        np.testing.assert_array_equal(where, np.argmax(v, axis))


def test_median_gradient_and_even_counts():
    v = rand(4, 6)
    verify_grad(lambda a: tt.median(a, 1), [v])
    verify_grad(lambda a: tt.median(a, 0), [v[:3]])


def test_norm_allclose_and_axis_arrays():
    x = tt.dmatrix("x")
    v = rand(3, 4) - 0.5
    for order in (1, 2, 3, np.inf, -np.inf, 0):
        np.testing.assert_allclose(fn([x], x.norm(order))(v), np.linalg.norm(v.ravel(), order))
    np.testing.assert_allclose(fn([x], tt.norm(x, 2, axis=0))(v), np.linalg.norm(v, axis=0))
    assert fn([x], tt.allclose(x, x + 1e-9))(v) and not fn([x], tt.allclose(x, x + 1))(v)
    # axes given as an array or a constant tensor, as PyTensor code passes them
    assert tt.sum(x, axis=np.array([0, 1])).ndim == 0
    assert tt.max(x, axis=tt.constant(np.array([1]))).type.shape == (None,)


@pytest.mark.parametrize("sum_dtype", ["bool", "int8", "int64", "uint16"])
def test_mean_with_an_integer_dtype_sums_in_it(sum_dtype):
    x = tt.lmatrix("x")
    out = x.mean(dtype=sum_dtype)
    assert out.dtype == "float64"
    expected = np.array(2).astype(sum_dtype) / 2
    np.testing.assert_allclose(fn([x], out)(np.ones((2, 1), dtype="int64")), expected)


def test_var_std_take_corrected():
    x = tt.dvector("x")
    v = rand(6)
    np.testing.assert_allclose(fn([x], x.var(corrected=True))(v), np.var(v))
    np.testing.assert_allclose(fn([x], tt.std(x, ddof=1, corrected=True))(v), np.std(v, ddof=1))


# -- dot-like ----------------------------------------------------------------------------------

def test_vecdot_matvec_vecmat_cov():
    a, b, v, w = tt.dtensor3("a"), tt.dmatrix("b"), tt.dvector("v"), tt.dvector("w")
    av, bv, vv, wv = rand(2, 3, 4), rand(3, 4), rand(4), rand(3)
    np.testing.assert_allclose(fn([a, b], tt.vecdot(a, b))(av, bv), np.vecdot(av, bv))
    np.testing.assert_allclose(fn([a, v], tt.matvec(a, v))(av, vv), np.matvec(av, vv))
    np.testing.assert_allclose(fn([w, a], tt.vecmat(w, a))(wv, av), np.vecmat(wv, av))
    assert tt.vecdot(tt.ivector(), tt.ivector(), dtype="int32").dtype == "int32"
    assert tt.matmul(b, v, dtype="float32").dtype == "float32"
    assert tt.dense_dot is tt.dot
    np.testing.assert_allclose(fn([b], tt.cov(b))(bv), np.cov(bv))
    np.testing.assert_allclose(fn([b], tt.cov(b, rowvar=False, bias=True))(bv),
                               np.cov(bv, rowvar=False, bias=True))
    np.testing.assert_allclose(fn([b], tt.cov(b, b[:2], ddof=0))(bv), np.cov(bv, bv[:2], ddof=0))
    np.testing.assert_allclose(fn([v], tt.cov(v))(vv), np.cov(vv))
    verify_grad(lambda m: tt.cov(m), [bv])


# -- sorting, non-zero entries -----------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_argsort(axis):
    x = tt.dmatrix("x")
    v = rand(3, 4)
    got_sorted, got_order = fn([x], [tt.sort(x, axis), x.argsort(axis)])(v)
    np.testing.assert_array_equal(got_sorted, np.sort(v, axis))
    np.testing.assert_array_equal(got_order, np.argsort(v, axis))
    verify_grad(lambda m: tt.sort(m, axis)[..., :2] * 3, [v])
    with pytest.raises(ValueError, match="kind must be one of"):
        tt.sort(x, kind="bogo")


def test_nonzero_family():
    x = tt.dmatrix("x")
    v = (rand(3, 4) > 0.5) * rand(3, 4)
    rows, cols = tt.nonzero(x)
    got = fn([x], [rows, cols, tt.nonzero(x, return_matrix=True), tt.flatnonzero(x),
                   tt.nonzero_values(x)])(v)
    np.testing.assert_array_equal(got[0], np.nonzero(v)[0])
    np.testing.assert_array_equal(got[1], np.nonzero(v)[1])
    np.testing.assert_array_equal(got[2], np.array(np.nonzero(v)))
    np.testing.assert_array_equal(got[3], np.flatnonzero(v))
    np.testing.assert_array_equal(got[4], v[v != 0])
    with pytest.raises(ValueError, match="0-d"):
        tt.nonzero(tt.dscalar())


# -- extra_ops ---------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_cumprod(axis):
    x = tt.dmatrix("x")
    v = rand(3, 4) + 0.5
    got = fn([x], [tt.cumsum(x, axis), x.cumprod(axis)])(v)
    np.testing.assert_allclose(got[0], np.cumsum(v, axis))
    np.testing.assert_allclose(got[1], np.cumprod(v, axis))
    verify_grad(lambda m: extra_ops.cumsum(m, axis), [v])
    verify_grad(lambda m: extra_ops.cumprod(m, axis), [v])
    check_infer_shape(tt.cumsum(x, axis), [x], [v])
    assert tt.cumsum(tt.bvector()).dtype == np.cumsum(np.zeros(1, "int8")).dtype.name


@pytest.mark.parametrize("n, axis", [(0, 0), (1, -1), (2, 0), (3, 1), (5, 1)])
def test_diff(n, axis):
    x = tt.TensorType("float64", (3, None))("x")
    v = rand(3, 4)
    out = tt.diff(x, n, axis)
    np.testing.assert_allclose(fn([x], out)(v), np.diff(v, n, axis))
    static = np.diff(np.empty((3, 7)), n, axis).shape
    assert out.type.shape[0] == static[0]


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_repeat(axis):
    x = tt.dmatrix("x")
    v = rand(3, 4)
    count, counts = tt.lscalar("count"), tt.lvector("counts")
    np.testing.assert_allclose(fn([x, count], tt.repeat(x, count, axis))(v, 3),
                               np.repeat(v, 3, axis))
    reps = RNG.integers(0, 4, v.size if axis is None else v.shape[axis])
    out = x.repeat(counts, axis)
    assert isinstance(out.owner.op, extra_ops.Repeat)
    np.testing.assert_allclose(fn([x, counts], out)(v, reps), np.repeat(v, reps, axis))
    check_infer_shape(out, [x, counts], [v, reps])
    # one count given as a list or a length-1 vector: no Repeat node
    assert not isinstance(tt.repeat(x, [2], axis).owner.op, extra_ops.Repeat)
    verify_grad(lambda m: extra_ops.repeat(m, reps, axis), [v])
    verify_grad(lambda m: extra_ops.repeat(m, 2, axis), [v])
    with pytest.raises(TypeError, match="uint64"):
        tt.repeat(x, tt.vector(dtype="uint64"), axis)


def test_bincount_searchsorted_unique_compress():
    i, w, s = tt.lvector("i"), tt.dvector("w"), tt.dvector("s")
    values = np.array([0, 1, 1, 3])
    f = fn([i, w], [tt.bincount(i), tt.bincount(i, w, minlength=6)])
    counts, weighted = f(values, np.array([0.5, 1.0, 1.0, 2.0]))
    np.testing.assert_array_equal(counts, np.bincount(values))
    np.testing.assert_allclose(weighted, np.bincount(values, [0.5, 1.0, 1.0, 2.0], 6))
    assert fn([i], tt.bincount(i))(np.zeros(0, "int64")).shape == (0,)
    with pytest.raises(AssertionError):
        fn([i], tt.bincount(i, assert_nonneg=True))(np.array([1, -1]))
    for side in ("left", "right"):
        got = fn([s, w], s.searchsorted(w, side=side))(np.array([1.0, 2.0, 3.0]),
                                                        np.array([2.0, 0.0, 5.0]))
        np.testing.assert_array_equal(got, np.searchsorted([1.0, 2.0, 3.0], [2.0, 0.0, 5.0],
                                                           side=side))
    data = np.array([3, 1, 1, 2])
    outs = fn([i], tt.unique(i, True, True, True))(data)
    for got, want in zip(outs, np.unique(data, True, True, True)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fn([i], tt.unique(i))(data), np.unique(data))
    cond, x = tt.bvector("cond"), tt.dmatrix("x")
    v, c = rand(3, 4), np.array([1, 0, 0, 1], dtype="int8")
    np.testing.assert_allclose(fn([cond, x], tt.compress(cond, x, 1))(c, v),
                               np.compress(c, v, 1))
    np.testing.assert_allclose(fn([cond, x], x.compress(cond))(c, v), np.compress(c, v))


@pytest.mark.parametrize("offset", [-4, -1, 0, 2, 5])
def test_fill_diagonal_offset(offset):
    x = tt.dmatrix("x")
    v = rand(3, 5)
    want = v.copy()
    rows = np.arange(max(0, -offset), min(3, 5 - offset))
    want[rows, rows + offset] = 7.0
    np.testing.assert_allclose(fn([x], tt.fill_diagonal_offset(x, 7.0, offset))(v), want)
    verify_grad(lambda m: extra_ops.fill_diagonal_offset(m, 2.0, offset), [v])


def test_fill_diagonal():
    x, t = tt.dmatrix("x"), tt.dtensor3("t")
    for value, var in ((rand(3, 5), x), (rand(3, 3, 3), t)):
        want = value.copy()
        np.fill_diagonal(want, 4.0)
        np.testing.assert_allclose(fn([var], tt.fill_diagonal(var, 4.0))(value), want)
    verify_grad(lambda m: extra_ops.fill_diagonal(m, 1.0), [rand(4, 3)])


def test_index_conversions_one_hot_bartlett():
    i = tt.lvector("i")
    np.testing.assert_array_equal(fn([i], tt.ravel_multi_index([i, i], (5, 6)))(
        np.array([1, 2])), np.ravel_multi_index(([1, 2], [1, 2]), (5, 6)))
    rows, cols = fn([i], list(tt.unravel_index(i, (5, 6))))(np.array([7, 13]))
    np.testing.assert_array_equal([rows, cols], np.unravel_index([7, 13], (5, 6)))
    one_hot = fn([i], tt.to_one_hot(i, 4))(np.array([1, 3]))
    np.testing.assert_array_equal(one_hot, np.eye(4)[[1, 3]])
    for m in (0, 1, 2, 5, 6):
        np.testing.assert_allclose(tt.bartlett(m).eval(), np.bartlett(m))


def test_broadcast_helpers():
    x, row, col = tt.dmatrix("x"), tt.drow("r"), tt.dcol("c")
    shape = tt.broadcast_shape(tt.TensorType("float64", (3, 1))(), tt.dvector())
    assert int(shape[0].eval()) == 3
    shape = tt.broadcast_shape((2, 1), (1, 4), arrays_are_shapes=True)
    assert [int(s.eval()) for s in shape] == [2, 4]
    with pytest.raises(ValueError, match="do not broadcast"):
        tt.broadcast_shape((2,), (3,), arrays_are_shapes=True)
    got = fn([row, col], tt.broadcast_arrays(row, col))(rand(1, 3), rand(4, 1))
    assert [g.shape for g in got] == [(4, 3), (4, 3)]
    v = tt.dvector("v")
    np.testing.assert_allclose(fn([v], tt.broadcast_to(v, (2, 3)))(np.arange(3.0)),
                               np.broadcast_to(np.arange(3.0), (2, 3)))
    shape_of_x = tt.broadcast_shape(x, row)
    assert [int(s) for s in fn([x, row], list(shape_of_x))(rand(2, 3), rand(1, 3))] == [2, 3]


@pytest.mark.parametrize("num", [0, 1, 2, 7])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_logspace_geomspace(num, endpoint):
    for ours, theirs, lo, hi in ((tt.linspace, np.linspace, 0.5, 3.0),
                                 (tt.logspace, np.logspace, 0.5, 3.0),
                                 (tt.geomspace, np.geomspace, 0.5, 3.0),
                                 (tt.geomspace, np.geomspace, -0.5, -3.0)):
        np.testing.assert_allclose(ours(lo, hi, num, endpoint=endpoint).eval(),
                                   theirs(lo, hi, num, endpoint=endpoint))
    start, stop = np.array([0.0, 1.0]), np.array([3.0, 5.0])
    for axis in (0, 1, -1):
        np.testing.assert_allclose(tt.linspace(start, stop, 5, axis=axis).eval(),
                                   np.linspace(start, stop, 5, axis=axis))
    samples, step = tt.linspace(0.0, 1.0, 5, retstep=True)
    assert float(step.eval()) == 0.25
    assert tt.linspace(np.float32(0), np.float32(1), 3).dtype == "float32"


# -- indexing ----------------------------------------------------------------------------------

def test_indexing_with_a_list_of_symbolic_integers():
    b = tt.dmatrix("b")
    i, j = tt.lscalars("ij")
    v = rand(4, 3)
    np.testing.assert_allclose(fn([b, i, j], b[[i, j], :])(v, 3, 0), v[[3, 0], :])
    np.testing.assert_allclose(fn([b, i], b[:, [i, 1]])(v, 2), v[:, [2, 1]])


def test_take_flip_take_along_axis():
    x = tt.dmatrix("x")
    v = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(fn([x], tt.take(x, [0, 5]))(v), np.take(v, [0, 5]))
    np.testing.assert_allclose(fn([x], x.take([1, -1], axis=1))(v), np.take(v, [1, -1], 1))
    for mode in ("wrap", "clip"):
        np.testing.assert_allclose(fn([x], tt.take(x, [5, -7], 0, mode=mode))(v),
                                   np.take(v, [5, -7], 0, mode=mode))
    for axis in (None, 0, (0, 1), -1):
        np.testing.assert_allclose(fn([x], tt.flip(x, axis))(v), np.flip(v, axis))
    order = tt.lmatrix("order")
    idx = np.argsort(-v, axis=1)
    np.testing.assert_allclose(fn([x, order], tt.take_along_axis(x, order, 1))(v, idx),
                               np.take_along_axis(v, idx, 1))
    verify_grad(lambda m: tt.take_along_axis(m, idx, 1), [v])


def test_inc_subtensor_ignore_duplicates_and_helpers():
    x, y, idx = tt.dvector("x"), tt.dvector("y"), tt.lvector("idx")
    xv, yv, iv = np.zeros(4), np.array([1.0, 2.0, 3.0]), np.array([1, 1, 2])
    f = fn([x, y, idx], [tt.inc_subtensor(x[idx], y, ignore_duplicates=True),
                         tt.inc_subtensor(x[idx], y),
                         tt.advanced_inc_subtensor1(x, y, idx),
                         tt.advanced_set_subtensor1(x, y, idx),
                         tt.advanced_subtensor1(x, idx)])
    once, accumulated, inc1, set1, read = f(xv, yv, iv)
    expected = xv.copy()
    expected[iv] += yv          # numpy: a repeated index is updated once
    np.testing.assert_allclose(once, expected)
    np.add.at(expected := xv.copy(), iv, yv)
    np.testing.assert_allclose(accumulated, expected)
    np.testing.assert_allclose(inc1, expected)
    np.testing.assert_allclose(set1, [0.0, 2.0, 3.0, 0.0])
    np.testing.assert_allclose(read, [0.0, 0.0, 0.0])
    m = tt.dmatrix("m")
    mv = rand(3, 4)
    rows = np.array([0, 2])
    np.testing.assert_allclose(fn([m], tt.advanced_subtensor(m, rows, slice(None)))(mv), mv[rows])
    out = fn([m], tt.advanced_inc_subtensor(m, 1.0, rows, slice(1, 3)))(mv)
    want = mv.copy()
    want[rows, 1:3] += 1.0
    np.testing.assert_allclose(out, want)


def test_slice_at_axis():
    x = tt.tensor("x", shape=(3, 4, 5))
    assert x[tt.slice_at_axis(slice(None, 1), 0)].type.shape == (1, 4, 5)
    assert x[tt.slice_at_axis(slice(None, 1), -2)].type.shape == (3, 1, 5)
    assert x[tt.slice_at_axis(slice(None, None, 2), 2)].type.shape == (3, 4, 3)


def test_get_canonical_form_slice():
    assert tt.get_canonical_form_slice(slice(3, 7, 2), 10) == (slice(3, 7, 2), 1)
    assert tt.get_canonical_form_slice(slice(None, None, -1), 10) == (slice(0, 10, 1), -1)
    index, direction = tt.get_canonical_form_slice(tt.lscalar("i"), tt.lscalar("n"))
    assert direction == 1 and index.ndim == 0
    with pytest.raises(ValueError, match="not a supported slice"):
        tt.get_canonical_form_slice(tt.dvector(), 5)
    with pytest.raises(ValueError, match="not a supported slice"):
        tt.get_canonical_form_slice(None, 5)
    start, stop, step, length = tt.iscalars("b", "e", "s", "l")
    (sl, direction) = tt.get_canonical_form_slice(slice(start, stop, step), length)
    f = fn([start, stop, step, length], [sl.start, sl.stop, sl.step, direction])
    a = np.arange(5)
    for b in (-8, -5, -1, 0, 1, 4, 8):
        for e in (-8, -4, -1, 0, 1, 5, 8):
            for s in (-6, -3, -1, 2, 5):
                lo, hi, st, way = (int(v) for v in f(b, e, s, 5))
                assert 0 <= lo <= hi <= 5 and st > 0
                np.testing.assert_array_equal(a[lo:hi:st][::way], a[b:e:s])


# -- tensor.basic's array functions ------------------------------------------------------------

@pytest.mark.parametrize("offset, axis1, axis2", [(0, 0, 1), (1, 1, 2), (-1, 0, 2), (2, 2, 0)])
def test_diagonal_alloc_diag_trace(offset, axis1, axis2):
    x = tt.dtensor3("x")
    v = rand(3, 4, 5)
    out = x.diagonal(offset, axis1, axis2)
    assert isinstance(out.owner.op, tt.ExtractDiag)
    np.testing.assert_allclose(fn([x], out)(v), np.diagonal(v, offset, axis1, axis2))
    check_infer_shape(out, [x], [v])
    verify_grad(lambda t: tt.diagonal(t, offset, axis1, axis2), [v])
    d = np.diagonal(v, offset, axis1, axis2)
    made = tt.alloc_diag(tt.as_tensor_variable(d), offset, axis1, axis2).eval()
    np.testing.assert_allclose(np.diagonal(made, offset, axis1, axis2), d)
    assert np.count_nonzero(made) == np.count_nonzero(d)
    m = tt.dmatrix("m")
    np.testing.assert_allclose(fn([m], m.trace())(v[0]), np.trace(v[0]))
    np.testing.assert_allclose(fn([m], tt.diag(m, 1))(v[0]), np.diag(v[0], 1))
    np.testing.assert_allclose(tt.diag(np.array([1.0, 2.0]), -1).eval(),
                               np.diag([1.0, 2.0], -1))


def test_triangle_indices():
    for k in (-1, 0, 2):
        for ours, theirs in ((tt.tril_indices, np.tril_indices),
                             (tt.triu_indices, np.triu_indices)):
            for got, want in zip(ours(4, k, 5), theirs(4, k, 5)):
                np.testing.assert_array_equal(got.eval(), want)
    m = tt.dmatrix("m")
    got = fn([m], list(tt.triu_indices_from(m, 1)))(np.zeros((3, 3)))
    for g, w in zip(got, np.triu_indices_from(np.zeros((3, 3)), 1)):
        np.testing.assert_array_equal(g, w)


def test_rearranging():
    x = tt.dtensor3("x")
    v = rand(2, 3, 4)
    assert tt.swapaxes(x, 0, 2).owner.op.new_order == (2, 1, 0)
    np.testing.assert_allclose(fn([x], x.swapaxes(0, -1))(v), np.swapaxes(v, 0, -1))
    np.testing.assert_allclose(fn([x], tt.moveaxis(x, [0, 1], [-1, -2]))(v),
                               np.moveaxis(v, [0, 1], [-1, -2]))
    np.testing.assert_allclose(fn([x], x.mT)(v), np.matrix_transpose(v))
    for shift, axis in ((1, None), (-2, 0), (5, 2), ((1, -1), (0, 1))):
        np.testing.assert_allclose(fn([x], tt.roll(x, shift, axis))(v), np.roll(v, shift, axis))
    verify_grad(lambda t: tt.roll(t, 1, 1), [v])
    for reps in (2, (2, 1), (1, 2, 3), (2, 1, 1, 2)):
        np.testing.assert_allclose(fn([x], tt.tile(x, reps))(v), np.tile(v, reps))
    verify_grad(lambda t: tt.tile(t, (2, 1, 2)), [v])
    assert tt.atleast_3d(tt.dvector()).type.shape == (1, 1, None)
    assert tt.atleast_Nd(tt.dvector(), 3, left=False).type.shape == (None, 1, 1)
    a, b = tt.dscalars("ab")
    np.testing.assert_allclose(fn([a, b], tt.stacklists([[a, b], [b, a]]))(1.0, 2.0),
                               [[1.0, 2.0], [2.0, 1.0]])
    m = tt.dmatrix("m")
    mv = rand(2, 3)
    np.testing.assert_allclose(fn([m], tt.horizontal_stack(m, m))(mv), np.hstack([mv, mv]))
    np.testing.assert_allclose(fn([m], tt.vertical_stack(m, m))(mv), np.vstack([mv, mv]))


def test_grids_permutations_choose():
    for ours, theirs in zip(tt.mgrid[0:3, 1:7:2], np.mgrid[0:3, 1:7:2]):
        np.testing.assert_array_equal(ours.eval(), theirs)
    for ours, theirs in zip(tt.ogrid[0:3, 0:4], np.ogrid[0:3, 0:4]):
        np.testing.assert_array_equal(ours.eval(), theirs)
    np.testing.assert_allclose(tt.mgrid[0:1:5j].eval(), np.mgrid[0:1:5j])
    np.testing.assert_allclose(tt.ogrid[0:1:0.25].eval(), np.ogrid[0:1:0.25])
    np.testing.assert_allclose(tt.mgrid[0:1:5j,][0].eval(), np.mgrid[0:1:5j,][0])
    p = tt.lvector("p")
    np.testing.assert_array_equal(fn([p], tt.inverse_permutation(p))(np.array([2, 0, 3, 1])),
                                  np.argsort([2, 0, 3, 1]))
    x, y = tt.dmatrix("x"), tt.lmatrix("y")
    xv, perm = np.arange(6.0).reshape(2, 3), np.array([[2, 0, 1], [1, 2, 0]])
    forward = fn([x, y], tt.permute_row_elements(x, y))(xv, perm)
    np.testing.assert_allclose(forward, np.take_along_axis(xv, perm, 1))
    back = fn([x, y], tt.permute_row_elements(x, y, inverse=True))(forward, perm)
    np.testing.assert_allclose(back, xv)
    i = tt.lmatrix("i")
    choices = [np.arange(4) * 1.0, np.arange(4) * 10.0, np.arange(4) * 100.0]
    iv = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    np.testing.assert_allclose(fn([i], tt.choose(i, choices))(iv), np.choose(iv, choices))
    np.testing.assert_allclose(fn([i], i.choose(choices, mode="wrap"))(iv + 3),
                               np.choose(iv + 3, choices, mode="wrap"))


def test_get_scalar_constant_value():
    x = tt.dmatrix("x")
    assert tt.get_scalar_constant_value(tt.constant(3)) == 3
    assert tt.get_scalar_constant_value(tt.cast(tt.constant(3), "float32") * 2) == 6
    assert tt.get_underlying_scalar_constant_value(np.array([2, 2])) == 2
    with pytest.raises(tt.NotScalarConstantError):   # 0-d values only, as PyTensor's
        tt.get_scalar_constant_value(np.array([2, 2]))
    fixed = tt.TensorType("float64", (5, None))("f")
    assert tt.get_scalar_constant_value(fixed.shape[0]) == 5
    assert tt.get_underlying_scalar_constant_value(
        tt.as_tensor_variable([x.shape[0], 4])[1]) == 4
    with pytest.raises(tt.NotScalarConstantError):
        tt.get_scalar_constant_value(x.shape[1])
    with pytest.raises(tt.NotScalarConstantError):
        tt.get_scalar_constant_value(tt.constant([1, 2]))
    assert tt.get_scalar_constant_value(x, raise_not_constant=False) is x
    assert issubclass(tt.NotScalarConstantError, ValueError)


# -- methods and numpy's functions on variables -------------------------------------------------

NUMPY_METHODS = ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "cos",
                 "cosh", "deg2rad", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p",
                 "log2", "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]


@pytest.mark.parametrize("name", NUMPY_METHODS)
def test_numpy_named_methods(name):
    x = tt.dvector("x")
    v = np.array([0.1, 0.4, 0.7]) + (1.0 if name == "arccosh" else 0.0)
    np.testing.assert_allclose(fn([x], getattr(x, name)())(v), getattr(np, name)(v))
    np.testing.assert_allclose(fn([x], getattr(np, name)(x))(v), getattr(np, name)(v))


def test_numpy_ufuncs_build_graphs():
    x = tt.dmatrix("x")
    v, a = rand(2, 3), rand(2, 3)
    for ufunc in (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.arctan2,
                  np.power, np.less, np.logaddexp):
        np.testing.assert_allclose(fn([x], ufunc(a, x))(v), ufunc(a, v))
    np.testing.assert_allclose(fn([x], a * x + np.float64(2))(v), a * v + 2)
    np.testing.assert_allclose(fn([x], np.abs(-x))(v), v)
    # == keeps the identity meaning of variables (tt.eq compares elementwise)
    assert (a == x) is False and (a != x) is True and np.equal(x, x) is True
    with pytest.raises(TypeError):
        np.add.reduce(x)
    with pytest.raises(TypeError):
        np.exp(x, out=np.empty((2, 3)))


def test_other_methods():
    x = tt.dmatrix("x")
    v = rand(3, 4)
    got = fn([x], [x.ptp(0), x.fill(3.0), x.zeros_like(), x.ones_like("int8"),
                   x[0:2].set(1.0), x[0].inc(1.0), x.copy("c"), x.real, x.imag, x.conj(),
                   divmod(x * 4, 2)[1], x.round("half_away_from_zero")])(v)
    np.testing.assert_allclose(got[0], np.ptp(v, 0))
    np.testing.assert_allclose(got[1], np.full_like(v, 3.0))
    assert got[2].sum() == 0 and got[3].dtype == np.int8
    np.testing.assert_allclose(got[4][:2], 1.0)
    np.testing.assert_allclose(got[5][0], v[0] + 1)
    np.testing.assert_allclose(got[6], v)
    np.testing.assert_allclose(got[7], v)
    np.testing.assert_allclose(got[8], 0.0)
    np.testing.assert_allclose(got[9], v)
    np.testing.assert_allclose(got[10], np.mod(v * 4, 2))
    assert x.copy("c").name == "c" and x.conjugate().name == x.name
    assert tt.tensor_copy(x).owner is not None


def test_numpy_constants_in_the_namespace():
    assert tt.pi == np.pi and tt.e == np.e and tt.newaxis is None and np.isinf(tt.inf)


def test_new_ops_define_gradients_or_zero_ones():
    """Integer-valued ops of this issue differentiate as constants (no error in grad)."""
    x = tt.dvector("x")
    cost = (tt.cast(tt.argsort(x), "float64") * x).sum() + tt.cast(
        tt.searchsorted(tt.sort(x), x), "float64").sum()
    g = tensorgraph.grad(cost, x)
    v = np.array([0.3, 0.1, 0.2])
    np.testing.assert_allclose(fn([x], g)(v), np.argsort(v))


def test_choose_from_one_tensor_of_choices():
    i, c = tt.lmatrix("i"), tt.dmatrix("c")
    choices = np.array([np.arange(4) * 1.0, np.arange(4) * 10.0, np.arange(4) * 100.0])
    iv = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    np.testing.assert_allclose(fn([i, c], tt.choose(i, c))(iv, choices), np.choose(iv, choices))


def test_join_takes_the_axis_first_or_as_a_constant():
    from tensorgraph.tensor.join import Join

    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    joined = Join()(1, x, y)
    assert joined.owner.op == Join(1)
    assert tt.join(tt.constant(-1), x, y).owner.op == Join(1)
    assert tt.concatenate([x, y], axis=np.int64(0)).owner.op == Join(0)
    xv, yv = rand(2, 3), rand(2, 2)
    np.testing.assert_allclose(fn([x, y], joined)(xv, yv), np.concatenate([xv, yv], 1))
    # a symbolic axis is an input of the node (tests/tensor/test_join.py checks its values)
    assert tt.join(tt.lscalar("a"), x, y).owner.op == Join()


def test_advanced_inc_subtensor_takes_pytensors_keywords():
    m = tt.dmatrix("m")
    rows = np.array([0, 2])
    out = fn([m], [tt.advanced_inc_subtensor(m, 1.0, rows, set_instead_of_inc=True),
                   tt.take(m, rows, 0, mode=None)])(np.zeros((3, 2)))
    np.testing.assert_allclose(out[0], [[1, 1], [0, 0], [1, 1]])
    assert out[1].shape == (2, 2)


def test_numpy_logical_ufuncs_use_truth_values():
    i = tt.lvector("i")
    v = np.array([2, 0, 1])
    for ufunc in (np.logical_and, np.logical_or, np.logical_xor):
        np.testing.assert_array_equal(fn([i], ufunc(i, 1))(v), ufunc(v, 1))
    np.testing.assert_array_equal(fn([i], np.logical_not(i))(v), np.logical_not(v))
    np.testing.assert_array_equal(fn([i], np.bitwise_and(i, 1))(v), np.bitwise_and(v, 1))


def test_repeat_static_shapes_and_searchsorted_refusals():
    x = tt.TensorType("float64", (None, 1, 3))("x")
    assert tt.repeat(x, 2, axis=1).type.shape == (None, 2, 3)
    assert tt.repeat(x, [2], axis=1).type.shape == (None, 2, 3)
    assert tt.repeat(x, tt.iscalar(), axis=1).type.shape == (None, None, 3)
    assert tt.repeat(x, [1, 2, 4], axis=2).type.shape == (None, 1, 7)
    with pytest.raises(ValueError, match="3 repeat counts"):
        tt.repeat(x, [1, 2, 4], axis=1)
    with pytest.raises(ValueError, match="sorter must be a vector"):
        tt.searchsorted(tt.dvector(), tt.dvector(), sorter=tt.lmatrix())
    with pytest.raises(ValueError, match="x must be a vector"):
        tt.searchsorted(tt.dmatrix(), tt.dvector())


def test_where_forms():
    a = np.arange(10)
    cond = tt.as_tensor_variable(a < 5)
    np.testing.assert_allclose(tt.where(cond, np.pi, np.e).eval(), np.where(a < 5, np.pi, np.e))
    (idx,) = tt.where(cond)
    np.testing.assert_array_equal(idx.eval(), np.where(a < 5)[0])
    with pytest.raises(ValueError, match="either both"):
        tt.where(cond, 1.0)


def test_oriented_stacks_take_two_or_more_matrices():
    with pytest.raises(ValueError, match="at least two tensors, got 0"):
        tt.horizontal_stack()
    t3 = tt.tensor(dtype="float64", shape=(None, None, None))
    with pytest.raises(ValueError, match="two dimensions.*argument 0"):
        tt.vertical_stack(t3, t3)


@pytest.mark.parametrize("shape, expected", [([], ()), (np.array(5), (5,)),
                                             (tt.constant([]), ()), (tt.constant(5), (5,))])
def test_creation_shapes_numpy_accepts(shape, expected):
    out = tt.ones(shape).eval()
    assert out.shape == expected and np.all(out == 1)


@pytest.mark.parametrize("s1_vals, s2_vals, expected", [
    ((2, 2), (1, 2), AssertionError),      # a run-time 1 does not broadcast
    ((0, 2), (1, 2), AssertionError),
    ((1, 2, 1), (2, 1, 2, 1), (2, 1, 2, 1)),
    ((3, 2), (3, 2), (3, 2)),
])
def test_broadcast_shape_checks_symbolic_sizes(s1_vals, s2_vals, expected):
    from tensorgraph.tensor.extra_ops import broadcast_shape

    s1, s2 = tt.lscalars(len(s1_vals)), tt.lscalars(len(s2_vals))
    res = tt.as_tensor(broadcast_shape(s1, s2, arrays_are_shapes=True))
    point = dict([*zip(s1, s1_vals), *zip(s2, s2_vals)])
    if expected is AssertionError:
        with pytest.raises(AssertionError, match="differ at run time"):
            res.eval(point)
    else:
        assert tuple(res.eval(point)) == expected


def test_unravel_index_needs_dims_of_known_length():
    # the number of outputs is the length of dims: unknown length is a bad value (ValueError),
    # a dims that is no vector a bad type
    with pytest.raises(ValueError, match="known length"):
        tt.unravel_index(tt.ivector(), tt.ivector())
    with pytest.raises(TypeError):
        tt.unravel_index(tt.ivector(), tt.imatrix())
    dims = tt.specify_shape(tt.ivector("d"), (2,))
    i = tt.lvector("i")
    rows, cols = fn([i, dims], list(tt.unravel_index(i, dims)))([7, 13], [5, 6])
    np.testing.assert_array_equal([rows, cols], np.unravel_index([7, 13], (5, 6)))


def test_broadcast_shape_with_runtime_broadcast_follows_numpy():
    a, b, c = tt.lscalar("a"), tt.lscalar("b"), tt.lscalar("c")
    shapes = ((a, b), (c, 3))
    numpy_rule = fn([a, b, c], list(tt.broadcast_shape(*shapes, arrays_are_shapes=True,
                                                       allow_runtime_broadcast=True)))
    for sizes in [(1, 1, 5), (5, 3, 1), (0, 1, 1), (1, 1, 1), (4, 3, 4)]:
        expected = np.broadcast_shapes((sizes[0], sizes[1]), (sizes[2], 3))
        assert tuple(int(v) for v in numpy_rule(*sizes)) == expected
    for bad in [(2, 3, 5), (2, 4, 2)]:
        with pytest.raises(AssertionError, match="do not broadcast together"):
            numpy_rule(*bad)
    # by default a size that is 1 only at run time does not broadcast (tensorgraph's rule)
    strict = fn([a, b, c], list(tt.broadcast_shape(*shapes, arrays_are_shapes=True)))
    assert [int(v) for v in strict(5, 3, 5)] == [5, 3]
    with pytest.raises(AssertionError):
        strict(1, 3, 5)


def test_concat_with_broadcast_repeats_size_one_dimensions():
    a, b = tt.tensor("a", shape=(1, 3, 2)), tt.tensor("b", shape=(4, None, 5))
    c = tt.concat_with_broadcast([a, b], axis=-1)
    assert c.type.shape == (4, 3, 7)
    av, bv = np.arange(6.0).reshape(1, 3, 2), np.ones((4, 3, 5))
    out = fn([a, b], c)(av, bv)
    np.testing.assert_array_equal(out, np.concatenate([np.broadcast_to(av, (4, 3, 2)), bv], -1))
    # a size known only at run time must match (no run-time broadcast, tensorgraph's rule)
    with pytest.raises(AssertionError, match="differ at run time"):
        fn([a, b], c)(av, np.ones((4, 1, 5)))
    assert tt.concat_with_broadcast([a], axis=0).type == a.type
    with pytest.raises(ValueError, match="empty list"):
        tt.concat_with_broadcast([], axis=0)
    with pytest.raises(TypeError, match="same number of dimensions"):
        tt.concat_with_broadcast([a, tt.matrix()], axis=0)


def test_tile_reps_of_a_wrong_type_are_type_and_value_errors():
    x = tt.arange(3)
    for reps in (2.5, tt.fscalar(), tt.dvector(), [2, tt.fscalar()], tt.lmatrix(),
                 [2, tt.lvector()]):
        with pytest.raises(TypeError, match="tile reps"):
            tt.tile(x, reps)
        with pytest.raises(ValueError, match="tile reps"):
            tt.tile(x, reps)


def test_take_along_axis_float_indices_are_type_and_index_errors():
    arr = tt.dmatrix("arr")
    for error in (TypeError, IndexError):
        with pytest.raises(error, match="indices must be integers"):
            tt.take_along_axis(arr, tt.dmatrix("i"))
    with pytest.raises(ValueError, match="must be a vector"):
        tt.take_along_axis(arr, tt.ltensor3("i"))


def test_is_flat_compares_the_number_of_dimensions():
    from tensorgraph.tensor.basic import is_flat

    assert is_flat(np.zeros(10)) and is_flat(tt.dvector())
    assert is_flat(tt.dtensor3(), ndim=3) and not is_flat(tt.dtensor3())
    assert is_flat(tt.dtensor4().reshape((tt.lscalar(),) * 3), ndim=3)
    assert not is_flat(tt.dtensor4().reshape((10, 10, -1)))


def test_choose_broadcasts_the_choices_against_each_other():
    a = tt.tensor("a", dtype="int32", shape=(None, 1, 1))
    b = tt.tensor("b", dtype="float32", shape=(1, 6, 1))
    c = tt.tensor("c", dtype="float32", shape=(1, 1, 5))
    av = np.array([0, 1, 1], dtype="int32").reshape(3, 1, 1)
    bv = np.arange(6, dtype="float32").reshape(1, 6, 1)
    cv = -np.arange(5, dtype="float32").reshape(1, 1, 5)
    for seq in (list, tuple):
        out = tt.choose(a, seq([b, c]))
        assert out.type.shape == (None, 6, 5)
        np.testing.assert_array_equal(fn([a, b, c], out)(av, bv, cv),
                                      np.choose(av, seq([bv, cv])))
    s, t = tt.dscalar("s"), tt.dscalar("t")
    i = tt.ivector("i")
    np.testing.assert_allclose(fn([i, s, t], tt.choose(i, [s, t]))([0, 1, 1, 0], 0.1, 0.2),
                               [0.1, 0.2, 0.2, 0.1])
