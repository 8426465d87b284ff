"""The special functions in FAST_RUN: every node has C (scipy's compiled function called
through a pointer, tensorgraph.link.c.scipy_calls), and gives scipy's values, far tails
included, in this process, from the module cache, and in a process unpickling the function."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.special as sp

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.c.codegen import node_c_code
from tensorgraph.tensor.elemwise import Elemwise


def _grid(*axes):
    """Every combination of the values of ``axes`` (one array per argument)."""
    return [a.ravel() for a in np.meshgrid(*[np.asarray(v, dtype=float) for v in axes])]


_SHAPE = [1e-3, 0.1, 0.5, 1.0, 2.5, 10.0, 55.0, 300.0, 4e3]
_X = [0.0, 1e-8, 0.01, 0.3, 1.0, 4.0, 20.0, 90.0, 700.0, 5e3]
_REAL = [-1e4, -60.0, -38.5, -8.0, -1.0, -1e-9, 0.0, 1e-9, 0.7, 5.0, 9.0, 40.0, 800.0]
_UNIT = [0.0, 1e-12, 1e-4, 0.05, 0.5, 0.9, 0.999, 1.0 - 1e-12, 1.0]

# name: (tensor function, arguments, scipy function)
CASES = {
    "gammainc": (tt.gammainc, _grid(_SHAPE, _X), sp.gammainc),
    "gammaincc": (tt.gammaincc, _grid(_SHAPE, _X), sp.gammaincc),
    "gammaincinv": (tt.gammaincinv, _grid(_SHAPE, _UNIT), sp.gammaincinv),
    "gammainccinv": (tt.gammainccinv, _grid(_SHAPE, _UNIT), sp.gammainccinv),
    "betainc": (tt.betainc, _grid(_SHAPE[:7], _SHAPE[:7], _UNIT), sp.betainc),
    "betaincinv": (tt.betaincinv, _grid(_SHAPE[:7], _SHAPE[:7], _UNIT), sp.betaincinv),
    "i0": (tt.i0, [np.array(_REAL[1:-1])], sp.i0),
    "i1": (tt.i1, [np.array(_REAL[1:-1])], sp.i1),
    "i0e": (tt.i0e, [np.array(_REAL)], sp.i0e),
    "i1e": (tt.i1e, [np.array(_REAL)], sp.i1e),
    "ive": (tt.ive, _grid([0.0, 0.5, 1.0, 2.0, 7.5, 40.0], _REAL), sp.ive),
    "kve": (tt.kve, _grid([0.0, 0.5, 1.0, 2.0, 7.5, 40.0], _X[1:]), sp.kve),
    "kv": (tt.kv, _grid([0.0, 0.5, 1.0, 2.0, 7.5, 40.0], _X[1:-2]), sp.kv),
    "ndtr": (tt.ndtr, [np.array(_REAL)], sp.ndtr),
    "log_ndtr": (tt.log_ndtr, [np.array(_REAL)], sp.log_ndtr),
    "owens_t": (tt.owens_t, _grid(_REAL[3:-1], [-5.0, -0.5, 0.0, 0.3, 1.0, 20.0]), sp.owens_t),
    "hyp2f1": (tt.hyp2f1, _grid([0.5, 1.0, 3.0], [-2.5, 1.5], [2.0, 4.5],
                                [-3.0, -0.5, 0.0, 0.3, 0.9]), sp.hyp2f1),
    "erfcx": (tt.erfcx, [np.array(_REAL)], sp.erfcx),
    "erfinv": (tt.erfinv, [np.array([-1.0, -0.999999, -0.3, 0.0, 1e-10, 0.5, 0.99, 1.0])],
               sp.erfinv),
    "erfcinv": (tt.erfcinv, [np.array([0.0, 1e-300, 1e-10, 0.3, 1.0, 1.7, 2.0])], sp.erfcinv),
    "psi": (tt.psi, [np.array([-7.5, -0.5, 1e-6, 0.3, 1.0, 6.0, 1e5])], sp.psi),
    "j0": (tt.j0, [np.array(_REAL)], sp.j0),
    "j1": (tt.j1, [np.array(_REAL)], sp.j1),
    "jv": (tt.jv, _grid([-1.5, 0.0, 0.5, 2.0, 7.5, 40.0], _REAL[5:]), sp.jv),
    "gammau": (tt.gammau, _grid(_SHAPE[:7], _X[:8]), lambda k, x: sp.gammaincc(k, x) * sp.gamma(k)),
    "gammal": (tt.gammal, _grid(_SHAPE[:7], _X[:8]), lambda k, x: sp.gammainc(k, x) * sp.gamma(k)),
}


def _compile(name, dtype, mode="FAST_RUN"):
    function, args, _ = CASES[name]
    inputs = [tt.vector(f"a{k}", dtype=dtype) for k in range(len(args))]
    return tg.function(inputs, function(*inputs), mode=mode)


def _runs_c(f) -> bool:
    sub = {"ctx": "ctx", "fail": "", "define": lambda _text: None}
    nodes = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]
    return bool(nodes) and all(node_c_code(
        n, "node", [f"i{k}" for k in range(len(n.inputs))],
        [f"o{k}" for k in range(len(n.outputs))], sub) is not None for n in nodes)


def _assert_close(got, want, rtol):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite], equal_nan=True)
    scale = np.maximum(np.abs(want[finite]), np.finfo(float).tiny)
    worst = np.max(np.abs(got[finite] - want[finite]) / scale, initial=0.0)
    assert worst <= rtol, f"relative error {worst:.3g}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_run_computes_scipys_float64_values_in_c(name):
    f = _compile(name, "float64")
    assert _runs_c(f), "a node runs perform in FAST_RUN"
    _, args, reference = CASES[name]
    with np.errstate(all="ignore"):
        want = reference(*args)
    _assert_close(f(*args), want, 1e-12)


@pytest.mark.parametrize("name", ["gammainc", "betainc", "betaincinv", "log_ndtr", "i1e",
                                  "erfinv", "psi"])
def test_float32_stays_float32_with_scipys_float32_values(name):
    f = _compile(name, "float32")
    assert _runs_c(f)
    _, args, reference = CASES[name]
    args = [np.asarray(a, dtype="float32") for a in args]
    out = f(*args)
    assert out.dtype == np.float32
    with np.errstate(all="ignore"):
        want = reference(*args)
    assert want.dtype == np.float32
    _assert_close(out, want, 4e-7)


def test_a_new_process_runs_the_cached_c_of_an_unpickled_function(tmp_path):
    # the addresses of scipy's functions differ by process: the library loaded from the cache
    # gets them when it is loaded (a null pointer would crash the child)
    f = _compile("gammainc", "float64")
    args = CASES["gammainc"][1]
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(f))
    code = ("import pickle, sys, numpy as np\n"
            "f = pickle.loads(open(sys.argv[1], 'rb').read())\n"
            "args = [np.asarray(a) for a in eval(sys.argv[2])]\n"
            "print(repr(f(*args).tolist()))\n")
    done = subprocess.run([sys.executable, "-c", code, str(path),
                           repr([a.tolist() for a in args])],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.array(eval(done.stdout)), f(*args))
