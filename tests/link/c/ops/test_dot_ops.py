"""C of the products beyond ``Dot``: ``MatMul``'s own C and ``TensorDot`` lowered to ``Dot``.

``MatMul`` runs as C without rewrites and is compared with its ``perform`` on hypothesis-drawn
batch shapes (broadcast batch axes, empty sizes), dtypes (BLAS float32/float64, the plain loop
for integers and mixed dtypes), memory layouts (Fortran order, steps, negative steps, stride 0)
and both BLAS choices (OpenBLAS, tensorgraph's own kernels). ``TensorDot`` is compiled in
FAST_RUN, where the ``tensordot`` rewrite lowers it; the result is compared with ``perform``
under the Python linker without rewrites.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.raise_op import Assert
from tensorgraph.tensor.dot import MatMul, TensorDot

from op_checks import C, LAYOUTS, PY, layout

TOL = {"float32": 1e-4, "float64": 1e-10}
def values(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(-5 if dtype.startswith("int") else 0, 6, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def assert_close(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.shape,
                                                                         expected.shape)
    if got.dtype.kind == "f":
        rtol = TOL[str(got.dtype)]
        atol = rtol * max(1.0, float(np.max(np.abs(expected), initial=0)))
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, expected)


# ----------------------------------------------------------------------------------------------
# MatMul

DTYPE_PAIRS = [("float32", "float32"), ("float64", "float64"), ("int64", "int64"),
               ("int16", "int8"), ("float32", "float64"), ("int32", "float32"),
               ("bool", "bool")]
# static batch shapes of (a, b): free batch axes, b one matrix for every batch element (the
# merged single product), a broadcast along one axis, 4-d with both broadcasting
BATCH_TYPES = [((None,), (None,)), ((None,), (1,)), ((1,), (None,)),
               ((None, 1), (1, None)), ((None, None), (1, 1))]
_matmuls = {}


def matmul_functions(dtypes, ldflags):
    """(C function, Python function) of every MatMul of BATCH_TYPES."""
    key = (dtypes, ldflags)
    if key not in _matmuls:
        inputs, outputs = [], []
        for sa, sb in BATCH_TYPES:
            a = tt.tensor(dtypes[0], shape=sa + (None, None))
            b = tt.tensor(dtypes[1], shape=sb + (None, None))
            inputs += [a, b]
            outputs.append(MatMul()(a, b))
        with config.change_flags(blas__ldflags=ldflags):
            f_c = tensorgraph.function(inputs, outputs, mode=C)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _matmuls[key] = (f_c, tensorgraph.function(inputs, outputs, mode=PY))
    return _matmuls[key]


@settings(max_examples=25, deadline=None)
@given(dtypes=st.sampled_from(DTYPE_PAIRS), ldflags=st.sampled_from(["", "none"]),
       batch=st.lists(st.integers(0, 3), min_size=2, max_size=2),
       mnk=st.lists(st.integers(0, 5), min_size=3, max_size=3),
       how=st.lists(st.sampled_from(LAYOUTS), min_size=10, max_size=10),
       seed=st.integers(0, 2**31))
def test_matmul_matches_perform(dtypes, ldflags, batch, mnk, how, seed):
    f_c, f_py = matmul_functions(dtypes, ldflags)
    rng = np.random.default_rng(seed)
    m, n, k = mnk
    args = []
    for (sa, sb), (ha, hb) in zip(BATCH_TYPES, zip(how[::2], how[1::2])):
        ba = tuple(1 if s == 1 else batch[d] for d, s in enumerate(sa))
        bb = tuple(1 if s == 1 else batch[d] for d, s in enumerate(sb))
        args += [layout(values(rng, ba + (m, k), dtypes[0]), ha),
                 layout(values(rng, bb + (k, n), dtypes[1]), hb)]
    for got, expected in zip(f_c(*args), f_py(*args)):
        assert_close(got, expected)


def test_matmul_with_one_matrix_for_the_batch_is_one_product():
    """b broadcast along the batch: a C-contiguous, with its rows' ends cut (rows and batch
    at one stride), with every other row (batch stride not a multiple of the rows'), a batch
    of single rows and a transposed stack all match numpy."""
    a = tt.tensor("float64", shape=(None, None, None))
    b = tt.tensor("float64", shape=(1, None, None))
    f = tensorgraph.function([a, b], MatMul()(a, b), mode=C)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1, 4, 3))
    for x in (rng.standard_normal((5, 6, 4)), rng.standard_normal((5, 6, 7))[:, :, :4],
              rng.standard_normal((5, 7, 4))[:, ::2], rng.standard_normal((5, 1, 4)),
              rng.standard_normal((5, 4, 6)).transpose(0, 2, 1)):
        np.testing.assert_allclose(f(x, w), np.matmul(x, w), rtol=1e-12)


def test_matmul_in_fast_run_runs_c():
    a, b = tt.tensor3("a"), tt.tensor3("b")
    f = tensorgraph.function([a, b], tt.matmul(a, b) * 2, mode="FAST_RUN")
    assert any(isinstance(n.op, MatMul) for n in f.vm.nodes)
    assert {t.kind for t in f.vm.thunks} == {"c"}
    x = np.ones((2, 3, 4), config.floatX)
    y = np.ones((2, 4, 5), config.floatX)
    np.testing.assert_allclose(f(x, y), 2 * np.matmul(x, y))


@pytest.mark.parametrize("sa, sb, message", [
    ((2, 3, 4), (2, 5, 2), r"inner dimensions differ: shapes \(2, 3, 4\) and \(2, 5, 2\)"),
    ((2, 3, 4), (3, 4, 2), r"batch dimension 0 differs: shapes \(2, 3, 4\) and \(3, 4, 2\)"),
    ((1, 3, 4), (3, 4, 2), "has size 1 in batch dimension 0 at run time but its type"),
])
def test_matmul_shape_errors_match_perform(sa, sb, message):
    a, b = tt.dtensor3("a"), tt.dtensor3("b")
    f_c = tensorgraph.function([a, b], MatMul()(a, b), mode=C)
    f_py = tensorgraph.function([a, b], MatMul()(a, b), mode=PY)
    for f in (f_c, f_py):
        with pytest.raises(ValueError, match=message):
            f(np.ones(sa), np.ones(sb))


# ----------------------------------------------------------------------------------------------
# TensorDot, lowered

# (ndim of a, ndim of b, axes_a, axes_b)
CONTRACTIONS = [(3, 2, [2], [0]), (3, 3, [1, 2], [0, 1]), (3, 3, [0, 2], [2, 1]),
                (2, 3, [1], [1]), (1, 3, [0], [1]), (3, 1, [0], [0]), (2, 2, [0, 1], [1, 0]),
                (2, 2, [], []), (1, 2, [], []), (4, 2, [1, 3], [1, 0])]
_tensordots = {}


def tensordot_functions(dtypes):
    if dtypes not in _tensordots:
        inputs, outputs = [], []
        for nda, ndb, axes_a, axes_b in CONTRACTIONS:
            a = tt.tensor(dtypes[0], shape=(None,) * nda)
            b = tt.tensor(dtypes[1], shape=(None,) * ndb)
            inputs += [a, b]
            outputs.append(TensorDot(axes_a, axes_b)(a, b))
        f_c = tensorgraph.function(inputs, outputs, mode="FAST_RUN")
        assert not any(isinstance(n.op, TensorDot) for n in f_c.vm.nodes)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _tensordots[dtypes] = (f_c, tensorgraph.function(inputs, outputs, mode=PY))
    return _tensordots[dtypes]


@settings(max_examples=20, deadline=None)
@given(dtypes=st.sampled_from([("float32", "float32"), ("float64", "float64"),
                               ("int64", "int64"), ("float32", "float64"), ("int8", "int16")]),
       sizes=st.lists(st.integers(0, 4), min_size=4, max_size=4),
       how=st.lists(st.sampled_from(LAYOUTS), min_size=2 * len(CONTRACTIONS),
                    max_size=2 * len(CONTRACTIONS)),
       seed=st.integers(0, 2**31))
def test_lowered_tensordot_matches_perform(dtypes, sizes, how, seed):
    f_c, f_py = tensordot_functions(dtypes)
    rng = np.random.default_rng(seed)
    args = []
    for c, (nda, ndb, axes_a, axes_b) in enumerate(CONTRACTIONS):
        shape_a = [sizes[d] for d in range(nda)]
        shape_b = [sizes[(d + 2) % 4] for d in range(ndb)]
        for ia, ib in zip(axes_a, axes_b):
            shape_b[ib] = shape_a[ia]
        args += [layout(values(rng, tuple(shape_a), dtypes[0]), how[2 * c]),
                 layout(values(rng, tuple(shape_b), dtypes[1]), how[2 * c + 1])]
    for got, expected in zip(f_c(*args), f_py(*args)):
        assert_close(got, expected)


def test_lowered_tensordot_refuses_lengths_that_only_agree_in_product():
    a, b = tt.dtensor3("a"), tt.dtensor3("b")
    f = tensorgraph.function([a, b], tt.tensordot(a, b, [[1, 2], [0, 1]]), mode="FAST_RUN")
    assert {t.kind for t in f.vm.thunks} == {"c"}
    np.testing.assert_allclose(f(np.ones((2, 3, 2)), np.ones((3, 2, 4))), np.full((2, 4), 6.0))
    with pytest.raises(ValueError, match="tensordot: the contracted axes"):
        f(np.ones((2, 3, 2)), np.ones((2, 3, 4)))


@pytest.mark.parametrize("linker", ["py", "c|py", "cvm"])
def test_lowered_tensordot_raises_value_error_in_c_and_in_perform(linker):
    """The lowered graph checks lengths with an Assert: its perform and its C both raise
    tensordot's ValueError (the C used to raise ValueError and perform AssertionError)."""
    a, b = tt.dtensor3("a"), tt.dtensor3("b")
    mode = tensorgraph.Mode(linker=linker, optimizer="fast_run")
    f = tensorgraph.function([a, b], tt.tensordot(a, b, [[1, 2], [0, 1]]), mode=mode)
    with pytest.raises(ValueError, match="tensordot: the contracted axes"):
        f(np.ones((2, 3, 2)), np.ones((2, 3, 4)))


def test_tensordot_with_static_lengths_needs_no_check():
    a = tt.tensor("float64", shape=(None, 3, 4))
    b = tt.tensor("float64", shape=(3, 4, None))
    f = tensorgraph.function([a, b], tt.tensordot(a, b, 2), mode="FAST_RUN")
    assert not any(isinstance(n.op, (Assert, TensorDot)) for n in f.vm.nodes)
    x, y = np.ones((2, 3, 4)), np.ones((3, 4, 5))
    np.testing.assert_allclose(f(x, y), np.tensordot(x, y, 2))


def test_dot_beyond_two_dims_becomes_a_blas_product():
    """tt.dot of a 3-d and a 2-d tensor: one Dot22 between reshaped operands."""
    a, w = tt.tensor3("a"), tt.matrix("w")
    f = tensorgraph.function([a, w], tt.dot(a, w), mode="FAST_RUN")
    assert [type(n.op).__name__ for n in f.vm.nodes].count("Dot22") == 1
    x = np.arange(24, dtype=config.floatX).reshape(2, 3, 4)
    y = np.arange(20, dtype=config.floatX).reshape(4, 5)
    np.testing.assert_allclose(f(x, y), np.dot(x, y), rtol=1e-5)
