"""PyTorch for ``Elemwise``, ``DimShuffle`` and the scalar ops (fused ``Composite`` loops too).

Dtypes are the graph's, not PyTorch's promotion rules: a scalar op computes in its output
dtype (the inputs are cast to it first, as the C kernels do), comparisons in the dtype numpy
compares in, and every result is cast to the dtype its variable has. So float32 graphs stay
float32 and int8 arithmetic wraps as numpy's does.

PyTorch stores uint16, uint32 and uint64 tensors but has no arithmetic for them: ops compute
them in int64 and cast the result back, which is exact for uint16 and uint32 and, for uint64,
for the ops that only need the low 64 bits (sums, products, bitwise logic: they wrap as
numpy's). uint64 comparisons, extrema, divisions and signs are refused.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import integer_rules
from tensorgraph.link.pytorch import (as_tensor, register, register_scalar, runtime_check,
                                      scalar_implementation)
from tensorgraph.link.traced import composite_function
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise, _runtime_shape

#: numpy dtypes PyTorch stores but has no arithmetic for: computed in int64 (see above)
WIDE_UNSIGNED = ("uint16", "uint32", "uint64")


def torch_dtype(dtype):
    """The torch dtype of a numpy dtype (or its name)."""
    import torch

    name = np.dtype(dtype).name
    found = getattr(torch, name, None) if name != "bool" else torch.bool
    if not isinstance(found, torch.dtype):
        raise NotImplementedError(f"PyTorch has no dtype {name}")
    return found


def arithmetic_dtype(dtype) -> str:
    """The dtype PyTorch computes values of ``dtype`` in (int64 for the wide unsigned ones)."""
    name = np.dtype(dtype).name
    return "int64" if name in WIDE_UNSIGNED else name


def check_dtypes(dtypes, wraps: bool = True) -> None:
    """Refuse uint64 unless the computation only needs its low 64 bits (``wraps``)."""
    if not wraps:
        for dtype in dtypes:
            if np.dtype(dtype).name == "uint64":
                raise NotImplementedError("PyTorch has no uint64 arithmetic (it stores such "
                                          "tensors only), and this op needs more than the "
                                          "low 64 bits of int64's")


#: scalar ops whose result on uint64 values computed in int64 keeps every bit right
_WRAPPING = (sb.Add, sb.Sub, sb.Mul, sb.Neg, sm.AND, sm.OR, sm.XOR, sm.Invert, sb.Identity, sb.Cast,
             sm.Switch, sm.Second, sm.Sqr, sm.Pow, sm.Abs, sb.TrueDiv, sm.FloatOp, Composite,
             sm.IsNan, sm.IsInf, sm.IsFinite, sm.Floor, sm.Ceil, sm.Trunc, sm.RoundHalfToEven,
             sm.RoundHalfAwayFromZero)


def scalar_function(op, in_dtypes, out_dtypes):
    """A function of tensors computing the scalar op ``op`` elementwise (broadcasting as
    numpy), or NotImplementedError naming the op."""
    # the dtype the op computes in: its output's (inputs are cast to it), for comparisons
    # the one numpy compares in
    computes_in = ([np.result_type(*in_dtypes).name] if isinstance(op, sm._Comparison)
                   else list(out_dtypes))
    check_dtypes(computes_in, wraps=isinstance(op, _WRAPPING))
    impl = scalar_implementation(op)
    if impl is None:
        raise NotImplementedError(f"the scalar op {op.name} has no PyTorch implementation")
    return impl(op, tuple(in_dtypes), tuple(out_dtypes))


@register(Elemwise)
def torch_elemwise(op, node):
    fn = scalar_function(op.scalar_op, [i.dtype for i in node.inputs],
                         [o.dtype for o in node.outputs])
    in_dtypes = [i.dtype for i in node.inputs]
    dtypes = [o.dtype for o in node.outputs]
    several = len(node.outputs) > 1

    def elemwise(*inputs):
        shape = _runtime_shape(node, inputs)  # numpy's broadcasting, the graph's static rule
        results = fn(*[as_tensor(v, d) for v, d in zip(inputs, in_dtypes)])
        if not several:
            results = (results,)
        outs = tuple(as_tensor(r, d).expand(shape) for r, d in zip(results, dtypes))
        return outs if several else outs[0]

    return elemwise


@register(DimShuffle)
def torch_dimshuffle(op, node):
    def dimshuffle(x):
        x = as_tensor(x)
        res = x.permute(*(op.kept + op.dropped)) if x.ndim else x
        kept_shape = tuple(res.shape[:len(op.kept)])
        shape = tuple(1 if d == "x" else kept_shape[op.kept.index(d)] for d in op.new_order)
        return res.reshape(shape)

    return dimshuffle


# ----------------------------------------------------------------------------------------------
# Scalar ops


def _cast_all(values, dtype):
    return [as_tensor(v, arithmetic_dtype(dtype)) for v in values]


#: numpy ufunc names whose torch function has another name
_RENAMED = {"equal": "eq", "absolute": "abs", "invert": "bitwise_not", "rint": "round", "mod": "remainder",
            "true_divide": "true_divide", "power": "pow", "negative": "neg"}


def _torch_named(op):
    """The torch function with the name of the op's numpy ufunc."""
    import torch

    name = getattr(op.nfunc, "__name__", None)
    name = _RENAMED.get(name, name)
    fn = getattr(torch, name, None) if name else None
    if fn is None:
        raise NotImplementedError(f"the scalar op {op.name} has no PyTorch implementation "
                                  f"(no torch.{name})")
    return fn


def _reduce_left(fn, values):
    result = values[0]
    for v in values[1:]:
        result = fn(result, v)
    return result


@register_scalar(sb.ScalarOp)
def torch_scalar_op(op, in_dtypes, out_dtypes):
    """Every op with a numpy ufunc: inputs cast to the output dtype, the torch function of the
    same name (applied left to right for n-ary add and mul)."""
    fn = _torch_named(op)
    (out,) = out_dtypes
    if np.dtype(out).kind == "b" and isinstance(op, (sb.Add, sb.Mul)):
        import torch

        fn = torch.logical_or if isinstance(op, sb.Add) else torch.logical_and

    def compute(*values):
        return _reduce_left(fn, _cast_all(values, out))

    return compute


@register_scalar(sb.Sub)
def torch_sub(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    if np.dtype(out).kind == "b":
        return lambda a, b: torch.logical_xor(*_cast_all((a, b), out))
    return lambda a, b: torch.sub(*_cast_all((a, b), out))


@register_scalar(sb.Neg)
def torch_neg(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    if np.dtype(out).kind == "b":
        return lambda x: as_tensor(x, out)
    return lambda x: torch.neg(as_tensor(x, arithmetic_dtype(out)))


@register_scalar(sm._Comparison)
def torch_comparison(op, in_dtypes, out_dtypes):
    fn = _torch_named(op)
    common = np.result_type(*in_dtypes).name

    def compare(a, b):
        return fn(*_cast_all((a, b), common))

    return compare


def _as_is(op, in_dtypes, out_dtypes):
    fn = _torch_named(op)
    return lambda x: fn(as_tensor(x))


for _cls in (sm.IsNan, sm.IsInf, sm.IsFinite):
    register_scalar(_cls)(_as_is)


@register_scalar(sm.Abs)
def torch_abs(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    if np.dtype(in_dtypes[0]).kind in "bu":
        return lambda x: as_tensor(x, out)
    return lambda x: torch.abs(as_tensor(x)).to(torch_dtype(out))


@register_scalar(sm.Sign)
def torch_sign(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    if np.dtype(out).kind != "f":
        return lambda x: torch.sign(as_tensor(x, arithmetic_dtype(out)))

    def sign(x):  # numpy's sign of nan is nan (torch's is 0)
        x = as_tensor(x, out)
        return torch.where(torch.isnan(x), x, torch.sign(x))

    return sign


@register_scalar(sm.Sqr)
def torch_sqr(op, in_dtypes, out_dtypes):
    (out,) = out_dtypes

    def sqr(x):
        x = as_tensor(x, arithmetic_dtype(out))
        return x * x

    return sqr


def _integer_division(op, in_dtypes, out_dtypes):
    """``//`` and ``%``: numpy gives 0 for an integer divided by 0 (PyTorch raises)."""
    import torch

    (out,) = out_dtypes
    kind = np.dtype(out).kind
    if kind == "b":
        raise NotImplementedError(f"{op.name} of booleans")
    fn = torch.floor_divide if isinstance(op, sm.IntDiv) else torch.remainder

    def divide(a, b):
        a, b = _cast_all((a, b), out)
        if kind not in "iu":
            return fn(a, b)
        zero = b == 0
        safe = torch.where(zero, torch.ones_like(b), b)
        return torch.where(zero, torch.zeros_like(a), fn(a, safe))

    return divide


register_scalar(sm.IntDiv)(_integer_division)
register_scalar(sm.Mod)(_integer_division)


@register_scalar(sb.TrueDiv)
def torch_true_div(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    return lambda a, b: torch.true_divide(*_cast_all((a, b), out))


def _bitwise(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    if np.dtype(out).kind not in "biu":
        raise NotImplementedError(f"{op.name} of {out}")
    fn = {sm.AND: torch.bitwise_and, sm.OR: torch.bitwise_or, sm.XOR: torch.bitwise_xor}[type(op)]

    def bitwise(*values):
        return _reduce_left(fn, _cast_all(values, out))

    return bitwise


for _cls in (sm.AND, sm.OR, sm.XOR):
    register_scalar(_cls)(_bitwise)


@register_scalar(sm.Invert)
def torch_invert(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    return lambda x: torch.bitwise_not(as_tensor(x, arithmetic_dtype(out)))


@register_scalar(sb.Identity)
def torch_identity(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    target = np.dtype(out)
    narrow_int = target.kind in "iu" and target.itemsize < 8
    if narrow_int and any(np.dtype(d).kind == "f" for d in in_dtypes):
        # numpy converts a float to a narrow integer through int64 (so -2.5 -> uint8 254)
        return lambda x: as_tensor(x).to(torch.int64).to(torch_dtype(out))
    if target.kind == "b":
        return lambda x: as_tensor(x) != 0
    return lambda x: as_tensor(x, out)


register_scalar(sb.Cast)(torch_identity)


@register_scalar(sm.Clip)
def torch_clip(op, in_dtypes, out_dtypes):
    import torch

    def clip(x, lo, hi):
        x, lo, hi = _cast_all((x, lo, hi), out_dtypes[0])
        return torch.minimum(torch.maximum(x, lo), hi)

    return clip


@register_scalar(sm.Switch)
def torch_switch(op, in_dtypes, out_dtypes):
    import torch

    def switch(cond, a, b):
        a, b = _cast_all((a, b), out_dtypes[0])
        return torch.where(as_tensor(cond) != 0, a, b)

    return switch


@register_scalar(sm.Second)
def torch_second(op, in_dtypes, out_dtypes):
    return lambda a, b: as_tensor(b, out_dtypes[0])


def _rounding(op, in_dtypes, out_dtypes):
    """floor, ceil, trunc, round (half to even, as torch.round): integers are their own
    result."""
    (out,) = out_dtypes
    if np.dtype(out).kind != "f":
        return torch_identity(op, in_dtypes, out_dtypes)
    fn = _torch_named(op)
    return lambda x: fn(as_tensor(x, out))


for _cls in (sm.Floor, sm.Ceil, sm.Trunc, sm.RoundHalfToEven):
    register_scalar(_cls)(_rounding)


@register_scalar(sm.RoundHalfAwayFromZero)
def torch_round_away(op, in_dtypes, out_dtypes):
    import torch

    (out,) = out_dtypes
    if np.dtype(out).kind != "f":
        return torch_identity(op, in_dtypes, out_dtypes)

    def round_away(x):
        x = as_tensor(x, out)
        whole = torch.trunc(x)
        return torch.where(torch.abs(x - whole) >= 0.5, whole + torch.sign(x), whole)

    return round_away


@register_scalar(sm.Pow)
def torch_pow(op, in_dtypes, out_dtypes):
    """numpy's integer powers (``integer_rules``): a negative exponent fails the call (PyTorch
    would give 0)."""
    import torch

    (out,) = out_dtypes

    def power(a, b):
        a, b = _cast_all((a, b), out)
        negative = integer_rules.negative_exponents(b, out)
        if negative is not None:
            runtime_check(negative, ValueError, integer_rules.NEGATIVE_POWER)
        return torch.pow(a, b)

    return power


def _float_function(fn):
    """A FloatOp: inputs cast to the (float) output dtype, then the function."""
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        if np.dtype(out).kind != "f":
            raise NotImplementedError(f"{op.name} computing in {out}")

        def compute(*values):
            return fn(*_cast_all(values, out))

        return compute
    return make


def _torch(path: str):
    def call(*values):
        import torch

        target = torch
        for part in path.split("."):
            target = getattr(target, part)
        return target(*values)
    return call


def _softplus(x):
    import torch

    return torch.log1p(torch.exp(-torch.abs(x))) + torch.clamp(x, min=0)


def _sigmoid(x):
    import torch

    return torch.sigmoid(x)


def _log1mexp(x):
    import torch

    far = x < -np.log(2.0)
    minus_one = torch.full_like(x, -1.0)
    return torch.where(far, torch.log1p(-torch.exp(torch.where(far, x, minus_one))),
                       torch.log(-torch.expm1(torch.where(far, minus_one, x))))


def _erfcinv(x):
    import torch

    return -torch.special.ndtri(x / 2) / np.sqrt(2.0)


def _gamma(x):
    """Gamma from log|gamma| and its sign, with scipy's values at the poles (inf at +-0 with
    the zero's sign, nan at the negative integers and -inf)."""
    import torch

    g = torch.exp(torch.lgamma(x))
    floor = torch.floor(x)
    negative = x < 0
    g = torch.where(negative & (torch.remainder(floor, 2) == 1), -g, g)
    g = torch.where(negative & (x == floor), torch.full_like(x, np.nan), g)
    return torch.where(x == 0, torch.copysign(torch.full_like(x, np.inf), x), g)


def _gammaln(x):
    import torch

    return torch.where(x == -np.inf, x, torch.lgamma(x))


def _trigamma(x):
    import torch

    return torch.special.polygamma(1, x)


_FLOAT_FUNCTIONS = {
    sm.Sigmoid: _sigmoid, sm.Softplus: _softplus, sm.Log1mexp: _log1mexp,
    sm.Erf: _torch("special.erf"), sm.Erfc: _torch("special.erfc"),
    sm.Erfinv: _torch("special.erfinv"), sm.Erfcinv: _erfcinv, sm.Gamma: _gamma,
    sm.GammaLn: _gammaln, sm.Psi: _torch("special.digamma"), sm.TriGamma: _trigamma,
}


def torch_float_op(op, in_dtypes, out_dtypes):
    target = _FLOAT_FUNCTIONS.get(type(op))
    if target is None:
        target = _torch_named(op)
    return _float_function(target)(op, in_dtypes, out_dtypes)


for _cls in [sm.FloatOp, *_FLOAT_FUNCTIONS]:
    register_scalar(_cls)(torch_float_op)


@register_scalar(Composite)
def torch_composite(op, in_dtypes, out_dtypes):
    """The inner scalar graph, each intermediate cast to its dtype (as separate nodes would)."""
    return composite_function(op, scalar_function, as_tensor, as_tensor)
