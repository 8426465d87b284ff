"""A compiled function using linalg ops, called from many threads at once and pickled with
its graph (docs/architecture.md: every Function is thread-safe and pickles)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from thread_checks import run_in_threads

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.basic import graph_inputs
from tensorgraph.tensor import linalg as la
from linalg_cases import values


def _function(mode):
    a, b = tt.dtensor3("a"), tt.dtensor3("b")
    L = la.cholesky(a @ a.mT + 3 * tt.eye(3))
    x = la.cho_solve((L, True), b)
    return tg.function([a, b], [x, la.det(a), tg.grad(la.slogdet(a)[1].sum(), a)], mode=mode)


def _expected(a, b):
    spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    return [np.linalg.solve(spd, b), np.linalg.det(a),
            np.swapaxes(np.linalg.inv(a), -1, -2)]


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_many_threads_call_one_function(mode):
    f = _function(mode)
    problems = []

    def work(seed):
        for i in range(20):
            data = values("float64", batch=(1 + (seed + i) % 3,), seed=seed * 100 + i)
            try:
                got = f(data["a"], data["b"])
                for g, e in zip(got, _expected(data["a"], data["b"])):
                    np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                problems.append(repr(exc))

    run_in_threads(work, 6)
    assert not problems, problems[:3]


def test_function_and_graph_pickle():
    f = _function("FAST_RUN")
    data = values("float64", seed=9)
    g = pickle.loads(pickle.dumps(f))
    for got, want in zip(g(data["a"], data["b"]), f(data["a"], data["b"])):
        np.testing.assert_array_equal(got, want)
    a = tt.dtensor3("a")
    out = la.svd(a, compute_uv=False) + la.eigvalsh(a @ a.mT)
    out2 = pickle.loads(pickle.dumps(out))
    (a2,) = [v for v in graph_inputs([out2]) if v.name == "a"]
    np.testing.assert_allclose(out2.eval({a2: data["a"]}), out.eval({a: data["a"]}))
