"""BLAS rewrites: ``dot`` to ``Gemv`` / ``Dot22``, then scalings and additions folded in.

1. ``dot(A, x)`` (matrix . vector) -> ``Gemv(zeros, 1, A, x, 0)``; ``dot(x, A)`` ->
   ``Gemv(zeros, 1, A.T, x, 0)``; ``dot(a, b)`` (matrices) -> ``Dot22``.
2. ``c * Gemv(..., alpha, ..., 0)`` -> ``Gemv(..., c * alpha, ..., 0)`` (``c`` a 0-d or
   broadcast scalar);
3. ``y + Gemv(_, alpha, A, x, 0)`` -> ``Gemv(y, alpha, A, x, 1)`` and ``y - Gemv(...)`` ->
   ``Gemv(y, -alpha, A, x, 1)``; ``z + Dot22(a, b)`` -> ``Gemm(z, 1, a, b, 1)``.

Only same-dtype operands are rewritten (BLAS has no mixed precision); folding happens only
when the Gemv/Dot22 result has no other reader.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_blas
from tensorgraph.scalar import basic as ps
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import constant
from tensorgraph.tensor.blas import Dot22, Gemv, dot22, gemm, gemv
from tensorgraph.tensor.creation import zeros
from tensorgraph.tensor.dot import Dot
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.rewriting.utils import fits, op_is, scalar_op_of, single_client
from tensorgraph.tensor.shape import shape_i


def _scalar(value, dtype):
    return constant(np.asarray(value, dtype=dtype))


@register_blas
@node_rewriter([Dot])
def local_dot_to_blas(fgraph, node):
    """dot(matrix, vector), dot(vector, matrix) -> Gemv; dot(matrix, matrix) -> Dot22."""
    a, b = node.inputs
    out = node.outputs[0]
    if a.dtype != b.dtype or a.dtype not in ("float32", "float64"):
        return None
    one, zero = _scalar(1, a.dtype), _scalar(0, a.dtype)
    if a.ndim == 2 and b.ndim == 1:
        new = gemv(zeros((shape_i(a, 0),), dtype=a.dtype), one, a, b, zero)
    elif a.ndim == 1 and b.ndim == 2:
        new = gemv(zeros((shape_i(b, 1),), dtype=a.dtype), one, b.T, a, zero)
    elif a.ndim == 2 and b.ndim == 2:
        new = dot22(a, b)
    else:
        return None
    return [fits(out, new)]


def _scalar_factor(var):
    """``var`` as a 0-d tensor if it is a scalar broadcast by dimshuffles, else ``None``."""
    while var.owner is not None and op_is(var.owner, DimShuffle) and all(
            s == 1 for s in var.type.shape):
        var = var.owner.inputs[0]
    if var.ndim and isinstance(var, Constant) and np.size(var.data) == 1:
        return constant(np.asarray(var.data).reshape(()))   # a folded [0.5]
    return var if var.ndim == 0 else None


def _times(a, b):
    """``a * b`` for 0-d scales; known values are multiplied now (constant folding has run
    before the BLAS phase, so a product left here would run on every call)."""
    if isinstance(a, Constant) and isinstance(b, Constant):
        return _scalar(np.asarray(a.data) * np.asarray(b.data), a.dtype)
    return tm.mul(a, b)


def _fresh_gemv(fgraph, var):
    """The Gemv node computing ``var`` with beta == 0 and no other reader, else ``None``."""
    node = var.owner
    if (node is None or not op_is(node, Gemv) or node.op.pair is not None
            or not single_client(fgraph, var)):
        return None
    beta = node.inputs[4]

    if not isinstance(beta, Constant) or np.asarray(beta.data) != 0:
        return None
    return node


@register_blas
@node_rewriter([Elemwise])
def local_gemv_fold(fgraph, node):
    """c * Gemv -> Gemv with alpha scaled; y + Gemv, y - Gemv -> Gemv with beta = 1."""
    op = scalar_op_of(node)
    out = node.outputs[0]
    if out.ndim != 1 or len(node.inputs) != 2:
        return None
    left, right = node.inputs
    if any(i.dtype != out.dtype for i in node.inputs):
        return None   # an operand is upcast: the Gemv (one dtype throughout) cannot absorb it
    if isinstance(op, ps.Mul):
        for g, c in ((left, right), (right, left)):
            gnode = _fresh_gemv(fgraph, g)
            factor = _scalar_factor(c)
            if gnode is not None and factor is not None and factor.dtype == out.dtype:
                y, alpha, A, x, beta = gnode.inputs
                return [fits(out, gemv(y, _times(alpha, factor), A, x, beta))]
    elif isinstance(op, (ps.Add, ps.Sub)):
        pairs = [(right, left, 1)] if isinstance(op, ps.Sub) else [(left, right, 0), (right, left, 0)]
        for g, y, negative in pairs:
            gnode = _fresh_gemv(fgraph, g)
            if gnode is None or y.dtype != out.dtype or y.ndim != 1:
                continue
            if y.type.shape[0] == 1 and out.type.shape[0] != 1:
                continue  # y broadcasts: Gemv needs a full vector
            _, alpha, A, x, _ = gnode.inputs
            if negative:
                alpha = _times(alpha, _scalar(-1, alpha.dtype))
            return [fits(out, gemv(y, alpha, A, x, _scalar(1, out.dtype)))]
    return None


@register_blas
@node_rewriter([Elemwise])
def local_gemm_fold(fgraph, node):
    """z + Dot22(a, b) -> Gemm(z, 1, a, b, 1)."""
    op = scalar_op_of(node)
    out = node.outputs[0]
    if not isinstance(op, ps.Add) or out.ndim != 2 or len(node.inputs) != 2:
        return None
    for d, z in (node.inputs, reversed(node.inputs)):
        dnode = d.owner
        if (dnode is None or not op_is(dnode, Dot22) or not single_client(fgraph, d)
                or z.dtype != out.dtype or d.dtype != out.dtype
                or z.type.shape != out.type.shape):
            continue
        a, b = dnode.inputs
        one = _scalar(1, out.dtype)
        return [fits(out, gemm(z, one, a, b, one))]
    return None
