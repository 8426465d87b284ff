"""JAX for the products: ``Dot``, ``TensorDot``, ``MatMul`` and the BLAS ops a graph may hold
(``Gemv``, ``Gemm``, ``Dot22``; the JAX mode leaves out the rewrites making them, XLA fuses
scalings and additions itself). Operands are cast to the output dtype first (numpy's result
dtype) and multiplied at full float precision."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.traced_shape import (
    check_gemm,
    check_gemv,
    check_inner,
    check_matmul,
    check_tensordot,
    gemv_mismatch,
    scaled_sum,
)
from tensorgraph.tensor.blas import Dot22, Gemm, Gemv
from tensorgraph.tensor.dot import Dot, MatMul, TensorDot


def _precision():
    import jax

    return jax.lax.Precision.HIGHEST


@register(Dot)
@register(Dot22)
def jax_dot(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def dot(a, b):
        check_inner(np.shape(a), np.shape(b))
        return jnp.dot(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype),
                       precision=_precision())

    return dot


@register(TensorDot)
def jax_tensordot(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def tensordot(a, b):
        check_tensordot(op, np.shape(a), np.shape(b))
        return jnp.tensordot(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype),
                             (list(op.axes_a), list(op.axes_b)), precision=_precision())

    return tensordot


@register(MatMul)
def jax_matmul(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def matmul(a, b):
        check_matmul(node, np.shape(a), np.shape(b))
        return jnp.matmul(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype),
                          precision=_precision())

    return matmul


@register(Gemv)
def jax_gemv(op, node):
    import jax.numpy as jnp

    if op.pair is not None:
        raise NotImplementedError("the fused pair of products is made for C only (mode JAX "
                                  "leaves its rewrite out)")

    def gemv(y, alpha, A, x, beta):
        sA, sx, sy = np.shape(A), np.shape(x), np.shape(y)
        check_gemv(sy, sA, sx)
        product = jnp.dot(A, x, precision=_precision())
        if sy != (sA[0],):  # y must not be read: beta must be 0
            runtime_check(beta != 0, ValueError, gemv_mismatch(sy, sA, sx))
            return alpha * product
        return scaled_sum(jnp, alpha, product, beta, y)

    return gemv


@register(Gemm)
def jax_gemm(op, node):
    import jax.numpy as jnp

    def gemm(z, alpha, a, b, beta):
        check_gemm(np.shape(z), np.shape(a), np.shape(b))
        return scaled_sum(jnp, alpha, jnp.dot(a, b, precision=_precision()), beta, z)

    return gemm
