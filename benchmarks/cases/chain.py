"""A fusable elementwise chain: ``tanh(x*y + exp(-x))*0.5 + log1p(y*y)`` on 1e6 float32."""

import numpy as np

from cases import _frameworks

NAME = "chain"
TITLE = "elementwise chain, {0:.0e} f32"
TARGET = ("numpy", 0.4)


def size(tiny: bool):
    return 10_000 if tiny else 1_000_000


def data(size):
    rng = np.random.default_rng(2)
    return (rng.standard_normal(size).astype("float32"),
            rng.standard_normal(size).astype("float32"))


def make_tensorgraph(size, mode="FAST_RUN"):
    import tensorgraph as tg
    import tensorgraph.tensor as tt

    x_val, y_val = data(size)
    x, y = tt.vector("x", dtype="float32"), tt.vector("y", dtype="float32")
    out = tt.tanh(x * y + tt.exp(-x)) * np.float32(0.5) + tt.log1p(y * y)
    f = tg.function([x, y], out, mode=mode)
    return lambda: f(x_val, y_val)


def make_numpy(size):
    x, y = data(size)
    half = np.float32(0.5)
    return lambda: np.tanh(x * y + np.exp(-x)) * half + np.log1p(y * y)


def make_pytensor(size):
    pt, ptt, mode = _frameworks.pytensor()
    x_val, y_val = data(size)
    x, y = ptt.vector("x", dtype="float32"), ptt.vector("y", dtype="float32")
    out = ptt.tanh(x * y + ptt.exp(-x)) * np.float32(0.5) + ptt.log1p(y * y)
    f = pt.function([x, y], out, mode=mode)
    return lambda: f(x_val, y_val)


def make_jax(size):
    jax, jnp = _frameworks.jax()
    x_val, y_val = data(size)
    x, y = jnp.asarray(x_val), jnp.asarray(y_val)
    f = jax.jit(lambda x, y: jnp.tanh(x * y + jnp.exp(-x)) * np.float32(0.5) + jnp.log1p(y * y))
    return lambda: jax.block_until_ready(f(x, y))
