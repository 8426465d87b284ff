"""Lowering ``TensorDot`` to ops with C: ``DimShuffle`` + ``Reshape`` + ``Dot`` + ``Reshape``.

This is the computation ``np.tensordot`` itself performs (move the contracted axes together,
view both operands as matrices, one matrix product, view the result with the free axes), so
the values are numpy's; the ``Dot`` then becomes ``Dot22`` / ``Gemv`` in the ``blas`` phase,
which runs after ``specialize`` where this rewrite sits. An operand with no free axes becomes
a vector (so ``Gemv`` or a vector dot applies), and without contracted axes the product is an
outer one, written as an elementwise ``mul`` of the operands broadcast against each other.

Reshaping would hide a mismatch between two contracted axes whose lengths differ but whose
products agree (``(2, 3)`` against ``(3, 2)``), which ``TensorDot.perform`` refuses. So each
pair of contracted axes whose static lengths are not both known is checked at run time by an
``Assert`` with tensordot's message; pairs proven equal at compile time need no check.
"""

from __future__ import annotations

from tensorgraph.raise_op import assert_op
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_specialize
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.dot import Dot, TensorDot
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.rewriting.utils import fits
from tensorgraph.tensor.shape import reshape, shape_i


def _size(x, axes):
    """The product of ``x``'s lengths along ``axes`` (static where known) as an int scalar."""
    static = [x.type.shape[d] for d in axes]
    known = 1
    for s in static:
        known *= s if s is not None else 1
    parts = [shape_i(x, d) for d, s in zip(axes, static) if s is None]
    if not parts:
        return known
    product = parts[0] if len(parts) == 1 else tm.mul(*parts)
    return product if known == 1 else tm.mul(product, known)


def _permuted(x, order):
    if list(order) == list(range(x.ndim)):
        return x
    return DimShuffle(x.ndim, order)(x)


def _flattened(x, row_axes, col_axes):
    """``x`` with ``row_axes`` then ``col_axes`` first, viewed as a matrix (rows x cols), or as
    a vector when one side is empty."""
    moved = _permuted(x, list(row_axes) + list(col_axes))
    groups = [axes for axes in (row_axes, col_axes) if axes]
    if all(len(axes) == 1 for axes in groups):
        return moved
    return reshape(moved, [_size(x, axes) for axes in groups])


def _same_lengths(a, b, axes_a, axes_b):
    """0-d conditions that the contracted lengths agree (only pairs not known statically)."""
    conditions = []
    for ia, ib in zip(axes_a, axes_b):
        sa, sb = a.type.shape[ia], b.type.shape[ib]
        if sa is None or sb is None:
            conditions.append(tm.eq(shape_i(a, ia), shape_i(b, ib)))
    return conditions


@register_specialize
@node_rewriter([TensorDot])
def local_tensordot_to_dot(fgraph, node):
    """TensorDot -> (checked) reshaped operands, one Dot, the result reshaped; or an
    elementwise outer product when no axis is contracted."""
    op = node.op
    a, b = node.inputs
    out = node.outputs[0]
    free_a = [d for d in range(a.ndim) if d not in op.axes_a]
    free_b = [d for d in range(b.ndim) if d not in op.axes_b]
    if not op.axes_a:
        left = DimShuffle(a.ndim, list(range(a.ndim)) + ["x"] * b.ndim)(a)
        right = DimShuffle(b.ndim, ["x"] * a.ndim + list(range(b.ndim)))(b)
        return [fits(out, tm.mul(left, right))]
    conditions = _same_lengths(a, b, op.axes_a, op.axes_b)
    if conditions:
        a = assert_op(a, *conditions, msg=f"tensordot: the contracted axes {op.axes_a} of the "
                      f"first input and {op.axes_b} of the second have different lengths",
                      error="ValueError")
    product = Dot()(_flattened(a, free_a, op.axes_a), _flattened(b, op.axes_b, free_b))
    if product.ndim != out.ndim or len(free_a) > 1 or len(free_b) > 1:
        sizes = [_size(a, [d]) for d in free_a] + [_size(b, [d]) for d in free_b]
        product = reshape(product, sizes)
    return [fits(out, product)]
