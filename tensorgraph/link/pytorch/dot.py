"""PyTorch for the products: ``Dot``, ``TensorDot``, ``MatMul`` and the BLAS ops a graph may hold
(``Gemv``, ``Gemm``, ``Dot22``; mode PYTORCH leaves out the rewrites making them, Inductor
fuses scalings and additions itself). Operands are cast to the output dtype first (numpy's
result dtype; the wide unsigned integers compute in int64, which wraps as they do)."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.unsupported import refuse_gemv_pair
from tensorgraph.link.pytorch import as_tensor, register, runtime_check
from tensorgraph.link.pytorch.elemwise import arithmetic_dtype
from tensorgraph.link.traced_products import (
    check_gemm,
    check_gemv,
    check_inner,
    check_matmul,
    check_tensordot,
    gemv_result,
    scaled_sum,
)
from tensorgraph.link.traced_shape import shape_of
from tensorgraph.tensor.blas import Dot22, Gemm, Gemv
from tensorgraph.tensor.dot import Dot, MatMul, TensorDot


def _operands(dtype, *values):
    if np.dtype(dtype).kind == "b":  # a boolean product is 'any of the ands'
        return [as_tensor(v, "int64") for v in values]
    return [as_tensor(v, arithmetic_dtype(dtype)) for v in values]


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
        check_inner(sa, sb)
        return _product(lambda x, y: torch.tensordot(x, y, dims=([x.ndim - 1], [0])),
                        dtype)(a, b)

    return dot


@register(TensorDot)
def torch_tensordot(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def tensordot(a, b):
        check_tensordot(op, shape_of(a), shape_of(b))
        return _product(lambda x, y: torch.tensordot(x, y, dims=(list(op.axes_a),
                                                                 list(op.axes_b))),
                        dtype)(a, b)

    return tensordot


@register(MatMul)
def torch_matmul(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def matmul(a, b):
        check_matmul(node, shape_of(a), shape_of(b))
        return _product(torch.matmul, dtype)(a, b)

    return matmul


@register(Gemv)
def torch_gemv(op, node):
    import torch

    refuse_gemv_pair(op, "PYTORCH")
    dtype = node.outputs[0].dtype

    def gemv(y, alpha, A, x, beta):
        sA, sx, sy = shape_of(A), shape_of(x), shape_of(y)
        check_gemv(sy, sA, sx)
        given_beta = beta
        y, alpha, A, x, beta = _operands(dtype, y, alpha, A, x, beta)
        product = torch.mv(A, x)
        return gemv_result(torch, alpha, product, beta, y, (sy, sA, sx), runtime_check,
                           given_beta)

    return gemv


@register(Gemm)
def torch_gemm(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def gemm(z, alpha, a, b, beta):
        check_gemm(shape_of(z), shape_of(a), shape_of(b))
        z, alpha, a, b, beta = _operands(dtype, z, alpha, a, b, beta)
        return scaled_sum(torch, alpha, torch.mm(a, b), beta, z)

    return gemm
