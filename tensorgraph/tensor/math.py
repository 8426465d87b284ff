"""Elementwise tensor functions: ``tt.add``, ``tt.exp``, ``tt.switch``, ``tt.cast``, ...

Each function wraps one ``Elemwise`` op over a scalar op of ``tensorgraph.scalar``, so inputs
broadcast as in numpy. The dtype rules are those of ``tensorgraph.scalar.basic`` (numpy's
promotion on dtypes, weak Python numbers, ``config.int_division`` for ``/`` between integers);
``docs/dtypes.md`` explains them for users. Gradients, and which ops have a zero gradient, are
documented in ``tensorgraph.scalar.math``.

``max``/``min`` are reductions (``tensorgraph.tensor.reduction``); the elementwise ones are
``maximum``/``minimum``.
"""

from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.scalar import special_derivatives as psd
from tensorgraph.scalar import special_functions as psf
from tensorgraph.scalar.int_division import IntDivisionWarning, warn_int_division
from tensorgraph.tensor import scalar_special as _special
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.elemwise import Elemwise, outer_operands
from tensorgraph.tensor.nonzero import nonzero
from tensorgraph.tensor.scalar_convert import tensor_to_scalar
from tensorgraph.tensor.type import normalize_dtype

# scalar gradients are tensor graphs written with this module, and ps.as_scalar converts 0-d
# tensors with tensor_to_scalar (the scalar layer cannot import the tensor layer)
ps.register_tensor_ops(sys.modules[__name__], constant, tensor_to_scalar)

__all__ = [
    "add", "mul", "sub", "neg", "true_div", "IntDivisionWarning", "cast",
    "int_div", "floor_div", "mod", "pow", "abs", "abs_", "sign", "sqr", "square", "reciprocal",
    "maximum", "minimum", "clip", "switch", "where", "second", "fill",
    "lt", "le", "gt", "ge", "eq", "neq", "isnan", "isinf", "isfinite",
    "and_", "or_", "xor", "invert", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "floor", "ceil", "trunc", "round", "round_half_to_even", "round_half_away_from_zero",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "sigmoid", "expit", "softplus", "log1pexp", "log1mexp",
    "erf", "erfc", "erfinv", "erfcinv", "gamma", "gammaln", "psi", "tri_gamma",
    "power", "true_divide", "digamma", "erfcx", "polygamma", "xlogy", "xlog1py", "logaddexp",
    "deg2rad", "rad2deg", "ceil_intdiv", "isposinf", "isneginf", "isclose", "nan_to_num",
    "smallest", "largest", "real", "imag", "conj", "conjugate", "angle", "complex",
    "complex_from_polar", "tensor_copy", "identity",
    "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "gammau", "gammal", "betainc",
    "betaincinv", "i0", "i1", "i0e", "i1e", "iv", "ive", "kv", "kve", "kn", "ndtr", "log_ndtr",
    "owens_t", "hyp2f1", "chi2sf", "j0", "j1", "jv",
]

_add = Elemwise(ps.add)
_mul = Elemwise(ps.mul)
_sub = Elemwise(ps.sub)
_true_div = Elemwise(ps.true_div)
_neg = Elemwise(ps.neg)


def add(a, b, *more):
    """a + b (+ more): elementwise sum with numpy broadcasting."""
    return _add(a, b, *more)


def mul(a, *more):
    """a * b (* more): elementwise product."""
    if not more:
        return as_tensor_variable(a)
    return _mul(a, *more)


def sub(a, b):
    """a - b."""
    return _sub(a, b)


def neg(a):
    """-a."""
    return _neg(a)


def true_div(a, b):
    """a / b. Between integers, ``config.int_division`` decides: 'int' floors (as ``//``),
    'floatX' divides in ``config.floatX``, 'raise' refuses."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.dtype in ps.DISCRETE and b.dtype in ps.DISCRETE:
        policy = config.int_division
        if policy == "int":
            warn_int_division(a.dtype, b.dtype)
            return int_div(a, b)
        if policy == "raise":
            raise TypeError(f"{a} / {b} divides integers ({a.dtype}, {b.dtype}) and "
                            "config.int_division='raise'; use // or cast to a float first")
        return _true_div(cast(a, config.floatX), cast(b, config.floatX))
    return _true_div(a, b)


@lru_cache(maxsize=None)
def _cast_op(dtype: str) -> Elemwise:
    return Elemwise(ps.Cast(dtype))


# PyTensor's conversion ops by name (``_convert_to_int8(x)`` is ``cast(x, 'int8')`` and
# ``node.op == _convert_to_int8`` tells a cast node): the Elemwise cast op of each dtype
for _dtype in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"):
    globals()[f"_convert_to_{_dtype}"] = _cast_op(_dtype)
del _dtype


def cast(x, dtype):
    """``x`` converted to ``dtype`` ('floatX' allowed); ``x`` itself if it already has it.
    Complex to real is refused (which real number: the real part, the modulus...?)."""
    x = as_tensor_variable(x)
    dtype = normalize_dtype(dtype)
    if x.dtype == dtype:
        return x
    if x.dtype in ps.COMPLEX and dtype not in ps.COMPLEX:
        raise TypeError(f"cast({x}, {dtype!r}): casting complex to real would drop the "
                        "imaginary part; say which real number you mean with tt.real, tt.imag, "
                        "tt.abs or tt.angle")
    return _cast_op(dtype)(x)


def _elemwise_function(scalar_op, name: str, params: str, doc: str):
    """A tensor function ``name(params)`` applying ``Elemwise(scalar_op)``."""
    op = Elemwise(scalar_op)
    nparams = len(params.split(","))

    def function(*args):
        if len(args) != nparams:
            raise TypeError(f"{name}({params}) takes {nparams} argument"
                            f"{'s' if nparams > 1 else ''}, got {len(args)}")
        return op(*args)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{name}({params}): {doc}"
    function.__module__ = __name__
    function.elemwise_op = op
    if nparams == 2:
        _with_outer(function)
    return function


def _with_outer(function):
    """Give a binary elementwise function numpy's ``ufunc.outer``: ``tt.add.outer(x, y)``
    has the dimensions of ``x`` followed by those of ``y`` (PyTensor's functions are Elemwise
    ops, which have it)."""
    def outer(x, y):
        return function(*outer_operands(x, y))

    outer.__name__ = outer.__qualname__ = f"{function.__name__}.outer"
    outer.__doc__ = (f"{function.__name__}.outer(x, y): {function.__name__} of every element "
                     "of x with every element of y, as numpy's ufunc.outer.")
    function.outer = outer
    return function


for _function in (add, mul, sub, true_div):
    _with_outer(_function)
# the Elemwise op each function applies: ``node.op == tt.add`` and ``node_rewriter([tt.add])``
# (PyTensor's functions are these ops) compare with it (``Elemwise.__eq__``)
for _function, _op in ((add, _add), (mul, _mul), (sub, _sub), (true_div, _true_div),
                       (neg, _neg)):
    _function.elemwise_op = _op
del _function, _op


# -- arithmetic --------------------------------------------------------------------------------

int_div = _elemwise_function(psm.int_div, "int_div", "a, b",
                             "a // b, floor division as numpy (toward -inf; floats stay floats).")
floor_div = int_div
mod = _elemwise_function(psm.mod, "mod", "a, b",
                         "a % b; the result has the sign of b, as in numpy.")
pow = _elemwise_function(psm.pow_, "pow", "a, b",
                         "a ** b; integers to negative integer powers raise, as in numpy.")
abs_ = _elemwise_function(psm.abs_, "abs", "a", "|a| (a float modulus for complex input).")
abs = abs_
sign = _elemwise_function(psm.sign, "sign", "a", "-1, 0 or 1 by the sign of a; zero gradient.")
sqr = _elemwise_function(psm.sqr, "sqr", "a", "a * a.")
square = sqr
reciprocal = _elemwise_function(psm.reciprocal, "reciprocal", "a", "1 / a, in floating point.")
maximum = _elemwise_function(
    psm.maximum, "maximum", "a, b",
    "elementwise larger of a and b; the gradient goes to the selected one (a on ties).")
minimum = _elemwise_function(
    psm.minimum, "minimum", "a, b",
    "elementwise smaller of a and b; the gradient goes to the selected one (a on ties).")

_clip = Elemwise(psm.clip)


def clip(x, a_min, a_max):
    """``x`` limited to [a_min, a_max] as ``np.clip`` (``minimum(maximum(x, a_min), a_max)``).

    Either bound may be None. The gradient goes to ``x`` inside the bounds, else to the bound.
    """
    if a_min is None and a_max is None:
        raise ValueError("clip needs at least one of a_min and a_max")
    if a_min is None:
        return minimum(x, a_max)
    if a_max is None:
        return maximum(x, a_min)
    return _clip(x, a_min, a_max)


switch = _elemwise_function(
    psm.switch, "switch", "cond, ift, iff",
    "ift where cond is true (non-zero), else iff. Both branches are computed (tensorgraph.ifelse "
    "computes only one); the gradient goes to the branch taken, none to cond.")


def where(cond, ift=None, iff=None):
    """numpy's ``where``: ``switch(cond, ift, iff)``; with the condition alone, the indices
    of its non-zero entries (``nonzero(cond)``, a tuple with one vector per dimension)."""
    if ift is None and iff is None:
        return nonzero(cond)
    if ift is None or iff is None:
        raise ValueError("where: give either both ift and iff, or neither (then it returns "
                         "the indices where cond is non-zero)")
    return switch(cond, ift, iff)

# ``second(model, value)``: value broadcast to the shape of model (and of value); model only
# gives the shape. As in PyTensor, ``second``/``fill`` is the Elemwise op itself (not a
# function building it), so code can test ``node.op == fill``.
second = Elemwise(psm.second)
fill = second

# -- comparisons and logic ---------------------------------------------------------------------

lt = _elemwise_function(psm.lt, "lt", "a, b", "a < b (bool).")
le = _elemwise_function(psm.le, "le", "a, b", "a <= b (bool).")
gt = _elemwise_function(psm.gt, "gt", "a, b", "a > b (bool).")
ge = _elemwise_function(psm.ge, "ge", "a, b", "a >= b (bool).")
eq = _elemwise_function(psm.eq, "eq", "a, b",
                        "a == b elementwise (bool); the == operator on variables is identity.")
neq = _elemwise_function(psm.neq, "neq", "a, b",
                         "a != b elementwise (bool); the != operator on variables is identity.")
isnan = _elemwise_function(psm.isnan, "isnan", "a", "True where a is nan.")
#: PyTensor's second name of ``isnan`` (its own code calls ``isnan_`` where it may skip the test)
isnan_ = isnan
isinf = _elemwise_function(psm.isinf, "isinf", "a", "True where a is +inf or -inf.")
isfinite = _elemwise_function(psm.isfinite, "isfinite", "a", "True where a is neither inf nor nan.")
and_ = _elemwise_function(psm.and_, "and_", "a, b",
                          "a & b: logical for bool, bitwise for integers (floats are refused).")
or_ = _elemwise_function(psm.or_, "or_", "a, b",
                         "a | b: logical for bool, bitwise for integers (floats are refused).")
xor = _elemwise_function(psm.xor, "xor", "a, b",
                         "a ^ b: logical for bool, bitwise for integers (floats are refused).")
invert = _elemwise_function(psm.invert, "invert", "a",
                            "~a: logical not for bool, bitwise not for integers.")
# numpy's and PyTensor's names
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert

# -- rounding ----------------------------------------------------------------------------------

floor = _elemwise_function(psm.floor, "floor", "a", "largest integer <= a, same dtype.")
ceil = _elemwise_function(psm.ceil, "ceil", "a", "smallest integer >= a, same dtype.")
trunc = _elemwise_function(psm.trunc, "trunc", "a", "a rounded toward zero, same dtype.")
round_half_to_even = _elemwise_function(
    psm.round_half_to_even, "round_half_to_even", "a",
    "nearest integer, ties to even (numpy's round: 0.5 -> 0, 1.5 -> 2).")
round_half_away_from_zero = _elemwise_function(
    psm.round_half_away_from_zero, "round_half_away_from_zero", "a",
    "nearest integer, ties away from zero (0.5 -> 1, -2.5 -> -3).")

_ROUND_MODES = {"half_to_even": round_half_to_even,
                "half_away_from_zero": round_half_away_from_zero}


def round(a, mode: str = "half_to_even"):
    """``a`` rounded to the nearest integer (same dtype). ``mode`` says what ties do:
    'half_to_even' (numpy's ``round``, the default) or 'half_away_from_zero'."""
    if mode not in _ROUND_MODES:
        raise ValueError(f"round: unknown mode {mode!r}; expected one of {sorted(_ROUND_MODES)}")
    return _ROUND_MODES[mode](a)


# -- float functions ---------------------------------------------------------------------------

exp = _elemwise_function(psm.exp, "exp", "a", "e ** a.")
exp2 = _elemwise_function(psm.exp2, "exp2", "a", "2 ** a, in floating point.")
expm1 = _elemwise_function(psm.expm1, "expm1", "a", "exp(a) - 1, accurate for small a.")
log = _elemwise_function(psm.log, "log", "a", "natural logarithm.")
log2 = _elemwise_function(psm.log2, "log2", "a", "base-2 logarithm.")
log10 = _elemwise_function(psm.log10, "log10", "a", "base-10 logarithm.")
log1p = _elemwise_function(psm.log1p, "log1p", "a", "log(1 + a), accurate for small a.")
sqrt = _elemwise_function(psm.sqrt, "sqrt", "a", "square root.")
sin = _elemwise_function(psm.sin, "sin", "a", "sine (radians).")
cos = _elemwise_function(psm.cos, "cos", "a", "cosine (radians).")
tan = _elemwise_function(psm.tan, "tan", "a", "tangent (radians).")
arcsin = _elemwise_function(psm.arcsin, "arcsin", "a", "inverse sine.")
arccos = _elemwise_function(psm.arccos, "arccos", "a", "inverse cosine.")
arctan = _elemwise_function(psm.arctan, "arctan", "a", "inverse tangent.")
arctan2 = _elemwise_function(psm.arctan2, "arctan2", "y, x",
                             "angle of the point (x, y) in (-pi, pi], as np.arctan2.")
sinh = _elemwise_function(psm.sinh, "sinh", "a", "hyperbolic sine.")
cosh = _elemwise_function(psm.cosh, "cosh", "a", "hyperbolic cosine.")
tanh = _elemwise_function(psm.tanh, "tanh", "a", "hyperbolic tangent.")
arcsinh = _elemwise_function(psm.arcsinh, "arcsinh", "a", "inverse hyperbolic sine.")
arccosh = _elemwise_function(psm.arccosh, "arccosh", "a", "inverse hyperbolic cosine.")
arctanh = _elemwise_function(psm.arctanh, "arctanh", "a", "inverse hyperbolic tangent.")
sigmoid = _elemwise_function(psm.sigmoid, "sigmoid", "a",
                             "the logistic function 1 / (1 + exp(-a)), without overflow.")
expit = sigmoid
softplus = _elemwise_function(psm.softplus, "softplus", "a",
                              "log(1 + exp(a)), stable for large |a|.")
log1pexp = softplus
log1mexp = _elemwise_function(psm.log1mexp, "log1mexp", "a",
                              "log(1 - exp(a)) for a <= 0, accurate near 0 and for very negative a.")
erf = _elemwise_function(psm.erf, "erf", "a", "the error function.")
erfc = _elemwise_function(psm.erfc, "erfc", "a", "1 - erf(a), accurate where erf(a) is near 1.")
erfinv = _elemwise_function(psm.erfinv, "erfinv", "a", "inverse of erf, on (-1, 1).")
erfcinv = _elemwise_function(psm.erfcinv, "erfcinv", "a", "inverse of erfc, on (0, 2).")
gamma = _elemwise_function(psm.gamma, "gamma", "a", "the gamma function.")
gammaln = _elemwise_function(psm.gammaln, "gammaln", "a", "log |gamma(a)|.")
psi = _elemwise_function(psm.psi, "psi", "a", "the digamma function (derivative of gammaln).")
tri_gamma = _elemwise_function(psm.tri_gamma, "tri_gamma", "a",
                               "the trigamma function (derivative of psi; no gradient of its own).")


_copy = Elemwise(ps.identity)


def tensor_copy(x):
    """A new variable computing a copy of ``x`` (an identity node; rewrites may remove it)."""
    return _copy(x)


identity = tensor_copy

#: (rtol, atol) of ``_allclose`` by the less precise dtype: PyTensor's values, so that code
#: (its test helpers) comparing results with it accepts what it accepts there; float64 is
#: numpy's ``allclose`` default. (TensorType comparisons and DebugMode keep their own.)
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5),
                        "complex64": (1e-5, 1e-5)}


def _allclose(a, b, rtol=None, atol=None) -> bool:
    """Whether the arrays ``a`` and ``b`` are equal within the tolerances of the less precise
    of their dtypes (``_ALLCLOSE_TOLERANCES``, numpy's default for float64); ``rtol``/``atol``
    override them. (PyTensor's test helpers compare results with it.)"""
    a, b = np.asarray(a), np.asarray(b)
    precisions = {"float16": 0, "float32": 1, "complex64": 1}
    dtype = min((a.dtype.name, b.dtype.name), key=lambda d: precisions.get(d, 2))
    default_rtol, default_atol = _ALLCLOSE_TOLERANCES.get(dtype, (1e-5, 1e-8))
    return bool(np.allclose(a, b, rtol=default_rtol if rtol is None else rtol,
                            atol=default_atol if atol is None else atol))


# -- PyTensor's and numpy's other names ---------------------------------------------------------

power = pow
true_divide = true_div
digamma = psi


def _float_constant(value, like):
    """``value`` as a constant of the float dtype ``like`` computes in (floatX for integers)."""
    dtype = like.dtype if like.dtype in ("float16", "float32", "float64") else config.floatX
    return constant(value, dtype=dtype)


def deg2rad(x):
    """Degrees to radians (integers compute in floatX)."""
    x = as_tensor_variable(x)
    return mul(x, _float_constant(np.pi / 180, x))


def rad2deg(x):
    """Radians to degrees (integers compute in floatX)."""
    x = as_tensor_variable(x)
    return mul(x, _float_constant(180 / np.pi, x))


def ceil_intdiv(a, b):
    """``ceil(a / b)`` for integers, exactly (``a // b``, plus one where ``b`` does not divide
    ``a``)."""
    q = int_div(a, b)
    return add(q, cast(neq(mod(a, b), 0), q.dtype))


def isposinf(x):
    """True where ``x`` is +inf."""
    x = as_tensor_variable(x)
    return and_(isinf(x), gt(x, 0))


def isneginf(x):
    """True where ``x`` is -inf."""
    x = as_tensor_variable(x)
    return and_(isinf(x), lt(x, 0))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|a - b| <= atol + rtol * |b|``, as ``np.isclose``: infinities are close
    only to themselves, nan to nothing unless ``equal_nan``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    diff = abs(sub(a, b))
    close = le(diff, add(_float_constant(atol, diff), mul(_float_constant(rtol, diff), abs(b))))
    if a.dtype in ps.DISCRETE and b.dtype in ps.DISCRETE:
        return close
    # an infinity is close to the same infinity only (inf - inf is nan)
    both_inf = and_(isinf(a), isinf(b))
    result = switch(or_(isinf(a), isinf(b)), and_(both_inf, eq(a, b)), close)
    if equal_nan:
        result = or_(result, and_(isnan(a), isnan(b)))
    return result


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """``x`` with nan replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (by
    default the largest and the most negative finite value of ``x``'s dtype), as
    ``np.nan_to_num``. Integers are returned unchanged."""
    x = as_tensor_variable(x)
    if x.dtype in ps.DISCRETE:
        return x
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    out = switch(isnan(x), constant(nan, dtype=x.dtype), x)
    out = switch(isposinf(x), constant(big, dtype=x.dtype), out)
    return switch(isneginf(x), constant(small, dtype=x.dtype), out)


def logaddexp(*xs):
    """``log(exp(x1) + exp(x2) + ...)``, computed without overflow (pairwise:
    ``max + log1p(exp(-|x1 - x2|))``; two equal infinities give that infinity)."""
    if len(xs) < 2:
        raise TypeError(f"logaddexp takes at least 2 arguments, got {len(xs)}")
    result = as_tensor_variable(xs[0])
    for x in xs[1:]:
        x = as_tensor_variable(x)
        top = maximum(result, x)
        spread = log1p(exp(neg(abs(sub(result, x)))))
        # equal values (infinities included, where the difference is nan) add log(2)
        result = switch(eq(result, x), add(top, _float_constant(np.log(2), spread)),
                        add(top, spread))
    return result


def smallest(*args):
    """The elementwise minimum of any number of tensors."""
    if not args:
        raise TypeError("smallest() takes at least one argument")
    result = as_tensor_variable(args[0])
    for a in args[1:]:
        result = minimum(result, a)
    return result


def largest(*args):
    """The elementwise maximum of any number of tensors."""
    if not args:
        raise TypeError("largest() takes at least one argument")
    result = as_tensor_variable(args[0])
    for a in args[1:]:
        result = maximum(result, a)
    return result


# -- special functions -------------------------------------------------------------------------

erfcx = _elemwise_function(_special.erfcx, "erfcx", "a",
                           "exp(a**2) * erfc(a), without overflow for large a (no C: scipy).")
polygamma = _elemwise_function(
    _special.polygamma, "polygamma", "n, x",
    "the n-th derivative of psi at x (n an integer >= 0; no C: scipy).")

gammainc = _elemwise_function(psf.gammainc, "gammainc", "k, x",
                              "the regularized lower incomplete gamma function P(k, x).")
gammaincc = _elemwise_function(psf.gammaincc, "gammaincc", "k, x",
                               "the regularized upper incomplete gamma function Q(k, x).")
gammaincinv = _elemwise_function(psf.gammaincinv, "gammaincinv", "k, y",
                                 "x with gammainc(k, x) = y.")
gammainccinv = _elemwise_function(psf.gammainccinv, "gammainccinv", "k, y",
                                  "x with gammaincc(k, x) = y.")
betainc = _elemwise_function(psf.betainc, "betainc", "a, b, x",
                             "the regularized incomplete beta function I_x(a, b).")
betaincinv = _elemwise_function(psf.betaincinv, "betaincinv", "a, b, y",
                                "x with betainc(a, b, x) = y.")
i0 = _elemwise_function(psf.i0, "i0", "x", "the modified Bessel function I0.")
i1 = _elemwise_function(psf.i1, "i1", "x", "the modified Bessel function I1.")
i0e = _elemwise_function(psf.i0e, "i0e", "x", "i0(x) * exp(-|x|), without overflow.")
i1e = _elemwise_function(psf.i1e, "i1e", "x", "i1(x) * exp(-|x|), without overflow.")
ive = _elemwise_function(psf.ive, "ive", "v, x",
                         "iv(v, x) * exp(-|x|), the scaled modified Bessel function of the "
                         "first kind of real order v (no derivative in v).")
kve = _elemwise_function(psf.kve, "kve", "v, x",
                         "kv(v, x) * exp(x), the scaled modified Bessel function of the second "
                         "kind of real order v (no derivative in v).")
ndtr = _elemwise_function(psf.ndtr, "ndtr", "x", "the standard normal distribution function.")
log_ndtr = _elemwise_function(psf.log_ndtr, "log_ndtr", "x",
                              "log(ndtr(x)), accurate far in both tails.")
owens_t = _elemwise_function(psf.owens_t, "owens_t", "h, a", "Owen's T function T(h, a).")
hyp2f1 = _elemwise_function(psf.hyp2f1, "hyp2f1", "a, b, c, z",
                            "Gauss's hypergeometric function 2F1(a, b; c; z).")

# the derivatives in the shape parameters (gradients use them; not in __all__, as PyTensor)
gammainc_dk = _elemwise_function(psd.gammainc_dk, "gammainc_dk", "k, x",
                                 "dP(k, x)/dk, the derivative of gammainc in k (a series).")
betainc_da = _elemwise_function(psd.betainc_da, "betainc_da", "a, b, x",
                                "dI_x(a, b)/da, the derivative of betainc in a (a continued "
                                "fraction).")
_HYP2F1_DER = tuple(Elemwise(psd.Hyp2F1Der(wrt)) for wrt in range(3))


def hyp2f1_der(a, b, c, z, wrt: int):
    """hyp2f1_der(a, b, c, z, wrt): d2F1(a, b; c; z)/da, /db or /dc (wrt 0, 1 or 2), the
    derivatives of hyp2f1 in its parameters (a series; nan where it does not converge)."""
    if wrt not in (0, 1, 2):
        raise ValueError(f"hyp2f1_der differentiates in a, b or c (wrt 0, 1 or 2), not {wrt!r}")
    return _HYP2F1_DER[wrt](a, b, c, z)


gammau = _elemwise_function(psf.gammau, "gammau", "k, x",
                            "the upper incomplete gamma function Gamma(k, x) = "
                            "gammaincc(k, x) * gamma(k).")
gammal = _elemwise_function(psf.gammal, "gammal", "k, x",
                            "the lower incomplete gamma function gamma(k, x) = "
                            "gammainc(k, x) * gamma(k).")
j0 = _elemwise_function(psf.j0, "j0", "x", "the Bessel function of the first kind J0.")
j1 = _elemwise_function(psf.j1, "j1", "x", "the Bessel function of the first kind J1.")
jv = _elemwise_function(psf.jv, "jv", "v, x",
                        "the Bessel function of the first kind of real order v (no "
                        "derivative in v).")


def iv(v, x):
    """The modified Bessel function of the first kind of real order v, as
    ``ive(v, x) * exp(|x|)`` (PyTensor's definition; work with ``log(ive) + |x|`` for large x)."""
    return mul(ive(v, x), exp(abs(x)))


def kv(v, x):
    """The modified Bessel function of the second kind of real order v, as
    ``kve(v, x) * exp(-x)`` (PyTensor's definition)."""
    return mul(kve(v, x), exp(neg(x)))


kn = kv


def chi2sf(x, k):
    """The chi-squared survival function, ``gammaincc(k / 2, x / 2)``."""
    half = constant(0.5, dtype=config.floatX)
    return gammaincc(mul(k, half), mul(x, half))


xlogy = _elemwise_function(
    _special.xlogy, "xlogy", "x, y",
    "x * log(y), 0 where x is 0 (even where y is 0), as scipy.special.xlogy; the gradient is "
    "log(y) and x / y everywhere.")
xlog1py = _elemwise_function(
    _special.xlog1py, "xlog1py", "x, y",
    "x * log1p(y), 0 where x is 0 (even where y is -1), as scipy.special.xlog1py; the gradient "
    "is log1p(y) and x / (1 + y) everywhere.")


# -- complex numbers ---------------------------------------------------------------------------

_real = Elemwise(_special.real)
_imag = Elemwise(_special.imag)
_conj = Elemwise(_special.conj)
_complex = Elemwise(_special.complex_)
angle = _elemwise_function(_special.angle, "angle", "z",
                           "the argument of z in (-pi, pi]; 0 or pi for real z.")


def real(z):
    """The real part of ``z`` (``z`` itself when it is real)."""
    z = as_tensor_variable(z)
    return _real(z) if z.dtype in ps.COMPLEX else z


def imag(z):
    """The imaginary part of ``z`` (zeros of ``z``'s shape and dtype when it is real)."""
    z = as_tensor_variable(z)
    if z.dtype in ps.COMPLEX:
        return _imag(z)

    return second(z, constant(np.zeros((), dtype=z.dtype)))


def conj(z):
    """The complex conjugate of ``z`` (``z`` itself when it is real)."""
    z = as_tensor_variable(z)
    return _conj(z) if z.dtype in ps.COMPLEX else z


conjugate = conj


def complex(real_part, imag_part):
    """``real_part + 1j * imag_part`` from two real tensors (complex64 from float32 parts)."""
    return _complex(real_part, imag_part)


def complex_from_polar(modulus, phase):
    """The complex number of modulus ``modulus`` and argument ``phase`` (radians)."""
    modulus, phase = as_tensor_variable(modulus), as_tensor_variable(phase)
    return complex(mul(modulus, cos(phase)), mul(modulus, sin(phase)))
