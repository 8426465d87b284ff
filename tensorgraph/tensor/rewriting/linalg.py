"""Linear algebra rewrites: cheaper or more stable forms of ``tensorgraph.tensor.linalg``
graphs (the ops are ``Blockwise`` nodes, or their core op once unbatched; the rewrites look
at the per-matrix op either way).

* ``local_unbatched_linalg`` (canonicalize): a linalg ``Blockwise`` whose inputs have no
  batch dimensions -> its core op (one matrix: no loop, and the graph prints ``Cholesky``);
  the later rewrites build unbatched nodes that way themselves (``_unbatched``).
* ``local_inv_inv`` (canonicalize): ``inv(inv(A))`` -> ``A``.
* ``local_kron_of_identities`` (canonicalize): ``kron(eye(n), eye(m))`` -> ``eye(n * m)``.
* ``local_inv_dot_to_solve`` (stabilize): ``inv(A) @ b`` -> ``solve(A, b)`` (no inverse formed,
  when nothing else reads it).
* ``local_log_det_to_slogdet`` (stabilize): ``log(det(A))`` -> ``slogdet``'s log (no overflow;
  NaN for a negative determinant, as the log of one).
* ``local_det_of_triangular`` (specialize): the determinant of a Cholesky factor, of LU's
  factors or of QR's R is the product of its diagonal.
* ``local_cholesky_of_diagonal`` (specialize): ``cholesky(eye * x)`` (``x`` a scalar or a
  vector) -> ``eye * sqrt(x)``, NaN as ``cholesky(on_error='nan')`` gives when an entry is
  not positive (``on_error='raise'`` is left alone, to raise).
* ``local_solve_with_factor`` (specialize): ``solve(L, b)`` with ``L`` triangular (a Cholesky
  factor, LU's factors, QR's R) -> ``solve_triangular``; ``solve(L @ L.T, b)`` with ``L`` a
  Cholesky factor -> ``cho_solve((L, True), b)``.
* ``local_diag_of_dot`` (specialize): ``diag(A @ B)`` -> ``sum(A * B.T, axis=1)`` (the
  diagonal without the product).

Each replacement is recorded as a step like every other rewrite.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import (
    register_canonicalize,
    register_specialize,
    register_stabilize,
)
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.blockwise import Blockwise
from tensorgraph.tensor.creation import Eye, eye, ones_like
from tensorgraph.tensor.diagonal import ExtractDiag, diagonal
from tensorgraph.tensor.dot import Dot, MatMul
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.linalg import decomposition as dec
from tensorgraph.tensor.linalg import solvers
from tensorgraph.tensor.linalg.inverse import MatrixInverse, MatrixPinv
from tensorgraph.tensor.linalg.products import BlockDiagonal, Expm, KroneckerProduct
from tensorgraph.tensor.linalg.summary import Det, SLogDet, slogdet
from tensorgraph.tensor.reduction import all as tall
from tensorgraph.tensor.reduction import prod
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.rewriting.utils import constant_value, fits, op_is, scalar_op_of

#: the per-matrix ops of tensorgraph.tensor.linalg (what local_unbatched_linalg unwraps)
LINALG_OPS = (dec.Cholesky, dec.LU, dec.LUFactor, dec.PivotToPermutations, dec.QR, dec.SVD,
              dec.Eig, dec.Eigh, dec.Eigvalsh, dec.GeneralizedEigh, MatrixInverse, MatrixPinv, Det, SLogDet, Expm,
              BlockDiagonal, solvers.SolveBase, solvers.SolveDiscreteARE, dec.Schur, dec.QZ)


def _core_op(node):
    """A linalg node's per-matrix op: the core op of its Blockwise, or the op itself once
    ``local_unbatched_linalg`` took the Blockwise away."""
    return node.op.core_op if op_is(node, Blockwise) else node.op


def _core(var, *classes):
    """The per-matrix op of the node computing ``var`` if it is one of ``classes``."""
    node = var.owner
    if node is None:
        return None
    op = _core_op(node)
    return op if isinstance(op, classes) else None


def _as(old, new):
    """``new`` standing in for ``old``: cast to its dtype, checked against its type."""
    if new is not None and new.type.dtype != old.type.dtype:
        new = tm.cast(new, old.type.dtype)
    return fits(old, new)


def _single_client(fgraph, var) -> bool:
    return len(fgraph.clients.get(var, ())) == 1


def _core_node(node):
    """The core op's node on ``node``'s inputs when ``node`` is a linalg Blockwise with no
    batch dimensions, else None."""
    if not op_is(node, Blockwise) or not isinstance(node.op.core_op, LINALG_OPS):
        return None
    for var, nd in zip(node.inputs, node.op.core_ndims):
        if nd is not None and var.type.ndim != nd:
            return None
    return node.op.core_op.make_node(*node.inputs)


def _unbatched(var):
    """``var`` (made by a linalg function) computed by the core op when nothing is batched."""
    core = None if var.owner is None else _core_node(var.owner)
    return var if core is None else core.outputs[var.owner.outputs.index(var)]


@register_canonicalize
@node_rewriter([Blockwise])
def local_unbatched_linalg(fgraph, node):
    """A linalg Blockwise with no batch dimensions -> its core op (no loop to run)."""
    core = _core_node(node)
    return None if core is None else core.outputs


@register_canonicalize
@node_rewriter([Blockwise, MatrixInverse])
def local_inv_inv(fgraph, node):
    """inv(inv(A)) -> A."""
    if not isinstance(_core_op(node), MatrixInverse):
        return None
    (inner,) = node.inputs
    if _core(inner, MatrixInverse) is None:
        return None
    new = _as(node.outputs[0], inner.owner.inputs[0])
    return None if new is None else [new]


def _is_identity(var) -> bool:
    """Whether ``var`` is ``eye(n)`` (diagonal 0, one size) or a constant identity matrix."""
    if isinstance(var, Constant):
        data = np.asarray(var.data)
        return data.ndim == 2 and data.shape[0] == data.shape[1] and \
            np.array_equal(data, np.eye(data.shape[0]))
    node = var.owner
    if node is None or not op_is(node, Eye):
        return False
    n, m, k = node.inputs
    same = n is m or constant_value(n) is not None and constant_value(n) == constant_value(m)
    return same and constant_value(k) == 0


@register_canonicalize
@node_rewriter([KroneckerProduct])
def local_kron_of_identities(fgraph, node):
    """kron(eye(n), eye(m)) -> eye(n * m)."""
    a, b = node.inputs
    if not (_is_identity(a) and _is_identity(b)):
        return None
    out = node.outputs[0]
    new = eye(tm.mul(a.shape[0], b.shape[0]), dtype=out.type.dtype)
    return [_as(out, new)]


@register_stabilize
@node_rewriter([Dot, MatMul])
def local_inv_dot_to_solve(fgraph, node):
    """inv(A) @ b -> solve(A, b), and b @ inv(A) -> solve(A.T, b.T).T, when the inverse is
    read by nothing else (the second is the first half of ``y @ inv(K) @ y`` as written)."""
    left, right = node.inputs
    if _core(left, MatrixInverse) is not None and _single_client(fgraph, left):
        new = _solve_from_the_left(node, left.owner.inputs[0], right)
    elif _core(right, MatrixInverse) is not None and _single_client(fgraph, right):
        new = _solve_from_the_right(right.owner.inputs[0], left)
    else:
        return None
    replacement = None if new is None else _as(node.outputs[0], new)
    return None if replacement is None else [replacement]


def _solve_from_the_left(node, a, b):
    """inv(a) @ b as a solve, or None."""
    if b.type.ndim == 1 or (b.type.ndim == 2 and a.type.ndim == 2):
        return _unbatched(solvers.solve(a, b, b_ndim=b.type.ndim))
    if b.type.ndim >= 2 and op_is(node, MatMul):
        return solvers.solve(a, b, b_ndim=2)
    return None


def _solve_from_the_right(a, b):
    """b @ inv(a) for one matrix ``a``: x with x @ a == b, that is a.T @ x.T == b.T."""
    if a.type.ndim != 2:
        return None
    if b.type.ndim == 1:
        return _unbatched(solvers.solve(a, b, transposed=True, b_ndim=1))
    if b.type.ndim == 2:
        return _unbatched(solvers.solve(a, b.T, transposed=True, b_ndim=2)).T
    return None


@register_stabilize
@node_rewriter([Elemwise])
def local_log_det_to_slogdet(fgraph, node):
    """log(det(A)) -> the log of |det A| from slogdet, NaN where det A < 0."""
    if not isinstance(scalar_op_of(node), psm.Log):
        return None
    (d,) = node.inputs
    if _core(d, Det) is None:
        return None
    sign, logabs = _unbatched(slogdet(d.owner.inputs[0])[0]).owner.outputs
    new = tm.switch(tm.lt(sign, 0), np.nan, logabs)
    return [_as(node.outputs[0], new)]


def _triangular(var):
    """``(lower, unit_diagonal)`` when ``var`` is a triangular factor made by a
    factorization (Cholesky, LU's L and U, QR's R), else None."""
    node = var.owner
    core = _core(var, dec.Cholesky, dec.LU, dec.QR)
    if core is None:
        return None
    k = node.outputs.index(var)
    if isinstance(core, dec.Cholesky):
        return core.lower, False
    if isinstance(core, dec.LU):
        if var is node.outputs[-1]:
            return False, False                      # U
        return (True, True) if not core.permute_l and k == 1 else None   # unit lower L
    r_index = {"r": 0, "raw": 2}.get(core.mode, 1)  # QR's R (pivoting adds p after it)
    return (False, False) if k == r_index else None


@register_specialize
@node_rewriter([Blockwise, Det])
def local_det_of_triangular(fgraph, node):
    """det(T) for a triangular factor T -> the product of its diagonal."""
    if not isinstance(_core_op(node), Det):
        return None
    (t,) = node.inputs
    kind = _triangular(t)
    if kind is None:
        return None
    out = node.outputs[0]
    if kind[1]:                       # a unit diagonal: the determinant is 1

        return [_as(out, ones_like(out))]
    return [_as(out, prod(diagonal(t, 0, -2, -1), axis=-1))]


def _eye_times(var):
    """``x`` when ``var`` is ``eye(n) * x`` with ``x`` a scalar or a vector (the diagonal
    matrix with ``x`` on its diagonal), else None."""
    if not isinstance(scalar_op_of(var), ps.Mul) or len(var.owner.inputs) != 2:
        return None
    for e, x in (var.owner.inputs, reversed(var.owner.inputs)):
        if _is_identity(e):
            if x.owner is not None and op_is(x.owner, DimShuffle) and \
                    all(d == "x" for d in x.owner.op.new_order[:x.type.ndim - 1]):
                base = x.owner.inputs[0]    # a scalar or a vector broadcast to a matrix
                if base.type.ndim <= 1:
                    return base
            if x.type.ndim == 0:
                return x
    return None


@register_specialize
@node_rewriter([Blockwise, dec.Cholesky])
def local_cholesky_of_diagonal(fgraph, node):
    """cholesky(eye * x) -> eye * sqrt(x) (all NaN unless every x > 0, as on_error='nan')."""
    core = _core_op(node)
    if not isinstance(core, dec.Cholesky) or core.on_error != "nan":
        return None
    (d,) = node.inputs
    x = _eye_times(d)
    if x is None or d.type.ndim != 2:
        return None
    e = next(v for v in d.owner.inputs if _is_identity(v))
    out = node.outputs[0]
    value = tm.mul(e, tm.sqrt(x))
    new = tm.switch(tall(tm.gt(x, 0)), value, np.nan)
    return [_as(out, new)]


def _transpose_of(var, other) -> bool:
    node = var.owner
    return node is not None and op_is(node, DimShuffle) and \
        node.inputs[0] is other and tuple(node.op.new_order) == (1, 0)


@register_specialize
@node_rewriter([Blockwise, solvers.Solve])
def local_solve_with_factor(fgraph, node):
    """solve(T, b) with T a triangular factor -> solve_triangular; solve(L @ L.T, b) with L
    a lower Cholesky factor -> cho_solve((L, True), b)."""
    core = _core_op(node)
    if type(core) is not solvers.Solve:
        return None
    a, b = node.inputs
    out = node.outputs[0]
    kind = _triangular(a)
    if kind is not None:
        lower, unit = kind
        new = solvers.solve_triangular(a, b, lower=lower, unit_diagonal=unit,
                                       b_ndim=core.b_ndim)
        return [_as(out, _unbatched(new))]
    if a.owner is not None and op_is(a.owner, Dot):
        left, right = a.owner.inputs
        chol = _core(left, dec.Cholesky)
        if chol is not None and chol.lower and _transpose_of(right, left):
            new = solvers.cho_solve((left, True), b, b_ndim=core.b_ndim)
            return [_as(out, _unbatched(new))]
    return None


@register_specialize
@node_rewriter([ExtractDiag])
def local_diag_of_dot(fgraph, node):
    """diag(A @ B) -> sum(A * B.T, axis=1) (over the first min(m, n) rows)."""
    op = node.op
    (p,) = node.inputs
    if op.offset != 0 or (op.axis1, op.axis2) != (0, 1) or p.owner is None or \
            not op_is(p.owner, Dot):
        return None
    a, b = p.owner.inputs
    if a.type.ndim != 2 or b.type.ndim != 2:
        return None
    k = tm.minimum(a.shape[0], b.shape[1])
    new = tsum(a[:k] * b.T[:k], axis=1)
    return [_as(node.outputs[0], new)]
