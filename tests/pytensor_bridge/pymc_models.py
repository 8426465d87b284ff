"""Small PyMC models of the kinds the bridge must match PyTensor on (issue 34): regressions,
hierarchical models (eight schools centred and non-centred, a radon-style varying intercept),
an MvNormal with LKJCholeskyCov, a marginal Gaussian process, discrete likelihoods, a random
walk with an AR term, a model with ``scan``. Shared by the bridge's tests; imports PyMC, so a
test module imports it after ``pytest.importorskip("pymc")``."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt

Y8 = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
S8 = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])


def linreg():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3))
    y = x @ [1.0, -2.0, 0.5] + rng.normal(size=50)
    with pm.Model() as m:
        b = pm.Normal("b", 0, 1, shape=3)
        a = pm.Normal("a", 0, 1)
        s = pm.HalfNormal("sigma", 1)
        pm.Normal("y", a + pt.dot(x, b), s, observed=y)
    return m


def logreg():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 2))
    y = (rng.random(60) < 0.5).astype(int)
    with pm.Model() as m:
        b = pm.Normal("b", 0, 2, shape=2)
        a = pm.Normal("a", 0, 2)
        pm.Bernoulli("y", logit_p=a + pt.dot(x, b), observed=y)
    return m


def eight_centered():
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, shape=8)
        pm.Normal("obs", theta, S8, observed=Y8)
    return m


def eight_noncentered():
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        z = pm.Normal("z", 0, 1, shape=8)
        pm.Normal("obs", mu + tau * z, S8, observed=Y8)
    return m


def radon():
    rng = np.random.default_rng(5)
    county = rng.integers(0, 6, size=80)
    floor = rng.integers(0, 2, size=80)
    y = rng.normal(size=6)[county] - 0.6 * floor + rng.normal(scale=0.5, size=80)
    with pm.Model() as m:
        mu_a = pm.Normal("mu_a", 0, 10)
        sigma_a = pm.HalfNormal("sigma_a", 1)
        a = pm.Normal("a", mu_a, sigma_a, shape=6)
        b = pm.Normal("b", 0, 1)
        eps = pm.Exponential("eps", 1)
        pm.Normal("y", a[county] + b * floor, eps, observed=y)
    return m


def mvnormal_lkj():
    rng = np.random.default_rng(2)
    data = rng.multivariate_normal([0, 1, 2], np.eye(3) + 0.3, size=40)
    with pm.Model() as m:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=3, eta=2.0,
                                       sd_dist=pm.Exponential.dist(1.0, shape=3))
        mu = pm.Normal("mu", 0, 2, shape=3)
        pm.MvNormal("obs", mu, chol=chol, observed=data)
    return m


def marginal_gp():
    rng = np.random.default_rng(6)
    x = np.linspace(0, 5, 20)[:, None]
    y = np.sin(x[:, 0]) + rng.normal(scale=0.2, size=20)
    with pm.Model() as m:
        ell = pm.Gamma("ell", 2, 1)
        eta = pm.HalfNormal("eta", 1)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.ExpQuad(1, ell))
        gp.marginal_likelihood("y", X=x, y=y, sigma=pm.HalfNormal("noise", 1))
    return m


def discrete():
    rng = np.random.default_rng(3)
    with pm.Model() as m:
        lam = pm.Gamma("lam", 2, 1)
        p = pm.Beta("p", 2, 2)
        nu = pm.Exponential("nu", 0.1)
        pm.Poisson("k", lam, observed=rng.poisson(3, size=20))
        pm.Binomial("n", 10, p, observed=rng.binomial(10, 0.3, size=20))
        pm.StudentT("t", nu=nu + 1, mu=0, sigma=1, observed=rng.standard_t(5, size=20))
    return m


def grw_ar():
    rng = np.random.default_rng(4)
    y = np.cumsum(rng.normal(size=30))
    with pm.Model() as m:
        s = pm.HalfNormal("s", 1)
        x = pm.GaussianRandomWalk("x", sigma=s, init_dist=pm.Normal.dist(0, 1), steps=29)
        rho = pm.Normal("rho", 0, 0.5, shape=2)
        pm.AR("ar", rho, sigma=1.0, constant=True, init_dist=pm.Normal.dist(0, 1), observed=y)
        pm.Normal("y", x, 1.0, observed=y)
    return m


def with_scan():
    """An exponentially smoothed level computed by ``scan`` inside the likelihood's mean."""
    y = np.array([1.0, 1.4, 0.9, 1.8, 2.2, 2.0, 2.9, 3.1])
    with pm.Model() as m:
        alpha = pm.Beta("alpha", 2, 2)
        sigma = pm.HalfNormal("sigma", 1)
        level, _ = pytensor.scan(lambda obs, prev, a: a * obs + (1 - a) * prev,
                                 sequences=[pt.as_tensor(y[:-1])], outputs_info=[pt.as_tensor(y[0])],
                                 non_sequences=[alpha])
        pm.Normal("y", level, sigma, observed=y[1:])
    return m


MODELS = {f.__name__: f for f in (linreg, logreg, eight_centered, eight_noncentered, radon,
                                  mvnormal_lkj, marginal_gp, discrete, grw_ar, with_scan)}
