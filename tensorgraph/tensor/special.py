"""Functions of neural-network code: ``softmax``, ``log_softmax``, ``logsumexp`` (as
``tt.special.*``), and ``relu``, ``categorical_crossentropy``, ``binary_crossentropy`` (also in
``tt``); and the special functions composed of gamma functions and logarithms (``logit``,
``beta``, ``betaln``, ``poch``, ``factorial``; ``xlogy`` and ``xlog1py`` of ``tt``).

``Softmax`` and ``LogSoftmax`` are ops with numerically stable numpy implementations (the
maximum is subtracted first, so large inputs do not overflow) and closed-form gradients written
with tensor functions, so they can be differentiated again. ``axis=None`` normalizes over all
the elements, as PyTensor and ``scipy.special.softmax`` do; a tuple of axes normalizes over
those together, and the op keeps its axes as a sorted tuple (``softmax(x, axis=0).owner.op.axis``
is ``(0,)``, as in PyTensor 3), which is what lets ``vectorize_graph`` batch any softmax by
shifting its axes.

``categorical_crossentropy`` with integer labels picks each row's probability with
``TakeAlongLastAxis`` (``np.take_along_axis`` on the last axis); its gradient scatters back
with ``PutAlongLastAxis``, and each is the other's gradient.

Softmax, LogSoftmax and the two label ops also have C code
(``tensorgraph.link.c.ops.special``); their numpy ``perform`` stays the reference.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.op import Op
from tensorgraph.scalar import basic as ps
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.math import cast, xlog1py, xlogy  # noqa: F401  (PyTensor has them here too)
from tensorgraph.tensor.reduction import logsumexp, zeros_gradient
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import normalize_axis, with_props
from tensorgraph.tensor.type import TensorType

__all__ = [
    "Softmax", "LogSoftmax", "TakeAlongLastAxis", "PutAlongLastAxis",
    "softmax", "log_softmax", "logsumexp", "relu", "categorical_crossentropy",
    "binary_crossentropy", "logit", "beta", "betaln", "poch", "factorial", "xlogy", "xlog1py",
]


def _axis_prop(axis, what):
    """A softmax ``axis`` as the op stores it: None (every element) or a tuple of ints (one
    int is a tuple of one, as in PyTensor 3)."""
    if axis is None:
        return None
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    for a in axes:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{what}: axis must be an int or None, or a tuple of ints, got "
                            f"{axis!r}")
    return tuple(int(a) for a in axes)


def _normalize_softmax_axis(axis, ndim, what):
    """``axis`` as sorted non-negative axes of ``ndim`` dimensions (None stays None)."""
    axes = _axis_prop(axis, what)
    if axes is None:
        return None
    normalized = tuple(sorted(normalize_axis(a, ndim, what) for a in axes))
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{what}: repeated axis in {axis!r}")
    return normalized


class _SoftmaxBase(Op):
    """Shared part of Softmax and LogSoftmax: one input, float output of the same shape,
    normalized over ``axis``: None (every element), or a tuple of axes (an int is one)."""

    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = _axis_prop(axis, type(self).__name__)

    def __str__(self):
        shown = self.axis[0] if self.axis is not None and len(self.axis) == 1 else self.axis
        return f"{type(self).__name__}{{axis={shown}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        op = with_props(self, axis=_normalize_softmax_axis(self.axis, x.ndim, str(self)))
        if op is not self:
            return op.make_node(x)
        (dtype,) = ps.upgrade_to_float_no_complex(x.dtype)
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def _shifted(self, x, dtype):
        """``x`` minus its maximum over the axis (0 where that maximum is infinite)."""
        x = np.asarray(x, dtype=dtype)
        if x.size == 0:
            return x
        top = np.max(x, axis=self.axis, keepdims=True)
        top = np.where(np.isfinite(top), top, 0)
        return x - top

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def _sum(self, v):
        return tsum(v, axis=self.axis, keepdims=True)


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x), axis)``, stably."""

    def perform(self, node, inputs, output_storage):
        e = np.exp(self._shifted(inputs[0], node.outputs[0].type.dtype))
        output_storage[0][0] = np.asarray(
            e / np.sum(e, axis=self.axis, keepdims=True), dtype=node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        if x.dtype in ps.DISCRETE:
            return [zeros_gradient(x)]
        (sm,) = outputs
        gz = as_tensor_variable(output_grads[0])
        g = tm.mul(tm.sub(gz, self._sum(tm.mul(gz, sm))), sm)
        return [tm.cast(g, x.dtype)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        sm = self(inputs[0])
        ev = as_tensor_variable(eval_points[0])
        return [tm.mul(tm.sub(ev, self._sum(tm.mul(ev, sm))), sm)]


class LogSoftmax(_SoftmaxBase):
    """``x - logsumexp(x, axis)``, stably."""

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].type.dtype
        shifted = self._shifted(inputs[0], dtype)
        with np.errstate(divide="ignore"):
            norm = np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))
        output_storage[0][0] = np.asarray(shifted - norm, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        if x.dtype in ps.DISCRETE:
            return [zeros_gradient(x)]
        (out,) = outputs
        gz = as_tensor_variable(output_grads[0])
        g = tm.sub(gz, tm.mul(self._sum(gz), tm.exp(out)))
        return [tm.cast(g, x.dtype)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        ev = as_tensor_variable(eval_points[0])
        sm = Softmax(self.axis)(inputs[0])
        return [tm.sub(ev, self._sum(tm.mul(ev, sm)))]


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis, keepdims=True)``, computed stably; ``axis`` is one axis,
    a tuple of axes normalized over together, or None (every element)."""
    x = as_tensor_variable(x)
    return Softmax(_normalize_softmax_axis(axis, x.ndim, "softmax"))(x)


def log_softmax(x, axis=-1):
    """``log(softmax(x, axis))`` without the underflow of taking a log of a small softmax
    (``axis`` as for ``softmax``)."""
    x = as_tensor_variable(x)
    return LogSoftmax(_normalize_softmax_axis(axis, x.ndim, "log_softmax"))(x)


def relu(x, alpha=0):
    """Rectified linear unit: ``x`` where ``x > 0``, else ``alpha * x`` (0 by default; a leaky
    ReLU for a small ``alpha``, which may be a number or a tensor)."""
    x = as_tensor_variable(x)
    if not isinstance(alpha, Variable):
        if alpha == 0:
            return tm.maximum(x, constant(0, dtype=x.dtype))
        dtype = x.dtype if x.dtype not in ps.DISCRETE else None
        alpha = constant(alpha, dtype=dtype)
    return tm.switch(tm.gt(x, 0), x, tm.mul(alpha, x))


# ----------------------------------------------------------------------------------------------
# Picking one entry per row by integer label


def _check_labels(labels, n_classes, what):
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        bad = labels[(labels < 0) | (labels >= n_classes)].flat[0]
        raise IndexError(f"{what}: label {bad} is out of range for {n_classes} classes "
                         f"(labels must be in 0..{n_classes - 1})")


def _check_label_shapes(x_shape, labels_shape, what):
    if tuple(x_shape[:-1]) != tuple(labels_shape):
        raise ValueError(f"{what}: labels of shape {tuple(labels_shape)} do not match the "
                         f"leading dimensions of values of shape {tuple(x_shape)}")


def _labels_variable(labels, x, what):
    labels = as_tensor_variable(labels)
    if labels.dtype not in ps.DISCRETE or labels.dtype == "bool":
        raise TypeError(f"{what}: labels must be integers, got {labels} of dtype {labels.dtype}")
    if labels.ndim != x.ndim - 1:
        raise TypeError(f"{what}: labels must have one dimension less than the values "
                        f"({x.ndim - 1}), got {labels} ({labels.type}) for {x} ({x.type})")
    for d, (sl, sx) in enumerate(zip(labels.type.shape, x.type.shape)):
        if sl is not None and sx is not None and sl != sx:
            raise ValueError(f"{what}: labels {labels} ({labels.type}) do not match the leading "
                             f"dimensions of {x} ({x.type}) in dimension {d}")
    return labels


class TakeAlongLastAxis(Op):
    """``out[i...] = x[i..., labels[i...]]``: one entry of each last-axis row of ``x``."""

    __props__ = ()

    def make_node(self, x, labels):
        x = as_tensor_variable(x)
        if x.ndim < 1:
            raise TypeError(f"TakeAlongLastAxis: values must be at least 1-d, got {x} ({x.type})")
        labels = _labels_variable(labels, x, "TakeAlongLastAxis")
        return Apply(self, [x, labels], [TensorType(x.dtype, x.type.shape[:-1])()])

    def perform(self, node, inputs, output_storage):
        x, labels = inputs
        _check_label_shapes(x.shape, labels.shape, "TakeAlongLastAxis")
        _check_labels(labels, x.shape[-1], "TakeAlongLastAxis")
        picked = np.take_along_axis(x, labels[..., None].astype(np.intp), axis=-1)[..., 0]
        output_storage[0][0] = np.array(picked, dtype=x.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0][:-1])]

    def L_op(self, inputs, outputs, output_grads):
        x, labels = inputs
        g = PutAlongLastAxis()(output_grads[0], labels, x)
        return [g, zeros_gradient(labels)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


class PutAlongLastAxis(Op):
    """Zeros shaped like ``like`` with ``values[i...]`` at ``[i..., labels[i...]]``: the
    gradient of ``TakeAlongLastAxis`` (only the shape of ``like`` is used)."""

    __props__ = ()

    def make_node(self, values, labels, like):
        like = as_tensor_variable(like)
        values = as_tensor_variable(values)
        if values.ndim != like.ndim - 1:
            raise TypeError(f"PutAlongLastAxis: values must have one dimension less than "
                            f"{like} ({like.type}), got {values} ({values.type})")
        values = cast(values, like.dtype)
        labels = _labels_variable(labels, like, "PutAlongLastAxis")
        return Apply(self, [values, labels, like], [like.type()])

    def perform(self, node, inputs, output_storage):
        values, labels, like = inputs
        _check_label_shapes(like.shape, labels.shape, "PutAlongLastAxis")
        _check_labels(labels, like.shape[-1], "PutAlongLastAxis")
        out = np.zeros(like.shape, dtype=node.outputs[0].type.dtype)
        np.put_along_axis(out, labels[..., None].astype(np.intp), values[..., None], axis=-1)
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[2]]

    def L_op(self, inputs, outputs, output_grads):
        values, labels, like = inputs
        return [TakeAlongLastAxis()(output_grads[0], labels), zeros_gradient(labels),
                zeros_gradient(like)]


# ----------------------------------------------------------------------------------------------
# Cross-entropies


def categorical_crossentropy(coding_dist, true_dist):
    """Cross-entropy between predicted distributions (last axis) and targets, one per row.

    ``true_dist`` is either a distribution of the same shape (e.g. one-hot rows):
    ``-sum(true_dist * log(coding_dist), axis=-1)``; or integer class labels with one
    dimension less: ``-log(coding_dist[i, true_dist[i]])``.
    """
    coding_dist, true_dist = as_tensor_variable(coding_dist), as_tensor_variable(true_dist)
    if coding_dist.ndim < 1:
        raise TypeError(f"categorical_crossentropy: coding_dist must be at least 1-d (a "
                        f"distribution over its last axis), got {coding_dist} ({coding_dist.type})")
    if true_dist.ndim == coding_dist.ndim:
        return tm.neg(tsum(tm.mul(true_dist, tm.log(coding_dist)), axis=-1))
    if true_dist.ndim == coding_dist.ndim - 1:
        return tm.neg(tm.log(TakeAlongLastAxis()(coding_dist, true_dist)))
    raise TypeError(f"categorical_crossentropy: true_dist must have the shape of coding_dist "
                    f"({coding_dist.type}) or be integer labels with one dimension less; got "
                    f"{true_dist} ({true_dist.type})")


def binary_crossentropy(output, target):
    """Elementwise ``-(target * log(output) + (1 - target) * log(1 - output))`` for predicted
    probabilities ``output`` and targets in [0, 1]."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    one = constant(1, dtype=target.dtype if target.dtype not in ps.DISCRETE else "int8")
    return tm.neg(tm.add(tm.mul(target, tm.log(output)),
                         tm.mul(tm.sub(one, target), tm.log1p(tm.neg(output)))))


# ----------------------------------------------------------------------------------------------
# Special functions composed of gamma functions and logarithms


def logit(x):
    """``log(x / (1 - x))``, the inverse of ``sigmoid`` on (0, 1)."""
    x = as_tensor_variable(x)
    return tm.log(tm.true_div(x, tm.sub(1, x)))


def beta(a, b):
    """The beta function ``gamma(a) * gamma(b) / gamma(a + b)``."""
    return tm.true_div(tm.mul(tm.gamma(a), tm.gamma(b)), tm.gamma(tm.add(a, b)))


def betaln(a, b):
    """``log(|beta(a, b)|)`` from ``gammaln``, without the overflow of ``beta`` itself."""
    return tm.sub(tm.add(tm.gammaln(a), tm.gammaln(b)), tm.gammaln(tm.add(a, b)))


def poch(z, m):
    """The rising factorial (Pochhammer symbol) ``gamma(z + m) / gamma(z)``."""
    return tm.true_div(tm.gamma(tm.add(z, m)), tm.gamma(z))


def factorial(n):
    """``n!`` as ``gamma(n + 1)`` (a float; defined for non-integer ``n`` too)."""
    return tm.gamma(tm.add(n, 1))
