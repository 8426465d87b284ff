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
