"""The C of the scalar ops: a table from scalar op class to the C expression of one element.

A scalar op (``tensorgraph.scalar``) says what one element computes (its numpy ``impl``, its
dtype rule, its gradient). How an element computes in C is here: ``@scalar_c(OpClass)``
registers a function ``(op, in_dtypes, out_dtypes, args) -> str`` (the scalar family of
``tensorgraph.graph.registry``: the op, the dtypes, then C's context). ``args`` are C
expressions of the input values, each in the compute type of its dtype
(``tensorgraph.link.c.dtypes``: float16 computes as float, bool as 0/1 ``uint8_t``); the
expression is a value of the one output dtype in its compute type, equal to ``impl``'s
(numpy's) within float tolerance, nan and inf included. A function raising ``NotImplementedError`` (no C for these dtypes), or an op
class with none registered, makes the Elemwise node run ``perform``. Lookup follows the op's
class hierarchy, as for ``CImplementation``: a subclass with its own ``impl`` (or ``compute``)
gets none of its parent's C.

``scalar_body`` turns a scalar op, a ``Composite`` included, into the statements of a loop
body; Elemwise loops (``elemwise.py``) and the Gemv pair (``gemv_pair.py``) use it.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.link.c import dtypes as c
from tensorgraph.graph.lookup import SCALAR_SAME
from tensorgraph.graph.registry import Registry
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.scalar.composite import Composite

__all__ = ["scalar_c", "scalar_expr", "scalar_body", "EXPR"]

#: scalar op class -> ``fn(op, in_dtypes, out_dtypes, args) -> str`` (this module and
#: ``scalar_special`` fill it; they are imported with the C op table's built-in modules)
EXPR = Registry("C scalar", same=SCALAR_SAME)


def scalar_c(op_class: type):
    """Decorator: ``@scalar_c(OpClass)`` makes the decorated function the C expression of
    ``OpClass`` (and of its subclasses that register none and keep its ``impl``)."""
    if not (isinstance(op_class, type) and issubclass(op_class, sb.ScalarOp)):
        raise TypeError(f"scalar_c() takes a ScalarOp class, got {op_class!r}")
    return EXPR.register(op_class)


def scalar_expr(op, args: list[str], in_dtypes: tuple[str, ...], out_dtype: str) -> str:
    """The C expression of ``op`` on one element (see the module docstring)."""
    fn = EXPR.lookup(op)
    if fn is not None:
        return fn(op, in_dtypes, (out_dtype,), args)
    raise NotImplementedError(f"the scalar op {op.name} has no C implementation")


def scalar_body(scalar_op, args: list[str], in_dtypes, out_dtypes, prefix: str = "t"):
    """(C statements, output value names) computing ``scalar_op`` on the values ``args``.

    Raises ``NotImplementedError`` if some inner op has no C expression for its dtypes.
    """
    for d in list(in_dtypes) + list(out_dtypes):
        if not c.has_c(d):
            raise NotImplementedError(f"dtype {d} has no C implementation")
    if not isinstance(scalar_op, Composite):
        (out_dtype,) = out_dtypes
        expr = scalar_expr(scalar_op, list(args), tuple(in_dtypes), out_dtype)
        return [f"const {c.compute_type(out_dtype)} {prefix}0 = {expr};"], [f"{prefix}0"]
    values = dict(zip(scalar_op.inputs, args))
    lines = []
    for j, node in enumerate(scalar_op.nodes):
        node_args, node_dtypes = [], []
        for v in node.inputs:
            node_args.append(c.literal(v.data, v.type.dtype) if isinstance(v, Constant)
                             else values[v])
            node_dtypes.append(v.type.dtype)
        outs = [o.type.dtype for o in node.outputs]
        body, names = scalar_body(node.op, node_args, node_dtypes, outs, f"{prefix}{j}_")
        lines += body
        values.update(zip(node.outputs, names))
    results = [c.literal(v.data, v.type.dtype) if isinstance(v, Constant) else values[v]
               for v in scalar_op.outputs]
    return lines, results


# ----------------------------------------------------------------------------------------------
# Families of ops sharing one shape of expression: ``family(what, op, in_dtypes, out_dtypes,
# args)``, registered per op class with its ``what`` (a C operator or function name)


def _arith(symbol, op, in_dtypes, out_dtypes, args):
    """``a op b op c`` computed in ``out_dtype``, as numpy's ufunc on that dtype does."""
    (out_dtype,) = out_dtypes
    values = c.args_as(args, in_dtypes, out_dtype)
    return c.result(f" {symbol} ".join(f"({v})" for v in values), out_dtype)


def _bitwise(symbol, op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    if c.is_float(out_dtype):  # int64 with uint64 upcasts to float64: numpy refuses that too
        raise NotImplementedError(f"no bitwise operation on {out_dtype}")
    return _arith(symbol, op, in_dtypes, out_dtypes, args)


def _helper(name, op, in_dtypes, out_dtypes, args):
    """A ``tg_scalar.h`` helper applied to the arguments converted to ``out_dtype``."""
    (out_dtype,) = out_dtypes
    return c.result(c.helper(name, out_dtype, *c.args_as(args, in_dtypes, out_dtype)),
                    out_dtype)


def _math(fname, op, in_dtypes, out_dtypes, args):
    """A math function (``tg_expf``, ``sqrtf`` ...) of the arguments in ``out_dtype``."""
    (out_dtype,) = out_dtypes
    return c.round_to(c.math_call(fname, out_dtype, *c.args_as(args, in_dtypes, out_dtype)),
                      out_dtype)


def _compare(symbol, op, in_dtypes, out_dtypes, args):
    """A comparison made in the dtype numpy compares in (int64 with uint64: float64)."""
    common = np.result_type(*in_dtypes).name
    a, b = c.args_as(args, in_dtypes, common)
    return f"(({a}) {symbol} ({b}))"


def _rounding(fname, op, in_dtypes, out_dtypes, args):
    """Integers are already whole (numpy >= 2.3 returns them unchanged)."""
    (out_dtype,) = out_dtypes
    if not c.is_float(out_dtype):
        return args[0]
    return c.round_to(c.math_call(fname, out_dtype, args[0]), out_dtype)


_FAMILIES = {
    _arith: {sb.Add: "+", sb.Mul: "*", sb.Sub: "-", sb.TrueDiv: "/"},
    _bitwise: {sm.AND: "&", sm.OR: "|", sm.XOR: "^"},
    _helper: {sm.IntDiv: "floordiv", sm.Mod: "mod", sm.Maximum: "max", sm.Minimum: "min",
              sm.Sigmoid: "sigmoid", sm.Softplus: "softplus", sm.Log1mexp: "log1mexp"},
    _compare: {sm.LT: "<", sm.LE: "<=", sm.GT: ">", sm.GE: ">=", sm.EQ: "==", sm.NEQ: "!="},
    _rounding: {sm.Floor: "floor", sm.Ceil: "ceil", sm.Trunc: "trunc",
                sm.RoundHalfToEven: "nearbyint", sm.RoundHalfAwayFromZero: "round"},
    _math: {sm.Exp: "exp", sm.Exp2: "exp2", sm.Expm1: "expm1", sm.Log: "log", sm.Log2: "log2",
            sm.Log10: "log10", sm.Log1p: "log1p", sm.Sqrt: "sqrt", sm.Sin: "sin",
            sm.Cos: "cos", sm.Tan: "tan", sm.ArcSin: "asin", sm.ArcCos: "acos",
            sm.ArcTan: "atan", sm.ArcTan2: "atan2", sm.Sinh: "sinh", sm.Cosh: "cosh",
            sm.Tanh: "tanh", sm.ArcSinh: "asinh", sm.ArcCosh: "acosh", sm.ArcTanh: "atanh",
            sm.Erf: "erf", sm.Erfc: "erfc", sm.Gamma: "tgamma"},
}
for _family, _members in _FAMILIES.items():
    for _op_class, _what in _members.items():
        scalar_c(_op_class)(functools.partial(_family, _what))


# ----------------------------------------------------------------------------------------------
# Ops with an expression of their own


@scalar_c(sb.Neg)
def _neg(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    return c.result(f"-({c.cast(args[0], in_dtypes[0], out_dtype)})", out_dtype)


@scalar_c(sb.Identity)
@scalar_c(sb.Cast)
def _cast(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    return c.cast(args[0], in_dtypes[0], out_dtype)


@scalar_c(sm.Pow)
def _pow(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    if not c.is_float(out_dtype):  # integer powers raise on negative exponents: numpy
        raise NotImplementedError("integer pow has no C implementation")
    return _math("pow", op, in_dtypes, out_dtypes, args)


@scalar_c(sm.Abs)
def _abs(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    (x,) = args
    if c.is_float(out_dtype):
        return c.math_call("fabs", out_dtype, x)
    if c.is_unsigned(out_dtype):
        return x
    return c.result(f"({x}) < 0 ? -({x}) : ({x})", out_dtype)


@scalar_c(sm.Sign)
def _sign(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    x = c.cast(args[0], in_dtypes[0], out_dtype)
    if c.is_float(out_dtype):
        return c.helper("sign", out_dtype, x)
    return c.result(f"(({x}) > 0) - (({x}) < 0)", out_dtype)


@scalar_c(sm.Sqr)
def _sqr(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    return _arith("*", op, in_dtypes * 2, out_dtypes, [args[0], args[0]])


@scalar_c(sm.Clip)
def _clip(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    x, lo, hi = c.args_as(args, in_dtypes, out_dtype)
    return c.helper("min", out_dtype, c.helper("max", out_dtype, x, lo), hi)


@scalar_c(sm.Switch)
def _switch(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    a, b = c.args_as(args[1:], in_dtypes[1:], out_dtype)
    return f"(({args[0]}) ? ({a}) : ({b}))"


@scalar_c(sm.Second)
def _second(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    return c.cast(args[1], in_dtypes[1], out_dtype)


@scalar_c(sm.IsNan)
def _isnan(op, in_dtypes, out_dtypes, args):
    return f"(({args[0]}) != ({args[0]}))" if c.is_float(in_dtypes[0]) else "0"


@scalar_c(sm.IsInf)
def _isinf(op, in_dtypes, out_dtypes, args):
    return f"(__builtin_isinf({args[0]}) != 0)" if c.is_float(in_dtypes[0]) else "0"


@scalar_c(sm.IsFinite)
def _isfinite(op, in_dtypes, out_dtypes, args):
    return f"(__builtin_isfinite({args[0]}) != 0)" if c.is_float(in_dtypes[0]) else "1"


@scalar_c(sm.Invert)
def _invert(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    x = c.cast(args[0], in_dtypes[0], out_dtype)
    return f"(!({x}))" if out_dtype == "bool" else c.result(f"~({x})", out_dtype)


@scalar_c(sm.Reciprocal)
def _reciprocal(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    (x,) = c.args_as(args, in_dtypes, out_dtype)
    return c.result(f"{c.literal(1, out_dtype)} / ({x})", out_dtype)


@scalar_c(sm.GammaLn)
def _gammaln(op, in_dtypes, out_dtypes, args):
    (out_dtype,) = out_dtypes
    # scipy gives gammaln(-inf) = -inf where C's lgamma gives +inf
    (x,) = c.args_as(args, in_dtypes, out_dtype)
    inf = c.literal(np.inf, out_dtype)
    return c.round_to(f"(({x}) == -{inf} ? -{inf} : {c.math_call('lgamma', out_dtype, x)})",
                      out_dtype)
