"""Linear solvers (PyTensor's ``pytensor.tensor.linalg.solvers``): ``solve``,
``solve_triangular``, ``cho_solve``, ``lu_solve``, ``lstsq``, ``tensorsolve`` and the
Lyapunov equations.

The per-system ops take ``b`` as a vector (``b_ndim=1``) or a matrix of right-hand sides
(``b_ndim=2``, the default when ``b`` has two or more dimensions, as PyTensor): a stack of
matrices and a stack of right-hand sides are solved item by item through ``Blockwise``.
A singular matrix raises ``numpy.linalg.LinAlgError`` naming the op (and, in a batch, the
item). Gradients are graphs of the same solvers.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.gradient import disconnected_type, grad_not_implemented
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.blockwise import Blockwise
from tensorgraph.tensor.creation import eye, ones_like, tril, triu
from tensorgraph.tensor.diagonal import diagonal
from tensorgraph.tensor.linalg.core import (
    as_matrix, batched, batched_graph, check_square, fold_to_triangle, linalg_dtype,
    matrix_error, matrix_input,
)
from tensorgraph.tensor.linalg.decomposition import pivot_to_permutation
from tensorgraph.tensor.linalg.products import kron
from tensorgraph.tensor.reduction import prod
from tensorgraph.tensor.shape import expand_dims, reshape
from tensorgraph.tensor.type import TensorType

__all__ = ["SolveBase", "Solve", "solve", "SolveTriangular", "solve_triangular",
           "CholeskySolve", "cho_solve", "LUSolve", "lu_solve", "Lstsq", "lstsq",
           "TensorSolve", "tensorsolve", "solve_continuous_lyapunov", "solve_discrete_lyapunov",
           "solve_sylvester", "SolveDiscreteARE", "solve_discrete_are"]

_ASSUME = {"gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "her",
           "hermitian": "her", "pos": "pos", "positive definite": "pos",
           "tridiagonal": "tridiagonal"}


def _default_b_ndim(b, b_ndim):
    if b_ndim is None:
        return 1 if b.type.ndim == 1 else 2
    if b_ndim not in (1, 2):
        raise ValueError(f"b_ndim must be 1 (vectors) or 2 (matrices), got {b_ndim!r}")
    return b_ndim


def _outer(u, v):
    """``u v.T`` for matrices, ``outer(u, v)`` for vectors (core variables)."""
    if u.type.ndim == 1:
        return u.dimshuffle(0, "x") * v.dimshuffle("x", 0)
    return u.dot(v.T)


class SolveBase(Op):
    """A solve of ``A x = b`` for one system: the checks and shapes every solver shares."""

    __props__: tuple = ("b_ndim",)
    what = "solve"

    def __init__(self, b_ndim: int = 2):
        self.b_ndim = int(b_ndim)

    @property
    def gufunc_signature(self):
        """``A`` (m, m) and ``b`` (m) or (m, n); ``lu_solve`` has the pivots (m) between."""
        b = "(m)" if self.b_ndim == 1 else "(m,n)"
        return f"(m,m),{b}->{b}"

    def _nodes_inputs(self, a, b):
        a = as_matrix(a, self.what, square=True)
        b = as_tensor_variable(b)
        if b.type.ndim != self.b_ndim:
            raise TypeError(f"{self.what}: expected b with {self.b_ndim} dimension(s) "
                            f"(b_ndim={self.b_ndim}), got {b} ({b.type})")
        return a, b

    def _output(self, a, b):
        dtype = linalg_dtype(a.type.dtype, b.type.dtype)
        return TensorType(dtype, (a.type.shape[1],) + b.type.shape[1:])()

    def make_node(self, a, b):
        a, b = self._nodes_inputs(a, b)
        return Apply(self, [a, b], [self._output(a, b)])

    def _check(self, a, b):
        check_square(self.what, a)
        if b.shape[0] != a.shape[0]:
            raise ValueError(f"{self.what}: b has {b.shape[0]} rows but the matrix is "
                             f"{a.shape[0]} x {a.shape[1]} (shapes {a.shape} and {b.shape})")

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape = input_shapes[0], input_shapes[-1]
        return [(a_shape[1],) + tuple(b_shape[1:])]


class Solve(SolveBase):
    """scipy's ``solve``: ``x`` with ``A @ x == b``; ``assume_a`` picks the solver ('gen',
    'sym', 'her', 'pos', 'tridiagonal'), ``lower`` the triangle a symmetric ``A`` is read
    from."""

    __props__ = ("assume_a", "lower", "b_ndim")

    def __init__(self, assume_a: str = "gen", lower: bool = False, b_ndim: int = 2):
        if assume_a not in _ASSUME:
            raise ValueError(f"solve: Invalid assume_a: {assume_a}. It must be one of "
                             f"{sorted(set(_ASSUME.values()))} (or their long names)")
        super().__init__(b_ndim)
        self.assume_a = _ASSUME[assume_a]
        self.lower = bool(lower)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        self._check(a, b)
        dtype = node.outputs[0].type.dtype
        try:
            x = scipy.linalg.solve(np.asarray(a, dtype), np.asarray(b, dtype),
                                   assume_a=self.assume_a, lower=self.lower,
                                   check_finite=False)
        except np.linalg.LinAlgError:
            problem = "is not positive definite" if self.assume_a == "pos" else "is singular"
            raise matrix_error("solve", problem) from None
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        """``gb = A^-T gx``, ``gA = -gb x.T``; a symmetric ``A`` is read from one triangle,
        so the other's share is folded into it."""
        a, b = inputs
        (x,), (gx,) = outputs, output_grads
        if self.assume_a == "gen" or self.assume_a == "tridiagonal":
            gb = solve(a.T, gx, assume_a=self.assume_a, b_ndim=self.b_ndim)
        else:
            gb = solve(a, gx, assume_a=self.assume_a, lower=self.lower, b_ndim=self.b_ndim)
        ga = -_outer(gb, x)
        if self.assume_a in ("sym", "her", "pos"):
            ga = fold_to_triangle(ga, self.lower)
        elif self.assume_a == "tridiagonal":
            ga = ga * _band(ga)
        return [ga, gb]


def _band(g):
    """1 on the three central diagonals, 0 elsewhere (what a tridiagonal solve reads)."""

    return triu(tril(ones_like(g), 1), -1)


def solve(a, b, *, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, assume_a: str = "gen", transposed: bool = False,
          b_ndim=None):
    """``x`` with ``a @ x == b`` (scipy's ``solve``), for one system or a stack of them;
    ``transposed`` solves ``a.T @ x == b``. ``assume_a`` 'lower triangular' / 'upper
    triangular' is ``solve_triangular``, 'diagonal' a division by the diagonal (as
    PyTensor); the others choose ``Solve``'s LAPACK driver. ``overwrite_*`` and
    ``check_finite`` are accepted for PyTensor's signature."""
    a = matrix_input(a, 2, "solve")
    b = matrix_input(b, 1, "solve")
    b_ndim = _default_b_ndim(b, b_ndim)
    kind = assume_a.lower() if isinstance(assume_a, str) else assume_a
    if kind in ("lower triangular", "upper triangular"):
        return solve_triangular(a, b, trans=int(bool(transposed)), lower=kind.startswith("lower"),
                                b_ndim=b_ndim)
    if kind == "diagonal":    # b divided by the diagonal, row by row: no factorization
        d = diagonal(a, 0, -2, -1)
        return b / (d if b_ndim == 1 else expand_dims(d, -1))
    if transposed:
        a = a.mT if a.type.ndim > 2 else a.T
    return batched(Solve(kind, lower, b_ndim))(a, b)


_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


class SolveTriangular(SolveBase):
    """scipy's ``solve_triangular``: ``x`` with ``op(A) @ x == b`` for triangular ``A``
    (only its ``lower`` or upper triangle is read; ``unit_diagonal``: its diagonal is taken
    as ones); ``trans`` 0 / 'N', 1 / 'T', 2 / 'C' chooses ``op``."""

    __props__ = ("trans", "lower", "unit_diagonal", "b_ndim")
    what = "solve_triangular"

    def __init__(self, trans=0, lower: bool = False, unit_diagonal: bool = False,
                 b_ndim: int = 2):
        if trans not in _TRANS:
            raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                             f"{trans!r}")
        super().__init__(b_ndim)
        self.trans = _TRANS[trans]
        self.lower = bool(lower)
        self.unit_diagonal = bool(unit_diagonal)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        self._check(a, b)
        dtype = node.outputs[0].type.dtype
        try:
            x = scipy.linalg.solve_triangular(
                np.asarray(a, dtype), np.asarray(b, dtype), trans=self.trans, lower=self.lower,
                unit_diagonal=self.unit_diagonal, check_finite=False)
        except np.linalg.LinAlgError:
            raise matrix_error("solve_triangular", "is singular (a zero on its diagonal)") \
                from None
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        """``gb = op(A)^-T gx``; ``gA = -gb x.T`` (or its transpose when ``op`` transposes),
        kept to the triangle that is read."""

        a, b = inputs
        (x,), (gx,) = outputs, output_grads
        gb = solve_triangular(a, gx, trans=0 if self.trans else 1, lower=self.lower,
                              unit_diagonal=self.unit_diagonal, b_ndim=self.b_ndim)
        ga = -(_outer(x, gb) if self.trans else _outer(gb, x))
        k = 1 if self.unit_diagonal else 0
        ga = tril(ga, -k) if self.lower else triu(ga, k)
        return [ga, gb]


def solve_triangular(a, b, *, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     check_finite: bool = True, b_ndim=None):
    """scipy's ``solve_triangular`` for one system or a stack of them."""
    a = matrix_input(a, 2, "solve_triangular")
    b = matrix_input(b, 1, "solve_triangular")
    b_ndim = _default_b_ndim(b, b_ndim)
    return batched(SolveTriangular(trans, lower, unit_diagonal, b_ndim))(a, b)


class CholeskySolve(SolveBase):
    """scipy's ``cho_solve``: ``x`` with ``A @ x == b`` given ``c``, the Cholesky factor of
    ``A`` (lower or upper, as ``lower`` says; its other triangle is not read)."""

    __props__ = ("lower", "b_ndim")
    what = "cho_solve"

    def __init__(self, lower: bool = True, b_ndim: int = 2):
        super().__init__(b_ndim)
        self.lower = bool(lower)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        c, b = inputs
        self._check(c, b)
        dtype = node.outputs[0].type.dtype
        x = scipy.linalg.cho_solve((np.asarray(c, dtype), self.lower), np.asarray(b, dtype),
                                   check_finite=False)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        """``gb = A^-1 gx``; the gradient of ``A = L L.T`` is ``-gb x.T``, brought to the
        factor: ``(gA + gA.T) L`` (lower) or ``U (gA + gA.T)`` (upper), on its triangle."""

        c, b = inputs
        (x,), (gx,) = outputs, output_grads
        gb = cho_solve((c, self.lower), gx, b_ndim=self.b_ndim)
        ga = -_outer(gb, x)
        sym = ga + ga.T
        gc = tril(sym.dot(c)) if self.lower else triu(c.dot(sym))
        return [gc, gb]


def cho_solve(c_and_lower, b, *, b_ndim=None):
    """``x`` with ``A @ x == b`` from ``(c, lower)``, ``c`` the Cholesky factor of ``A``
    (scipy's ``cho_solve``), for one system or a stack of them."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("cho_solve: expected (c, lower) as its first argument, got "
                        f"{c_and_lower!r}") from None
    c = matrix_input(c, 2, "cho_solve")
    b = matrix_input(b, 1, "cho_solve")
    b_ndim = _default_b_ndim(b, b_ndim)
    return batched(CholeskySolve(lower, b_ndim))(c, b)


class LUSolve(SolveBase):
    """scipy's ``lu_solve``: ``x`` with ``A @ x == b`` (``A.T`` with ``trans``) from
    ``lu_factor``'s packed factors and pivots."""

    __props__ = ("trans", "b_ndim")
    what = "lu_solve"

    @property
    def gufunc_signature(self):
        b = "(m)" if self.b_ndim == 1 else "(m,n)"
        return f"(m,m),(m),{b}->{b}"

    def __init__(self, trans: bool = False, b_ndim: int = 2):
        super().__init__(b_ndim)
        self.trans = bool(trans)

    def make_node(self, lu, piv, b):
        lu, b = self._nodes_inputs(lu, b)
        piv = as_tensor_variable(piv)
        if piv.type.ndim != 1 or not piv.type.dtype.startswith(("int", "uint")):
            raise TypeError(f"lu_solve: expected the pivots as an integer vector, got {piv} "
                            f"({piv.type})")
        return Apply(self, [lu, piv, b], [self._output(lu, b)])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        lu, piv, b = inputs
        self._check(lu, b)
        dtype = node.outputs[0].type.dtype
        x = scipy.linalg.lu_solve((np.asarray(lu, dtype), piv), np.asarray(b, dtype),
                                  trans=int(self.trans), check_finite=False)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def connection_pattern(self, node):
        return [[True], [False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        """``gb = A^-T gx`` and ``gA = -gb x.T`` (transposed with ``trans``) for the matrix
        ``A = P L U`` the factors stand for, brought to them: with ``G = P.T gA`` (rows in
        pivot order), L's strict lower part gets ``tril(G U.T, -1)``, U ``triu(L.T G)``."""

        lu, piv, b = inputs
        (x,), (gx,) = outputs, output_grads
        gb = lu_solve((lu, piv), gx, trans=not self.trans, b_ndim=self.b_ndim)
        ga = -(_outer(x, gb) if self.trans else _outer(gb, x))
        rows = pivot_to_permutation(piv, inverse=True)
        g = ga[rows]
        lower = tril(lu, -1) + eye(lu.shape[0], dtype=lu.dtype)
        upper = triu(lu)
        glu = tril(g.dot(upper.T), -1) + triu(lower.T.dot(g))
        return [glu, disconnected_type(), gb]


def lu_solve(LU_and_pivots, b, trans: bool = False, b_ndim=None, check_finite: bool = True,
             overwrite_b: bool = False):
    """scipy's ``lu_solve`` from ``(LU, pivots)`` (``lu_factor``'s outputs), for one system
    or a stack of them."""
    lu, piv = LU_and_pivots
    lu = matrix_input(lu, 2, "lu_solve")
    b = matrix_input(b, 1, "lu_solve")
    b_ndim = _default_b_ndim(b, b_ndim)
    return batched(LUSolve(trans, b_ndim))(lu, piv, b)


class Lstsq(Op):
    """numpy's ``lstsq`` for one system (PyTensor's op; ``lstsq`` batches it): the
    least-squares solution, the residuals, the rank and the singular values. ``rcond`` below zero means numpy's default cut-off. The
    gradient flows through the solution (for a matrix of full column rank); the residuals,
    rank and singular values are outputs without a gradient."""

    __props__ = ()

    def make_node(self, a, b, rcond):
        a = as_matrix(a, "lstsq")
        b = as_tensor_variable(b)
        if b.type.ndim not in (1, 2):
            raise TypeError(f"lstsq: expected b as a vector or a matrix, got {b} ({b.type})")
        rcond = as_tensor_variable(rcond)
        if rcond.type.ndim != 0:
            raise TypeError(f"lstsq: expected rcond as a scalar, got {rcond} ({rcond.type})")
        dtype = linalg_dtype(a.type.dtype, b.type.dtype)
        x = TensorType(dtype, (a.type.shape[1],) + b.type.shape[1:])()
        return Apply(self, [a, b, rcond], [x, TensorType(dtype, (None,))(),
                                           TensorType("int32", ())(), TensorType(dtype, (None,))()])

    def perform(self, node, inputs, output_storage):
        a, b, rcond = inputs
        dtype = node.outputs[0].type.dtype
        if a.shape[0] != b.shape[0]:
            raise ValueError(f"lstsq: b has {b.shape[0]} rows but a has {a.shape[0]} "
                             f"(shapes {a.shape} and {b.shape})")
        cut = None if rcond < 0 else float(rcond)
        x, res, rank, s = np.linalg.lstsq(np.asarray(a, dtype), np.asarray(b, dtype), rcond=cut)
        for cell, value, var in zip(output_storage, (x, res, rank, s), node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def connection_pattern(self, node):
        return [[True, False, False, False], [True, False, False, False],
                [False, False, False, False]]

    def L_op(self, inputs, outputs, output_grads):
        """For ``x = (A.T A)^-1 A.T b``: with ``y = (A.T A)^-1 gx`` and the residual
        ``r = b - A x``, ``gb = A y`` and ``gA = r y.T - (A y) x.T``."""

        a, b, _ = inputs
        x, gx = outputs[0], output_grads[0]
        y = solve(a.T.dot(a), gx, assume_a="pos", b_ndim=gx.type.ndim)
        ay = a.dot(y)
        r = b - a.dot(x)
        return [_outer(r, y) - _outer(ay, x), ay, disconnected_type()]

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape, _ = input_shapes
        return [(a_shape[1],) + tuple(b_shape[1:]), None, (), None]


def lstsq(a, b, rcond=None, b_ndim=None):
    """numpy's ``lstsq(a, b, rcond)``: ``[x, residuals, rank, s]``; a stack of systems is
    solved one by one (``b_ndim`` as for ``solve``), which needs every item to give residuals
    of one size (all of full column rank, or none)."""
    a = matrix_input(a, 2, "lstsq")
    b = matrix_input(b, 1, "lstsq")
    rcond = -1.0 if rcond is None else rcond
    b_ndim = _default_b_ndim(b, b_ndim)
    if a.type.ndim == 2 and b.type.ndim == b_ndim:
        return Lstsq()(a, b, rcond)
    return Blockwise(Lstsq(), core_ndims=(2, b_ndim, 0))(a, b, rcond)


class TensorSolve(Op):
    """numpy's ``tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) == b``, ``a`` seen as
    a square matrix whose rows are its first ``b.ndim`` axes (after ``axes`` are moved to the
    end)."""

    __props__ = ("axes",)

    def __init__(self, axes=None):
        self.axes = None if axes is None else tuple(int(ax) for ax in np.atleast_1d(axes))

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.type.ndim < b.type.ndim:
            raise ValueError(f"tensorsolve: a has fewer dimensions ({a.type.ndim}) than b "
                             f"({b.type.ndim})")
        shape = tuple(a.type.shape[d] for d in self._order(a.type.ndim))[b.type.ndim:]
        dtype = linalg_dtype(a.type.dtype, b.type.dtype)
        return Apply(self, [a, b], [TensorType(dtype, shape)()])

    def _order(self, ndim):
        """``a``'s axes, those of ``self.axes`` moved to the end."""
        if self.axes is None:
            return list(range(ndim))
        moved = [ax % ndim for ax in self.axes]
        return [d for d in range(ndim) if d not in moved] + moved

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        dtype = node.outputs[0].type.dtype
        try:
            x = np.linalg.tensorsolve(np.asarray(a, dtype), np.asarray(b, dtype), self.axes)
        except np.linalg.LinAlgError:
            raise matrix_error("tensorsolve", "(as a square matrix) is singular") from None
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape = input_shapes
        return [tuple(a_shape[d] for d in self._order(len(a_shape)))[len(b_shape):]]

    def L_op(self, inputs, outputs, output_grads):
        """``solve``'s gradient on the matrix forms (``A`` of (b.size, x.size)), reshaped
        back and the moved axes put back in place."""
        a, b = inputs
        (x,), (gx,) = outputs, output_grads
        order = self._order(a.type.ndim)
        moved = a.dimshuffle(*order)
        square = reshape(moved, (prod(b.shape) if b.type.ndim else 1, -1))
        gb = solve(square.T, reshape(gx, (-1,)), b_ndim=1)
        ga = -_outer(gb, reshape(x, (-1,)))
        ga = reshape(ga, moved.shape).dimshuffle(*np.argsort(order))
        return [ga, reshape(gb, b.shape)]


def tensorsolve(a, b, axes=None):
    """numpy's ``tensorsolve(a, b, axes)`` (see ``TensorSolve``)."""
    return TensorSolve(axes)(a, b)


def _kron_solve(system, q):
    """``X`` with ``system @ vec(X) == vec(Q)`` (row-major ``vec``)."""
    return reshape(solve(system, reshape(q, (-1,)), b_ndim=1), q.shape)


def _continuous_lyapunov(a, q):
    n_eye = eye(a.shape[0], dtype=a.dtype)
    return _kron_solve(kron(a, n_eye) + kron(n_eye, a.conj()), q)


def _discrete_lyapunov(a, q):
    return _kron_solve(eye(a.shape[0] * a.shape[0], dtype=a.dtype) - kron(a, a.conj()), q)


def _sylvester(a, b, q):
    system = kron(a, eye(b.shape[0], dtype=b.dtype)) + kron(eye(a.shape[0], dtype=a.dtype), b.T)
    return _kron_solve(system, q)


def solve_continuous_lyapunov(A, Q):
    """``X`` with ``A X + X A.H == Q`` (scipy's ``solve_continuous_lyapunov``), for one
    system or a stack of them, solved as one linear system of size n**2 (for small matrices;
    differentiable)."""
    return batched_graph(_continuous_lyapunov, [A, Q], "solve_continuous_lyapunov")


def solve_discrete_lyapunov(A, Q, method: str = "bilinear"):
    """``X`` with ``A X A.H - X + Q == 0`` (scipy's ``solve_discrete_lyapunov``), for one
    system or a stack of them, solved as one linear system of size n**2 whatever ``method``
    names (same values; differentiable)."""
    if method not in ("direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: method must be 'direct' or 'bilinear', "
                         f"got {method!r}")
    return batched_graph(_discrete_lyapunov, [A, Q], "solve_discrete_lyapunov")


def solve_sylvester(A, B, Q):
    """``X`` with ``A X + X B == Q`` (scipy's ``solve_sylvester``), for one system or a stack
    of them, solved as one linear system of size m*n (for small matrices; differentiable)."""
    return batched_graph(_sylvester, [A, B, Q], "solve_sylvester")


class SolveDiscreteARE(Op):
    """scipy's ``solve_discrete_are``: the stabilizing ``X`` of
    ``A.T X A - X - (A.T X B) (R + B.T X B)^-1 (B.T X A) + Q = 0``."""

    __props__ = ()
    gufunc_signature = "(m,m),(m,n),(m,m),(n,n)->(m,m)"

    def make_node(self, a, b, q, r):
        what = "solve_discrete_are"
        a, q, r = (as_matrix(v, what, square=True) for v in (a, q, r))
        b = as_matrix(b, what)
        dtype = linalg_dtype(a.type.dtype, b.type.dtype, q.type.dtype, r.type.dtype)
        return Apply(self, [a, b, q, r], [TensorType(dtype, a.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        dtype = node.outputs[0].type.dtype
        try:
            x = scipy.linalg.solve_discrete_are(*(np.asarray(v, dtype) for v in inputs))
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise np.linalg.LinAlgError(f"solve_discrete_are: no stabilizing solution "
                                        f"({exc})") from None
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        """By the implicit function theorem: with the gain ``K = (R + B.T X B)^-1 B.T X A``
        and the closed loop ``Ac = A - B K``, a change of the inputs moves ``X`` by the
        solution of ``dX = Ac.T dX Ac + E`` (``E`` linear in dA, dB, dQ, dR), so the
        pullback solves the adjoint Stein equation ``S = Ac S Ac.T + G`` once: then
        ``gQ = S``, ``gA = 2 X Ac S``, ``gB = -2 X Ac S K.T``, ``gR = K S K.T`` (``G``, and so
        ``S``, symmetrized: the solution is symmetric)."""
        a, b, _, r = inputs
        (x,), (g,) = outputs, output_grads
        gain = solve(r + b.T.dot(x).dot(b), b.T.dot(x).dot(a))
        closed = a - b.dot(gain)
        s = solve_discrete_lyapunov(closed, 0.5 * (g + g.T))
        x_ac_s = x.dot(closed).dot(s)
        return [2 * x_ac_s, -2 * x_ac_s.dot(gain.T), s, gain.dot(s).dot(gain.T)]


def solve_discrete_are(A, B, Q, R):
    """The stabilizing solution of the discrete algebraic Riccati equation (scipy's
    ``solve_discrete_are``), for one system or a stack of them."""
    what = "solve_discrete_are"
    return batched(SolveDiscreteARE())(*(matrix_input(v, 2, what) for v in (A, B, Q, R)))
