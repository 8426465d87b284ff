"""The linear algebra core ops (``tensorgraph.tensor.linalg``) for an array library (JAX,
PyTorch), once.

Each op computes on one matrix, as its ``perform`` does (``Blockwise``,
``tensorgraph.link.array_blockwise``, maps it over a stack). What the op's props mean (a
triangle read, ``b_ndim``, ``trans``, the dtype LAPACK computes in, which matrices are an
error) is written here once; the few LAPACK-like primitives each library spells its own way
(``jax.lax.linalg.cholesky`` vs ``torch.linalg.cholesky_ex``, 0- vs 1-based pivots) come from
a ``Linalg`` adapter that each back end's ``linalg`` module subclasses.

A matrix ``perform`` refuses (not positive definite, singular) cannot raise in the middle of a
trace: the op registers a run-time check (``ArrayLibrary.runtime_check``), and the call
raises the same ``LinAlgError`` after the program ran. ``cholesky(on_error='nan')`` gives a
NaN factor for that matrix, as ``perform`` does. Schur and QZ decompositions and
``solve_discrete_are`` have no implementation in either library's CPU linear algebra and are
refused unless an adapter gives them. This module imports neither library.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.tensor.linalg import core as la_core
from tensorgraph.tensor.linalg.decomposition.cholesky import Cholesky
from tensorgraph.tensor.linalg.decomposition.eigen import Eig, Eigh, Eigvalsh, GeneralizedEigh
from tensorgraph.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from tensorgraph.tensor.linalg.decomposition.qr import QR
from tensorgraph.tensor.linalg.decomposition.schur import Schur
from tensorgraph.tensor.linalg.decomposition.svd import SVD
from tensorgraph.tensor.linalg.inverse import MatrixInverse, MatrixPinv, TensorInv
from tensorgraph.tensor.linalg.products import BlockDiagonal, Expm, KroneckerProduct
from tensorgraph.tensor.linalg.solvers import (CholeskySolve, LUSolve, Lstsq, Solve,
                                               SolveTriangular, TensorSolve)
from tensorgraph.tensor.linalg.summary import Det, SLogDet


class Linalg:
    """What an array library's linear algebra does its own way. ``lib`` is the back end's
    ``ArrayLibrary`` (``tensorgraph.link.array_elemwise``). Every primitive takes and returns
    arrays of one matrix; right-hand sides are matrices (m, k). The primitives both libraries
    spell alike have their body here."""

    #: the primitives the library lacks (``"eig"``, ``"schur"``): their ops are refused
    missing: tuple = ()

    def __init__(self, lib):
        self.lib = lib

    @property
    def xp(self):
        return self.lib.xp

    def cholesky(self, a):
        """(the lower factor read from ``a``'s lower triangle, whether it exists)."""
        raise NotImplementedError

    def lu_factor(self, a):
        """(LAPACK's packed LU factors, its pivots as 0-based int32 row swaps)."""
        raise NotImplementedError

    def lu_solve(self, lu, pivots, b, trans: bool):
        raise NotImplementedError

    def lu(self, a):
        """scipy's ``lu``: (P, L, U) with ``a = P @ L @ U``, ``a`` of any shape."""
        raise NotImplementedError

    def solve_triangular(self, a, b, lower: bool, trans: int, unit_diagonal: bool):
        raise NotImplementedError

    def eigh(self, a, lower: bool):
        """(eigenvalues ascending, eigenvectors) of the symmetric matrix in ``a``'s
        ``lower`` (or upper) triangle."""
        raise NotImplementedError

    def qr(self, a, complete: bool):
        return self.xp.linalg.qr(a, mode="complete" if complete else "reduced")

    def svd(self, a, full_matrices: bool, compute_uv: bool):
        raise NotImplementedError

    def eig(self, a):
        raise NotImplementedError

    def schur(self, a, output: str):
        raise NotImplementedError

    def qr_pivoting(self, a, mode: str):
        """scipy's ``qr(a, mode=mode, pivoting=True)`` for mode 'full', 'economic', 'r': (Q, R,
        the 0-based column order) or (R, order)."""
        raise NotImplementedError

    def require(self, primitive: str, op, what: str | None = None) -> None:
        """Decline ``op``'s node (NotImplementedError) when the library lacks ``primitive``;
        ``what`` names the op's variant the library lacks (default: the op's class)."""
        if primitive in self.missing:
            raise NotImplementedError(f"{what or type(op).__name__} has no {self.lib.name} "
                                      f"implementation (the library has no {primitive})")

    def expm(self, a):
        raise NotImplementedError

    def pinv(self, a, hermitian: bool):
        """numpy's ``pinv``: singular values under 1e-15 times the largest are dropped."""
        raise NotImplementedError

    def det(self, a):
        return self.xp.linalg.det(a)

    def slogdet(self, a):
        return self.xp.linalg.slogdet(a)

    def kron(self, a, b):
        return self.xp.kron(a, b)

    def block_diag(self, *matrices):
        raise NotImplementedError

    # -- built from the primitives ---------------------------------------------------------

    def diagonal(self, a):
        return self.xp.diagonal(a, 0, -2, -1)

    def eye(self, n: int, dtype: str):
        return self.lib.array(np.eye(n, dtype=dtype))

    def check(self, bad, what: str, problem: str) -> None:
        """Fail the call with ``perform``'s LinAlgError where ``bad``."""
        self.lib.runtime_check(bad, np.linalg.LinAlgError, str(la_core.matrix_error(what, problem)))

    def symmetric(self, a, lower: bool):
        """The symmetric matrix held in ``a``'s lower (or upper) triangle."""
        xp = self.xp
        if lower:
            return xp.tril(a, 0) + xp.tril(a, -1).mT.conj()
        return xp.triu(a, 0) + xp.triu(a, 1).mT.conj()

    def factor(self, a, what: str):
        """LU factors of a square matrix, failing the call (``what``: the op) when singular,
        as LAPACK's ``getrf`` reports it (a zero pivot)."""
        lu_, pivots = self.lu_factor(a)
        self.check(self.xp.any(self.diagonal(lu_) == 0), what, "is singular")
        return lu_, pivots

    def as_columns(self, b, b_ndim: int):
        return b[:, None] if b_ndim == 1 else b

    def from_columns(self, x, b_ndim: int):
        return x[:, 0] if b_ndim == 1 else x


# ----------------------------------------------------------------------------------------------
# Op implementations: factories ``fn(op, node)`` of a ``Linalg``


def _arrays(la: Linalg, values, dtype):
    return [la.lib.array(v, dtype) for v in values]


def _direct(la: Linalg, compute):
    """An op that is one primitive: ``compute(op, *arrays)``, its inputs cast to its output
    dtype."""
    def implement(op, node):
        dtype = node.outputs[0].dtype
        return lambda *values: compute(op, *_arrays(la, values, dtype))
    return implement


def _cholesky(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            factor, ok = la.cholesky(a if op.lower else a.mT.conj())
            if op.on_error == "raise":
                la.check(~ok, "cholesky", "is not positive definite")
            factor = la.xp.where(ok, factor, la.lib.array(np.asarray(np.nan, dtype)))
            return factor if op.lower else factor.mT.conj()
        return compute
    return implement


def _solve_with_lower_factor(la: Linalg, factor, b):
    """``A x = b`` for ``A = L L^H`` given ``L``: two triangular solves (L, then L^H)."""
    y = la.solve_triangular(factor, b, True, 0, False)
    return la.solve_triangular(factor, y, True, 2, False)


def _solve(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(a, b):
            a, b = _arrays(la, [a, b], dtype)
            b = la.as_columns(b, op.b_ndim)
            if op.assume_a == "pos":
                factor, ok = la.cholesky(a if op.lower else a.mT.conj())
                la.check(~ok, "solve", "is not positive definite")
                x = _solve_with_lower_factor(la, factor, b)
            else:
                if op.assume_a in ("sym", "her"):
                    a = la.symmetric(a, op.lower)
                elif op.assume_a == "tridiagonal":
                    a = la.xp.triu(la.xp.tril(a, 1), -1)
                lu_, pivots = la.factor(a, "solve")
                x = la.lu_solve(lu_, pivots, b, False)
            return la.from_columns(x, op.b_ndim)
        return compute
    return implement


def _solve_triangular(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(a, b):
            a, b = _arrays(la, [a, b], dtype)
            if not op.unit_diagonal:
                la.check(la.xp.any(la.diagonal(a) == 0), "solve_triangular",
                         "is singular (a zero on its diagonal)")
            x = la.solve_triangular(a, la.as_columns(b, op.b_ndim), op.lower, op.trans,
                                    op.unit_diagonal)
            return la.from_columns(x, op.b_ndim)
        return compute
    return implement


def _cho_solve(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(c, b):
            c, b = _arrays(la, [c, b], dtype)
            b = la.as_columns(b, op.b_ndim)
            factor = c if op.lower else c.mT.conj()  # the lower factor L, A = L L^H
            return la.from_columns(_solve_with_lower_factor(la, factor, b), op.b_ndim)
        return compute
    return implement


def _lu_solve(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(lu_, pivots, b):
            lu_, b = _arrays(la, [lu_, b], dtype)
            x = la.lu_solve(lu_, la.lib.array(pivots, "int32"), la.as_columns(b, op.b_ndim),
                            op.trans)
            return la.from_columns(x, op.b_ndim)
        return compute
    return implement


def _lu_factor(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            lu_, pivots = la.factor(a, "lu_factor")
            return lu_, la.lib.array(pivots, "int32")
        return compute
    return implement


def _lu(la: Linalg):
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]

        def compute(x):
            (a,) = _arrays(la, [x], dtypes[-1])
            p, lower, upper = la.lu(a)
            if op.permute_l:
                return p @ lower, upper
            if op.p_indices:
                p = la.xp.argmax(p, -1)
            return la.lib.array(p, dtypes[0]), lower, upper
        return compute
    return implement


def _pivot_to_permutation(la: Linalg):
    def implement(op, node):
        def compute(pivots):
            xp = la.xp
            m = pivots.shape[0]
            index = la.lib.array(np.arange(m, dtype="int64"))
            rows = index
            for i in range(m):  # LAPACK's row swaps, one after the other
                at_j = index == pivots[i]  # a mask: no indexing by a traced value
                row_i, row_j = rows[i], xp.sum(xp.where(at_j, rows, 0))
                rows = xp.where(index == i, row_j, xp.where(at_j, row_i, rows))
            return rows if op.inverse else la.lib.array(xp.argsort(rows, -1), "int64")
        return compute
    return implement


def _qr(la: Linalg):
    """scipy's ``qr``; ``pivoting=True`` needs the library's ``geqp3`` (``Linalg.missing``
    says when it lacks it: the node is declined, naming the variant). ``mode='raw'`` is
    declined in both libraries: JAX has no ``geqrf`` in its API and ``torch.geqrf`` does not
    trace (no meta kernel for ``make_fx``)."""
    def implement(op, node):
        dtype = node.outputs[0].dtype
        if op.mode == "raw":
            raise NotImplementedError(f"qr(mode='raw') has no {la.lib.name} implementation "
                                      "(no geqrf the back end can compile)")
        if op.pivoting:
            la.require("geqp3", op, "qr(pivoting=True)")

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            if op.pivoting:
                *factors, order = la.qr_pivoting(a, op.mode)
                return (*factors, la.lib.array(order, "int32"))
            q, r = la.qr(a, op.mode != "economic")
            return r if op.mode == "r" else (q, r)
        return compute
    return implement


def _svd(la: Linalg):
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]
        dtype = la_core.linalg_dtype(node.inputs[0].dtype)

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            outs = la.svd(a, op.full_matrices, op.compute_uv)
            if not op.compute_uv:
                return la.lib.array(outs, dtypes[0])
            return tuple(la.lib.array(v, d) for v, d in zip(outs, dtypes))
        return compute
    return implement


def _eig(la: Linalg):
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]
        dtype = la_core.linalg_dtype(node.inputs[0].dtype)
        la.require("eig", op)

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            return tuple(la.lib.array(v, d) for v, d in zip(la.eig(a), dtypes))
        return compute
    return implement


def _eigh(la: Linalg):
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]

        def compute(x):
            (a,) = _arrays(la, [x], dtypes[-1])
            w, v = la.eigh(a, op.lower)
            return la.lib.array(w, dtypes[0]), v
        return compute
    return implement


def _eigvalsh(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(x):
            (a,) = _arrays(la, [x], la_core.linalg_dtype(node.inputs[0].dtype))
            return la.lib.array(la.eigh(a, op.lower)[0], dtype)
        return compute
    return implement


def _generalized_eigh(la: Linalg):
    """scipy's ``eigh(a, b)``: with ``b = L L^H``, the eigenpairs of ``L^-1 a L^-H``, the
    vectors mapped back by ``L^-H`` (so that ``v^H b v = I``, scipy's normalization)."""
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]

        def compute(a, b):
            a, b = _arrays(la, [a, b], dtypes[-1])
            factor, ok = la.cholesky(b if op.lower else b.mT.conj())
            la.check(~ok, "eigh", "b is not positive definite")
            full = la.symmetric(a, op.lower)
            left = la.solve_triangular(factor, full, True, 0, False)
            c = la.solve_triangular(factor, left.mT.conj(), True, 0, False)
            w, y = la.eigh(c, True)
            return la.lib.array(w, dtypes[0]), la.solve_triangular(factor, y, True, 2, False)
        return compute
    return implement


def _schur(la: Linalg):
    def implement(op, node):
        if op.sort is not None:
            raise NotImplementedError(f"schur with sort={op.sort!r} has no {la.lib.name} "
                                      "implementation")
        la.require("schur", op)
        dtype = node.outputs[0].dtype
        work = la_core.linalg_dtype(node.inputs[0].dtype)

        def compute(x):
            (a,) = _arrays(la, [x], work)
            return tuple(la.lib.array(v, dtype) for v in la.schur(a, op.output))
        return compute
    return implement


def _inverse(la: Linalg):
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            lu_, pivots = la.factor(a, "inv")
            return la.lu_solve(lu_, pivots, la.eye(a.shape[0], dtype), False)
        return compute
    return implement


def _tensor_inverse(la: Linalg):
    """numpy's ``tensorinv``: the inverse of ``a`` read as a square matrix."""
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(x):
            (a,) = _arrays(la, [x], dtype)
            front, back = tuple(a.shape[:op.ind]), tuple(a.shape[op.ind:])
            matrix = la.xp.reshape(a, (int(np.prod(front)), -1))
            lu_, pivots = la.factor(matrix, "tensorinv")
            inv = la.lu_solve(lu_, pivots, la.eye(matrix.shape[0], dtype), False)
            return la.xp.reshape(inv, back + front)
        return compute
    return implement


def _tensor_solve(la: Linalg):
    """numpy's ``tensorsolve``: ``op.axes`` moved to the end, ``a`` read as a square matrix."""
    def implement(op, node):
        dtype = node.outputs[0].dtype

        def compute(a, b):
            a, b = _arrays(la, [a, b], dtype)
            a = la.lib.transpose(a, tuple(op._order(a.ndim)))
            shape = tuple(a.shape[b.ndim:])
            matrix = la.xp.reshape(a, (-1, int(np.prod(shape))))
            lu_, pivots = la.factor(matrix, "tensorsolve")
            x = la.lu_solve(lu_, pivots, la.xp.reshape(b, (-1, 1)), False)
            return la.xp.reshape(x, shape)
        return compute
    return implement


def _slogdet(la: Linalg):
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]

        def compute(x):
            sign, logabs = la.slogdet(la.lib.array(x, dtypes[0]))
            return la.lib.array(sign, dtypes[0]), la.lib.array(logabs, dtypes[1])
        return compute
    return implement


def _lstsq(la: Linalg):
    """numpy's ``lstsq`` through the SVD (its ``gelsd`` is one too): singular values under
    ``rcond`` times the largest are dropped (``rcond < 0``: machine epsilon times the larger
    size). Residuals have a size known only from the rank in numpy (none when rank-deficient);
    here their size is fixed when tracing, so a rank-deficient tall matrix fails the call."""
    def implement(op, node):
        dtypes = [o.dtype for o in node.outputs]
        dtype = dtypes[0]
        b_ndim = node.inputs[1].ndim

        def compute(a, b, rcond):
            a, b = _arrays(la, [a, b], dtype)
            xp = la.xp
            m, n = a.shape
            u, s, vh = la.svd(a, False, True)
            rcond = la.lib.array(rcond, dtype)
            eps = la.lib.array(np.asarray(np.finfo(dtype).eps * max(m, n), dtype))
            cut = xp.where(rcond < 0, eps, rcond) * (xp.max(s) if s.shape[0] else 0)
            keep = s > cut
            inverse = xp.where(keep, 1 / xp.where(keep, s, la.lib.array(np.ones((), dtype))), 0)
            columns = la.as_columns(b, b_ndim)
            x = vh.mT.conj() @ (inverse[:, None] * (u.mT.conj() @ columns))
            rank = la.lib.array(xp.sum(la.lib.array(keep, "int32")), "int32")
            if m > n:
                la.lib.runtime_check(rank < n, ValueError,
                                     f"lstsq: the matrix is rank deficient; numpy gives no "
                                     f"residuals then, a size {la.lib.name} must know when "
                                     "tracing")
                residuals = xp.sum(xp.abs(columns - a @ x) ** 2, 0)
            else:
                residuals = la.lib.array(np.zeros(0, dtype))
            return (la.from_columns(x, b_ndim), la.lib.array(residuals, dtype), rank,
                    la.lib.array(s, dtypes[3]))
        return compute
    return implement


def registrations(la: Linalg) -> dict:
    """Op class -> implementation, for a back end's ``linalg`` module to register. QZ and
    ``solve_discrete_are`` are left out: refused with the usual error."""
    return {Cholesky: _cholesky(la), Solve: _solve(la), SolveTriangular: _solve_triangular(la),
            CholeskySolve: _cho_solve(la), LUSolve: _lu_solve(la), LUFactor: _lu_factor(la),
            LU: _lu(la), PivotToPermutations: _pivot_to_permutation(la), QR: _qr(la),
            SVD: _svd(la), Eig: _eig(la), Eigh: _eigh(la), Eigvalsh: _eigvalsh(la),
            GeneralizedEigh: _generalized_eigh(la), Schur: _schur(la),
            MatrixInverse: _inverse(la), TensorInv: _tensor_inverse(la),
            TensorSolve: _tensor_solve(la), SLogDet: _slogdet(la), Lstsq: _lstsq(la),
            MatrixPinv: _direct(la, lambda op, a: la.pinv(a, op.hermitian)),
            Det: _direct(la, lambda op, a: la.det(a)),
            Expm: _direct(la, lambda op, a: la.expm(a)),
            KroneckerProduct: _direct(la, lambda op, a, b: la.kron(a, b)),
            BlockDiagonal: _direct(la, lambda op, *matrices: la.block_diag(*matrices))}


def register_all(register, la: Linalg) -> None:
    """Register every implementation of ``registrations(la)`` with a back end's
    ``register``."""
    for op_class, implementation in registrations(la).items():
        register(op_class)(implementation)
