"""Specialize-phase rewrites: cheaper forms of the same computation.

``pow(x, 2)`` -> ``sqr(x)``, ``pow(x, 0.5)`` -> ``sqrt(x)``, ``pow(x, 1)`` -> ``x``,
``pow(x, -1)`` -> ``reciprocal(x)``, ``pow(x, 3 | 4)`` -> products of ``x`` and ``sqr(x)``,
``x * -1`` -> ``-x``, ``x / c`` -> ``x * (1/c)`` for a float constant ``c``.
The exponent must be one constant for every element; the result must keep the output's type
(an integer ``x`` to a float power keeps its float output through the op's own dtype rules, so
those are left alone).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_specialize
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import constant
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.rewriting.utils import constant_value, fits, is_constant, negate, scalar_op_of


@register_specialize
@node_rewriter([Elemwise])
def local_pow_specialize(fgraph, node):
    """pow(x, k) for k in {1, 2, 3, 4, 0.5, -1} without calling pow."""
    if not isinstance(scalar_op_of(node), psm.Pow):
        return None
    x, k = node.inputs
    value = constant_value(k)
    out = node.outputs[0]
    if value is None or x.dtype != out.dtype:
        return None
    value = float(value)
    if value == 1:
        new = x
    elif value == 2:
        new = tm.sqr(x)
    elif value == 3:
        new = tm.mul(x, tm.sqr(x))
    elif value == 4:
        new = tm.sqr(tm.sqr(x))
    elif value == 0.5 and out.dtype.startswith("float"):
        new = tm.sqrt(x)
    elif value == -1 and out.dtype.startswith("float"):
        new = tm.reciprocal(x)
    else:
        return None
    return [fits(out, new)]


@register_specialize
@node_rewriter([Elemwise])
def local_mul_by_minus_one(fgraph, node):
    """x * -1 -> -x."""
    if not isinstance(scalar_op_of(node), ps.Mul) or len(node.inputs) != 2:
        return None
    for c, x in (node.inputs, reversed(node.inputs)):
        if is_constant(c, -1) and x.dtype == node.outputs[0].dtype:
            return [fits(node.outputs[0], negate(x))]
    return None


@register_specialize
@node_rewriter([Elemwise])
def local_div_by_constant(fgraph, node):
    """x / c -> x * (1/c) for a float scalar constant c (a multiply is cheaper)."""
    if not isinstance(scalar_op_of(node), ps.TrueDiv):
        return None
    x, c = node.inputs
    value = constant_value(c)
    out = node.outputs[0]
    if value is None or value == 0 or not out.dtype.startswith("float") or c.ndim > x.ndim:
        return None
    inverse = constant(np.asarray(1 / value, dtype=out.dtype))
    if x.dtype != out.dtype:
        return None
    return [fits(out, tm.mul(x, inverse))]
