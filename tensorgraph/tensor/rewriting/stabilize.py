"""Stabilize-phase rewrites: numerically safer forms of common expressions.

* ``log(1 + x)`` -> ``log1p(x)``, ``log(1 - x)`` -> ``log1p(-x)``, ``exp(x) - 1`` -> ``expm1(x)``
* ``1 / (1 + exp(t))`` -> ``sigmoid(-t)``, ``exp(x) / (1 + exp(x))`` -> ``sigmoid(x)``,
  ``1 - sigmoid(x)`` -> ``sigmoid(-x)``
* ``log(sigmoid(x))`` -> ``-softplus(-x)``, ``log(1 - sigmoid(x))`` -> ``-softplus(x)``,
  ``log(1 + exp(x))`` / ``log1p(exp(x))`` -> ``softplus(x)``
* ``log(1 - exp(x))`` / ``log1p(-exp(x))`` -> ``log1mexp(x)``
* ``log(softmax(x))`` -> ``log_softmax(x)``, ``log(sum(exp(x)))`` -> ``logsumexp(x)`` (max
  subtracted first)

Together they keep the seed's cross-entropy ``-y*log(p) - (1-y)*log(1-p)`` with
``p = 1/(1 + exp(-z))`` finite for any ``z``. These are cheap local rewrites, so they are in
``fast_compile`` too: a float32 logistic regression in FAST_COMPILE needs them to train.
"""

from __future__ import annotations

from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_stabilize
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.reduction import Max, Sum, logsumexp
from tensorgraph.tensor.rewriting.utils import (
    as_dtype,
    fits,
    is_constant,
    is_elemwise,
    negate,
    op_is,
    scalar_op_of,
)
from tensorgraph.tensor.special import LogSoftmax, Softmax


def _without_one(var):
    """For ``var = 1 + a (+ b ...)``: ``a`` (or ``a + b + ...``) in ``var``'s dtype; else
    ``None``."""
    if not is_elemwise(var, ps.Add):
        return None
    inputs = var.owner.inputs
    for k, inp in enumerate(inputs):
        if is_constant(inp, 1):
            rest = [as_dtype(v, var.dtype) for v in inputs[:k] + inputs[k + 1:]]
            return rest[0] if len(rest) == 1 else tm.add(*rest)
    return None


def _one_minus(var):
    """For ``var = 1 - a``: ``a``; else ``None``."""
    if is_elemwise(var, ps.Sub) and is_constant(var.owner.inputs[0], 1):
        return var.owner.inputs[1]
    return None


def _arg_of(var, scalar_class):
    return var.owner.inputs[0] if is_elemwise(var, scalar_class) else None


def _stable_log_of(arg):
    """A stable expression for ``log(arg)``, or ``None`` if none applies."""
    x = _arg_of(arg, psm.Sigmoid)
    if x is not None:
        return negate(tm.softplus(negate(x, arg.dtype)))
    inner = _one_minus(arg)
    if inner is not None:
        return _stable_log1p_of(negate(inner, arg.dtype), inner_neg=inner)
    inner = _without_one(arg)
    if inner is not None:
        return _stable_log1p_of(inner)
    node = arg.owner
    if node is not None and op_is(node, Softmax):
        return LogSoftmax(node.op.axis)(node.inputs[0])
    if node is not None and op_is(node, Sum) and is_elemwise(node.inputs[0], psm.Exp):
        x = node.inputs[0].owner.inputs[0]
        if not _is_max_shifted(x):  # logsumexp's own graph is already stable
            return logsumexp(x, axis=node.op.axis)
    return None


def _is_max_shifted(x, depth=4) -> bool:
    """Whether ``x`` is ``a - shift`` with ``shift`` computed from a max (as in logsumexp)."""
    if not is_elemwise(x, ps.Sub):
        return False
    todo = [(x.owner.inputs[1], 0)]
    while todo:
        v, level = todo.pop()
        if v.owner is None or level > depth:
            continue
        if op_is(v.owner, Max):
            return True
        todo.extend((i, level + 1) for i in v.owner.inputs)
    return False


def _stable_log1p_of(x, inner_neg=None):
    """A stable ``log1p(x)``; ``inner_neg`` is ``a`` when ``x`` is ``-a`` built here."""
    neg_arg = inner_neg if inner_neg is not None else _arg_of(x, ps.Neg)
    if neg_arg is not None:
        s = _arg_of(neg_arg, psm.Sigmoid)
        if s is not None:
            return negate(tm.softplus(s))
        e = _arg_of(neg_arg, psm.Exp)
        if e is not None:
            return tm.log1mexp(e)
    e = _arg_of(x, psm.Exp)
    if e is not None:
        return tm.softplus(e)
    return tm.log1p(x)


@register_stabilize("fast_compile")
@node_rewriter([Elemwise])
def local_stable_log(fgraph, node):
    """log(1+x), log(1-x), log(sigmoid), log(1-sigmoid), log(1±exp), log(softmax),
    log(sum(exp)), and log1p of exp / -exp / -sigmoid."""
    op = scalar_op_of(node)
    if isinstance(op, psm.Log):
        new = _stable_log_of(node.inputs[0])
    elif isinstance(op, psm.Log1p):
        x = node.inputs[0]
        new = _stable_log1p_of(x)
        if is_elemwise(new, psm.Log1p):  # nothing better than what is there
            return None
    else:
        return None
    return [fits(node.outputs[0], new)] if new is not None else None


@register_stabilize("fast_compile")
@node_rewriter([Elemwise])
def local_expm1(fgraph, node):
    """exp(x) - 1 -> expm1(x) (and exp(x) + -1)."""
    op = scalar_op_of(node)
    if isinstance(op, ps.Sub) and is_constant(node.inputs[1], 1):
        x = _arg_of(node.inputs[0], psm.Exp)
    elif isinstance(op, ps.Add) and len(node.inputs) == 2 and is_constant(node.inputs[1], -1):
        x = _arg_of(node.inputs[0], psm.Exp)
    else:
        return None
    return [fits(node.outputs[0], tm.expm1(x))] if x is not None else None


@register_stabilize("fast_compile")
@node_rewriter([Elemwise])
def local_sigmoid(fgraph, node):
    """1/(1+exp(t)) -> sigmoid(-t); exp(x)/(1+exp(x)) -> sigmoid(x); 1 - sigmoid(x) ->
    sigmoid(-x)."""
    op = scalar_op_of(node)
    new = None
    if isinstance(op, ps.TrueDiv) or isinstance(op, psm.Reciprocal):
        num = node.inputs[0] if isinstance(op, ps.TrueDiv) else None
        den = node.inputs[-1]
        t = _arg_of(_without_one(den), psm.Exp) if _without_one(den) is not None else None
        if t is not None:
            if num is None or is_constant(num, 1):
                new = tm.sigmoid(negate(t, den.dtype))
            elif _arg_of(num, psm.Exp) is t:
                new = tm.sigmoid(t)
    elif isinstance(op, ps.Sub):
        x = _one_minus(node.outputs[0]) if is_constant(node.inputs[0], 1) else None
        s = _arg_of(x, psm.Sigmoid) if x is not None else None
        if s is not None:
            new = tm.sigmoid(negate(s, x.dtype))
    return [fits(node.outputs[0], new)] if new is not None else None
