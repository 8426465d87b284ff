"""Matrix factorizations: Cholesky, LU, QR, SVD and eigendecompositions (PyTensor's
``pytensor.tensor.linalg.decomposition``), each a per-matrix op batched by ``Blockwise``.

Their ``perform`` is numpy / scipy; the gradients are graphs of the other linalg ops (so
they batch and differentiate again): Cholesky, LU and ``lu_factor`` (square matrices), QR
(all but the full Q of a tall matrix), SVD (singular values; all three outputs when
``full_matrices=False``), ``eigh`` and ``eigvalsh``.
"""

from __future__ import annotations

import warnings

import numpy as np

from tensorgraph.gradient import disconnected_type
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.raise_op import assert_op
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.creation import eye, tril, triu, zeros_like
from tensorgraph.tensor.join import concatenate
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, check_square, fold_to_triangle, linalg_dtype, matrix_error,
    matrix_input, real_dtype,
)
from tensorgraph.tensor.math import eq, le, minimum, sqr, switch
from tensorgraph.tensor.type import TensorType

__all__ = ["Cholesky", "cholesky", "LU", "lu", "LUFactor", "lu_factor", "PivotToPermutations",
           "pivot_to_permutation", "QR", "qr", "SVD",
           "svd", "Eig", "eig", "Eigh", "eigh", "Eigvalsh", "eigvalsh",
           "GeneralizedEigh"]


def _t(x):
    """The transpose of a core (2-d) variable."""
    return x.T


def _eye_like(x):
    return eye(x.shape[0], dtype=x.dtype)


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
        low, g_low = (factor, g) if self.lower else (_t(factor), _t(g))
        prod = _t(low).dot(g_low)
        phi = tril(prod) - 0.5 * prod * _eye_like(prod)
        left = solve_triangular(_t(low), phi, lower=False)          # L^-T Phi
        grad = _t(solve_triangular(_t(low), _t(left), lower=False))  # L^-T Phi L^-1
        return [fold_to_triangle(0.5 * (grad + _t(grad)), self.lower)]


def cholesky(x, lower: bool = True, *, check_finite: bool = True, overwrite_a: bool = False,
             on_error: str = "nan"):
    """The Cholesky factor of ``x`` (or of each matrix of a stack), lower unless
    ``lower=False``. ``on_error='nan'`` (PyTensor's default) gives NaN for a matrix that is
    not positive definite, ``'raise'`` raises ``numpy.linalg.LinAlgError`` naming it.
    ``check_finite`` and ``overwrite_a`` are accepted for PyTensor's signature."""
    x = matrix_input(x, 2, "cholesky")
    return batched(Cholesky(lower, on_error))(x)


class LU(Op):
    """scipy's ``lu``: ``x == P @ L @ U`` with ``L`` unit lower and ``U`` upper; outputs
    ``(P, L, U)``, ``(P @ L, U)`` with ``permute_l``, or the row indices instead of ``P``
    with ``p_indices``."""

    __props__ = ("permute_l", "p_indices")

    def __init__(self, permute_l: bool = False, p_indices: bool = False):
        self.permute_l = bool(permute_l)
        self.p_indices = bool(p_indices)

    @property
    def gufunc_signature(self):
        return "(m,n)->(m,k),(k,n)" if self.permute_l else "(m,n)->(m,m),(m,k),(k,n)"

    def make_node(self, x):
        x = as_matrix(x, "lu")
        dtype = linalg_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        lower, upper = TensorType(dtype, (m, k))(), TensorType(dtype, (k, n))()
        if self.permute_l:
            return Apply(self, [x], [lower, upper])
        perm = TensorType("int32", (m,))() if self.p_indices else TensorType(dtype, (m, m))()
        return Apply(self, [x], [perm, lower, upper])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        outs = scipy.linalg.lu(x, permute_l=self.permute_l, p_indices=self.p_indices)
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        m, n = input_shapes[0]
        k = minimum(m, n)
        if self.permute_l:
            return [(m, k), (k, n)]
        return [(m,) if self.p_indices else (m, m), (m, k), (k, n)]

    def L_op(self, inputs, outputs, output_grads):
        """For a square matrix (the permutation is piecewise constant): see ``_lu_grad``;
        with ``permute_l`` the gradient of ``P @ L`` reaches ``L`` as ``P.T @ g``."""
        (x,) = inputs
        if self.permute_l or self.p_indices:
            p, l, u = lu(x)
        else:
            p, l, u = outputs
        if self.permute_l:
            gpl, gu = output_grads
            gl = _t(p).dot(gpl)
        else:
            gl, gu = output_grads[1:]
        return [_lu_grad(x, p, l, u, gl, gu)]


def _lu_grad(x, p, l, u, gl, gu):
    """With ``X = L^-1 P.T dA U^-1`` (``L^-1 dL`` its strict lower part, ``dU U^-1`` its
    upper part): ``gA = P L^-T (tril(L.T gL, -1) + triu(gU U.T)) U^-T``; square matrices
    only (a ValueError when the gradient runs on another)."""
    from tensorgraph.tensor.linalg.solvers import solve_triangular

    u = assert_op(u, eq(x.shape[0], x.shape[1]), error="ValueError",
                  msg="lu: the gradient needs a square matrix")
    middle = tril(_t(l).dot(gl), -1) + triu(gu.dot(_t(u)))
    left = solve_triangular(l, middle, trans=1, lower=True, unit_diagonal=True)
    return p.dot(_t(solve_triangular(u, _t(left), lower=False)))


def lu(a, permute_l: bool = False, check_finite: bool = True, p_indices: bool = False,
       overwrite_a: bool = False):
    """scipy's ``lu`` of ``a`` (or of each matrix of a stack), see ``LU``."""
    a = matrix_input(a, 2, "lu")
    return batched(LU(permute_l, p_indices))(a)


class LUFactor(Op):
    """scipy's ``lu_factor``: the packed LU factors and the pivot indices (int32), the input
    of ``lu_solve``. A singular matrix raises ``numpy.linalg.LinAlgError``."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m),(m)"

    def make_node(self, x):
        x = as_matrix(x, "lu_factor", square=True)
        dtype = linalg_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, x.type.shape)(),
                                 TensorType("int32", x.type.shape[:1])()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        check_square("lu_factor", x)
        a = np.asarray(x, dtype=node.outputs[0].type.dtype)
        with warnings.catch_warnings():   # scipy warns of a singular matrix: we raise
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            factors, piv = scipy.linalg.lu_factor(a, check_finite=False)
        if a.size and not np.all(np.diagonal(factors)):
            raise matrix_error("lu_factor", "is singular")
        output_storage[0][0] = factors
        output_storage[1][0] = np.asarray(piv, dtype="int32")

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = input_shapes
        return [shape, shape[:1]]

    def connection_pattern(self, node):
        return [[True, False]]

    def L_op(self, inputs, outputs, output_grads):
        """The packed factors hold L's strict lower part and U: their gradients split the
        same way, then as ``lu``'s (the pivots are piecewise constant)."""
        (x,), g = inputs, output_grads[0]
        p, l, u = lu(x)
        return [_lu_grad(x, p, l, u, tril(g, -1), triu(g))]


def lu_factor(a, *, check_finite: bool = True, overwrite_a: bool = False):
    """``(LU, pivots)`` of ``a`` (or of each matrix of a stack), for ``lu_solve``."""
    a = matrix_input(a, 2, "lu_factor")
    return batched(LUFactor())(a)


class PivotToPermutations(Op):
    """The row order of ``lu_factor``'s pivots (LAPACK's sequence of row swaps): with
    ``inverse`` the rows ``q`` with ``A[q] == L @ U``, without it their inverse
    permutation (int64)."""

    __props__ = ("inverse",)
    gufunc_signature = "(m)->(m)"

    def __init__(self, inverse: bool = True):
        self.inverse = bool(inverse)

    def make_node(self, pivots):
        pivots = as_tensor_variable(pivots)
        if pivots.type.ndim != 1 or not pivots.type.dtype.startswith(("int", "uint")):
            raise TypeError(f"pivot_to_permutation: expected an integer vector of pivots, got "
                            f"{pivots} ({pivots.type})")
        return Apply(self, [pivots], [TensorType("int64", pivots.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (pivots,) = inputs
        rows = np.arange(len(pivots), dtype="int64")
        for i, j in enumerate(pivots):
            rows[i], rows[j] = rows[j], rows[i]
        output_storage[0][0] = rows if self.inverse else np.argsort(rows)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]


def pivot_to_permutation(p, inverse: bool = False):
    """The permutation of ``lu_factor``'s pivots ``p`` (or of each vector of a stack): the
    inverse of the row order ``q`` with ``A[q] == L @ U``, or ``q`` itself with ``inverse``."""
    return batched(PivotToPermutations(inverse))(
        matrix_input(p, 1, "pivot_to_permutation"))


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
        from tensorgraph.tensor.linalg.solvers import solve_triangular  # solvers imports us

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
        gq = gq + x[:, k:].dot(_t(gv))
        m = u.dot(_t(gu)) - _t(gq).dot(q)
        low = tril(m, -1)
        copyltu = low + _t(low) + m * _eye_like(m)
        gx = _t(solve_triangular(u, _t(gq + q.dot(copyltu)), lower=False))
        return [concatenate([gx, q.dot(gv)], axis=1)]


def qr(A, mode: str = "full", overwrite_a: bool = False, pivoting: bool = False,
       lwork=None):
    """scipy's ``qr`` of ``A`` (or of each matrix of a stack), see ``QR``; column pivoting
    is not supported."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported yet")
    A = matrix_input(A, 2, "qr")
    return batched(QR(mode))(A)


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
    v, gv = _t(vh), _t(gvh)
    s2 = sqr(s)
    diff = s2.dimshuffle("x", 0) - s2.dimshuffle(0, "x")          # s_j^2 - s_i^2
    off = 1 - eye(k, dtype=s.dtype)
    f = off / switch(eq(diff, 0), 1, diff) * switch(eq(diff, 0), 0, 1)
    utgu = _t(u).dot(gu)
    vtgv = _t(v).dot(gv)
    sdiag = s * eye(k, dtype=s.dtype)
    inv_s = eye(k, dtype=s.dtype) / switch(eq(s, 0), 1, s)
    core = ((f * (utgu - _t(utgu))).dot(sdiag) + gs * eye(k, dtype=s.dtype)
            + sdiag.dot(f * (vtgv - _t(vtgv))))
    grad = u.dot(core).dot(vh)
    m_eye, n_eye = eye(x.shape[0], dtype=x.dtype), eye(x.shape[1], dtype=x.dtype)
    grad = grad + (m_eye - u.dot(_t(u))).dot(gu).dot(inv_s).dot(vh)
    return grad + u.dot(inv_s).dot(_t(gv)).dot(n_eye - v.dot(vh))


def svd(a, full_matrices: bool = True, compute_uv: bool = True):
    """numpy's ``svd`` of ``a`` (or of each matrix of a stack): ``(U, s, Vh)``, or ``s``
    with ``compute_uv=False``."""
    a = matrix_input(a, 2, "svd")
    return batched(SVD(full_matrices, compute_uv))(a)


class Eig(Op):
    """numpy's ``eig``: eigenvalues and right eigenvectors of a square matrix, complex
    (complex64 for single precision inputs, else complex128). No gradient."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m),(m,m)"

    def make_node(self, x):
        x = as_matrix(x, "eig", square=True)
        dtype = "complex64" if linalg_dtype(x.type.dtype) in ("float32", "complex64") \
            else "complex128"
        m = x.type.shape[0]
        return Apply(self, [x], [TensorType(dtype, (m,))(), TensorType(dtype, (m, m))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("eig", x)
        w, v = np.linalg.eig(x)
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(v, dtype=node.outputs[1].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), = input_shapes
        return [(m,), (m, m)]


def eig(x):
    """Eigenvalues and eigenvectors of ``x`` (or of each matrix of a stack), complex."""
    return batched(Eig())(matrix_input(x, 2, "eig"))


def _uplo(lower, UPLO):
    if UPLO is not None:
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        return UPLO == "L"
    return bool(lower)


class Eigh(Op):
    """numpy's ``eigh``: ascending eigenvalues and orthonormal eigenvectors of a symmetric
    (Hermitian) matrix, read from its lower (or upper) triangle."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m)->(m),(m,m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, x):
        x = as_matrix(x, "eigh", square=True)
        dtype = linalg_dtype(x.type.dtype)
        m = x.type.shape[0]
        return Apply(self, [x], [TensorType(real_dtype(dtype), (m,))(),
                                 TensorType(dtype, (m, m))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("eigh", x)
        a = np.asarray(x, dtype=node.outputs[1].type.dtype)
        w, v = np.linalg.eigh(a, UPLO="L" if self.lower else "U")
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = v

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), = input_shapes
        return [(m,), (m, m)]

    def L_op(self, inputs, outputs, output_grads):
        """``V (diag(gw) + F * (V.T gV)) V.T`` with ``F_ij = 1 / (w_j - w_i)`` off the
        diagonal, folded onto the triangle ``eigh`` reads."""

        w, v = outputs
        gw, gv = output_grads
        n = w.shape[0]
        diff = w.dimshuffle("x", 0) - w.dimshuffle(0, "x")
        f = (1 - eye(n, dtype=w.dtype)) / switch(eq(diff, 0), 1, diff)
        inner = gw * eye(n, dtype=w.dtype) + f * _t(v).dot(gv)
        grad = v.dot(inner).dot(_t(v))
        return [fold_to_triangle(0.5 * (grad + _t(grad)), self.lower)]


class GeneralizedEigh(Op):
    """scipy's ``eigh(a, b)``: ascending ``w`` and ``v`` with ``a @ v == b @ v * w`` and
    ``v.T @ b @ v == I``, for symmetric ``a`` and symmetric positive definite ``b`` (both
    read from their lower, or upper, triangle)."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m),(m,m)->(m),(m,m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, a, b):
        a = as_matrix(a, "eigh", square=True)
        b = as_matrix(b, "eigh", square=True)
        dtype = linalg_dtype(a.type.dtype, b.type.dtype)
        m = a.type.shape[0] if a.type.shape[0] is not None else b.type.shape[0]
        return Apply(self, [a, b], [TensorType(real_dtype(dtype), (m,))(),
                                    TensorType(dtype, (m, m))()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        check_square("eigh", a)
        check_square("eigh", b)
        if a.shape != b.shape:
            raise ValueError(f"eigh: a and b differ in shape: {a.shape} and {b.shape}")
        dtype = node.outputs[1].type.dtype
        try:
            w, v = scipy.linalg.eigh(np.asarray(a, dtype), np.asarray(b, dtype),
                                     lower=self.lower, check_finite=False)
        except np.linalg.LinAlgError:
            raise matrix_error("eigh", "b is not positive definite") from None
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(v, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), _ = input_shapes
        return [(m,), (m, m)]

    def L_op(self, inputs, outputs, output_grads):
        """From ``dw_j = v_j.T (dA - w_j dB) v_j`` and ``dV = V C`` (``C_ij`` =
        ``v_i.T (dA - w_j dB) v_j / (w_j - w_i)`` off the diagonal, ``-v_j.T dB v_j / 2`` on
        it), with ``G = V.T gV`` and ``F_ij = 1 / (w_j - w_i)``:
        ``gA = V (diag(gw) + G * F) V.T`` and
        ``gB = -V (diag(gw * w) + (G * F) w_j + diag(G) / 2) V.T``, folded onto the
        triangles read."""
        w, v = outputs
        gw, gv = output_grads
        n = w.shape[0]
        identity = eye(n, dtype=w.dtype)
        diff = w.dimshuffle("x", 0) - w.dimshuffle(0, "x")
        gf = _t(v).dot(gv) * (1 - identity) / switch(eq(diff, 0), 1, diff)
        g_a = v.dot(gw * identity + gf).dot(_t(v))
        inner = (gw * w) * identity + gf * w.dimshuffle("x", 0) + 0.5 * _t(v).dot(gv) * identity
        g_b = -v.dot(inner).dot(_t(v))
        return [fold_to_triangle(0.5 * (g + _t(g)), self.lower) for g in (g_a, g_b)]


def eigh(a, b=None, lower: bool = True, UPLO=None, driver: str = "evr"):
    """Eigenvalues (ascending) and eigenvectors of the symmetric ``a`` (or of each matrix of
    a stack): ``(w, v)``; with ``b`` the generalized problem ``a v = w b v`` (scipy's).
    ``UPLO`` ('L' / 'U', numpy's spelling) overrides ``lower``."""
    a = matrix_input(a, 2, "eigh")
    if b is not None:
        return batched(GeneralizedEigh(_uplo(lower, UPLO)))(a, matrix_input(b, 2, "eigh"))
    return batched(Eigh(_uplo(lower, UPLO)))(a)


class Eigvalsh(Op):
    """The eigenvalues (ascending) of a symmetric matrix, without the vectors."""

    __props__ = ("lower",)
    gufunc_signature = "(m,m)->(m)"

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def make_node(self, x):
        x = as_matrix(x, "eigvalsh", square=True)
        dtype = real_dtype(linalg_dtype(x.type.dtype))
        return Apply(self, [x], [TensorType(dtype, x.type.shape[:1])()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        check_square("eigvalsh", x)
        w = np.linalg.eigvalsh(x, UPLO="L" if self.lower else "U")
        output_storage[0][0] = np.asarray(w, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:1]]

    def L_op(self, inputs, outputs, output_grads):
        """``V diag(gw) V.T`` with the eigenvectors of ``eigh``, on the triangle read."""
        (x,) = inputs
        _, v = eigh(x, lower=self.lower)
        return [fold_to_triangle((v * output_grads[0]).dot(_t(v)), self.lower)]


def eigvalsh(a, b=None, lower: bool = True):
    """The eigenvalues (ascending) of the symmetric ``a`` (or of each matrix of a stack);
    with ``b`` those of the generalized problem ``a v = w b v``."""
    if b is not None:
        return eigh(a, b, lower=lower)[0]
    return batched(Eigvalsh(lower))(matrix_input(a, 2, "eigvalsh"))
