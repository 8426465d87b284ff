"""JAX for ``Elemwise``, ``DimShuffle`` and the scalar ops (fused ``Composite`` loops too).

Dtypes are the graph's, not JAX's promotion rules: a scalar op computes in its output dtype
(the inputs are cast to it first, as the C kernels do), comparisons in the dtype numpy
compares in, and every result is cast to the dtype its variable has. So float32 graphs stay
float32 and int8 arithmetic wraps as numpy's does.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import integer_rules
from tensorgraph.link.jax import register, register_scalar, runtime_check, scalar_implementation
from tensorgraph.link.traced import composite_function
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise, _runtime_shape


def scalar_function(op, in_dtypes, out_dtypes):
    """A function of jax arrays computing the scalar op ``op`` elementwise (broadcasting as
    numpy), or NotImplementedError naming the op."""
    impl = scalar_implementation(op)
    if impl is None:
        raise NotImplementedError(f"the scalar op {op.name} has no JAX implementation")
    return impl(op, tuple(in_dtypes), tuple(out_dtypes))


@register(Elemwise)
def jax_elemwise(op, node):
    import jax.numpy as jnp

    fn = scalar_function(op.scalar_op, [i.dtype for i in node.inputs],
                         [o.dtype for o in node.outputs])
    dtypes = [o.dtype for o in node.outputs]
    several = len(node.outputs) > 1

    def elemwise(*inputs):
        shape = _runtime_shape(node, inputs)  # numpy's broadcasting, the graph's static rule
        results = fn(*inputs)
        if not several:
            results = (results,)
        outs = tuple(jnp.broadcast_to(jnp.asarray(r, dtype=d), shape)
                     for r, d in zip(results, dtypes))
        return outs if several else outs[0]

    return elemwise


@register(DimShuffle)
def jax_dimshuffle(op, node):
    import jax.numpy as jnp

    def dimshuffle(x):
        res = jnp.transpose(x, op.kept + op.dropped)
        kept_shape = res.shape[:len(op.kept)]
        shape = tuple(1 if d == "x" else kept_shape[op.kept.index(d)] for d in op.new_order)
        return jnp.reshape(res, shape)

    return dimshuffle


# ----------------------------------------------------------------------------------------------
# Scalar ops


def _cast_all(values, dtype):
    import jax.numpy as jnp

    return [jnp.asarray(v).astype(dtype) for v in values]


def _numpy_named(op):
    """The jax.numpy function with the name of the op's numpy ufunc."""
    import jax.numpy as jnp

    name = getattr(op.nfunc, "__name__", None)
    fn = getattr(jnp, name, None) if name else None
    if fn is None:
        raise NotImplementedError(f"the scalar op {op.name} has no JAX implementation "
                                  f"(no jax.numpy.{name})")
    return fn


def _reduce_left(fn, values):
    if len(values) <= 2:
        return fn(*values)
    result = values[0]
    for v in values[1:]:
        result = fn(result, v)
    return result


@register_scalar(sb.ScalarOp)
def jax_scalar_op(op, in_dtypes, out_dtypes):
    """Every op with a numpy ufunc: inputs cast to the output dtype, the jax.numpy function of
    the same name (applied left to right for n-ary add and mul)."""
    fn = _numpy_named(op)
    (out,) = out_dtypes

    def compute(*values):
        return _reduce_left(fn, _cast_all(values, out))

    return compute


@register_scalar(sm._Comparison)
def jax_comparison(op, in_dtypes, out_dtypes):
    fn = _numpy_named(op)
    common = np.result_type(*in_dtypes).name

    def compare(a, b):
        return fn(*_cast_all((a, b), common))

    return compare


def _as_is(op, in_dtypes, out_dtypes):
    fn = _numpy_named(op)
    return lambda x: fn(x)


for _cls in (sm.IsNan, sm.IsInf, sm.IsFinite):
    register_scalar(_cls)(_as_is)


@register_scalar(sm.Abs)
def jax_abs(op, in_dtypes, out_dtypes):
    import jax.numpy as jnp

    return lambda x: jnp.abs(x).astype(out_dtypes[0])


def _integer_division(op, in_dtypes, out_dtypes):
    """``//`` and ``%``: numpy gives 0 for an integer divided by 0 (JAX would not)."""
    import jax.numpy as jnp

    fn = _numpy_named(op)
    (out,) = out_dtypes
    integer = np.dtype(out).kind in "iu"

    def divide(a, b):
        a, b = _cast_all((a, b), out)
        if not integer:
            return fn(a, b)
        safe = jnp.where(b == 0, jnp.ones_like(b), b)
        return jnp.where(b == 0, jnp.zeros_like(a), fn(a, safe))

    return divide


register_scalar(sm.IntDiv)(_integer_division)
register_scalar(sm.Mod)(_integer_division)


@register_scalar(sb.Identity)
def jax_identity(op, in_dtypes, out_dtypes):
    import jax.numpy as jnp

    (out,) = out_dtypes
    narrow_int = np.dtype(out).kind in "iu" and np.dtype(out).itemsize < 8
    if narrow_int and any(np.dtype(d).kind == "f" for d in in_dtypes):
        # numpy converts a float to a narrow integer through int64 (so -2.5 -> uint8 254);
        # XLA would saturate
        return lambda x: jnp.asarray(x).astype("int64").astype(out)
    return lambda x: jnp.asarray(x).astype(out)


register_scalar(sb.Cast)(jax_identity)


@register_scalar(sm.Clip)
def jax_clip(op, in_dtypes, out_dtypes):
    import jax.numpy as jnp

    def clip(x, lo, hi):
        x, lo, hi = _cast_all((x, lo, hi), out_dtypes[0])
        return jnp.minimum(jnp.maximum(x, lo), hi)

    return clip


@register_scalar(sm.Switch)
def jax_switch(op, in_dtypes, out_dtypes):
    import jax.numpy as jnp

    def switch(cond, a, b):
        a, b = _cast_all((a, b), out_dtypes[0])
        return jnp.where(jnp.asarray(cond) != 0, a, b)

    return switch


@register_scalar(sm.Second)
def jax_second(op, in_dtypes, out_dtypes):
    import jax.numpy as jnp

    return lambda a, b: jnp.asarray(b).astype(out_dtypes[0])


def _rounding(op, in_dtypes, out_dtypes):
    """floor, ceil, trunc, round: integers are their own result."""
    fn = _numpy_named(op)
    (out,) = out_dtypes
    if np.dtype(out).kind != "f":
        return jax_identity(op, in_dtypes, out_dtypes)
    return lambda x: fn(x)


for _cls in (sm.Floor, sm.Ceil, sm.Trunc, sm.RoundHalfToEven):
    register_scalar(_cls)(_rounding)


@register_scalar(sm.RoundHalfAwayFromZero)
def jax_round_away(op, in_dtypes, out_dtypes):
    import jax.numpy as jnp

    (out,) = out_dtypes
    if np.dtype(out).kind != "f":
        return jax_identity(op, in_dtypes, out_dtypes)

    def round_away(x):
        whole = jnp.trunc(x)
        return jnp.where(jnp.abs(x - whole) >= 0.5, whole + jnp.sign(x), whole)

    return round_away


@register_scalar(sm.Pow)
def jax_pow(op, in_dtypes, out_dtypes):
    """numpy's integer powers (``integer_rules``): a negative exponent fails the call, every
    bit of the exponent counts (``jnp.power`` reads only the low six)."""
    import jax.numpy as jnp

    (out,) = out_dtypes
    integer = np.dtype(out).kind in "iu"

    def pow_(a, b):
        a, b = _cast_all((a, b), out)
        if not integer:
            return jnp.power(a, b)
        negative = integer_rules.negative_exponents(b, out)
        if negative is not None:
            runtime_check(negative, ValueError, integer_rules.NEGATIVE_POWER)
        return integer_rules.power(jnp, a, b, out)

    return pow_


def _float_function(name_or_fn):
    """A FloatOp: inputs cast to the (float) output dtype, then the function."""
    def make(op, in_dtypes, out_dtypes):
        fn = _lookup(name_or_fn)
        (out,) = out_dtypes

        def compute(*values):
            return fn(*_cast_all(values, out))

        return compute
    return make


def _lookup(name_or_fn):
    if callable(name_or_fn):
        return name_or_fn
    import jax

    module, _, name = name_or_fn.rpartition(".")
    target = jax
    for part in module.split(".")[1:]:
        target = getattr(target, part)
    return getattr(target, name)


def _log1mexp(x):
    import jax.numpy as jnp

    far = x < -np.log(2.0)
    return jnp.where(far, jnp.log1p(-jnp.exp(jnp.where(far, x, -1.0))),
                     jnp.log(-jnp.expm1(jnp.where(far, -1.0, x))))


def _erfcinv(x):
    import jax.numpy as jnp
    from jax.scipy.special import ndtri

    return -ndtri(x / 2) / jnp.sqrt(jnp.asarray(2.0, dtype=x.dtype))


def _trigamma(x):
    from jax.scipy.special import polygamma

    return polygamma(1, x)


def _gammaln(x):
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    return jnp.where(x == -jnp.inf, -jnp.inf, gammaln(x))


_FLOAT_FUNCTIONS = {
    sm.FloatOp: None,  # the jax.numpy function of the op's numpy name (exp, log1p, tanh, ...)
    sm.Sigmoid: "jax.nn.sigmoid", sm.Softplus: "jax.nn.softplus", sm.Log1mexp: _log1mexp,
    sm.Erf: "jax.scipy.special.erf", sm.Erfc: "jax.scipy.special.erfc",
    sm.Erfinv: "jax.scipy.special.erfinv", sm.Erfcinv: _erfcinv,
    sm.Gamma: "jax.scipy.special.gamma", sm.GammaLn: _gammaln,
    sm.Psi: "jax.scipy.special.digamma", sm.TriGamma: _trigamma,
}


def jax_float_op(op, in_dtypes, out_dtypes):
    target = _FLOAT_FUNCTIONS.get(type(op))
    if target is None:
        target = _numpy_named(op)
    return _float_function(target)(op, in_dtypes, out_dtypes)


for _cls in _FLOAT_FUNCTIONS:
    register_scalar(_cls)(jax_float_op)


@register_scalar(Composite)
def jax_composite(op, in_dtypes, out_dtypes):
    """The inner scalar graph, each intermediate cast to its dtype (as separate nodes would)."""
    import jax.numpy as jnp

    return composite_function(op, scalar_function, lambda array: array,
                              lambda value, dtype: jnp.asarray(value).astype(dtype))
