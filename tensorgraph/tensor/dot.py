"""Products of tensors: ``tt.dot``, ``matmul`` (the ``@`` operator), ``outer``, ``tensordot``
and ``batched_dot``, all with numpy's semantics and numpy's output dtypes (float32 with float32
stays float32).

Three ops do the work:

* ``Dot``: vector/matrix products (both inputs 1-d or 2-d), the form the BLAS rewrites turn into
  ``Gemv``/``Gemm``/``Ger``;
* ``TensorDot``: contraction of chosen axis pairs of two tensors of any ndim (``np.tensordot``),
  used by ``tensordot`` and by ``dot`` beyond 2-d;
* ``MatMul``: stacks of matrix products broadcast over leading (batch) dimensions, used by
  ``matmul`` beyond 2-d and by ``batched_dot``. As in ``Elemwise``, only batch dimensions whose
  static size is 1 are broadcast, so gradients can be summed back exactly.

Mismatched inner dimensions are reported with both shapes: when the graph is built if the
static sizes are known, otherwise when the function runs.

``Dot`` has C (BLAS for float32/float64, a plain loop for other dtypes), and so has ``MatMul``
(one BLAS product per batch element); both are in ``tensorgraph/link/c/ops/dot.py``.
``TensorDot`` has no C of its own: the ``specialize`` phase
lowers it to ``Dot`` between reshaped operands (``tensorgraph.tensor.rewriting.tensordot``),
as ``np.tensordot`` computes it; unrewritten graphs run its ``perform``.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.scalar import basic as ps
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.join import concatenate
from tensorgraph.tensor.math import add, cast, conj, mul
from tensorgraph.tensor.reduction import mean, zeros_gradient
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import normalize_axis, reshape, shape_i, with_props
from tensorgraph.tensor.type import TensorType

__all__ = ["Dot", "TensorDot", "MatMul", "dot", "matmul", "outer", "tensordot", "batched_dot",
           "batched_tensordot", "dense_dot", "vecdot", "matvec", "vecmat", "cov"]


def dot_mismatch(a_var, b_var, a, b) -> str | None:
    """``dot: inner dimensions differ: W has shape (2, 3) and x has shape (4,) (3 != 4)``
    for the values ``a``, ``b`` of the user's ``dot(a_var, b_var)``, or None when they fit."""
    inner_a, inner_b = np.shape(a)[-1], np.shape(b)[0]
    if inner_a == inner_b:
        return None
    return (f"dot: inner dimensions differ: {_has_shape(a_var, a, 'the first operand')} and "
            f"{_has_shape(b_var, b, 'the second operand')} ({inner_a} != {inner_b})")


def added_mismatch(product: str, shape: tuple, z_var, z) -> str | None:
    """``dot(W, x) has shape (2,) and cannot be added to b of shape (5,)``, or None."""
    if tuple(np.shape(z)) == tuple(shape):
        return None
    added = f"{z_var.name} of shape" if z_var.name else "a value of shape"
    return (f"{product} has shape {tuple(shape)} and cannot be added to {added} "
            f"{tuple(np.shape(z))}")


def product_name(a_var, b_var) -> str:
    """``dot(W, x)`` when the user named both operands, ``the product`` otherwise."""
    return f"dot({a_var.name}, {b_var.name})" if a_var.name and b_var.name else "the product"


def _has_shape(var, value, otherwise: str) -> str:
    return f"{var.name or otherwise} has shape {tuple(np.shape(value))}"


def _sizes_clash(a, b) -> bool:
    return a is not None and b is not None and a != b


def _bilinear_r_op(op, inputs, eval_points):
    """Forward derivative of a product that is linear in each input: op(ea, b) + op(a, eb)."""
    a, b = inputs
    ea, eb = eval_points
    terms = [op(ea, b)] if ea is not None else []
    if eb is not None:
        terms.append(op(a, eb))
    if not terms:
        return [None]
    return [terms[0] if len(terms) == 1 else add(*terms)]


def _input_grads(inputs, grads):
    """Cast each gradient to its input's dtype; discrete inputs get floatX zeros."""
    result = []
    for x, g in zip(inputs, grads):
        if x.dtype in ps.DISCRETE:
            result.append(zeros_gradient(x))
        else:
            result.append(cast(g, x.dtype))
    return result


def _swap_last(x):
    """``x`` with its last two axes swapped (the matrix transpose of a stack of matrices)."""
    order = list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2]
    return DimShuffle(x.ndim, order)(x)


# ----------------------------------------------------------------------------------------------
# Dot


class Dot(Op):
    """``np.dot`` of two tensors that are each a vector or a matrix.

    vector . vector -> scalar, matrix . vector -> vector, vector . matrix -> vector,
    matrix . matrix -> matrix. Scalars and higher ndims are handled by ``dot``.
    """

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        for name, v in (("first", a), ("second", b)):
            if v.ndim not in (1, 2):
                raise TypeError(f"Dot takes vectors and matrices; its {name} input {v} is "
                                f"{v.ndim}-d ({v.type}); use tt.dot for other ndims")
        inner_a, inner_b = a.type.shape[-1], b.type.shape[0]
        if _sizes_clash(inner_a, inner_b):
            raise ValueError(f"dot: inner dimensions differ: {a} has shape {_fmt(a.type.shape)} "
                             f"and {b} has shape {_fmt(b.type.shape)} ({inner_a} != {inner_b})")
        shape = a.type.shape[:-1] + b.type.shape[1:]
        return Apply(self, [a, b], [TensorType(ps.upcast(a.dtype, b.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"dot: inner dimensions differ: shapes {a.shape} and {b.shape} "
                             f"({a.shape[-1]} != {b.shape[0]})")
        output_storage[0][0] = np.asarray(np.dot(a, b), dtype=node.outputs[0].type.dtype)

    def error_headline(self, node, input_values):
        return dot_mismatch(*node.inputs, *input_values)

    def infer_shape(self, fgraph, node, input_shapes):
        sa, sb = input_shapes
        return [tuple(sa[:-1]) + tuple(sb[1:])]

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        gz = as_tensor_variable(output_grads[0])
        if a.ndim == 1 and b.ndim == 1:
            ga, gb = mul(gz, b), mul(gz, a)
        elif a.ndim == 2 and b.ndim == 1:
            ga, gb = self(gz.dimshuffle(0, "x"), b.dimshuffle("x", 0)), self(a.T, gz)
        elif a.ndim == 1 and b.ndim == 2:
            ga, gb = self(b, gz), self(a.dimshuffle(0, "x"), gz.dimshuffle("x", 0))
        else:
            ga, gb = self(gz, b.T), self(a.T, gz)
        return _input_grads(inputs, [ga, gb])

    def R_op(self, inputs, eval_points):
        return _bilinear_r_op(self, inputs, eval_points)


_dot = Dot()


def _fmt(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + \
        ("," if len(shape) == 1 else "") + ")"


# ----------------------------------------------------------------------------------------------
# TensorDot


class TensorDot(Op):
    """``np.tensordot(a, b, (axes_a, axes_b))``: sum over the pairs of axes
    ``(axes_a[i], axes_b[i])``; the output has a's other axes, then b's other axes."""

    __props__ = ("axes_a", "axes_b")

    def __init__(self, axes_a, axes_b):
        self.axes_a = tuple(int(a) for a in axes_a)
        self.axes_b = tuple(int(b) for b in axes_b)
        if len(self.axes_a) != len(self.axes_b):
            raise ValueError(f"tensordot: axes {self.axes_a} and {self.axes_b} must pair up "
                             "(same number of axes on each side)")

    def __str__(self):
        return f"TensorDot{{{self.axes_a}, {self.axes_b}}}"

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        normalized = [tuple(normalize_axis(ax, v.ndim, str(self)) for ax in axes)
                      for v, axes in ((a, self.axes_a), (b, self.axes_b))]
        for v, axes in zip((a, b), normalized):
            if len(set(axes)) != len(axes):
                raise ValueError(f"{self}: axes {axes} are not distinct axes of {v} ({v.type})")
        op = with_props(self, axes_a=normalized[0], axes_b=normalized[1])
        if op is not self:
            return op.make_node(a, b)
        for ia, ib in zip(self.axes_a, self.axes_b):
            if _sizes_clash(a.type.shape[ia], b.type.shape[ib]):
                raise ValueError(
                    f"tensordot: Input arrays have inconsistent type shape: axis {ia} of {a} "
                    f"(shape {_fmt(a.type.shape)}) and axis {ib} of {b} (shape "
                    f"{_fmt(b.type.shape)}) have different lengths "
                    f"({a.type.shape[ia]} != {b.type.shape[ib]})")
        shape = ([s for d, s in enumerate(a.type.shape) if d not in self.axes_a]
                 + [s for d, s in enumerate(b.type.shape) if d not in self.axes_b])
        return Apply(self, [a, b], [TensorType(ps.upcast(a.dtype, b.dtype), tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        for ia, ib in zip(self.axes_a, self.axes_b):
            if a.shape[ia] != b.shape[ib]:
                raise ValueError(f"tensordot: axis {ia} of the first input (shape {a.shape}) "
                                 f"and axis {ib} of the second (shape {b.shape}) have "
                                 f"different lengths ({a.shape[ia]} != {b.shape[ib]})")
        result = np.tensordot(a, b, (list(self.axes_a), list(self.axes_b)))
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        sa, sb = input_shapes
        return [tuple(s for d, s in enumerate(sa) if d not in self.axes_a)
                + tuple(s for d, s in enumerate(sb) if d not in self.axes_b)]

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        gz = as_tensor_variable(output_grads[0])
        free_a = [d for d in range(a.ndim) if d not in self.axes_a]
        free_b = [d for d in range(b.ndim) if d not in self.axes_b]
        gz_b = list(range(len(free_a), gz.ndim))  # gz's axes coming from b
        # ga: contract gz's b-part with b's free axes; the result has a's free axes, then b's
        # contracted axes in increasing order, which are put back in a's order
        ga = TensorDot(gz_b, free_b)(gz, b)
        summed_b = sorted(self.axes_b)
        order_a = [free_a.index(d) if d in free_a else
                   len(free_a) + summed_b.index(self.axes_b[self.axes_a.index(d)])
                   for d in range(a.ndim)]
        # gb: contract a's free axes with gz's a-part; result: a's contracted axes, b's free
        gb = TensorDot(free_a, list(range(len(free_a))))(a, gz)
        summed_a = sorted(self.axes_a)
        order_b = [len(summed_a) + free_b.index(d) if d in free_b else
                   summed_a.index(self.axes_a[self.axes_b.index(d)])
                   for d in range(b.ndim)]
        return _input_grads(inputs, [_permute(ga, order_a), _permute(gb, order_b)])

    def R_op(self, inputs, eval_points):
        return _bilinear_r_op(self, inputs, eval_points)


def _permute(x, order):
    if list(order) == list(range(x.ndim)):
        return x
    return DimShuffle(x.ndim, order)(x)


# ----------------------------------------------------------------------------------------------
# MatMul


class MatMul(Op):
    """``np.matmul`` of two stacks of matrices with the same ndim (>= 3): the last two axes are
    multiplied, the leading ones broadcast (only static size-1 batch dimensions broadcast)."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim != b.ndim or a.ndim < 3:
            raise TypeError(f"MatMul takes two stacks of matrices of the same ndim (>= 3), got "
                            f"{a} ({a.type}) and {b} ({b.type}); use tt.matmul for other ndims")
        if _sizes_clash(a.type.shape[-1], b.type.shape[-2]):
            raise ValueError(f"matmul: inner dimensions differ: {a} has shape "
                             f"{_fmt(a.type.shape)} and {b} has shape {_fmt(b.type.shape)} "
                             f"({a.type.shape[-1]} != {b.type.shape[-2]})")
        batch = []
        for d, (sa, sb) in enumerate(zip(a.type.shape[:-2], b.type.shape[:-2])):
            if sa != 1 and sb != 1 and _sizes_clash(sa, sb):
                raise ValueError(f"matmul: batch dimension {d} differs: {a} has shape "
                                 f"{_fmt(a.type.shape)} and {b} has shape {_fmt(b.type.shape)}")
            batch.append(sb if sa == 1 else sa if sb == 1 else sa if sa is not None else sb)
        shape = tuple(batch) + (a.type.shape[-2], b.type.shape[-1])
        return Apply(self, [a, b], [TensorType(ps.upcast(a.dtype, b.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matmul: inner dimensions differ: shapes {a.shape} and {b.shape} "
                             f"({a.shape[-1]} != {b.shape[-2]})")
        for d, (sa, sb) in enumerate(zip(a.shape[:-2], b.shape[:-2])):
            if sa == sb:
                continue
            for var, size in zip(node.inputs, (sa, sb)):
                if size == 1 and var.type.shape[d] != 1:
                    raise ValueError(
                        f"matmul: {var} has size 1 in batch dimension {d} at run time but its "
                        f"type {var.type} does not declare it broadcastable; shapes {a.shape} "
                        f"and {b.shape}. Declare it (shape=(1, ...)) or dimshuffle it in")
            if sa != 1 and sb != 1:
                raise ValueError(f"matmul: batch dimension {d} differs: shapes {a.shape} and "
                                 f"{b.shape}")
        output_storage[0][0] = np.asarray(np.matmul(a, b), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (a, _), (sa, sb) = node.inputs, input_shapes
        batch = [sb[d] if a.type.shape[d] == 1 else sa[d] for d in range(a.ndim - 2)]
        return [tuple(batch) + (sa[-2], sb[-1])]

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        gz = as_tensor_variable(output_grads[0])
        ga = _sum_broadcast_batch(self(gz, _swap_last(b)), a)
        gb = _sum_broadcast_batch(self(_swap_last(a), gz), b)
        return _input_grads(inputs, [ga, gb])

    def R_op(self, inputs, eval_points):
        return _bilinear_r_op(self, inputs, eval_points)


_matmul = MatMul()


def _sum_broadcast_batch(g, x):
    """Sum ``g`` over the batch axes along which ``x`` was broadcast."""
    axes = [d for d in range(x.ndim - 2) if x.type.shape[d] == 1 and g.type.shape[d] != 1]
    return tsum(g, axis=axes, keepdims=True) if axes else g


# ----------------------------------------------------------------------------------------------
# Functions


def dot(a, b):
    """``np.dot(a, b)``: scalar times tensor, inner product of vectors, matrix-vector and
    matrix-matrix products; beyond 2-d, a sum over a's last axis and b's second-to-last."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return _dot(a, b)
    return TensorDot([a.ndim - 1], [max(b.ndim - 2, 0)])(a, b)


def _tensordot_axes(a, b, axes):
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} needs tensors of at least {n} dimensions; got "
                             f"{a.ndim}-d and {b.ndim}-d")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    try:
        axes_a, axes_b = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of axis lists, got "
                        f"{axes!r}") from None
    axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    for v, ax in ((a, axes_a), (b, axes_b)):
        for d in ax:
            if not -v.ndim <= d < v.ndim:
                raise ValueError(f"tensordot: axis {d} is out of range for {v} ({v.ndim}-d)")
    return [d % a.ndim for d in axes_a], [d % b.ndim for d in axes_b]


def tensordot(a, b, axes=2):
    """``np.tensordot``: ``axes=n`` sums a's last n axes against b's first n; ``axes=(la, lb)``
    sums the pairs ``(la[i], lb[i])``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    return TensorDot(axes_a, axes_b)(a, b)


def _pad_batch(x, ndim):
    if x.ndim == ndim:
        return x
    return DimShuffle(x.ndim, ("x",) * (ndim - x.ndim) + tuple(range(x.ndim)))(x)


def matmul(a, b, dtype=None):
    """``np.matmul`` (the ``@`` operator): matrix products of the last two axes, broadcast
    over the leading ones; a 1-d operand is a row (first) or column (second) that is dropped
    from the result. ``dtype`` casts the result."""
    if dtype is not None:
        return cast(matmul(a, b), dtype)
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands cannot be scalar, they must be at least 1-d (use * "
                         f"or tt.dot for a scalar factor), got {a} ({a.type}) and {b} "
                         f"({b.type})")
    if a.ndim <= 2 and b.ndim <= 2:
        return _dot(a, b)
    a2 = a.dimshuffle("x", 0) if a.ndim == 1 else a
    b2 = b.dimshuffle(0, "x") if b.ndim == 1 else b
    ndim = max(a2.ndim, b2.ndim)
    out = _matmul(_pad_batch(a2, ndim), _pad_batch(b2, ndim))
    keep = list(range(ndim))
    if b.ndim == 1:
        keep.remove(ndim - 1)
    if a.ndim == 1:
        keep.remove(ndim - 2)
    return out if len(keep) == ndim else DimShuffle(ndim, keep)(out)


def outer(x, y):
    """Outer product of two vectors (other ndims are flattened first, as in numpy)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if x.ndim != 1:
        x = x.flatten()
    if y.ndim != 1:
        y = y.flatten()
    return _dot(x.dimshuffle(0, "x"), y.dimshuffle("x", 0))


def batched_dot(a, b):
    """``dot`` of ``a[i]`` and ``b[i]`` for each i along the first axis: (B, n)·(B, n) -> (B,),
    (B, n, m)·(B, m) -> (B, n), (B, n)·(B, n, m) -> (B, m), (B, n, m)·(B, m, k) -> (B, n, k)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim not in (2, 3) or b.ndim not in (2, 3):
        raise TypeError(f"batched_dot takes 2-d or 3-d tensors (a batch of vectors or "
                        f"matrices), got {a} ({a.type}) and {b} ({b.type})")
    a3 = a.dimshuffle(0, "x", 1) if a.ndim == 2 else a
    b3 = b.dimshuffle(0, 1, "x") if b.ndim == 2 else b
    out = _matmul(a3, b3)
    keep = [0]
    if a.ndim == 3:
        keep.append(1)
    if b.ndim == 3:
        keep.append(2)
    return out if len(keep) == 3 else DimShuffle(3, keep)(out)


def batched_tensordot(x, y, axes=2):
    """``tensordot(x[i], y[i], axes)`` for each i along the first (batch) axis. ``axes``: an
    int n (the last n axes of ``x`` with the n axes of ``y`` after the batch axis) or two
    lists of axes of ``x`` and ``y`` (counted with the batch axis, which cannot be summed).
    The result has the batch axis, then the free axes of ``x``, then those of ``y``."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if x.ndim < 1 or y.ndim < 1:
        raise TypeError(f"batched_tensordot: both operands need a batch axis, got {x} "
                        f"({x.type}) and {y} ({y.type})")
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > x.ndim - 1 or n > y.ndim - 1:
            raise ValueError(f"batched_tensordot: cannot sum over {n} axes of {x.type} and "
                             f"{y.type} (the batch axis is not summed)")
        ax_x, ax_y = list(range(x.ndim - n, x.ndim)), list(range(1, n + 1))
    else:
        try:
            ax_x, ax_y = ([normalize_axis(a, v.ndim, "axis") for a in
                           ([part] if isinstance(part, (int, np.integer)) else part)]
                          for part, v in zip(axes, (x, y), strict=True))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"batched_tensordot: axes must be an int or two lists of axes, "
                             f"got {axes!r} ({exc})") from None
        if len(ax_x) != len(ax_y):
            raise ValueError(f"batched_tensordot: {len(ax_x)} axes of x against {len(ax_y)} "
                             f"of y ({axes!r})")
        if 0 in ax_x or 0 in ax_y:
            raise ValueError(f"batched_tensordot: the batch axis 0 cannot be summed ({axes!r})")
    free_x = [d for d in range(1, x.ndim) if d not in ax_x]
    free_y = [d for d in range(1, y.ndim) if d not in ax_y]

    def size(v, dims):
        """The product of the sizes of ``dims`` of ``v`` (1 for none)."""
        sizes = [shape_i(v, d) for d in dims]
        return mul(*sizes) if len(sizes) > 1 else (sizes[0] if sizes else 1)

    batch = shape_i(x, 0)
    x3 = reshape(x.dimshuffle([0] + free_x + ax_x), [batch, size(x, free_x), size(x, ax_x)])
    y3 = reshape(y.dimshuffle([0] + ax_y + free_y), [shape_i(y, 0), size(y, ax_y),
                                                     size(y, free_y)])
    out = batched_dot(x3, y3)
    return reshape(out, [batch] + [shape_i(x, d) for d in free_x]
                   + [shape_i(y, d) for d in free_y])


dense_dot = dot


def _cast_to(x, dtype):
    if dtype is None:
        return x

    return cast(x, dtype)


def vecdot(x1, x2, dtype=None):
    """``np.vecdot``: the dot product of vectors along the last axis, broadcast over the
    leading ones (``x1`` is conjugated when complex)."""
    x1, x2 = as_tensor_variable(x1), as_tensor_variable(x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot: operands must be at least 1-d, got {x1} ({x1.type}) and "
                         f"{x2} ({x2.type})")
    return _cast_to(tsum(mul(conj(x1), x2), axis=-1), dtype)


def matvec(x1, x2, dtype=None):
    """``np.matvec``: matrices (last two axes of ``x1``) times vectors (last axis of ``x2``),
    broadcast over the leading axes."""
    x1, x2 = as_tensor_variable(x1), as_tensor_variable(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: needs a matrix and a vector, got {x1} ({x1.type}) and "
                         f"{x2} ({x2.type})")
    column = DimShuffle(x2.ndim, tuple(range(x2.ndim)) + ("x",))(x2)
    out = matmul(x1, column)
    return _cast_to(DimShuffle(out.ndim, tuple(range(out.ndim - 1)))(out), dtype)


def vecmat(x1, x2, dtype=None):
    """``np.vecmat``: vectors (last axis of ``x1``, conjugated when complex) times matrices
    (last two axes of ``x2``), broadcast over the leading axes."""
    x1, x2 = as_tensor_variable(x1), as_tensor_variable(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: needs a vector and a matrix, got {x1} ({x1.type}) and "
                         f"{x2} ({x2.type})")
    x1 = conj(x1)
    row = DimShuffle(x1.ndim, tuple(range(x1.ndim - 1)) + ("x", x1.ndim - 1))(x1)
    out = matmul(row, x2)
    keep = tuple(d for d in range(out.ndim) if d != out.ndim - 2)
    return _cast_to(DimShuffle(out.ndim, keep)(out), dtype)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """``np.cov``: the covariance matrix of the variables in the rows of ``m`` (columns when
    ``rowvar`` is False), with ``y``'s variables appended; normalized by ``N - 1``, ``N`` when
    ``bias``, or ``N - ddof``. (Frequency and analytic weights are not supported.)"""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    m = as_tensor_variable(m)
    if m.ndim > 2:
        raise ValueError(f"cov: m must be 1-d or 2-d, got {m} ({m.type})")
    variables = [m]
    if y is not None:
        y = as_tensor_variable(y)
        if y.ndim > 2:
            raise ValueError(f"cov: y must be 1-d or 2-d, got {y} ({y.type})")
        variables.append(y)
    rows = []
    for v in variables:
        if v.ndim == 1:
            v = v.dimshuffle("x", 0)
        elif not rowvar:
            v = v.T
        rows.append(v)
    x = rows[0] if len(rows) == 1 else concatenate(rows, axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    x = tm.sub(x, mean(x, axis=1, keepdims=True))
    dtype = x.dtype if x.dtype in ("float16", "float32", "float64", "complex64",
                                   "complex128") else "float64"
    count = tm.sub(tm.cast(shape_i(x, 1), dtype), tm.cast(ddof, dtype))
    c = tm.true_div(matmul(x, tm.conj(x).T), count)
    if m.ndim == 1 and y is None:
        return c[0, 0]
    return c
