"""JAX for the products: ``Dot``, ``TensorDot``, ``MatMul`` and the BLAS ops a graph may hold
(``Gemv``, ``Gemm``, ``Dot22``; the JAX mode leaves out the rewrites making them, XLA fuses
scalings and additions itself). Operands are cast to the output dtype first (numpy's result
dtype) and multiplied at full float precision."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.jax import register, runtime_check
from tensorgraph.tensor.blas import Dot22, Gemm, Gemv
from tensorgraph.tensor.dot import Dot, MatMul, TensorDot


def _precision():
    import jax

    return jax.lax.Precision.HIGHEST


def _inner_check(a, b, what="dot"):
    sa, sb = np.shape(a), np.shape(b)
    if sa[-1] != sb[0]:
        raise ValueError(f"{what}: inner dimensions differ: shapes {tuple(sa)} and {tuple(sb)} "
                         f"({sa[-1]} != {sb[0]})")


@register(Dot)
@register(Dot22)
def jax_dot(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def dot(a, b):
        _inner_check(a, b)
        return jnp.dot(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype),
                       precision=_precision())

    return dot


@register(TensorDot)
def jax_tensordot(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def tensordot(a, b):
        sa, sb = np.shape(a), np.shape(b)
        for ia, ib in zip(op.axes_a, op.axes_b):
            if sa[ia] != sb[ib]:
                raise ValueError(f"tensordot: axis {ia} of the first input (shape {sa}) and axis "
                                 f"{ib} of the second (shape {sb}) have different lengths "
                                 f"({sa[ia]} != {sb[ib]})")
        return jnp.tensordot(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype),
                             (list(op.axes_a), list(op.axes_b)), precision=_precision())

    return tensordot


@register(MatMul)
def jax_matmul(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def matmul(a, b):
        sa, sb = np.shape(a), np.shape(b)
        if sa[-1] != sb[-2]:
            raise ValueError(f"matmul: inner dimensions differ: shapes {sa} and {sb} "
                             f"({sa[-1]} != {sb[-2]})")
        for d, (x, y) in enumerate(zip(sa[:-2], sb[:-2])):
            if x == y:
                continue
            for var, size in zip(node.inputs, (x, y)):
                if size == 1 and var.type.shape[d] != 1:
                    raise ValueError(f"matmul: {var} has size 1 in batch dimension {d} at run "
                                     f"time but its type {var.type} does not declare it "
                                     f"broadcastable; shapes {sa} and {sb}")
            if x != 1 and y != 1:
                raise ValueError(f"matmul: batch dimension {d} differs: shapes {sa} and {sb}")
        return jnp.matmul(jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype),
                          precision=_precision())

    return matmul


def _scaled_sum(alpha, product, beta, y):
    """``alpha * product + beta * y``, with ``y`` not read where ``beta == 0`` (as BLAS)."""
    import jax.numpy as jnp

    scaled = alpha * product
    return jnp.where(beta == 0, scaled, scaled + beta * y)


@register(Gemv)
def jax_gemv(op, node):
    import jax.numpy as jnp

    if op.pair is not None:
        raise NotImplementedError("the fused pair of products is made for C only (mode JAX "
                                  "leaves its rewrite out)")

    def gemv(y, alpha, A, x, beta):
        sA, sx, sy = np.shape(A), np.shape(x), np.shape(y)
        if sA[1] != sx[0]:
            raise ValueError(f"Gemv: shapes do not match: y {sy}, A {sA}, x {sx}")
        product = jnp.dot(A, x, precision=_precision())
        if sy != (sA[0],):  # y must not be read: beta must be 0
            runtime_check(beta != 0, ValueError,
                          f"Gemv: shapes do not match: y {sy}, A {sA}, x {sx}")
            return alpha * product
        return _scaled_sum(alpha, product, beta, y)

    return gemv


@register(Gemm)
def jax_gemm(op, node):
    import jax.numpy as jnp

    def gemm(z, alpha, a, b, beta):
        sa, sb = np.shape(a), np.shape(b)
        if sa[1] != sb[0]:
            raise ValueError(f"Gemm: shapes do not match: z {np.shape(z)}, a {sa}, b {sb}")
        return _scaled_sum(alpha, jnp.dot(a, b, precision=_precision()), beta, z)

    return gemm
