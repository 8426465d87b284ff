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


def _hyp2f1_series(p, q, c, x, dp, dq, dc, active):
    """The reference's ``_hyp2f1_series`` for every element at once, in one
    ``lax.while_loop`` that runs until each active element has ended, converged or failed:
    (value, derivative, their spreads, summed)."""
    import jax.numpy as jnp
    from jax import lax

    size = jnp.abs(x)
    converges = (size < 1) | ((size == 1) & (c > p + q))
    settled = jnp.maximum(jnp.maximum(-p, -q), jnp.maximum(-c, 0.0)) + 1
    zeros, ones = jnp.zeros_like(p), jnp.ones_like(p)
    # status: 0 running, 1 summed, 2 failed (or not asked for)
    status = jnp.where(active, 0, 2).astype("int8")

    def running(state):
        return (state[0] < sd.HYP2F1_MAX_TERMS) & jnp.any(state[-1] == 0)

    def step(state):
        k, term, dterm, value, total, spread, dspread, small, status = state
        kf = k.astype("float64")
        pk, qk, ck = p + kf, q + kf, c + kf
        pole = ck == 0
        safe_ck = jnp.where(pole, 1.0, ck)
        den = safe_ck * (kf + 1)
        ratio = pk * qk * x / den
        slope = (dp * qk + dq * pk) * x / den - dc * ratio / safe_ck
        new_term, new_dterm = term * ratio, dterm * ratio + term * slope
        new_value, new_total = value + new_term, total + new_dterm
        ended = (new_term == 0) & (new_dterm == 0)
        broken = ~(jnp.isfinite(new_total) & jnp.isfinite(new_value))
        past = kf >= settled
        r = jnp.where(size == 1, jnp.abs(ratio), jnp.maximum(jnp.abs(ratio), size))
        new_small = past & (r < 1) & \
            (jnp.abs(new_dterm) * r <= sd._EPS * (1 - r) * jnp.abs(new_total)) & \
            (jnp.abs(new_term) * r <= sd._EPS * (1 - r) * jnp.abs(new_value))
        new_status = jnp.where(
            pole, 2, jnp.where(ended, 1, jnp.where(broken | (past & ~converges), 2,
                                                     jnp.where(new_small & small, 1, 0))))
        live = status == 0

        def keep(new, old):
            return jnp.where(live, new, old)
        return (k + 1, keep(new_term, term), keep(new_dterm, dterm), keep(new_value, value),
                keep(new_total, total), keep(spread + jnp.abs(new_term), spread),
                keep(dspread + jnp.abs(new_dterm), dspread), keep(new_small, small),
                keep(new_status.astype("int8"), status))

    state = (jnp.asarray(0, dtype="int64"), ones, zeros, ones, zeros, ones, zeros,
             jnp.zeros(p.shape, dtype=bool), status)
    *_, value, total, spread, dspread, _, status = lax.while_loop(running, step, state)
    return value, total, spread, dspread, status == 1


def _hyp2f1_der(op, in_dtypes, out_dtypes):
    """d2F1/da, /db or /dc (``sd.Hyp2F1Der``): the reference's forms of the series in double
    (``hyp2f1_der_scalar``), each summed for every element that may use it, and the same
    choice of form per element."""
    (out,) = out_dtypes
    if out not in ("float32", "float64"):
        raise NotImplementedError(f"{op.name} computing in {out}")
    wrt = int(op.wrt)

    def compute(a, b, c, z):
        import jax.numpy as jnp

        a, b, c, z = jnp.broadcast_arrays(*[jnp.asarray(v, dtype="float64") for v in (a, b, c, z)])
        finite = jnp.isfinite(a) & jnp.isfinite(b) & jnp.isfinite(c) & jnp.isfinite(z)
        live = finite & (z != 0)
        inside, negative = jnp.abs(z) < 1, z < 0
        at_minus_one = (z == -1) & (c > a + b)
        # the order of the forms per element (-1: none), as _hyp2f1_forms
        order = [jnp.where(inside, jnp.where(negative, 1, 0), jnp.where(at_minus_one, 1, 0)),
                 jnp.where(inside, jnp.where(negative, 2, 3), jnp.where(at_minus_one, 2, -1)),
                 jnp.where(inside, jnp.where(negative, 3, jnp.where(z < 0.5, 1, -1)),
                           jnp.where(at_minus_one, 0, -1)),
                 jnp.where(inside & (negative | (z < 0.5)), jnp.where(negative, 0, 2), -1)]
        results = []
        w = z / jnp.where(z == 1, 2.0, z - 1)
        log1mz = jnp.log1p(-jnp.where(z < 1, z, 0.0))
        for form in range(4):
            used = live & jnp.any(jnp.stack([o == form for o in order]), axis=0)
            p = c - a if form in (2, 3) else a
            q = c - b if form in (1, 3) else b
            x = w if form in (1, 2) else z
            direction = sd._HYP2F1_DIRECTIONS[form][wrt]
            value, total, spread, dspread, summed = _hyp2f1_series(
                p, q, c, jnp.where(used, x, 0.0), *direction, used)
            exponent = (0.0 * a, -a, -b, c - a - b)[form]
            slope = sd._HYP2F1_EXPONENT[form][wrt] * log1mz
            front = jnp.where(used, (1 - jnp.where(used, z, 0.0)) ** exponent, 1.0)
            derivative = front * (total + slope * value) if form else total
            width = front * (dspread + jnp.abs(slope) * spread) if form else dspread
            ratio = jnp.where(derivative == 0, jnp.where(width == 0, 0.0, jnp.inf),
                              width / jnp.where(derivative == 0, 1.0, jnp.abs(derivative)))
            results.append((derivative, ratio, summed & used))
        best, best_spread = jnp.full_like(a, jnp.nan), jnp.full_like(a, jnp.inf)
        stopped = ~live
        for position in order:
            derivative = sum(jnp.where(position == f, r[0], 0.0) for f, r in enumerate(results))
            ratio = sum(jnp.where(position == f, r[1], 0.0) for f, r in enumerate(results))
            summed = jnp.any(jnp.stack([(position == f) & r[2] for f, r in enumerate(results)]),
                             axis=0)
            take = ~stopped & summed & (jnp.isnan(best) | (ratio < best_spread))
            best = jnp.where(take, derivative, best)
            best_spread = jnp.where(take, ratio, best_spread)
            stopped = stopped | (summed & (ratio <= sd.HYP2F1_SPREAD))
        return jnp.where(finite & (z == 0), 0.0, best).astype(out)
    return compute


register_scalar(sd.Hyp2F1Der)(_hyp2f1_der)
