"""PyTorch for the products: ``Dot``, ``TensorDot``, ``MatMul`` and the BLAS ops a graph may hold
(``Gemv``, ``Gemm``, ``Dot22``; mode PYTORCH leaves out the rewrites making them, Inductor
fuses scalings and additions itself). Operands are cast to the output dtype first (numpy's
result dtype; the wide unsigned integers compute in int64, which wraps as they do)."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.pytorch import as_tensor, register, runtime_check
from tensorgraph.link.pytorch.elemwise import arithmetic_dtype
from tensorgraph.link.pytorch.shape import shape_of
from tensorgraph.tensor.blas import Dot22, Gemm, Gemv
from tensorgraph.tensor.dot import Dot, MatMul, TensorDot


def _operands(dtype, *values):
    if np.dtype(dtype).kind == "b":  # a boolean product is 'any of the ands'
        return [as_tensor(v, "int64") for v in values]
    return [as_tensor(v, arithmetic_dtype(dtype)) for v in values]


def _inner_check(sa, sb, what="dot"):
    if sa[-1] != sb[0]:
        raise ValueError(f"{what}: inner dimensions differ: shapes {tuple(sa)} and {tuple(sb)} "
                         f"({sa[-1]} != {sb[0]})")


def _product(fn, dtype):
    def call(*values):
        result = fn(*_operands(dtype, *values))
        return as_tensor(result != 0 if np.dtype(dtype).kind == "b" else result, dtype)
    return call


@register(Dot)
@register(Dot22)
def torch_dot(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def dot(a, b):
        sa, sb = shape_of(a), shape_of(b)
        if not sa or not sb:
            return _product(torch.mul, dtype)(a, b)
        _inner_check(sa, sb)
        return _product(lambda x, y: torch.tensordot(x, y, dims=([x.ndim - 1], [0])),
                        dtype)(a, b)

    return dot


@register(TensorDot)
def torch_tensordot(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def tensordot(a, b):
        sa, sb = shape_of(a), shape_of(b)
        for ia, ib in zip(op.axes_a, op.axes_b):
            if sa[ia] != sb[ib]:
                raise ValueError(f"tensordot: axis {ia} of the first input (shape {sa}) and axis "
                                 f"{ib} of the second (shape {sb}) have different lengths "
                                 f"({sa[ia]} != {sb[ib]})")
        return _product(lambda x, y: torch.tensordot(x, y, dims=(list(op.axes_a),
                                                                 list(op.axes_b))),
                        dtype)(a, b)

    return tensordot


@register(MatMul)
def torch_matmul(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def matmul(a, b):
        sa, sb = shape_of(a), shape_of(b)
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
        return _product(torch.matmul, dtype)(a, b)

    return matmul


def _scaled_sum(alpha, product, beta, y):
    """``alpha * product + beta * y``, with ``y`` not read where ``beta == 0`` (as BLAS)."""
    import torch

    scaled = alpha * product
    return torch.where(beta == 0, scaled, scaled + beta * y)


@register(Gemv)
def torch_gemv(op, node):
    import torch

    if op.pair is not None:
        raise NotImplementedError("the fused pair of products is made for C only (mode "
                                  "PYTORCH leaves its rewrite out)")
    dtype = node.outputs[0].dtype

    def gemv(y, alpha, A, x, beta):
        sA, sx, sy = shape_of(A), shape_of(x), shape_of(y)
        if sA[1] != sx[0]:
            raise ValueError(f"Gemv: shapes do not match: y {sy}, A {sA}, x {sx}")
        given_beta = beta
        y, alpha, A, x, beta = _operands(dtype, y, alpha, A, x, beta)
        product = torch.mv(A, x)
        if sy != (sA[0],):  # y must not be read: beta must be 0
            runtime_check(given_beta != 0, ValueError,
                          f"Gemv: shapes do not match: y {sy}, A {sA}, x {sx}")
            return alpha * product
        return _scaled_sum(alpha, product, beta, y)

    return gemv


@register(Gemm)
def torch_gemm(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def gemm(z, alpha, a, b, beta):
        sa, sb = shape_of(a), shape_of(b)
        if sa[1] != sb[0]:
            raise ValueError(f"Gemm: shapes do not match: z {shape_of(z)}, a {sa}, b {sb}")
        z, alpha, a, b, beta = _operands(dtype, z, alpha, a, b, beta)
        return _scaled_sum(alpha, torch.mm(a, b), beta, z)

    return gemm
