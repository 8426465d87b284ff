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

__all__ = ["Schur", "schur", "QZ", "qz"]

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
    upper triangular and ``AA`` upper (quasi-upper, with ``output='real'``) triangular."""

    __props__ = ("output", "sort")
    gufunc_signature = "(m,m),(m,m)->(m,m),(m,m),(m,m),(m,m)"

    def __init__(self, output: str = "real", sort=None):
        _check_options("qz", output, sort)
        self.output = output
        self.sort = sort

    def make_node(self, a, b):
        a = as_matrix(a, "qz", square=True)
        b = as_matrix(b, "qz", square=True)
        dtype = _output_dtype(linalg_dtype(a.type.dtype, b.type.dtype), self.output)
        return Apply(self, [a, b], [TensorType(dtype, a.type.shape)() for _ in range(4)])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        check_square("qz", a)
        check_square("qz", b)
        dtype = node.outputs[0].type.dtype
        work = linalg_dtype(a.dtype, b.dtype)
        if self.sort is None:
            outs = scipy.linalg.qz(np.asarray(a, work), np.asarray(b, work),
                                   output=self.output, check_finite=False)
        else:
            aa, bb, _, _, q, z = scipy.linalg.ordqz(np.asarray(a, work), np.asarray(b, work),
                                                    sort=self.sort, output=self.output,
                                                    check_finite=False)
            outs = (aa, bb, q, z)
        for cell, value in zip(output_storage, outs):
            cell[0] = np.asarray(value, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]] * 4

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, k, x, "qz has no gradient yet")
                for k, x in enumerate(inputs)]


def qz(A, B, output: str = "real", sort=None, return_eigenvalues: bool = False):
    """``(AA, BB, Q, Z)``, the generalized Schur decomposition of ``(A, B)`` (or of each
    pair of a stack); ``sort`` orders it as scipy's ``ordqz``."""
    if return_eigenvalues:
        raise NotImplementedError("qz: return_eigenvalues=True is not supported yet")
    return batched(QZ(output, sort))(matrix_input(A, 2, "qz"), matrix_input(B, 2, "qz"))
