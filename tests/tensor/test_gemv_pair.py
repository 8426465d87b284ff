"""``Gemv(pair=f)`` (X @ w, f of it, X.T @ that, in one pass) and the rewrite that builds it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as pm
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.blas import Gemv

from op_checks import C, PY, layout


def make_pair(dtype, broadcast_e0):
    z, e0, e1 = (ps.ScalarType(dtype)() for _ in range(3))
    out = ps.mul(pm.sigmoid(ps.add(z, e0)), e1)
    op = Gemv(pair=Composite([z, e0, e1], [out]))
    vec = lambda name: tt.tensor(dtype, shape=(None,), name=name)  # noqa: E731
    scal = lambda name: tt.tensor(dtype, shape=(), name=name)  # noqa: E731
    X = tt.tensor(dtype, shape=(None, None), name="X")
    y1, w, y2, e1v = vec("y1"), vec("w"), vec("y2"), vec("e1")
    e0v = tt.tensor(dtype, shape=(1,), name="e0") if broadcast_e0 else vec("e0")
    a1, b1, a2, b2 = scal("a1"), scal("b1"), scal("a2"), scal("b2")
    inputs = [y1, a1, X, w, b1, y2, a2, b2, e0v, e1v]
    outputs = op(*inputs)
    return inputs, outputs


_functions = {}


def functions(dtype, broadcast_e0):
    key = (dtype, broadcast_e0, config.openmp)
    if key not in _functions:
        inputs, outputs = make_pair(dtype, broadcast_e0)
        f_c = tensorgraph.function(inputs, outputs, mode=C)
        assert {t.kind for t in f_c.vm.thunks} == {"c"}
        _functions[key] = (f_c, tensorgraph.function(inputs, outputs, mode=PY))
    return _functions[key]


def run(dtype, n, m, seed, how, alpha1, beta1, alpha2, beta2, broadcast_e0):
    rng = np.random.default_rng(seed)

    def arr(*shape):
        return rng.normal(size=shape).astype(dtype)

    scalars = [np.asarray(v, dtype) for v in (alpha1, beta1, alpha2, beta2)]
    values = [layout(arr(n), how[0]), scalars[0], layout(arr(n, m), how[1]),
              layout(arr(m), how[2]), scalars[1], layout(arr(m), how[3]), scalars[2],
              scalars[3], arr(1) if broadcast_e0 else layout(arr(n), how[4]),
              layout(arr(n), how[5])]
    f_c, f_py = functions(dtype, broadcast_e0)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for got, expected in zip(f_c(*values), f_py(*values)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 21), m=st.integers(0, 13), seed=st.integers(0, 2**31),
       how=st.lists(st.sampled_from(["c", "f", "step", "reversed"]), min_size=6, max_size=6),
       alphas=st.tuples(st.sampled_from([1.0, -0.5, 0.0]), st.sampled_from([0.0, 1.0, 0.25]),
                        st.sampled_from([1.0, 2.0, 0.0]), st.sampled_from([0.0, 1.0, -1.0])),
       broadcast_e0=st.booleans())
def test_c_matches_perform(dtype, n, m, seed, how, alphas, broadcast_e0):
    run(dtype, n, m, seed, how, *alphas, broadcast_e0)


@pytest.mark.parametrize("openmp", [False, True])
def test_large_sizes_and_thread_blocks_match_perform(openmp):
    with config.change_flags(openmp=openmp):
        run("float32", 1003, 301, 1, ["c"] * 6, 1.0, 0.0, 1.0, 1.0, True)
        run("float64", 997, 250, 2, ["step", "f", "reversed", "c", "c", "step"], 0.5, 1.0,
            -2.0, 0.0, False)


def test_shape_errors_name_the_shapes():
    f_c, f_py = functions("float64", False)
    values = [np.zeros(3), np.asarray(1.0), np.zeros((3, 4)), np.zeros(5), np.asarray(0.0),
              np.zeros(4), np.asarray(1.0), np.asarray(0.0), np.zeros(3), np.zeros(3)]
    for f in (f_c, f_py):
        with pytest.raises(ValueError, match=r"^dot: inner dimensions differ: X has shape "
                                             r"\(3, 4\) and w has shape \(5,\) \(4 != 5\)\n"
                                             r"  in node Gemv.pair"):
            f(*values)
    values[3], values[9] = np.zeros(4), np.zeros(2)
    for f in (f_c, f_py):
        with pytest.raises(ValueError, match=r"^e1 has 2 elements but X has 3 rows\n"
                                             r"  in node Gemv.pair"):
            f(*values)


def logistic_regression(floatX="float32"):
    with config.change_flags(floatX=floatX):
        x, y = tt.matrix("x"), tt.vector("y")
        rng = np.random.default_rng(0)
        w = tensorgraph.shared((rng.normal(size=30) * 0.1).astype(floatX), name="w")
        b = tensorgraph.shared(np.asarray(0.0, dtype=floatX), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tensorgraph.grad(cost, [w, b])
        return [x, y], [p_1 > 0.5, xent], [(w, w - 0.1 * gw), (b, b - 0.1 * gb)], w


def ops_of(f):
    """"Gemv", "Gemv pair", or another op's class name, per node."""
    return [("Gemv pair" if node.op.pair is not None else "Gemv") if isinstance(node.op, Gemv)
            else type(node.op).__name__ for node in f.maker.fgraph.toposort()]


@pytest.mark.parametrize("floatX", ["float32", "float64"])
def test_logistic_regression_step_becomes_one_pass(floatX):
    rng = np.random.default_rng(1)
    xv = rng.normal(size=(45, 30)).astype(floatX)
    yv = (rng.random(45) > 0.5).astype(floatX)
    results = {}
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        inputs, outputs, updates, w = logistic_regression(floatX)
        f = tensorgraph.function(inputs, outputs, updates=updates, mode=mode)
        if mode == "FAST_RUN":
            assert ops_of(f).count("Gemv pair") == 1 and "Gemv" not in ops_of(f)
            # what Theano's example checks to tell that BLAS is used
            assert "Gemv" in [n.op.__class__.__name__ for n in f.maker.fgraph.toposort()]
            steps = [s.name for s in f.maker.fgraph.rewrite_history.steps]
            assert "local_gemv_pair" in steps
        runs = [f(xv, yv) for _ in range(5)]
        results[mode] = (runs, w.get_value())
    tol = 2e-5 if floatX == "float32" else 1e-12
    for got, expected in zip(results["FAST_RUN"][0], results["FAST_COMPILE"][0]):
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1], rtol=tol, atol=tol)
    np.testing.assert_allclose(results["FAST_RUN"][1], results["FAST_COMPILE"][1], rtol=tol,
                               atol=tol)


def test_excluding_fusion_keeps_two_gemv():
    inputs, outputs, updates, _ = logistic_regression()
    f = tensorgraph.function(inputs, outputs, updates=updates,
                             mode=tensorgraph.compile.mode.get_mode("FAST_RUN").excluding(
                                 "fusion"))
    assert "Gemv pair" not in ops_of(f) and ops_of(f).count("Gemv") == 2


def test_a_reduction_of_z_on_the_way_is_left_alone():
    X, w = tt.matrix("X", dtype="float64"), tt.vector("w", dtype="float64")
    z = tt.dot(X, w)
    d = tt.exp(z - z.max())          # needs all of z before any d
    f = tensorgraph.function([X, w], tt.dot(X.T, d), mode="FAST_RUN")
    assert "Gemv pair" not in ops_of(f)
    rng = np.random.default_rng(2)
    Xv, wv = rng.normal(size=(20, 7)), rng.normal(size=7)
    zv = Xv @ wv
    np.testing.assert_allclose(f(Xv, wv), Xv.T @ np.exp(zv - zv.max()), rtol=1e-12)


def test_products_over_different_matrices_are_left_alone():
    X, Y = tt.matrix("X", dtype="float64"), tt.matrix("Y", dtype="float64")
    w = tt.vector("w", dtype="float64")
    f = tensorgraph.function([X, Y, w], tt.dot(Y.T, tt.tanh(tt.dot(X, w))), mode="FAST_RUN")
    assert "Gemv pair" not in ops_of(f)


def test_one_library_unit_holds_the_pair_and_other_products():
    """The pair's support code holds the BLAS helpers that every other product's holds too; a
    unit with both (a big graph's library puts several support bundles in each of its two
    units) defines them once. Before: 'conflicting types for tg_mat', and such a graph (the
    logistic-regression step beside softmaxes, reductions and a Dot22) did not compile."""
    from tensorgraph.link.c.cmodule import get_library
    from tensorgraph.link.c.codegen import CGraph, translation_unit
    from tensorgraph.link.c.ops.blas import blas_setup

    inputs, outputs, updates, _ = logistic_regression()
    M = tt.matrix("M")
    mode = tensorgraph.Mode(linker="py", optimizer="fast_run")
    f = tensorgraph.function(inputs + [M], outputs + [tt.dot(M, M)], updates=updates,
                             mode=mode)
    assert {"Gemv pair", "Dot22"} <= set(ops_of(f))
    functions = CGraph(f.maker.fgraph, whole_graph=False).functions
    setup = blas_setup()
    library = get_library([translation_unit(functions)], name_hint="pair_and_dot22",
                          libraries=setup["libraries"], library_dirs=setup["library_dirs"])
    for fn in functions:
        assert getattr(library, fn.symbol) is not None
