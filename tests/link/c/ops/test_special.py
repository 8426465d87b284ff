"""Generated C of Softmax, LogSoftmax, TakeAlongLastAxis and PutAlongLastAxis against their
numpy ``perform``: every axis, dtypes, memory layouts, nan/inf rows, label errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.tensor.special import (PutAlongLastAxis, TakeAlongLastAxis, log_softmax,
                                        softmax)

C = Mode("cvm", None)
PY = Mode("py", None)
TOL = {"float16": 1e-2, "float32": 2e-6, "float64": 1e-13}

_functions = {}


def softmax_functions(dtype):
    if dtype not in _functions:
        x = tt.tensor(dtype, shape=(None, None, None), name="x")
        outputs = [f(x, axis) for axis in (None, 0, 1, 2) for f in (softmax, log_softmax)]
        f_c = tensorgraph.function([x], outputs, mode=C)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _functions[dtype] = (f_c, tensorgraph.function([x], outputs, mode=PY))
    return _functions[dtype]


def relayout(v, how):
    if how == "transposed":
        return np.ascontiguousarray(v.transpose(2, 0, 1)).transpose(1, 2, 0)
    if how == "steps":
        big = np.zeros((v.shape[0], 2 * v.shape[1], 3 * v.shape[2]), v.dtype)
        big[:, ::2, ::3] = v
        return big[:, ::2, ::3]
    if how == "reversed":
        return np.ascontiguousarray(v[::-1, ::-1])[::-1, ::-1]
    if how == "broadcast" and v.shape[0]:
        return np.broadcast_to(v[:1], v.shape)
    return v


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int16"])
@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(*[st.integers(0, 7)] * 3),
       how=st.sampled_from(["c", "transposed", "steps", "reversed", "broadcast"]),
       seed=st.integers(0, 2**31), specials=st.integers(0, 4))
def test_softmax_and_log_softmax_match_perform(dtype, shape, how, seed, specials):
    rng = np.random.default_rng(seed)
    if dtype == "int16":
        v = rng.integers(-30, 30, shape).astype(dtype)
    else:
        v = (rng.normal(size=shape) * 8).astype(dtype)
        if v.size:
            v.flat[rng.integers(0, v.size, specials)] = rng.choice(
                [np.nan, np.inf, -np.inf, 1e4, -1e4], specials)
    v = relayout(v, how)
    f_c, f_py = softmax_functions(dtype)
    with np.errstate(all="ignore"):
        expected = f_py(v)
        got = f_c(v)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape
        tol = TOL[str(e.dtype)]
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=f"output {k}, {dtype} {shape} {how}")


def test_softmax_rows_of_a_batch_sum_to_one_and_log_softmax_does_not_underflow():
    x = tt.fmatrix()
    f = tensorgraph.function([x], [softmax(x), log_softmax(x)], mode=C)
    v = np.random.default_rng(0).normal(size=(128, 10)).astype("float32") * 30
    v[0, 0] = 200.0
    sm, lsm = f(v)
    np.testing.assert_allclose(sm.sum(axis=1), 1, rtol=1e-5)
    assert np.all(np.isfinite(lsm)) and lsm[0, 1] < -100


def label_functions(labels_dtype):
    key = ("labels", labels_dtype)
    if key not in _functions:
        x = tt.tensor("float32", shape=(None, None, None), name="x")
        labels = tt.tensor(labels_dtype, shape=(None, None), name="labels")
        vals = tt.tensor("float32", shape=(None, 1), name="vals")
        outputs = [TakeAlongLastAxis()(x, labels), PutAlongLastAxis()(vals, labels, x)]
        f_c = tensorgraph.function([x, labels, vals], outputs, mode=C)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _functions[key] = (f_c, tensorgraph.function([x, labels, vals], outputs, mode=PY))
    return _functions[key]


@pytest.mark.parametrize("labels_dtype", ["int32", "int64", "uint8"])
@settings(max_examples=25, deadline=None)
@given(shape=st.tuples(*[st.integers(0, 5)] * 2 + [st.integers(1, 6)]),
       how=st.sampled_from(["c", "transposed", "steps", "reversed"]),
       seed=st.integers(0, 2**31))
def test_take_and_put_along_last_axis_match_perform(labels_dtype, shape, how, seed):
    rng = np.random.default_rng(seed)
    x = relayout(rng.normal(size=shape).astype("float32"), how)
    labels = rng.integers(0, shape[2], shape[:2]).astype(labels_dtype)
    vals = rng.normal(size=(shape[0], 1)).astype("float32")
    f_c, f_py = label_functions(labels_dtype)
    for g, e in zip(f_c(x, labels.T.copy().T, vals), f_py(x, labels, vals)):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


def test_label_errors_match_perform():
    f_c, f_py = label_functions("int64")
    x = np.zeros((2, 3, 4), "float32")
    vals = np.ones((2, 1), "float32")
    labels = np.array([[0, 1, 2], [3, 4, 0]])
    for f in (f_c, f_py):
        with pytest.raises(IndexError,
                           match=r"TakeAlongLastAxis: label 4 is out of range for 4 classes "
                                 r"\(labels must be in 0\.\.3\)"):
            f(x, labels, vals)
        with pytest.raises(ValueError, match=r"labels of shape \(2, 2\) do not match the "
                                             r"leading dimensions of values of shape \(2, 3, 4\)"):
            f(x, labels[:, :2], vals)
    f_u, _ = label_functions("uint8")
    with pytest.raises(IndexError, match="label 200 is out of range for 4 classes"):
        f_u(x, np.array([[0, 200, 1], [1, 1, 1]], "uint8"), vals)


def test_the_c_comes_from_the_link_layer_table():
    """Softmax, LogSoftmax and the label ops say what they compute; their C is registered in
    tensorgraph.link.c.ops.special, and the tensor module imports nothing of link."""
    import ast
    import inspect

    from tensorgraph.graph.op import Op
    from tensorgraph.link.c.ops import implementation
    from tensorgraph.link.c.ops import special as c_special
    from tensorgraph.tensor import special

    x = tt.fmatrix()
    cases = [(softmax(x).owner.op, c_special.SoftmaxC),
             (log_softmax(x, None).owner.op, c_special.SoftmaxC),
             (TakeAlongLastAxis(), c_special.TakeAlongLastAxisC),
             (PutAlongLastAxis(), c_special.PutAlongLastAxisC)]
    for op, impl in cases:
        assert isinstance(implementation(op), impl), op
        for klass in type(op).__mro__[:type(op).__mro__.index(Op)]:
            assert not [n for n in vars(klass) if n.startswith("c_")], klass
    tree = ast.parse(inspect.getsource(special))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("tensorgraph.link")]
