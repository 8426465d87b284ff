"""The linalg rewrites: each fires (recorded as a step of the rewrite history), the op it
removes is gone, and the values are the ones numpy gives for the unrewritten expression."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.tensor import linalg as la

REWRITTEN = Mode("py", "fast_run")    # rewrites of FAST_RUN, no C to compile


def _ops(f):
    return [type(getattr(n.op, "core_op", n.op)).__name__ for n in f.maker.fgraph.toposort()]


def _check(inputs, output, values, expected, rewrite, gone=(), present=()):
    f = tg.function(inputs, output, mode=REWRITTEN)
    steps = {s.name for s in f.maker.fgraph.rewrite_history}
    assert rewrite in steps, steps
    ops = _ops(f)
    assert not set(gone) & set(ops), ops
    assert set(present) <= set(ops), ops
    np.testing.assert_allclose(f(*values), expected, rtol=1e-9, atol=1e-12)
    return f


RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = A @ A.T
B = RNG.standard_normal((3, 2))


def test_inv_inv_is_the_matrix():
    a = tt.dmatrix("a")
    _check([a], la.inv(la.inv(a)) * 2, [A], 2 * A, "local_inv_inv", gone=["MatrixInverse"])


@pytest.mark.parametrize("stack", [False, True])
def test_inv_times_b_is_a_solve(stack):
    a, b = (tt.dtensor3("a"), tt.dtensor3("b")) if stack else (tt.dmatrix("a"), tt.dmatrix("b"))
    av, bv = (np.stack([A, SPD]), np.stack([B, B])) if stack else (A, B)
    _check([a, b], la.inv(a) @ b, [av, bv], np.linalg.solve(av, bv),
           "local_inv_dot_to_solve", gone=["MatrixInverse"], present=["Solve"])


@pytest.mark.parametrize("b_kind", ["vector", "matrix"])
def test_b_times_inv_is_a_transposed_solve(b_kind):
    """``y @ inv(K) @ y`` (a quadratic form as written in textbooks) groups as
    ``(y @ inv(K)) @ y``: the inverse on the right of the product is a solve too."""
    a = tt.dmatrix("a")
    b = tt.dvector("b") if b_kind == "vector" else tt.dmatrix("b")
    bv = B[:, 0] if b_kind == "vector" else B.T
    _check([a, b], b @ la.inv(a), [A, bv], bv @ np.linalg.inv(A),
           "local_inv_dot_to_solve", gone=["MatrixInverse"], present=["Solve"])
    _check([a, b], b @ la.inv(a) @ b.T, [A, bv], bv @ np.linalg.inv(A) @ bv.T,
           "local_inv_dot_to_solve", gone=["MatrixInverse"], present=["Solve"])


def test_log_det_is_slogdet():
    a = tt.dmatrix("a")
    f = _check([a], tt.log(la.det(a)), [SPD * 1e3], np.log(np.linalg.det(SPD * 1e3)),
               "local_log_det_to_slogdet", gone=["Det"], present=["SLogDet"])
    with np.errstate(invalid="ignore"):
        assert np.isnan(f(-SPD)) and np.isnan(np.log(np.linalg.det(-SPD)))
    big = np.eye(3) * 1e200      # det overflows to inf, its log does not
    np.testing.assert_allclose(f(big), 3 * np.log(1e200))


@pytest.mark.parametrize("factor", ["cholesky", "lu_u", "lu_l", "qr_r"])
def test_det_of_a_triangular_factor_is_the_product_of_its_diagonal(factor):
    a = tt.dmatrix("a")
    t = {"cholesky": lambda: la.cholesky(a), "lu_u": lambda: la.lu(a)[2],
         "lu_l": lambda: la.lu(a)[1], "qr_r": lambda: la.qr(a)[1]}[factor]()
    import scipy.linalg

    ref = {"cholesky": lambda: np.linalg.cholesky(SPD), "lu_u": lambda: scipy.linalg.lu(SPD)[2],
           "lu_l": lambda: scipy.linalg.lu(SPD)[1], "qr_r": lambda: scipy.linalg.qr(SPD)[1]}
    _check([a], la.det(t), [SPD], np.linalg.det(ref[factor]()), "local_det_of_triangular",
           gone=["Det"])


@pytest.mark.parametrize("shape", [(), (3,)])
def test_cholesky_of_a_diagonal_is_the_square_root(shape):
    x = tt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    value = np.arange(1.0, 4.0)[: 3 if shape else 1].reshape(shape)
    f = _check([x], la.cholesky(tt.eye(3) * x), [value], np.linalg.cholesky(np.eye(3) * value),
               "local_cholesky_of_diagonal", gone=["Cholesky"])
    assert np.isnan(f(-value)).all()       # as cholesky(on_error='nan')


def test_cholesky_that_raises_is_not_rewritten():
    x = tt.dvector("x")
    f = tg.function([x], la.cholesky(tt.eye(3) * x, on_error="raise"), mode=REWRITTEN)
    assert "Cholesky" in _ops(f)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        f(-np.ones(3))


@pytest.mark.parametrize("lower", [True, False])
def test_solve_with_a_cholesky_factor_is_a_triangular_solve(lower):
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    c = np.linalg.cholesky(SPD) if lower else np.linalg.cholesky(SPD).T
    f = _check([a, b], la.solve(la.cholesky(a, lower=lower), b), [SPD, B],
               np.linalg.solve(c, B), "local_solve_with_factor", gone=["Solve"],
               present=["SolveTriangular"])
    assert f.maker.fgraph.outputs[0].owner.op.lower == lower    # unbatched: the core op


def test_solve_with_lu_unit_lower_factor():
    import scipy.linalg

    a, b = tt.dmatrix("a"), tt.dvector("b")
    _check([a, b], la.solve(la.lu(a)[1], b), [A, B[:, 0]],
           np.linalg.solve(scipy.linalg.lu(A)[1], B[:, 0]), "local_solve_with_factor",
           gone=["Solve"], present=["SolveTriangular"])


def test_solve_with_the_product_of_a_cholesky_factor_is_cho_solve():
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    L = la.cholesky(a)
    _check([a, b], la.solve(L @ L.T, b), [SPD, B], np.linalg.solve(SPD, B),
           "local_solve_with_factor", gone=["Solve"], present=["CholeskySolve"])


@pytest.mark.parametrize("shapes", [((3, 4), (4, 3)), ((2, 4), (4, 3)), ((3, 4), (4, 2))])
def test_diag_of_a_product_does_not_form_the_product(shapes):
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    av, bv = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    _check([a, b], tt.diag(a @ b), [av, bv], np.diag(av @ bv), "local_diag_of_dot",
           gone=["Dot", "Dot22", "Gemm"])


def test_kron_of_identities_is_an_identity():
    n, m = tt.iscalar("n"), tt.iscalar("m")
    f = _check([n, m], la.kron(tt.eye(n), tt.eye(m)) * 2, [2, 3], 2 * np.eye(6),
               "local_kron_of_identities", gone=["KroneckerProduct"])
    assert f(1, 4).shape == (4, 4)


def test_an_unbatched_linalg_node_runs_its_core_op_without_blockwise():
    a, s = tt.dmatrix("a"), tt.dtensor3("s")
    f = tg.function([a, s], [la.inv(a), la.det(s)], mode=REWRITTEN)
    steps = {st.name for st in f.maker.fgraph.rewrite_history}
    assert "local_unbatched_linalg" in steps
    kinds = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    assert "MatrixInverse" in kinds and "Blockwise" in kinds   # the stack keeps its Blockwise
    got = f(A, np.stack([A, SPD]))
    np.testing.assert_allclose(got[0], np.linalg.inv(A))
    np.testing.assert_allclose(got[1], np.linalg.det(np.stack([A, SPD])))
