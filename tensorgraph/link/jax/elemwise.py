"""JAX for ``Elemwise``, ``DimShuffle`` and the scalar ops (fused ``Composite`` loops too).

The implementations are the array libraries' shared ones (``tensorgraph.link.array_elemwise``,
which says how dtypes follow the graph, not JAX's promotion rules); here is what JAX names or
computes its own way: integer powers (``jnp.power`` reads only the low six bits of an
exponent) and the special functions of ``jax.scipy.special``.
"""

from __future__ import annotations

from tensorgraph.link import array_elemwise, integer_rules
from tensorgraph.link.jax import (
    register,
    register_scalar,
    runtime_check,
    scalar_implementation,
)
from tensorgraph.scalar import math as sm
from tensorgraph.scalar import special_derivatives as sd
from tensorgraph.scalar import special_functions as sf
from tensorgraph.tensor import scalar_special as ss
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise


class JaxLibrary(array_elemwise.ArrayLibrary):
    """``jax.numpy`` as the shared implementations' array library."""

    name = "JAX"
    float_kinds = "fc"

    @property
    def xp(self):
        import jax.numpy as jnp

        return jnp

    def array(self, value, dtype=None):
        array = self.xp.asarray(value)
        return array if dtype is None else array.astype(dtype)

    def transpose(self, x, axes):
        return self.xp.transpose(x, axes)

    def integer_power(self, a, b, dtype):
        return integer_rules.power(self.xp, a, b, dtype)

    def scalar_implementation(self, op):
        return scalar_implementation(op)

    def runtime_check(self, bad, error, message):
        runtime_check(bad, error, message)


LIBRARY = JaxLibrary()
scalar_function = LIBRARY.scalar_function


def _special(name: str):
    """The function ``name`` of ``jax.scipy.special``, imported when called."""
    def call(*values):
        from jax.scipy import special

        return getattr(special, name)(*values)
    return call


def _sigmoid(x):
    import jax

    return jax.nn.sigmoid(x)


def _softplus(x):
    import jax

    return jax.nn.softplus(x)


def _erfcinv(x):
    import jax.numpy as jnp
    from jax.scipy.special import ndtri

    return -ndtri(x / 2) / jnp.sqrt(jnp.asarray(2.0, dtype=x.dtype))


def _trigamma(x):
    from jax.scipy.special import polygamma

    return polygamma(1, x)


def _igamma_grad_a(k, x):
    from jax import lax

    return lax.igamma_grad_a(k, x)


def _gammaln(x):
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    return jnp.where(x == -jnp.inf, -jnp.inf, gammaln(x))


_FLOAT_FUNCTIONS = {
    sm.Sigmoid: _sigmoid, sm.Softplus: _softplus, sm.Log1mexp: array_elemwise.log1mexp(LIBRARY),
    sm.Erf: _special("erf"), sm.Erfc: _special("erfc"), sm.Erfinv: _special("erfinv"),
    sm.Erfcinv: _erfcinv, sm.Gamma: _special("gamma"), sm.GammaLn: _gammaln,
    sm.Psi: _special("digamma"), sm.TriGamma: _trigamma,
    ss.Erfcx: _special("erfcx"),
    **{cls: _special(name) for cls, name in (
        (sf.GammaInc, "gammainc"), (sf.GammaIncC, "gammaincc"), (sf.BetaInc, "betainc"),
        (sf.I0, "i0"), (sf.I1, "i1"), (sf.I0e, "i0e"), (sf.I1e, "i1e"), (sf.Ndtr, "ndtr"),
        (sf.LogNdtr, "log_ndtr"), (sf.OwensT, "owens_t"), (sf.Hyp2F1, "hyp2f1"))},
    sd.GammaIncDk: _igamma_grad_a,
    sf.GammaU: lambda k, x: _special("gammaincc")(k, x) * _special("gamma")(k),
    sf.GammaL: lambda k, x: _special("gammainc")(k, x) * _special("gamma")(k),
}
#: the special functions jax.scipy.special does not have
_MISSING = (sf.GammaIncInv, sf.GammaIncCInv, sf.BetaIncInv, sf.Ive, sf.Kve, sd.BetaIncDa,
            sf.J0, sf.J1, sf.Jv)


def _missing(op, in_dtypes, out_dtypes):
    raise NotImplementedError(f"jax.scipy.special (and jax.lax) has no {op.name}")

register(Elemwise)(array_elemwise.elemwise(LIBRARY))
register(DimShuffle)(array_elemwise.dimshuffle(LIBRARY))
for _cls, _make in array_elemwise.registrations(LIBRARY, _FLOAT_FUNCTIONS).items():
    register_scalar(_cls)(_make)
for _cls in _MISSING:
    register_scalar(_cls)(_missing)
