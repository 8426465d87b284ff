"""The C of ``xlogy`` and ``xlog1py`` (``tensorgraph.tensor.scalar_special``): one element,
0 where ``x`` is 0, else ``x * log(y)`` (``log1p``) in the output's float type. The other ops
of that module have no C (see its docstring)."""

from __future__ import annotations

from tensorgraph.link.c import dtypes as c
from tensorgraph.link.c.ops.scalar import scalar_c
from tensorgraph.tensor import scalar_special as ss


def _x_log(fname, args, in_dtypes, out_dtype):
    x, y = c.args_as(args, in_dtypes, out_dtype)
    zero = c.literal(0, out_dtype)
    return c.round_to(f"(({x}) == {zero} ? {zero} : ({x}) * {c.math_call(fname, out_dtype, y)})",
                      out_dtype)


@scalar_c(ss.XLogY)
def _xlogy(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    return _x_log("log", args, in_dtypes, out_dtype)


@scalar_c(ss.XLog1PY)
def _xlog1py(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    return _x_log("log1p", args, in_dtypes, out_dtype)
