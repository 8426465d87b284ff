"""Scalar ops of the less common elementwise functions: ``xlogy`` and ``xlog1py``, the
scaled complementary error function, polygamma, and the parts of complex numbers.

They follow ``tensorgraph.scalar``'s conventions (numpy/scipy implementation, dtype rule,
gradient written with tensor functions) and are applied by ``Elemwise`` through the functions of
``tensorgraph.tensor.math`` (``xlogy``, ``erfcx``, ``polygamma``, ``real``, ``imag``, ``conj``,
``angle``, ``complex``). ``XLogY`` and ``XLog1PY`` have C (``tensorgraph.link.c.ops.
scalar_special``), ``Erfcx`` calls scipy's compiled function (``tensorgraph.link.c.ops.
special_functions``); ``PolyGamma`` and the complex-number ops have none: their nodes run
numpy or scipy under every linker, and the C linkers run the rest of the graph around them.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.scalar.basic import COMPLEX, DISCRETE, ScalarOp, upgrade_to_float
from tensorgraph.scalar.math import FloatOp
from tensorgraph.tensor import math as _math
from tensorgraph.tensor.basic import constant

__all__ = ["XLogY", "XLog1PY", "Erfcx", "PolyGamma", "Real", "Imag", "Conj", "Angle", "Complex",
           "xlogy", "xlog1py", "erfcx", "polygamma", "real", "imag", "conj", "angle", "complex_"]

_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _zeros(x):
    """Zeros of ``x``'s shape and dtype, as a graph."""
    return _math.second(x, constant(np.zeros((), dtype=x.dtype)))


def _scipy(name):
    import scipy.special

    return getattr(scipy.special, name)


class XLogY(FloatOp):
    """``x * log(y)``, 0 where ``x`` is 0 whatever ``y`` is (``scipy.special.xlogy``). One op,
    not ``switch(x == 0, 0, x * log(y))``: its gradient is not masked where ``x`` is 0
    (``log(y)`` and ``x / y``, as scipy's derivative), and rewrites cannot distribute the
    product (``(a - 1) * log(y)`` into ``a log(y) - log(y)``, nan where ``log(y)`` is -inf)."""

    nin = 2
    name = "xlogy"

    def compute(self, x, y):
        return _scipy("xlogy")(x, y)

    def L_op(self, inputs, outputs, output_grads):
        (x, y), (gz,) = inputs, output_grads
        if x is y:  # xlogy(x, x): d/dx = log(x) + x / x, and x / x is 1 (also at x = 0)
            return [_math.mul(gz, _math.log(y)), gz]
        return [_math.mul(gz, _math.log(y)), _math.true_div(_math.mul(gz, x), y)]


class XLog1PY(FloatOp):
    """``x * log1p(y)``, 0 where ``x`` is 0 whatever ``y`` is (``scipy.special.xlog1py``);
    one op for the reasons of ``XLogY``."""

    nin = 2
    name = "xlog1py"

    def compute(self, x, y):
        return _scipy("xlog1py")(x, y)

    def L_op(self, inputs, outputs, output_grads):
        (x, y), (gz,) = inputs, output_grads
        return [_math.mul(gz, _math.log1p(y)), _math.true_div(_math.mul(gz, x), _math.add(y, 1))]


class Erfcx(FloatOp):
    """``exp(a**2) * erfc(a)``, without the overflow of computing it so for large ``a``."""

    def compute(self, x):
        return _scipy("erfcx")(x)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (z,), (gz,) = inputs, outputs, output_grads
        two_over_sqrt_pi = constant(np.asarray(2 / np.sqrt(np.pi), dtype=z.dtype))
        two = constant(np.asarray(2, dtype=z.dtype))
        return [_math.mul(gz, _math.sub(_math.mul(two, x, z), two_over_sqrt_pi))]


def _polygamma_out(n, x):
    if n not in DISCRETE or n == "bool":
        raise TypeError(f"polygamma: the order n must be discrete (an integer), got dtype {n}")
    if x in COMPLEX:
        raise TypeError(f"polygamma: complex argument not supported (x is {x})")
    return upgrade_to_float(x)


class PolyGamma(ScalarOp):
    """The ``n``-th derivative of the digamma function ``psi`` at ``x`` (``n`` a non-negative
    integer: 0 is ``psi``, 1 the trigamma function)."""

    nin = 2
    output_rule = staticmethod(_polygamma_out)

    def impl(self, n, x):
        (dtype,) = _polygamma_out(np.asarray(n).dtype.name, np.asarray(x).dtype.name)
        return np.asarray(_scipy("polygamma")(n, np.asarray(x, dtype=dtype)), dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        n, x = inputs
        # n is an integer: Elemwise gives it a zero gradient
        return [None, _math.mul(output_grads[0], _math.polygamma(_math.add(n, 1), x))]


def _real_out(*dtypes):
    return (_REAL_OF.get(dtypes[0], dtypes[0]),)


class Real(ScalarOp):
    """The real part (a real input is its own real part)."""

    nin = 1
    nfunc = staticmethod(np.real)
    output_rule = staticmethod(_real_out)

    def impl(self, z):
        return np.array(np.real(z))   # np.real of an array is a view: the output is new

    def L_op(self, inputs, outputs, output_grads):
        (z,), (gz,) = inputs, output_grads
        if z.dtype not in COMPLEX:
            return [gz]
        return [_math.complex(gz, _zeros(gz))]


class Imag(ScalarOp):
    """The imaginary part (zero for a real input)."""

    nin = 1
    nfunc = staticmethod(np.imag)
    output_rule = staticmethod(_real_out)

    def impl(self, z):
        return np.array(np.imag(z))

    def L_op(self, inputs, outputs, output_grads):
        (z,), (gz,) = inputs, output_grads
        if z.dtype not in COMPLEX:
            return [_zeros(gz)]
        return [_math.complex(_zeros(gz), gz)]


class Conj(ScalarOp):
    """The complex conjugate (a real input is its own conjugate)."""

    nin = 1
    nfunc = staticmethod(np.conj)

    def output_rule(self, *dtypes):
        return (dtypes[0],)

    def L_op(self, inputs, outputs, output_grads):
        return [_math.conj(output_grads[0])]


class Angle(ScalarOp):
    """The argument of a complex number in (-pi, pi] (0 or pi for a real one)."""

    nin = 1
    nfunc = staticmethod(np.angle)

    def output_rule(self, *dtypes):
        if dtypes[0] in COMPLEX:
            return _real_out(*dtypes)
        return upgrade_to_float(*dtypes)

    def impl(self, z):
        (dtype,) = self.output_rule(np.asarray(z).dtype.name)
        return np.asarray(np.angle(z), dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        # d angle = (re d im - im d re) / |z|^2; for a real input the angle is constant
        (z,), (gz,) = inputs, output_grads
        if z.dtype not in COMPLEX:
            return [_zeros(z)]
        re, im = _math.real(z), _math.imag(z)
        norm2 = _math.add(_math.sqr(re), _math.sqr(im))
        return [_math.complex(_math.neg(_math.true_div(_math.mul(gz, im), norm2)),
                          _math.true_div(_math.mul(gz, re), norm2))]


def _complex_out(re, im):
    for d in (re, im):
        if d in COMPLEX:
            raise TypeError(f"complex(real, imag) takes real parts, got dtype {d}")
    return (np.result_type(re, im, np.complex64).name,)


class Complex(ScalarOp):
    """``real + 1j * imag`` from two real inputs (complex64 from float32 parts, else
    complex128, as numpy promotes them)."""

    nin = 2
    output_rule = staticmethod(_complex_out)

    def impl(self, re, im):
        (dtype,) = _complex_out(np.asarray(re).dtype.name, np.asarray(im).dtype.name)
        out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype=dtype)
        out.real, out.imag = re, im
        return out

    def L_op(self, inputs, outputs, output_grads):
        gz = output_grads[0]
        return [_math.real(gz), _math.imag(gz)]


xlogy = XLogY()
xlog1py = XLog1PY()
erfcx = Erfcx()
polygamma = PolyGamma()
real = Real()
imag = Imag()
conj = Conj()
angle = Angle()
complex_ = Complex()
