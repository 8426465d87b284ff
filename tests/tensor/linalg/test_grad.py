"""Gradients of the linalg ops against finite differences (``verify_grad``), on a stack of
matrices (the core op's gradient vectorized by ``Blockwise``) and on a single one."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.gradient import verify_grad
from tensorgraph.tensor import linalg as la
from linalg_cases import values


def _sym(x):
    return (x + x.mT) / 2


def _spd(x):
    """A symmetric positive definite matrix from any square one (differentiable)."""
    return x @ x.mT + 3 * tt.eye(x.shape[-1], dtype=x.dtype)


CASES = {
    "cholesky": (lambda a: la.cholesky(_spd(a)), ["a"]),
    "cholesky upper": (lambda a: la.cholesky(_spd(a), lower=False), ["a"]),
    "solve": (lambda a, b: la.solve(a, b), ["a", "b"]),
    "solve vector": (lambda a, v: la.solve(a, v, b_ndim=1), ["a", "v"]),
    "solve sym": (lambda a, b: la.solve(_spd(a), b, assume_a="sym", lower=True), ["a", "b"]),
    "solve pos raw": (lambda s, b: la.solve(s, b, assume_a="pos"), ["spd", "b"]),
    "solve_triangular": (lambda l, b: la.solve_triangular(l, b, lower=True), ["low", "b"]),
    "solve_triangular trans unit": (
        lambda l, b: la.solve_triangular(l, b, lower=True, trans="T", unit_diagonal=True),
        ["low", "b"]),
    "cho_solve": (lambda s, b: la.cho_solve((la.cholesky(s), True), b), ["spd", "b"]),
    "cho_solve upper raw": (lambda l, b: la.cho_solve((l.mT, False), b), ["low", "b"]),
    "det": (lambda a: la.det(a), ["a"]),
    "slogdet": (lambda a: la.slogdet(a)[1], ["a"]),
    "inv": (lambda a: la.inv(a), ["a"]),
    "pinv": (lambda a: la.pinv(a), ["a"]),
    "eigh": (lambda s: (lambda w, v: w.sum() + (v[..., 0] ** 2 * tt.arange(3)).sum())(
        *la.eigh(_sym(s))), ["spd"]),
    "eigh raw upper": (lambda s: (lambda w, v: w.sum() + (v[..., 0] ** 2 * tt.arange(3)).sum())(
        *la.eigh(s, UPLO="U")), ["spd"]),
    "eigvalsh": (lambda s: la.eigvalsh(_sym(s)), ["spd"]),
    "eigvalsh raw": (lambda s: la.eigvalsh(s), ["spd"]),
    "eigh generalized": (lambda a, s: (lambda w, v: w.sum() + (v[..., 0] ** 2 * tt.arange(3)).sum()
                                       + (v[..., 2] * tt.arange(3)).sum() ** 2)(
        *la.eigh(_sym(a), s)), ["a", "spd"]),
    "eigvalsh generalized upper": (lambda a, s: la.eigvalsh(a, s, lower=False), ["a", "spd"]),
    "cholesky raw": (lambda s: la.cholesky(s), ["spd"]),
    "svd values": (lambda a: la.svd(a, compute_uv=False), ["a"]),
    "svd vectors": (lambda a: (lambda u, s, vh: (u[..., :1] ** 2 * tt.arange(3)[:, None]).sum()
                               + s.sum() + (vh[..., 0, :] ** 2 * tt.arange(3)).sum())(
        *la.svd(a, full_matrices=False)), ["a"]),
    "qr": (lambda a: (lambda q, r: (q ** 2 * tt.arange(3)).sum() + r.sum())(*la.qr(a)), ["a"]),
    "qr economic tall": (lambda b: (lambda q, r: q.sum() + (r ** 2).sum())(
        *la.qr(tt.concatenate([b, b ** 2], axis=-1)[..., :, :2], mode="economic")), ["b"]),
    "qr wide": (lambda b: (lambda q, r: (q ** 2 * tt.arange(2)).sum() + (r * tt.arange(3)).sum())(
        *la.qr(b.mT)), ["b"]),
    "qr r": (lambda a: (la.qr(a, mode="r") ** 2 * tt.arange(3)).sum(), ["a"]),
    "qr r tall": (lambda b: (la.qr(b, mode="r") * tt.arange(2)).sum(), ["b"]),
    "expm": (lambda a: la.expm(a / 4), ["a"]),
    "lu": (lambda a: (lambda p, l, u: (l ** 2 * tt.arange(3)).sum() + (u * tt.arange(3)).sum())(
        *la.lu(a)), ["a"]),
    "lu permute_l": (lambda a: (lambda pl, u: (pl ** 2).sum() + (u ** 2).sum())(
        *la.lu(a, permute_l=True)), ["a"]),
    "lu_factor": (lambda a: (la.lu_factor(a)[0] ** 2 * tt.arange(3)).sum(), ["a"]),
    "lu_solve": (lambda a, b: la.lu_solve(la.lu_factor(a), b), ["a", "b"]),
    "lu_solve trans": (lambda a, v: la.lu_solve(la.lu_factor(a), v, trans=True, b_ndim=1),
                       ["a", "v"]),
    "solve tridiagonal": (lambda a, b: la.solve(a, b, assume_a="tridiagonal"), ["a", "b"]),
    "norm nuc": (lambda a: la.norm(a, "nuc", axis=(-2, -1)), ["a"]),
    "norm 2": (lambda a: la.norm(a, 2, axis=(-2, -1)), ["a"]),
    "norm fro": (lambda a: la.norm(a, axis=(-2, -1)), ["a"]),
    "norm vector 3": (lambda v: la.norm(v, 3, axis=-1), ["v"]),
    "block_diag": (lambda a, b: la.block_diag(a, b), ["a", "b"]),
}


# every op on a stack (nb=1); a few on a single matrix too (nb=0: no Blockwise batch)
RUNS = [(name, 1) for name in sorted(CASES)] + [
    (name, 0) for name in ("cholesky", "solve", "det", "svd values", "eigh", "expm")]


@pytest.mark.parametrize("name, nb", RUNS)
def test_gradient_matches_finite_differences(name, nb):
    fn, names = CASES[name]
    data = values("float64", batch=(2,) * nb, seed=3)
    verify_grad(fn, [data[k] for k in names], mode="FAST_COMPILE",
                rng=np.random.default_rng(0))


def test_float32_gradient_of_a_stack():
    data = values("float32", seed=4)
    verify_grad(lambda a, b: la.solve(a, b) + la.det(a)[:, None, None], [data["a"], data["b"]],
                mode="FAST_COMPILE", rng=np.random.default_rng(0))


def test_lstsq_gradient_of_its_solution():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    verify_grad(lambda a, b: la.lstsq(a, b)[0], [a, b], mode="FAST_COMPILE", rng=rng)
    verify_grad(lambda a, b: la.lstsq(a, b, b_ndim=1)[0], [np.stack([a, a[::-1]]), b.T],
                mode="FAST_COMPILE", rng=rng)          # a stack of systems


def test_tensorinv_and_tensorsolve_gradients():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 3, 6)) + np.eye(6).reshape(6, 6)[:, :].reshape(2, 3, 6) * 3
    verify_grad(lambda t: la.tensorinv(t, ind=2), [a], mode="FAST_COMPILE", rng=rng)
    b = rng.standard_normal((2, 3))
    verify_grad(la.tensorsolve, [a.reshape(2, 3, 2, 3), b], mode="FAST_COMPILE", rng=rng)
    moved = np.moveaxis(a.reshape(2, 3, 2, 3), 3, 0)     # axes=(0,) moves it back to the end
    verify_grad(lambda t, u: la.tensorsolve(t, u, axes=(0,)), [moved, b],
                mode="FAST_COMPILE", rng=rng)


def test_kron_and_lyapunov_gradients():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    verify_grad(la.kron, [a, b], mode="FAST_COMPILE", rng=rng)
    verify_grad(la.kron, [a[None], b], mode="FAST_COMPILE", rng=rng)    # 3-d: a graph
    m, q = rng.standard_normal((2, 2)) / 3, rng.standard_normal((2, 2))
    verify_grad(la.solve_discrete_lyapunov, [m, q], mode="FAST_COMPILE", rng=rng)


@pytest.mark.parametrize("build, error, words", [
    # PyTensor's Assert (its tests expect the AssertionError)
    (lambda a: la.qr(a)[0].sum(), AssertionError,
     r"qr\(mode='full'\): the gradient needs a square or wide"),
    (lambda a: la.svd(a)[0].sum(), ValueError,
     r"svd\(full_matrices=True\): the gradient of U and Vh"),
])
def test_gradients_without_a_formula_for_the_shape_say_so(build, error, words):
    import tensorgraph as tg

    a = tt.dmatrix("a")
    f = tg.function([a], tg.grad(build(a), a), mode="FAST_COMPILE")
    with pytest.raises(error, match=words):
        f(np.ones((4, 2)))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("mode", ["economic", "r"])
def test_qr_with_pivoting_differentiates_the_qr_of_the_permuted_columns(shape, mode):
    """The column order is piecewise constant: the gradient is the one of ``A[:, p]``'s QR
    (a non-pivoted QR), put back in A's column order."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal(shape)

    def cost(x):
        outs = la.qr(x, mode=mode, pivoting=True)
        return (outs[0] ** 2).sum() + outs[0].sum() if mode == "r" else \
            outs[0].sum() + (outs[1] * outs[1]).sum() + outs[1].sum()

    verify_grad(cost, [a], mode="FAST_COMPILE", rng=rng)


def test_qr_raw_has_no_gradient():
    import tensorgraph as tg

    a = tt.dmatrix("a")
    with pytest.raises(NotImplementedError, match="mode='raw'"):
        tg.grad(la.qr(a, mode="raw")[0].sum(), a)


def test_ops_without_a_gradient_name_themselves():
    import tensorgraph as tg
    from tensorgraph.gradient import NullTypeGradError

    a = tt.dmatrix("a")
    for cost, name in [(la.schur(a)[0].sum(), "Schur"), (la.qz(a, a)[0].sum(), "QZ")]:
        with pytest.raises(NullTypeGradError, match=name):
            tg.grad(cost, a)
    m = np.random.default_rng(9).standard_normal((2, 2, 2))
    verify_grad(lambda x, y: la.solve_sylvester(x, y, x + y), [m, m[::-1] / 3 + 2 * np.eye(2)],
                mode="FAST_COMPILE", rng=np.random.default_rng(0))


def test_solve_discrete_are_gradient_single_and_batched():
    """Q and R built symmetric (the op refuses others, as scipy does), so the finite
    differences stay on the equation's domain."""
    def dare(a, b, pq, pr):
        def sym(p):
            return p @ p.mT + tt.eye(p.shape[-1])
        return la.solve_discrete_are(a, b, sym(pq), sym(pr))

    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 3)) / 2, rng.normal(size=(3, 2))
    verify_grad(dare, [a, b, rng.normal(size=(3, 3)), rng.normal(size=(2, 2))], rng=rng)
    verify_grad(dare, [np.stack([a, 0.9 * a]), np.stack([b, b]), rng.normal(size=(2, 3, 3)),
                       rng.normal(size=(2, 2, 2))], rng=rng)
