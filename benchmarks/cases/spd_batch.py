"""A batch of 64 symmetric positive definite 64x64 matrices: ``cholesky`` of each and
``solve`` of each with its own right-hand sides (issue 33's speed case): the per-matrix
LAPACK calls of a Blockwise node, the batch split across the pool in FAST_RUN. numpy loops
over the batch in C too (its gufuncs), so its time is the target. float64."""

import numpy as np

from cases import _frameworks

NAME = "spd_batch"
TITLE = "{0} SPD {1}x{1}: solve + cholesky f64"
TARGET = ("numpy", 1.0)


def size(tiny: bool):
    return (8, 16) if tiny else (64, 64)


def data(size):
    batch, n = size
    rng = np.random.default_rng(5)
    g = rng.standard_normal((batch, n, n))
    return g @ g.transpose(0, 2, 1) + n * np.eye(n), rng.standard_normal((batch, n, 4))


def make_tensorgraph(size, mode="FAST_RUN"):
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.tensor import linalg as la

    a_val, b_val = data(size)
    A, b = tt.tensor3("A"), tt.tensor3("b")
    f = tg.function([A, b], [la.solve(A, b), la.cholesky(A)], mode=mode)
    return lambda: f(a_val, b_val)


def make_numpy(size):
    a, b = data(size)
    return lambda: (np.linalg.solve(a, b), np.linalg.cholesky(a))


def make_pytensor(size):
    pt, ptt, mode = _frameworks.pytensor()
    from pytensor.tensor import linalg as pla

    a_val, b_val = data(size)
    A, b = ptt.tensor3("A"), ptt.tensor3("b")
    f = pt.function([A, b], [pla.solve(A, b), pla.cholesky(A)], mode=mode)
    return lambda: f(a_val, b_val)


def make_jax(size):
    jax, jnp = _frameworks.jax()
    jax.config.update("jax_enable_x64", True)

    a_val, b_val = data(size)
    a, b = jnp.asarray(a_val), jnp.asarray(b_val)
    step_fn = jax.jit(lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.cholesky(a)))
    return lambda: jax.block_until_ready(step_fn(a, b))
