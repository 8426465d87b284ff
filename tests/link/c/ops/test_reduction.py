"""Generated C of the reductions (CAReduce: sum, prod, max, min, all, any; Argmax, Argmin)
against their numpy ``perform``.

One function per dtype holds the reductions over every set of axes of a 3-d input, so each
test compiles few modules; hypothesis varies the shape (zero sizes included), the memory
layout (transposed, steps, negative steps, broadcast) and where nans sit.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.mode import Mode
from tensorgraph.scalar import math as sm
from tensorgraph.tensor.reduction import CAReduce, Max, Sum

C = Mode("cvm", None)
PY = Mode("py", None)
TOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}
AXES_3D = [None, 0, 1, 2, (0, 1), (0, 2), (1, 2), ()]
DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int64", "bool"]


def assert_same(got, expected, label):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{label}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}"
    if got.dtype.kind == "f":
        tol = TOL[got.dtype.name]
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=label)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=label)


_functions = {}


def reductions(dtype, extremes):
    """(C function, Python function, labels): every reduction of a 3-d ``dtype`` input;
    ``extremes`` selects max/min/argmax/argmin (which refuse zero-size axes), else the others."""
    key = (dtype, extremes)
    if key not in _functions:
        x = tt.tensor(dtype, shape=(None, None, None), name="x")
        fns = ([tt.max, tt.min, tt.argmax, tt.argmin] if extremes else
               [tt.sum, tt.prod, tt.all, tt.any])
        outputs, labels = [], []
        for fn, axis in itertools.product(fns, AXES_3D):
            if axis == () and fn in (tt.argmax, tt.argmin):
                continue
            outputs.append(fn(x, axis=axis))
            labels.append(f"{fn.__name__}(axis={axis})")
        if not extremes and dtype.startswith("float"):
            outputs += [tt.sum(x, axis=1, acc_dtype=dtype), tt.mean(x, axis=(0, 2))]
            labels += ["sum(acc_dtype=dtype)", "mean"]
        f_c = tensorgraph.function([x], outputs, mode=C)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _functions[key] = (f_c, tensorgraph.function([x], outputs, mode=PY), labels)
    return _functions[key]


def values(dtype, shape, rng, nans):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -3), min(info.max, 4), shape, endpoint=True
                            ).astype(dtype)
    v = (rng.normal(size=shape) * 2).astype(dtype)
    if nans and v.size:
        v.flat[rng.integers(0, v.size, nans)] = np.nan
    return v


def relayout(v, how):
    if how == "transposed":
        return np.ascontiguousarray(v.transpose(2, 0, 1)).transpose(1, 2, 0)
    if how == "steps":
        big = np.zeros((v.shape[0], 2 * v.shape[1], 3 * v.shape[2]), v.dtype)
        big[:, ::2, ::3] = v
        return big[:, ::2, ::3]
    if how == "reversed":
        return np.ascontiguousarray(v[::-1, :, ::-1])[::-1, :, ::-1]
    if how == "broadcast" and v.shape[1]:
        return np.broadcast_to(v[:, :1], v.shape)
    return v


@st.composite
def case(draw, allow_empty):
    low = 0 if allow_empty else 1
    shape = tuple(draw(st.integers(low, 6)) for _ in range(3))
    how = draw(st.sampled_from(["c", "transposed", "steps", "reversed", "broadcast"]))
    return shape, how, draw(st.integers(0, 2**31)), draw(st.sampled_from([0, 0, 1, 3]))


def check(dtype, extremes, shape, how, seed, nans):
    f_c, f_py, labels = reductions(dtype, extremes)
    v = relayout(values(dtype, shape, np.random.default_rng(seed), nans), how)
    with np.errstate(all="ignore"):
        expected = f_py(v)
        got = f_c(v)
    for g, e, label in zip(got, expected, labels):
        assert_same(g, e, f"{label} of {dtype} {shape} {how}")


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=25, deadline=None)
@given(c=case(allow_empty=True))
def test_sum_prod_all_any_match_perform(dtype, c):
    check(dtype, False, *c)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=25, deadline=None)
@given(c=case(allow_empty=False))
def test_max_min_argmax_argmin_match_perform(dtype, c):
    check(dtype, True, *c)


def test_long_float32_sums_keep_their_precision():
    x = tt.fvector()
    f = tensorgraph.function([x], [tt.sum(x), tt.sum(x, acc_dtype="float32")], mode=C)
    v = np.random.default_rng(0).uniform(0, 1, 10**6).astype("float32")
    exact = np.sum(v.astype("float64"))
    wide, narrow = f(v)
    assert abs(float(wide) - exact) <= 1e-7 * exact
    assert abs(float(narrow) - exact) <= 1e-5 * exact


def test_nan_propagates_through_max_and_min_at_any_position():
    x = tt.dvector()
    f = tensorgraph.function([x], [tt.max(x), tt.min(x), tt.argmax(x), tt.argmin(x)], mode=C)
    for n in (1, 5, 31, 32, 33, 4097, 10000):
        for at in sorted({0, n // 2, n - 1}):
            v = np.arange(n, dtype="float64")
            v[at] = np.nan
            mx, mn, amx, amn = f(v)
            assert np.isnan(mx) and np.isnan(mn) and amx == at and amn == at


def test_reductions_of_0d_1d_and_4d_inputs():
    s, v, t = tt.dscalar(), tt.fvector(), tt.tensor("float64", shape=(None,) * 4)
    outputs = [tt.sum(s), tt.max(s), tt.argmax(s), tt.sum(v), tt.prod(v), tt.argmin(v)]
    for axis in [None, (0, 3), (1, 2), (0, 2, 3), 3, (1, 3)]:
        outputs += [tt.sum(t, axis), tt.max(t, axis), tt.argmax(t, axis)]
    f_c = tensorgraph.function([s, v, t], outputs, mode=C)
    f_py = tensorgraph.function([s, v, t], outputs, mode=PY)
    rng = np.random.default_rng(1)
    args = [np.asarray(2.5), rng.normal(size=9).astype("float32")[::-2],
            rng.normal(size=(3, 4, 2, 5)).transpose(0, 3, 2, 1).copy().transpose(0, 3, 2, 1)]
    for k, (g, e) in enumerate(zip(f_c(*args), f_py(*args))):
        assert_same(g, e, f"output {k}")


def test_output_and_accumulator_dtypes():
    x, i = tt.fmatrix(), tt.tensor("int16", shape=(None, None))
    outputs = [Sum((0,), dtype="float64", acc_dtype="float64")(x),
               Sum((1,), dtype="float16", acc_dtype="float32")(x),
               Sum((0, 1), dtype="int8")(i),          # numpy: int64 accumulation, wrapped
               Sum((1,))(tt.cast(i, "bool")),         # bool output from counts
               tt.prod(i, axis=0, dtype="float32"),
               CAReduce(sm.and_, (1,))(i), CAReduce(sm.or_, (0,))(i)]
    f_c = tensorgraph.function([x, i], outputs, mode=C)
    f_py = tensorgraph.function([x, i], outputs, mode=PY)
    assert {t.kind for t in f_c.vm.thunks} == {"c"}
    rng = np.random.default_rng(2)
    args = [rng.normal(size=(4, 6)).astype("float32"),
            rng.integers(-300, 300, (4, 6)).astype("int16")]
    for k, (g, e) in enumerate(zip(f_c(*args), f_py(*args))):
        assert_same(g, e, f"output {k}")


def test_zero_size_axis_errors_match_perform():
    x = tt.dmatrix()
    for build, name in [(lambda v: tt.max(v, axis=1), "max"), (lambda v: tt.argmin(v), "argmin")]:
        f = tensorgraph.function([x], build(x), mode=C)
        with pytest.raises(ValueError, match=rf"{name} over axes .* of an array of shape "
                                             r"\(3, 0\): a zero-size axis has no " + name):
            f(np.zeros((3, 0)))
    f = tensorgraph.function([x], tt.max(x, axis=1), mode=C)
    assert f(np.zeros((0, 4))).shape == (0,)   # empty output, non-empty axis: fine


def test_openmp_splits_match_perform():
    x = tt.fmatrix()
    outputs = [tt.sum(x), tt.sum(x, 0), tt.sum(x, 1), tt.max(x), tt.max(x, 0), tt.min(x, 1),
               tt.prod(x > 0, 1), Max((0, 1))(x)]
    with config.change_flags(openmp=True, openmp_elemwise_minsize=1000):
        f_c = tensorgraph.function([x], outputs, mode=C)
    f_py = tensorgraph.function([x], outputs, mode=PY)
    rng = np.random.default_rng(3)
    for shape in [(3, 70001), (40001, 3), (300, 300)]:
        v = rng.normal(size=shape).astype("float32")
        v[1, 2] = np.nan
        for arr in (v, np.asfortranarray(v), v[:, ::-1]):
            for k, (g, e) in enumerate(zip(f_c(arr), f_py(arr))):
                np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-2, equal_nan=True,
                                           err_msg=f"{shape} output {k}")


def test_whole_vector_reductions_match_perform_and_the_general_path():
    """A 1-d input reduced whole has its own short C (one run); long vectors split in the
    general path's blocks under openmp, so both give the same sums."""
    v, m = tt.fvector(), tt.fmatrix()
    outputs = [tt.sum(v), tt.max(v), tt.min(v), tt.prod(v > 0), tt.sum(v, dtype="float64")]
    rng = np.random.default_rng(4)
    values = rng.normal(size=100003).astype("float32")
    values[17] = np.nan
    clean = np.nan_to_num(values)
    f_py = tensorgraph.function([v], outputs, mode=PY)
    for openmp in (False, True):
        with config.change_flags(openmp=openmp, openmp_elemwise_minsize=1000):
            f_c = tensorgraph.function([v], outputs, mode=C)
            general = tensorgraph.function([m], tt.sum(m), mode=C)
        for arr in (values, values[::-3], clean[:1], clean):
            for k, (g, e) in enumerate(zip(f_c(arr), f_py(arr))):
                np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-2, equal_nan=True,
                                           err_msg=f"openmp={openmp} output {k}")
        np.testing.assert_array_equal(f_c(clean)[0], general(clean[None, :]))


def test_the_c_comes_from_the_link_layer_table():
    """The reduction ops say what they compute; their C is registered in
    tensorgraph.link.c.ops.reduction, and the tensor module imports nothing of link."""
    import ast
    import inspect

    from tensorgraph.graph.op import Op
    from tensorgraph.link.c.ops import implementation
    from tensorgraph.link.c.ops import reduction as c_reduction
    from tensorgraph.tensor import reduction

    x = tt.dmatrix()
    cases = [(tt.sum(x).owner.op, c_reduction.CAReduceC),
             (tt.max(x, 0).owner.op, c_reduction.CAReduceC),
             (tt.all(x).owner.op, c_reduction.CAReduceC),
             (CAReduce(sm.or_, (1,)), c_reduction.CAReduceC),
             (tt.argmax(x).owner.op, c_reduction.ArgExtremumC),
             (tt.argmin(x, 1).owner.op, c_reduction.ArgExtremumC)]
    for op, impl in cases:
        assert isinstance(implementation(op), impl), op
        for klass in type(op).__mro__[:type(op).__mro__.index(Op)]:
            assert not [n for n in vars(klass) if n.startswith("c_")], klass
    tree = ast.parse(inspect.getsource(reduction))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("tensorgraph.link")]
