"""The elementwise computations beyond ``+ - * /``: each one a ``ScalarOp`` (see ``basic``).

Every op gives its numpy implementation (the reference), its output dtype rule and its gradient.
Gradients are written with tensor functions (``tensorgraph.tensor.math``) on the tensors of the
``Elemwise`` node, which then sums them back over broadcast dimensions and casts them to each
input's dtype. Integer and bool inputs always get zero gradients from ``Elemwise``.

Piecewise-constant ops (comparisons, ``floor``/``ceil``/``trunc``/``round``, ``sign``,
``int_div``, ``isnan``/``isinf``/``isfinite``, bitwise logic) have a zero gradient for every
input, as in PyTensor: they are differentiable almost everywhere with derivative 0. So do the
condition of ``switch`` and the shape template (first input) of ``second``.

Ops that need a float (``exp``, ``log``, ``sigmoid``, ``erf``, ...) turn integer and bool
inputs into float32 (up to 16 bits) or float64 (32 and 64 bits) *before* computing, so
``exp(int8)`` is computed in float32 rather than in numpy's float16.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.scalar.basic import (
    COMPLEX, ComplexError, ScalarOp, _tensor_op, bool_out, upcast, upcast_out,
    upcast_out_nobool, upgrade_to_float,
)

__all__ = [
    # op classes
    "IntDiv", "Mod", "Pow", "Abs", "Sign", "Sqr", "Reciprocal", "Maximum", "Minimum", "Clip",
    "Switch", "Second", "LT", "LE", "GT", "GE", "EQ", "NEQ", "IsNan", "IsInf", "IsFinite",
    "AND", "OR", "XOR", "Invert", "Floor", "Ceil", "Trunc", "RoundHalfToEven",
    "RoundHalfAwayFromZero", "FloatOp", "Exp", "Exp2", "Expm1", "Log", "Log2", "Log10", "Log1p",
    "Sqrt", "Sin", "Cos", "Tan", "ArcSin", "ArcCos", "ArcTan", "ArcTan2", "Sinh", "Cosh", "Tanh",
    "ArcSinh", "ArcCosh", "ArcTanh", "Sigmoid", "Softplus", "Log1mexp", "Erf", "Erfc", "Erfinv",
    "Erfcinv", "Gamma", "GammaLn", "Psi", "TriGamma",
    # dtype rules
    "bitwise_out", "real_same_out",
    # instances
    "int_div", "mod", "pow_", "abs_", "sign", "sqr", "reciprocal", "maximum", "minimum", "clip",
    "switch", "second", "lt", "le", "gt", "ge", "eq", "neq", "isnan", "isinf", "isfinite",
    "and_", "or_", "xor", "invert", "floor", "ceil", "trunc", "round_half_to_even",
    "round_half_away_from_zero", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "sigmoid", "softplus", "log1mexp", "erf", "erfc", "erfinv",
    "erfcinv", "gamma", "gammaln", "psi", "tri_gamma",
    # PyTensor's names of some of them
    "pow", "abs", "floor_div", "scalar_maximum", "scalar_minimum",
]


def _const(value, dtype: str):
    """A tensor constant of exactly ``dtype`` (so gradients do not upcast float32 graphs)."""
    return _tensor_op("constant")(np.asarray(value, dtype=dtype))


def _grad_dtype(var) -> str:
    """The float dtype a gradient constant gets next to ``var``."""
    if var.dtype in ("float16", "float32", "float64"):
        return var.dtype
    return config.floatX


def _zeros(x):
    """Zeros of ``x``'s shape and dtype, as a graph (``second(x, 0)``)."""
    return _tensor_op("math").second(x, _const(0, x.dtype))


# ----------------------------------------------------------------------------------------------
# dtype rules specific to these ops


def bitwise_out(*dtypes):
    """``& | ^ ~``: bool with bool stays bool, integers upcast, anything else is refused."""
    for d in dtypes:
        if d != "bool" and not d.startswith(("int", "uint")):
            raise TypeError(f"bitwise/logical operations take bool or integer inputs, got {d}; "
                            "compare first (e.g. x > 0) to get a bool tensor")
    return (upcast(*dtypes),)


def real_same_out(*dtypes):
    """Same dtype as the input, which must not be complex (rounding has no complex meaning)."""
    if dtypes[0] in COMPLEX:
        raise TypeError(f"this operation is not defined for complex input ({dtypes[0]})")
    return (dtypes[0],)


def _abs_out(*dtypes):
    return ({"complex64": "float32", "complex128": "float64"}.get(dtypes[0], dtypes[0]),)


def _switch_out(cond, a, b):
    return (upcast(a, b),)


def _second_out(a, b):
    return (b,)


class _RealOnly:
    """Mixin: the op has no meaning for complex numbers (``//``, ``%``); building it on a
    complex input raises ``ComplexError``."""

    def output_dtypes(self, *dtypes):
        for d in dtypes:
            if d in COMPLEX:
                raise ComplexError(f"{self.name} is not defined for complex numbers (got {d})")
        return super().output_dtypes(*dtypes)


class _ZeroGrad:
    """Mixin: the op is piecewise constant, every input gets a zero gradient."""

    def L_op(self, inputs, outputs, output_grads):
        return [_zeros(x) for x in inputs]


# ----------------------------------------------------------------------------------------------
# Arithmetic


class IntDiv(_RealOnly, _ZeroGrad, ScalarOp):
    """``a // b``: floor division, as numpy (rounds toward -inf; floats stay floats)."""

    name = "int_div"
    nin = 2
    nfunc = staticmethod(np.floor_divide)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "//"


class Mod(_RealOnly, ScalarOp):
    """``a % b`` with numpy's sign rule: the result has the sign of ``b``."""

    nin = 2
    nfunc = staticmethod(np.mod)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "%"

    def L_op(self, inputs, outputs, output_grads):
        # a % b == a - b * floor(a / b), and floor is locally constant
        x, y = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        return [gz, m.neg(m.mul(gz, m.int_div(x, y)))]


class Pow(ScalarOp):
    """``a ** b``. Integers to negative integer powers raise, as in numpy."""

    name = "pow"
    nin = 2
    nfunc = staticmethod(np.power)
    output_rule = staticmethod(upcast_out_nobool)
    symbol = "**"

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        (z,) = outputs
        m = _tensor_op("math")
        one = _const(1, "int8" if y.dtype == "bool" else y.dtype)
        gx = m.mul(gz, y, m.pow(x, m.sub(y, one)))
        # d/dy x**y = log(x) x**y; taken as 0 at x == 0, where x**y does not depend on y
        # (for y > 0): log(1) stands in for log(0), so 0 * -inf never makes a nan
        safe_x = m.switch(m.eq(x, 0), _const(1, x.dtype), x)
        gy = m.mul(gz, z, m.log(safe_x))
        return [gx, gy]


class Abs(ScalarOp):
    """``|a|`` (the modulus for complex input, which gives a real dtype)."""

    name = "abs"
    nin = 1
    nfunc = staticmethod(np.abs)
    output_rule = staticmethod(_abs_out)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        m = _tensor_op("math")
        return [m.mul(output_grads[0], m.sign(x))]


class Sign(_ZeroGrad, ScalarOp):
    """-1, 0 or 1 (nan for nan). bool input counts as int8."""

    nin = 1
    nfunc = staticmethod(np.sign)
    output_rule = staticmethod(upcast_out_nobool)


class Sqr(ScalarOp):
    """``a * a``."""

    nin = 1
    nfunc = staticmethod(np.square)
    output_rule = staticmethod(upcast_out_nobool)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        m = _tensor_op("math")
        return [m.mul(output_grads[0], _const(2, _grad_dtype(x)), x)]


class Maximum(ScalarOp):
    """Elementwise larger of two (nan if either is nan). The gradient goes to the input that
    was selected; on ties, to the first one."""

    nin = 2
    nfunc = staticmethod(np.maximum)
    output_rule = staticmethod(upcast_out)
    commutative = associative = True

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        first = m.ge(x, y)
        return [m.switch(first, gz, _zeros(gz)), m.switch(first, _zeros(gz), gz)]


class Minimum(ScalarOp):
    """Elementwise smaller of two; gradient as for ``Maximum``."""

    nin = 2
    nfunc = staticmethod(np.minimum)
    output_rule = staticmethod(upcast_out)
    commutative = associative = True

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        first = m.le(x, y)
        return [m.switch(first, gz, _zeros(gz)), m.switch(first, _zeros(gz), gz)]


class Clip(ScalarOp):
    """``minimum(maximum(x, a_min), a_max)``, as ``np.clip``. The gradient goes to ``x`` where
    it lies inside the bounds, else to the bound that was used."""

    nin = 3
    output_rule = staticmethod(upcast_out)

    def impl(self, x, a_min, a_max):
        return np.minimum(np.maximum(x, a_min), a_max)

    def L_op(self, inputs, outputs, output_grads):
        x, lo, hi = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        zero = _zeros(gz)
        inside = m.and_(m.ge(x, lo), m.le(x, hi))
        return [m.switch(inside, gz, zero), m.switch(m.lt(x, lo), gz, zero),
                m.switch(m.gt(x, hi), gz, zero)]


class Switch(ScalarOp):
    """``switch(cond, a, b)``: ``a`` where ``cond`` is true (non-zero), else ``b``.

    Both branches are computed (use ``ifelse`` to compute only one). The gradient goes to the
    branch taken at each element; the condition gets a zero gradient.
    """

    nin = 3
    output_rule = staticmethod(_switch_out)

    def impl(self, cond, a, b):
        return np.where(cond, a, b)

    def L_op(self, inputs, outputs, output_grads):
        cond, a, b = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        zero = _zeros(gz)
        return [_zeros(cond), m.switch(cond, gz, zero), m.switch(cond, zero, gz)]


class Second(ScalarOp):
    """``second(a, b)``: ``b`` broadcast to the shape of ``a`` and ``b`` (``fill``).

    Only the shape of ``a`` matters, so ``a`` is disconnected from the gradient (as in
    PyTensor): no zero term reading ``a`` enters a gradient graph, where ``0 * a`` would turn
    a nan or inf of ``a`` (which never reaches the result) into a nan (a Hessian-vector
    product at a point where the cost's seed ``fill(cost, 1)`` is nan).
    """

    nin = 2
    output_rule = staticmethod(_second_out)

    def impl(self, a, b):
        return b

    def L_op(self, inputs, outputs, output_grads):
        return [None, output_grads[0]]


# ----------------------------------------------------------------------------------------------
# Comparisons and logic (bool outputs, zero gradients)


class _Comparison(_ZeroGrad, ScalarOp):
    nin = 2
    output_rule = staticmethod(bool_out)


class LT(_Comparison):
    nfunc = staticmethod(np.less)
    symbol = "<"


class LE(_Comparison):
    nfunc = staticmethod(np.less_equal)
    symbol = "<="


class GT(_Comparison):
    nfunc = staticmethod(np.greater)
    symbol = ">"


class GE(_Comparison):
    nfunc = staticmethod(np.greater_equal)
    symbol = ">="


class EQ(_Comparison):
    nfunc = staticmethod(np.equal)
    symbol = "=="
    commutative = True


class NEQ(_Comparison):
    nfunc = staticmethod(np.not_equal)
    symbol = "!="
    commutative = True


class IsNan(_ZeroGrad, ScalarOp):
    nin = 1
    nfunc = staticmethod(np.isnan)
    output_rule = staticmethod(bool_out)


class IsInf(_ZeroGrad, ScalarOp):
    nin = 1
    nfunc = staticmethod(np.isinf)
    output_rule = staticmethod(bool_out)


class IsFinite(_ZeroGrad, ScalarOp):
    nin = 1
    nfunc = staticmethod(np.isfinite)
    output_rule = staticmethod(bool_out)


class AND(_ZeroGrad, ScalarOp):
    """``a & b``: logical and for bools, bitwise and for integers (numpy's ``&``)."""

    name = "and"
    nin = 2
    nfunc = staticmethod(np.bitwise_and)
    output_rule = staticmethod(bitwise_out)
    commutative = associative = True
    symbol = "&"


class OR(_ZeroGrad, ScalarOp):
    """``a | b``: logical or for bools, bitwise or for integers."""

    name = "or"
    nin = 2
    nfunc = staticmethod(np.bitwise_or)
    output_rule = staticmethod(bitwise_out)
    commutative = associative = True
    symbol = "|"


class XOR(_ZeroGrad, ScalarOp):
    """``a ^ b``: logical xor for bools, bitwise xor for integers."""

    name = "xor"
    nin = 2
    nfunc = staticmethod(np.bitwise_xor)
    output_rule = staticmethod(bitwise_out)
    commutative = associative = True
    symbol = "^"


class Invert(_ZeroGrad, ScalarOp):
    """``~a``: logical not for bools, bitwise not for integers."""

    nin = 1
    nfunc = staticmethod(np.invert)
    output_rule = staticmethod(bitwise_out)
    symbol = "~"


# ----------------------------------------------------------------------------------------------
# Rounding (same dtype out, as numpy >= 2.3: integers are returned unchanged)


class Floor(_ZeroGrad, ScalarOp):
    nin = 1
    nfunc = staticmethod(np.floor)
    output_rule = staticmethod(real_same_out)


class Ceil(_ZeroGrad, ScalarOp):
    nin = 1
    nfunc = staticmethod(np.ceil)
    output_rule = staticmethod(real_same_out)


class Trunc(_ZeroGrad, ScalarOp):
    """Rounding toward zero."""

    nin = 1
    nfunc = staticmethod(np.trunc)
    output_rule = staticmethod(real_same_out)


class RoundHalfToEven(_ZeroGrad, ScalarOp):
    """Rounding to the nearest integer, ties to even (numpy's ``round``: 0.5 -> 0, 1.5 -> 2)."""

    name = "round_half_to_even"
    nin = 1
    nfunc = staticmethod(np.round)
    output_rule = staticmethod(real_same_out)


class RoundHalfAwayFromZero(_ZeroGrad, ScalarOp):
    """Rounding to the nearest integer, ties away from zero (0.5 -> 1, -2.5 -> -3)."""

    name = "round_half_away_from_zero"
    nin = 1
    output_rule = staticmethod(real_same_out)

    def impl(self, x):
        x = np.asarray(x)
        if x.dtype.kind != "f":
            return x
        whole = np.trunc(x)
        # x - trunc(x) is exact in floating point, so ties are detected exactly
        return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


# ----------------------------------------------------------------------------------------------
# Float functions


class FloatOp(ScalarOp):
    """An op that computes in floating point: integer and bool inputs are converted to the
    output dtype (``upgrade_to_float``) before ``nfunc`` sees them."""

    nin = 1
    output_rule = staticmethod(upgrade_to_float)

    def impl(self, *inputs):
        arrays = [np.asarray(i) for i in inputs]
        if any(a.dtype.kind in "biu" for a in arrays):
            (dtype,) = upgrade_to_float(*[a.dtype.name for a in arrays])
            arrays = [a.astype(dtype) if a.dtype.kind in "biu" else a for a in arrays]
        return self.compute(*arrays)

    def compute(self, *arrays):
        return self.nfunc(*arrays)


class Reciprocal(FloatOp):
    """``1 / a`` in floating point."""

    nfunc = staticmethod(np.reciprocal)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        return [m.neg(m.mul(output_grads[0], z, z))]


class Exp(FloatOp):
    nfunc = staticmethod(np.exp)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").mul(output_grads[0], outputs[0])]


class Exp2(FloatOp):
    nfunc = staticmethod(np.exp2)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        return [_tensor_op("math").mul(output_grads[0], z, _const(np.log(2.0), z.dtype))]


class Expm1(FloatOp):
    """``exp(a) - 1``, accurate for small ``a``."""

    nfunc = staticmethod(np.expm1)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        return [m.mul(output_grads[0], m.add(z, _const(1, z.dtype)))]


class Log(FloatOp):
    nfunc = staticmethod(np.log)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").true_div(output_grads[0], inputs[0])]


class Log2(FloatOp):
    nfunc = staticmethod(np.log2)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        scale = _const(np.log(2.0), outputs[0].dtype)
        return [m.true_div(output_grads[0], m.mul(inputs[0], scale))]


class Log10(FloatOp):
    nfunc = staticmethod(np.log10)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        scale = _const(np.log(10.0), outputs[0].dtype)
        return [m.true_div(output_grads[0], m.mul(inputs[0], scale))]


class Log1p(FloatOp):
    """``log(1 + a)``, accurate for small ``a``."""

    nfunc = staticmethod(np.log1p)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.true_div(output_grads[0], m.add(inputs[0], _const(1, outputs[0].dtype)))]


class Sqrt(FloatOp):
    nfunc = staticmethod(np.sqrt)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        return [m.true_div(output_grads[0], m.mul(z, _const(2, z.dtype)))]


class Sin(FloatOp):
    nfunc = staticmethod(np.sin)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.mul(output_grads[0], m.cos(inputs[0]))]


class Cos(FloatOp):
    nfunc = staticmethod(np.cos)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.neg(m.mul(output_grads[0], m.sin(inputs[0])))]


class Tan(FloatOp):
    nfunc = staticmethod(np.tan)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        return [m.mul(output_grads[0], m.add(_const(1, z.dtype), m.sqr(z)))]


def _one_minus_sqr(x, dtype):
    m = _tensor_op("math")
    return m.sub(_const(1, dtype), m.sqr(x))


class ArcSin(FloatOp):
    nfunc = staticmethod(np.arcsin)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.true_div(output_grads[0], m.sqrt(_one_minus_sqr(inputs[0], outputs[0].dtype)))]


class ArcCos(FloatOp):
    nfunc = staticmethod(np.arccos)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        root = m.sqrt(_one_minus_sqr(inputs[0], outputs[0].dtype))
        return [m.neg(m.true_div(output_grads[0], root))]


class ArcTan(FloatOp):
    nfunc = staticmethod(np.arctan)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        one = _const(1, outputs[0].dtype)
        return [m.true_div(output_grads[0], m.add(one, m.sqr(inputs[0])))]


class ArcTan2(FloatOp):
    """``arctan2(y, x)``: the angle of the point (x, y), in (-pi, pi]."""

    nin = 2
    nfunc = staticmethod(np.arctan2)

    def L_op(self, inputs, outputs, output_grads):
        y, x = inputs
        (gz,) = output_grads
        m = _tensor_op("math")
        r2 = m.add(m.sqr(x), m.sqr(y))
        return [m.true_div(m.mul(gz, x), r2), m.neg(m.true_div(m.mul(gz, y), r2))]


class Sinh(FloatOp):
    nfunc = staticmethod(np.sinh)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").mul(output_grads[0], _tensor_op("math").cosh(inputs[0]))]


class Cosh(FloatOp):
    nfunc = staticmethod(np.cosh)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").mul(output_grads[0], _tensor_op("math").sinh(inputs[0]))]


class Tanh(FloatOp):
    nfunc = staticmethod(np.tanh)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        return [_tensor_op("math").mul(output_grads[0], _one_minus_sqr(z, z.dtype))]


class ArcSinh(FloatOp):
    nfunc = staticmethod(np.arcsinh)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        one = _const(1, outputs[0].dtype)
        return [m.true_div(output_grads[0], m.sqrt(m.add(m.sqr(inputs[0]), one)))]


class ArcCosh(FloatOp):
    nfunc = staticmethod(np.arccosh)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        one = _const(1, outputs[0].dtype)
        return [m.true_div(output_grads[0], m.sqrt(m.sub(m.sqr(inputs[0]), one)))]


class ArcTanh(FloatOp):
    nfunc = staticmethod(np.arctanh)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.true_div(output_grads[0], _one_minus_sqr(inputs[0], outputs[0].dtype))]


class Sigmoid(FloatOp):
    """The logistic function ``1 / (1 + exp(-a))``, computed without overflow for any ``a``."""

    def compute(self, x):
        e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        return [m.mul(output_grads[0], z, m.sub(_const(1, z.dtype), z))]


class Softplus(FloatOp):
    """``log(1 + exp(a))``, computed as ``log1p(exp(-|a|)) + max(a, 0)`` (no overflow, and
    exact for large negative ``a``)."""

    def compute(self, x):
        return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").mul(output_grads[0], _tensor_op("math").sigmoid(inputs[0]))]


class Log1mexp(FloatOp):
    """``log(1 - exp(a))`` for ``a <= 0``, accurate at both ends (Maechler's rule: ``log1p``
    of ``-exp(a)`` below -log(2), ``log(-expm1(a))`` above). nan for ``a > 0``."""

    def compute(self, x):
        out = np.empty_like(x)
        far = x < -np.log(2.0)
        out[far] = np.log1p(-np.exp(x[far]))
        near = ~far
        with np.errstate(invalid="ignore", divide="ignore"):  # a > 0 is nan, a == 0 is -inf
            out[near] = np.log(-np.expm1(x[near]))
        return out

    def L_op(self, inputs, outputs, output_grads):
        # d/da log(1 - e^a) = -e^a / (1 - e^a) = -1 / expm1(-a) for a < 0, which tends to -inf
        # as a -> 0 from below. The formula alone gives +inf at a = +0.0 (expm1(-0.0) is
        # -0.0), so a == 0 gets the limit, -inf, explicitly, and a > 0 (outside the domain,
        # where the value is nan) gets nan.
        (x,) = inputs
        dtype = outputs[0].dtype
        m = _tensor_op("math")
        inside = m.neg(m.true_div(_const(1, dtype), m.expm1(m.neg(x))))
        edge = m.switch(m.eq(x, _const(0, dtype)), _const(-np.inf, dtype), _const(np.nan, dtype))
        return [m.mul(output_grads[0], m.switch(m.lt(x, _const(0, dtype)), inside, edge))]


def _special(name):
    """A function of ``scipy.special``, imported when first needed (scipy is slow to import)."""
    import scipy.special

    return getattr(scipy.special, name)


_TWO_OVER_SQRT_PI = 2 / np.sqrt(np.pi)


class Erf(FloatOp):
    def compute(self, x):
        return _special("erf")(x)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        m = _tensor_op("math")
        scale = _const(_TWO_OVER_SQRT_PI, outputs[0].dtype)
        return [m.mul(output_grads[0], scale, m.exp(m.neg(m.sqr(x))))]


class Erfc(FloatOp):
    """``1 - erf(a)``, accurate where erf is close to 1."""

    def compute(self, x):
        return _special("erfc")(x)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        m = _tensor_op("math")
        scale = _const(-_TWO_OVER_SQRT_PI, outputs[0].dtype)
        return [m.mul(output_grads[0], scale, m.exp(m.neg(m.sqr(x))))]


class Erfinv(FloatOp):
    """Inverse of ``erf`` on (-1, 1)."""

    def compute(self, x):
        return _special("erfinv")(x)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        scale = _const(1 / _TWO_OVER_SQRT_PI, z.dtype)
        return [m.mul(output_grads[0], scale, m.exp(m.sqr(z)))]


class Erfcinv(FloatOp):
    """Inverse of ``erfc`` on (0, 2)."""

    def compute(self, x):
        return _special("erfcinv")(x)

    def L_op(self, inputs, outputs, output_grads):
        (z,) = outputs
        m = _tensor_op("math")
        scale = _const(-1 / _TWO_OVER_SQRT_PI, z.dtype)
        return [m.mul(output_grads[0], scale, m.exp(m.sqr(z)))]


class Gamma(FloatOp):
    def compute(self, x):
        return _special("gamma")(x)

    def L_op(self, inputs, outputs, output_grads):
        m = _tensor_op("math")
        return [m.mul(output_grads[0], outputs[0], m.psi(inputs[0]))]


class GammaLn(FloatOp):
    """``log|gamma(a)|``."""

    name = "gammaln"

    def compute(self, x):
        return _special("gammaln")(x)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").mul(output_grads[0], _tensor_op("math").psi(inputs[0]))]


class Psi(FloatOp):
    """The digamma function, derivative of ``gammaln``."""

    def compute(self, x):
        return _special("psi")(x)

    def L_op(self, inputs, outputs, output_grads):
        return [_tensor_op("math").mul(output_grads[0], _tensor_op("math").tri_gamma(inputs[0]))]


class TriGamma(FloatOp):
    """The trigamma function, derivative of ``psi``. (Its own gradient is not implemented.)"""

    name = "tri_gamma"

    def compute(self, x):
        return _special("polygamma")(1, x)


int_div = IntDiv()
mod = Mod()
pow_ = Pow()
abs_ = Abs()
sign = Sign()
sqr = Sqr()
reciprocal = Reciprocal()
maximum = Maximum()
minimum = Minimum()
clip = Clip()
switch = Switch()
second = Second()
lt = LT()
le = LE()
gt = GT()
ge = GE()
eq = EQ()
neq = NEQ()
isnan = IsNan()
isinf = IsInf()
isfinite = IsFinite()
and_ = AND()
or_ = OR()
xor = XOR()
invert = Invert()
floor = Floor()
ceil = Ceil()
trunc = Trunc()
round_half_to_even = RoundHalfToEven()
round_half_away_from_zero = RoundHalfAwayFromZero()
exp = Exp()
exp2 = Exp2()
expm1 = Expm1()
log = Log()
log2 = Log2()
log10 = Log10()
log1p = Log1p()
sqrt = Sqrt()
sin = Sin()
cos = Cos()
tan = Tan()
arcsin = ArcSin()
arccos = ArcCos()
arctan = ArcTan()
arctan2 = ArcTan2()
sinh = Sinh()
cosh = Cosh()
tanh = Tanh()
arcsinh = ArcSinh()
arccosh = ArcCosh()
arctanh = ArcTanh()
sigmoid = Sigmoid()
softplus = Softplus()
log1mexp = Log1mexp()
erf = Erf()
erfc = Erfc()
erfinv = Erfinv()
erfcinv = Erfcinv()
gamma = Gamma()
gammaln = GammaLn()
psi = Psi()
tri_gamma = TriGamma()

# PyTensor's names (``pow`` and ``abs`` shadow the builtins in this module only; the code above
# does not use the builtins)
pow = pow_  # noqa: A001
abs = abs_  # noqa: A001
floor_div = int_div
scalar_maximum = maximum
scalar_minimum = minimum
