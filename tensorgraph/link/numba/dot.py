"""Numba for the products: ``Dot``, ``TensorDot``, ``MatMul`` and the BLAS ops a graph may
hold (``Gemv``, ``Gemm``, ``Dot22``; the NUMBA mode leaves out the rewrites making them).
Float products go to BLAS through ``np.dot`` (Numba calls scipy's BLAS); integer products are
loops. Operands are converted to the output dtype first (numpy's result dtype)."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.unsupported import refuse_gemv_pair
from tensorgraph.link.numba import register
from tensorgraph.link.numba.elemwise import check_dtypes
from tensorgraph.link.numba.shape import scalar, tuple_of
from tensorgraph.tensor.blas import Dot22, Gemm, Gemv
from tensorgraph.tensor.dot import Dot, MatMul, TensorDot

INT_DOT = '''
def int_dot(a, b, out):
    """out = a . b for 2-d integer (or bool) arrays."""
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            total = 0
            for k in range(a.shape[1]):
                total += a[i, k] * b[k, j]
            out[i, j] = total
    return out
'''


def _converted(code, name: str, var, dtype: str) -> str:
    if var.dtype == dtype:
        return name
    converted = code.name("c")
    code.line(f"{converted} = {name}.astype(np.{dtype})")
    return converted


def _check_inner(code, a, b, a_axis, b_axis, what):
    with code.block(f"if {a}.shape[{a_axis}] != {b}.shape[{b_axis}]:"):
        code.line(code.fail("ValueError", f"{what}: inner dimensions differ"))


def _product(code, a, b, a_ndim, b_ndim, dtype) -> str:
    """The expression (or a local) of ``a . b`` for vectors / matrices of ``dtype``."""
    if np.dtype(dtype).kind == "f":
        return f"np.dot({a}, {b})"
    helper = code.helper("int_dot", INT_DOT)
    a2 = a if a_ndim == 2 else f"np.ascontiguousarray({a}).reshape((1, {a}.shape[0]))"
    b2 = b if b_ndim == 2 else f"np.ascontiguousarray({b}).reshape(({b}.shape[0], 1))"
    result = code.name("p")
    code.line(f"{result} = {helper}({a2}, {b2}, np.empty(({a2}.shape[0], {b2}.shape[1]), "
              f"np.{dtype}))")
    if a_ndim == 2 and b_ndim == 2:
        return result
    if a_ndim == 2:
        return f"{result}[:, 0]"
    if b_ndim == 2:
        return f"{result}[0]"
    return f"{result}[0, 0]"


@register(Dot)
@register(Dot22)
def numba_dot(op, node, code):
    (a, b), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    check_dtypes([dtype])
    a_var, b_var = node.inputs
    _check_inner(code, a, b, a_var.ndim - 1, 0, "dot")
    a = _converted(code, a, a_var, dtype)
    b = _converted(code, b, b_var, dtype)
    product = _product(code, a, b, a_var.ndim, b_var.ndim, dtype)
    if node.outputs[0].ndim == 0:
        scalar(code, out, dtype, product)
    else:
        code.line(f"{out} = {product}")


@register(MatMul)
def numba_matmul(op, node, code):
    (a, b), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    check_dtypes([dtype])
    a_var, b_var = node.inputs
    ndim = a_var.ndim
    _check_inner(code, a, b, ndim - 1, ndim - 2, "matmul")
    a = _converted(code, a, a_var, dtype)
    b = _converted(code, b, b_var, dtype)
    batch = []
    for d in range(ndim - 2):
        sa, sb = a_var.type.shape[d], b_var.type.shape[d]
        if sa == 1:
            batch.append(f"{b}.shape[{d}]")
        elif sb == 1:
            batch.append(f"{a}.shape[{d}]")
        else:
            with code.block(f"if {a}.shape[{d}] != {b}.shape[{d}]:"):
                code.line(code.fail("ValueError", f"matmul: batch dimension {d} differs (only "
                                                  "dimensions of static size 1 broadcast)"))
            batch.append(f"{a}.shape[{d}]")
    sizes = batch + [f"{a}.shape[{ndim - 2}]", f"{b}.shape[{ndim - 1}]"]
    code.line(f"{out} = np.empty({tuple_of(sizes)}, np.{dtype})")
    from tensorgraph.link.numba.elemwise import loops

    with loops(code, batch) as idx:
        ia = [i if a_var.type.shape[d] != 1 else "0" for d, i in enumerate(idx)]
        ib = [i if b_var.type.shape[d] != 1 else "0" for d, i in enumerate(idx)]
        left, right = f"{a}[{', '.join(ia)}]", f"{b}[{', '.join(ib)}]"
        code.line(f"{out}[{', '.join(idx)}] = {_product(code, left, right, 2, 2, dtype)}")


@register(TensorDot)
def numba_tensordot(op, node, code):
    """numpy's own way: the contracted axes moved together, both operands as matrices, one
    product, the result reshaped."""
    (a, b), (out,) = code.inputs, code.outputs
    dtype = node.outputs[0].dtype
    check_dtypes([dtype])
    a_var, b_var = node.inputs
    for ia, ib in zip(op.axes_a, op.axes_b):
        _check_inner(code, a, b, ia, ib, "tensordot")
    a = _converted(code, a, a_var, dtype)
    b = _converted(code, b, b_var, dtype)
    free_a = [d for d in range(a_var.ndim) if d not in op.axes_a]
    free_b = [d for d in range(b_var.ndim) if d not in op.axes_b]

    def size(name, axes):
        return " * ".join([f"{name}.shape[{d}]" for d in axes]) or "1"

    left = code.name("l")
    code.line(f"{left} = np.ascontiguousarray(np.transpose({a}, "
              f"{tuple_of(free_a + list(op.axes_a))})).reshape(({size(a, free_a)}, "
              f"{size(a, op.axes_a)}))")
    right = code.name("r")
    code.line(f"{right} = np.ascontiguousarray(np.transpose({b}, "
              f"{tuple_of(list(op.axes_b) + free_b)})).reshape(({size(b, op.axes_b)}, "
              f"{size(b, free_b)}))")
    product = code.name("p")
    code.line(f"{product} = {_product(code, left, right, 2, 2, dtype)}")
    shape = [f"{a}.shape[{d}]" for d in free_a] + [f"{b}.shape[{d}]" for d in free_b]
    if not shape:
        scalar(code, out, dtype, f"{product}[0, 0]")
    else:
        code.line(f"{out} = np.ascontiguousarray({product}).reshape({tuple_of(shape)})")


@register(Gemv)
def numba_gemv(op, node, code):
    refuse_gemv_pair(op, "NUMBA")
    y, alpha, A, x = code.inputs[:4]
    beta = code.inputs[4]
    (out,) = code.outputs
    dtype = node.outputs[0].dtype
    _check_inner(code, A, x, 1, 0, "Gemv")
    code.line(f"{out} = {alpha}[()] * np.dot({A}, {x})")
    with code.block(f"if {beta}[()] != 0:"):
        with code.block(f"if {y}.shape[0] != {A}.shape[0]:"):
            code.line(code.fail("ValueError", "Gemv: shapes do not match"))
        code.line(f"{out} = ({out} + {beta}[()] * {y}).astype(np.{dtype})")


@register(Gemm)
def numba_gemm(op, node, code):
    z, alpha, a, b, beta = code.inputs
    (out,) = code.outputs
    dtype = node.outputs[0].dtype
    _check_inner(code, a, b, 1, 0, "Gemm")
    code.line(f"{out} = {alpha}[()] * np.dot({a}, {b})")
    with code.block(f"if {beta}[()] != 0:"):
        code.line(f"{out} = ({out} + {beta}[()] * {z}).astype(np.{dtype})")
