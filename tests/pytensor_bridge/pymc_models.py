"""Small PyMC models of the kinds the bridge must match PyTensor on (issue 34): regressions,
eight schools (centred and non-centred), an MvNormal with LKJCholeskyCov, discrete
likelihoods, a random walk with an AR term. Shared by the bridge's tests; imports PyMC, so a
test module imports it after ``pytest.importorskip("pymc")``."""

import numpy as np
import pymc as pm
import pytensor.tensor as pt

def linreg():
    rng = np.random.default_rng(0); X = rng.normal(size=(50, 3)); y = X @ [1., -2., .5] + rng.normal(size=50)
    with pm.Model() as m:
        b = pm.Normal("b", 0, 1, shape=3); a = pm.Normal("a", 0, 1); s = pm.HalfNormal("sigma", 1)
        pm.Normal("y", a + pt.dot(X, b), s, observed=y)
    return m

def logreg():
    rng = np.random.default_rng(1); X = rng.normal(size=(60, 2)); y = (rng.random(60) < 0.5).astype(int)
    with pm.Model() as m:
        b = pm.Normal("b", 0, 2, shape=2); a = pm.Normal("a", 0, 2)
        pm.Bernoulli("y", logit_p=a + pt.dot(X, b), observed=y)
    return m

Y8 = np.array([28., 8, -3, 7, -1, 1, 18, 12]); S8 = np.array([15., 10, 16, 11, 9, 11, 10, 18])
def eight_centered():
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 5); tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, shape=8); pm.Normal("obs", theta, S8, observed=Y8)
    return m

def eight_noncentered():
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 5); tau = pm.HalfCauchy("tau", 5)
        z = pm.Normal("z", 0, 1, shape=8); pm.Normal("obs", mu + tau * z, S8, observed=Y8)
    return m

def mvnormal_lkj():
    rng = np.random.default_rng(2); data = rng.multivariate_normal([0, 1, 2], np.eye(3) + .3, size=40)
    with pm.Model() as m:
        chol, corr, sds = pm.LKJCholeskyCov("chol", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0, shape=3))
        mu = pm.Normal("mu", 0, 2, shape=3)
        pm.MvNormal("obs", mu, chol=chol, observed=data)
    return m

def discrete():
    rng = np.random.default_rng(3)
    with pm.Model() as m:
        lam = pm.Gamma("lam", 2, 1); p = pm.Beta("p", 2, 2); nu = pm.Exponential("nu", 0.1)
        pm.Poisson("k", lam, observed=rng.poisson(3, size=20))
        pm.Binomial("n", 10, p, observed=rng.binomial(10, .3, size=20))
        pm.StudentT("t", nu=nu + 1, mu=0, sigma=1, observed=rng.standard_t(5, size=20))
    return m

def grw_ar():
    rng = np.random.default_rng(4); y = np.cumsum(rng.normal(size=30))
    with pm.Model() as m:
        s = pm.HalfNormal("s", 1)
        x = pm.GaussianRandomWalk("x", sigma=s, init_dist=pm.Normal.dist(0, 1), steps=29)
        rho = pm.Normal("rho", 0, 0.5, shape=2)
        pm.AR("ar", rho, sigma=1.0, constant=True, init_dist=pm.Normal.dist(0, 1), observed=y)
        pm.Normal("y", x, 1.0, observed=y)
    return m

MODELS = dict(linreg=linreg, logreg=logreg, eight_centered=eight_centered,
              eight_noncentered=eight_noncentered, mvnormal_lkj=mvnormal_lkj, discrete=discrete, grw_ar=grw_ar)
