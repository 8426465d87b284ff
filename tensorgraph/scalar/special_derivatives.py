"""Derivatives of the incomplete gamma and beta functions with respect to their shape
parameters, and of Gauss's hypergeometric function in its parameters, which have no closed
form: ``gammainc_dk(k, x)`` is dP(k, x)/dk, ``betainc_da(a, b, x)`` is dI_x(a, b)/da (dI/db
is ``-betainc_da(b, a, 1 - x)``, from I_x(a, b) = 1 - I_(1-x)(b, a)) and
``Hyp2F1Der(wrt)(a, b, c, z)`` is d2F1(a, b; c; z)/da, /db or /dc (``wrt`` 0, 1, 2). PyMC's
Gamma, Beta, StudentT and censored distributions need them for gradients in their shape
parameters.

How (the same algorithm in ``perform`` and in C, ``tensorgraph/link/c/ops/
special_derivatives.h``): each function is computed by the series or continued fraction
that evaluates it well (Numerical Recipes' choice: the power series of P where
``x < k + 1``, else the continued fraction of Q = 1 - P; the continued fraction of I_x(a, b)
where ``x < (a + 1) / (a + b + 2)``, else that of I_(1-x)(b, a)), carrying the derivative
with respect to the shape parameters along with each value (forward-mode differentiation of
the iteration). At most ``MAX_TERMS`` terms: an element that has not converged by then is
nan (never a hang). Accuracy: about 1e-13 relative where the derivative is not tiny next to
the function (it is the difference of nearby quantities in the far tails).

2F1's derivatives (``hyp2f1_der_scalar``; ``tg_sfd_hyp2f1_der`` in C, the same in Numba's
``link/numba/elemwise.py`` and JAX's ``link/jax/elemwise.py``) sum the derivative of a power
series, term by term: t_(k+1) = t_k r_k with r_k = (a+k)(b+k) z / ((c+k)(k+1)), so
dt_(k+1) = dt_k r_k + t_k dr_k, dr_k written out (no division by a+k or b+k: at a
non-positive integer a the terms end but the derivative's do not, and are summed). The
series is that of one of four forms of 2F1 (``_hyp2f1_forms``): its own, Pfaff's two
(1 - z)^-a 2F1(a, c - b; c; w) and (1 - z)^-b 2F1(c - a, b; c; w), w = z / (z - 1), and
Euler's (1 - z)^(c - a - b) 2F1(c - a, c - b; c; z). Their terms cancel very differently
(z < 0 with large a, b: some sum terms of 1e17 times the result), so the forms are tried in
a fixed order and the first whose sum of absolute values is within ``HYP2F1_SPREAD`` of its
result is taken, else the one that spreads least. Where it is summed: the series' domain,
as in PyTensor: |z| < 1, or |z| = 1 with c > a + b, or any z when the derivative's series
ends (``b`` a non-positive integer for d/da, ``a`` for d/db, either for d/dc). Elsewhere the
element is nan (no transformation is used for z < -1), and so is a pole (c a non-positive
integer the series reaches). A series stops when the tail, estimated from the last term and
the ratio of the terms (|dt| q / (1 - q)), is below 1e-16 of the sum twice in a row, once
past the indices where the ratios change sign; at most ``HYP2F1_MAX_TERMS`` terms (z near 1
needs many: about 1e5 at z = 0.9997), after which that form has failed.
"""

from __future__ import annotations

import math

import numpy as np

from tensorgraph.scalar.basic import _tensor_op, upgrade_to_float_no_complex
from tensorgraph.scalar.math import FloatOp

__all__ = ["GammaIncDk", "BetaIncDa", "Hyp2F1Der", "gammainc_dk", "betainc_da", "MAX_TERMS",
           "HYP2F1_MAX_TERMS", "gammainc_dk_scalar", "betainc_da_scalar", "hyp2f1_der_scalar"]

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


#: the most terms of 2F1's derivative series an element may take (PyTensor's bound too)
HYP2F1_MAX_TERMS = 1_000_000


#: a form whose sum spreads less than this times its value is taken without trying the others
HYP2F1_SPREAD = 1e4


def _hyp2f1_series(a, b, c, z, da, db, dc):
    """(2F1(a, b; c; z), its derivative in the direction (da, db, dc) of (a, b, c), the sums
    of the terms' and of their derivatives' absolute values) by the power series, or None
    where it is not summed (see the module docstring)."""
    size = abs(z)
    converges = size < 1 or (size == 1 and c > a + b)
    # from this index on no ratio changes sign and no term can vanish
    settled = max(-a, -b, -c, 0.0) + 1
    term, dterm, value, total, small = 1.0, 0.0, 1.0, 0.0, False
    spread, dspread = 1.0, 0.0
    for k in range(HYP2F1_MAX_TERMS):
        ak, bk, ck = a + k, b + k, c + k
        if ck == 0:
            return None  # a pole, met before the series ended
        den = ck * (k + 1)
        ratio = ak * bk * z / den
        # d ratio / d(a, b, c) written out: no division by a + k or b + k, which may be 0
        slope = (da * bk + db * ak) * z / den - dc * ratio / ck
        term, dterm = term * ratio, dterm * ratio + term * slope
        value += term
        total += dterm
        spread += abs(term)
        dspread += abs(dterm)
        if term == 0 and dterm == 0:
            return value, total, spread, dspread  # the series (and the derivative's) ended
        if not (math.isfinite(total) and math.isfinite(value)):
            return None
        if k < settled:
            continue
        if not converges:
            return None  # past where it could end: it diverges
        q = abs(ratio) if size == 1 else max(abs(ratio), size)
        was_small = small
        small = q < 1 and abs(dterm) * q <= _EPS * (1 - q) * abs(total) and \
            abs(term) * q <= _EPS * (1 - q) * abs(value)
        if small and was_small:
            return value, total, spread, dspread
    return None


def _hyp2f1_forms(a, b, c, z):
    """The forms of 2F1 to try, best first: 0 its series, 1 and 2 Pfaff's transformations
    (1 - z)^-a 2F1(a, c - b; c; w) and (1 - z)^-b 2F1(c - a, b; c; w), w = z / (z - 1),
    3 Euler's (1 - z)^(c - a - b) 2F1(c - a, c - b; c; z); each only where its series
    converges, and only inside the domain of the series of 2F1."""
    if abs(z) < 1:
        if z < 0:
            return (1, 2, 3, 0)
        return (0, 3, 1, 2) if z < 0.5 else (0, 3)
    if z == -1 and c > a + b:
        return (1, 2, 0)
    return (0,)


#: per form: (p, q, x) as (a, b, c, z) give them, the direction of (p, q, c) per wrt, and the
#: derivative of the exponent of (1 - z) per wrt
_HYP2F1_DIRECTIONS = {0: ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
                      1: ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 1.0, 1.0)),
                      2: ((-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 0.0, 1.0)),
                      3: ((-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (1.0, 1.0, 1.0))}
_HYP2F1_EXPONENT = {0: (0.0, 0.0, 0.0), 1: (-1.0, 0.0, 0.0), 2: (0.0, -1.0, 0.0),
                    3: (-1.0, -1.0, 1.0)}


def _hyp2f1_form(a, b, c, z, wrt, form):
    """(d2F1/d(wrt), its spread: the sum of the absolute values it is the sum of, over its
    absolute value) by one form, or None where its series is not summed."""
    if form == 0:
        p, q, x, exponent = a, b, z, 0.0
    elif form == 1:
        p, q, x, exponent = a, c - b, z / (z - 1), -a
    elif form == 2:
        p, q, x, exponent = c - a, b, z / (z - 1), -b
    else:
        p, q, x, exponent = c - a, c - b, z, c - a - b
    result = _hyp2f1_series(p, q, c, x, *_HYP2F1_DIRECTIONS[form][wrt])
    if result is None:
        return None
    value, total, spread, dspread = result
    slope = 0.0 if form == 0 else _HYP2F1_EXPONENT[form][wrt] * math.log1p(-z)
    front = 1.0 if form == 0 else (1 - z) ** exponent
    derivative = front * (total + slope * value)
    spread = front * (dspread + abs(slope) * spread)
    if derivative == 0:
        return derivative, (0.0 if spread == 0 else math.inf)
    return derivative, spread / abs(derivative)


def hyp2f1_der_scalar(a: float, b: float, c: float, z: float, wrt: int) -> float:
    """d2F1(a, b; c; z)/d(a, b or c, by ``wrt`` 0, 1, 2) for floats (see the module
    docstring)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c) and math.isfinite(z)):
        return math.nan
    if z == 0:
        return 0.0
    best, best_spread = math.nan, math.inf
    for form in _hyp2f1_forms(a, b, c, z):
        result = _hyp2f1_form(a, b, c, z, wrt, form)
        if result is None:
            continue
        derivative, spread = result
        if math.isnan(best) or spread < best_spread:
            best, best_spread = derivative, spread
        if spread <= HYP2F1_SPREAD:
            break
    return best


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


class Hyp2F1Der(_Series):
    """d2F1(a, b; c; z)/da, /db or /dc (``wrt`` 0, 1 or 2), the derivatives of ``hyp2f1`` in
    its parameters. Its own derivative in z is that of (a b / c) 2F1(a+1, b+1; c+1; z) in
    the same parameter; in the parameters it is not implemented."""

    __props__ = ("wrt",)
    nin = 4

    def __init__(self, wrt: int):
        if wrt not in (0, 1, 2):
            raise ValueError(f"Hyp2F1Der differentiates in a, b or c (wrt 0, 1 or 2), not {wrt!r}")
        self.wrt = wrt

    @property
    def name(self) -> str:
        return f"hyp2f1_der{{{'abc'[self.wrt]}}}"

    def compute(self, a, b, c, z):
        (dtype,) = self.output_dtypes(a.dtype.name, b.dtype.name, c.dtype.name, z.dtype.name)
        values = np.vectorize(hyp2f1_der_scalar, otypes=["float64"])(
            a.astype("float64"), b.astype("float64"), c.astype("float64"),
            z.astype("float64"), self.wrt)
        return np.asarray(values, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        # d/dz d2F1/dp = d/dp [(a b / c) 2F1(a+1, b+1; c+1; z)]
        (a, b, c, z), (out,), (gz,) = inputs, outputs, output_grads
        gradient, m = _tensor_op("gradient"), _tensor_op("math")
        one = _tensor_op("constant")(np.asarray(1, dtype=out.dtype))
        up = [m.add(a, one), m.add(b, one), m.add(c, one), z]
        scale = m.true_div(m.mul(a, b), c)
        shifted = m.hyp2f1(*up)
        own = m.mul(scale, m.hyp2f1_der(*up, wrt=self.wrt))
        if self.wrt == 0:
            dz = m.add(m.mul(m.true_div(b, c), shifted), own)
        elif self.wrt == 1:
            dz = m.add(m.mul(m.true_div(a, c), shifted), own)
        else:
            dz = m.sub(own, m.mul(m.true_div(scale, c), shifted))
        why = "Second derivatives of hyp2f1 in its parameters are not implemented."
        return [gradient.grad_not_implemented(self, i, v, why) for i, v in
                enumerate((a, b, c))] + [m.mul(gz, dz)]


gammainc_dk = GammaIncDk()
betainc_da = BetaIncDa()
