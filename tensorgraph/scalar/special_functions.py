"""The special functions of statistical models: incomplete gamma and beta functions and their
inverses, modified Bessel functions, the normal distribution function, Owen's T, Gauss's
hypergeometric function. PyMC's distributions (Gamma, Beta, StudentT, VonMises, SkewNormal,
censored and truncated ones) call them in their log-densities and CDFs.

``scipy.special`` is the reference: each op's ``impl`` calls scipy's function of the same name
(the C of every linker calls the same compiled functions, ``tensorgraph.link.c.ops.
special_functions``). Dtypes follow PyTensor: float32 inputs give float32, integer inputs the
float of ``upgrade_to_float`` (int8/int16 -> float32, wider -> float64); complex is refused.

Gradients are closed forms in the op's own functions where one exists (every derivative with
respect to the argument ``x``). The derivatives of ``gammainc``/``gammaincc``/``betainc`` in
their shape parameters, and those of ``hyp2f1`` in a, b and c, are series computed by the ops
of ``special_derivatives`` (bounded: nan where they do not converge). Derivatives with respect
to the order of the Bessel functions and the first arguments of the inverse functions are
not implemented: ``grad`` raises ``NullTypeGradError`` naming the op and the input.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.scalar.basic import _tensor_op, upgrade_to_float_no_complex
from tensorgraph.scalar.math import FloatOp

__all__ = [
    "ScipyFunction", "GammaInc", "GammaIncC", "GammaIncInv", "GammaIncCInv", "BetaInc",
    "BetaIncInv", "I0", "I1", "I0e", "I1e", "Ive", "Kve", "Ndtr", "LogNdtr", "OwensT", "Owens_t",
    "Hyp2F1", "J0", "J1", "Jv", "GammaU", "GammaL",
    "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "betainc", "betaincinv", "i0",
    "i1", "i0e", "i1e", "ive", "kve", "ndtr", "log_ndtr", "owens_t", "hyp2f1", "j0", "j1",
    "jv", "gammau", "gammal",
]


def _scipy(name):
    """A function of ``scipy.special``, imported when first needed (scipy is slow to import)."""
    import scipy.special

    return getattr(scipy.special, name)


def _c(value, like):
    """A constant of ``like``'s float dtype (so gradients keep float32 graphs float32)."""
    return _tensor_op("constant")(np.asarray(value, dtype=like.dtype))


def _not_implemented(op, position, x, why):
    return _tensor_op("gradient").grad_not_implemented(op, position, x, why)


class ScipyFunction(FloatOp):
    """An op computing ``scipy.special.<scipy_name>`` elementwise, in the output's dtype."""

    scipy_name = ""
    output_rule = staticmethod(upgrade_to_float_no_complex)

    @property
    def name(self) -> str:
        return self.scipy_name

    def compute(self, *arrays):
        (dtype,) = self.output_dtypes(*[a.dtype.name for a in arrays])
        # scipy has no float16 loops (float32 comes back): round to the output's dtype
        return np.asarray(_scipy(self.scipy_name)(*arrays), dtype=dtype)


class GammaInc(ScipyFunction):
    """The regularized lower incomplete gamma function P(k, x)."""

    nin, scipy_name = 2, "gammainc"

    def L_op(self, inputs, outputs, output_grads):
        (k, x), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        dx = m.exp(m.sub(m.sub(m.xlogy(m.sub(k, _c(1, x)), x), x), m.gammaln(k)))
        return [m.mul(gz, m.gammainc_dk(k, x)), m.mul(gz, dx)]


class GammaIncC(ScipyFunction):
    """The regularized upper incomplete gamma function Q(k, x) = 1 - P(k, x)."""

    nin, scipy_name = 2, "gammaincc"

    def L_op(self, inputs, outputs, output_grads):
        (k, x), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        dx = m.exp(m.sub(m.sub(m.xlogy(m.sub(k, _c(1, x)), x), x), m.gammaln(k)))
        return [m.neg(m.mul(gz, m.gammainc_dk(k, x))), m.neg(m.mul(gz, dx))]


def _inverse_gamma_slope(k, x):
    """dx/dy of x = P^-1(k, y): 1 / (dP/dx at x)."""
    m = _tensor_op("math")
    return m.exp(m.sub(m.add(x, m.gammaln(k)), m.xlogy(m.sub(k, _c(1, x)), x)))


class GammaIncInv(ScipyFunction):
    """The inverse of ``gammainc`` in its second argument: x with P(k, x) = y."""

    nin, scipy_name = 2, "gammaincinv"

    def L_op(self, inputs, outputs, output_grads):
        (k, _y), (x,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        return [_not_implemented(self, 0, k, "Only the derivative in y is implemented."),
                m.mul(gz, _inverse_gamma_slope(k, x))]


class GammaIncCInv(ScipyFunction):
    """The inverse of ``gammaincc`` in its second argument: x with Q(k, x) = y."""

    nin, scipy_name = 2, "gammainccinv"

    def L_op(self, inputs, outputs, output_grads):
        (k, _y), (x,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        return [_not_implemented(self, 0, k, "Only the derivative in y is implemented."),
                m.neg(m.mul(gz, _inverse_gamma_slope(k, x)))]


def _log_beta_density(a, b, x):
    """log of x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of betainc in x (0 * log 0 is 0)."""
    m = _tensor_op("math")
    one = _c(1, x)
    log_beta = m.sub(m.add(m.gammaln(a), m.gammaln(b)), m.gammaln(m.add(a, b)))
    return m.sub(m.add(m.xlogy(m.sub(a, one), x), m.xlog1py(m.sub(b, one), m.neg(x))), log_beta)


class _UnregularizedGamma(ScipyFunction):
    """An incomplete gamma function times Gamma(k): ``regularized`` is scipy's P or Q."""

    nin = 2
    regularized = ""  # "gammainc" (P, the lower) or "gammaincc" (Q, the upper)

    def compute(self, k, x):
        (dtype,) = self.output_dtypes(k.dtype.name, x.dtype.name)
        return np.asarray(_scipy(self.regularized)(k, x) * _scipy("gamma")(k), dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        # lower: d/dx = x^(k-1) e^-x, d/dk = Gamma(k) (P psi(k) + dP/dk);
        # upper: both with the other sign (Q = 1 - P), d/dk = Gamma(k) (Q psi(k) - dP/dk)
        (k, x), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        upper = self.regularized == "gammaincc"
        dx = m.exp(m.sub(m.xlogy(m.sub(k, _c(1, x)), x), x))
        regularized = getattr(m, self.regularized)(k, x)
        dk = m.mul(m.gamma(k), (m.sub if upper else m.add)(m.mul(regularized, m.psi(k)),
                                                            m.gammainc_dk(k, x)))
        return [m.mul(gz, dk), m.mul(gz, m.neg(dx) if upper else dx)]


class GammaU(_UnregularizedGamma):
    """The upper incomplete gamma function Gamma(k, x) = Q(k, x) Gamma(k) (not regularized)."""

    scipy_name, regularized = "gammau", "gammaincc"


class GammaL(_UnregularizedGamma):
    """The lower incomplete gamma function gamma(k, x) = P(k, x) Gamma(k) (not regularized)."""

    scipy_name, regularized = "gammal", "gammainc"


class BetaInc(ScipyFunction):
    """The regularized incomplete beta function I_x(a, b)."""

    nin, scipy_name = 3, "betainc"

    def L_op(self, inputs, outputs, output_grads):
        (a, b, x), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        # I_x(a, b) = 1 - I_(1-x)(b, a) gives the derivative in b from the one in a
        db = m.neg(m.betainc_da(b, a, m.sub(_c(1, x), x)))
        return [m.mul(gz, m.betainc_da(a, b, x)), m.mul(gz, db),
                m.mul(gz, m.exp(_log_beta_density(a, b, x)))]


class BetaIncInv(ScipyFunction):
    """The inverse of ``betainc`` in x: x with I_x(a, b) = y."""

    nin, scipy_name = 3, "betaincinv"

    def L_op(self, inputs, outputs, output_grads):
        (a, b, _y), (x,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        why = "Only the derivative in y is implemented."
        return [_not_implemented(self, 0, a, why), _not_implemented(self, 1, b, why),
                m.mul(gz, m.exp(m.neg(_log_beta_density(a, b, x))))]


class I0(ScipyFunction):
    """The modified Bessel function of the first kind of order 0."""

    scipy_name = "i0"

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.mul(output_grads[0], m.i1(inputs[0]))]


class I1(ScipyFunction):
    """The modified Bessel function of the first kind of order 1."""

    scipy_name = "i1"

    def L_op(self, inputs, outputs, output_grads):
        # I1' = (I0 + I2) / 2 (no 0 / 0 at x = 0, as I0 - I1 / x would have)
        (x,), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        i2 = m.mul(m.ive(_c(2, x), x), m.exp(m.abs(x)))
        return [m.mul(gz, _c(0.5, x), m.add(m.i0(x), i2))]


class I0e(ScipyFunction):
    """``i0(x) * exp(-|x|)``, without overflow for large |x|."""

    scipy_name = "i0e"

    def L_op(self, inputs, outputs, output_grads):
        (x,), (z,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        return [m.mul(gz, m.sub(m.i1e(x), m.mul(m.sign(x), z)))]


class I1e(ScipyFunction):
    """``i1(x) * exp(-|x|)``, without overflow for large |x|."""

    scipy_name = "i1e"

    def L_op(self, inputs, outputs, output_grads):
        (x,), (z,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        slope = m.mul(_c(0.5, x), m.add(m.i0e(x), m.ive(_c(2, x), x)))
        return [m.mul(gz, m.sub(slope, m.mul(m.sign(x), z)))]


_NO_ORDER_DERIVATIVE = ("The derivative with respect to the order v has no closed form and is "
                        "not implemented.")


class Ive(ScipyFunction):
    """``iv(v, x) * exp(-|x|)``: the scaled modified Bessel function of the first kind of real
    order v."""

    nin, scipy_name = 2, "ive"

    def L_op(self, inputs, outputs, output_grads):
        (v, x), (z,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        one = _c(1, z)
        side = m.mul(_c(0.5, z), m.add(m.ive(m.sub(v, one), x), m.ive(m.add(v, one), x)))
        return [_not_implemented(self, 0, v, _NO_ORDER_DERIVATIVE),
                m.mul(gz, m.sub(side, m.mul(m.sign(x), z)))]


class Kve(ScipyFunction):
    """``kv(v, x) * exp(x)``: the scaled modified Bessel function of the second kind of real
    order v."""

    nin, scipy_name = 2, "kve"

    def L_op(self, inputs, outputs, output_grads):
        (v, x), (z,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        one = _c(1, z)
        side = m.mul(_c(0.5, z), m.add(m.kve(m.sub(v, one), x), m.kve(m.add(v, one), x)))
        return [_not_implemented(self, 0, v, _NO_ORDER_DERIVATIVE),
                m.mul(gz, m.sub(z, side))]


class J0(ScipyFunction):
    """The Bessel function of the first kind of order 0."""

    scipy_name = "j0"

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.neg(m.mul(output_grads[0], m.j1(inputs[0])))]


class J1(ScipyFunction):
    """The Bessel function of the first kind of order 1."""

    scipy_name = "j1"

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        return [m.mul(gz, _c(0.5, x), m.sub(m.j0(x), m.jv(_c(2, x), x)))]


class Jv(ScipyFunction):
    """The Bessel function of the first kind of real order v."""

    nin, scipy_name = 2, "jv"

    def L_op(self, inputs, outputs, output_grads):
        (v, x), (z,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        one = _c(1, z)
        dx = m.mul(_c(0.5, z), m.sub(m.jv(m.sub(v, one), x), m.jv(m.add(v, one), x)))
        return [_not_implemented(self, 0, v, _NO_ORDER_DERIVATIVE), m.mul(gz, dx)]


_INV_SQRT_2PI = 1 / np.sqrt(2 * np.pi)


class Ndtr(ScipyFunction):
    """The standard normal distribution function."""

    scipy_name = "ndtr"

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        density = m.mul(_c(_INV_SQRT_2PI, x), m.exp(m.mul(_c(-0.5, x), m.sqr(x))))
        return [m.mul(gz, density)]


class LogNdtr(ScipyFunction):
    """log of the standard normal distribution function, accurate far in both tails."""

    scipy_name = "log_ndtr"

    def L_op(self, inputs, outputs, output_grads):
        # density / ndtr = sqrt(2 / pi) / erfcx(-x / sqrt(2)): no under- or overflow
        (x,), (gz,) = inputs, output_grads
        m = _tensor_op("math")
        scaled = m.erfcx(m.mul(_c(-1 / np.sqrt(2), x), x))
        return [m.true_div(m.mul(gz, _c(np.sqrt(2 / np.pi), x)), scaled)]


class OwensT(ScipyFunction):
    """Owen's T function T(h, a), the probability of the event X > h and 0 < Y < a X for
    independent standard normal X and Y (the skew-normal's CDF)."""

    nin, scipy_name = 2, "owens_t"

    def L_op(self, inputs, outputs, output_grads):
        (h, a), (z,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        h2 = m.sqr(h)
        dh = m.mul(_c(-0.5 * _INV_SQRT_2PI, z), m.exp(m.mul(_c(-0.5, z), h2)),
                   m.erf(m.mul(_c(1 / np.sqrt(2), z), a, h)))
        one_a2 = m.add(_c(1, z), m.sqr(a))
        da = m.true_div(m.exp(m.mul(_c(-0.5, z), h2, one_a2)),
                        m.mul(_c(2 * np.pi, z), one_a2))
        return [m.mul(gz, dh), m.mul(gz, da)]


class Hyp2F1(ScipyFunction):
    """Gauss's hypergeometric function 2F1(a, b; c; z)."""

    nin, scipy_name = 4, "hyp2f1"

    def L_op(self, inputs, outputs, output_grads):
        (a, b, c, z), (out,), (gz,) = inputs, outputs, output_grads
        m = _tensor_op("math")
        one = _c(1, out)
        dz = m.mul(m.true_div(m.mul(a, b), c),
                   m.hyp2f1(m.add(a, one), m.add(b, one), m.add(c, one), z))
        # in the parameters: series (special_derivatives.Hyp2F1Der), nan where not summed
        return [m.mul(gz, m.hyp2f1_der(a, b, c, z, wrt=i)) for i in range(3)] + \
            [m.mul(gz, dz)]


gammainc = GammaInc()
gammaincc = GammaIncC()
gammaincinv = GammaIncInv()
gammainccinv = GammaIncCInv()
betainc = BetaInc()
betaincinv = BetaIncInv()
i0 = I0()
i1 = I1()
i0e = I0e()
i1e = I1e()
ive = Ive()
kve = Kve()
ndtr = Ndtr()
log_ndtr = LogNdtr()
owens_t = OwensT()
hyp2f1 = Hyp2F1()
j0 = J0()
j1 = J1()
jv = Jv()
gammau = GammaU()
gammal = GammaL()

#: PyTensor's class name (the PyTensor bridge finds scalar ops by class name)
Owens_t = OwensT
