"""Linear algebra in C (link/c/ops/batched.py, lapack.py, linalg.py): every op of
tensorgraph.tensor.linalg given C gives its perform's values in FAST_RUN, as the core op (one
matrix) and as Blockwise over a batch (broadcast, strided inputs), float32 and float64; the
error and NaN rules per batch index; no linalg node runs Python; threads, pickling and the
quick tier's bits."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.c.linkers import CLinker
from tensorgraph.tensor import linalg as la
from tensorgraph.tensor.blockwise import Blockwise
from thread_checks import run_in_threads

FLOATS = ("float32", "float64")
B, N = 4, 5   # batch size, matrix size


def _linalg_nodes(f):
    """The nodes of f's graph whose op (or Blockwise's core op) comes from tensor.linalg."""
    def core(op):
        return op.core_op if isinstance(op, Blockwise) else op
    return [n for n in f.maker.fgraph.toposort()
            if type(core(n.op)).__module__.startswith("tensorgraph.tensor.linalg")]


def _python_nodes(f):
    """The nodes f's optimized VM runs in Python (not through its C)."""
    return [n for n in f.maker.fgraph.toposort() if n not in f.vm.cgraph.index]


def _data(dtype, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((B, N, N))
    spd = g @ g.transpose(0, 2, 1) + N * np.eye(N)
    tall = rng.standard_normal((B, N + 3, N))
    return {"S": spd.astype(dtype), "G": (g + 3 * np.eye(N)).astype(dtype),
            "T": tall.astype(dtype),
            "b": rng.standard_normal((1, N, 2)).astype(dtype),   # broadcast over the batch
            "v": rng.standard_normal(N).astype(dtype),
            "bt": rng.standard_normal((B, N + 3, 2)).astype(dtype),
            "M": spd[0].astype(dtype), "W": (g[1] + 3 * np.eye(N)).astype(dtype),
            "K": rng.integers(-3, 4, size=(2, 3)).astype("int16"),
            "T4": rng.standard_normal((2, 3, 6)).astype(dtype)}


def _graph(dtype):
    """Every op with C, batched and unbatched: {name: output}, the inputs."""
    S = tt.tensor3("S", dtype=dtype)
    G = tt.tensor3("G", dtype=dtype)
    T = tt.tensor3("T", dtype=dtype)
    b = tt.tensor("b", dtype=dtype, shape=(1, None, None))
    v = tt.vector("v", dtype=dtype)
    bt = tt.tensor3("bt", dtype=dtype)
    M = tt.matrix("M", dtype=dtype)
    W = tt.matrix("W", dtype=dtype)
    K = tt.matrix("K", dtype="int16")
    T4 = tt.tensor3("T4", dtype=dtype)
    St = S.mT                     # transposed strides (S is symmetric)
    Gr = G[:, :, ::-1]            # negative strides
    L = la.cholesky(S)
    out = {}
    for tag, A, gen, rhs in (("batch", St, Gr, b), ("one", M, W, b[0])):
        c = la.cholesky(A)
        out[f"cholesky {tag}"] = c
        out[f"cholesky upper {tag}"] = la.cholesky(A, lower=False)
        for kind in ("gen", "sym", "pos", "tridiagonal"):
            out[f"solve {kind} {tag}"] = la.solve(A, rhs, assume_a=kind, lower=kind == "pos")
        out[f"solve vector {tag}"] = la.solve(gen, v, b_ndim=1)
        for trans in (0, 1, 2):
            out[f"solve_triangular {trans} {tag}"] = la.solve_triangular(c, rhs, lower=True,
                                                                         trans=trans)
        out[f"solve_triangular unit upper {tag}"] = la.solve_triangular(
            c.mT if tag == "batch" else c.T, rhs, lower=False, unit_diagonal=True)
        out[f"cho_solve {tag}"] = la.cho_solve((c, True), rhs)
        lu, piv = la.lu_factor(gen)
        out[f"lu_factor {tag}"], out[f"pivots {tag}"] = lu, piv
        out[f"lu_solve {tag}"] = la.lu_solve((lu, piv), rhs)
        out[f"lu_solve trans {tag}"] = la.lu_solve((lu, piv), rhs, trans=True)
        out[f"permutation {tag}"] = la.pivot_to_permutation(piv)
        out[f"permutation inverse {tag}"] = la.pivot_to_permutation(piv, inverse=True)
        for k, o in enumerate(la.lu(gen)):
            out[f"lu {k} {tag}"] = o
        for k, o in enumerate(la.lu(gen, p_indices=True)):
            out[f"lu p_indices {k} {tag}"] = o
        for k, o in enumerate(la.lu(gen, permute_l=True)):
            out[f"lu permute_l {k} {tag}"] = o
        out[f"inv {tag}"] = la.inv(gen)
        out[f"det {tag}"] = la.det(gen)
        sign, logabs = la.slogdet(gen)
        out[f"slogdet sign {tag}"], out[f"slogdet log {tag}"] = sign, logabs
        out[f"pinv hermitian {tag}"] = la.pinv(A, hermitian=True)
    for k, o in enumerate(la.lu(T)):
        out[f"lu tall {k}"] = o
    out["pinv tall"] = la.pinv(T)
    out["pinv wide"] = la.pinv(T.mT)
    for k, o in enumerate(la.lstsq(T, bt)):
        out[f"lstsq batch {k}"] = o
    for k, o in enumerate(la.lstsq(T[0], bt[0, :, 0])):
        out[f"lstsq vector {k}"] = o
    rank_deficient = tt.concatenate([T[1], T[1][:, :1]], axis=1)
    for k, o in enumerate(la.lstsq(rank_deficient, bt[1])):
        out[f"lstsq rank deficient {k}"] = o
    out["tensorsolve"] = la.tensorsolve(T4.reshape((6, 2, 3)), tt.concatenate([v, v[:1]]))
    out["tensorsolve axes"] = la.tensorsolve(T4.reshape((6, 2, 3)),
                                             tt.ones((2, 3), dtype=dtype) + v[0], axes=0)
    out["tensorinv"] = la.tensorinv(T4.reshape((6, 2, 3)) + 4 * tt.eye(6).reshape((6, 2, 3)),
                                    ind=1)
    out["kron"] = la.kron(W, M[:2, :3])
    out["kron int"] = la.kron(K, K.T)
    out["kron mixed"] = la.kron(K, W)
    out["block_diag batch"] = la.block_diag(St, K.astype("float32"), Gr[:, :2])
    out["block_diag int"] = la.block_diag(K, K + 1)
    out["cholesky of the factor's product"] = la.cholesky(L @ L.mT)
    out["det of integers"] = la.det(K[:, :2])          # int16 read as float32
    out["solve of integers"] = la.solve(K[:, :2] + 10 * tt.eye(2, dtype="int16"), v[:2])
    return [S, G, T, b, v, bt, M, W, K, T4], out


@pytest.fixture(scope="module", params=FLOATS)
def compiled(request):
    dtype = request.param
    inputs, out = _graph(dtype)
    fast = tg.function(inputs, list(out.values()), mode="FAST_RUN")
    ref = tg.function(inputs, list(out.values()), mode="FAST_COMPILE")
    d = _data(dtype)
    data = [d[v.name] for v in inputs]
    return dtype, list(out), fast, ref, data


def test_every_op_in_c_gives_perform_values(compiled):
    dtype, names, fast, ref, data = compiled
    tol = {"float32": 2e-4, "float64": 1e-10}[dtype]
    wrong = []
    for name, got, want in zip(names, fast(*data), ref(*data)):
        got, want = np.asarray(got), np.asarray(want)
        if got.dtype != want.dtype or got.shape != want.shape or not np.allclose(
                got, want, rtol=tol, atol=tol * 10):
            wrong.append((name, got.dtype, want.dtype, got.shape, want.shape))
    assert not wrong


def test_no_linalg_node_runs_python_in_fast_run(compiled):
    _, _, fast, _, _ = compiled
    nodes = _linalg_nodes(fast)
    assert len(nodes) > 40
    assert any(isinstance(n.op, Blockwise) for n in nodes)
    assert any(not isinstance(n.op, Blockwise) for n in nodes)
    assert [n for n in _python_nodes(fast) if n in nodes] == []


def _first_line(call, *args):
    with pytest.raises(Exception) as info:
        call(*args)
    return type(info.value), str(info.value).splitlines()[0]


_BAD = {"minus eye": -np.eye(3), "zeros": np.zeros((3, 3)), "ones": np.ones((3, 3)),
        "strict lower": np.tril(np.ones((3, 3)), -1)}


@pytest.mark.parametrize("build, bad", [
    (lambda A, b: la.cholesky(A, on_error="raise"), "minus eye"),
    (lambda A, b: la.inv(A), "zeros"),
    (lambda A, b: la.solve(A, b), "ones"),
    (lambda A, b: la.solve(A, b, assume_a="sym"), "zeros"),
    (lambda A, b: la.solve(A, b, assume_a="pos"), "minus eye"),
    (lambda A, b: la.solve(A, b, assume_a="tridiagonal"), "zeros"),
    (lambda A, b: la.solve_triangular(A, b, lower=True), "strict lower"),
    (lambda A, b: la.lu_factor(A)[0], "zeros"),
], ids=["cholesky", "inv", "solve", "solve sym", "solve pos", "solve tridiagonal",
        "solve_triangular", "lu_factor"])
@pytest.mark.parametrize("batch, index", [((5,), (3,)), ((2, 3), (1, 2)), ((), ())])
def test_a_bad_matrix_raises_perform_error_with_its_batch_index(build, bad, batch, index):
    """The first line (op, what is wrong, batch index) is perform's, and the class; a later
    bad matrix does not hide the first one."""
    A = tt.tensor("A", dtype="float64", shape=(None,) * (len(batch) + 2))
    b = tt.tensor("b", dtype="float64", shape=(None,) * (len(batch) + 2))
    out = build(A, b)
    stack = np.broadcast_to(2 * np.eye(3), batch + (3, 3)).copy()
    stack[index] = _BAD[bad]
    if batch:
        stack[(-1,) * len(batch)] = _BAD[bad]      # a later one
    args = (stack, np.ones(batch + (3, 1)))
    fast = tg.function([A, b], out, mode="FAST_RUN", on_unused_input="ignore")
    assert not [n for n in _python_nodes(fast) if n in _linalg_nodes(fast)]
    ref = tg.function([A, b], out, mode="FAST_COMPILE", on_unused_input="ignore")
    kind, line = _first_line(fast, *args)
    assert kind is np.linalg.LinAlgError
    assert (kind, line) == _first_line(ref, *args)
    if batch:
        assert line.endswith(f" (at batch index {index[0] if len(index) == 1 else index})")
    else:
        assert "batch index" not in line


def test_a_shape_error_is_perform_error():
    A = tt.tensor3("A")
    fast = tg.function([A], la.cholesky(A), mode="FAST_RUN")
    ref = tg.function([A], la.cholesky(A), mode="FAST_COMPILE")
    x = np.ones((2, 3, 4))
    assert _first_line(fast, x) == _first_line(ref, x) == (
        ValueError, "cholesky: expected a square matrix, got shape (3, 4) (at batch index 0)")
    S, b = tt.tensor3("S"), tt.tensor3("b")
    fast = tg.function([S, b], la.solve(S, b), mode="FAST_RUN")
    ref = tg.function([S, b], la.solve(S, b), mode="FAST_COMPILE")
    args = (np.ones((2, 3, 3)), np.ones((2, 4, 1)))
    assert _first_line(fast, *args) == _first_line(ref, *args)
    assert _first_line(fast, np.ones((2, 3, 3)), np.ones((3, 3, 1)))[0] is ValueError


def test_cholesky_on_error_nan_gives_nan_for_the_bad_matrix_only_and_nanguard_names_it():
    from tensorgraph.compile.nanguardmode import NanGuardError, NanGuardMode
    from tensorgraph.compile.stepper import Stepper

    A = tt.tensor4("A")
    L = la.cholesky(A)   # the culprit
    f = tg.function([A], L, mode="FAST_RUN")
    stack = np.broadcast_to(2 * np.eye(3), (2, 3, 3, 3)).copy()
    stack[1, 0] = -np.eye(3)
    out = f(stack)
    assert np.isnan(out[1, 0]).all()
    assert not np.isnan(np.delete(out.reshape(6, 3, 3), 3, axis=0)).any()
    np.testing.assert_allclose(out[0, 2], np.sqrt(2) * np.eye(3))
    guarded = tg.function([A], L.sum(), mode=NanGuardMode(linker="cvm", optimizer="fast_run"))
    assert not _python_nodes(guarded)
    with pytest.raises(NanGuardError, match=r"(?s)Cholesky.*has 9 nan.*L = la.cholesky\(A\)"):
        guarded(stack)
    found = Stepper(tg.function([A], L.sum()), stack).run_until_nonfinite()
    assert "Cholesky" in str(found.node.op) and found.node.op.core_op.on_error == "nan"


def test_the_stepper_stops_at_a_failing_linalg_node_with_its_error():
    from tensorgraph.compile.stepper import Stepper

    A = tt.tensor3("A")
    f = tg.function([A], la.inv(A).sum(), mode="FAST_RUN")
    stepper = Stepper(f, np.zeros((2, 3, 3)))
    with pytest.raises(np.linalg.LinAlgError, match=r"^inv: the matrix is singular \(at batch "
                                                    r"index 0\)\n  in node Blockwise"):
        stepper.step(5)
    assert isinstance(stepper.failed, np.linalg.LinAlgError)


def test_lstsq_residual_sizes_follow_each_item_rank_as_perform():
    """Residuals exist when every item has full column rank, are empty when none has, and a
    batch mixing both is perform's error."""
    a, b = tt.tensor3("a"), tt.tensor3("b")
    fast = tg.function([a, b], la.lstsq(a, b)[1:3], mode="FAST_RUN")
    ref = tg.function([a, b], la.lstsq(a, b)[1:3], mode="FAST_COMPILE")
    rng = np.random.default_rng(1)
    full = rng.standard_normal((3, 5, 2))
    low = np.concatenate([full[:, :, :1]] * 2, axis=2)
    rhs = rng.standard_normal((3, 5, 4))
    for x in (full, low):
        for got, want in zip(fast(x, rhs), ref(x, rhs)):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    mixed = full.copy()
    mixed[1] = low[1]
    assert _first_line(fast, mixed, rhs) == _first_line(ref, mixed, rhs)


def test_calls_from_many_threads_give_the_lone_call_values():
    S, b = tt.tensor3("S"), tt.tensor3("b")
    L = la.cholesky(S)
    f = tg.function([S, b], [L, la.solve(S, b, assume_a="pos"), la.slogdet(S)[1]])
    data = [_data("float64", seed=k) for k in range(6)]
    alone = [f(d["S"], d["b"]) for d in data]
    found = [None] * len(data)

    def work(k):
        for _ in range(4):
            found[k] = f(data[k]["S"], data[k]["b"])

    run_in_threads(work, len(data))
    for lone, got in zip(alone, found):
        for x, y in zip(lone, got):
            np.testing.assert_array_equal(x, y)


def test_a_pickled_function_runs_its_linalg_in_c():
    S, b = tt.tensor3("S"), tt.tensor3("b")
    f = tg.function([S, b], la.solve(la.cholesky(S), b, assume_a="lower triangular"))
    d = _data("float64")
    g = pickle.loads(pickle.dumps(f))
    assert not [n for n in _python_nodes(g) if n in _linalg_nodes(g)]
    np.testing.assert_array_equal(g(d["S"], d["b"]), f(d["S"], d["b"]))


def _quick_run(f, data):
    """f's graph on a quick VM in which no node function is ready (a cold module cache)."""
    vm = CLinker("cvm", None, whole_graph=True)._make_c_vm(f.maker.fgraph, None, None, ready={})
    assert vm.tier == "quick"
    for cell, value in zip(vm.input_storage, data):
        cell[0] = value
    vm()
    return [cell[0] for cell in vm.output_storage]


@pytest.mark.parametrize("dtype", FLOATS)
def test_the_quick_tier_gives_the_optimized_bits(dtype):
    S, G, b = tt.tensor3("S", dtype=dtype), tt.tensor3("G", dtype=dtype), tt.tensor3("b", dtype=dtype)
    outputs = [la.cholesky(S), la.solve(G, b), la.inv(G), la.det(G), la.pinv(G),
               la.lu_factor(G)[0], la.cho_solve((la.cholesky(S), True), b)]
    f = tg.function([S, G, b], outputs)
    d = _data(dtype)
    args = [d["S"], d["G"], np.broadcast_to(d["b"], (B, N, 2))]
    for quick, optimized in zip(_quick_run(f, args), f(*args)):
        assert quick.dtype == optimized.dtype and quick.shape == optimized.shape
        assert np.array_equal(quick.view(np.uint8), optimized.view(np.uint8))
