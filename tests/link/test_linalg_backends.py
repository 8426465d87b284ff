"""Linear algebra in the whole-graph back ends (JAX, NUMBA, PYTORCH): every linalg core op and
``Blockwise`` give what ``perform`` gives (FAST_COMPILE's Python loop is the reference), in
float32 and float64, on one matrix and on a stack; where LAPACK's vectors are not unique the
invariants are compared (reconstructions, orthogonality). Then the bad-input rules
(``cholesky``'s ``on_error``, singular matrices), threads, pickling and gradients.

Each mode compiles a few big graphs rather than one per op: a PyTorch compile costs seconds.
"""

import pickle

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.backend import UnsupportedOpsError, available
from tensorgraph.tensor import linalg as la

from thread_checks import run_in_threads

LIBRARY = {"JAX": "jax", "NUMBA": "numba", "PYTORCH": "torch"}
MODES = [pytest.param(m, marks=pytest.mark.skipif(not available(lib), reason=f"no {lib}"))
         for m, lib in LIBRARY.items()]
REFERENCE = tg.Mode(linker="py", optimizer="fast_compile")
#: (mode, batched, dtype): one matrix in float32 and a stack in float64 in JAX by default; every
#: pair in NUMBA and PYTORCH is a slow sweep (a NUMBA pair compiles every kernel of the zoo:
#: 60 s cold; a PyTorch zoo 12-15 s); their other tests below run by default
_PAIRS = [(False, "float32"), (True, "float64"), (False, "float64"), (True, "float32")]
MODES_SHAPES_AND_DTYPES = [
    pytest.param(mode, batch, dtype,
                 id=f"{mode}-{'stack' if batch else 'matrix'}-{dtype}",
                 marks=list(mode_param.marks) + (
                     [] if mode == "JAX" and (batch, dtype) in ((True, "float64"),
                                                                (False, "float32"))
                     else [pytest.mark.slow]))
    for mode_param in MODES for mode in mode_param.values for batch, dtype in _PAIRS]


def _data(dtype, batch):
    """Inputs of the zoo: a stack of 3 (or one) well-conditioned matrices of each kind."""
    rng = np.random.default_rng(42)
    lead = (3,) if batch else ()
    g = rng.standard_normal(lead + (4, 4)) + 4 * np.eye(4)
    spd = g @ np.swapaxes(g, -1, -2) + np.eye(4)
    return {"G": g.astype(dtype), "S": spd.astype(dtype),
            "R": rng.standard_normal(lead + (5, 3)).astype(dtype),
            "b": rng.standard_normal(lead + (4, 2)).astype(dtype),
            "v": rng.standard_normal(lead + (4,)).astype(dtype)}


def _inputs(dtype, batch):
    nd = 3 if batch else 2
    kind = {2: tt.matrix, 3: tt.tensor3}
    return {"G": kind[nd]("G", dtype=dtype), "S": kind[nd]("S", dtype=dtype),
            "R": kind[nd]("R", dtype=dtype), "b": kind[nd]("b", dtype=dtype),
            "v": (tt.matrix if batch else tt.vector)("v", dtype=dtype)}


def _unique(x):
    """Outputs that are unique (no sign or order choice), compared entry by entry."""
    G, S, R, b, v = x["G"], x["S"], x["R"], x["b"], x["v"]
    L = la.cholesky(S)
    lu, piv = la.lu_factor(G)
    out = {
        "cholesky": L, "cholesky upper": la.cholesky(S, lower=False),
        "solve": la.solve(G, b), "solve vector": la.solve(G, v, b_ndim=1),
        "solve pos": la.solve(S, b, assume_a="pos"),
        "solve sym upper": la.solve(S + tt.tril(G, -1), b, assume_a="sym"),
        "solve sym lower": la.solve(S + tt.triu(G, 1), b, assume_a="sym", lower=True),
        "solve tridiagonal": la.solve(G, b, assume_a="tridiagonal"),
        "solve_triangular": la.solve_triangular(L, b, lower=True),
        "solve_triangular trans": la.solve_triangular(L, v, lower=True, trans=1, b_ndim=1),
        "solve_triangular unit upper": la.solve_triangular(G, b, unit_diagonal=True),
        "cho_solve": la.cho_solve((L, True), b),
        "lu_factor": lu, "pivots": piv, "lu_solve": la.lu_solve((lu, piv), b),
        "lu_solve trans": la.lu_solve((lu, piv), b, trans=True),
        "pivot_to_permutation": la.pivot_to_permutation(piv),
        "pivot_to_permutation inverse": la.pivot_to_permutation(piv, inverse=True),
        "inv": la.inv(G), "pinv": la.pinv(R), "pinv hermitian": la.pinv(S, hermitian=True),
        "det": la.det(G), "slogdet": la.slogdet(G), "eigvalsh": la.eigvalsh(S),
        "eigvalsh upper": la.eigvalsh(S + tt.tril(G, -1), lower=False),
        "eigh values": la.eigh(S)[0], "svd values": la.svd(R, compute_uv=False),
        "svd values of the vectors' svd": la.svd(R, full_matrices=False)[1],
        "expm": la.expm(G * 0.1), "kron": la.kron(G, R), "block_diag": la.block_diag(G, R),
        "lstsq": la.lstsq(R, R[..., :2] + 1.0)[0],
        "matrix_power": la.matrix_power(G, 3), "norm 2": la.norm(R, ord=2),
        "lu": la.lu(G), "lu p_indices": la.lu(G, p_indices=True),
        "lu permute_l": la.lu(R, permute_l=True),
        "generalized eigh values": la.eigh(S, S + 2 * tt.eye(4))[0],
    }
    if G.type.ndim == 2:  # tensorinv and tensorsolve take one tensor
        out["tensorinv"] = la.tensorinv(G, ind=1)
        out["tensorsolve"] = la.tensorsolve(G, v)
        out["lstsq residuals and rank"] = la.lstsq(R, R[..., :2] + 1.0)[1:3]
    return out


def _compile(outputs: dict, x, mode):
    names = list(outputs)
    flat, counts = [], []
    for name in names:
        value = outputs[name]
        value = list(value) if isinstance(value, (list, tuple)) else [value]
        flat += value
        counts.append(len(value))
    f = tg.function(list(x.values()), flat, mode=mode, on_unused_input="ignore")

    def call(data):
        results = f(*[data[k] for k in x])
        grouped, k = {}, 0
        for name, n in zip(names, counts):
            grouped[name] = results[k:k + n]
            k += n
        return grouped
    return call


def _tolerance(dtype):
    return {"rtol": 2e-3, "atol": 2e-3} if dtype == "float32" else {"rtol": 1e-7, "atol": 1e-9}


@pytest.mark.parametrize("mode, batch, dtype", MODES_SHAPES_AND_DTYPES)
def test_every_unique_output_equals_perform(mode, batch, dtype):
    x = _inputs(dtype, batch)
    data = _data(dtype, batch)
    got = _compile(_unique(x), x, mode)(data)
    want = _compile(_unique(x), x, REFERENCE)(data)
    for name in want:
        for g, w in zip(got[name], want[name]):
            assert g.dtype == w.dtype, f"{name}: {g.dtype} where perform gives {w.dtype}"
            np.testing.assert_allclose(g, w, err_msg=name, **_tolerance(dtype))


def _vectors(x):
    """Outputs whose vectors LAPACK may choose otherwise (signs, phases): compared through
    what they must satisfy."""
    G, S, R = x["G"], x["S"], x["R"]
    w, v = la.eigh(S)
    q, r = la.qr(R)
    qe, re = la.qr(R, mode="economic")
    u, s, vh = la.svd(R)
    ue, se, vhe = la.svd(R, full_matrices=False)
    gw, gv = la.eigh(S, S + 2 * tt.eye(4))
    return {"eigh": (w, v), "qr": (q, r), "qr economic": (qe, re),
            "qr r": la.qr(R, mode="r"), "svd": (u, s, vh), "svd economic": (ue, se, vhe),
            "generalized eigh": (gw, gv), "eig": la.eig(G)}


def _check_vectors(got, data, dtype):
    tol = _tolerance(dtype)
    S, R, G = data["S"], data["R"], data["G"]
    T = np.swapaxes
    eye = np.eye
    w, v = got["eigh"]
    np.testing.assert_allclose(v @ (w[..., None] * T(v, -1, -2)), S, **tol)
    q, r = got["qr"]
    assert q.shape[-2:] == (5, 5) and r.shape[-2:] == (5, 3)
    np.testing.assert_allclose(q @ r, R, **tol)
    np.testing.assert_allclose(T(q, -1, -2) @ q, np.broadcast_to(eye(5), q.shape), **tol)
    np.testing.assert_allclose(np.tril(r, -1), 0 * r, **tol)
    qe, re = got["qr economic"]
    np.testing.assert_allclose(qe @ re, R, **tol)
    (rr,) = got["qr r"]
    assert rr.shape == r.shape
    np.testing.assert_allclose(np.abs(rr), np.abs(r), **tol)  # R is unique up to row signs
    for name, shape in (("svd", (5, 5)), ("svd economic", (5, 3))):
        u, s, vh = got[name]
        assert u.shape[-2:] == shape
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], R, **tol)
        np.testing.assert_allclose(T(u, -1, -2) @ u, np.broadcast_to(eye(shape[1]), u.shape[:-2] + (shape[1],) * 2), **tol)
    gw, gv = got["generalized eigh"]
    B = S + 2 * eye(4)
    np.testing.assert_allclose(S @ gv, (B @ gv) * gw[..., None, :], **tol)
    np.testing.assert_allclose(T(gv, -1, -2) @ B @ gv, np.broadcast_to(eye(4), S.shape), **tol)
    if "eig" not in got:
        return
    ew, ev = got["eig"]
    np.testing.assert_allclose(G @ ev, ev * ew[..., None, :], **tol)


@pytest.mark.parametrize("mode, batch, dtype", MODES_SHAPES_AND_DTYPES)
def test_vectors_satisfy_their_definitions(mode, batch, dtype):
    x = _inputs(dtype, batch)
    data = _data(dtype, batch)
    outputs = _vectors(x)
    if mode != "JAX":
        outputs.pop("eig")  # complex outputs: refused (see test_refusals_name_the_op)
    got = _compile(outputs, x, mode)(data)
    want = _compile(outputs, x, REFERENCE)(data)
    for name in got:
        for g, w in zip(got[name], want[name]):
            assert g.dtype == w.dtype and g.shape == w.shape, name
    _check_vectors(got, data, dtype)


@pytest.mark.parametrize("mode", MODES)
def test_blockwise_broadcasts_batch_axes_and_takes_an_empty_batch(mode):
    a, b = tt.tensor3("a"), tt.tensor4("b")
    f = tg.function([a, b], [la.solve(a, b), la.det(a)], mode=mode)
    rng = np.random.default_rng(1)
    av = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    bv = rng.standard_normal((4, 1, 3, 2))
    x, d = f(av, bv)
    assert x.shape == (4, 2, 3, 2)
    np.testing.assert_allclose(x, np.linalg.solve(av, bv), rtol=1e-10)
    np.testing.assert_allclose(d, np.linalg.det(av), rtol=1e-10)
    empty = np.zeros((0, 3, 3)), np.zeros((1, 0, 3, 2))
    want = tg.function([a, b], [la.solve(a, b), la.det(a)], mode=REFERENCE)(*empty)
    assert [v.shape for v in f(*empty)] == [v.shape for v in want]


def _not_positive_definite_stack():
    s = np.stack([np.eye(3) * 2.0, -np.eye(3), np.eye(3) * 4.0])
    return s


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_on_error_nan_gives_nan_for_that_matrix_only(mode):
    a = tt.tensor3("a")
    f = tg.function([a], la.cholesky(a, on_error="nan"), mode=mode)
    out = f(_not_positive_definite_stack())
    assert np.isnan(out[1]).all()
    np.testing.assert_allclose(out[[0, 2]], np.sqrt(_not_positive_definite_stack()[[0, 2]]))
    m = tt.matrix("m")
    g = tg.function([m], la.cholesky(m, on_error="nan"), mode=mode)
    assert np.isnan(g(-np.eye(3))).all()


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_on_error_raise_and_singular_matrices_raise_linalgerror(mode):
    a = tt.tensor3("a")
    f = tg.function([a], la.cholesky(a, on_error="raise"), mode=mode)
    with pytest.raises(np.linalg.LinAlgError, match="cholesky: the matrix is not positive "
                                                    "definite"):
        f(_not_positive_definite_stack())
    np.testing.assert_allclose(f(np.stack([np.eye(3)] * 2)), np.stack([np.eye(3)] * 2))
    m = tt.matrix("m")
    singular = np.ones((3, 3))
    for build, message in ((la.inv, "inv: the matrix is singular"),
                           (lambda z: la.solve(z, z), "solve: the matrix is singular"),
                           (lambda z: la.lu_factor(z)[0], "lu_factor: the matrix is singular")):
        g = tg.function([m], build(m), mode=mode)
        with pytest.raises(np.linalg.LinAlgError, match=message):
            g(singular)
        g(np.eye(3))  # the function still works after a failed call
    np.testing.assert_allclose(tg.function([m], la.det(m), mode=mode)(singular), 0.0)


@pytest.mark.parametrize("mode", MODES)
def test_refusals_name_the_op(mode):
    m = tt.matrix("m")
    refused = {"JAX": [la.qz(m, m)[0], la.solve_discrete_are(m, m, m, m)],
               "NUMBA": [la.schur(m)[0], la.qz(m, m)[0], la.solve_discrete_are(m, m, m, m),
                         la.eig(m)[0]],
               "PYTORCH": [la.schur(m)[0], la.qz(m, m)[0], la.solve_discrete_are(m, m, m, m),
                           la.eig(m)[0]]}[mode]
    for out in refused:
        name = type(out.owner.op).__name__ if out.owner.op.__class__.__name__ != "Blockwise" \
            else type(out.owner.op.core_op).__name__
        with pytest.raises(UnsupportedOpsError, match=name):
            tg.function([m], out, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_qr_pivoting_runs_in_jax_and_qr_raw_nowhere_naming_the_variant(mode):
    """``qr(pivoting=True)``: JAX's ``geqp3`` (scipy's values, the order int32), refused by
    NUMBA and PYTORCH (no ``geqp3``); ``qr(mode='raw')``: refused by all three (JAX has no
    ``geqrf`` in its API, ``torch.geqrf`` does not trace, Numba has none), the error naming
    the variant."""
    import scipy.linalg

    m, s = tt.dmatrix("m"), tt.dtensor3("s")
    if mode == "JAX":
        f = tg.function([m, s], [*la.qr(m, pivoting=True),
                                 *la.qr(s, mode="economic", pivoting=True)], mode=mode)
        rng = np.random.default_rng(4)
        a, b = rng.standard_normal((5, 3)), rng.standard_normal((2, 3, 4))
        got = f(a, b)
        for g, w in zip(got[:3], scipy.linalg.qr(a, pivoting=True)):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, atol=1e-12)
        for i in range(2):
            for g, w in zip(got[3:], scipy.linalg.qr(b[i], mode="economic", pivoting=True)):
                np.testing.assert_allclose(g[i], w, atol=1e-12)
    else:
        with pytest.raises(UnsupportedOpsError, match=r"qr\(pivoting=True\) has no"):
            tg.function([m], la.qr(m, pivoting=True), mode=mode)
    with pytest.raises(UnsupportedOpsError, match=r"qr\(mode='raw'\) has no"):
        tg.function([m], la.qr(m, mode="raw"), mode=mode)


@pytest.mark.skipif(not available("jax"), reason="no jax")
def test_jax_schur_is_scipy_s_under_scipy_s_rules():
    """JAX's ``schur`` applies scipy's rules (a real matrix with ``output='complex'`` cast to
    complex, a complex one ignoring ``output='real'``) on the LAPACK scipy ships (jaxlib
    calls scipy's), so its values are scipy's, the Schur vectors' phases included."""
    import scipy.linalg

    rng = np.random.default_rng(666)
    for dtype, output in (("float64", "complex"), ("complex128", "real"),
                          ("complex128", "complex")):
        a = rng.normal(size=(5, 5))
        if dtype.startswith("complex"):
            a = a + 1j * rng.normal(size=(5, 5))
        x = tt.tensor("x", dtype=dtype, shape=(None, None))
        got = tg.function([x], la.schur(x, output=output), mode="JAX")(a)
        for g, w in zip(got, scipy.linalg.schur(a, output=output)):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_function_with_linalg_runs_in_threads_and_pickles(mode):
    a, b = tt.tensor3("a"), tt.tensor3("b")
    f = tg.function([a, b], la.cho_solve((la.cholesky(a), True), b), mode=mode)
    rng = np.random.default_rng(3)
    g = rng.standard_normal((8, 2, 3, 3))
    spd = g @ np.swapaxes(g, -1, -2) + 3 * np.eye(3)
    rhs = rng.standard_normal((8, 2, 3, 2))
    want = np.linalg.solve(spd, rhs)
    wrong = []

    def work(k):
        for _ in range(5):
            if not np.allclose(f(spd[k], rhs[k]), want[k], rtol=1e-9):
                wrong.append(k)

    run_in_threads(work, 8)
    assert wrong == []
    h = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(h(spd[0], rhs[0]), want[0], rtol=1e-9)


@pytest.mark.parametrize("mode", [pytest.param(*p.values, marks=list(p.marks) + (
    [pytest.mark.slow] if p.values[0] == "NUMBA" else []), id=p.values[0]) for p in MODES])
def test_gradients_of_cholesky_solve_slogdet_compile_in_each_mode(mode):
    a, b = tt.tensor3("a"), tt.matrix("b")
    spd = a @ a.mT + 3 * tt.eye(3)
    L = la.cholesky(spd)
    cost = (la.solve(spd, b) ** 2).sum() + la.slogdet(spd)[1].sum() + (L ** 2).sum()
    grads = tg.grad(cost, [a, b])
    rng = np.random.default_rng(5)
    data = rng.standard_normal((2, 3, 3)), rng.standard_normal((3, 2))
    got = tg.function([a, b], grads, mode=mode)(*data)
    want = tg.function([a, b], grads, mode=REFERENCE)(*data)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)
