"""A Gaussian process's negative log marginal likelihood and its gradient with respect to the
kernel's three log-parameters (length-scale, amplitude, noise), for n points in one dimension:
the step of fitting a GP (tutorial 11). The work is one Cholesky of the n x n kernel matrix,
triangular solves and the gradient's trace terms, so it measures the linear algebra (LAPACK)
and what surrounds it. float64, as GP codes use."""

import math

import numpy as np

from cases import _frameworks

NAME = "gp"
TITLE = "GP marginal likelihood + gradient n={0} f64"
TARGET = ("numpy", 1.0)
THETA = (math.log(1.5), 0.0, math.log(0.3))


def size(tiny: bool):
    return 40 if tiny else 500


def data(n):
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-3, 3, n))
    y = np.sin(2 * x) + 0.1 * rng.standard_normal(n)
    return x, y


def _step(lib, tensor, linalg, n, mode):
    """The step in tensorgraph or PyTensor: the same code, as their APIs are the same."""
    x_val, y_val = data(n)
    x, y = tensor.dvector("x"), tensor.dvector("y")
    theta = [lib.shared(np.float64(t)) for t in THETA]
    ell, amp, noise = (tensor.exp(t) for t in theta)
    d2 = (x[:, None] - x[None, :]) ** 2
    K = amp ** 2 * tensor.exp(-0.5 * d2 / ell ** 2) + noise ** 2 * tensor.eye(x.shape[0])
    L = linalg.cholesky(K)
    nll = 0.5 * y @ linalg.cho_solve((L, True), y) + tensor.log(tensor.diagonal(L)).sum()
    f = lib.function([x, y], [nll, *lib.grad(nll, theta)], mode=mode)
    return lambda: f(x_val, y_val)


def make_tensorgraph(n, mode="FAST_RUN"):
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.tensor import linalg as la

    return _step(tg, tt, la, n, mode)


def make_numpy(n):
    import scipy.linalg

    x, y = data(n)
    d2 = (x[:, None] - x[None, :]) ** 2
    eye = np.eye(n)

    def step():
        ell, amp, noise = np.exp(THETA)
        E = np.exp(-0.5 * d2 / ell ** 2)
        K = amp ** 2 * E + noise ** 2 * eye
        c = scipy.linalg.cho_factor(K, lower=True)
        alpha = scipy.linalg.cho_solve(c, y)
        nll = 0.5 * y @ alpha + np.log(np.diag(c[0])).sum()
        W = scipy.linalg.cho_solve(c, eye) - np.outer(alpha, alpha)   # K^-1 - a a^T
        # d nll / d log(p) = 0.5 tr(W dK/dlog p)
        dK = (amp ** 2 * E * d2 / ell ** 2, 2 * amp ** 2 * E, 2 * noise ** 2 * eye)
        return (nll, *(0.5 * np.sum(W * g) for g in dK))

    return step


def make_pytensor(n):
    pt, ptt, mode = _frameworks.pytensor()
    from pytensor.tensor import linalg as pla

    return _step(pt, ptt, pla, n, mode)


def make_jax(n):
    jax, jnp = _frameworks.jax()
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.linalg as jsl

    x_val, y_val = data(n)
    x, y = jnp.asarray(x_val), jnp.asarray(y_val)

    def nll(theta, x, y):
        ell, amp, noise = jnp.exp(theta)
        d2 = (x[:, None] - x[None, :]) ** 2
        K = amp ** 2 * jnp.exp(-0.5 * d2 / ell ** 2) + noise ** 2 * jnp.eye(x.shape[0])
        L = jnp.linalg.cholesky(K)
        return 0.5 * y @ jsl.cho_solve((L, True), y) + jnp.log(jnp.diag(L)).sum()

    step_fn = jax.jit(jax.value_and_grad(nll))
    theta = jnp.asarray(THETA)

    def step():
        value, grad = jax.block_until_ready(step_fn(theta, x, y))
        return (value, *grad)

    return step
