"""Numba for ``Elemwise`` (and the fused ``Composite`` loops), ``DimShuffle`` and the scalar ops.

An ``Elemwise`` node becomes explicit nested loops over its output, one element at a time
(Numba compiles them to machine code; a fused chain is one loop). Broadcasting follows the
graph's static rule: an input dimension of static size 1 is read at index 0, every other
input dimension must have the output's size (else the node's ValueError). One-element
constants are written into the loop as literals.

Dtypes: each scalar op computes in its output dtype (the inputs converted first, as in C),
comparisons in the dtype numpy compares in; conversions from floats to narrow integers go
through int64 as numpy's do (-2.5 -> uint8 254). float16 has no arithmetic in Numba: a node
computing in float16 is refused.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.link import integer_rules
from tensorgraph.link.numba import register, register_scalar, scalar_implementation
from tensorgraph.link.numba.codegen import literal
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.scalar import scipy_capi
from tensorgraph.scalar import special_derivatives as sd
from tensorgraph.scalar import special_functions as sf
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor import scalar_special as ss
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise


def cast(expr: str, src: str, dst: str) -> str:
    """``expr`` (a scalar of dtype ``src``) as a scalar of ``dtype`` ``dst``."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return expr
    if dst.kind == "b":
        return f"({expr} != 0)"
    if dst.kind in "iu" and dst.itemsize < 8 and src.kind == "f":
        return f"np.{dst.name}(np.int64({expr}))"
    return f"np.{dst.name}({expr})"


def check_dtypes(dtypes) -> None:
    for dtype in dtypes:
        if np.dtype(dtype).kind == "c" or dtype == "float16":
            raise NotImplementedError(f"Numba has no {dtype} arithmetic here")


class ScalarCode:
    """Where scalar implementations bind temporaries (inside the loop body)."""

    def __init__(self, code):
        self.code = code

    def let(self, expr: str) -> str:
        name = self.code.name("t")
        self.code.line(f"{name} = {expr}")
        return name


def scalar_expressions(op, in_dtypes, out_dtypes, args, sc) -> list[str]:
    """The expressions of the outputs of scalar op ``op`` on the scalar expressions ``args``
    (every scalar implementation is called so: the op, the dtypes, then Numba's context)."""
    impl = scalar_implementation(op)
    if impl is None:
        raise NotImplementedError(f"the scalar op {op.name} has no Numba implementation")
    result = impl(op, tuple(in_dtypes), tuple(out_dtypes), list(args), sc)
    return [result] if isinstance(result, str) else list(result)


def index(name: str, indices) -> str:
    """``name[i, j]`` (``name[()]`` without indices)."""
    return f"{name}[{', '.join(indices)}]" if indices else f"{name}[()]"


def loops(code, sizes):
    """Nested ``for`` blocks over ``sizes`` (expressions); yields the index names. Use as
    ``with loops(code, sizes) as idx:``."""
    import contextlib

    @contextlib.contextmanager
    def nested():
        names, stack = [], contextlib.ExitStack()
        with stack:
            for size in sizes:
                name = code.name("i")
                stack.enter_context(code.block(f"for {name} in range({size}):"))
                names.append(name)
            yield names

    return nested()


def broadcast_sizes(code, inputs, variables, ndim) -> list[str]:
    """The output sizes of broadcasting ``variables`` (static rule, see the module docstring),
    with the checks that the non-broadcast sizes agree."""
    sizes = []
    for d in range(ndim):
        full = [k for k, var in enumerate(variables) if var.type.shape[d] != 1]
        if not full:
            sizes.append("1")
            continue
        name = code.name("n")
        code.line(f"{name} = {inputs[full[0]]}.shape[{d}]")
        for k in full[1:]:
            with code.block(f"if {inputs[k]}.shape[{d}] != {name}:"):
                code.line(code.fail("ValueError", f"inputs cannot be broadcast together: "
                                    f"dimension {d} of input {k} ({variables[k]}) differs from "
                                    f"the others (only dimensions of static size 1 broadcast)"))
        sizes.append(name)
    return sizes


@register(Elemwise)
def numba_elemwise(op, node, code):
    in_dtypes = [i.dtype for i in node.inputs]
    out_dtypes = [o.dtype for o in node.outputs]
    check_dtypes(in_dtypes + out_dtypes)
    ndim = node.outputs[0].ndim
    inline = {k: literal(np.asarray(v.data).reshape(()), v.dtype)
              for k, v in enumerate(node.inputs)
              if isinstance(v, Constant) and np.size(v.data) == 1}
    looped = [k for k in range(len(node.inputs)) if k not in inline]
    sizes = broadcast_sizes(code, [code.inputs[k] for k in looped],
                            [node.inputs[k] for k in looped], ndim)
    destroyed = dict(op.inplace_pattern)
    shape = "(" + "".join(f"{s}, " for s in sizes) + ")"
    for o, (name, dtype) in enumerate(zip(code.outputs, out_dtypes)):
        if o in destroyed:
            code.line(f"{name} = {code.inputs[destroyed[o]]}")
        else:
            code.line(f"{name} = np.empty({shape}, np.{dtype})")
    with loops(code, sizes) as idx:
        args = []
        for k, var in enumerate(node.inputs):
            if k in inline:
                args.append(inline[k])
                continue
            where = [i if var.type.shape[d] != 1 else "0" for d, i in enumerate(idx)]
            args.append(code.name("a"))
            code.line(f"{args[-1]} = {index(code.inputs[k], where)}")
        exprs = scalar_expressions(op.scalar_op, in_dtypes, out_dtypes, args, ScalarCode(code))
        for name, expr, dtype, out in zip(code.outputs, exprs, out_dtypes, node.outputs):
            code.line(f"{index(name, idx)} = {expr}")


@register(DimShuffle)
def numba_dimshuffle(op, node, code):
    """Dropped size-1 dimensions indexed at 0, the kept ones transposed, new ones added with
    None: a view, as numpy's."""
    (x,), (out,) = code.inputs, code.outputs
    for d in op.dropped:  # unknown static size: checked at run time, as perform does
        if node.inputs[0].type.shape[d] != 1:
            code.line(f"if {x}.shape[{d}] != 1: raise ValueError("
                      f"{op.dropped_size_message(d)!r})")
    expr = x
    if op.dropped:
        expr = f"{expr}[{', '.join('0' if d in op.dropped else ':' for d in range(op.input_ndim))}]"
    remaining = [d for d in range(op.input_ndim) if d not in op.dropped]
    order = [remaining.index(d) for d in op.kept]
    if order == list(range(len(order)))[::-1] and len(order) > 1:
        expr = f"{expr}.T"  # Numba keeps the layout known (C <-> F): BLAS takes it as is
    elif order != sorted(order):
        expr = f"np.transpose({expr}, ({''.join(f'{o}, ' for o in order)}))"
    if "x" in op.new_order:
        parts = ", ".join("None" if d == "x" else ":" for d in op.new_order)
        expr = f"{expr}[{parts}]"
    if node.outputs[0].ndim == 0 and node.inputs[0].ndim > 0:
        code.line(f"{out} = np.empty((), np.{node.outputs[0].dtype})")
        code.line(f"{out}[()] = {expr}")
    else:
        code.line(f"{out} = {expr}")


# ----------------------------------------------------------------------------------------------
# Scalar ops: each returns the expression of its output(s)


def _numpy_name(op) -> str:
    name = getattr(op.nfunc, "__name__", None)
    if not name:
        raise NotImplementedError(f"the scalar op {op.name} has no Numba implementation")
    return name


def _fold(function, values):
    expr = values[0]
    for v in values[1:]:
        expr = f"{function}({expr}, {v})"
    return expr


@register_scalar(sb.ScalarOp)
def numba_scalar_op(op, in_dtypes, out_dtypes, args, sc):
    """Every op with a numpy ufunc: the arguments in the output dtype, the ufunc of the same
    name (left to right for add and mul of several)."""
    (out,) = out_dtypes
    values = [cast(a, d, out) for a, d in zip(args, in_dtypes)]
    function = f"np.{_numpy_name(op)}"
    if len(values) <= 2:
        return f"{function}({', '.join(values)})"
    return _fold(function, values)


def numba_bitwise(op, in_dtypes, out_dtypes, args, sc):
    if np.dtype(out_dtypes[0]).kind not in "biu":  # int64 with uint64: numpy refuses too
        raise NotImplementedError(f"no bitwise operation on {out_dtypes[0]}")
    return numba_scalar_op(op, in_dtypes, out_dtypes, args, sc)


for _cls in (sm.AND, sm.OR, sm.XOR, sm.Invert):
    register_scalar(_cls)(numba_bitwise)


@register_scalar(sm._Comparison)
def numba_comparison(op, in_dtypes, out_dtypes, args, sc):
    common = np.result_type(*in_dtypes).name
    a, b = (cast(x, d, common) for x, d in zip(args, in_dtypes))
    return f"np.{_numpy_name(op)}({a}, {b})"


#: numpy's signed integer ``//`` and ``%`` (``integer_rules``): by 0 gives 0, by -1 negates
#: (INT_MIN wraps to itself) or gives 0, where Numba's own gives 0 or traps (SIGFPE)
SIGNED_FLOOR_DIVIDE = '''
def signed_floor_divide(a, b):
    if b == 0:
        return a - a
    if b == -1:
        return -a
    return a // b
'''
SIGNED_MOD = '''
def signed_mod(a, b):
    if b == 0 or b == -1:
        return a - a
    return a % b
'''


@register_scalar(sm.IntDiv)
@register_scalar(sm.Mod)
def numba_integer_division(op, in_dtypes, out_dtypes, args, sc):
    (out,) = out_dtypes
    if np.dtype(out).kind != "i":
        return numba_scalar_op(op, in_dtypes, out_dtypes, args, sc)
    name, source = (("signed_floor_divide", SIGNED_FLOOR_DIVIDE) if isinstance(op, sm.IntDiv)
                    else ("signed_mod", SIGNED_MOD))
    helper = sc.code.helper(name, source)
    a, b = (cast(x, d, out) for x, d in zip(args, in_dtypes))
    return f"np.{out}({helper}({a}, {b}))"


#: an integer power in the integer dtype DTYPE, wrapping as numpy's at every step (Numba's
#: np.power of integers goes wrong for large exponents); the exponent is not negative
INT_POWER = '''
def int_power_DTYPE(base, exponent):
    result = np.DTYPE(1)
    while exponent > 0:
        if exponent & 1:
            result = np.DTYPE(result * base)
        base = np.DTYPE(base * base)
        exponent = exponent >> 1
    return result
'''


@register_scalar(sm.Pow)
def numba_pow(op, in_dtypes, out_dtypes, args, sc):
    """numpy's integer powers (``integer_rules``): a negative exponent fails the call with
    numpy's error (Numba's gives 0), large exponents wrap as numpy's."""
    (out,) = out_dtypes
    if np.dtype(out).kind not in "iu":
        return numba_scalar_op(op, in_dtypes, out_dtypes, args, sc)
    base, exponent = (sc.let(cast(x, d, out)) for x, d in zip(args, in_dtypes))
    if np.dtype(out).kind == "i":
        with sc.code.block(f"if {exponent} < 0:"):
            sc.code.line(sc.code.fail("ValueError", integer_rules.NEGATIVE_POWER))
    helper = sc.code.helper(f"int_power_{out}", INT_POWER.replace("DTYPE", out))
    return f"{helper}({base}, {exponent})"


@register_scalar(sm.Sign)
def numba_sign(op, in_dtypes, out_dtypes, args, sc):
    """Numba's np.sign of an unsigned integer gives its largest value for some (254 -> 255)."""
    (out,) = out_dtypes
    if np.dtype(out).kind != "u":
        return numba_scalar_op(op, in_dtypes, out_dtypes, args, sc)
    return f"np.{out}({cast(args[0], in_dtypes[0], out)} != 0)"


def _as_is(op, in_dtypes, out_dtypes, args, sc):
    return f"np.{_numpy_name(op)}({args[0]})"


for _cls in (sm.IsNan, sm.IsInf, sm.IsFinite):
    register_scalar(_cls)(_as_is)


@register_scalar(sm.Abs)
def numba_abs(op, in_dtypes, out_dtypes, args, sc):
    return cast(f"np.abs({args[0]})", in_dtypes[0], out_dtypes[0])


@register_scalar(sb.Identity)
def numba_identity(op, in_dtypes, out_dtypes, args, sc):
    return cast(args[0], in_dtypes[0], out_dtypes[0])


register_scalar(sb.Cast)(numba_identity)


@register_scalar(sm.Clip)
def numba_clip(op, in_dtypes, out_dtypes, args, sc):
    x, lo, hi = (cast(a, d, out_dtypes[0]) for a, d in zip(args, in_dtypes))
    return f"np.minimum(np.maximum({x}, {lo}), {hi})"


@register_scalar(sm.Switch)
def numba_switch(op, in_dtypes, out_dtypes, args, sc):
    condition = cast(args[0], in_dtypes[0], "bool")
    a, b = (cast(x, d, out_dtypes[0]) for x, d in zip(args[1:], in_dtypes[1:]))
    return f"({a} if {condition} else {b})"


@register_scalar(sm.Second)
def numba_second(op, in_dtypes, out_dtypes, args, sc):
    return cast(args[1], in_dtypes[1], out_dtypes[0])


def _rounding(op, in_dtypes, out_dtypes, args, sc):
    if np.dtype(out_dtypes[0]).kind != "f":
        return cast(args[0], in_dtypes[0], out_dtypes[0])
    return f"np.{_numpy_name(op)}({cast(args[0], in_dtypes[0], out_dtypes[0])})"


for _cls in (sm.Floor, sm.Ceil, sm.Trunc, sm.RoundHalfToEven):
    register_scalar(_cls)(_rounding)


@register_scalar(sm.RoundHalfAwayFromZero)
def numba_round_away(op, in_dtypes, out_dtypes, args, sc):
    (out,) = out_dtypes
    if np.dtype(out).kind != "f":
        return cast(args[0], in_dtypes[0], out)
    x = sc.let(cast(args[0], in_dtypes[0], out))
    whole = sc.let(f"np.trunc({x})")
    return f"({whole} + np.sign({x}) if np.abs({x} - {whole}) >= 0.5 else {whole})"


def _float_args(args, in_dtypes, out_dtypes, sc):
    return [sc.let(cast(a, d, out_dtypes[0])) for a, d in zip(args, in_dtypes)]


@register_scalar(sm.FloatOp)
def numba_float_op(op, in_dtypes, out_dtypes, args, sc):
    """A float function of numpy's name (exp, log1p, tanh, arctan2, ...) on the arguments in
    the output dtype."""
    values = [cast(a, d, out_dtypes[0]) for a, d in zip(args, in_dtypes)]
    return f"np.{_numpy_name(op)}({', '.join(values)})"


@register_scalar(sm.Sigmoid)
def numba_sigmoid(op, in_dtypes, out_dtypes, args, sc):
    (x,), out = _float_args(args, in_dtypes, out_dtypes, sc), out_dtypes[0]
    e = sc.let(f"np.exp(-np.abs({x}))")
    one = literal(1, out)
    return f"({one} / ({one} + {e}) if {x} >= 0 else {e} / ({one} + {e}))"


@register_scalar(sm.Softplus)
def numba_softplus(op, in_dtypes, out_dtypes, args, sc):
    (x,), out = _float_args(args, in_dtypes, out_dtypes, sc), out_dtypes[0]
    return f"np.log1p(np.exp(-np.abs({x}))) + np.maximum({x}, {literal(0, out)})"


@register_scalar(sm.Log1mexp)
def numba_log1mexp(op, in_dtypes, out_dtypes, args, sc):
    (x,), out = _float_args(args, in_dtypes, out_dtypes, sc), out_dtypes[0]
    return (f"(np.log1p(-np.exp({x})) if {x} < {literal(-np.log(2.0), out)} "
            f"else np.log(-np.expm1({x})))")


def _math(function):
    def make(op, in_dtypes, out_dtypes, args, sc):
        (x,), out = _float_args(args, in_dtypes, out_dtypes, sc), out_dtypes[0]
        return f"np.{out}(math.{function}({x}))"
    return make


register_scalar(sm.Erf)(_math("erf"))
register_scalar(sm.Erfc)(_math("erfc"))
register_scalar(sm.Gamma)(_math("gamma"))


@register_scalar(sm.GammaLn)
def numba_gammaln(op, in_dtypes, out_dtypes, args, sc):
    (x,), out = _float_args(args, in_dtypes, out_dtypes, sc), out_dtypes[0]
    return f"(-np.{out}(np.inf) if {x} == -np.inf else np.{out}(math.lgamma({x})))"


def _no_numba(op, in_dtypes, out_dtypes, args, sc):
    raise NotImplementedError(f"the scalar op {op.name} comes from scipy.special, which has "
                              "no compiled function of it for Numba to call")


register_scalar(sm.TriGamma)(_no_numba)


@register_scalar(sd.GammaIncDk)
@register_scalar(sd.BetaIncDa)
def _no_numba_series(op, in_dtypes, out_dtypes, args, sc):
    raise NotImplementedError(f"{op.name} (a derivative of gammainc/betainc in a shape "
                              "parameter) is a series written for C and numpy only")


#: 2F1's derivative series (``tensorgraph.scalar.special_derivatives``, the same algorithm
#: as its numpy reference and its C): hyp2f1_series returns (summed, value, derivative, the
#: sums of their terms' absolute values), hyp2f1_form (summed, derivative, spread) of a form
HYP2F1_SERIES = '''
def hyp2f1_series(a, b, c, z, da, db, dc):
    size = abs(z)
    converges = size < 1 or (size == 1 and c > a + b)
    settled = max(max(-a, -b), max(-c, 0.0)) + 1
    term, dterm, value, total, small = 1.0, 0.0, 1.0, 0.0, False
    spread, dspread = 1.0, 0.0
    for k in range(MAX_TERMS):
        ak, bk, ck = a + k, b + k, c + k
        if ck == 0:
            return False, 0.0, 0.0, 0.0, 0.0
        den = ck * (k + 1)
        ratio = ak * bk * z / den
        slope = (da * bk + db * ak) * z / den - dc * ratio / ck
        term, dterm = term * ratio, dterm * ratio + term * slope
        value += term
        total += dterm
        spread += abs(term)
        dspread += abs(dterm)
        if term == 0 and dterm == 0:
            return True, value, total, spread, dspread
        if not (math.isfinite(total) and math.isfinite(value)):
            return False, 0.0, 0.0, 0.0, 0.0
        if k < settled:
            continue
        if not converges:
            return False, 0.0, 0.0, 0.0, 0.0
        q = abs(ratio) if size == 1 else max(abs(ratio), size)
        was_small = small
        small = q < 1 and abs(dterm) * q <= EPS * (1 - q) * abs(total) and \\
            abs(term) * q <= EPS * (1 - q) * abs(value)
        if small and was_small:
            return True, value, total, spread, dspread
    return False, 0.0, 0.0, 0.0, 0.0
'''
HYP2F1_FORM = '''
def hyp2f1_form(a, b, c, z, wrt, form):
    da = 1.0 if wrt == 0 else 0.0
    db = 1.0 if wrt == 1 else 0.0
    dc = 1.0 if wrt == 2 else 0.0
    p, q, x, exponent, power = a, b, z, 0.0, 0.0
    if form == 1:
        q, x, exponent, power = c - b, z / (z - 1), -a, -da
        da, db, dc = da, -db + dc, dc
    elif form == 2:
        p, x, exponent, power = c - a, z / (z - 1), -b, -db
        da, db, dc = -da + dc, db, dc
    elif form == 3:
        p, q, exponent, power = c - a, c - b, c - a - b, dc - da - db
        da, db, dc = -da + dc, -db + dc, dc
    summed, value, total, spread, dspread = hyp2f1_series(p, q, c, x, da, db, dc)
    if not summed:
        return False, 0.0, 0.0
    slope = 0.0 if form == 0 else power * math.log1p(-z)
    front = 1.0 if form == 0 else (1 - z) ** exponent
    derivative = front * (total + slope * value)
    spread = front * (dspread + abs(slope) * spread)
    if derivative == 0:
        return True, derivative, (0.0 if spread == 0 else math.inf)
    return True, derivative, spread / abs(derivative)
'''
HYP2F1_DER = '''
def hyp2f1_der(a, b, c, z, wrt):
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c) and math.isfinite(z)):
        return math.nan
    if z == 0:
        return 0.0
    if abs(z) < 1:
        if z < 0:
            forms = (1, 2, 3, 0)
        elif z < 0.5:
            forms = (0, 3, 1, 2)
        else:
            forms = (0, 3, -1, -1)
    elif z == -1 and c > a + b:
        forms = (1, 2, 0, -1)
    else:
        forms = (0, -1, -1, -1)
    best, best_spread = math.nan, math.inf
    for form in forms:
        if form < 0:
            break
        summed, derivative, spread = hyp2f1_form(a, b, c, z, wrt, form)
        if not summed:
            continue
        if math.isnan(best) or spread < best_spread:
            best, best_spread = derivative, spread
        if spread <= SPREAD:
            break
    return best
'''


@register_scalar(sd.Hyp2F1Der)
def numba_hyp2f1_der(op, in_dtypes, out_dtypes, args, sc):
    """The series in double (as the reference), rounded to the output's dtype."""
    (out,) = out_dtypes
    if out not in ("float32", "float64"):
        raise NotImplementedError(f"{op.name} computing in {out}")
    sc.code.helper("hyp2f1_series", HYP2F1_SERIES.replace("MAX_TERMS", str(sd.HYP2F1_MAX_TERMS))
                   .replace("EPS", repr(sd._EPS)))
    sc.code.helper("hyp2f1_form", HYP2F1_FORM)
    helper = sc.code.helper("hyp2f1_der", HYP2F1_DER.replace("SPREAD",
                                                             repr(sd.HYP2F1_SPREAD)))
    values = [sc.let(cast(a, d, "float64")) for a, d in zip(args, in_dtypes)]
    return f"np.{out}({helper}({', '.join(values)}, {int(op.wrt)}))"


@functools.lru_cache(maxsize=None)
def scipy_external(name: str, variant: str):
    """scipy's compiled ``name`` (``tensorgraph.scalar.scipy_capi``; variant 'd' or 'f') as
    a function Numba calls by symbol, the symbol given this process's address: Numba's cached
    machine code names the symbol, never the address, so it stays valid in a new process
    (the generated module calls this when it is imported, before Numba loads its cache)."""
    import llvmlite.binding
    from numba import types

    symbol = f"tg_sf_{name}_{variant}"
    llvmlite.binding.add_symbol(symbol, scipy_capi.address(name, variant))
    real = types.float64 if variant == "d" else types.float32
    return types.ExternalFunction(
        symbol, real(*[real] * scipy_capi.SCIPY_FUNCTIONS[name], types.intc))


#: a helper calling scipy's function NAME (variant VARIANT) on ARGS; the pointer is bound
#: when the generated module is imported (the lines after the function)
SCIPY_CALL = '''
def sf_NAME_VARIANT(ARGS):
    return _sf_NAME_VARIANT(ARGS, 0)


from tensorgraph.link.numba.elemwise import scipy_external as _scipy_external
_sf_NAME_VARIANT = _scipy_external("NAME", "VARIANT")
'''


def _scipy_call(name):
    """scipy's compiled function, in double (rounded to float32 after), or in float where
    scipy computes float32 arrays so (betainc, betaincinv, erfinv), as FAST_RUN's C."""
    def make(op, in_dtypes, out_dtypes, args, sc):
        (out,) = out_dtypes
        if out not in ("float32", "float64"):
            raise NotImplementedError(f"{op.name} computing in {out}")
        single = out == "float32" and scipy_capi.has_float_variant(name)
        variant, compute = ("f", "float32") if single else ("d", "float64")
        params = ", ".join(f"a{k}" for k in range(len(args)))
        helper = sc.code.helper(f"sf_{name}_{variant}", SCIPY_CALL.replace("NAME", name)
                                .replace("VARIANT", variant).replace("ARGS", params))
        values = [sc.let(cast(a, d, compute)) for a, d in zip(args, in_dtypes)]
        return f"np.{out}({helper}({', '.join(values)}))"
    return make


for _cls, _name in {sf.GammaInc: "gammainc", sf.GammaIncC: "gammaincc",
                    sf.GammaIncInv: "gammaincinv", sf.GammaIncCInv: "gammainccinv",
                    sf.BetaInc: "betainc", sf.BetaIncInv: "betaincinv", sf.I0: "i0",
                    sf.I1: "i1", sf.I0e: "i0e", sf.I1e: "i1e", sf.Ive: "ive", sf.Kve: "kve",
                    sf.Ndtr: "ndtr", sf.LogNdtr: "log_ndtr", sf.OwensT: "owens_t",
                    sf.Hyp2F1: "hyp2f1", ss.Erfcx: "erfcx", sm.Erfinv: "erfinv",
                    sm.Erfcinv: "erfcinv", sm.Psi: "psi", sf.J0: "j0", sf.J1: "j1",
                    sf.Jv: "jv"}.items():
    register_scalar(_cls)(_scipy_call(_name))


def _incomplete_gamma(name):
    """``gammau``/``gammal``: scipy's regularized function times its gamma, in double."""
    regularized, gamma = _scipy_call(name), _scipy_call("gamma")

    def make(op, in_dtypes, out_dtypes, args, sc):
        (out,) = out_dtypes
        value = regularized(op, in_dtypes, ("float64",), args, sc)
        factor = gamma(op, in_dtypes[:1], ("float64",), args[:1], sc)
        return f"np.{out}({value} * {factor})"
    return make


register_scalar(sf.GammaU)(_incomplete_gamma("gammaincc"))
register_scalar(sf.GammaL)(_incomplete_gamma("gammainc"))


@register_scalar(Composite)
def numba_composite(op, in_dtypes, out_dtypes, args, sc):
    """The inner scalar graph, one temporary per inner node, each in its own dtype."""
    env = dict(zip(op.inputs, args))
    for inner in op.nodes:
        values = [literal(np.asarray(v.data), v.type.dtype) if isinstance(v, Constant)
                  else env[v] for v in inner.inputs]
        exprs = scalar_expressions(inner.op, [v.type.dtype for v in inner.inputs],
                                   [o.type.dtype for o in inner.outputs], values, sc)
        for out, expr in zip(inner.outputs, exprs):
            env[out] = sc.let(expr)
    return [literal(np.asarray(v.data), v.type.dtype) if isinstance(v, Constant) else env[v]
            for v in op.outputs]
