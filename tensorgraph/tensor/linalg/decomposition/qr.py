"""The QR factorization (PyTensor's ``linalg.decomposition.qr``): ``qr`` in scipy's modes,
batched by ``Blockwise``, differentiable but for the full Q of a tall matrix."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.raise_op import assert_op
from tensorgraph.tensor.creation import tril, zeros_like
from tensorgraph.tensor.join import concatenate
from tensorgraph.tensor.linalg.core import (
    as_matrix,
    batched,
    eye_like,
    linalg_dtype,
    matrix_input,
    transposed,
)
from tensorgraph.tensor.linalg.solvers import solve_triangular  # solvers imports us
from tensorgraph.tensor.math import le, minimum
from tensorgraph.tensor.type import TensorType

__all__ = ["QR", "qr"]


_QR_MODES = {"full": "full", "complete": "full", "economic": "economic",
             "reduced": "economic", "r": "r"}


class QR(Op):
    """scipy's ``qr``: ``x == Q @ R``. ``mode='full'`` (``'complete'``): Q (m, m), R (m, n);
    ``'economic'`` (``'reduced'``): Q (m, k), R (k, n) with k = min(m, n); ``'r'``: R only,
    (m, n) as scipy gives it."""

    __props__ = ("mode",)

    def __init__(self, mode: str = "full"):
        if mode not in _QR_MODES:
            raise ValueError(f"qr: mode must be one of {sorted(_QR_MODES)}, got {mode!r}"
                             + (" (mode='raw' is not supported)" if mode == "raw" else ""))
        self.mode = _QR_MODES[mode]

    @property
    def gufunc_signature(self):
        if self.mode == "r":
            return "(m,n)->(m,n)"
        return "(m,n)->(m,k),(k,n)" if self.mode == "economic" else "(m,n)->(m,m),(m,n)"

    def make_node(self, x):
        x = as_matrix(x, "qr")
        dtype = linalg_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        r_rows = k if self.mode == "economic" else m
        r = TensorType(dtype, (r_rows, n))()
        if self.mode == "r":
            return Apply(self, [x], [r])
        q = TensorType(dtype, (m, k if self.mode == "economic" else m))()
        return Apply(self, [x], [q, r])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        a = np.asarray(x, dtype=node.outputs[0].type.dtype)
        outs = scipy.linalg.qr(a, mode=self.mode, check_finite=False)
        if self.mode == "r":
            outs = outs[:1]
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        m, n = input_shapes[0]
        k = minimum(m, n)
        if self.mode == "r":
            return [(m, n)]
        if self.mode == "economic":
            return [(m, k), (k, n)]
        return [(m, m), (m, n)]

    def L_op(self, inputs, outputs, output_grads):
        """With k = min(m, n), ``A = [X | Y]`` and ``R = [U | V]`` split after column k
        (``Y = Q V``; empty for a square or tall matrix): ``gQ' = gQ + Y gV.T``,
        ``M = U gU.T - gQ'.T Q``, ``gX = (gQ' + Q copyltu(M)) U^-T`` with ``copyltu`` the
        symmetric matrix of M's lower triangle, ``gY = Q gV`` (Liao et al.). The full Q of a
        tall matrix has no such formula (a ValueError when the gradient runs); ``mode='r'``
        differentiates through the economic factors."""
        (x,) = inputs
        rows, cols = x.shape[0], x.shape[1]
        k = minimum(rows, cols)
        if self.mode == "r":
            q, r = qr(x, mode="economic")
            gq, gr = zeros_like(q), output_grads[0][:k]
        else:
            (q, r), (gq, gr) = outputs, output_grads
            if self.mode == "full":
                r = assert_op(r, le(rows, cols), error="ValueError",
                              msg="qr(mode='full'): the gradient needs a square or wide matrix "
                                  "(use mode='economic' for a tall one)")
        u, gu, gv = r[:, :k], gr[:, :k], gr[:, k:]
        gq = gq + x[:, k:].dot(transposed(gv))
        m = u.dot(transposed(gu)) - transposed(gq).dot(q)
        low = tril(m, -1)
        copyltu = low + transposed(low) + m * eye_like(m)
        gx = transposed(solve_triangular(u, transposed(gq + q.dot(copyltu)), lower=False))
        return [concatenate([gx, q.dot(gv)], axis=1)]


def qr(A, mode: str = "full", overwrite_a: bool = False, pivoting: bool = False,
       lwork=None):
    """scipy's ``qr`` of ``A`` (or of each matrix of a stack), see ``QR``; column pivoting
    is not supported."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported yet")
    A = matrix_input(A, 2, "qr")
    return batched(QR(mode))(A)
