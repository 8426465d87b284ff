"""The derivatives of gammainc and betainc in their shape parameters
(tensorgraph.scalar.special_derivatives): accurate against high-precision differentiation,
bounded (nan, never a hang, where the series does not converge), and the reference's numbers
in C."""

import time

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.scalar.special_derivatives import betainc_da_scalar, gammainc_dk_scalar
from tensorgraph.tensor import math as tm

mpmath = pytest.importorskip("mpmath")

GAMMA_POINTS = [(k, x) for k in (0.01, 0.3, 1.0, 2.5, 7.0, 30.0, 200.0)
                for x in (1e-6, 0.05, 0.9, 2.0, 6.5, 15.0, 45.0, 230.0)]
BETA_POINTS = [(a, b, x) for a in (0.05, 0.5, 1.0, 3.0, 20.0) for b in (0.05, 0.7, 2.0, 9.0, 60.0)
               for x in (1e-5, 0.1, 0.5, 0.8, 0.999)]


def _relative_errors(function, points, reference):
    errors = []
    for point in points:
        want = float(reference(*point))
        if abs(want) > 1e-280:  # below that the reference itself is not meaningful
            errors.append(abs(function(*point) - want) / abs(want))
    return np.array(errors)


def test_gammainc_dk_matches_high_precision_differentiation():
    with mpmath.workdps(60):
        errors = _relative_errors(gammainc_dk_scalar, GAMMA_POINTS, lambda k, x: mpmath.diff(
            lambda kk: mpmath.gammainc(kk, 0, x, regularized=True), k))
    assert errors.max() < 1e-10


def test_betainc_da_matches_high_precision_differentiation():
    with mpmath.workdps(90):
        errors = _relative_errors(betainc_da_scalar, BETA_POINTS, lambda a, b, x: mpmath.diff(
            lambda aa: mpmath.betainc(aa, b, 0, x, regularized=True), a))
    assert errors.max() < 1e-10


def test_outside_the_domain_is_nan_and_the_edges_are_zero():
    assert np.isnan(gammainc_dk_scalar(-1.0, 2.0)) and np.isnan(gammainc_dk_scalar(1.0, -2.0))
    assert gammainc_dk_scalar(2.0, 0.0) == 0.0 and gammainc_dk_scalar(2.0, np.inf) == 0.0
    assert np.isnan(betainc_da_scalar(1.0, 2.0, 1.5)) and np.isnan(betainc_da_scalar(0, 2, .5))
    assert betainc_da_scalar(1.0, 2.0, 0.0) == 0.0 and betainc_da_scalar(1.0, 2.0, 1.0) == 0.0


def test_a_series_that_does_not_converge_in_its_bound_is_nan_at_once():
    # near k = x ~ 1e9 the series needs ~1e5 terms, more than MAX_TERMS
    started = time.perf_counter()
    k, x = tt.dvector("k"), tt.dvector("x")
    f = tg.function([k, x], tm.gammainc_dk(k, x))
    out = f(np.array([1e9, 2.0]), np.array([1e9 - 10.0, 1.0]))
    assert np.isnan(out[0]) and np.isfinite(out[1])
    assert time.perf_counter() - started < 60


def test_fast_run_computes_the_references_numbers_in_c():
    from tensorgraph.link.c.codegen import node_c_code

    k, b, x = tt.dvector("k"), tt.dvector("b"), tt.dvector("x")
    outs = [tm.gammainc_dk(k, x), tm.betainc_da(k, b, x / 100)]
    f = tg.function([k, b, x], outs)
    sub = {"ctx": "ctx", "fail": "", "define": lambda _text: None}
    for node in f.maker.fgraph.toposort():
        assert node_c_code(node, "n", [f"i{j}" for j in range(len(node.inputs))],
                           [f"o{j}" for j in range(len(node.outputs))], sub), node
    py = tg.function([k, b, x], outs, mode=tg.Mode(linker="py", optimizer="fast_run"))
    values = (np.array([0.01, 0.5, 1.0, 3.0, 30.0, 200.0]),
              np.array([0.3, 2.0, 1.0, 9.0, 50.0, 2.0]),
              np.array([0.5, 2.0, 2.0, 9.0, 25.0, 99.0]))
    for got, want in zip(f(*values), py(*values)):
        # the same operations; C's lgamma and CPython's math.lgamma differ in the last bits
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_float32_graphs_stay_float32():
    k, x = tt.fvector("k"), tt.fvector("x")
    g = tg.grad(tt.gammainc(k, x).sum(), k)
    assert g.dtype == "float32"
    out = tg.function([k, x], g)(np.float32([2.0]), np.float32([1.5]))
    np.testing.assert_allclose(out, [gammainc_dk_scalar(2.0, 1.5)], rtol=1e-6)
