"""The distributions: one ``RandomVariable`` per ``numpy.random.Generator`` method.

Each function builds a draw from explicit parameters and an ``rng`` variable (a fresh shared
generator when ``rng`` is None, which then never advances: use ``RandomStream`` to get new
values on every call). Continuous draws are ``config.floatX`` unless ``dtype`` is given; count
and index draws are int64.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.tensor.random.op import RandomVariable

__all__ = [
    "uniform", "normal", "standard_normal", "integers", "choice", "permutation", "binomial",
    "poisson", "exponential", "gamma", "beta", "bernoulli",
    "RandomVariable", "BernoulliRV", "ChoiceRV", "PermutationRV",
]


def _tt():
    import tensorgraph.tensor as tt

    return tt


class BernoulliRV(RandomVariable):
    """1 with probability ``p``, else 0 (numpy draws it as ``binomial(1, p)``)."""

    def __init__(self, inplace: bool = False):
        super().__init__("bernoulli", (0,), "int64", inplace=inplace)

    def rng_fn(self, rng, p, *, size):
        return rng.binomial(1, p, size=size)


class ChoiceRV(RandomVariable):
    """Samples of ``a`` (an int n meaning ``range(n)``, or a vector), optionally weighted by
    ``p``, with or without replacement. The parameters are not batched."""

    __props__ = RandomVariable.__props__ + ("replace", "a_ndim", "has_p")

    def __init__(self, replace: bool = True, a_ndim: int = 0, has_p: bool = False,
                 inplace: bool = False):
        super().__init__("choice", (a_ndim,) + ((1,) if has_p else ()), "int64", inplace=inplace)
        self.replace = bool(replace)
        self.a_ndim = a_ndim
        self.has_p = has_p

    def output_dtype(self, params, dtype=None) -> str:
        if dtype is None and self.a_ndim == 1:
            return params[0].type.dtype
        return super().output_dtype(params, dtype)

    def rng_fn(self, rng, a, *p, size):
        return rng.choice(a, size=size, replace=self.replace, p=p[0] if p else None)


class PermutationRV(RandomVariable):
    """A shuffled copy of ``x`` along its first axis, or of ``range(x)`` for an integer ``x``."""

    __props__ = RandomVariable.__props__ + ("x_ndim",)

    def __init__(self, x_ndim: int = 0, inplace: bool = False):
        super().__init__("permutation", (x_ndim,), "int64", max(1, x_ndim), inplace)
        self.x_ndim = x_ndim

    def output_dtype(self, params, dtype=None) -> str:
        if dtype is None and self.x_ndim > 0:
            return params[0].type.dtype
        return super().output_dtype(params, dtype)

    def make_node(self, rng, size, *params, dtype=None):
        node = super().make_node(rng, size, *params, dtype=dtype)
        if node.inputs[1].type.shape[0]:
            raise TypeError("permutation takes no size: it permutes one array (draw several "
                            "permutations by calling it several times)")
        return node

    def _supp_shape(self, params) -> tuple:
        (x,) = params
        if self.x_ndim == 0:
            from tensorgraph.graph.basic import Constant

            return (int(x.data),) if isinstance(x, Constant) else (None,)
        return tuple(x.type.shape)

    def _supp_shape_symbolic(self, node, input_shapes) -> tuple:
        if self.x_ndim == 0:
            return (_tt().cast(node.inputs[2], "int64"),)
        return tuple(input_shapes[2])

    def rng_fn(self, rng, x, *, size):
        return rng.permutation(int(x) if np.ndim(x) == 0 else x)


uniform_rv = RandomVariable("uniform", (0, 0))
normal_rv = RandomVariable("normal", (0, 0))
standard_normal_rv = RandomVariable("standard_normal", ())
exponential_rv = RandomVariable("exponential", (0,))
gamma_rv = RandomVariable("gamma", (0, 0))
beta_rv = RandomVariable("beta", (0, 0))
integers_rv = RandomVariable("integers", (0, 0), "int64")
binomial_rv = RandomVariable("binomial", (0, 0), "int64")
poisson_rv = RandomVariable("poisson", (0,), "int64")
bernoulli_rv = BernoulliRV()


def uniform(low=0.0, high=1.0, size=None, rng=None, dtype=None):
    """Uniform on ``[low, high)``."""
    return uniform_rv(low, high, size=size, rng=rng, dtype=dtype)


def normal(loc=0.0, scale=1.0, size=None, rng=None, dtype=None):
    """Gaussian with mean ``loc`` and standard deviation ``scale``."""
    return normal_rv(loc, scale, size=size, rng=rng, dtype=dtype)


def standard_normal(size=None, rng=None, dtype=None):
    """Gaussian with mean 0 and standard deviation 1."""
    return standard_normal_rv(size=size, rng=rng, dtype=dtype)


def exponential(scale=1.0, size=None, rng=None, dtype=None):
    """Exponential with mean ``scale``."""
    return exponential_rv(scale, size=size, rng=rng, dtype=dtype)


def gamma(shape, scale=1.0, size=None, rng=None, dtype=None):
    """Gamma with shape ``shape`` and scale ``scale`` (numpy's parametrization)."""
    return gamma_rv(shape, scale, size=size, rng=rng, dtype=dtype)


def beta(a, b, size=None, rng=None, dtype=None):
    """Beta with parameters ``a`` and ``b``."""
    return beta_rv(a, b, size=size, rng=rng, dtype=dtype)


def integers(low, high=None, size=None, rng=None, dtype=None):
    """Integers in ``[low, high)``; with one bound, in ``[0, low)`` (as numpy)."""
    if high is None:
        low, high = 0, low
    return integers_rv(low, high, size=size, rng=rng, dtype=dtype)


def binomial(n, p, size=None, rng=None, dtype=None):
    """Number of successes in ``n`` trials of probability ``p``."""
    return binomial_rv(n, p, size=size, rng=rng, dtype=dtype)


def poisson(lam=1.0, size=None, rng=None, dtype=None):
    """Poisson with rate ``lam``."""
    return poisson_rv(lam, size=size, rng=rng, dtype=dtype)


def bernoulli(p, size=None, rng=None, dtype=None):
    """1 with probability ``p``, else 0."""
    return bernoulli_rv(p, size=size, rng=rng, dtype=dtype)


def choice(a, size=None, replace=True, p=None, rng=None, dtype=None):
    """Samples of ``a`` (an int n: ``range(n)``; or a vector), weighted by ``p`` if given."""
    tt = _tt()
    a = tt.as_tensor_variable(a)
    if a.type.ndim > 1:
        raise TypeError(f"choice: a must be an integer or a vector, got {a} of type {a.type}")
    if a.type.ndim == 0 and not a.type.dtype.startswith(("int", "uint")):
        raise TypeError(f"choice: a scalar a must be an integer (the number of choices), got "
                        f"{a.type.dtype}")
    params = [a] if p is None else [a, tt.as_tensor_variable(p)]
    if p is not None and params[1].type.ndim != 1:
        raise TypeError(f"choice: p must be a vector of probabilities, got {params[1].type}")
    op = ChoiceRV(replace, a.type.ndim, p is not None)
    return op(*params, size=size, rng=rng, dtype=dtype)


def permutation(x, rng=None, dtype=None):
    """A random permutation of ``range(x)`` for an integer ``x``, else of ``x``'s first axis."""
    x = _tt().as_tensor_variable(x)
    if x.type.ndim == 0 and not x.type.dtype.startswith(("int", "uint")):
        raise TypeError(f"permutation: a scalar x must be an integer, got {x.type.dtype}")
    return PermutationRV(x.type.ndim)(x, rng=rng, dtype=dtype)

