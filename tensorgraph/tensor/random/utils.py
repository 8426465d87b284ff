"""``RandomStream``: random draws that change on every call of a compiled function.

Each draw gets its own shared generator, seeded from the stream's ``numpy.random.SeedSequence``
(so the same seed gives the same streams, draw after draw), and whose ``default_update`` is the
draw's advanced generator: every call of a function using the draw stores the advanced state
and the next call draws new values. ``function(..., no_default_updates=True)`` skips those
updates (the values then stay the same from call to call).

    srng = RandomStream(seed=234)
    rv_u = srng.uniform(0, 1, size=(2, 2))
    f = tensorgraph.function([], rv_u)
    f(), f()   # two different matrices
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.shared import shared
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.extra_ops import broadcast_shape, broadcast_to
from tensorgraph.tensor.random import basic
from tensorgraph.tensor.shape import shape_tuple

__all__ = ["RandomStream", "broadcast_params", "params_broadcast_shapes"]


def params_broadcast_shapes(param_shapes, ndims_params):
    """The shapes of parameters broadcast over their batch dimensions: each shape (a tuple of
    sizes, ints or integer scalars) keeps its ``ndims_params`` core dimensions and gets the
    common batch dimensions in front."""
    param_shapes = [tuple(s) for s in param_shapes]
    batches = [s[:len(s) - core] for s, core in zip(param_shapes, ndims_params)]
    batch = broadcast_shape(*batches, arrays_are_shapes=True) if batches else ()
    return [tuple(batch) + s[len(s) - core:] for s, core in zip(param_shapes, ndims_params)]


def broadcast_params(params, ndims_params):
    """The distribution parameters ``params`` broadcast over their batch dimensions (all but
    the last ``ndims_params[k]`` of each), as a random variable combines them."""
    params = [as_tensor_variable(p) for p in params]
    if len(params) != len(ndims_params):
        raise ValueError(f"broadcast_params: {len(params)} parameters but "
                         f"{len(ndims_params)} core dimension counts")
    shapes = params_broadcast_shapes([shape_tuple(p) for p in params], ndims_params)
    return [p if tuple(shape_tuple(p)) == shape else broadcast_to(p, shape)
            for p, shape in zip(params, shapes)]


class RandomStream:
    """A factory of random draws with numpy-Generator method names, sharing one seed.

    Parameters
    ----------
    seed : int, sequence of ints or None
        Seeds the generators of all draws (None: fresh entropy from the OS).
    rng_ctor : callable
        Makes a ``numpy.random.Generator`` from a ``SeedSequence`` (``np.random.default_rng``).

    Attributes
    ----------
    state_updates : list of (shared generator, next generator) pairs, one per draw made.
    gen_seedgen : the ``SeedSequence`` the generators of new draws are spawned from.
    """

    def __init__(self, seed=None, rng_ctor=np.random.default_rng):
        self.default_instance_seed = seed
        self.rng_ctor = rng_ctor
        self.gen_seedgen = np.random.SeedSequence(seed)
        self.state_updates: list[tuple] = []

    def __repr__(self):
        return f"RandomStream(seed={self.default_instance_seed!r}, {len(self.state_updates)} draws)"

    def updates(self) -> list[tuple]:
        """The (generator, next generator) pairs, e.g. for ``function(updates=...)``."""
        return list(self.state_updates)

    def seed(self, seed=None) -> None:
        """Reseed every generator of this stream (and the ones of future draws) from ``seed``.

        Generators are re-made in the order of the draws, so a given seed always reproduces
        the same values.
        """
        self.gen_seedgen = np.random.SeedSequence(seed)
        for rng, _ in self.state_updates:
            rng.set_value(self._new_generator(), borrow=True)

    def _new_generator(self) -> np.random.Generator:
        (child,) = self.gen_seedgen.spawn(1)
        return self.rng_ctor(child)

    def gen(self, fn, *args, **kwargs):
        """Make a draw with ``fn`` (a function of ``tensorgraph.tensor.random.basic``) on a new
        shared generator of this stream, registered for default updates."""
        rng = shared(self._new_generator(), borrow=True)
        draw = fn(*args, rng=rng, **kwargs)
        next_rng = draw.owner.outputs[0]
        rng.default_update = next_rng
        draw.rng = rng
        draw.update = (rng, next_rng)
        self.state_updates.append(draw.update)
        return draw

    # -- distributions (numpy.random.Generator names) ---------------------------------------

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None):
        """Uniform on ``[low, high)``; ``config.floatX`` unless ``dtype``."""
        return self.gen(basic.uniform, low, high, size=size, dtype=dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None):
        """Gaussian with mean ``loc`` and standard deviation ``scale``."""
        return self.gen(basic.normal, loc, scale, size=size, dtype=dtype)

    def standard_normal(self, size=None, dtype=None):
        """Gaussian with mean 0 and standard deviation 1."""
        return self.gen(basic.standard_normal, size=size, dtype=dtype)

    def integers(self, low, high=None, size=None, dtype=None):
        """int64 integers in ``[low, high)``, or ``[0, low)`` when ``high`` is None."""
        return self.gen(basic.integers, low, high, size=size, dtype=dtype)

    def choice(self, a, size=None, replace=True, p=None, dtype=None):
        """Samples of ``range(a)`` (int ``a``) or of the vector ``a``, weighted by ``p``."""
        return self.gen(basic.choice, a, size=size, replace=replace, p=p, dtype=dtype)

    def permutation(self, x, dtype=None):
        """A permutation of ``range(x)`` (int ``x``) or of ``x`` along its first axis."""
        return self.gen(basic.permutation, x, dtype=dtype)

    def binomial(self, n, p, size=None, dtype=None):
        """Successes in ``n`` trials of probability ``p`` (int64)."""
        return self.gen(basic.binomial, n, p, size=size, dtype=dtype)

    def bernoulli(self, p, size=None, dtype=None):
        """1 with probability ``p``, else 0 (int64)."""
        return self.gen(basic.bernoulli, p, size=size, dtype=dtype)

    def poisson(self, lam=1.0, size=None, dtype=None):
        """Poisson counts with rate ``lam`` (int64)."""
        return self.gen(basic.poisson, lam, size=size, dtype=dtype)

    def exponential(self, scale=1.0, size=None, dtype=None):
        """Exponential with mean ``scale``."""
        return self.gen(basic.exponential, scale, size=size, dtype=dtype)

    def gamma(self, shape, rate=None, scale=None, size=None, dtype=None):
        """Gamma with shape ``shape``: give ``scale=`` (a rate, by position or ``rate=``, is
        deprecated, as in ``basic.gamma``)."""
        return self.gen(basic.gamma, shape, rate=rate, scale=scale, size=size, dtype=dtype)

    def beta(self, a, b, size=None, dtype=None):
        """Beta with parameters ``a`` and ``b``."""
        return self.gen(basic.beta, a, b, size=size, dtype=dtype)

    def __getattr__(self, name):
        """The other distributions of ``tensorgraph.tensor.random.basic`` by name
        (``srng.laplace(0, 1, size=3)``), drawn as ``gen`` draws them."""
        dist = getattr(basic, name, None) if not name.startswith("_") else None
        if name not in basic.__all__ or not callable(dist) or isinstance(dist, type):
            raise AttributeError(f"RandomStream has no distribution {name!r}")

        def draw(*args, **kwargs):
            return self.gen(dist, *args, **kwargs)

        draw.__name__ = name
        draw.__doc__ = getattr(dist, "__doc__", None)
        return draw
