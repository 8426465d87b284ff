"""The C of the special functions (``tensorgraph.scalar.special_functions``, and ``erfcx``,
``erfinv``, ``erfcinv``, ``psi``): a call of scipy's own compiled function through a pointer
(``tensorgraph.scalar.scipy_capi``; ``dtypes.scipy_pointer`` says how generated C gets the
address), so FAST_RUN gives the numpy reference's values.

float64 computes with scipy's double function. float32 (and float16) computes with scipy's
float function where scipy has one (``betainc``, ``betaincinv``, ``erfinv``: what
``scipy.special`` runs on float32 arrays), else in double rounded to float, as scipy's float32
loops do; float16 is then rounded to half precision, as the reference's ``astype``.

The derivatives of ``gammainc`` and ``betainc`` in their shape parameters and of ``hyp2f1`` in
its parameters (``tensorgraph.scalar.special_derivatives``) are the same series in C
(``special_derivatives.h``, included by the support code of the nodes calling them).
"""

from __future__ import annotations

import functools

from tensorgraph.link.c import dtypes as c
from tensorgraph.link.c.ops.scalar import scalar_c
from tensorgraph.scalar import math as sm
from tensorgraph.scalar import scipy_capi
from tensorgraph.scalar import special_derivatives as sd
from tensorgraph.scalar import special_functions as sf
from tensorgraph.tensor import scalar_special as ss

_OPS = {sf.GammaInc: "gammainc", sf.GammaIncC: "gammaincc", sf.GammaIncInv: "gammaincinv",
        sf.GammaIncCInv: "gammainccinv", sf.BetaInc: "betainc", sf.BetaIncInv: "betaincinv",
        sf.I0: "i0", sf.I1: "i1", sf.I0e: "i0e", sf.I1e: "i1e", sf.Ive: "ive", sf.Kve: "kve",
        sf.Ndtr: "ndtr", sf.LogNdtr: "log_ndtr", sf.OwensT: "owens_t", sf.Hyp2F1: "hyp2f1",
        ss.Erfcx: "erfcx", sm.Erfinv: "erfinv", sm.Erfcinv: "erfcinv", sm.Psi: "psi",
        sf.J0: "j0", sf.J1: "j1", sf.Jv: "jv"}


def _scipy_call(name, op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    if not c.is_float(out_dtype):
        raise NotImplementedError(f"{name} computes floats, not {out_dtype}")
    single = out_dtype != "float64" and scipy_capi.has_float_variant(name)
    variant, compute = ("f", "float32") if single else ("d", "float64")
    ctype = scipy_capi.VARIANTS[variant]
    # the last argument is Cython's skip_dispatch flag: 0 calls the C function itself
    signature = ", ".join([ctype] * len(args) + ["int"])
    values = ", ".join(c.args_as(args, in_dtypes, compute))
    value = f"(({ctype} (*)({signature})){c.scipy_pointer(name, variant)})({values}, 0)"
    return c.round_to(c.cast(value, compute, out_dtype), out_dtype)


for _op_class, _name in _OPS.items():
    scalar_c(_op_class)(functools.partial(_scipy_call, _name))


def _incomplete_gamma(name, op, in_dtypes, out_dtypes, args):
    """``gammau``/``gammal``: scipy's regularized function times its gamma, in double, as
    the reference computes them."""
    (out_dtype,) = out_dtypes
    if not c.is_float(out_dtype):
        raise NotImplementedError(f"{op.name} computes floats, not {out_dtype}")
    k, x = c.args_as(args, in_dtypes, "float64")
    regularized = f"((double (*)(double, double, int)){c.scipy_pointer(name, 'd')})({k}, {x}, 0)"
    gamma = f"((double (*)(double, int)){c.scipy_pointer('gamma', 'd')})({k}, 0)"
    return c.round_to(c.cast(f"({regularized} * {gamma})", "float64", out_dtype), out_dtype)


scalar_c(sf.GammaU)(functools.partial(_incomplete_gamma, "gammaincc"))
scalar_c(sf.GammaL)(functools.partial(_incomplete_gamma, "gammainc"))


def _derivative(function, op, in_dtypes, out_dtypes, args):
    """The series of ``special_derivatives.h`` (in double, as the reference computes); an op
    with a ``wrt`` passes it last."""
    (out_dtype,) = out_dtypes
    if not c.is_float(out_dtype):
        raise NotImplementedError(f"{op.name} computes floats, not {out_dtype}")
    values = c.args_as(args, in_dtypes, "float64")
    if hasattr(op, "wrt"):
        values = [*values, str(int(op.wrt))]
    value = f"{function}({', '.join(values)})"
    return c.round_to(c.cast(value, "float64", out_dtype), out_dtype)


scalar_c(sd.GammaIncDk)(functools.partial(_derivative, "tg_sfd_gammainc_dk"))
scalar_c(sd.BetaIncDa)(functools.partial(_derivative, "tg_sfd_betainc_da"))
scalar_c(sd.Hyp2F1Der)(functools.partial(_derivative, "tg_sfd_hyp2f1_der"))
