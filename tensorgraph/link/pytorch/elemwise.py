"""PyTorch for ``Elemwise``, ``DimShuffle`` and the scalar ops (fused ``Composite`` loops too).

The implementations are the array libraries' shared ones (``tensorgraph.link.array_elemwise``,
which says how dtypes follow the graph, not PyTorch's promotion rules); here is what PyTorch
names or computes its own way (booleans, nan's sign, the special functions) and its dtypes:

PyTorch stores uint16, uint32 and uint64 tensors but has no arithmetic for them: ops compute
them in int64 and cast the result back, which is exact for uint16 and uint32 and, for uint64,
for the ops that only need the low 64 bits (sums, products, bitwise logic: they wrap as
numpy's). uint64 comparisons, extrema, divisions and signs are refused.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import array_elemwise
from tensorgraph.link.pytorch import (
    as_tensor,
    register,
    register_scalar,
    runtime_check,
    scalar_implementation,
)
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.scalar import special_derivatives as sd
from tensorgraph.scalar import special_functions as sf
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor import scalar_special as ss
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise

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


class TorchLibrary(array_elemwise.ArrayLibrary):
    """``torch`` as the shared implementations' array library: numpy names torch spells
    otherwise, the wide unsigned dtypes computed in int64 and refused where that is wrong."""

    name = "PyTorch"

    @property
    def xp(self):
        import torch

        return torch

    def array(self, value, dtype=None):
        return as_tensor(value, dtype)

    def cast(self, value, dtype):
        return as_tensor(value, arithmetic_dtype(dtype))

    def transpose(self, x, axes):
        return x.permute(*axes) if x.ndim else x

    def owned(self, x):
        return x.clone()

    def function(self, numpy_name):
        return super().function(_RENAMED.get(numpy_name, numpy_name))

    def integer_power(self, a, b, dtype):
        return self.xp.pow(a, b)

    def check(self, op, in_dtypes, out_dtypes):
        # the dtype the op computes in: its output's (inputs are cast to it), for comparisons
        # the one numpy compares in
        computes_in = ([np.result_type(*in_dtypes).name] if isinstance(op, sm._Comparison)
                       else list(out_dtypes))
        check_dtypes(computes_in, wraps=isinstance(op, _WRAPPING))

    def scalar_implementation(self, op):
        return scalar_implementation(op)

    def runtime_check(self, bad, error, message):
        runtime_check(bad, error, message)


#: numpy ufunc names whose torch function has another name
_RENAMED = {"equal": "eq", "absolute": "abs", "invert": "bitwise_not", "rint": "round",
            "mod": "remainder", "power": "pow", "negative": "neg"}

LIBRARY = TorchLibrary()
scalar_function = LIBRARY.scalar_function
_cast_all = LIBRARY.cast_all
_reduce_left = array_elemwise.reduce_left


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
    sm.Sigmoid: _sigmoid, sm.Softplus: _softplus,
    sm.Log1mexp: array_elemwise.log1mexp(LIBRARY),
    sm.Erf: _torch("special.erf"), sm.Erfc: _torch("special.erfc"),
    sm.Erfinv: _torch("special.erfinv"), sm.Erfcinv: _erfcinv, sm.Gamma: _gamma,
    sm.GammaLn: _gammaln, sm.Psi: _torch("special.digamma"), sm.TriGamma: _trigamma,
    ss.Erfcx: _torch("special.erfcx"),
    **{cls: _torch(f"special.{cls.scipy_name}") for cls in (
        sf.GammaInc, sf.GammaIncC, sf.I0, sf.I1, sf.I0e, sf.I1e, sf.Ndtr, sf.LogNdtr)},
    sf.J0: _torch("special.bessel_j0"), sf.J1: _torch("special.bessel_j1"),
    sf.GammaU: lambda k, x: _torch("special.gammaincc")(k, x) * _gamma(k),
    sf.GammaL: lambda k, x: _torch("special.gammainc")(k, x) * _gamma(k),
}
#: the special functions torch.special does not have
_MISSING = (sf.GammaIncInv, sf.GammaIncCInv, sf.BetaInc, sf.BetaIncInv, sf.Ive, sf.Kve,
            sf.OwensT, sf.Hyp2F1, sd.GammaIncDk, sd.BetaIncDa, sf.Jv)


def _missing(op, in_dtypes, out_dtypes):
    raise NotImplementedError(f"torch.special has no {op.name}")


# the shared implementations first, then those PyTorch computes its own way
_REGISTRATIONS = array_elemwise.registrations(LIBRARY, _FLOAT_FUNCTIONS)
for _cls, _make in _REGISTRATIONS.items():
    register_scalar(_cls)(_make)
for _cls in _MISSING:
    register_scalar(_cls)(_missing)
register(Elemwise)(array_elemwise.elemwise(LIBRARY))
register(DimShuffle)(array_elemwise.dimshuffle(LIBRARY))


@register_scalar(sb.ScalarOp)
def torch_scalar_op(op, in_dtypes, out_dtypes):
    """The shared one, but a boolean sum is ``or`` and a boolean product ``and``."""
    (out,) = out_dtypes
    if np.dtype(out).kind == "b" and isinstance(op, (sb.Add, sb.Mul)):
        import torch

        fn = torch.logical_or if isinstance(op, sb.Add) else torch.logical_and
        return lambda *values: _reduce_left(fn, _cast_all(values, out))
    return array_elemwise.scalar_op(LIBRARY)(op, in_dtypes, out_dtypes)


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


