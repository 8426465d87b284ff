"""The derivatives of hyp2f1 in a, b and c (tensorgraph.scalar.special_derivatives.Hyp2F1Der):
accurate against high-precision differentiation, the terminating (polynomial) cases summed
whole, nan outside the series' domain and where it does not converge in its bound (never a
hang), the same numbers in C and numpy (NUMBA: tests/link/test_special_functions_backends.py),
and gradients that agree with finite
differences (verify_grad, float64) near the edges PyTensor's tests use."""

import time

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.scalar.special_derivatives import hyp2f1_der_scalar
from tensorgraph.tensor import math as tm

mpmath = pytest.importorskip("mpmath")

PY = tg.Mode(linker="py", optimizer="fast_run")

# inside the domain: |z| < 1 (both branches: Pfaff's transformation for z < 0), negative and
# integer parameters, a pole-free c < 0
GRID = [(a, b, c, z) for a in (-2.0, -0.5, 0.3, 2.0, 7.5) for b in (-3.0, 1.0, 4.5)
        for c in (-2.5, 0.7, 3.0, 12.0) for z in (-0.95, -0.3, 0.2, 0.8, 0.97)]


def _mp_derivative(point, wrt):
    def f(x):
        args = [mpmath.mpf(v) for v in point]
        args[wrt] = x
        return mpmath.hyp2f1(*args)
    return float(mpmath.diff(f, mpmath.mpf(point[wrt])))


def test_matches_high_precision_differentiation():
    errors = []
    with mpmath.workdps(30):
        for point in GRID:
            for wrt in range(3):
                got, want = hyp2f1_der_scalar(*point, wrt), _mp_derivative(point, wrt)
                assert np.isfinite(got), (point, wrt)
                if abs(want) > 1e-12:  # some are 0 (a polynomial's derivative, a mpmath 1e-17)
                    errors.append(abs(got - want) / abs(want))
    assert len(errors) > 500 and max(errors) < 1e-12


@pytest.mark.parametrize("point, wrt, rtol", [
    ((7.5, 4.5, 0.7, -0.95), 0, 1e-13),  # Pfaff's in b (spread 200; in a: 3e17)
    ((28.3, 28.476, 10.92, -0.4284), 2, 1e-11),  # the series (spread 3e5; the others 1e9-2e17)
    ((27.393, 38.79, 0.381, -0.9905), 1, 1e-7),  # the series (the others spread 1e16 to 1e18)
])
def test_the_form_that_cancels_least_is_summed(point, wrt, rtol):
    # large a, b and z < 0: the terms of some forms are 1e17 times their sum
    with mpmath.workdps(50):
        want = _mp_derivative(point, wrt)
    assert hyp2f1_der_scalar(*point, wrt) == pytest.approx(want, rel=rtol)


# Stan's cases (grad_2F1_test.cpp, hypergeometric_2F1_test.cpp), PyTensor's TestHyp2F1Grad
STAN = [
    ((3.70975, 1.0, 2.70975, -0.2), (-0.0488658806159776, -0.193844936204681, 0.0677809985598383)),
    ((1.0, 1.0, 1.0, 0.6), (2.290726829685388, 2.290726829685388, -2.290726829685388)),
    ((1.0, 31.0, 41.0, 1.0), (6.825270649241036, 0.4938271604938271, -0.382716049382716)),
    ((1.0, -2.1, 41.0, 1.0), (-0.04921317604093563, 0.02256814168279349, 0.00118482743834665)),
    ((1.0, -0.5, 10.6, 0.3), (-0.01443822031245647, 0.02829710651967078, 0.00136986255602642)),
    ((-0.5, -4.5, 11.0, 0.3), (-0.1227022810085707, -0.01298849638043795, -0.0053540982315572)),
    ((-0.5, -4.5, -3.2, 0.9), (0.85880025358111, 0.4677704416159314, -4.19010422485256)),
    # z near 1: ~1e5 terms (mpmath's 29369829.9919118316 in a; Stan's value is 4e-10 off)
    ((3.70975, 1.0, 2.70975, 0.999696), (29369829.991911832, 36347869.41885337,
                                         -30843032.119093727)),
]


@pytest.mark.parametrize("mode", ["FAST_RUN", "PY"])
def test_stan_cases_through_the_gradient(mode):
    a, b, c, z = tt.dvectors("a", "b", "c", "z")
    grads = tg.grad(tt.hyp2f1(a, b, c, z).sum(), [a, b, c])
    f = tg.function([a, b, c, z], grads, mode=PY if mode == "PY" else mode)
    points, expected = zip(*STAN)
    got = np.array(f(*map(np.array, zip(*points)))).T
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-12 if mode == "PY" else 1e-11)


def test_polynomial_cases_sum_the_whole_derivative():
    with mpmath.workdps(30):
        # a = -3 ends 2F1's terms but not those of d/da: the tail is summed (|z| < 1)
        assert hyp2f1_der_scalar(-3.0, 1.5, 2.0, 0.6, 0) == pytest.approx(
            _mp_derivative((-3.0, 1.5, 2.0, 0.6), 0), rel=1e-12)
        # d/db and d/dc of a polynomial in z are polynomials: any z, here |z| > 1
        for wrt in (1, 2):
            assert hyp2f1_der_scalar(-3.0, 1.5, 2.0, 4.5, wrt) == pytest.approx(
                _mp_derivative((-3.0, 1.5, 2.0, 4.5), wrt), rel=1e-12)
        # a pole c = -4 beyond the end of the series (a = -2): d/db is still a polynomial
        assert hyp2f1_der_scalar(-2.0, 1.5, -4.0, 0.5, 1) == pytest.approx(
            _mp_derivative((-2.0, 1.5, -4.0, 0.5), 1), rel=1e-12)
    # d/da's tail diverges for |z| > 1, and meets the pole c = -4
    assert np.isnan(hyp2f1_der_scalar(-3.0, 1.5, 2.0, 4.5, 0))
    assert np.isnan(hyp2f1_der_scalar(-2.0, 1.5, -4.0, 0.5, 0))


@pytest.mark.parametrize("point", [(1.0, 12.0, 10.0, 1.0), (1.0, 12.0, 20.0, 1.2),
                                   (1.0, 1.0, 2.0, -5.0), (1.0, 2.0, 2.5, -1.0),
                                   (1.5, 2.0, -3.0, 0.5), (np.inf, 1.0, 2.0, 0.5),
                                   (1.0, 1.0, 2.0, np.nan)])
def test_outside_the_series_domain_is_nan(point):
    # |z| > 1, |z| = 1 with c <= a + b (PyTensor's domain: no transformation to |z| < 1),
    # a pole c = -3 the series reaches, non-finite inputs
    assert all(np.isnan(hyp2f1_der_scalar(*point, wrt)) for wrt in range(3))


def test_at_z_zero_the_derivatives_are_zero():
    assert [hyp2f1_der_scalar(3.7, 1.0, 2.7, 0.0, wrt) for wrt in range(3)] == [0.0] * 3


def test_a_series_that_does_not_converge_in_its_bound_is_nan_at_once():
    a, b, c, z = tt.dvectors("a", "b", "c", "z")
    f = tg.function([a, b, c, z], tm.hyp2f1_der(a, b, c, z, wrt=0))
    started = time.perf_counter()
    out = f(np.array([2.0, 2.0]), np.array([1.0, 1.0]), np.array([1.5, 1.5]),
            np.array([1 - 1e-9, 0.5]))  # z = 1 - 1e-9 needs ~4e10 terms
    assert np.isnan(out[0]) and np.isfinite(out[1])
    assert time.perf_counter() - started < 5


def test_c_computes_the_references_numbers():
    from tensorgraph.link.c.codegen import node_c_code

    a, b, c, z = tt.dvectors("a", "b", "c", "z")
    outs = [tm.hyp2f1_der(a, b, c, z, wrt=w) for w in range(3)]
    f = tg.function([a, b, c, z], outs)
    sub = {"ctx": "ctx", "fail": "", "define": lambda _text: None}
    for node in f.maker.fgraph.toposort():
        assert node_c_code(node, "n", [f"i{j}" for j in range(len(node.inputs))],
                           [f"o{j}" for j in range(len(node.outputs))], sub), node
    values = [np.array(v) for v in zip(*GRID)]
    values[3] = np.where(values[0] > 5, -1.0, values[3])  # z = -1 too: some nan
    want = tg.function([a, b, c, z], outs, mode=PY)(*values)
    for got, expected in zip(f(*values), want):
        # the same operations (C may fuse a multiply and an add)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
    assert np.isnan(want[0]).any() and np.isfinite(want[0]).any()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["JAX", "NUMBA"])
def test_jax_and_numba_give_the_references_numbers_at_the_edges(mode):
    from tensorgraph.link.backend import available

    if not available(mode.lower()):
        pytest.skip(f"{mode.lower()} is not installed")
    edges = [(1.0, 12.0, 10.0, 1.0), (1.0, 1.0, 2.0, -5.0), (1.0, 2.0, 2.5, -1.0),
             (1.0, 2.0, 4.5, -1.0), (1.5, 2.0, -3.0, 0.5), (-3.0, 1.5, 2.0, 4.5),
             (-2.0, 1.5, -4.0, 0.5), (np.inf, 1.0, 2.0, 0.5), (2.0, 1.0, 2.0, 0.0)]
    points = [p for p in GRID if p[3] < 0.9] + edges
    values = [np.array(v) for v in zip(*points)]
    a, b, c, z = tt.dvectors("a", "b", "c", "z")
    outs = [tm.hyp2f1_der(a, b, c, z, wrt=w) for w in range(3)]
    want = tg.function([a, b, c, z], outs, mode=PY)(*values)
    for got, expected in zip(tg.function([a, b, c, z], outs, mode=mode)(*values), want):
        # XLA's pow and log1p may differ in the last bit: derivatives that are 0 (those of
        # polynomials) come out as 1e-16 of the terms
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


# verify_grad, float64: PyTensor's broadcast tester draws a, b, c in (0, 20), z in (-0.9, 0.9);
# here also z near -1 and 1, negative and integer parameters, c < 0
EDGES = {
    "pytensor_range": ([17.3, 0.4, 6.0], [2.5, 19.0, 11.1], [15.6, 13.2, 19.5], [0.85, -0.9, 0.1]),
    "small_c": ([17.3], [2.5], [0.6], [0.85]),  # 2F1 ~ 1e15: alone (it would swamp the others)
    "z_near_one": ([3.70975, 1.0], [1.0, 2.5], [2.70975, 5.0], [0.99, 0.97]),
    "z_near_minus_one": ([7.5, 1.0], [4.5, 0.5], [0.7, 3.0], [-0.99, -0.999]),
    "negative_parameters": ([-0.5, -2.0, 1.5], [-4.5, 1.5, -0.5], [-3.2, 2.5, 10.6],
                            [0.9, 0.6, 0.3]),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_gradients_agree_with_finite_differences(name):
    point = [np.array(v) for v in EDGES[name]]
    verify_grad(tt.hyp2f1, point, rng=np.random.default_rng(0), mode=PY)


def test_gradients_agree_with_finite_differences_in_c():
    verify_grad(tt.hyp2f1, [np.array(v) for v in EDGES["pytensor_range"]],
                rng=np.random.default_rng(1))


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_the_derivatives_own_derivative_in_z(wrt):
    a, b, c = np.array([2.0, -0.5]), np.array([1.5, 3.0]), np.array([3.5, 4.0])
    verify_grad(lambda z: tm.hyp2f1_der(a, b, c, z, wrt=wrt), [np.array([0.4, -0.6])],
                rng=np.random.default_rng(0), mode=PY)


def test_float32_graphs_stay_float32():
    a, b, c, z = tt.fvectors("a", "b", "c", "z")
    grads = tg.grad(tt.hyp2f1(a, b, c, z).sum(), [a, b, c])
    assert all(g.dtype == "float32" for g in grads)
    out = tg.function([a, b, c, z], grads)(*[np.float32([v]) for v in (2.0, 1.0, 2.0, 0.4)])
    np.testing.assert_allclose(np.concatenate(out), [0.4617734323582945, 0.851376039609984,
                                                     -0.4617734323582945], rtol=1e-6)


def test_wrt_is_checked():
    with pytest.raises(ValueError, match="wrt 0, 1 or 2"):
        tm.hyp2f1_der(1.0, 1.0, 2.0, 0.5, wrt=3)
