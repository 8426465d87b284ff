"""The distributions: one ``RandomVariable`` per distribution, named as in PyTensor (numpy's
``Generator`` method names; scipy's for the ones PyTensor draws with scipy).

Each distribution is an op called like a function: ``normal(loc, scale, size=..., rng=...)``
(parameters by position or name, with defaults) builds a draw from an ``rng`` variable (a fresh
shared generator when ``rng`` is None, which then never advances: use ``RandomStream`` to get
new values on every call). Continuous draws are ``config.floatX`` unless ``dtype`` is given;
count and index draws are int64. ``op.rng_fn(rng, *params, size=...)`` draws with numpy
directly (the reference the op's ``perform`` calls).

Parameters broadcast as in numpy; the distributions with vector parameters
(``multivariate_normal``, ``dirichlet``, ``multinomial``, ``categorical``) take batches of them
(leading dimensions), drawn batch entry by batch entry where numpy's method takes one set.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.math import cast, true_div
from tensorgraph.tensor.random.op import RandomVariable, _constant_entries

__all__ = [
    "uniform", "normal", "standard_normal", "integers", "choice", "permutation", "binomial",
    "poisson", "exponential", "gamma", "beta", "bernoulli", "lognormal", "laplace",
    "logistic", "vonmises", "wald", "weibull", "triangular", "geometric", "hypergeometric",
    "halfnormal", "pareto", "gumbel", "cauchy", "halfcauchy", "truncexpon", "t", "nbinom",
    "negative_binomial", "betabinom", "gengamma", "invgamma", "rayleigh", "chisquare",
    "multivariate_normal", "dirichlet", "multinomial", "categorical",
    "RandomVariable", "ScipyRandomVariable", "BernoulliRV", "ChoiceRV",
    "ChoiceWithoutReplacement", "PermutationRV", "IntegersRV", "MvNormalRV", "DirichletRV",
    "MultinomialRV", "CategoricalRV", "InvGammaRV", "broadcast_shapes",
]


class BernoulliRV(RandomVariable):
    """1 with probability ``p``, else 0 (numpy draws it as ``binomial(1, p)``)."""

    def __init__(self, inplace: bool = False):
        super().__init__("bernoulli", (0,), "int64", inplace=inplace,
                         params=(("p", inspect.Parameter.empty),))

    def draw(self, rng, p, *, size):
        return rng.binomial(1, p, size=size)


class ChoiceRV(RandomVariable):
    """Samples of ``a`` (an int n meaning ``range(n)``, or an array: entries along its first
    axis), optionally weighted by ``p``, with or without replacement. The parameters are not
    batched."""

    __props__ = RandomVariable.__props__ + ("replace", "a_ndim", "has_p")

    def __init__(self, replace: bool = True, a_ndim: int = 0, has_p: bool = False,
                 inplace: bool = False, dtype: str | None = None):
        super().__init__("choice", (a_ndim,) + ((1,) if has_p else ()), dtype,
                         max(0, a_ndim - 1), inplace=inplace)
        self.replace = bool(replace)
        self.a_ndim = a_ndim
        self.has_p = has_p

    def output_dtype(self, params) -> str:
        """``dtype`` None: the dtype of ``a`` for an array ``a``, int64 for ``range(n)``."""
        if self.dtype is None:
            return params[0].type.dtype if self.a_ndim >= 1 else "int64"
        return super().output_dtype(params)

    def _supp_shape(self, params) -> tuple:
        return tuple(params[0].type.shape[1:])

    def _supp_shape_symbolic(self, params, param_shapes) -> tuple:
        return tuple(param_shapes[0][1:])

    def draw(self, rng, a, *p, size):
        return rng.choice(a, size=size, replace=self.replace, p=p[0] if p else None)


class ChoiceWithoutReplacement(ChoiceRV):
    """``choice`` without replacement (every entry drawn at most once).

    Built by ``choice(..., replace=False)``, ``size`` is the shape of the samples. Built with
    PyTensor's gufunc ``signature`` (``"(a0,a1),(a0),(1)->(s0,a1)"``: ``a``, optionally
    ``p``, then a ``core_shape`` vector of fixed length), the op takes ``core_shape`` as its
    last parameter, the shape of the samples drawn from each ``a`` (and ``p``); leading axes
    of ``a`` and ``p`` beyond their core are a batch, each entry drawn on its own, and
    ``size`` is the batch shape.
    """

    __props__ = ChoiceRV.__props__ + ("core_shape_len",)

    def __init__(self, a_ndim: int = 0, has_p: bool = False, inplace: bool = False,
                 dtype: str | None = None, *, signature: str | None = None):
        core_shape_len = None
        if signature is not None:
            a_ndim, has_p, core_shape_len = _parse_choice_signature(signature)
        super().__init__(False, a_ndim, has_p, inplace, dtype)
        self.core_shape_len = core_shape_len
        if core_shape_len is not None:
            self.ndims_params = (a_ndim,) + ((1,) if has_p else ()) + (1,)
            self.ndim_supp = core_shape_len + max(0, a_ndim - 1)

    def _supp_shape(self, params) -> tuple:
        if self.core_shape_len is None:
            return super()._supp_shape(params)

        a, core_shape = params[0], params[-1]
        if core_shape.type.shape != (self.core_shape_len,):
            raise TypeError(f"{self}: core_shape must be a vector of {self.core_shape_len} "
                            f"entries (the signature's), got {core_shape.type}")
        tail = a.type.shape[a.type.ndim - self.a_ndim + 1:] if self.a_ndim else ()
        return tuple(_constant_entries(core_shape)) + tuple(tail)

    def _supp_shape_symbolic(self, params, param_shapes) -> tuple:
        if self.core_shape_len is None:
            return super()._supp_shape_symbolic(params, param_shapes)
        core_shape = params[-1]
        entries = tuple(cast(core_shape[k], "int64") for k in range(self.core_shape_len))
        a_shape = param_shapes[0]
        return entries + (tuple(a_shape[len(a_shape) - self.a_ndim + 1:]) if self.a_ndim else ())

    def draw(self, rng, a, *rest, size):
        if self.core_shape_len is None:
            return super().draw(rng, a, *rest, size=size)
        *p, core_shape = rest
        core = tuple(int(c) for c in np.asarray(core_shape).reshape(-1))
        a = np.asarray(a)
        params = [a] + [np.asarray(v) for v in p]
        ndims = self.ndims_params[:len(params)]
        tail = a.shape[a.ndim - self.a_ndim + 1:] if self.a_ndim else ()

        def one(r, a_core, *p_core):
            pool = int(a_core) if self.a_ndim == 0 else a_core
            return r.choice(pool, size=core, replace=False, p=p_core[0] if p_core else None)

        dtype = a.dtype if self.a_ndim else "int64"
        return _per_batch(rng, params, ndims, size, one, core + tuple(tail), dtype)


def _parse_choice_signature(signature: str) -> tuple[int, bool, int]:
    """``(a_ndim, has_p, core_shape_len)`` from a gufunc signature of
    ``ChoiceWithoutReplacement`` such as ``"(a0,a1),(a0),(1)->(s0,a1)"``."""
    import re

    text = signature.replace(" ", "")
    if "->" not in text:
        raise ValueError(f"ChoiceWithoutReplacement: signature {signature!r} has no '->'")
    ins, out = text.split("->", 1)
    groups = re.findall(r"\(([^()]*)\)", ins)
    out_groups = re.findall(r"\(([^()]*)\)", out)
    dims = [[d for d in g.split(",") if d] for g in groups]
    if len(dims) not in (2, 3) or len(out_groups) != 1:
        raise ValueError(f"ChoiceWithoutReplacement: signature {signature!r} must read "
                         "'(a),(core_shape)->(out)' or '(a),(p),(core_shape)->(out)'")
    core = dims[-1]
    if len(core) != 1 or not core[0].isdigit():
        raise ValueError(f"ChoiceWithoutReplacement: the core_shape of signature "
                         f"{signature!r} must be one literal length, e.g. (2)")
    a_ndim, core_len = len(dims[0]), int(core[0])
    out_ndim = len([d for d in out_groups[0].split(",") if d])
    if out_ndim != core_len + max(0, a_ndim - 1):
        raise ValueError(f"ChoiceWithoutReplacement: signature {signature!r} gives "
                         f"{out_ndim} output dimensions; {core_len} sample dimensions and "
                         f"a's {max(0, a_ndim - 1)} trailing ones make "
                         f"{core_len + max(0, a_ndim - 1)}")
    return a_ndim, len(dims) == 3, core_len


class PermutationRV(RandomVariable):
    """A shuffled copy of ``x`` along the first of its last ``x_ndim`` axes (its core), or of
    ``range(x)`` for an integer ``x`` (``x_ndim`` 0); leading axes of ``x`` beyond the core
    are a batch (each entry permuted on its own), and ``size`` draws that many independent
    permutations (its dimensions first, broadcasting the batch).

    ``PermutationRV(ndim_supp=2, ndims_params=[2])`` is PyTensor's spelling of ``x_ndim=2``
    (``ndim_supp`` is then ``max(1, x_ndim)``, the number of dimensions of one draw).
    """

    __props__ = RandomVariable.__props__ + ("x_ndim",)

    def __init__(self, x_ndim: int = 0, inplace: bool = False, dtype: str | None = None, *,
                 ndim_supp: int | None = None, ndims_params=None, name: str | None = None):
        if ndims_params is not None:
            if len(ndims_params) != 1:
                raise ValueError(f"PermutationRV has one parameter, got ndims_params="
                                 f"{list(ndims_params)}")
            x_ndim = int(ndims_params[0])
        if ndim_supp is not None and ndim_supp != max(1, x_ndim):
            raise ValueError(f"PermutationRV: ndim_supp must be max(1, x_ndim) = "
                             f"{max(1, x_ndim)} for x_ndim={x_ndim}, got {ndim_supp}")
        super().__init__(name or "permutation", (x_ndim,), dtype, max(1, x_ndim), inplace)
        self.x_ndim = x_ndim

    def output_dtype(self, params) -> str:
        """``dtype`` None: the dtype of ``x`` for an array ``x``, int64 for ``range(x)``."""
        if self.dtype is None:
            return params[0].type.dtype if self.x_ndim > 0 else "int64"
        return super().output_dtype(params)

    def _supp_shape(self, params) -> tuple:
        (x,) = params
        if self.x_ndim == 0:
            if isinstance(x, Constant) and np.ndim(x.data) == 0:
                return (int(x.data),)
            return (None,)
        return tuple(x.type.shape[x.type.ndim - self.x_ndim:])

    def _supp_shape_symbolic(self, params, param_shapes) -> tuple:
        if self.x_ndim == 0:
            return (cast(params[0], "int64"),)
        return tuple(param_shapes[0][len(param_shapes[0]) - self.x_ndim:])

    def draw(self, rng, x, *, size):
        x = np.asarray(x)
        if x.ndim == self.x_ndim and not size:          # one permutation, as numpy draws it
            return rng.permutation(int(x) if self.x_ndim == 0 else x)
        core = ((int(x.flat[0]),) if self.x_ndim == 0 and x.size else
                x.shape[x.ndim - self.x_ndim:])
        if self.x_ndim == 0:
            batch = _batch_of([x], (0,), size)
            counts = np.broadcast_to(x, batch)
            if counts.size and np.any(counts != counts.flat[0]):
                raise ValueError("permutation: a batch of integers x must all be equal (the "
                                 f"draws are stacked into one array), got {x}")
        return _per_batch(rng, [x], (self.x_ndim,), size,
                          lambda r, xc: r.permutation(int(xc) if self.x_ndim == 0 else xc),
                          core, x.dtype if self.x_ndim else "int64")


_REQUIRED = inspect.Parameter.empty


def _rv(name, ndims, params, dtype="floatX", cls=RandomVariable, **kwargs):
    return cls(name, ndims, dtype, params=params, **kwargs)


class ScipyRandomVariable(RandomVariable):
    """A draw made by ``scipy.stats.<scipy_name>.rvs`` with the node's generator (as PyTensor
    draws these, so a seed gives the same numbers); ``arguments`` maps the parameters to
    scipy's positional and keyword arguments."""

    __props__ = RandomVariable.__props__ + ("scipy_name",)

    def __init__(self, name, ndims_params, dtype="floatX", scipy_name=None, arguments=None,
                 inplace=False, params=None):
        super().__init__(name, ndims_params, dtype, inplace=inplace, params=params)
        self.scipy_name = scipy_name or name
        self.arguments = arguments

    def draw(self, rng, *params, size):
        import scipy.stats

        args, kwargs = self.arguments(*params) if self.arguments else (params, {})
        draw = getattr(scipy.stats, self.scipy_name).rvs(*args, size=size, random_state=rng,
                                                         **kwargs)
        shape = size if size is not None else np.broadcast_shapes(*map(np.shape, params))
        return np.array(np.broadcast_to(draw, shape))


class InvGammaRV(RandomVariable):
    """``1 / gamma(shape, 1 / scale)``: the inverse gamma distribution."""

    def __init__(self, inplace: bool = False):
        super().__init__("invgamma", (0, 0), inplace=inplace,
                         params=(("shape", _REQUIRED), ("scale", _REQUIRED)))

    def draw(self, rng, shape, scale, *, size):
        return 1 / rng.gamma(shape, 1 / np.asarray(scale), size=size)


class RayleighRV(RandomVariable):
    """numpy's ``rayleigh(scale)`` shifted by ``loc``."""

    def __init__(self, inplace: bool = False):
        super().__init__("rayleigh", (0, 0), inplace=inplace,
                         params=(("loc", 0.0), ("scale", 1.0)))

    def draw(self, rng, loc, scale, *, size):
        return loc + rng.rayleigh(scale, size=size)


def _batch_of(params, ndims, size):
    """The batch shape of a draw: ``size``, or the broadcast batch shapes of the params."""
    if size is not None:
        return tuple(size)
    return np.broadcast_shapes(*[np.shape(p)[:np.ndim(p) - core] for p, core in
                                 zip(params, ndims)])


def _per_batch(rng, params, ndims, size, draw_one, one_shape, dtype):
    """Draws of a distribution whose numpy method takes one set of parameters: one call of
    ``draw_one(rng, *core_params)`` per batch entry, in C order, the parameters broadcast
    over the batch shape; each draw has the shape ``one_shape``."""
    batch = _batch_of(params, ndims, size)
    expanded = [np.broadcast_to(p, batch + np.shape(p)[np.ndim(p) - core:])
                for p, core in zip(params, ndims)]
    out = np.empty(batch + tuple(one_shape), dtype=dtype)
    for index in np.ndindex(*batch):
        out[index] = draw_one(rng, *[p[index] for p in expanded])
    return out


class _CoreRV(RandomVariable):
    """A distribution with vector (or matrix) parameters and vector draws; ``supp_param`` is
    the parameter whose last axis gives the draw's length."""

    supp_param = 0

    def _supp_shape(self, params) -> tuple:
        return params[self.supp_param].type.shape[-1:]

    def _supp_shape_symbolic(self, params, param_shapes) -> tuple:
        return tuple(param_shapes[self.supp_param][-1:])

    def _plain(self, params) -> bool:
        """Whether every parameter is exactly core (numpy then draws ``size`` at once)."""
        return all(np.ndim(p) == core for p, core in zip(params, self.ndims_params))


class MvNormalRV(_CoreRV):
    """Multivariate normal draws ``mean + L z``, ``z`` standard normal and ``L`` a factor of
    ``cov`` (``L L^T = cov``) made by ``method``: 'cholesky' (``cov`` must be positive
    definite: a LinAlgError otherwise, as in PyTensor), 'eigh' or 'svd' (these two also take
    a semi-definite ``cov``)."""

    __props__ = _CoreRV.__props__ + ("method",)

    def __init__(self, method: str = "cholesky", inplace: bool = False):
        if method not in ("cholesky", "eigh", "svd"):
            raise ValueError(f"multivariate_normal: method must be 'cholesky', 'eigh' or "
                             f"'svd', got {method!r}")
        super().__init__("multivariate_normal", (1, 2), ndim_supp=1, inplace=inplace,
                         params=(("mean", _REQUIRED), ("cov", _REQUIRED)))
        self.method = method

    def __call__(self, *params, method=None, **kwargs):
        if method is not None and method != self.method:
            return MvNormalRV(method)(*params, **kwargs)
        return super().__call__(*params, **kwargs)

    def _factor(self, cov):
        if self.method == "cholesky":
            try:
                return np.linalg.cholesky(cov)
            except np.linalg.LinAlgError as exc:
                raise np.linalg.LinAlgError(
                    f"multivariate_normal(method='cholesky'): cov is not positive definite "
                    f"({exc}); method='eigh' or method='svd' also take a semi-definite cov"
                ) from None
        if self.method == "svd":
            u, s, _ = np.linalg.svd(cov)
            return u * np.sqrt(s)[..., None, :]
        values, vectors = np.linalg.eigh(cov)
        return vectors * np.sqrt(np.clip(values, 0, None))[..., None, :]

    def draw(self, rng, mean, cov, *, size):
        mean, cov = np.asarray(mean), np.asarray(cov)
        batch = _batch_of([mean, cov], self.ndims_params, size)
        z = rng.standard_normal(batch + mean.shape[-1:])
        return mean + np.einsum("...ij,...j->...i", self._factor(cov), z)


class DirichletRV(_CoreRV):
    """Dirichlet draws (vectors summing to 1) with concentrations ``alphas``."""

    def __init__(self, inplace: bool = False):
        super().__init__("dirichlet", (1,), ndim_supp=1, inplace=inplace,
                         params=(("alphas", _REQUIRED),))

    def draw(self, rng, alphas, *, size):
        if self._plain([alphas]):
            return rng.dirichlet(alphas, size=size)
        return _per_batch(rng, [alphas], self.ndims_params, size,
                          lambda r, a: r.dirichlet(a), np.shape(alphas)[-1:], "float64")


class MultinomialRV(_CoreRV):
    """Counts of ``n`` trials over the categories of the probability vector ``p``."""

    supp_param = 1

    def __init__(self, inplace: bool = False):
        super().__init__("multinomial", (0, 1), "int64", ndim_supp=1, inplace=inplace,
                         params=(("n", _REQUIRED), ("p", _REQUIRED)))

    def draw(self, rng, n, p, *, size):
        if self._plain([n, p]):
            return rng.multinomial(n, p, size=size)
        return _per_batch(rng, [n, p], self.ndims_params, size,
                          lambda r, count, probs: r.multinomial(count, probs),
                          np.shape(p)[-1:], "int64")


class CategoricalRV(RandomVariable):
    """The index of a category drawn with the probabilities of the last axis of ``p`` (one
    uniform draw per index, placed among the cumulated probabilities)."""

    def __init__(self, inplace: bool = False):
        super().__init__("categorical", (1,), "int64", inplace=inplace,
                         params=(("p", _REQUIRED),))

    def draw(self, rng, p, *, size):
        p = np.asarray(p)
        batch = p.shape[:-1] if size is None else tuple(size)
        if size is not None:
            try:
                fits = np.broadcast_shapes(p.shape[:-1], batch) == batch
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(f"categorical: `size` is incompatible with the shape of `p`: "
                                 f"the batch shape {p.shape[:-1]} of p (its shape {p.shape} "
                                 f"without the last axis) does not broadcast to size {batch}")
        u = rng.uniform(size=batch)
        cumulated = np.cumsum(p, axis=-1)
        index = (u[..., None] >= cumulated).sum(axis=-1)
        return np.minimum(index, p.shape[-1] - 1)


class IntegersRV(RandomVariable):
    """Integers in ``[low, high)``; with one bound, in ``[0, low)`` (as numpy)."""

    def __init__(self, inplace: bool = False):
        super().__init__("integers", (0, 0), "int64", inplace=inplace,
                         params=(("low", _REQUIRED), ("high", None)))

    def _bind(self, params, named):
        low, high = super()._bind(params, named)
        return (0, low) if high is None else (low, high)


def broadcast_shapes(*shapes):
    """numpy's ``broadcast_shapes`` of shape tuples (PyTensor code imports it from here)."""
    return np.broadcast_shapes(*shapes)


def _loc_scale(loc, scale):
    return (), {"loc": loc, "scale": scale}


uniform = _rv("uniform", (0, 0), (("low", 0.0), ("high", 1.0)))
normal = _rv("normal", (0, 0), (("loc", 0.0), ("scale", 1.0)))
standard_normal = _rv("standard_normal", (), ())
exponential = _rv("exponential", (0,), (("scale", 1.0),))
_gamma = _rv("gamma", (0, 0), (("shape", _REQUIRED), ("scale", 1.0)))
beta = _rv("beta", (0, 0), (("alpha", _REQUIRED), ("beta", _REQUIRED)))
integers = IntegersRV()
binomial = _rv("binomial", (0, 0), (("n", _REQUIRED), ("p", _REQUIRED)), "int64")
poisson = _rv("poisson", (0,), (("lam", 1.0),), "int64")
bernoulli = BernoulliRV()
lognormal = _rv("lognormal", (0, 0), (("mean", 0.0), ("sigma", 1.0)))
laplace = _rv("laplace", (0, 0), (("loc", 0.0), ("scale", 1.0)))
logistic = _rv("logistic", (0, 0), (("loc", 0.0), ("scale", 1.0)))
vonmises = _rv("vonmises", (0, 0), (("mu", _REQUIRED), ("kappa", _REQUIRED)))
wald = _rv("wald", (0, 0), (("mean", _REQUIRED), ("scale", _REQUIRED)))
weibull = _rv("weibull", (0,), (("shape", _REQUIRED),))
triangular = _rv("triangular", (0, 0, 0),
                 (("left", _REQUIRED), ("mode", _REQUIRED), ("right", _REQUIRED)))
geometric = _rv("geometric", (0,), (("p", _REQUIRED),), "int64")
hypergeometric = _rv("hypergeometric", (0, 0, 0),
                     (("ngood", _REQUIRED), ("nbad", _REQUIRED), ("nsample", _REQUIRED)),
                     "int64")
halfnormal = _rv("halfnormal", (0, 0), (("loc", 0.0), ("scale", 1.0)),
                 cls=ScipyRandomVariable, scipy_name="halfnorm", arguments=_loc_scale)
pareto = _rv("pareto", (0, 0), (("b", _REQUIRED), ("scale", 1.0)), cls=ScipyRandomVariable,
             arguments=lambda b, scale: ((b,), {"scale": scale}))
gumbel = _rv("gumbel", (0, 0), (("loc", 0.0), ("scale", 1.0)), cls=ScipyRandomVariable,
             scipy_name="gumbel_r", arguments=_loc_scale)
cauchy = _rv("cauchy", (0, 0), (("loc", 0.0), ("scale", 1.0)), cls=ScipyRandomVariable,
             arguments=_loc_scale)
halfcauchy = _rv("halfcauchy", (0, 0), (("loc", 0.0), ("scale", 1.0)),
                 cls=ScipyRandomVariable, arguments=_loc_scale)
truncexpon = _rv("truncexpon", (0, 0, 0), (("b", _REQUIRED), ("loc", 0.0), ("scale", 1.0)),
                 cls=ScipyRandomVariable,
                 arguments=lambda b, loc, scale: ((b,), {"loc": loc, "scale": scale}))
t = _rv("t", (0, 0, 0), (("df", _REQUIRED), ("loc", 0.0), ("scale", 1.0)),
        cls=ScipyRandomVariable,
        arguments=lambda df, loc, scale: ((df,), {"loc": loc, "scale": scale}))
nbinom = _rv("negative_binomial", (0, 0), (("n", _REQUIRED), ("p", _REQUIRED)), "int64",
             cls=ScipyRandomVariable, scipy_name="nbinom")
negative_binomial = nbinom
betabinom = _rv("beta_binomial", (0, 0, 0),
                (("n", _REQUIRED), ("a", _REQUIRED), ("b", _REQUIRED)), "int64",
                cls=ScipyRandomVariable, scipy_name="betabinom")
gengamma = _rv("gengamma", (0, 0, 0), (("alpha", 1.0), ("p", 1.0), ("lambd", 1.0)),
               cls=ScipyRandomVariable,
               arguments=lambda alpha, p, lambd: ((np.asarray(alpha) / p, p),
                                                  {"scale": lambd}))
invgamma = InvGammaRV()
rayleigh = RayleighRV()
multivariate_normal = MvNormalRV()
dirichlet = DirichletRV()
multinomial = MultinomialRV()
categorical = CategoricalRV()

# the ops under their earlier names (``op(*params, size=..., rng=...)``)
uniform_rv, normal_rv, standard_normal_rv = uniform, normal, standard_normal
exponential_rv, gamma_rv, beta_rv = exponential, _gamma, beta
integers_rv, binomial_rv, poisson_rv, bernoulli_rv = integers, binomial, poisson, bernoulli


def gamma(shape, rate=None, scale=None, size=None, rng=None, dtype=None, *, name=None):
    """Gamma with shape ``shape`` and ``scale`` (numpy's parametrization): write
    ``gamma(shape, scale=s)``. As in PyTensor, a second argument given by position (or
    ``rate=``) is the rate, ``1 / scale``, and warns (FutureWarning) that it is deprecated in
    favour of ``scale``; giving neither or both is a ValueError."""
    if rate is not None and scale is not None:
        raise ValueError("gamma: Cannot specify both rate and scale (rate is 1 / scale); "
                         "give scale=")
    if rate is None and scale is None:
        raise ValueError("gamma: Must specify scale (e.g. gamma(shape, scale=1.0))")
    if rate is not None:
        warnings.warn("Gamma rate argument is deprecated and will stop working, use scale "
                      "instead: gamma(shape, scale=1 / rate)", FutureWarning, stacklevel=2)
        scale = true_div(1.0, rate)
    return _gamma(shape, scale, size=size, rng=rng, dtype=dtype, name=name)


def chisquare(df, size=None, rng=None, dtype=None):
    """Chi-square with ``df`` degrees of freedom (a gamma of shape df / 2 and scale 2)."""
    return _gamma(true_div(df, 2.0), 2.0, size=size, rng=rng, dtype=dtype)


def choice(a, size=None, replace=True, p=None, rng=None, dtype=None):
    """Samples of ``a`` (an int n: ``range(n)``; or an array: entries along its first axis),
    weighted by ``p`` if given."""
    a = as_tensor_variable(a)
    if a.type.ndim == 0 and not a.type.dtype.startswith(("int", "uint")):
        raise TypeError(f"choice: a scalar a must be an integer (the number of choices), got "
                        f"{a.type.dtype}")
    params = [a] if p is None else [a, as_tensor_variable(p)]
    if p is not None and params[1].type.ndim != 1:
        # a ValueError, as numpy's (and PyTensor's) choice raises for p of another shape
        raise ValueError(f"choice: p must be 1-dimensional (one probability per entry of a), "
                         f"got {params[1].type}")
    op = ChoiceRV(replace, a.type.ndim, p is not None)
    return op(*params, size=size, rng=rng, dtype=dtype)


def permutation(x, size=None, rng=None, dtype=None):
    """A random permutation of ``range(x)`` for an integer ``x``, else of ``x``'s first axis;
    ``size`` gives that many independent permutations."""
    x = as_tensor_variable(x)
    if x.type.ndim == 0 and not x.type.dtype.startswith(("int", "uint")):
        raise TypeError(f"permutation: a scalar x must be an integer, got {x.type.dtype}")
    return PermutationRV(x.type.ndim)(x, size=size, rng=rng, dtype=dtype)
