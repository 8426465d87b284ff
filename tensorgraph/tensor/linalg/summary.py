"""Numbers that summarize a matrix (PyTensor's ``pytensor.tensor.linalg.summary``): ``det``
and ``slogdet`` (per-matrix ops batched by ``Blockwise``), ``norm`` and ``trace`` (graphs of
other ops)."""

from __future__ import annotations

import warnings

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor import math as tm
from tensorgraph.tensor import reduction as tr
from tensorgraph.tensor.diagonal import trace as _trace
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, linalg_dtype, matrix_input, real_dtype,
)
from tensorgraph.tensor.linalg.decomposition import svd
from tensorgraph.tensor.linalg.inverse import inv
from tensorgraph.tensor.shape import expand_dims
from tensorgraph.tensor.type import TensorType

__all__ = ["Det", "det", "SLogDet", "slogdet", "norm", "trace"]


def trace(x):
    """The sum of the diagonal of a matrix; use ``tensorgraph.tensor.trace``: this path warns
    (a FutureWarning), as PyTensor 3's ``pytensor.tensor.linalg.trace`` does."""
    warnings.warn("tensorgraph.tensor.linalg.trace is deprecated, as PyTensor 3's "
                  "pytensor.tensor.linalg.trace is: use tensorgraph.tensor.trace", FutureWarning,
                  stacklevel=2)
    return _trace(x)


class Det(Op):
    """numpy's ``det`` of a square matrix."""

    __props__ = ()
    gufunc_signature = "(m,m)->()"

    def make_node(self, x):
        x = as_matrix(x, "det")
        m, n = x.type.shape
        if m is not None and n is not None and m != n:
            raise ValueError(f"det: Determinant not defined for a non-square matrix: expected a "
                             f"square matrix, got {x} of static shape ({m}, {n})")
        return Apply(self, [x], [TensorType(linalg_dtype(x.type.dtype), ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("det", x)
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(np.linalg.det(np.asarray(x, dtype)), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        """``g det(A) inv(A).T`` (needs an invertible ``A``)."""

        (x,), (d,), (g,) = inputs, outputs, output_grads
        return [g * d * inv(x).T]


def det(x):
    """The determinant of ``x`` (or of each matrix of a stack)."""
    return batched(Det())(matrix_input(x, 2, "det"))


class SLogDet(Op):
    """numpy's ``slogdet``: the sign of the determinant and the log of its absolute value
    (no overflow for large matrices)."""

    __props__ = ()
    gufunc_signature = "(m,m)->(),()"

    def make_node(self, x):
        x = as_matrix(x, "slogdet", square=True)
        dtype = linalg_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, ())(), TensorType(real_dtype(dtype), ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("slogdet", x)
        sign, logabs = np.linalg.slogdet(np.asarray(x, node.outputs[0].type.dtype))
        output_storage[0][0] = np.asarray(sign, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(logabs, dtype=node.outputs[1].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(), ()]

    def L_op(self, inputs, outputs, output_grads):
        """The sign is piecewise constant; ``log|det A|`` has ``inv(A).T``."""

        (x,), (_, g) = inputs, output_grads
        return [g * inv(x).T]


def slogdet(x):
    """``(sign, log|det|)`` of ``x`` (or of each matrix of a stack)."""
    sign, logabs = batched(SLogDet())(matrix_input(x, 2, "slogdet"))
    return sign, logabs


_MATRIX_ORDS = (None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2)


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """numpy's ``norm``: vector norms over one axis (``ord`` None / 2, 1, inf, -inf, 0 or
    any p), matrix norms over two (``ord`` None / 'fro' / 'f', 'nuc', 1, -1, 2, -2, inf,
    -inf). With ``axis=None`` a vector takes a vector norm and anything of two or more
    dimensions a matrix norm of each matrix of its last two axes (PyTensor's rule: a stack
    of matrices gets one norm per matrix, where numpy would flatten it)."""
    x = as_tensor_variable(x)
    nd = x.type.ndim
    if axis is None:
        if nd == 0:
            raise ValueError(f"norm: expected a vector, a matrix or a stack of matrices, got "
                             f"{x} (0-d)")
        axis = (0,) if nd == 1 else (nd - 2, nd - 1)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    if not (isinstance(axes, (tuple, list))
            and all(isinstance(a, (int, np.integer)) for a in axes)):
        # a symbolic axis would leave the norm's core dimensions unknown when building
        kind = f" ({axis.type})" if hasattr(axis, "type") else ""
        raise TypeError(f"norm: 'axis' must be None, an integer, or a tuple of integers, got "
                        f"{axis!r}{kind}")
    axes = tuple(int(a) % nd if -nd <= a < nd else _bad_axis(a, nd) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, "fro" if ord == "f" else ord, axes, keepdims)
    raise ValueError(f"norm: axis must name one or two different axes, got {axis!r}")


def _bad_axis(a, nd):
    raise ValueError(f"norm: axis {a} is out of range for a {nd}-d tensor")


def _vector_norm(x, ord, axis, keepdims):
    x = _as_float(x)
    kw = {"axis": axis, "keepdims": keepdims}
    if ord is None or ord == 2:
        return tm.sqrt(tr.sum(tm.sqr(abs(x)), **kw))
    if isinstance(ord, str):
        raise ValueError(f"norm: Invalid norm order {ord!r} for vectors ({ord!r} is a matrix "
                         "norm; a vector takes a number)")
    if ord == np.inf:
        return tr.max(abs(x), **kw)
    if ord == -np.inf:
        return tr.min(abs(x), **kw)
    if ord == 0:
        return tr.sum(tm.cast(tm.neq(x, 0), x.dtype), **kw)
    if ord == 1:
        return tr.sum(abs(x), **kw)
    p = np.asarray(ord, dtype=x.dtype)
    return tr.sum(abs(x) ** p, **kw) ** (1 / p)


def _as_float(x):
    dtype = real_dtype(linalg_dtype(x.type.dtype))
    return x if x.type.dtype == dtype or x.type.dtype.startswith("complex") else tm.cast(x, dtype)


def _matrix_norm(x, ord, axes, keepdims):
    if ord not in _MATRIX_ORDS:
        raise ValueError(f"norm: Invalid norm order for matrices: {ord!r} (use one of "
                         "None, 'fro', 'nuc', inf, -inf, 1, -1, 2, -2)")
    x = _as_float(x)
    row, col = axes
    if ord in (None, "fro"):
        out = tm.sqrt(tr.sum(tm.sqr(abs(x)), axis=axes))
    elif ord in (1, -1, np.inf, -np.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        sums = tr.sum(abs(x), axis=summed)
        other -= other > summed
        out = (tr.max if ord > 0 else tr.min)(sums, axis=other)
    else:
        rest = [d for d in range(x.type.ndim) if d not in axes]
        s = svd(x.dimshuffle(*rest, row, col), compute_uv=False)
        out = {"nuc": tr.sum, 2: tr.max, -2: tr.min}[ord](s, axis=-1)
    if keepdims:

        for d in sorted(axes):
            out = expand_dims(out, d)
    return out
