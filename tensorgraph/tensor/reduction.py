"""Reductions: ``tt.sum``, ``prod``, ``max``, ``min``, ``all``, ``any``, ``argmax``, ``argmin``,
and the functions composed from them: ``mean``, ``var``, ``std``, ``logsumexp``.

One op class, ``CAReduce``, reduces over a set of axes with a commutative and associative scalar
op (sum with add, prod with mul, max with maximum, ...); it always drops the reduced axes, and
``keepdims=True`` puts them back with a ``DimShuffle`` so that rewrites see one canonical form.

Dtypes follow PyTensor (and numpy's results):

* ``sum``/``prod`` of bool and signed integers up to 32 bits give int64, unsigned ones uint64;
  floats keep their dtype (float32 stays float32) but accumulate in a wider dtype
  (float16 in float32, float32 in float64, complex64 in complex128) unless ``acc_dtype`` says
  otherwise. ``dtype=`` sets the output dtype.
* ``mean`` divides by the number of reduced elements cast to the sum's dtype, so float32 stays
  float32; integer inputs give float64 as in numpy.
* ``max``/``min`` keep the input dtype, ``all``/``any`` give bool, ``argmax``/``argmin`` int64.

Reducing a zero-size axis gives numpy's answer: sum 0, prod 1, all True, any False; max, min,
argmax and argmin raise a ``ValueError`` (they have no identity).

Gradients: sum broadcasts back; prod is exact also where inputs are zero (one zero: the
product of the others at that position, zero elsewhere; two or more zeros: zero); max/min send
the gradient to every position equal to the result (each tied position gets all of it, as in
PyTensor); argmax, argmin, all and any are not differentiable and give zero gradients.
"""

from __future__ import annotations

import builtins

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant
from tensorgraph.graph.op import Op
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as scalar_math
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.math import cast, isclose, mul, neq, second, sqrt, sub, true_div
from tensorgraph.tensor.shape import normalize_axis as normalize_one_axis
from tensorgraph.tensor.shape import reshape, scalar_axes, shape_i, with_props
from tensorgraph.tensor.sort import sort
from tensorgraph.tensor.subtensor import getitem
from tensorgraph.tensor.type import TensorType, normalize_dtype

__all__ = [
    "CAReduce", "Sum", "Prod", "Max", "Min", "All", "Any", "Argmax", "Argmin",
    "sum", "prod", "max", "min", "all", "any", "argmax", "argmin",
    "mean", "var", "std", "logsumexp", "normalize_axis",
    "max_and_argmax", "ptp", "median", "allclose", "norm",
]

_SUM_OUT_DTYPE = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
                  "uint8": "uint64", "uint16": "uint64", "uint32": "uint64"}
_SUM_ACC_DTYPE = dict(_SUM_OUT_DTYPE, float16="float32", float32="float64",
                      complex64="complex128")


def normalize_axis(axis, ndim: int, what: str = "reduction") -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints, negatives allowed) as a sorted tuple of
    distinct non-negative axes of an ``ndim``-d tensor; None means every axis."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Constant):   # a constant tensor of axes, as PyTensor code passes
        axis = axis.data
    if isinstance(axis, np.ndarray) and axis.dtype.kind in "iu" and axis.ndim <= 1:
        axis = axis.tolist()
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)):
        axes = [axis]
    elif isinstance(axis, (list, tuple)):
        axes = list(axis)
    else:
        raise TypeError(f"{what}: axis must be None, an int or a tuple of ints, got {axis!r}")
    if ndim == 0:   # axis 0 / -1 names the 0-d tensor itself (numpy's rule): no axis
        return tuple(scalar_axes([a.data if isinstance(a, Constant) else a for a in axes],
                                 what))
    result = []
    for a in axes:
        if isinstance(a, Constant):          # an integer constant among the axes
            a = a.data
        if isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "iu":
            a = int(a)                       # a 0-d integer array, as numpy accepts
        if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)):
            raise TypeError(f"{what}: axis must be None, an int or a tuple of ints, got {axis!r}")
        a = normalize_one_axis(a, ndim, what)
        if a in result:
            raise ValueError(f"{what}: repeated axis {a} in axis={axis!r}")
        result.append(a)
    return tuple(sorted(result))


def _drop_axes(shape, axes):
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def _restore_axes(var, axes, ndim):
    """``var`` (reduced over ``axes`` of an ``ndim``-d tensor) with those axes back, size 1."""
    pattern, kept = [], iter(range(var.ndim))
    for d in range(ndim):
        pattern.append("x" if d in axes else next(kept))
    if var.ndim == ndim:
        return var
    return DimShuffle(var.ndim, pattern)(var)


def _broadcast_like(g, x):
    """``g`` (size 1 on some axes of ``x``) broadcast to the shape of ``x``."""
    if g.type.shape == x.type.shape and None not in g.type.shape:
        return g
    return second(x, g)


def zeros_gradient(x):
    """The gradient of a non-differentiable input: zeros of its shape (of ``config.floatX``
    for discrete inputs, as ``Elemwise`` gives them)."""
    dtype = config.floatX if x.dtype in ps.DISCRETE else x.dtype
    return second(x, constant(0, dtype=dtype))


# ----------------------------------------------------------------------------------------------
# The op


def _axis_prop(axis):
    """An op's ``axis``: a sorted tuple of ints, or None (every axis; the node's op gets the
    tuple). An int is one axis, as PyTensor code writes ``Prod(axis=1)``."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        return (int(axis),)
    return tuple(sorted(int(a) for a in axis))


def _node_axes(op, x) -> tuple[int, ...]:
    """The op's axes as non-negative, sorted, distinct axes of ``x`` (see ``normalize_axis``)."""
    return normalize_axis(op.axis, x.ndim, str(op))


class CAReduce(Op):
    """Reduce ``axis`` (a sorted tuple of axes) with ``scalar_op``, a commutative associative
    scalar op whose ``nfunc`` is a numpy ufunc (its ``reduce`` method does the work).

    The reduced axes are dropped. ``acc_dtype`` is the dtype numbers are accumulated in,
    ``dtype`` the output dtype (each defaults to the input dtype).
    """

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype")

    def __init__(self, scalar_op, axis, dtype=None, acc_dtype=None):
        if not (scalar_op.commutative and scalar_op.associative):
            raise ValueError(f"CAReduce needs a commutative and associative scalar op, "
                             f"got {scalar_op}")
        self.scalar_op = scalar_op
        self.axis = _axis_prop(axis)
        self.dtype = None if dtype is None else normalize_dtype(dtype)
        self.acc_dtype = None if acc_dtype is None else normalize_dtype(acc_dtype)

    def __str__(self):
        name = type(self).__name__
        extra = "" if self.dtype is None else f", dtype={self.dtype}"
        if name == "CAReduce":  # PyTensor's spelling: CAReduce{add, axis=1}
            return f"CAReduce{{{self.scalar_op}, {self._axis_str()}{extra}}}"
        return f"{name}{{axis={self.axis}{extra}}}"

    def _axis_str(self) -> str:
        if self.axis is None:
            return "axes=None"
        if len(self.axis) == 1:
            return f"axis={self.axis[0]}"
        return f"axes={list(self.axis)}"

    def _output_dtype(self, input_dtype):
        return self.dtype or input_dtype

    def make_node(self, x):
        x = as_tensor_variable(x)
        op = with_props(self, axis=_node_axes(self, x))
        if op is not self:
            return op.make_node(x)
        out_type = TensorType(self._output_dtype(x.dtype), _drop_axes(x.type.shape, self.axis))
        return Apply(self, [x], [out_type()])

    def _reduce(self, x):
        return self.scalar_op.nfunc.reduce(x, axis=self.axis, dtype=self.acc_dtype)

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if x.size == 0 and builtins.any(x.shape[a] == 0 for a in self.axis):
            self._check_empty_allowed(x)
        result = self._reduce(x)
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def _check_empty_allowed(self, x):
        """Called for a zero-size reduced axis; ops without an identity refuse it."""

    def infer_shape(self, fgraph, node, input_shapes):
        return [_drop_axes(input_shapes[0], self.axis)]


class Sum(CAReduce):
    """Sum over ``axis``; see the module docstring for its dtypes."""

    def __init__(self, axis, dtype=None, acc_dtype=None):
        super().__init__(ps.add, axis, dtype, acc_dtype)

    __props__ = ("axis", "dtype", "acc_dtype")

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        if x.dtype in ps.DISCRETE:
            return [zeros_gradient(x)]
        gz = _restore_axes(as_tensor_variable(output_grads[0]), self.axis, x.ndim)
        return [cast(_broadcast_like(gz, x), x.dtype)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0])]


class Prod(CAReduce):
    """Product over ``axis``; its gradient is exact where inputs are zero."""

    def __init__(self, axis, dtype=None, acc_dtype=None):
        super().__init__(ps.mul, axis, dtype, acc_dtype)

    __props__ = ("axis", "dtype", "acc_dtype")

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        if x.dtype in ps.DISCRETE:
            return [zeros_gradient(x)]
        axes, ndim = self.axis, x.ndim
        gz = _restore_axes(as_tensor_variable(output_grads[0]), axes, ndim)
        is_zero = tm.eq(x, 0)
        n_zeros = sum(is_zero, axes, keepdims=True)
        x_safe = tm.switch(is_zero, constant(1, dtype=x.dtype), x)
        # the product of the non-zero entries: d prod / d x_i is this over x_i when nothing
        # is zero, this itself at the only zero, and 0 everywhere else
        nonzero_prod = _restore_axes(Prod(axes, dtype=x.dtype)(x_safe), axes, ndim)
        zero = constant(0, dtype=x.dtype)
        g = tm.switch(is_zero,
                      tm.switch(tm.eq(n_zeros, 1), nonzero_prod, zero),
                      tm.switch(tm.eq(n_zeros, 0), tm.true_div(nonzero_prod, x_safe), zero))
        return [tm.cast(tm.mul(g, gz), x.dtype)]


class _Extremum(CAReduce):
    """Shared part of Max and Min: input dtype kept, no reduction over empty axes."""

    __props__ = ("axis",)
    _scalar_name = ""

    def __init__(self, axis):
        super().__init__(getattr(scalar_math, self._scalar_name), axis)

    def _check_empty_allowed(self, x):
        raise ValueError(f"{type(self).__name__.lower()} over axes {self.axis} of an array of "
                         f"shape {x.shape}: a zero-size axis has no {type(self).__name__.lower()} "
                         "(numpy raises too); reduce a non-empty axis or use sum/prod")

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        if x.dtype in ps.DISCRETE:
            return [zeros_gradient(x)]
        out = _restore_axes(outputs[0], self.axis, x.ndim)
        gz = _restore_axes(as_tensor_variable(output_grads[0]), self.axis, x.ndim)
        return [tm.cast(tm.mul(gz, tm.eq(x, out)), x.dtype)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        (x,) = inputs
        # the transpose of L_op's map: the direction summed over the positions of the result
        out = _restore_axes(self(x), self.axis, x.ndim)
        picked = Sum(self.axis, dtype=x.dtype)(tm.mul(eval_points[0], tm.eq(x, out)))
        return [tm.cast(picked, x.dtype)]


class Max(_Extremum):
    """Maximum over ``axis``."""

    _scalar_name = "maximum"


class Min(_Extremum):
    """Minimum over ``axis``."""

    _scalar_name = "minimum"


class _Logical(CAReduce):
    """Shared part of All and Any: boolean inputs (other dtypes are cast: nonzero is True)."""

    __props__ = ("axis",)
    _scalar_name = ""

    def __init__(self, axis):
        super().__init__(getattr(scalar_math, self._scalar_name), axis)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.dtype.startswith("complex"):  # a complex number is true when it is nonzero
            return super().make_node(neq(x, 0))
        return super().make_node(cast(x, "bool"))

    def L_op(self, inputs, outputs, output_grads):
        return [zeros_gradient(inputs[0])]


class All(_Logical):
    """Whether every element over ``axis`` is true (True over an empty axis)."""

    _scalar_name = "and_"


class Any(_Logical):
    """Whether some element over ``axis`` is true (False over an empty axis)."""

    _scalar_name = "or_"


class _ArgExtremum(Op):
    """Index of the first maximum (minimum) over ``axis``; several axes count as one
    flattened axis (C order), as numpy's ``argmax`` does for ``axis=None``."""

    __props__ = ("axis",)
    _nfunc = None

    def __init__(self, axis):
        self.axis = _axis_prop(axis)

    def __str__(self):
        return f"{type(self).__name__}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        op = with_props(self, axis=_node_axes(self, x))
        if op is not self:
            return op.make_node(x)
        out_type = TensorType("int64", _drop_axes(x.type.shape, self.axis))
        return Apply(self, [x], [out_type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        kept = [d for d in range(x.ndim) if d not in self.axis]
        length = int(np.prod([x.shape[a] for a in self.axis], dtype=np.int64))
        if length == 0:
            name = type(self).__name__.lower()
            raise ValueError(f"{name} over axes {self.axis} of an array of shape {x.shape}: a "
                             f"zero-size axis has no {name} (numpy raises too)")
        moved = x.transpose(kept + list(self.axis))
        flat = moved.reshape(moved.shape[:len(kept)] + (length,))
        output_storage[0][0] = np.asarray(type(self)._nfunc(flat, axis=-1), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [_drop_axes(input_shapes[0], self.axis)]

    def L_op(self, inputs, outputs, output_grads):
        return [zeros_gradient(inputs[0])]


class Argmax(_ArgExtremum):
    """Index (int64) of the first maximum over ``axis``."""

    _nfunc = staticmethod(np.argmax)


class Argmin(_ArgExtremum):
    """Index (int64) of the first minimum over ``axis``."""

    _nfunc = staticmethod(np.argmin)


# ----------------------------------------------------------------------------------------------
# Functions


def _keep(out, axes, ndim, keepdims):
    return _restore_axes(out, axes, ndim) if keepdims else out


def _sum_dtypes(x, dtype, acc_dtype, what):
    idtype = x.dtype
    out = normalize_dtype(dtype) if dtype is not None else _SUM_OUT_DTYPE.get(idtype, idtype)
    if acc_dtype is None:
        acc = _SUM_ACC_DTYPE.get(idtype, idtype)
        if dtype is not None:
            acc = ps.upcast(out, acc)
    else:
        acc = normalize_dtype(acc_dtype)
        if ps.upcast(idtype, acc) != acc:
            raise TypeError(f"{what}: acc_dtype={acc} cannot hold every {idtype} input value; "
                            f"use an acc_dtype at least as wide as {idtype}")
    return out, acc


def sum(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Sum of ``x`` over ``axis`` (None: all axes; an int or a tuple, negatives allowed)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "sum")
    out_dtype, acc = _sum_dtypes(x, dtype, acc_dtype, "sum")
    return _keep(Sum(axes, out_dtype, acc)(x), axes, x.ndim, keepdims)


def prod(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Product of ``x`` over ``axis`` (dtypes as for ``sum``)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "prod")
    out_dtype, acc = _sum_dtypes(x, dtype, acc_dtype, "prod")
    return _keep(Prod(axes, out_dtype, acc)(x), axes, x.ndim, keepdims)


def max(x, axis=None, keepdims=False):
    """Maximum of ``x`` over ``axis``."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "max")
    return _keep(Max(axes)(x), axes, x.ndim, keepdims)


def min(x, axis=None, keepdims=False):
    """Minimum of ``x`` over ``axis``."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "min")
    return _keep(Min(axes)(x), axes, x.ndim, keepdims)


def all(x, axis=None, keepdims=False):
    """Whether all elements over ``axis`` are true (nonzero)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "all")
    return _keep(All(axes)(x), axes, x.ndim, keepdims)


def any(x, axis=None, keepdims=False):
    """Whether any element over ``axis`` is true (nonzero)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "any")
    return _keep(Any(axes)(x), axes, x.ndim, keepdims)


def argmax(x, axis=None, keepdims=False):
    """Index (int64) of the first maximum over ``axis``; None flattens as numpy does, a tuple
    of axes is searched as one flattened axis."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "argmax")
    return _keep(Argmax(axes)(x), axes, x.ndim, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index (int64) of the first minimum over ``axis`` (see ``argmax``)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "argmin")
    return _keep(Argmin(axes)(x), axes, x.ndim, keepdims)


def _reduced_length(x, axes, dtype):
    """How many elements of ``x`` each reduction over ``axes`` sees, as a ``dtype`` scalar."""
    static = [x.type.shape[a] for a in axes]
    if None not in static:
        return constant(int(np.prod(static, dtype=np.int64)), dtype=dtype)

    known = int(np.prod([s for s in static if s is not None], dtype=np.int64))
    factors = [cast(shape_i(x, a), dtype) for a, s in zip(axes, static) if s is None]
    if known != 1:
        factors.append(constant(known, dtype=dtype))
    return mul(*factors)


def mean(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Mean over ``axis``: the sum divided by the number of elements cast to the sum's dtype
    (float32 stays float32; integers give float64, as numpy does). An integer or bool
    ``dtype`` is the dtype of the sum, as in PyTensor; the mean is then float64."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "mean")
    if dtype is not None:
        sum_dtype = normalize_dtype(dtype)
    elif x.dtype in ps.DISCRETE:
        sum_dtype = "float64"
    elif x.dtype == "float16":
        sum_dtype = "float32"
    else:
        sum_dtype = x.dtype
    if sum_dtype in ps.DISCRETE:
        # PyTensor's meaning: the sum is made in that dtype, the mean is its float64 quotient
        total = cast(sum(x, axes, dtype=sum_dtype, keepdims=keepdims, acc_dtype=acc_dtype),
                     "float64")
        return true_div(total, _reduced_length(x, axes, "float64"))
    total = sum(x, axes, dtype=sum_dtype, keepdims=keepdims, acc_dtype=acc_dtype)
    result = true_div(total, _reduced_length(x, axes, sum_dtype))
    out_dtype = normalize_dtype(dtype) if dtype is not None else (
        "float16" if x.dtype == "float16" else sum_dtype)
    return cast(result, out_dtype)


def var(x, axis=None, ddof=0, keepdims=False, corrected=False):
    """Variance over ``axis``: mean squared deviation, divided by ``n - ddof``. (``corrected``
    is accepted for PyTensor code: the deviations are always taken from the mean computed
    first, which is what it asks for.)"""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "var")
    if not isinstance(ddof, (int, np.integer)) or ddof < 0:
        raise ValueError(f"var: ddof must be a non-negative int, got {ddof!r}")
    centered = sub(x, mean(x, axes, keepdims=True))
    squares = sum(mul(centered, centered), axes, keepdims=keepdims)
    count = _reduced_length(x, axes, squares.dtype)
    if ddof:
        count = sub(count, constant(ddof, dtype=squares.dtype))
    return true_div(squares, count)


def std(x, axis=None, ddof=0, keepdims=False, corrected=False):
    """Standard deviation over ``axis``: ``sqrt(var(x, axis, ddof))``."""
    return sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims))


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))`` computed stably: the maximum is subtracted before ``exp``
    (and added back), so large inputs do not overflow; all ``-inf`` gives ``-inf``."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "logsumexp")
    if not axes:  # log(exp(x)) over no axis is x itself
        return tm.cast(x, ps.upgrade_to_float(x.dtype)[0])
    shift = max(x, axes, keepdims=True)
    shift = tm.switch(tm.isinf(shift), constant(0, dtype=shift.dtype), shift)
    result = tm.add(tm.log(sum(tm.exp(tm.sub(x, shift)), axes, keepdims=True)), shift)
    if keepdims:
        return result
    kept = [d for d in range(x.ndim) if d not in axes]
    return DimShuffle(x.ndim, kept)(result)


def max_and_argmax(x, axis=None, keepdims=False):
    """``[max(x, axis), argmax(x, axis)]`` (PyTensor's pair; two nodes here, which the
    rewrites and C compute separately)."""
    return [max(x, axis=axis, keepdims=keepdims), argmax(x, axis=axis, keepdims=keepdims)]


def ptp(x, axis=None, keepdims=False):
    """Range of values over ``axis`` (``max - min``), as ``np.ptp``."""
    return sub(max(x, axis=axis, keepdims=keepdims), min(x, axis=axis, keepdims=keepdims))


def median(x, axis=None):
    """Median over ``axis`` (an int, a tuple of ints or None for all), as ``np.median``: the
    middle of the sorted values, or the mean of the two middle ones for an even count."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "median")
    kept = [d for d in range(x.ndim) if d not in axes]
    if not axes:
        return tm.cast(x, ps.upgrade_to_float(x.dtype)[0])
    moved = x if kept + list(axes) == list(range(x.ndim)) else x.transpose(*kept, *axes)
    flat_shape = [shape_i(x, d) for d in kept] + [-1]
    values = sort(reshape(moved, flat_shape), axis=-1)
    n = shape_i(values, values.ndim - 1)
    low = getitem(values, (Ellipsis, tm.int_div(tm.sub(n, 1), 2)))
    high = getitem(values, (Ellipsis, tm.int_div(n, 2)))
    two = constant(2, dtype=ps.upgrade_to_float(x.dtype)[0])
    return tm.true_div(tm.add(low, high), two)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to ``b`` (``isclose``), a bool scalar."""
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def norm(x, ord=2, axis=None, keepdims=False):
    """The ``ord``-norm of the entries of ``x`` over ``axis`` (all entries for None):
    ``sum(|x| ** ord) ** (1 / ord)``; ``inf`` is ``max(|x|)``, ``-inf`` ``min(|x|)``, 0 the
    number of non-zero entries."""
    x = as_tensor_variable(x)
    if ord == 0:
        return sum(tm.neq(x, 0), axis=axis, keepdims=keepdims)
    magnitude = tm.abs(x)
    if np.isinf(ord):
        return (max if ord > 0 else min)(magnitude, axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(magnitude, axis=axis, keepdims=keepdims)
    if ord == 2:
        return tm.sqrt(sum(tm.sqr(magnitude), axis=axis, keepdims=keepdims))
    total = sum(tm.pow(magnitude, ord), axis=axis, keepdims=keepdims)
    return tm.pow(total, 1.0 / ord)
