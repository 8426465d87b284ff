"""The singular value decomposition (PyTensor's ``linalg.decomposition.svd``): ``svd``,
batched by ``Blockwise``, differentiable in its singular values and (economic, or square)
its vectors."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.raise_op import assert_op
from tensorgraph.tensor.creation import eye
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, linalg_dtype, matrix_input, real_dtype, transposed,
)
from tensorgraph.tensor.math import eq, minimum, sqr, switch
from tensorgraph.tensor.type import TensorType

__all__ = ["SVD", "svd"]


class SVD(Op):
    """numpy's ``svd``: ``x == U @ diag(s) @ Vh``; with ``compute_uv=False`` only the
    singular values ``s`` (descending, real)."""

    __props__ = ("full_matrices", "compute_uv")

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices = bool(full_matrices)
        self.compute_uv = bool(compute_uv)

    @property
    def gufunc_signature(self):
        if not self.compute_uv:
            return "(m,n)->(k)"
        return "(m,n)->(m,m),(k),(n,n)" if self.full_matrices else "(m,n)->(m,k),(k),(k,n)"

    def make_node(self, x):
        x = as_matrix(x, "svd")
        dtype = linalg_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        s = TensorType(real_dtype(dtype), (k,))()
        if not self.compute_uv:
            return Apply(self, [x], [s])
        u = TensorType(dtype, (m, m if self.full_matrices else k))()
        vh = TensorType(dtype, (n if self.full_matrices else k, n))()
        return Apply(self, [x], [u, s, vh])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        a = np.asarray(x, dtype=linalg_dtype(x.dtype))
        outs = np.linalg.svd(a, full_matrices=self.full_matrices, compute_uv=self.compute_uv)
        outs = outs if self.compute_uv else (outs,)
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        m, n = input_shapes[0]
        k = minimum(m, n)
        if not self.compute_uv:
            return [(k,)]
        if self.full_matrices:
            return [(m, m), (k,), (n, n)]
        return [(m, k), (k,), (k, n)]

    def L_op(self, inputs, outputs, output_grads):
        """Singular values: ``U diag(gs) Vh`` over the economic factors. With the vectors
        too (``full_matrices=False``, or a square matrix), Townsend's rule;
        ``full_matrices=True`` on a non-square matrix has no unique gradient for the extra
        vectors (a ValueError when it runs)."""
        (x,) = inputs
        if not self.compute_uv:
            u, _, vh = svd(x, full_matrices=False)
            return [(u * output_grads[0]).dot(vh)]
        return [_svd_vectors_grad(x, outputs, output_grads, self.full_matrices)]


def _svd_vectors_grad(x, outputs, output_grads, full_matrices):
    u, s, vh = outputs
    gu, gs, gvh = output_grads
    if full_matrices:   # square inputs only: then full and economic factors are the same
        u = assert_op(u, eq(x.shape[0], x.shape[1]), error="ValueError",
                      msg="svd(full_matrices=True): the gradient of U and Vh needs a square "
                          "matrix (use full_matrices=False)")
    k = s.shape[0]
    v, gv = transposed(vh), transposed(gvh)
    s2 = sqr(s)
    diff = s2.dimshuffle("x", 0) - s2.dimshuffle(0, "x")          # s_j^2 - s_i^2
    off = 1 - eye(k, dtype=s.dtype)
    f = off / switch(eq(diff, 0), 1, diff) * switch(eq(diff, 0), 0, 1)
    utgu = transposed(u).dot(gu)
    vtgv = transposed(v).dot(gv)
    sdiag = s * eye(k, dtype=s.dtype)
    inv_s = eye(k, dtype=s.dtype) / switch(eq(s, 0), 1, s)
    core = ((f * (utgu - transposed(utgu))).dot(sdiag) + gs * eye(k, dtype=s.dtype)
            + sdiag.dot(f * (vtgv - transposed(vtgv))))
    grad = u.dot(core).dot(vh)
    m_eye, n_eye = eye(x.shape[0], dtype=x.dtype), eye(x.shape[1], dtype=x.dtype)
    grad = grad + (m_eye - u.dot(transposed(u))).dot(gu).dot(inv_s).dot(vh)
    return grad + u.dot(inv_s).dot(transposed(gv)).dot(n_eye - v.dot(vh))


def svd(a, full_matrices: bool = True, compute_uv: bool = True):
    """numpy's ``svd`` of ``a`` (or of each matrix of a stack): ``(U, s, Vh)``, or ``s``
    with ``compute_uv=False``."""
    a = matrix_input(a, 2, "svd")
    return batched(SVD(full_matrices, compute_uv))(a)
