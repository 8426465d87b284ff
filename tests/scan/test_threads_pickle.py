"""A function with a scan called from eight threads at once, and pickled (in this process and
in another one)."""

import pickle
import subprocess
import sys

import numpy as np
import pytest

from thread_checks import run_in_threads

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.scan import scan

LINKERS = ["py", "vm", "vm_nogc", "c|py", "c|py_nogc", "cvm", "cvm_nogc", "c"]


def _rnn(mode):
    x = tt.dmatrix("x")
    h0 = tt.dvector("h0")
    w = tt.dmatrix("w")
    h, _ = scan(lambda x_t, h, w: tt.tanh(tt.dot(h, w) + x_t), sequences=x, outputs_info=h0,
                non_sequences=w, name="rnn")
    return tensorgraph.function([x, h0, w], [h, tensorgraph.grad(h.sum(), w)], mode=mode)


def _numpy_rnn(x, h0, w):
    out, h = [], h0
    for x_t in x:
        h = np.tanh(h @ w + x_t)
        out.append(h)
    return np.array(out)


@pytest.mark.parametrize("linker", LINKERS)
def test_eight_threads_share_a_function_with_a_scan(linker):
    f = _rnn(tensorgraph.Mode(linker=linker, optimizer="fast_run"))
    problems = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(15):
            n, size = rng.integers(1, 6), rng.integers(2, 5)
            x, h0 = rng.normal(size=(n, size)), rng.normal(size=size)
            w = rng.normal(size=(size, size)) * 0.5
            try:
                h, _ = f(x, h0, w)
            except Exception as exc:  # noqa: BLE001 - every failure is a finding
                problems.append(repr(exc)[:300])
                continue
            if not np.allclose(h, _numpy_rnn(x, h0, w)):
                problems.append(f"wrong values in thread {seed}")

    run_in_threads(work, 8)
    assert problems == []


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_pickled_function_with_scan_and_its_gradient(mode, tmp_path):
    f = _rnn(mode)
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(3, 3)))
    expected = f(*args)
    again = pickle.loads(pickle.dumps(f))
    for a, b in zip(again(*args), expected):
        np.testing.assert_allclose(a, b)
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(f))
    np.save(tmp_path / "args.npy", np.array(args, dtype=object), allow_pickle=True)
    code = ("import pickle, sys, numpy as np; f = pickle.load(open(sys.argv[1], 'rb')); "
            "args = np.load(sys.argv[2], allow_pickle=True); "
            "h, g = f(*args); print(float(h.sum()), float(g.sum()))")
    out = subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "args.npy")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert float(out[0]) == pytest.approx(expected[0].sum())
    assert float(out[1]) == pytest.approx(expected[1].sum())
