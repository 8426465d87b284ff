"""The QR factorization (PyTensor's ``linalg.decomposition.qr``): ``qr`` in scipy's modes,
batched by ``Blockwise``, with column pivoting (``geqp3``) too; differentiable but for the
full Q of a tall matrix and ``mode='raw'``."""

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
from tensorgraph.tensor.sort import argsort
from tensorgraph.tensor.type import TensorType

__all__ = ["QR", "qr"]


_QR_MODES = {"full": "full", "complete": "full", "economic": "economic",
             "reduced": "economic", "r": "r", "raw": "raw"}


class QR(Op):
    """scipy's ``qr``: ``x == Q @ R``. ``mode='full'`` (``'complete'``): Q (m, m), R (m, n);
    ``'economic'`` (``'reduced'``): Q (m, k), R (k, n) with k = min(m, n); ``'r'``: R only,
    (m, n) as scipy gives it; ``'raw'``: LAPACK's ``geqrf`` form, H (m, n) (R on and above
    the diagonal, the Householder vectors below it) and tau (k), then R (k, n), the outputs
    of scipy's ``((h, tau), r)`` flattened as PyTensor does. ``pivoting=True`` is LAPACK's
    ``geqp3`` (column pivoting: ``x[:, p] == Q @ R``, ``|R|``'s diagonal non-increasing) and
    adds the permutation ``p`` (int32, 0-based) as the last output."""

    __props__ = ("mode", "pivoting")

    def __init__(self, mode: str = "full", pivoting: bool = False):
        if mode not in _QR_MODES:
            raise ValueError(f"qr: mode must be one of {sorted(_QR_MODES)}, got {mode!r}")
        self.mode = _QR_MODES[mode]
        self.pivoting = bool(pivoting)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("pivoting", False)    # pickled before pivoting existed

    @property
    def gufunc_signature(self):
        outs = {"r": "(m,n)", "economic": "(m,k),(k,n)", "full": "(m,m),(m,n)",
                "raw": "(m,n),(k),(k,n)"}[self.mode]
        return f"(m,n)->{outs}" + (",(n)" if self.pivoting else "")

    def make_node(self, x):
        x = as_matrix(x, "qr")
        dtype = linalg_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        shapes = {"r": [(m, n)], "economic": [(m, k), (k, n)], "full": [(m, m), (m, n)],
                  "raw": [(m, n), (k,), (k, n)]}[self.mode]
        outputs = [TensorType(dtype, shape)() for shape in shapes]
        if self.pivoting:
            outputs.append(TensorType("int32", (n,))())
        return Apply(self, [x], outputs)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        a = np.asarray(x, dtype=node.outputs[0].type.dtype)
        outs = scipy.linalg.qr(a, mode=self.mode, pivoting=self.pivoting, check_finite=False)
        if self.mode == "raw":
            outs = (*outs[0], *outs[1:])
        for cell, value, var in zip(output_storage, outs, node.outputs, strict=True):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        m, n = input_shapes[0]
        k = minimum(m, n)
        shapes = {"r": [(m, n)], "economic": [(m, k), (k, n)], "full": [(m, m), (m, n)],
                  "raw": [(m, n), (k,), (k, n)]}[self.mode]
        return shapes + [(n,)] * self.pivoting

    def L_op(self, inputs, outputs, output_grads):
        """With k = min(m, n), ``A = [X | Y]`` and ``R = [U | V]`` split after column k
        (``Y = Q V``; empty for a square or tall matrix): ``gQ' = gQ + Y gV.T``,
        ``M = U gU.T - gQ'.T Q``, ``gX = (gQ' + Q copyltu(M)) U^-T`` with ``copyltu`` the
        symmetric matrix of M's lower triangle, ``gY = Q gV`` (Liao et al.). The full Q of a
        tall matrix has no such formula: its last m - n columns are any orthonormal
        completion, not a function of A that the formula describes (an AssertionError when the
        gradient runs, as PyTensor's Assert); ``mode='r'`` differentiates through the economic
        factors; ``mode='raw'`` has no gradient (NotImplementedError, as PyTensor). With
        pivoting the permutation is piecewise constant: the gradient is that of the QR of
        ``A[:, p]``, its columns put back in A's order."""
        if self.mode == "raw":
            raise NotImplementedError("qr: the gradient of mode='raw' is not implemented")
        (x,) = inputs
        if self.pivoting:
            perm = outputs[-1]
            x = x[:, perm]
            outputs, output_grads = outputs[:-1], output_grads[:-1]
        rows, cols = x.shape[0], x.shape[1]
        k = minimum(rows, cols)
        if self.mode == "r":
            q, r = qr(x, mode="economic")
            gq, gr = zeros_like(q), output_grads[0][:k]
        else:
            (q, r), (gq, gr) = outputs, output_grads
            if self.mode == "full":
                r = assert_op(r, le(rows, cols),
                              msg="qr(mode='full'): the gradient needs a square or wide matrix "
                                  "(use mode='economic' for a tall one)")
        u, gu, gv = r[:, :k], gr[:, :k], gr[:, k:]
        gq = gq + x[:, k:].dot(transposed(gv))
        m = u.dot(transposed(gu)) - transposed(gq).dot(q)
        low = tril(m, -1)
        copyltu = low + transposed(low) + m * eye_like(m)
        gx = transposed(solve_triangular(u, transposed(gq + q.dot(copyltu)), lower=False))
        gx = concatenate([gx, q.dot(gv)], axis=1)
        if self.pivoting:
            gx = gx[:, argsort(perm)]
        return [gx]


def qr(A, mode: str = "full", overwrite_a: bool = False, pivoting: bool = False,
       lwork=None):
    """scipy's ``qr`` of ``A`` (or of each matrix of a stack), see ``QR``: ``(Q, R)``,
    ``R`` alone (``mode='r'``: a variable, not a tuple, as PyTensor) or ``(H, tau, R)``
    (``mode='raw'``), and the permutation last with ``pivoting=True``. ``overwrite_a`` and
    ``lwork`` are accepted for scipy's signature."""
    A = matrix_input(A, 2, "qr")
    return batched(QR(mode, pivoting))(A)
