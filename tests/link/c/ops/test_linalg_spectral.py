"""The spectral linear algebra ops in C through LAPACK (tensorgraph/link/c/ops/linalg_spectral.py):
eigh / eigvalsh / the generalized eigh, eig, svd, qr, schur, qz and expm, as core ops (one
matrix) and as Blockwise{core op} (a stack), float32 and float64, with non-contiguous inputs.

Where the factors are not unique (eigenvector signs and phases, singular vectors) the tests
compare what defines them (``A v = v w``, ``U S Vh = A``, ``Q R = A``, orthogonality) and the
unique parts (eigenvalues, singular values, R up to the signs of its rows) with ``perform``.
Every function is compiled in FAST_RUN and checked to run no node in Python."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.linalg
from thread_checks import run_in_threads

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor import linalg as la
from tensorgraph.tensor.blockwise import Blockwise

TOL = {"float32": 2e-4, "float64": 1e-10}


def compiled(inputs, outputs, core_ops=()):
    """The FAST_RUN function, checked to run every node in C and, for each class of
    ``core_ops``, to hold a node of the bare op and one of Blockwise{op}."""
    f = tg.function(inputs, outputs, mode="FAST_RUN")
    python = [str(n.op) for n, t in zip(f.vm.nodes, f.vm.thunks) if t.kind != "c"]
    assert not python, f"nodes running perform in FAST_RUN: {python}"
    for cls in core_ops:
        kinds = {type(n.op.core_op if isinstance(n.op, Blockwise) else n.op) is cls and
                 isinstance(n.op, Blockwise) for n in f.maker.fgraph.apply_nodes
                 if isinstance(n.op, cls) or isinstance(n.op, Blockwise) and
                 isinstance(n.op.core_op, cls)}
        assert kinds == {True, False}, f"{cls.__name__}: want a core node and a Blockwise one"
    return f


def strided(x):
    """``x``'s values in every other element of a bigger array (non-contiguous)."""
    big = np.zeros(tuple(2 * s for s in x.shape), x.dtype)
    big[tuple(slice(None, None, 2) for _ in x.shape)] = x
    return big[tuple(slice(None, None, 2) for _ in x.shape)]


def rand(shape, seed, dtype="float64"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def sym(shape, seed, dtype="float64"):
    a = rand(shape, seed)
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def spd(shape, seed, dtype="float64"):
    a = rand(shape, seed)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def items(x):
    """The matrices of a stack (or the one matrix)."""
    return [x] if x.ndim == 2 else list(x.reshape((-1,) + x.shape[-2:]))


def ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


# the four cases each test compiles into one function: (dtype, batch shape); the last one's
# value is strided
CASES = [("float64", ()), ("float32", ()), ("float32", (3,)), ("float64", (2, 2))]


def variables():
    return [tt.tensor(dtype, shape=(None,) * (len(batch) + 2)) for dtype, batch in CASES]


def check_close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def test_eigh_and_eigvalsh_compute_perform_s_values():
    xs = variables()
    outs = [o for x in xs for o in (*la.eigh(x), la.eigvalsh(x), *la.eigh(x, lower=False))]
    f = compiled(xs, outs, core_ops=(la.Eigh, la.Eigvalsh))
    values = [sym(batch + (4, 4), k, dtype) for k, (dtype, batch) in enumerate(CASES)]
    values[3] = strided(values[3])
    values[1] = values[1] + np.triu(np.ones((4, 4), "float32"), 1)   # each triangle matters
    got = f(*values)
    for k, ((dtype, batch), a) in enumerate(zip(CASES, values)):
        w, v, wv, wu, vu = got[5 * k: 5 * k + 5]
        assert w.dtype == v.dtype == wv.dtype == dtype and w.shape == batch + (4,)
        for lower, (ww, vv) in ((True, (w, v)), (False, (wu, vu))):
            ref = np.linalg.eigvalsh(a.astype("float64"), UPLO="L" if lower else "U")
            check_close(ww, ref, dtype, 10)
            full = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2) if lower else \
                np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)
            check_close(full.astype("float64") @ vv, vv * ww[..., None, :], dtype, 10)
            check_close(np.swapaxes(vv, -1, -2) @ vv, np.broadcast_to(np.eye(4), vv.shape),
                        dtype)
        check_close(wv, w, dtype)


def test_generalized_eigh_solves_a_v_equal_b_v_w():
    a32, b32 = tt.ftensor3("a"), tt.ftensor3("b")
    a64, b64 = tt.dmatrix("a"), tt.dmatrix("b")
    outs = [*la.eigh(a32, b32), *la.eigh(a64, b64, lower=False), *la.eigh(a32, b64)]
    f = compiled([a32, b32, a64, b64], outs)
    assert {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes} >= \
        {"Blockwise", "GeneralizedEigh"}
    va, vb = sym((3, 4, 4), 1, "float32"), spd((3, 4, 4), 2, "float32")
    wa, wb = strided(sym((4, 4), 3)), spd((4, 4), 4)
    w32, v32, w64, v64, wbr, vbr = f(va, vb, wa.T, wb)
    for k, aa in enumerate(va):      # one b broadcast against the stack, in float64
        ref = scipy.linalg.eigh(aa.astype("float64"), wb, eigvals_only=True)
        check_close(wbr[k], ref, "float64", 10)
        check_close(aa @ vbr[k], wb @ vbr[k] * wbr[k], "float64", 10)
    for (w, v, a, b, dtype) in ((w32, v32, va, vb, "float32"), (w64, v64, wa.T, wb, "float64")):
        for k, (aa, bb) in enumerate(zip(items(a), items(b))):
            ref = scipy.linalg.eigh(aa.astype("float64"), bb.astype("float64"), eigvals_only=True,
                                    lower=dtype == "float32")
            ww, vv = w.reshape(-1, 4)[k], items(v)[k]
            check_close(ww, ref, dtype, 10)
            check_close(aa @ vv, bb @ vv * ww, dtype, 10)
            check_close(vv.T @ bb @ vv, np.eye(4), dtype, 10)


def test_eig_gives_complex_values_and_unit_vectors():
    xs = variables()
    f = compiled(xs, [o for x in xs for o in la.eig(x)], core_ops=(la.Eig,))
    values = [rand(batch + (4, 4), 10 + k, dtype) for k, (dtype, batch) in enumerate(CASES)]
    values[0] = np.array([[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 2, 1], [0, 0, 0, 3.0]])
    values[3] = strided(values[3])
    got = f(*values)
    for k, ((dtype, batch), a) in enumerate(zip(CASES, values)):
        w, v = got[2 * k: 2 * k + 2]
        assert w.dtype == v.dtype == ("complex64" if dtype == "float32" else "complex128")
        check_close(a @ v, v * w[..., None, :], dtype, 10)
        check_close(np.linalg.norm(v, axis=-2), np.ones(batch + (4,)), dtype)
        ref = np.linalg.eigvals(a.astype("float64"))
        check_close(np.sort_complex(w.reshape(-1, 4)), np.sort_complex(ref.reshape(-1, 4)),
                    dtype, 10)


@pytest.mark.parametrize("full", [True, False])
def test_svd_in_every_shape(full):
    xs = variables()
    outs = [o for x in xs for o in (*la.svd(x, full_matrices=full),
                                     la.svd(x, compute_uv=False))]
    f = compiled(xs, outs, core_ops=(la.SVD,))
    shapes = [(3, 5), (5, 3), (4, 4), (2, 3)]
    values = [rand(batch + s, 20 + k, dtype)
              for k, ((dtype, batch), s) in enumerate(zip(CASES, shapes))]
    values[2] = np.swapaxes(rand((3, 4, 4), 30, "float32"), -1, -2)     # transposed stack
    values[3] = strided(values[3])
    got = f(*values)
    for k, ((dtype, batch), a) in enumerate(zip(CASES, values)):
        u, s, vh, s_only = got[4 * k: 4 * k + 4]
        ref = np.linalg.svd(a.astype("float64"), full_matrices=full)
        assert [x.shape for x in (u, s, vh)] == [x.shape for x in ref]
        assert {x.dtype.name for x in (u, s, vh, s_only)} == {dtype}
        check_close(s, ref[1], dtype, 10)
        check_close(s_only, ref[1], dtype, 10)
        m, n = a.shape[-2:]
        kk = min(m, n)
        check_close((u[..., :, :kk] * s[..., None, :]) @ vh[..., :kk, :], a, dtype, 10)
        check_close(ct(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                                               (u.shape[-1],) * 2), dtype)
        check_close(vh @ ct(vh), np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] +
                                                 (vh.shape[-2],) * 2), dtype)


def test_svd_of_an_empty_matrix_is_numpy_s():
    x = tt.dmatrix("x")
    f = compiled([x], la.svd(x))
    for got, want in zip(f(np.zeros((0, 3))), np.linalg.svd(np.zeros((0, 3)))):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_in_every_mode_and_shape(mode):
    xs = variables()
    outs = [o for x in xs for o in ([la.qr(x, mode=mode)] if mode == "r" else la.qr(x, mode=mode))]
    f = compiled(xs, outs, core_ops=(la.QR,))
    shapes = [(5, 3), (3, 5), (4, 4), (4, 2)]
    values = [rand(batch + s, 40 + k, dtype)
              for k, ((dtype, batch), s) in enumerate(zip(CASES, shapes))]
    values[3] = strided(values[3])
    got = f(*values)
    per = 1 if mode == "r" else 2
    for k, ((dtype, batch), a) in enumerate(zip(CASES, values)):
        outs = got[per * k: per * k + per]
        refs = [scipy.linalg.qr(x.astype("float64"), mode=mode) for x in items(a)]
        r = outs[-1].reshape((-1,) + outs[-1].shape[-2:])
        for j, ref in enumerate(refs):
            want_r = ref[0] if mode == "r" else ref[1]
            assert r[j].shape == want_r.shape and r[j].dtype == dtype
            np.testing.assert_array_equal(np.tril(r[j], -1), 0)
            check_close(np.abs(r[j]), np.abs(want_r), dtype, 10)
            if mode != "r":
                q = outs[0].reshape((-1,) + outs[0].shape[-2:])[j]
                assert q.shape == ref[0].shape
                check_close(q @ r[j], items(a)[j], dtype, 10)
                check_close(q.T @ q, np.eye(q.shape[1]), dtype)


def test_qr_of_a_matrix_without_columns_is_scipy_s():
    x = tt.dmatrix("x")
    f = compiled([x], la.qr(x))
    for got, want in zip(f(np.zeros((3, 0))), scipy.linalg.qr(np.zeros((3, 0)))):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["full", "economic", "r", "raw"])
def test_qr_with_pivoting_and_raw_are_scipy_s(mode):
    """``pivoting=True`` calls ``geqp3`` (the column order: int32, 0-based) and ``mode='raw'``
    gives ``geqrf``'s matrix and tau, then R (k, n): the LAPACK calls scipy makes, so scipy's
    values (the pivots exactly), real and complex, one matrix and a strided stack."""
    x, s, z = tt.dmatrix("x"), tt.ftensor3("s"), tt.zmatrix("z")
    variants = [True, False] if mode == "raw" else [True]
    results = [la.qr(v, mode=mode, pivoting=p) for p in variants for v in (x, s, z)]
    outs = [o for r in results for o in (r if isinstance(r, (list, tuple)) else [r])]
    f = compiled([x, s, z], outs, core_ops=(la.QR,))
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 4))
    st = strided(rng.standard_normal((2, 3, 5)).astype("float32"))
    c = rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))
    got = iter(f(a, st, c))
    for p in variants:
        for value, batched in ((a, False), (st, True), (c, False)):
            for_items = items(value)
            wants = [scipy.linalg.qr(v, mode=mode, pivoting=p) for v in for_items]
            wants = [(*w[0], *w[1:]) if mode == "raw" else w for w in wants]
            for k in range(len(wants[0])):
                g = next(got)
                for j, w in enumerate(wants):
                    gj = g[j] if batched else g
                    assert gj.dtype == w[k].dtype and gj.shape == w[k].shape, (p, k)
                    tol = 2e-4 if value.dtype == np.float32 else 1e-10
                    np.testing.assert_allclose(gj, w[k], rtol=tol, atol=tol)


def test_qr_with_pivoting_of_an_empty_matrix_is_scipy_s():
    x = tt.dmatrix("x")
    f = compiled([x], [*la.qr(x, pivoting=True), *la.qr(x, mode="raw")])
    for shape in ((0, 3), (3, 0)):
        want = [*scipy.linalg.qr(np.zeros(shape), pivoting=True),
                *scipy.linalg.qr(np.zeros(shape), mode="raw")[0],
                scipy.linalg.qr(np.zeros(shape), mode="raw")[1]]
        for got, w in zip(f(np.zeros(shape)), want, strict=True):
            assert got.shape == w.shape and got.dtype == w.dtype
            if w.size:
                np.testing.assert_array_equal(got, w)


def _blocks(t):
    """The eigenvalues of a quasi-triangular T in the order of its diagonal blocks."""
    out, i, n = [], 0, t.shape[0]
    while i < n:
        if i + 1 < n and abs(t[i + 1, i]) > 1e-6 * abs(t).max():
            out += list(np.linalg.eigvals(t[i:i + 2, i:i + 2].astype("float64")))
            i += 2
        else:
            out.append(t[i, i])
            i += 1
    return np.array(out)


SORTS = {None: lambda w: np.zeros(w.shape, bool), "lhp": lambda w: w.real < 0,
         "rhp": lambda w: w.real >= 0, "iuc": lambda w: abs(w) <= 1,
         "ouc": lambda w: abs(w) > 1}


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_factors_and_sorts(output):
    xs = variables()
    sorts = [None, "lhp", "iuc", "ouc"]
    outs = [o for x, s in zip(xs, sorts) for o in la.schur(x, output=output, sort=s)]
    f = compiled(xs, outs, core_ops=(la.Schur,))
    values = [rand(batch + (5, 5), 50 + k, dtype) for k, (dtype, batch) in enumerate(CASES)]
    values[3] = strided(values[3])
    got = f(*values)
    for k, ((dtype, batch), a, sort) in enumerate(zip(CASES, values, sorts)):
        t, z = got[2 * k: 2 * k + 2]
        assert t.dtype.kind == ("c" if output == "complex" else "f")
        for tt_, zz, aa in zip(items(t), items(z), items(a)):
            check_close(zz @ tt_ @ ct(zz), aa, dtype, 10)
            check_close(ct(zz) @ zz, np.eye(5), dtype)
            np.testing.assert_array_equal(np.tril(tt_, -1 if output == "complex" else -2), 0)
            ref_t = scipy.linalg.schur(aa.astype("float64"), output=output, sort=sort)[0]
            picked = SORTS[sort](_blocks(tt_) if output == "real" else np.diag(tt_))
            want = SORTS[sort](_blocks(ref_t) if output == "real" else np.diag(ref_t))
            np.testing.assert_array_equal(picked, want)


@pytest.mark.parametrize("dtype, output", [("float64", "real"), ("float64", "complex"),
                                           ("complex128", "real"), ("complex128", "complex")])
def test_schur_follows_scipy_s_rules_and_its_values_up_to_the_vectors_phases(dtype, output):
    """scipy's rules: a real matrix with ``output='complex'`` is cast to complex and goes
    through the complex ``gees`` (no ``rsf2csf``); a complex matrix ignores ``output='real'``.
    The complex form is scipy's up to a unit phase per Schur vector (``Z = Z_scipy D``,
    ``T = D^H T_scipy D``): LAPACK's complex QR iteration ends on other phases in the OpenBLAS
    the C links (scipy-openblas32 0.3.34) than in the one scipy 1.17 ships (0.3.30), both
    Schur forms of A (PyTensor's tests compare with scipy's exact values: 4 of them fail on
    this). The real ``gees`` of the two differs less often (a vector's sign, the basis of a
    2 x 2 block): not on these matrices, whose real form is scipy's."""
    x = tt.tensor("x", dtype=dtype, shape=(None, None))
    s = tt.tensor("s", dtype=dtype, shape=(None, None, None))
    f = compiled([x, s], [*la.schur(x, output=output), *la.schur(s, output=output)],
                 core_ops=(la.Schur,))
    rng = np.random.default_rng(666)
    a, st = rng.normal(size=(5, 5)), rng.normal(size=(2, 4, 4))
    if dtype.startswith("complex"):
        a, st = a + 1j * rng.normal(size=(5, 5)), st + 1j * rng.normal(size=(2, 4, 4))
    t, z, tb, zb = f(a, st)
    for tt_, zz, aa in ((t, z, a), (tb[0], zb[0], st[0]), (tb[1], zb[1], st[1])):
        want_t, want_z = scipy.linalg.schur(aa, output=output)
        assert tt_.dtype == want_t.dtype and zz.dtype == want_z.dtype
        d = np.diag(ct(want_z) @ zz) if want_t.dtype.kind == "c" else np.ones(len(aa))
        np.testing.assert_allclose(np.abs(d), 1, atol=1e-10)
        np.testing.assert_allclose(zz, want_z * d, atol=1e-10)
        np.testing.assert_allclose(tt_, np.conj(d)[:, None] * want_t * d, atol=1e-10)


def _pencil(aa, bb):
    """The generalized eigenvalues of a (quasi-)triangular pair in diagonal-block order."""
    out, i, n = [], 0, aa.shape[0]
    while i < n:
        if i + 1 < n and abs(aa[i + 1, i]) > 1e-6 * abs(aa).max():
            out += list(scipy.linalg.eigvals(aa[i:i + 2, i:i + 2].astype("complex128"),
                                             bb[i:i + 2, i:i + 2].astype("complex128")))
            i += 2
        else:
            out.append(aa[i, i] / bb[i, i] if bb[i, i] != 0 else np.inf)
            i += 1
    return np.array(out, complex)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_factors_and_sorts(output):
    pairs = [(x, x.type()) for x in variables()]
    sorts = [None, "lhp", "rhp", "ouc"]
    outs = [o for (a, b), s in zip(pairs, sorts) for o in la.qz(a, b, output=output, sort=s)]
    f = compiled([v for p in pairs for v in p], outs, core_ops=(la.QZ,))
    values = []
    for k, (dtype, batch) in enumerate(CASES):
        values += [rand(batch + (4, 4), 60 + k, dtype), rand(batch + (4, 4), 70 + k, dtype)]
    values[7] = strided(values[7])
    got = f(*values)
    for k, ((dtype, batch), sort) in enumerate(zip(CASES, sorts)):
        a, b = values[2 * k], values[2 * k + 1]
        factors = [items(x) for x in got[4 * k: 4 * k + 4]]
        for aa, bb, q, z, av, bv in zip(*factors, items(a), items(b)):
            check_close(q @ aa @ ct(z), av, dtype, 10)
            check_close(q @ bb @ ct(z), bv, dtype, 10)
            check_close(ct(q) @ q, np.eye(4), dtype)
            check_close(ct(z) @ z, np.eye(4), dtype)
            np.testing.assert_array_equal(np.tril(bb, -1), 0)
            ref = scipy.linalg.ordqz(av.astype("float64"), bv.astype("float64"),
                                     sort=sort, output=output) if sort else \
                scipy.linalg.qz(av.astype("float64"), bv.astype("float64"), output=output)
            want = SORTS[sort](_pencil(ref[0], ref[1]))
            np.testing.assert_array_equal(SORTS[sort](_pencil(aa, bb)), want)



@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_eigenvalues_come_from_gges(output):
    """``qz(return_eigenvalues=True)`` (``ordqz``) in C: alpha / beta are the eigenvalues of
    the pencil ``(AA, BB)`` it returns, in its order (so the sort's picks come first)."""
    pairs = [(x, x.type()) for x in variables()]
    sorts = [None, "lhp", "iuc", "ouc"]
    outs = [o for (a, b), s in zip(pairs, sorts)
            for o in la.qz(a, b, output=output, sort=s, return_eigenvalues=True)]
    f = compiled([v for p in pairs for v in p], outs, core_ops=(la.QZ,))
    values = []
    for k, (dtype, batch) in enumerate(CASES):
        values += [rand(batch + (4, 4), 90 + k, dtype), rand(batch + (4, 4), 95 + k, dtype)]
    values[7] = strided(values[7])
    got = f(*values)
    for k, ((dtype, batch), sort) in enumerate(zip(CASES, sorts)):
        aa, bb, alpha, beta, q, z = got[6 * k: 6 * k + 6]
        assert alpha.dtype.kind == "c" and alpha.shape == batch + (4,)
        assert beta.dtype.kind == aa.dtype.kind and beta.shape == batch + (4,)
        a, b = values[2 * k], values[2 * k + 1]
        for aai, bbi, al, be, qi, zi, av, bv in zip(*map(items, (aa, bb)),
                                                    *(x.reshape(-1, 4) for x in (alpha, beta)),
                                                    *map(items, (q, z, a, b))):
            check_close(qi @ aai @ ct(zi), av, dtype, 10)
            w = al / be
            pencil = _pencil(aai, bbi)
            check_close(_in_order(w), _in_order(pencil), dtype, 10)
            np.testing.assert_array_equal(SORTS[sort](w), SORTS[sort](pencil))
            want = scipy.linalg.eigvals(av.astype("float64"), bv.astype("float64"))
            check_close(_in_order(w), _in_order(want), dtype, 100)


def _in_order(w):
    """Eigenvalues in one order that rounding cannot swap (conjugates by their sign)."""
    return w[np.lexsort((np.sign(w.imag.round(3)), w.real.round(3)))]


def test_expm_matches_scipy_on_every_pade_degree():
    x, y, z = tt.dtensor3("x"), tt.fmatrix("y"), tt.dmatrix("z")
    f = compiled([x, y, z], [la.expm(x), la.expm(y), la.expm(z.T)], core_ops=(la.Expm,))
    base = rand((4, 4), 80)
    base /= np.abs(base).sum(0).max()                        # 1-norm 1
    # norms reaching the degrees 3, 5, 7, 9, 13 and 13 with scaling and squaring
    stack = np.stack([base * s for s in (0.01, 0.2, 0.9, 2.0, 5.0, 40.0)])
    single = rand((4, 4), 81, "float32")
    got, got32, got_t = f(stack, single, strided(base * 3))
    for g, a in zip(got, stack):   # scipy's degrees and scalings differ (Al-Mohy, Higham 2009)
        want = scipy.linalg.expm(a)
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12 * abs(want).max())
    want32 = scipy.linalg.expm(single.astype("float64"))
    assert got32.dtype == "float32"
    np.testing.assert_allclose(got32, want32, rtol=1e-6, atol=1e-6 * abs(want32).max())
    np.testing.assert_allclose(got_t, scipy.linalg.expm(3 * base.T), rtol=1e-12)
    nan = f(np.full((1, 2, 2), np.nan), np.eye(2, dtype="float32"), np.eye(2))[0]
    assert np.isnan(nan).all()


# ----------------------------------------------------------------------------------------------
# errors


def test_a_non_square_matrix_is_a_value_error_naming_its_shape():
    x = tt.dtensor3("x")
    f = compiled([x], la.eigvalsh(x))
    with pytest.raises(ValueError, match=r"eigvalsh: expected a square matrix, got shape "
                                         r"\(2, 3\)"):
        f(np.zeros((2, 2, 3)))


def test_generalized_eigh_names_the_item_whose_b_is_not_positive_definite():
    a, b = tt.dtensor3("a"), tt.dtensor3("b")
    f = compiled([a, b], la.eigh(a, b))
    bv = spd((3, 3, 3), 5)
    bv[1] = -bv[1]
    with pytest.raises(np.linalg.LinAlgError,
                       match=r"eigh: the matrix b is not positive definite \(at batch index 1\)"):
        f(sym((3, 3, 3), 6), bv)


@pytest.mark.parametrize("op", ["eig", "svd"])
def test_a_nan_is_a_linalg_error_naming_the_item(op):
    x = tt.dtensor3("x")
    f = compiled([x], la.eig(x)[0] if op == "eig" else la.svd(x, compute_uv=False))
    bad = rand((3, 3, 3), 7)
    bad[2, 0, 1] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match=rf"{op}: .*\(at batch index 2\)"):
        f(bad)


# ----------------------------------------------------------------------------------------------
# threads and pickling


def _mixed():
    a = tt.dtensor3("a")
    w, v = la.eigh(a + a.mT)
    u, s, vh = la.svd(a)
    q, r = la.qr(a)
    return tg.function([a], [w, v, u, s, vh, q, r, la.expm(a), la.schur(a)[0], la.eig(a)[0]],
                       mode="FAST_RUN")


def test_many_threads_call_one_function_and_get_the_same_bits():
    f = _mixed()
    data = [rand((1 + k % 3, 4, 4), 90 + k) for k in range(6)]
    want = [f(d) for d in data]
    problems = []

    def work(k):
        for i in range(10):
            j = (k + i) % len(data)
            try:
                for got, ref in zip(f(data[j]), want[j]):
                    np.testing.assert_array_equal(got, ref)
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                problems.append(repr(exc))

    run_in_threads(work, 6)
    assert not problems, problems[:3]


def test_a_pickled_function_gives_the_same_bits():
    f = _mixed()
    g = pickle.loads(pickle.dumps(f))
    data = rand((2, 4, 4), 99)
    for got, want in zip(g(data), f(data)):
        np.testing.assert_array_equal(got, want)
    assert {t.kind for t in g.vm.thunks} == {"c"}


def test_integer_and_half_inputs_are_read_as_linalg_computes_them():
    i, h = tt.lmatrix("i"), tt.tensor("float16", shape=(None, None))
    f = compiled([i, h], [la.eigvalsh(i), la.svd(h, compute_uv=False), la.expm(i)])
    a = np.array([[2, 1], [1, -3]])
    w, s, e = f(a, np.array([[1.5, -2], [0.25, 65504]], "float16"))
    assert w.dtype == e.dtype == "float64" and s.dtype == "float32"
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(float)), rtol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(np.array([[1.5, -2], [0.25, 65504.0]]),
                                                compute_uv=False), rtol=1e-6)
    np.testing.assert_allclose(e, scipy.linalg.expm(a.astype(float)), rtol=1e-12)


def _dare_case(k, m, n, dtype, scale=1.0):
    a = rand((m, m), 200 + k) * 0.5
    b = rand((m, n), 300 + k)
    q, r = spd((m, m), 400 + k), spd((n, n), 500 + k)
    return [(x * s).astype(dtype) for x, s in ((a, 1), (b, scale), (q, 1), (r, 1))]


def test_solve_discrete_are_is_scipy_s_stabilizing_solution():
    one = [tt.dmatrix(c) for c in "abqr"]
    stack = [tt.ftensor3(c) for c in "abqr"]
    f = compiled(one + stack, [la.solve_discrete_are(*one), la.solve_discrete_are(*stack)],
                 core_ops=(la.SolveDiscreteARE,))
    single = _dare_case(0, 3, 2, "float64", scale=1e3)    # badly scaled b: the balancing
    batch = [np.stack(p) for p in zip(*(_dare_case(k, 4, 1, "float32") for k in (1, 2)))]
    single[1] = strided(single[1])
    x64, x32 = f(*single, *batch)
    want = scipy.linalg.solve_discrete_are(*single)
    np.testing.assert_allclose(x64, want, rtol=1e-9, atol=1e-9 * abs(want).max())
    assert x32.dtype == "float32"
    for got, *items_ in zip(x32, *batch):
        want = scipy.linalg.solve_discrete_are(*(v.astype("float64") for v in items_))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * abs(want).max())
    bad = [np.copy(v) for v in batch]
    bad[2][1, 0, 1] += 1.0                                  # q of item 1 not symmetric
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_discrete_are: the matrix q is not "
                                                    r"symmetric \(at batch index 1\)"):
        f(*single, *bad)


def test_the_quick_tier_gives_the_optimized_bits():
    """A cold cache's first call (the quick tier: each node's own function at -O1) computes
    the bits the optimized C gives (tests/link/test_tier_bits.py)."""
    from tensorgraph.link.c.linkers import CLinker

    f = _mixed()
    data = rand((3, 4, 4), 98)
    vm = CLinker("cvm", None, whole_graph=True)._make_c_vm(f.maker.fgraph, None, None, ready={})
    assert vm.tier == "quick"
    vm.input_storage[0][0] = data
    vm()
    for quick, optimized in zip((c[0] for c in vm.output_storage), f(data)):
        assert quick.dtype == optimized.dtype
        np.testing.assert_array_equal(quick.view(np.uint8), optimized.view(np.uint8))


def crand(shape, seed, dtype):
    return (rand(shape, seed) + 1j * rand(shape, seed + 1000)).astype(dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_matrices_use_lapack_s_complex_routines(dtype):
    tol = TOL["float32" if dtype == "complex64" else "float64"]
    a, b, p = tt.tensor3("a", dtype=dtype), tt.matrix("b", dtype=dtype), tt.tensor3(dtype=dtype)
    outs = [*la.eigh(a), la.eigvalsh(b, lower=False), *la.eigh(a, p), *la.eig(b), *la.svd(a),
            la.svd(b, compute_uv=False), *la.qr(a), *la.qr(b, mode="economic")]
    f = compiled([a, b, p], outs)
    h = crand((2, 4, 4), 600, dtype)
    h = h + ct(h)
    g = strided(crand((4, 4), 601, dtype))
    pd = h @ ct(h) + 4 * np.eye(4, dtype=dtype)
    w, v, wb, gw, gv, ew, ev, u, s, vh, sb, q, r, qb, rb = f(h, g, pd)
    close = {"rtol": tol, "atol": tol * 10}
    np.testing.assert_allclose(h @ v, v * w[..., None, :], **close)
    np.testing.assert_allclose(wb, np.linalg.eigvalsh(g, UPLO="U"), **close)
    np.testing.assert_allclose(h @ gv, pd @ gv * gw[..., None, :], **close)
    np.testing.assert_allclose(g @ ev, ev * ew, **close)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, h, **close)
    np.testing.assert_allclose(sb, np.linalg.svd(g, compute_uv=False), **close)
    np.testing.assert_allclose(q @ r, h, **close)
    np.testing.assert_allclose(qb @ rb, g, **close)
    assert v.dtype == ev.dtype == u.dtype == q.dtype == dtype
    assert w.dtype == s.dtype == np.finfo(dtype).dtype


def test_the_spectral_kernels_compile_in_one_unit_with_the_other_linalg_kernels():
    """spectral.h declares the LAPACK routines it calls itself; a unit may hold them beside
    lapack.h's declarations (a graph with eigh and cholesky), which must agree."""
    import os
    import shutil
    import subprocess

    import tensorgraph.link.c as c_package
    from tensorgraph.link.c.ops import linalg
    from tensorgraph.link.c.ops.lapack import lapack_support
    from tensorgraph.link.c.ops.linalg_spectral import spectral_support

    linalg_item = linalg.CholeskyItem()
    x = tt.dmatrix("x")
    core = la.cholesky(x).owner.op.core_op.make_node(x)
    text = linalg_item.support_code(core.op, core) + spectral_support() + lapack_support()
    here = os.path.dirname(c_package.__file__)
    command = [shutil.which("gcc"), "-fsyntax-only", "-fopenmp-simd", "-x",
               "c", "-include", os.path.join(here, "runtime.h"), "-include",
               os.path.join(here, "tg_scalar.h"), "-"]
    done = subprocess.run(command, input=text, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
