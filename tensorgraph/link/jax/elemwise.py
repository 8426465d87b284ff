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


def _hyp2f1_der(op, in_dtypes, out_dtypes):
    """d2F1/da, /db or /dc (``sd.Hyp2F1Der``): the reference's series in double, every element
    at once in one ``lax.while_loop`` that runs until each element has ended, converged or
    failed (nan), at most ``HYP2F1_MAX_TERMS`` terms."""
    (out,) = out_dtypes
    if out not in ("float32", "float64"):
        raise NotImplementedError(f"{op.name} computing in {out}")
    wrt = int(op.wrt)

    def compute(a, b, c, z):
        import jax.numpy as jnp
        from jax import lax

        a, b, c, z = jnp.broadcast_arrays(*[jnp.asarray(v, dtype="float64") for v in (a, b, c, z)])
        finite = jnp.isfinite(a) & jnp.isfinite(b) & jnp.isfinite(c) & jnp.isfinite(z)
        # Pfaff's transformation for -1 <= z < 0: (1 - z)^-a 2F1(a, c - b; c; z / (z - 1))
        pfaff = (z >= -1) & (z < 0) & ((z > -1) | (c > a + b))
        x = jnp.where(pfaff, z / jnp.where(pfaff, z - 1, 1.0), z)
        q_param = jnp.where(pfaff, c - b, b)
        da = 1.0 if wrt == 0 else 0.0
        db = jnp.where(pfaff, (0.0, -1.0, 1.0)[wrt], (0.0, 1.0, 0.0)[wrt])
        dc = 1.0 if wrt == 2 else 0.0
        size = jnp.abs(x)
        converges = (size < 1) | ((size == 1) & (c > a + q_param))
        settled = jnp.maximum(jnp.maximum(-a, -q_param), jnp.maximum(-c, 0.0)) + 1
        zeros, ones = jnp.zeros_like(a), jnp.ones_like(a)
        # status: 0 running, 1 summed, 2 failed
        status = jnp.where(finite, 0, 2).astype("int8")

        def running(state):
            k, *_, status = state
            return (k < sd.HYP2F1_MAX_TERMS) & jnp.any(status == 0)

        def step(state):
            k, term, dterm, value, total, small, status = state
            kf = k.astype("float64")
            ak, bk, ck = a + kf, q_param + kf, c + kf
            pole = ck == 0
            den = jnp.where(pole, 1.0, ck) * (kf + 1)
            ratio = ak * bk * x / den
            slope = (da * bk + db * ak) * x / den - dc * ratio / jnp.where(pole, 1.0, ck)
            new_term, new_dterm = term * ratio, dterm * ratio + term * slope
            new_value, new_total = value + new_term, total + new_dterm
            ended = (new_term == 0) & (new_dterm == 0)
            broken = pole | ~(jnp.isfinite(new_total) & jnp.isfinite(new_value))
            past = kf >= settled
            q = jnp.where(size == 1, jnp.abs(ratio), jnp.maximum(jnp.abs(ratio), size))
            new_small = past & (q < 1) & \
                (jnp.abs(new_dterm) * q <= sd._EPS * (1 - q) * jnp.abs(new_total)) & \
                (jnp.abs(new_term) * q <= sd._EPS * (1 - q) * jnp.abs(new_value))
            new_status = jnp.where(
                pole, 2, jnp.where(ended, 1, jnp.where(broken | (past & ~converges), 2,
                                                         jnp.where(new_small & small, 1, 0))))
            live = status == 0

            def keep(new, old):
                return jnp.where(live, new, old)
            return (k + 1, keep(new_term, term), keep(new_dterm, dterm), keep(new_value, value),
                    keep(new_total, total), keep(new_small, small),
                    keep(new_status.astype("int8"), status))

        state = (jnp.asarray(0, dtype="int64"), ones, zeros, ones, zeros,
                 jnp.zeros(a.shape, dtype=bool), status)
        _, _, _, value, total, _, status = lax.while_loop(running, step, state)
        if wrt == 0:
            total = jnp.where(pfaff, total - jnp.log1p(-jnp.where(pfaff, z, 0.0)) * value, total)
        front = jnp.where(pfaff, (1 - jnp.where(pfaff, z, 0.0)) ** -a, 1.0)
        result = jnp.where(status == 1, front * total, jnp.nan)
        return jnp.where(finite & (z == 0), 0.0, result).astype(out)
    return compute


register_scalar(sd.Hyp2F1Der)(_hyp2f1_der)
