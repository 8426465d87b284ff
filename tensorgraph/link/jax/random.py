"""JAX for the random draws (``RandomVariable`` and its subclasses).

Inside the compiled function a generator is a JAX key: a draw splits it, draws with one half
and passes the other on as its advanced state (the node's first output), so draws chained on
one generator get new numbers and two draws reading the same state get the same ones, as with
numpy generators. The keys come from the numpy generators of the inputs (see
``tensorgraph.link.jax.linker``); the numbers are JAX's, not numpy's.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.random_plan import draw_of, draws_named
from tensorgraph.link.jax import register
from tensorgraph.link.jax.shape import static_ints
from tensorgraph.link.traced_random import choice_sizes, draw_shape
from tensorgraph.tensor.random.basic import ChoiceRV, PermutationRV
from tensorgraph.tensor.random.op import RandomVariable


def _random():
    import jax

    return jax.random


def _uniform(key, shape, dtype, low, high):
    return _random().uniform(key, shape, dtype, minval=low, maxval=high)


def _normal(key, shape, dtype, loc, scale):
    return loc + scale * _random().normal(key, shape, dtype)


def _standard_normal(key, shape, dtype):
    return _random().normal(key, shape, dtype)


def _exponential(key, shape, dtype, scale):
    return scale * _random().exponential(key, shape, dtype)


def _gamma(key, shape, dtype, a, scale):
    return _random().gamma(key, a, shape, dtype) * scale


def _beta(key, shape, dtype, a, b):
    return _random().beta(key, a, b, shape, dtype)


def _integers(key, shape, dtype, low, high):
    return _random().randint(key, shape, low, high, dtype=dtype)


def _binomial(key, shape, dtype, n, p):
    return _random().binomial(key, n, p, shape)


def _poisson(key, shape, dtype, lam):
    return _random().poisson(key, lam, shape, dtype=dtype)


def _bernoulli(key, shape, dtype, p):
    return _random().bernoulli(key, p, shape)


def _lognormal(key, shape, dtype, mean, sigma):
    import jax.numpy as jnp

    return jnp.exp(mean + sigma * _random().normal(key, shape, dtype))


def _laplace(key, shape, dtype, loc, scale):
    return loc + scale * _random().laplace(key, shape, dtype)


def _logistic(key, shape, dtype, loc, scale):
    return loc + scale * _random().logistic(key, shape, dtype)


def _weibull(key, shape, dtype, a):
    return _random().weibull_min(key, 1.0, a, shape, dtype)


def _geometric(key, shape, dtype, p):
    return _random().geometric(key, p, shape, dtype)


_DRAWS = draws_named(globals())


@register(RandomVariable)
def jax_random_variable(op, node):
    import jax.numpy as jnp

    draw = draw_of(op, _DRAWS, "JAX")
    dtype = node.outputs[1].dtype
    compute = dtype if np.dtype(dtype).kind == "f" else (
        "int64" if op.name in ("integers", "poisson", "geometric") else "float64")

    def random_variable(key, size, *params):
        shape = draw_shape(op, node.inputs[1].type.shape[0], size, params,
                           static_ints)
        key, sub = _random().split(key)
        params = [jnp.asarray(p) for p in params]
        if np.dtype(compute).kind == "f":
            params = [p.astype(compute) for p in params]
        return key, jnp.asarray(draw(sub, shape, compute, *params)).astype(dtype)

    return random_variable


@register(ChoiceRV)
def jax_choice(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[1].dtype

    def choice(key, size, a, *p):
        shape, n = choice_sizes(node, size, a, static_ints)
        key, sub = _random().split(key)
        value = _random().choice(sub, a if n is None else n, shape, replace=op.replace,
                                 p=p[0] if p else None)
        return key, jnp.asarray(value).astype(dtype)

    return choice


@register(PermutationRV)
def jax_permutation(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[1].dtype

    def permutation(key, size, x):
        if op.x_ndim == 0:
            x = static_ints(x, "the length of a permutation")[0]
        key, sub = _random().split(key)
        return key, jnp.asarray(_random().permutation(sub, x)).astype(dtype)

    return permutation
