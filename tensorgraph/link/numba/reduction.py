"""Numba for the reductions (``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any``, ``Argmax``,
``Argmin``) and the softmax family, as explicit loops with perform's dtypes (sums accumulate
in ``acc_dtype``), NaN rules (max, min and the arg extrema propagate / find the first NaN, as
numpy) and errors (no maximum of a zero-size axis).

A reduction over trailing axes keeps its running value in a local per output element; over
leading axes it walks the input in memory order and accumulates into the output array.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.numba import register
from tensorgraph.link.numba.codegen import literal
from tensorgraph.link.numba.elemwise import cast, check_dtypes, index, loops
from tensorgraph.link.numba.shape import tuple_of
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.tensor.reduction import CAReduce, _ArgExtremum, _Extremum
from tensorgraph.tensor.special import LogSoftmax, Softmax

_KINDS = {sb.Add: "sum", sb.Mul: "prod", sm.Maximum: "max", sm.Minimum: "min", sm.AND: "all",
          sm.OR: "any"}


def _identity(kind: str, dtype: str) -> str:
    dtype = np.dtype(dtype)
    if kind in ("sum", "any"):
        return literal(0, dtype)
    if kind in ("prod", "all"):
        return literal(1, dtype)
    if dtype.kind == "f":
        return literal(-np.inf if kind == "max" else np.inf, dtype)
    if dtype.kind == "b":
        return literal(kind == "min", dtype)
    info = np.iinfo(dtype)
    return literal(info.min if kind == "max" else info.max, dtype)


def _combine(kind: str, acc: str, value: str, dtype: str) -> str:
    if kind == "sum":
        return f"{acc} + {value}"
    if kind == "prod":
        return f"{acc} * {value}"
    if kind == "all":
        return f"{acc} and {value}"
    if kind == "any":
        return f"{acc} or {value}"
    better = ">" if kind == "max" else "<"
    nan = f" or {value} != {value}" if np.dtype(dtype).kind == "f" else ""
    return f"{value} if ({value} {better} {acc}{nan}) else {acc}"


def _merge(ndim, kept, reduced, kept_idx, reduced_idx) -> list[str]:
    """The full index of an element from the kept and the reduced loop indices."""
    where = dict(zip(kept, kept_idx))
    where.update(zip(reduced, reduced_idx))
    return [where[d] for d in range(ndim)]


def _check_not_empty(code, x, axes, what):
    if not axes:
        return
    empty = " or ".join(f"{x}.shape[{a}] == 0" for a in axes)
    with code.block(f"if {empty}:"):
        code.line(code.fail("ValueError", f"{what} over axes {tuple(axes)} of an array with a "
                                          f"zero-size axis: there is no {what} (numpy raises "
                                          "too)"))


@register(CAReduce)
def numba_careduce(op, node, code):
    kind = _KINDS.get(type(op.scalar_op))
    if kind is None:
        raise NotImplementedError(f"no Numba reduction with the scalar op {op.scalar_op}")
    (x,), (out,) = code.inputs, code.outputs
    x_var = node.inputs[0]
    ndim, axes = x_var.ndim, list(op.axis)
    kept = [d for d in range(ndim) if d not in axes]
    in_dtype, out_dtype = x_var.dtype, node.outputs[0].dtype
    acc = (op.acc_dtype or out_dtype) if kind in ("sum", "prod") else (
        "bool" if kind in ("all", "any") else in_dtype)
    check_dtypes([in_dtype, out_dtype, acc])
    if isinstance(op, _Extremum):
        _check_not_empty(code, x, axes, kind)
    kept_sizes = [f"{x}.shape[{d}]" for d in kept]
    reduced_sizes = [f"{x}.shape[{d}]" for d in axes]
    trailing = axes == list(range(ndim - len(axes), ndim))
    if trailing:
        code.line(f"{out} = np.empty({tuple_of(kept_sizes)}, np.{out_dtype})")
        with loops(code, kept_sizes) as kept_idx:
            total = code.name("acc")
            code.line(f"{total} = {_identity(kind, acc)}")
            with loops(code, reduced_sizes) as reduced_idx:
                value = cast(index(x, list(kept_idx) + list(reduced_idx)), in_dtype, acc)
                code.line(f"{total} = {_combine(kind, total, value, acc)}")
            code.line(f"{index(out, kept_idx)} = {cast(total, acc, out_dtype)}")
        return
    totals = code.name("acc")
    code.line(f"{totals} = np.full({tuple_of(kept_sizes)}, {_identity(kind, acc)})")
    with loops(code, [f"{x}.shape[{d}]" for d in range(ndim)]) as idx:
        where = index(totals, [idx[d] for d in kept])
        value = cast(index(x, idx), in_dtype, acc)
        code.line(f"{where} = {_combine(kind, where, value, acc)}")
    if acc == out_dtype:
        code.line(f"{out} = {totals}")
    else:
        code.line(f"{out} = {totals}.astype(np.{out_dtype})")


@register(_ArgExtremum)
def numba_arg_extremum(op, node, code):
    (x,), (out,) = code.inputs, code.outputs
    x_var = node.inputs[0]
    check_dtypes([x_var.dtype])
    ndim, axes = x_var.ndim, list(op.axis)
    kept = [d for d in range(ndim) if d not in axes]
    name = type(op).__name__.lower()
    _check_not_empty(code, x, axes, name)
    better = ">" if type(op)._nfunc is np.argmax else "<"
    nan = np.dtype(x_var.dtype).kind == "f"
    code.line(f"{out} = np.empty({tuple_of(f'{x}.shape[{d}]' for d in kept)}, np.int64)")
    with loops(code, [f"{x}.shape[{d}]" for d in kept]) as kept_idx:
        best, at, pos = code.name("best"), code.name("at"), code.name("pos")
        code.line(f"{best} = {x}[{', '.join(_merge(ndim, kept, axes, kept_idx, ['0'] * len(axes)))}]"
                  if ndim else f"{best} = {x}[()]")
        code.line(f"{at} = 0")
        code.line(f"{pos} = 0")
        with loops(code, [f"{x}.shape[{d}]" for d in axes]) as reduced_idx:
            value = code.name("v")
            code.line(f"{value} = {index(x, _merge(ndim, kept, axes, kept_idx, reduced_idx))}")
            condition = f"{value} {better} {best}"
            if nan:
                condition += f" or ({value} != {value} and {best} == {best})"
            with code.block(f"if {condition}:"):
                code.line(f"{best} = {value}")
                code.line(f"{at} = {pos}")
            code.line(f"{pos} += 1")
        code.line(f"{index(out, kept_idx)} = {at}")


def _softmax(op, node, code, log: bool):
    (x,), (out,) = code.inputs, code.outputs
    x_var = node.inputs[0]
    dtype = node.outputs[0].dtype
    check_dtypes([x_var.dtype, dtype])
    ndim = x_var.ndim
    axes = list(range(ndim)) if op.axis is None else list(op.axis)
    kept = [d for d in range(ndim) if d not in axes]
    code.line(f"{out} = np.empty({x}.shape, np.{dtype})")
    with loops(code, [f"{x}.shape[{d}]" for d in kept]) as kept_idx:
        top, total = code.name("top"), code.name("total")
        code.line(f"{top} = {literal(-np.inf, dtype)}")
        with loops(code, [f"{x}.shape[{d}]" for d in axes]) as idx:
            value = code.name("v")
            code.line(f"{value} = "
                      f"{cast(index(x, _merge(ndim, kept, axes, kept_idx, idx)), x_var.dtype, dtype)}")
            with code.block(f"if {value} > {top} or {value} != {value}:"):
                code.line(f"{top} = {value}")
        with code.block(f"if not np.isfinite({top}):"):
            code.line(f"{top} = {literal(0, dtype)}")
        code.line(f"{total} = 0.0")
        with loops(code, [f"{x}.shape[{d}]" for d in axes]) as idx:
            where = index(out, _merge(ndim, kept, axes, kept_idx, idx))
            shifted = code.name("s")
            code.line(f"{shifted} = "
                      f"{cast(index(x, _merge(ndim, kept, axes, kept_idx, idx)), x_var.dtype, dtype)}"
                      f" - {top}")
            e = code.name("e")
            code.line(f"{e} = np.exp({shifted})")
            code.line(f"{total} += {e}")
            code.line(f"{where} = {shifted if log else e}")
        if log:
            code.line(f"{total} = np.log({total})")
        with loops(code, [f"{x}.shape[{d}]" for d in axes]) as idx:
            where = index(out, _merge(ndim, kept, axes, kept_idx, idx))
            operator = "-" if log else "/"
            code.line(f"{where} = {where} {operator} np.{dtype}({total})")


@register(Softmax)
def numba_softmax(op, node, code):
    _softmax(op, node, code, log=False)


@register(LogSoftmax)
def numba_log_softmax(op, node, code):
    _softmax(op, node, code, log=True)
