"""Derivatives of the incomplete gamma and beta functions with respect to their shape
parameters, which have no closed form: ``gammainc_dk(k, x)`` is dP(k, x)/dk and
``betainc_da(a, b, x)`` is dI_x(a, b)/da (dI/db is ``-betainc_da(b, a, 1 - x)``, from
I_x(a, b) = 1 - I_(1-x)(b, a)). PyMC's Gamma, Beta, StudentT and censored distributions need
them for gradients in their shape parameters.

How (the same algorithm in ``perform`` and in C, ``tensorgraph/link/c/ops/
special_derivatives.h``): each function is computed by the series or continued fraction
that evaluates it well (Numerical Recipes' choice: the power series of P where
``x < k + 1``, else the continued fraction of Q = 1 - P; the continued fraction of I_x(a, b)
where ``x < (a + 1) / (a + b + 2)``, else that of I_(1-x)(b, a)), carrying the derivative
with respect to the shape parameters along with each value (forward-mode differentiation of
the iteration). At most ``MAX_TERMS`` terms: an element that has not converged by then is
nan (never a hang). Accuracy: about 1e-13 relative where the derivative is not tiny next to
the function (it is the difference of nearby quantities in the far tails).
"""

from __future__ import annotations

import math

import numpy as np

from tensorgraph.scalar.basic import _tensor_op, upgrade_to_float_no_complex
from tensorgraph.scalar.math import FloatOp

__all__ = ["GammaIncDk", "BetaIncDa", "gammainc_dk", "betainc_da", "MAX_TERMS",
           "gammainc_dk_scalar", "betainc_da_scalar"]

#: the most terms (series) or iterations (continued fractions) an element may take
MAX_TERMS = 10000
_EPS = 1e-16
_TINY = 1e-300


def _psi(x):
    import scipy.special

    return float(scipy.special.psi(x))


def gammainc_dk_scalar(k: float, x: float) -> float:
    """dP(k, x)/dk for one pair of floats (see the module docstring)."""
    if math.isnan(k) or math.isnan(x) or k <= 0 or x < 0 or math.isinf(k):
        return math.nan
    if x == 0 or math.isinf(x):
        return 0.0
    log_x = math.log(x)
    if x < k + 1:
        # P = sum_n t_n, t_n = exp(-x) x^(k+n) / Gamma(k+n+1);
        # dt_n/dk = t_n (log x - psi(k+n+1)), psi(k+n+2) = psi(k+n+1) + 1/(k+n+1)
        term = math.exp(k * log_x - x - math.lgamma(k + 1))
        digamma = _psi(k + 1)
        total = term * (log_x - digamma)
        for n in range(1, MAX_TERMS):
            term *= x / (k + n)
            digamma += 1 / (k + n)
            change = term * (log_x - digamma)
            total += change
            if abs(change) <= _EPS * abs(total) and term <= _EPS:
                return total
        return math.nan
    # Q = exp(k log x - x - lgamma(k)) h, h Lentz's continued fraction (value, d/dk)
    b, db = x + 1 - k, -1.0
    c, dc = 1 / _TINY, 0.0
    d, dd = 1 / b, db * -1 / (b * b)
    h, dh = d, dd
    for i in range(1, MAX_TERMS):
        an, dan = -i * (i - k), float(i)
        b += 2
        d, dd = an * d + b, dan * d + an * dd + db
        if abs(d) < _TINY:
            d = _TINY
        c, dc = b + an / c, db + (dan * c - an * dc) / (c * c)
        if abs(c) < _TINY:
            c = _TINY
        d, dd = 1 / d, -dd / (d * d)
        delta, ddelta = d * c, dd * c + d * dc
        h, dh, step = h * delta, dh * delta + h * ddelta, h * ddelta
        # the value may settle before its derivative (k an integer: a term vanishes)
        if abs(delta - 1) <= _EPS and abs(step) <= _EPS * abs(dh):
            front = math.exp(k * log_x - x - math.lgamma(k))
            # dQ/dk = front (h (log x - psi(k)) + dh); dP/dk = -dQ/dk
            return -front * (h * (log_x - _psi(k)) + dh)
    return math.nan


def _beta_fraction(a, b, x):
    """Lentz's continued fraction of I_x(a, b) / front, and its derivatives in a and b
    (NR's betacf with each quantity a triple (value, d/da, d/db)); None if it does not
    converge."""
    def div(p, q):
        return (p[0] / q[0], (p[1] * q[0] - p[0] * q[1]) / (q[0] * q[0]),
                (p[2] * q[0] - p[0] * q[2]) / (q[0] * q[0]))

    def mul(p, q):
        return (p[0] * q[0], p[1] * q[0] + p[0] * q[1], p[2] * q[0] + p[0] * q[2])

    def add(p, q):
        return (p[0] + q[0], p[1] + q[1], p[2] + q[2])

    def clamp(p):
        return (_TINY, p[1], p[2]) if abs(p[0]) < _TINY else p

    one = (1.0, 0.0, 0.0)
    qab, qap, qam = (a + b, 1.0, 1.0), (a + 1, 1.0, 0.0), (a - 1, 1.0, 0.0)
    c = one
    d = clamp(add(one, div((-(a + b) * x, -x, -x), qap)))
    d = div(one, d)
    h = d
    for m in range(1, MAX_TERMS):
        m2 = 2 * m
        # even step: m (b - m) x / ((qam + m2) (a + m2))
        num = (m * (b - m) * x, 0.0, m * x)
        den = mul((qam[0] + m2, 1.0, 0.0), (a + m2, 1.0, 0.0))
        aa = div(num, den)
        d = div(one, clamp(add(one, mul(aa, d))))
        c = clamp(add(one, div(aa, c)))
        h = mul(h, mul(d, c))
        # odd step: -(a + m) (qab + m) x / ((a + m2) (qap + m2))
        num = mul((-(a + m) * x, -x, 0.0), (qab[0] + m, 1.0, 1.0))
        den = mul((a + m2, 1.0, 0.0), (qap[0] + m2, 1.0, 0.0))
        aa = div(num, den)
        d = div(one, clamp(add(one, mul(aa, d))))
        c = clamp(add(one, div(aa, c)))
        delta = mul(d, c)
        steps = (h[0] * delta[1], h[0] * delta[2])
        h = mul(h, delta)
        # the value may settle before its derivatives (a term vanishes for integer b)
        if abs(delta[0] - 1) <= _EPS and all(abs(s) <= _EPS * abs(g) or s == 0
                                              for s, g in zip(steps, h[1:])):
            return h
    return None


def betainc_da_scalar(a: float, b: float, x: float) -> float:
    """dI_x(a, b)/da for one triple of floats (see the module docstring)."""
    if any(math.isnan(v) for v in (a, b, x)) or a <= 0 or b <= 0 or not 0 <= x <= 1 or \
            math.isinf(a) or math.isinf(b):
        return math.nan
    if x == 0 or x == 1:
        return 0.0
    swap = x >= (a + 1) / (a + b + 2)
    p, q, y = (b, a, 1 - x) if swap else (a, b, x)
    fraction = _beta_fraction(p, q, y)
    if fraction is None:
        return math.nan
    h, dh_dp, dh_dq = fraction
    digamma_sum = _psi(p + q)
    log_front = p * math.log(y) + q * math.log1p(-y) - math.log(p) - \
        (math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q))
    front = math.exp(log_front)
    dlog_dp = math.log(y) - 1 / p - _psi(p) + digamma_sum
    dlog_dq = math.log1p(-y) - _psi(q) + digamma_sum
    if swap:  # I_x(a, b) = 1 - I_y(b, a): d/da is minus the derivative in the second parameter
        return -front * (h * dlog_dq + dh_dq)
    return front * (h * dlog_dp + dh_dp)


class _Series(FloatOp):
    """An op computing ``scalar_function`` elementwise in double (the numpy reference),
    rounded to the output's dtype. Its own derivatives are not implemented."""

    output_rule = staticmethod(upgrade_to_float_no_complex)
    scalar_function = None

    def compute(self, *arrays):
        (dtype,) = self.output_dtypes(*[a.dtype.name for a in arrays])
        values = np.vectorize(type(self).scalar_function, otypes=["float64"])(
            *[a.astype("float64") for a in arrays])
        return np.asarray(values, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        gradient = _tensor_op("gradient")
        return [gradient.grad_not_implemented(self, i, x, "Second derivatives of the "
                                              "incomplete gamma and beta functions in their "
                                              "shape parameters are not implemented.")
                for i, x in enumerate(inputs)]


class GammaIncDk(_Series):
    """dP(k, x)/dk, the derivative of ``gammainc`` in its shape parameter."""

    nin = 2
    name = "gammainc_dk"
    scalar_function = staticmethod(gammainc_dk_scalar)


class BetaIncDa(_Series):
    """dI_x(a, b)/da, the derivative of ``betainc`` in its first shape parameter."""

    nin = 3
    name = "betainc_da"
    scalar_function = staticmethod(betainc_da_scalar)


gammainc_dk = GammaIncDk()
betainc_da = BetaIncDa()
