"""Every linalg function against numpy / scipy: one compiled function per mode, dtype and
batching computes them all (few compiles), for a single matrix and for a stack."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor import linalg as la
from linalg_cases import per_item, values


def _cases(s):
    """(name, symbolic result, reference of the numpy values) for the symbolic inputs ``s``."""
    lu_f, piv = la.lu_factor(s["a"])
    q, r = la.qr(s["a"])
    qe, re_ = la.qr(s["a"], mode="economic")
    u, sv, vh = la.svd(s["a"])
    w, v = la.eigh(s["spd"])
    sign, logabs = la.slogdet(s["a"])
    yield "cholesky", la.cholesky(s["spd"]), per_item(np.linalg.cholesky)
    yield "cholesky upper", la.cholesky(s["spd"], lower=False), \
        per_item(lambda x: np.linalg.cholesky(x).T)
    yield "det", la.det(s["a"]), per_item(np.linalg.det)
    yield "slogdet sign", sign, per_item(lambda x: np.linalg.slogdet(x)[0])
    yield "slogdet log", logabs, per_item(lambda x: np.linalg.slogdet(x)[1])
    yield "inv", la.inv(s["a"]), per_item(np.linalg.inv)
    yield "pinv", la.pinv(s["a"]), per_item(np.linalg.pinv)
    yield "solve", la.solve(s["a"], s["b"]), per_item(np.linalg.solve)
    yield "solve vector", la.solve(s["a"], s["v"], b_ndim=1), per_item(np.linalg.solve)
    yield "solve pos", la.solve(s["spd"], s["b"], assume_a="pos"), per_item(np.linalg.solve)
    yield "solve transposed", la.solve(s["a"], s["b"], transposed=True), \
        per_item(lambda a, b: np.linalg.solve(a.T, b))
    yield "solve lower triangular", la.solve(s["low"], s["b"], assume_a="lower triangular"), \
        per_item(lambda a, b: np.linalg.solve(np.tril(a), b))
    yield "solve diagonal", la.solve(s["a"], s["v"], assume_a="Diagonal", b_ndim=1), \
        per_item(lambda a, v: v / np.diag(a))
    yield "solve_triangular", la.solve_triangular(s["low"], s["b"], lower=True), \
        per_item(lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True))
    yield "solve_triangular trans", la.solve_triangular(s["low"], s["v"], lower=True, trans=1,
                                                        b_ndim=1), \
        per_item(lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True, trans=1))
    yield "cho_solve", la.cho_solve((la.cholesky(s["spd"]), True), s["b"]), \
        per_item(np.linalg.solve)
    yield "lu_solve", la.lu_solve((lu_f, piv), s["b"]), per_item(np.linalg.solve)
    rows = la.pivot_to_permutation(piv, inverse=True)
    lower = tt.tril(lu_f, -1) + tt.eye(3, dtype=lu_f.dtype)
    yield "pivot_to_permutation", tt.take_along_axis(s["a"], rows[..., None], axis=-2), \
        per_item(lambda x: scipy.linalg.lu(x, permute_l=False)[1] @ scipy.linalg.lu(x)[2])
    yield "lu_factor packed", lower @ tt.triu(lu_f), \
        per_item(lambda x: (lambda p, l, u: l @ u)(*scipy.linalg.lu(x)))
    yield "lu", la.lu(s["a"])[2], per_item(lambda x: scipy.linalg.lu(x)[2])
    yield "qr q", q, per_item(lambda x: scipy.linalg.qr(x)[0])
    yield "qr r", r, per_item(lambda x: scipy.linalg.qr(x)[1])
    yield "qr economic", qe @ re_, per_item(lambda x: x)
    yield "qr r only", la.qr(s["a"], mode="r"), per_item(lambda x: scipy.linalg.qr(x)[1])
    yield "svd", (u * sv[..., None, :]) @ vh, per_item(lambda x: x)
    yield "svd values", la.svd(s["a"], compute_uv=False), \
        per_item(lambda x: np.linalg.svd(x, compute_uv=False))
    yield "eig values", tt.sort(tt.real(la.eig(s["spd"])[0]), axis=-1), \
        per_item(np.linalg.eigvalsh)
    yield "eigh values", w, per_item(np.linalg.eigvalsh)
    yield "eigh vectors", (v * w[..., None, :]) @ v.mT, per_item(lambda x: x)
    yield "eigvalsh", la.eigvalsh(s["spd"]), per_item(np.linalg.eigvalsh)
    gw, gv = la.eigh(s["a"] + s["a"].mT, s["spd"])
    yield "eigh generalized", s["spd"] @ gv * gw[..., None, :] - (s["a"] + s["a"].mT) @ gv, \
        per_item(lambda a, spd: np.zeros_like(a))
    yield "eigvalsh generalized", la.eigvalsh(s["a"] + s["a"].mT, s["spd"]), \
        per_item(lambda a, spd: scipy.linalg.eigvalsh(a + a.T, spd))
    yield "expm", la.expm(s["a"] / 4), per_item(lambda x: scipy.linalg.expm(x / 4))
    yield "matrix_power 3", la.matrix_power(s["a"], 3), \
        per_item(lambda x: np.linalg.matrix_power(x, 3))
    yield "matrix_power -2", la.matrix_power(s["a"], -2), \
        per_item(lambda x: np.linalg.matrix_power(x, -2))
    yield "block_diag", la.block_diag(s["a"], s["b"]), per_item(scipy.linalg.block_diag)
    for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        yield f"norm matrix {ord}", la.norm(s["a"], ord=ord, axis=(-2, -1)), \
            per_item(lambda x, o=ord: np.linalg.norm(x, ord=o))
    for ord in (None, 1, 3, 0, np.inf, -np.inf):
        yield f"norm vector {ord}", la.norm(s["v"], ord=ord, axis=-1), \
            per_item(lambda x, o=ord: np.linalg.norm(x, ord=o))
    yield "solve_continuous_lyapunov", la.solve_continuous_lyapunov(s["a"], s["spd"]), \
        per_item(scipy.linalg.solve_continuous_lyapunov)
    yield "solve_discrete_lyapunov", la.solve_discrete_lyapunov(s["a"] / 4, s["spd"]), \
        per_item(lambda a, q: scipy.linalg.solve_discrete_lyapunov(a / 4, q))
    yield "solve_sylvester", la.solve_sylvester(s["a"], s["spd"], s["low"]), \
        per_item(scipy.linalg.solve_sylvester)
    yield "norm keepdims", la.norm(s["a"], axis=(-2, -1), keepdims=True), \
        per_item(lambda x: np.linalg.norm(x, keepdims=True))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nb", [0, 1])
def test_every_function_matches_numpy_and_scipy(mode, dtype, nb):
    data = values(dtype, batch=(2,) * nb)
    sym = {k: tt.tensor(k, dtype=dtype, shape=(None,) * x.ndim) for k, x in data.items()}
    cases = list(_cases(sym))
    f = tg.function(list(sym.values()), [c[1] for c in cases], mode=mode)
    results = f(*data.values())
    tol = 2e-3 if dtype == "float32" else 1e-8
    order = list(sym)
    for (name, out, ref), got in zip(cases, results):
        args = [data[i.name] for i in _leaves(out, order)]
        expected = ref(*args, nb=nb)
        assert got.dtype == out.dtype == dtype or name.startswith("slogdet"), name
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=name)


def _leaves(out, order):
    """The named inputs ``out`` depends on, in the order of the function's inputs."""
    from tensorgraph.graph.basic import graph_inputs

    names = {v.name for v in graph_inputs([out]) if v.name in order}
    return [_Named(n) for n in order if n in names]


class _Named:
    def __init__(self, name):
        self.name = name


def test_single_systems_lstsq_tensorsolve_tensorinv_kron_and_lyapunov():
    rng = np.random.default_rng(1)
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    t4, t2 = tt.dtensor4("t4"), tt.dmatrix("t2")
    x, res, rank, s = la.lstsq(a, b)
    outs = [x, res, rank, s, la.tensorsolve(t4, t2), la.tensorinv(t4),
            la.tensorsolve(t4.dimshuffle(3, 0, 1, 2), t2, axes=(0,)),
            la.kron(a, b), la.kron(a[0], b[0]), la.kron(t4, a), la.kron(a[0], t4),
            la.matrix_dot(a, a.T, a),
            tt.trace(a), la.solve_continuous_lyapunov(a, b[:, :3]),
            la.solve_discrete_lyapunov(a / 4, b[:, :3]), la.matrix_power(a, 0),
            la.norm(t4), la.norm(t4, 2, keepdims=True), la.norm(a), la.norm(a[0], 0),
            la.solve(a, b, assume_a="tridiagonal"), la.solve_sylvester(a, b.T, b[:, :3]),
            la.solve_discrete_are(a / 4, b, b @ b.T + tt.eye(3), tt.eye(3)),
            *la.schur(a, output="complex"), *la.qz(a, b, sort="lhp")]
    f = tg.function([a, b, t4, t2], outs)
    av, bv = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    t4v, t2v = rng.standard_normal((2, 3, 2, 3)), rng.standard_normal((2, 3))
    got = f(av, bv, t4v, t2v)
    identity = tg.function([a], la.matrix_power(a, 0), mode="FAST_COMPILE")
    assert np.array_equal(identity(np.full((3, 3), np.nan)), np.eye(3))   # whatever M holds
    expected = [*np.linalg.lstsq(av, bv), np.linalg.tensorsolve(t4v, t2v),
                np.linalg.tensorinv(t4v),
                np.linalg.tensorsolve(np.moveaxis(t4v, 3, 0), t2v, axes=(0,)),
                np.kron(av, bv), np.kron(av[0], bv[0]),
                np.kron(t4v, av), np.kron(av[0], t4v),
                av @ av.T @ av, np.trace(av),
                scipy.linalg.solve_continuous_lyapunov(av, bv),
                scipy.linalg.solve_discrete_lyapunov(av / 4, bv), np.eye(3),
                np.linalg.norm(t4v, axis=(-2, -1)),    # per matrix, as PyTensor
                np.linalg.norm(t4v, 2, axis=(-2, -1), keepdims=True), np.linalg.norm(av),
                np.linalg.norm(av[0], 0),
                scipy.linalg.solve(np.triu(np.tril(av, 1), -1), bv, assume_a="tridiagonal"),
                scipy.linalg.solve_sylvester(av, bv.T, bv),
                scipy.linalg.solve_discrete_are(av / 4, bv, bv @ bv.T + np.eye(3), np.eye(3)),
                *scipy.linalg.schur(av, output="complex"),
                *(lambda aa, bb, _, __, q, z: (aa, bb, q, z))(
                    *scipy.linalg.ordqz(av, bv, sort="lhp"))]
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-10, err_msg=str(k))


def test_lstsq_of_a_stack_of_systems():
    rng = np.random.default_rng(2)
    a, b = tt.dtensor3("a"), tt.dmatrix("b")
    f = tg.function([a, b], la.lstsq(a, b, b_ndim=1))
    av, bv = rng.standard_normal((3, 5, 2)), rng.standard_normal((3, 5))
    for k, got in enumerate(f(av, bv)):
        np.testing.assert_allclose(got, np.stack([np.linalg.lstsq(x, y)[k]
                                                  for x, y in zip(av, bv)]), rtol=1e-10)
    deficient = av.copy()
    deficient[1, :, 1] = deficient[1, :, 0]        # one item loses its residuals
    with pytest.raises(ValueError, match="different shapes across the batch"):
        f(deficient, bv)


@pytest.mark.parametrize("dtype, expected", [("float32", "float32"), ("float64", "float64"),
                                             ("int16", "float32"), ("int32", "float64"),
                                             ("int64", "float64"), ("float16", "float32")])
def test_dtypes_follow_lapack(dtype, expected):
    x = tt.matrix("x", dtype=dtype)
    assert la.inv(x).dtype == la.cholesky(x).dtype == la.det(x).dtype == expected
    assert la.svd(x, compute_uv=False).dtype == expected
    f = tg.function([x], la.det(x), mode="FAST_COMPILE")
    np.testing.assert_allclose(f(np.array([[2, 1], [1, 3]], dtype=dtype)), 5)


def test_static_shapes_and_inferred_shapes():
    x = tt.tensor("x", dtype="float64", shape=(4, 3, 3))
    y = tt.tensor3("y", dtype="float64")
    assert la.inv(x).type.shape == (4, 3, 3)
    assert la.det(x).type.shape == (4,)
    assert la.svd(tt.tensor("w", dtype="float64", shape=(5, 2)))[0].type.shape == (5, 5)
    assert la.qr(tt.tensor("w", dtype="float64", shape=(5, 2)), mode="economic")[0] \
        .type.shape == (5, 2)
    shapes = [la.inv(y).shape, la.svd(y, full_matrices=False)[2].shape,
              la.solve(y, y[..., :2]).shape]
    f = tg.function([y], shapes)
    ops = {type(getattr(n.op, "core_op", n.op)).__name__ for n in f.maker.fgraph.toposort()}
    assert not ops & {"MatrixInverse", "SVD", "Solve"}, ops    # sizes without the work
    got = f(np.zeros((2, 4, 4)))
    assert [list(g) for g in got] == [[2, 4, 4], [2, 4, 4], [2, 4, 2]]


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="inv: expected a matrix or a stack"):
        la.inv(tt.dvector("v"))
    with pytest.raises(ValueError, match="det: Determinant not defined for a non-square matrix: expected a square "
                                         "matrix.*\\(2, 3\\)"):
        la.det(tt.tensor("m", dtype="float64", shape=(2, 3)))
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'nan'"):
        la.cholesky(tt.dmatrix("m"), on_error="warn")
    with pytest.raises(ValueError, match="qr: mode must be one of"):
        la.qr(tt.dmatrix("m"), mode="thin")
    with pytest.raises(ValueError, match="norm: Invalid norm order 'nuc' for vectors \\('nuc' "
                                         "is a matrix norm"):
        la.norm(tt.dvector("v"), ord="nuc")
    with pytest.raises(ValueError, match="norm: Invalid norm order for matrices: 0 \\(use one"):
        la.norm(tt.dmatrix("m"), ord=0)
    with pytest.raises(ValueError, match="solve: Invalid assume_a: test. It must be one of "):
        la.solve(tt.dmatrix("m"), tt.dmatrix("b"), assume_a="test")
    with pytest.warns(FutureWarning, match="use tensorgraph.tensor.trace"):
        la.trace(tt.dmatrix("m"))
    with pytest.raises(TypeError, match="norm: 'axis' must be None, an integer, or a tuple "
                                        "of integers, got i \\(Scalar"):
        la.norm(tt.dmatrix("m"), axis=tt.iscalar("i"))   # a symbolic axis: no fixed core
    with pytest.raises(TypeError, match="norm: 'axis' must be .* got \\(0, 1.5\\)"):
        la.norm(tt.dmatrix("m"), axis=(0, 1.5))
    with pytest.raises(TypeError, match="cho_solve: expected \\(c, lower\\)"):
        la.cho_solve(tt.dmatrix("c"), tt.dvector("b"))
    x = tt.dmatrix("x")
    f = tg.function([x], la.inv(x), mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="inv: expected a square matrix, got shape \\(2, 3\\)"):
        f(np.zeros((2, 3)))


@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_with_eigenvalues_is_scipys_ordqz(output):
    """``qz(return_eigenvalues=True)`` and ``ordqz`` give ``(AA, BB, alpha, beta, Q, Z)``:
    scipy's ``ordqz`` (PyTensor's order), ``alpha`` complex whatever the output."""
    rng = np.random.default_rng(5)
    a, b = tt.dmatrix("a"), tt.dmatrix("b")
    a32, b32 = tt.ftensor3("a32"), tt.ftensor3("b32")
    outs = [*la.qz(a, b, output=output, sort="lhp", return_eigenvalues=True),
            *la.ordqz(a, b, sort="ouc", output=output),
            *la.qz(a, b, output=output, return_eigenvalues=True),
            *la.qz(a32, b32, output=output, sort="iuc", return_eigenvalues=True)]
    f = tg.function([a, b, a32, b32], outs, mode="FAST_COMPILE")
    av, bv = rng.standard_normal((2, 4, 4))
    a3, b3 = rng.standard_normal((2, 2, 4, 4)).astype("float32")
    got = f(av, bv, a3, b3)
    complex_ = output == "complex"
    assert [g.dtype.name for g in got[:6]] == \
        ["complex128" if complex_ else "float64"] * 2 + ["complex128"] + \
        ["complex128" if complex_ else "float64"] * 3
    assert [g.dtype.name for g in got[20:22]] == \
        ["complex64", "complex64" if complex_ else "float32"]
    for k, sort in enumerate(("lhp", "ouc")):
        want = scipy.linalg.ordqz(av, bv, sort=sort, output=output)
        for g, e in zip(got[6 * k: 6 * k + 6], want):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    unsorted = scipy.linalg.qz(av, bv, output=output)
    for g, e in zip(got[12:14] + got[16:18], unsorted):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(got[14] / got[15]),
                               np.sort_complex(scipy.linalg.eigvals(av, bv)), rtol=1e-10)
    for i in range(2):
        want = scipy.linalg.ordqz(a3[i], b3[i], sort="iuc", output=output)
        for g, e in zip(got[18:], want):
            np.testing.assert_allclose(g[i], e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_qr_with_pivoting_and_raw_is_scipy_s(mode):
    """scipy's ``qr(pivoting=True)`` (``geqp3``; the column order last, int32, 0-based) and
    ``mode='raw'`` (scipy's ``((h, tau), r)`` flattened to ``h, tau, r`` as PyTensor; r is
    (k, n)), on a tall, a wide and an empty matrix and on a stack; the shapes come without
    the factorization."""
    rng = np.random.default_rng(3)
    x, s = tt.dmatrix("x"), tt.dtensor3("s")
    variants = [(m, p) for m in ("full", "economic", "r", "raw") for p in (False, True)
                if (m, p) != ("full", False)]
    outs = [list(la.qr(x, mode=m, pivoting=p)) if m != "r" or p else [la.qr(x, mode=m)]
            for m, p in variants]
    flat = [o for group in outs for o in group]
    stack = la.qr(s, mode="economic", pivoting=True)
    f = tg.function([x, s], flat + stack, mode=mode)
    shapes = tg.function([x], [o.shape for o in flat], mode=mode)
    assert mode == "FAST_COMPILE" or not any(        # FAST_RUN infers them
        isinstance(getattr(n.op, "core_op", n.op), la.QR) for n in shapes.maker.fgraph.apply_nodes)
    assert outs[variants.index(("raw", True))][1].type.shape == (None,)
    batch = rng.standard_normal((2, 5, 3))
    for a in (rng.standard_normal((6, 3)), rng.standard_normal((3, 6)), np.zeros((0, 3))):
        got = f(a, batch)
        for (m, p), group, shape in zip(variants, outs, np.split(np.arange(len(flat)),
                                                            np.cumsum([len(g) for g in outs]))):
            want = scipy.linalg.qr(a, mode=m, pivoting=p)
            want = (*want[0], *want[1:]) if m == "raw" else want
            assert len(want) == len(group), (m, p)
            for k, w in zip(shape, want):
                assert got[k].dtype == w.dtype and got[k].shape == w.shape, (m, p, k)
                assert tuple(shapes(a)[k]) == w.shape
                np.testing.assert_allclose(got[k], w, atol=1e-12, err_msg=f"{m} {p}")
        for i in range(2):
            for g, w in zip(got[len(flat):], scipy.linalg.qr(batch[i], mode="economic",
                                                             pivoting=True)):
                np.testing.assert_allclose(g[i], w, atol=1e-12)
