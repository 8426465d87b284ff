"""The Cholesky factorization (PyTensor's ``linalg.decomposition.cholesky``): ``cholesky``,
batched by ``Blockwise``, with ``on_error`` choosing between an error and NaN."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.creation import tril
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, eye_like, fold_to_triangle, linalg_dtype, matrix_error,
    matrix_input, transposed,
)
from tensorgraph.tensor.type import TensorType

__all__ = ["Cholesky", "cholesky"]


class Cholesky(Op):
    """The Cholesky factor of a symmetric positive definite matrix: lower ``L`` with
    ``L @ L.T == x`` (or upper ``U = L.T``). Only the triangle on the factor's side is read.
    A matrix that is not positive definite raises ``numpy.linalg.LinAlgError`` with
    ``on_error='raise'`` and gives a matrix of NaN with ``on_error='nan'`` (PyMC tests
    positive definiteness that way)."""

    __props__ = ("lower", "on_error")
    gufunc_signature = "(m,m)->(m,m)"

    def __init__(self, lower: bool = True, on_error: str = "nan"):
        if on_error not in ("raise", "nan"):
            raise ValueError(f"cholesky: on_error must be 'raise' or 'nan', got {on_error!r}")
        self.lower = bool(lower)
        self.on_error = on_error

    def make_node(self, x):
        x = as_matrix(x, "cholesky", square=True)
        dtype = linalg_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("cholesky", x)
        dtype = node.outputs[0].type.dtype
        a = np.asarray(x, dtype=dtype)
        try:
            factor = np.linalg.cholesky(a if self.lower else a.T.conj())
        except np.linalg.LinAlgError:
            if self.on_error == "raise":
                raise matrix_error("cholesky", "is not positive definite") from None
            factor = np.full(a.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(factor if self.lower else factor.T.conj(), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        """Murray's rule for the lower factor: ``Phi(L.T @ gL)`` (lower triangle, half its
        diagonal) brought back through ``L``'s inverses, folded onto the triangle the
        factorization reads (as PyTensor)."""
        from tensorgraph.tensor.linalg.solvers import solve_triangular  # solvers imports us

        (factor,) = outputs
        g = output_grads[0]
        low, g_low = (factor, g) if self.lower else (transposed(factor), transposed(g))
        prod = transposed(low).dot(g_low)
        phi = tril(prod) - 0.5 * prod * eye_like(prod)
        left = solve_triangular(transposed(low), phi, lower=False)          # L^-T Phi
        grad = transposed(solve_triangular(transposed(low), transposed(left), lower=False))  # L^-T Phi L^-1
        return [fold_to_triangle(0.5 * (grad + transposed(grad)), self.lower)]


def cholesky(x, lower: bool = True, *, check_finite: bool = True, overwrite_a: bool = False,
             on_error: str = "nan"):
    """The Cholesky factor of ``x`` (or of each matrix of a stack), lower unless
    ``lower=False``. ``on_error='nan'`` (PyTensor's default) gives NaN for a matrix that is
    not positive definite, ``'raise'`` raises ``numpy.linalg.LinAlgError`` naming it.
    ``check_finite`` and ``overwrite_a`` are accepted for PyTensor's signature."""
    x = matrix_input(x, 2, "cholesky")
    return batched(Cholesky(lower, on_error))(x)
