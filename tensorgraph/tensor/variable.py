"""``TensorVariable`` and ``TensorConstant``: symbolic arrays with numpy's operators and methods.

Every operator or method here is a thin call to a function of ``tensorgraph.tensor`` (``x + y``
is ``tt.add(x, y)``), imported when first used so that this module does not depend on the op
modules at import time. ``==`` and ``!=`` keep Python's identity meaning (variables are used as
dict keys everywhere); use ``tt.eq`` / ``tt.neq`` for elementwise comparison.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant, Variable
from tensorgraph.tensor import extra_ops, math, reduction
from tensorgraph.tensor.creation import ones_like, zeros_like
from tensorgraph.tensor.diagonal import diagonal, trace
from tensorgraph.tensor.dot import dot, matmul
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.math import _copy
from tensorgraph.tensor.nonzero import nonzero, nonzero_values
from tensorgraph.tensor.rearrange import choose, swapaxes
from tensorgraph.tensor.sort import argsort, sort
from tensorgraph.tensor.subtensor import getitem, inc_subtensor, set_subtensor, take


def _shape():
    # the module, not the function tt.shape that shadows it in the package namespace
    import importlib

    return importlib.import_module("tensorgraph.tensor.shape")


#: elementwise functions of ``tensorgraph.tensor.math`` that are also methods (``x.sin()``)
_ELEMWISE_METHODS = (
    "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "ceil", "cos", "cosh",
    "deg2rad", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2", "rad2deg",
    "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
)

#: numpy ufunc name -> function of ``tensorgraph.tensor.math`` (for ``__array_ufunc__``)
_UFUNCS = {name: name for name in _ELEMWISE_METHODS + (
    "add", "sign", "maximum", "minimum", "arctan2", "isnan", "isinf", "isfinite", "square",
    "reciprocal", "logaddexp", "isposinf", "isneginf", "power", "true_divide",
    "conj", "conjugate")}
_UFUNCS.update({
    "subtract": "sub", "multiply": "mul", "divide": "true_div", "floor_divide": "int_div",
    "remainder": "mod", "mod": "mod", "negative": "neg", "absolute": "abs", "fabs": "abs",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge",
    "bitwise_and": "and_",
    "bitwise_or": "or_", "bitwise_xor": "xor", "invert": "invert", "rint": "round",
})
#: numpy's logical ufuncs: the bool operations of the inputs' truth values
_LOGICAL = {"logical_and": "and_", "logical_or": "or_", "logical_xor": "xor",
            "logical_not": "invert"}


class TensorOperators:
    """Operators and numpy-like methods shared by tensor variables, constants and shared vars."""

    # numpy gives way to us in mixed expressions like ``np.float32(2) * x``
    __array_priority__ = 1000

    # -- arithmetic --------------------------------------------------------------------------
    def __add__(self, other): return math.add(self, other)
    def __radd__(self, other): return math.add(other, self)
    def __sub__(self, other): return math.sub(self, other)
    def __rsub__(self, other): return math.sub(other, self)
    def __mul__(self, other): return math.mul(self, other)
    def __rmul__(self, other): return math.mul(other, self)
    def __truediv__(self, other): return math.true_div(self, other)
    def __rtruediv__(self, other): return math.true_div(other, self)
    def __floordiv__(self, other): return math.int_div(self, other)
    def __rfloordiv__(self, other): return math.int_div(other, self)
    def __mod__(self, other): return math.mod(self, other)
    def __rmod__(self, other): return math.mod(other, self)
    def __pow__(self, other): return math.pow(self, other)
    def __rpow__(self, other): return math.pow(other, self)
    def __neg__(self): return math.neg(self)
    def __pos__(self): return self
    def __abs__(self): return math.abs(self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    # -- comparisons and logic ---------------------------------------------------------------
    def __lt__(self, other): return math.lt(self, other)
    def __le__(self, other): return math.le(self, other)
    def __gt__(self, other): return math.gt(self, other)
    def __ge__(self, other): return math.ge(self, other)
    def __and__(self, other): return math.and_(self, other)
    def __rand__(self, other): return math.and_(other, self)
    def __or__(self, other): return math.or_(self, other)
    def __ror__(self, other): return math.or_(other, self)
    def __xor__(self, other): return math.xor(self, other)
    def __rxor__(self, other): return math.xor(other, self)
    def __invert__(self): return math.invert(self)

    def __bool__(self):
        raise TypeError(f"the truth value of the symbolic variable {self} is unknown until it is "
                        "computed; use tt.switch / ifelse for symbolic conditions, and "
                        "`is None` checks rather than `if x`")

    def __iter__(self):
        """``a, b = x.shape`` and ``for row in x`` where the first dimension's size is known
        when the graph is built (static, or the length of ``x.shape``): one ``x[i]`` each."""
        length = None
        if self.ndim >= 1:
            length = self.type.shape[0]
            if length is None and self.ndim == 1:
                try:
                    length = _shape().get_vector_length(self)
                except ValueError:
                    length = None
        if length is None:
            raise TypeError(f"cannot iterate over the symbolic variable {self}: the size of its "
                            "first dimension is not known before it is computed; index it "
                            "instead (x[i]), use specify_shape, or a fixed-size loop over "
                            "range(n)")
        return (self[i] for i in range(length))

    def __len__(self):
        raise TypeError(f"len() of the symbolic variable {self} is unknown; use x.shape[0]")

    # -- properties --------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return self.type.broadcastable

    @property
    def shape(self):
        """The symbolic shape vector (``x.shape[0]`` is a symbolic length)."""
        return _shape().shape(self)

    @property
    def size(self):
        return reduction.prod(self.shape)

    @property
    def T(self):
        return self.transpose()

    # -- methods -----------------------------------------------------------------------------
    def dimshuffle(self, *pattern):
        """Reorder, drop (size-1) and add ('x') dimensions: ``x.dimshuffle(1, 'x', 0)``."""
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = tuple(pattern[0])
        return DimShuffle(self.ndim, pattern)(self)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        return self.dimshuffle(*axes)

    def reshape(self, *shape, ndim=None):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _shape().reshape(self, shape, ndim=ndim)

    def flatten(self, ndim=1):
        return _shape().flatten(self, ndim)

    def ravel(self):
        return _shape().flatten(self, 1)

    def squeeze(self, axis=None):
        return _shape().squeeze(self, axis)

    def astype(self, dtype):
        return math.cast(self, dtype)

    def __getitem__(self, index):
        return getitem(self, index)

    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reduction.sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reduction.prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return reduction.mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(self, axis=None, ddof=0, keepdims=False, corrected=False):
        return reduction.var(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False, corrected=False):
        return reduction.std(self, axis=axis, ddof=ddof, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return reduction.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return reduction.min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return reduction.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return reduction.argmin(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        return reduction.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return reduction.any(self, axis=axis, keepdims=keepdims)

    def dot(self, other):
        return dot(self, other)

    def clip(self, a_min, a_max):
        return math.clip(self, a_min, a_max)

    def round(self, mode=None):
        return math.round(self) if mode is None else math.round(self, mode)

    def __round__(self):
        return math.round(self)

    def abs(self): return math.abs(self)

    def __ceil__(self): return math.ceil(self)
    def __floor__(self): return math.floor(self)
    def __trunc__(self): return math.trunc(self)
    def __divmod__(self, other): return math.int_div(self, other), math.mod(self, other)
    def __rdivmod__(self, other): return math.int_div(other, self), math.mod(other, self)

    # -- numpy's methods and attributes --------------------------------------------------------
    @property
    def mT(self):
        """The transpose of the last two dimensions (``np.matrix_transpose``)."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions, {self} has {self.ndim}")
        axes = list(range(self.ndim))
        axes[-2:] = axes[:-3:-1]
        return self.transpose(*axes)

    @property
    def real(self):
        return math.real(self)

    @property
    def imag(self):
        return math.imag(self)

    def conj(self):
        return math.conj(self)

    conjugate = conj

    def copy(self, name=None):
        """A copy of this tensor as a new variable (``tensor_copy``), named ``name``."""
        out = _copy(self)
        out.name = name
        return out

    def take(self, indices, axis=None, mode="raise"):
        return take(self, indices, axis=axis, mode=mode)

    def norm(self, L, axis=None, keepdims=False):
        """The ``L``-norm of the entries over ``axis`` (``tt.norm``)."""
        return reduction.norm(self, L, axis=axis, keepdims=keepdims)

    def ptp(self, axis=None, keepdims=False):
        return reduction.ptp(self, axis=axis, keepdims=keepdims)

    def sort(self, axis=-1, kind="quicksort", order=None):
        return sort(self, axis=axis, kind=kind, order=order)

    def argsort(self, axis=-1, kind="quicksort", order=None):
        return argsort(self, axis=axis, kind=kind, order=order)

    def nonzero(self, return_matrix=False):
        return nonzero(self, return_matrix=return_matrix)

    def nonzero_values(self):
        return nonzero_values(self)

    def cumsum(self, axis=None):
        return extra_ops.cumsum(self, axis)

    def cumprod(self, axis=None):
        return extra_ops.cumprod(self, axis)

    def repeat(self, repeats, axis=None):
        return extra_ops.repeat(self, repeats, axis)

    def searchsorted(self, v, side="left", sorter=None):
        return extra_ops.searchsorted(self, v, side=side, sorter=sorter)

    def compress(self, a, axis=None):
        return extra_ops.compress(a, self, axis=axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return diagonal(self, offset, axis1, axis2)

    def trace(self):
        return trace(self)

    def swapaxes(self, axis1, axis2):
        return swapaxes(self, axis1, axis2)

    def choose(self, choices, mode="raise"):
        return choose(self, choices, mode=mode)

    def fill(self, value):
        """A tensor of this one's shape filled with ``value`` (``tt.fill``)."""
        return math.fill(self, value)

    def zeros_like(self, dtype=None):
        return zeros_like(self, dtype=dtype)

    def ones_like(self, dtype=None):
        return ones_like(self, dtype=dtype)

    def set(self, y, **kwargs):
        """``set_subtensor(self, y)``: this indexed tensor's base with ``y`` written here."""
        return set_subtensor(self, y, **kwargs)

    def inc(self, y, **kwargs):
        """``inc_subtensor(self, y)``: this indexed tensor's base with ``y`` added here."""
        return inc_subtensor(self, y, **kwargs)

    # -- numpy functions on variables: np.sin(x), np.add(a, x), ... ----------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy's ufuncs applied to a variable build the tensor graph: ``np.exp(x)`` is
        ``tt.exp(x)``, ``np.maximum(a, x)`` is ``tt.maximum(a, x)``, ``array * x`` is
        ``tt.mul(array, x)``. Methods other than a plain call (``np.add.reduce``...), ``out=``
        and other keywords are refused (a TypeError from numpy)."""
        if method == "__call__" and ufunc.__name__ in ("equal", "not_equal") and not kwargs:
            # ``array == x`` calls np.equal: it keeps ``==``'s identity meaning (tt.eq compares
            # elementwise), as it had before numpy handed it over
            same = len(inputs) == 2 and inputs[0] is inputs[1]
            return same if ufunc.__name__ == "equal" else not same
        if method != "__call__" or kwargs:
            return NotImplemented
        if ufunc.__name__ in _LOGICAL:   # on truth values: nonzero is True
            truths = [math.neq(i, 0) for i in inputs]
            return getattr(math, _LOGICAL[ufunc.__name__])(*truths)
        function = _UFUNCS.get(ufunc.__name__)
        if function is None:
            return NotImplemented
        return getattr(math, function)(*inputs)


class TensorVariable(TensorOperators, Variable):
    """A symbolic tensor: the result of an op, or a graph input made by ``tt.matrix`` & co."""


class TensorConstant(TensorVariable, Constant):
    """A tensor whose value is known when the graph is built (``tt.constant(2.0)``).

    It is a ``TensorVariable`` too (as in PyTensor), so ``isinstance(v, TensorVariable)`` asks
    "is this a symbolic tensor", whatever its kind.
    """

    @property
    def value(self):
        return self.data


def _elemwise_method(name):
    def method(self):
        return getattr(math, name)(self)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``tt.{name}(x)``."
    return method


for _name in _ELEMWISE_METHODS:
    setattr(TensorOperators, _name, _elemwise_method(_name))
