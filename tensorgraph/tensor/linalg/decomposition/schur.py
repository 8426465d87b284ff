"""Schur decompositions (PyTensor's ``pytensor.tensor.linalg.decomposition.schur``):
``schur`` of one matrix and ``qz``, the generalized form of a pair, scipy's, batched by
``Blockwise``. They have no gradient yet (asking for one names the op)."""

from __future__ import annotations

import numpy as np

from tensorgraph.gradient import grad_not_implemented
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, linalg_dtype, matrix_input,
)
from tensorgraph.tensor.type import TensorType

__all__ = ["Schur", "schur", "QZ", "qz", "ordqz"]

_SORTS = (None, "lhp", "rhp", "iuc", "ouc")


def _output_dtype(dtype: str, output: str) -> str:
    """The factors' dtype: complex for ``output='complex'`` (or a complex input)."""
    if output == "complex" and not dtype.startswith("complex"):
        return "complex64" if dtype == "float32" else "complex128"
    return dtype


def _check_options(what, output, sort):
    if output not in ("real", "complex"):
        raise ValueError(f"{what}: output must be 'real' or 'complex', got {output!r}")
    if sort not in _SORTS:
        raise ValueError(f"{what}: sort must be None, 'lhp', 'rhp', 'iuc' or 'ouc', got "
                         f"{sort!r}")


class Schur(Op):
    """scipy's ``schur``: ``A = Z T Z^H`` with ``Z`` unitary and ``T`` upper triangular
    (quasi-upper triangular, 2x2 blocks for complex pairs, with ``output='real'``);
    ``sort`` moves the chosen eigenvalues to the top left."""

    __props__ = ("output", "sort")
    gufunc_signature = "(m,m)->(m,m),(m,m)"

    def __init__(self, output: str = "real", sort=None):
        _check_options("schur", output, sort)
        self.output = output
        self.sort = sort

    def make_node(self, a):
        a = as_matrix(a, "schur", square=True)
        dtype = _output_dtype(linalg_dtype(a.type.dtype), self.output)
        return Apply(self, [a], [TensorType(dtype, a.type.shape)() for _ in range(2)])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (a,) = inputs
        check_square("schur", a)
        dtype = node.outputs[0].type.dtype
        t, z = scipy.linalg.schur(np.asarray(a, linalg_dtype(a.dtype)), output=self.output,
                                  sort=self.sort, check_finite=False)[:2]
        output_storage[0][0] = np.asarray(t, dtype=dtype)
        output_storage[1][0] = np.asarray(z, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]] * 2

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, 0, inputs[0], "schur has no gradient yet")]


def schur(A, output: str = "real", sort=None):
    """``(T, Z)``, the Schur decomposition of ``A`` (or of each matrix of a stack)."""
    return batched(Schur(output, sort))(matrix_input(A, 2, "schur"))


class QZ(Op):
    """scipy's ``qz``: ``A = Q AA Z^H`` and ``B = Q BB Z^H`` with ``Q``, ``Z`` unitary, ``BB``
    upper triangular and ``AA`` upper (quasi-upper, with ``output='real'``) triangular.
    With ``return_eigenvalues`` it is scipy's ``ordqz``: ``(AA, BB, alpha, beta, Q, Z)``, the
    generalized eigenvalues ``alpha / beta`` as LAPACK gives them (``alpha`` complex, since a
    real pencil can have complex eigenvalues; ``beta`` of the factors' dtype)."""

    __props__ = ("output", "sort", "return_eigenvalues")

    def __init__(self, output: str = "real", sort=None, return_eigenvalues: bool = False):
        _check_options("qz", output, sort)
        self.output = output
        self.sort = sort
        self.return_eigenvalues = bool(return_eigenvalues)
        self.gufunc_signature = ("(m,m),(m,m)->(m,m),(m,m),(m),(m),(m,m),(m,m)"
                                 if self.return_eigenvalues
                                 else "(m,m),(m,m)->(m,m),(m,m),(m,m),(m,m)")

    def make_node(self, a, b):
        a = as_matrix(a, "qz", square=True)
        b = as_matrix(b, "qz", square=True)
        dtype = _output_dtype(linalg_dtype(a.type.dtype, b.type.dtype), self.output)
        factors = [TensorType(dtype, a.type.shape)() for _ in range(4)]
        if not self.return_eigenvalues:
            return Apply(self, [a, b], factors)
        n = a.type.shape[:1]
        alpha = TensorType(_output_dtype(dtype, "complex"), n)()
        beta = TensorType(dtype, n)()
        return Apply(self, [a, b], [*factors[:2], alpha, beta, *factors[2:]])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        check_square("qz", a)
        check_square("qz", b)
        work = linalg_dtype(a.dtype, b.dtype)
        a, b = np.asarray(a, work), np.asarray(b, work)
        if self.sort is None and not self.return_eigenvalues:
            outs = scipy.linalg.qz(a, b, output=self.output, check_finite=False)
        else:
            outs = scipy.linalg.ordqz(a, b, sort=self.sort or _no_sort, output=self.output,
                                      check_finite=False)
            if not self.return_eigenvalues:
                outs = outs[:2] + outs[4:]
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape = input_shapes
        if self.return_eigenvalues:
            return [a_shape, b_shape, a_shape[:1], a_shape[:1], a_shape, a_shape]
        return [a_shape] * 4

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, k, x, "qz has no gradient yet")
                for k, x in enumerate(inputs)]


def _no_sort(alpha, beta):
    """``ordqz``'s sort that selects nothing: the unordered form, with its eigenvalues."""
    return np.zeros(np.shape(alpha), dtype=bool)


def qz(A, B, output: str = "real", sort=None, return_eigenvalues: bool = False):
    """``(AA, BB, Q, Z)``, the generalized Schur decomposition of ``(A, B)`` (or of each
    pair of a stack); ``sort`` orders it as scipy's ``ordqz``. ``return_eigenvalues=True``
    gives ``(AA, BB, alpha, beta, Q, Z)``, the generalized eigenvalues being
    ``alpha / beta`` (PyTensor's order)."""
    return batched(QZ(output, sort, return_eigenvalues))(matrix_input(A, 2, "qz"),
                                                         matrix_input(B, 2, "qz"))


def ordqz(A, B, sort=None, output: str = "real"):
    """scipy's ``ordqz`` (PyTensor's alias of ``qz(..., return_eigenvalues=True)``):
    ``(AA, BB, alpha, beta, Q, Z)``."""
    return qz(A, B, output=output, sort=sort, return_eigenvalues=True)
