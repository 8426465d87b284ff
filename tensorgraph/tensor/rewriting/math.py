"""Canonical forms of add/sub/neg and mul/div/neg chains (canonicalize phase).

A chain is flattened into signed terms (``a - (b - c)``: ``+a, -b, +c``) or into a numerator
and a denominator (``a / (b / c)``: ``a * c / b``), constants are collected into one, and the
chain is rebuilt in one readable form:

* sums: ``pos_1 + ... + c - (neg_1 + ...)``; ``(x + 2) + 3`` -> ``x + 5``, ``x - 2 - 3`` ->
  ``x - 5``, ``-(-x)`` -> ``x``; an integer term and its negation cancel (``i - i`` -> zeros
  of the result's shape);
* products: ``-(c * num_1 * ... / (den_1 * ...))``; ``2 * (3 * x)`` -> ``6 * x``, ``x / 4`` ->
  ``0.25 * x`` (a division by a constant becomes a product only where the reciprocal is exact,
  the specialize phase does the rest), ``-a * -b`` -> ``a * b``.

Safe presets never turn a nan into a number: a float ``x - x`` is nan where ``x`` is inf or
nan, so it stays, and a factor divided by itself cancels only where it is never zero or
infinite (``exp``, ``sigmoid``, ``cosh`` and the like, whose extreme values are rounding, not
meaning). ``local_add_canonical_unsafe`` and ``local_mul_canonical_unsafe`` (tag 'unsafe', only
in the ``unsafe`` preset) cancel every ``x - x`` and ``x / x``.

Only nodes read by nothing else are flattened into a chain (so nothing is computed twice), and
only within one dtype. A rewrite applies only when the rebuilt chain differs from what is there,
which makes the canonical form a fixed point of the canonicalize equilibrium.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize, register_in
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import constant
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.rewriting.shape import shape_asserts
from tensorgraph.tensor.rewriting.utils import (
    as_dtype,
    broadcast_like,
    constant_array,
    dropped_variables,
    is_elemwise,
    same_structure,
    scalar_op_of,
)

_ADDITIVE = (ps.Add, ps.Sub, ps.Neg)
_MULTIPLICATIVE = (ps.Mul, ps.TrueDiv, ps.Neg, psm.Reciprocal)
#: factors that are never zero (mathematically), so ``f / f`` is 1
_NEVER_ZERO = (psm.Exp, psm.Exp2, psm.Sigmoid, psm.Cosh)


def _canonical_dtype(dtype: str) -> bool:
    """Sums and products of floats and signed ints (unsigned negation and bool sums differ)."""
    return dtype.startswith(("float", "int"))


def _expandable(fgraph, var, dtype, classes, top) -> bool:
    """Whether ``var`` is computed by one of ``classes`` that the chain may absorb."""
    return (is_elemwise(var, *classes) and var.dtype == dtype
            and (top or len(fgraph.clients.get(var, ())) == 1))


def _as_constant(value, out):
    """The value of a constant of ``out``'s dtype and ndim holding ``value`` (size-1 values
    broadcast). Chains are planned with such arrays standing for constants, so that a chain
    already in canonical form is recognised without building anything (``_is_item``)."""
    value = np.asarray(value, dtype=out.dtype)
    if value.size == 1:
        return value.reshape((1,) * out.ndim)
    return value.reshape((1,) * (out.ndim - value.ndim) + value.shape)


def _realized(item, dtype):
    """A planned item as a variable of ``dtype`` (arrays become constants; a term of another
    dtype is cast: the chain computed every step in ``dtype``, see ``as_dtype``)."""
    return constant(item) if isinstance(item, np.ndarray) else as_dtype(item, dtype)


def _is_item(var, item) -> bool:
    if isinstance(item, np.ndarray):
        return (isinstance(var, Constant) and var.type.dtype == item.dtype
                and np.shape(var.data) == item.shape and np.array_equal(var.data, item))
    return var is item


def _is_chain(var, items, scalar_class) -> bool:
    """Whether ``var`` is exactly what ``_sum``/``_product`` would build from ``items``."""
    if len(items) == 1:
        return _is_item(var, items[0])
    return (is_elemwise(var, scalar_class) and len(var.owner.inputs) == len(items)
            and all(_is_item(v, i) for v, i in zip(var.owner.inputs, items)))


def _unfilled(var, models):
    """The value of ``second(model, value)`` (its model joins ``models``, which the result's
    shape may be restored from), or ``var``: a chain only needs the fill's shape where nothing
    else in it has that shape."""
    while is_elemwise(var, psm.Second) and var.owner.inputs[1].dtype == var.dtype:
        model, var = var.owner.inputs
        models.append(model)
    return var


def finish(fgraph, node, new, sources, reason):
    """``new`` fitted to the node's output, or ``None`` when it cannot or changes nothing.

    ``sources`` are the variables the node's chain was made of; those ``new`` no longer reads
    restore the result's shape where needed, and are checked to have had its size.
    """
    out = node.outputs[0]
    new = broadcast_like(out, new, sources)
    if new is None or same_structure(new, out):
        return None
    return [shape_asserts(fgraph, new, dropped_variables(new, sources), reason)]


# ----------------------------------------------------------------------------------------------
# Sums


def add_terms(fgraph, var, dtype, sign=1, terms=None, top=True):
    """The signed terms ``[(+1 | -1, variable), ...]`` of the sum computing ``var``."""
    terms = [] if terms is None else terms
    if _expandable(fgraph, var, dtype, _ADDITIVE, top):
        op = scalar_op_of(var)
        inputs = var.owner.inputs
        if isinstance(op, ps.Add):
            for i in inputs:
                add_terms(fgraph, i, dtype, sign, terms, False)
        elif isinstance(op, ps.Sub):
            add_terms(fgraph, inputs[0], dtype, sign, terms, False)
            add_terms(fgraph, inputs[1], dtype, -sign, terms, False)
        else:
            add_terms(fgraph, inputs[0], dtype, -sign, terms, False)
    else:
        terms.append((sign, var))
    return terms


def _cancel(terms):
    """Remove each term together with an earlier term of the opposite sign and same variable."""
    kept: list = []
    for sign, var in terms:
        match = next((k for k, (s, v) in enumerate(kept) if v is var and s == -sign), None)
        if match is None:
            kept.append((sign, var))
        else:
            del kept[match]
    return kept


def _sum(items, dtype):
    realized = [_realized(item, dtype) for item in items]
    return realized[0] if len(realized) == 1 else tm.add(*realized)


def _is_sum_form(out, pos, neg) -> bool:
    """Whether ``out`` already is ``pos_1 + ... - (neg_1 + ...)``."""
    if pos and neg:
        return (is_elemwise(out, ps.Sub) and _is_chain(out.owner.inputs[0], pos, ps.Add)
                and _is_chain(out.owner.inputs[1], neg, ps.Add))
    if pos:
        return _is_chain(out, pos, ps.Add)
    if neg:
        return is_elemwise(out, ps.Neg) and _is_chain(out.owner.inputs[0], neg, ps.Add)
    return False


def _canonical_add(fgraph, node, cancel_all: bool, reason: str):
    out = node.outputs[0]
    if not is_elemwise(node, *_ADDITIVE) or not _canonical_dtype(out.dtype):
        return None
    terms = add_terms(fgraph, out, out.dtype)
    models: list = []
    terms = [(sign, _unfilled(var, models)) for sign, var in terms]
    sources = [v for _, v in terms] + models
    total, rest = None, []
    for sign, var in terms:
        value = constant_array(var)
        if value is None:
            rest.append((sign, var))
        else:
            value = value.astype(out.dtype) if sign > 0 else -value.astype(out.dtype)
            total = value if total is None else total + value
    if cancel_all or not out.dtype.startswith("float"):
        rest = _cancel(rest)
    pos = [v for s, v in rest if s > 0]
    neg = [v for s, v in rest if s < 0]
    if total is not None and np.any(total != 0):
        if pos and np.all(total < 0):
            neg.append(_as_constant(-total, out))
        else:
            pos.append(_as_constant(total, out))
    if _is_sum_form(out, pos, neg):
        return None
    if pos and neg:
        new = tm.sub(_sum(pos, out.dtype), _sum(neg, out.dtype))
    elif pos:
        new = _sum(pos, out.dtype)
    elif neg:
        new = tm.neg(_sum(neg, out.dtype))
    else:
        new = constant(_as_constant(0, out))
    return finish(fgraph, node, new, sources, reason)


@register_canonicalize("canonical")
@node_rewriter([Elemwise])
def local_add_canonical(fgraph, node):
    """Flatten a chain of add/sub/neg, collect its constants, cancel integer ``i - i``; rebuild
    as ``pos_1 + ... + c - (neg_1 + ...)``."""
    return _canonical_add(fgraph, node, False, "local_add_canonical")


@register_in("canonicalize", "unsafe", default_tags=False)
@node_rewriter([Elemwise])
def local_add_canonical_unsafe(fgraph, node):
    """As ``local_add_canonical``, and float ``x - x`` cancels too (wrong where x is inf/nan)."""
    return _canonical_add(fgraph, node, True, "local_add_canonical_unsafe")


# ----------------------------------------------------------------------------------------------
# Products


def mul_factors(fgraph, var, dtype, top=True, through_shared=False):
    """``(sign, numerator, denominator)`` of the product computing ``var``.

    ``through_shared`` also flattens inner nodes that have other readers (for rewrites that
    trade a duplicated product for stability).
    """
    sign, num, den = 1, [], []

    def visit(v, power, top):
        nonlocal sign
        if _expandable(fgraph, v, dtype, _MULTIPLICATIVE, top or through_shared):
            op = scalar_op_of(v)
            inputs = v.owner.inputs
            if isinstance(op, ps.Mul):
                for i in inputs:
                    visit(i, power, False)
            elif isinstance(op, ps.TrueDiv):
                visit(inputs[0], power, False)
                visit(inputs[1], -power, False)
            elif isinstance(op, psm.Reciprocal):
                visit(inputs[0], -power, False)
            else:
                sign = -sign
                visit(inputs[0], power, False)
        else:
            (num if power > 0 else den).append(v)

    visit(var, 1, top)
    return sign, num, den


def _exact_quotient(numerator, denominator, dtype):
    """``numerator / denominator`` (size-1 arrays) when exact in ``dtype``, else ``None``."""
    if numerator.size != 1 or denominator.size != 1:
        return None
    n, d = np.asarray(numerator, dtype).ravel()[0], np.asarray(denominator, dtype).ravel()[0]
    if d == 0 or not (np.isfinite(n) and np.isfinite(d)):
        return None
    q = np.asarray(n / d, dtype=dtype)
    if not np.isfinite(q) or Fraction(float(q)) * Fraction(float(d)) != Fraction(float(n)):
        return None
    return q


def _product(items, dtype):
    realized = [_realized(item, dtype) for item in items]
    return realized[0] if len(realized) == 1 else tm.mul(*realized)


def build_product(out, sign, num, den):
    """``-(num_1 * ... / (den_1 * ...))`` (sign -1) or without the negation (sign 1); arrays
    among the factors stand for constants."""
    if num:
        new = _product(num, out.dtype)
        if den:
            new = tm.true_div(new, _product(den, out.dtype))
    elif den:
        new = tm.true_div(constant(_as_constant(1, out)), _product(den, out.dtype))
    else:
        new = constant(_as_constant(1, out))
    return tm.neg(new) if sign < 0 else new


def _is_product_form(out, sign, num, den) -> bool:
    """Whether ``out`` already is what ``build_product`` would build."""
    if sign < 0:
        if not is_elemwise(out, ps.Neg):
            return False
        out = out.owner.inputs[0]
    if not den:
        return bool(num) and _is_chain(out, num, ps.Mul)
    return (is_elemwise(out, ps.TrueDiv)
            and _is_chain(out.owner.inputs[0], num or [_as_constant(1, out)], ps.Mul)
            and _is_chain(out.owner.inputs[1], den, ps.Mul))


def _canonical_mul(fgraph, node, cancel_all: bool):
    out = node.outputs[0]
    if not is_elemwise(node, *_MULTIPLICATIVE) or not _canonical_dtype(out.dtype):
        return None
    sign, num, den = mul_factors(fgraph, out, out.dtype)
    models: list = []
    num = [_unfilled(v, models) for v in num]
    den = [_unfilled(v, models) for v in den]
    sources = num + den + models
    c_num = c_den = None
    factors = {"num": [], "den": []}
    for where, variables in (("num", num), ("den", den)):
        for var in variables:
            value = constant_array(var)
            if value is None:
                factors[where].append(var)
            elif where == "num":
                c_num = value.astype(out.dtype) if c_num is None else c_num * value
            else:
                c_den = value.astype(out.dtype) if c_den is None else c_den * value
    num, den = factors["num"], factors["den"]
    kept_den = []
    for var in den:
        k = next((k for k, v in enumerate(num) if v is var), None)
        if k is not None and (cancel_all or is_elemwise(var, *_NEVER_ZERO)):
            del num[k]
        else:
            kept_den.append(var)
    den = kept_den
    if c_den is not None:
        merged = _exact_quotient(np.ones(1) if c_num is None else c_num, c_den, out.dtype)
        if merged is not None:
            c_num, c_den = merged, None
        elif np.all(c_den == 1):
            c_den = None
    if c_num is not None and np.all(c_num < 0):
        sign, c_num = -sign, -c_num
    if c_num is not None and not np.all(c_num == 1):
        num.insert(0, _as_constant(c_num, out))
    if c_den is not None:
        den.insert(0, _as_constant(c_den, out))
    if _is_product_form(out, sign, num, den):
        return None
    return finish(fgraph, node, build_product(out, sign, num, den), sources,
                  "local_mul_canonical_unsafe" if cancel_all else "local_mul_canonical")


@register_canonicalize("canonical")
@node_rewriter([Elemwise])
def local_mul_canonical(fgraph, node):
    """Flatten a chain of mul/div/neg/reciprocal, collect its constants, cancel ``f / f`` for
    never-zero ``f``; rebuild as ``-(c * num... / (den...))``."""
    return _canonical_mul(fgraph, node, cancel_all=False)


@register_in("canonicalize", "unsafe", default_tags=False)
@node_rewriter([Elemwise])
def local_mul_canonical_unsafe(fgraph, node):
    """As ``local_mul_canonical``, and every ``x / x`` cancels (wrong where ``x`` is 0)."""
    return _canonical_mul(fgraph, node, cancel_all=True)
