"""``Elemwise``, ``DimShuffle`` and the scalar ops for an array library (JAX, PyTorch), once.

JAX and PyTorch compute the scalar ops alike: dtypes are the graph's, not the library's
promotion rules (a scalar op computes in its output dtype, the inputs cast to it first as the
C kernels do; comparisons in the dtype numpy compares in; every result cast to its variable's
dtype), so float32 graphs stay float32 and int8 arithmetic wraps as numpy's does. What differs
is a few names and conversions, which an ``ArrayLibrary`` adapter gives; each back end's
``elemwise`` module subclasses it and registers the factories below in its own op tables (a
table lookup stays per back end). This module imports neither library: the adapter does.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import integer_rules
from tensorgraph.link.traced import composite_function
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.elemwise import _runtime_shape


class ArrayLibrary:
    """What a back end's array library does its own way. ``name`` is the back end's (for
    errors); ``xp`` is the library's numpy-like namespace (``jax.numpy``, ``torch``)."""

    name = ""
    #: the dtype kinds a float function (exp, tanh, ...) computes in: JAX's run on complex
    #: numbers too, PyTorch's are refused there (its compiler's complex support)
    float_kinds = "f"

    @property
    def xp(self):
        raise NotImplementedError

    def array(self, value, dtype=None):
        """``value`` (traced, or a numpy value known while tracing) as an array of ``dtype``
        (a numpy dtype name; None keeps the value's)."""
        raise NotImplementedError

    def cast(self, value, dtype):
        """``value`` as an array of the dtype the library computes ``dtype``'s values in."""
        return self.array(value, dtype)

    def transpose(self, x, axes):
        raise NotImplementedError

    def owned(self, x):
        """``x`` as an array of its own, not a view: later ops may write a library's arrays
        in place (PyTorch's); immutable ones (JAX's) need no copy."""
        return x

    def function(self, numpy_name: str):
        """The library's function of a numpy ufunc's name, or None."""
        return getattr(self.xp, numpy_name, None)

    def integer_power(self, a, b, dtype):
        """``a ** b`` for integer arrays of ``dtype`` whose exponents are not negative."""
        raise NotImplementedError

    def check(self, op, in_dtypes, out_dtypes) -> None:
        """Raise NotImplementedError if the library cannot compute ``op`` in these dtypes."""

    def scalar_implementation(self, op):
        raise NotImplementedError

    def runtime_check(self, bad, error: type, message: str) -> None:
        raise NotImplementedError

    def named(self, op):
        """The library's function with the name of the op's numpy ufunc."""
        name = getattr(op.nfunc, "__name__", None)
        fn = self.function(name) if name else None
        if fn is None:
            raise NotImplementedError(f"the scalar op {op.name} has no {self.name} "
                                      f"implementation (no {self.name} function {name})")
        return fn

    def cast_all(self, values, dtype) -> list:
        return [self.cast(v, dtype) for v in values]

    def scalar_function(self, op, in_dtypes, out_dtypes):
        """A function of arrays computing the scalar op ``op`` elementwise (broadcasting as
        numpy), or NotImplementedError naming the op."""
        self.check(op, in_dtypes, out_dtypes)
        impl = self.scalar_implementation(op)
        if impl is None:
            raise NotImplementedError(f"the scalar op {op.name} has no {self.name} "
                                      "implementation")
        return impl(op, tuple(in_dtypes), tuple(out_dtypes))


def reduce_left(fn, values):
    """``fn`` of ``values``, applied left to right past two (n-ary add and mul)."""
    if len(values) <= 2:
        return fn(*values)
    result = values[0]
    for v in values[1:]:
        result = fn(result, v)
    return result


# ----------------------------------------------------------------------------------------------
# Op implementations: factories of ``fn(op, node)``


def elemwise(lib: ArrayLibrary):
    def implement(op, node):
        in_dtypes = [i.dtype for i in node.inputs]
        dtypes = [o.dtype for o in node.outputs]
        fn = lib.scalar_function(op.scalar_op, in_dtypes, dtypes)
        several = len(node.outputs) > 1

        def compute(*inputs):
            shape = _runtime_shape(node, inputs)  # numpy's broadcasting, the graph's rule
            results = fn(*[lib.array(v, d) for v, d in zip(inputs, in_dtypes)])
            if not several:
                results = (results,)
            outs = tuple(lib.xp.broadcast_to(lib.array(r, d), shape)
                         for r, d in zip(results, dtypes))
            return outs if several else outs[0]

        return compute
    return implement


def dimshuffle(lib: ArrayLibrary):
    def implement(op, node):
        def compute(x):
            res = lib.transpose(lib.array(x), op.kept + op.dropped)
            kept_shape = tuple(res.shape[:len(op.kept)])
            shape = tuple(1 if d == "x" else kept_shape[op.kept.index(d)] for d in op.new_order)
            return lib.xp.reshape(res, shape)

        return compute
    return implement


# ----------------------------------------------------------------------------------------------
# Scalar op implementations: factories of ``fn(op, in_dtypes, out_dtypes)``


def scalar_op(lib: ArrayLibrary):
    """Every op with a numpy ufunc: inputs cast to the output dtype, the library's function of
    the same name (applied left to right for n-ary add and mul)."""
    def make(op, in_dtypes, out_dtypes):
        fn = lib.named(op)
        (out,) = out_dtypes
        return lambda *values: reduce_left(fn, lib.cast_all(values, out))
    return make


def comparison(lib: ArrayLibrary):
    def make(op, in_dtypes, out_dtypes):
        fn = lib.named(op)
        common = np.result_type(*in_dtypes).name
        return lambda a, b: fn(*lib.cast_all((a, b), common))
    return make


def as_is(lib: ArrayLibrary):
    """isnan, isinf, isfinite: the input in its own dtype."""
    def make(op, in_dtypes, out_dtypes):
        fn = lib.named(op)
        return lambda x: fn(lib.array(x))
    return make


def absolute(lib: ArrayLibrary):
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        if np.dtype(in_dtypes[0]).kind in "bu":
            return lambda x: lib.array(x, out)
        return lambda x: lib.array(lib.xp.abs(lib.array(x)), out)
    return make


def integer_division(lib: ArrayLibrary):
    """``//`` and ``%``: numpy gives 0 for an integer divided by 0 (the libraries do not)."""
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        kind = np.dtype(out).kind
        if kind == "b":
            raise NotImplementedError(f"{op.name} of booleans")
        fn = lib.named(op)
        xp = lib.xp

        def divide(a, b):
            a, b = lib.cast_all((a, b), out)
            if kind not in "iu":
                return fn(a, b)
            zero = b == 0
            safe = xp.where(zero, xp.ones_like(b), b)
            return xp.where(zero, xp.zeros_like(a), fn(a, safe))

        return divide
    return make


def identity(lib: ArrayLibrary):
    """Identity and Cast: a float becomes a narrow integer through int64 as numpy's does (so
    -2.5 -> uint8 254; XLA would saturate), a boolean is ``!= 0``."""
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        target = np.dtype(out)
        narrow_int = target.kind in "iu" and target.itemsize < 8
        if narrow_int and any(np.dtype(d).kind == "f" for d in in_dtypes):
            return lambda x: lib.array(lib.array(x, "int64"), out)
        if target.kind == "b":
            return lambda x: lib.array(x) != 0
        return lambda x: lib.array(x, out)
    return make


def clip(lib: ArrayLibrary):
    def make(op, in_dtypes, out_dtypes):
        def compute(x, lo, hi):
            x, lo, hi = lib.cast_all((x, lo, hi), out_dtypes[0])
            return lib.xp.minimum(lib.xp.maximum(x, lo), hi)
        return compute
    return make


def switch(lib: ArrayLibrary):
    def make(op, in_dtypes, out_dtypes):
        def compute(cond, a, b):
            a, b = lib.cast_all((a, b), out_dtypes[0])
            return lib.xp.where(lib.array(cond) != 0, a, b)
        return compute
    return make


def second(lib: ArrayLibrary):
    def make(op, in_dtypes, out_dtypes):
        return lambda a, b: lib.array(b, out_dtypes[0])
    return make


def rounding(lib: ArrayLibrary, function=None):
    """floor, ceil, trunc, round half to even (the library's function of the numpy name) or
    ``function`` (round half away from zero): integers are their own result."""
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        if np.dtype(out).kind != "f":
            return identity(lib)(op, in_dtypes, out_dtypes)
        fn = function or lib.named(op)
        return lambda x: fn(lib.array(x, out))
    return make


def round_half_away(lib: ArrayLibrary):
    def compute(x):
        xp = lib.xp
        whole = xp.trunc(x)
        return xp.where(xp.abs(x - whole) >= 0.5, whole + xp.sign(x), whole)
    return compute


def power(lib: ArrayLibrary):
    """numpy's integer powers (``integer_rules``): a negative exponent fails the call."""
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        integer = np.dtype(out).kind in "iu"
        fn = lib.function("power")

        def compute(a, b):
            a, b = lib.cast_all((a, b), out)
            if not integer:
                return fn(a, b)
            negative = integer_rules.negative_exponents(b, out)
            if negative is not None:
                lib.runtime_check(negative, ValueError, integer_rules.NEGATIVE_POWER)
            return lib.integer_power(a, b, out)

        return compute
    return make


def float_op(lib: ArrayLibrary, functions: dict):
    """A FloatOp: inputs cast to the (float) output dtype, then ``functions[type(op)]`` (a
    function of arrays) or the library's function of the op's numpy name."""
    def make(op, in_dtypes, out_dtypes):
        (out,) = out_dtypes
        if np.dtype(out).kind not in lib.float_kinds:
            raise NotImplementedError(f"{op.name} computing in {out}")
        fn = functions.get(type(op)) or lib.named(op)
        return lambda *values: fn(*lib.cast_all(values, out))
    return make


def composite(lib: ArrayLibrary):
    """The inner scalar graph, each intermediate cast to its dtype (as separate nodes would)."""
    def make(op, in_dtypes, out_dtypes):
        return composite_function(op, lib.scalar_function, lib.array, lib.array)
    return make


# ----------------------------------------------------------------------------------------------
# Float functions both libraries build from their primitives


def log1mexp(lib: ArrayLibrary):
    def compute(x):
        xp = lib.xp
        far = x < -np.log(2.0)
        minus_one = xp.full_like(x, -1.0)
        return xp.where(far, xp.log1p(-xp.exp(xp.where(far, x, minus_one))),
                        xp.log(-xp.expm1(xp.where(far, minus_one, x))))
    return compute


def registrations(lib: ArrayLibrary, float_functions: dict) -> dict:
    """Scalar op class -> implementation, the same for every array library (a back end
    registers them in its table and overrides what it computes otherwise)."""
    table = {sb.ScalarOp: scalar_op(lib), sb.Identity: identity(lib), sb.Cast: identity(lib),
             Composite: composite(lib), sm._Comparison: comparison(lib), sm.Abs: absolute(lib),
             sm.IntDiv: integer_division(lib), sm.Mod: integer_division(lib),
             sm.Clip: clip(lib), sm.Switch: switch(lib), sm.Second: second(lib),
             sm.RoundHalfAwayFromZero: rounding(lib, round_half_away(lib)), sm.Pow: power(lib)}
    for cls in (sm.IsNan, sm.IsInf, sm.IsFinite):
        table[cls] = as_is(lib)
    for cls in (sm.Floor, sm.Ceil, sm.Trunc, sm.RoundHalfToEven):
        table[cls] = rounding(lib)
    for cls in (sm.FloatOp, *float_functions):
        table[cls] = float_op(lib, float_functions)
    return table
