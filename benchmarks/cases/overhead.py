"""Call overhead: ``f(x) = x + 1`` on 10 float64 values, every input checked."""

import functools

import numpy as np

from cases import _frameworks

NAME = "overhead"
TITLE = "call overhead f(x)=x+1, {0} floats"
TARGET = ("pytensor", 0.5)


def size(tiny: bool):
    return 10


def tensorgraph_fn(size, trust: bool, mode="FAST_RUN"):
    import tensorgraph as tg
    import tensorgraph.tensor as tt

    x = tt.dvector("x")
    f = tg.function([x], x + 1, mode=mode)
    f.trust_input = trust
    value = np.arange(size, dtype="float64")
    return lambda: f(value)


def pytensor_fn(size, trust: bool):
    pt, ptt, mode = _frameworks.pytensor()
    x = ptt.dvector("x")
    f = pt.function([x], x + 1, mode=mode)
    f.trust_input = trust
    value = np.arange(size, dtype="float64")
    return lambda: f(value)


def make_numpy(size):
    value = np.arange(size, dtype="float64")
    return lambda: value + 1


def make_jax(size):
    """``jax.jit(lambda x: x + 1)`` on float64 (inside ``jax.enable_x64``, as tensorgraph's JAX
    mode runs), called with a JAX array made once: JAX's dispatch without a transfer. It
    checks its inputs as every call does (shapes and dtypes against its cache)."""
    jax, jnp = _frameworks.jax()
    with jax.enable_x64(True):
        value = jnp.arange(size, dtype="float64")
        f = jax.jit(lambda x: x + 1)
        f(value)

    def call():
        with jax.enable_x64(True):
            return jax.block_until_ready(f(value))

    return call


make_tensorgraph = functools.partial(tensorgraph_fn, trust=False)
make_pytensor = functools.partial(pytensor_fn, trust=False)
