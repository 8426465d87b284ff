"""JAX for the reductions (``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any``, ``Argmax``,
``Argmin``) and the softmax family (``Softmax``, ``LogSoftmax``), with perform's dtypes:
sums accumulate in ``acc_dtype`` and end in the output dtype."""

from __future__ import annotations

import numpy as np

from tensorgraph.link import array_reduction
from tensorgraph.link.jax import register
from tensorgraph.link.jax.elemwise import LIBRARY
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.tensor.reduction import CAReduce, _ArgExtremum, _Extremum
from tensorgraph.tensor.special import LogSoftmax, Softmax

_REDUCTIONS = {sb.Add: "sum", sb.Mul: "prod", sm.Maximum: "max", sm.Minimum: "min",
               sm.AND: "all", sm.OR: "any"}


@register(CAReduce)
def jax_careduce(op, node):
    import jax.numpy as jnp

    name = _REDUCTIONS.get(type(op.scalar_op))
    if name is None:
        raise NotImplementedError(f"no JAX reduction with the scalar op {op.scalar_op}")
    reduce = getattr(jnp, name)
    out_dtype = node.outputs[0].dtype
    acc = op.acc_dtype if name in ("sum", "prod") else None

    def careduce(x):
        shape = np.shape(x)
        if isinstance(op, _Extremum) and any(shape[a] == 0 for a in op.axis):
            op._check_empty_allowed(np.empty(shape, dtype=np.int8))
        if acc is not None:
            return reduce(x, axis=op.axis, dtype=acc).astype(out_dtype)
        return reduce(x, axis=op.axis).astype(out_dtype)

    return careduce


@register(_ArgExtremum)
def jax_arg_extremum(op, node):
    return array_reduction.arg_extremum(LIBRARY, op)


def _shifted(op, x, dtype):
    import jax.numpy as jnp

    x = jnp.asarray(x).astype(dtype)
    top = jnp.max(x, axis=op.axis, keepdims=True)
    return x - jnp.where(jnp.isfinite(top), top, jnp.zeros((), dtype=dtype))


@register(Softmax)
def jax_softmax(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def softmax(x):
        if np.size(x) == 0:
            return jnp.asarray(x).astype(dtype)
        e = jnp.exp(_shifted(op, x, dtype))
        return e / jnp.sum(e, axis=op.axis, keepdims=True)

    return softmax


@register(LogSoftmax)
def jax_log_softmax(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def log_softmax(x):
        if np.size(x) == 0:
            return jnp.asarray(x).astype(dtype)
        shifted = _shifted(op, x, dtype)
        return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=op.axis, keepdims=True))

    return log_softmax
