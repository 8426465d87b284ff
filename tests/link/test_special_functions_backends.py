"""The special functions in the whole-graph modes: JAX (jax.scipy.special), PYTORCH
(torch.special) and NUMBA (scipy's compiled functions, called by symbol) give scipy's values
where their library has the function, and refuse the others when compiling, with the back
end's UnsupportedOpsError naming them (docs/backends.md's table lists which)."""

import numpy as np
import pytest
import scipy.special as sp

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.backend import UnsupportedOpsError, available
from tensorgraph.scalar.special_derivatives import (
    betainc_da_scalar,
    gammainc_dk_scalar,
    hyp2f1_der_scalar,
)
from tensorgraph.tensor import math as tm

_K = np.array([0.3, 1.0, 2.5, 7.0, 30.0])
_X = np.array([0.01, 0.8, 2.0, 9.0, 45.0])
_U = np.array([1e-6, 0.2, 0.5, 0.8, 0.999])
_R = np.array([-30.0, -1.5, 0.0, 0.7, 12.0])

# name: (tensor function, arguments, scipy function)
CASES = {
    "gammainc": (tt.gammainc, (_K, _X), sp.gammainc),
    "gammaincc": (tt.gammaincc, (_K, _X), sp.gammaincc),
    "gammaincinv": (tt.gammaincinv, (_K, _U), sp.gammaincinv),
    "gammainccinv": (tt.gammainccinv, (_K, _U), sp.gammainccinv),
    "betainc": (tt.betainc, (_K, _K[::-1], _U), sp.betainc),
    "betaincinv": (tt.betaincinv, (_K, _K[::-1], _U), sp.betaincinv),
    "i0": (tt.i0, (_R,), sp.i0),
    "i1": (tt.i1, (_R,), sp.i1),
    "i0e": (tt.i0e, (_R,), sp.i0e),
    "i1e": (tt.i1e, (_R,), sp.i1e),
    "ive": (tt.ive, (_K, _R), sp.ive),
    "kve": (tt.kve, (_K, _X), sp.kve),
    "ndtr": (tt.ndtr, (_R,), sp.ndtr),
    "log_ndtr": (tt.log_ndtr, (_R,), sp.log_ndtr),
    "owens_t": (tt.owens_t, (_R, _K), sp.owens_t),
    "hyp2f1": (tt.hyp2f1, (_K[:3], _K[1:4], _K[2:] + 1, _U[:3] - 0.5), sp.hyp2f1),
    "erfcx": (tt.erfcx, (_R,), sp.erfcx),
    "j0": (tt.j0, (_R,), sp.j0),
    "j1": (tt.j1, (_R,), sp.j1),
    "jv": (tt.jv, (_K, _X), sp.jv),
    "gammau": (tt.gammau, (_K, _X), lambda k, x: sp.gammaincc(k, x) * sp.gamma(k)),
    "gammal": (tt.gammal, (_K, _X), lambda k, x: sp.gammainc(k, x) * sp.gamma(k)),
    "gammainc_dk": (tm.gammainc_dk, (_K, _X), np.vectorize(gammainc_dk_scalar)),
    "betainc_da": (tm.betainc_da, (_K, _K[::-1], _U), np.vectorize(betainc_da_scalar)),
    "hyp2f1_der": (lambda a, b, c, z: tm.hyp2f1_der(a, b, c, z, wrt=2),
                   (_K[:3] - 1, _K[1:4], _K[2:] + 1, _U[:3] - 0.5),
                   np.vectorize(lambda a, b, c, z: hyp2f1_der_scalar(a, b, c, z, 2))),
}
#: what each library lacks (the others it computes)
MISSING = {
    "JAX": {"gammaincinv", "gammainccinv", "betaincinv", "ive", "kve", "betainc_da", "j0",
            "j1", "jv"},
    "PYTORCH": {"gammaincinv", "gammainccinv", "betainc", "betaincinv", "ive", "kve",
                "owens_t", "hyp2f1", "gammainc_dk", "betainc_da", "jv", "hyp2f1_der"},
    "NUMBA": {"gammainc_dk", "betainc_da"},
}
#: float64 agreement: Numba calls scipy's own code; JAX and PyTorch have their own
#: (PyTorch's bessel_j0 is 3e-10 off near its zeros: j0(12))
RTOL = {"JAX": 1e-12, "PYTORCH": 1e-9, "NUMBA": 0.0}
#: JAX and PyTorch compute ndtr as erfc(-x / sqrt(2)) / 2 in double, which underflows to 0 below
#: about -27 (scipy: 5e-198 at -30); log_ndtr is the function for that tail
ATOL = {"JAX": 1e-150, "PYTORCH": 1e-150, "NUMBA": 0.0}


def _needs(mode):
    library = {"JAX": "jax", "PYTORCH": "torch", "NUMBA": "numba"}[mode]
    if not available(library):
        pytest.skip(f"{library} is not installed")


def _inputs(args, dtype):
    return [tt.vector(f"a{k}", dtype=dtype) for k in range(len(args))]


@pytest.mark.parametrize("mode", ["JAX", "PYTORCH", "NUMBA"])
def test_every_function_the_library_has_gives_scipys_values(mode):
    _needs(mode)
    names = [n for n in sorted(CASES) if n not in MISSING[mode]]
    inputs, outputs, values, wanted = [], [], [], []
    for name in names:  # one function for all of them: each back end compiles once
        function, args, reference = CASES[name]
        xs = _inputs(args, "float64")
        inputs += xs
        outputs.append(function(*xs))
        values += list(args)
        wanted.append(reference(*args))
    f = tg.function(inputs, outputs, mode=mode)
    for name, got, want in zip(names, f(*values), wanted):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=RTOL[mode], atol=ATOL[mode], err_msg=name)


@pytest.mark.parametrize("mode", ["JAX", "PYTORCH", "NUMBA"])
def test_float32_stays_float32(mode):
    _needs(mode)
    names = [n for n in ("gammainc", "betainc", "log_ndtr", "i1e") if n not in MISSING[mode]]
    inputs, outputs, values = [], [], []
    for name in names:
        function, args, _ = CASES[name]
        xs = _inputs(args, "float32")
        inputs += xs
        outputs.append(function(*xs))
        values += [np.asarray(a, dtype="float32") for a in args]
    f = tg.function(inputs, outputs, mode=mode)
    expected = tg.function(inputs, outputs, mode="FAST_RUN")(*values)
    for name, got, want in zip(names, f(*values), expected):
        assert got.dtype == np.float32, name
        # JAX and PyTorch compute float32 with their own float32 code (a few ulps of float32
        # apart: backend_checks.TOL); Numba rounds scipy's value as FAST_RUN does
        np.testing.assert_allclose(got, want, rtol=0 if mode == "NUMBA" else 1e-4,
                                   err_msg=name)


@pytest.mark.parametrize("mode", ["JAX", "PYTORCH", "NUMBA"])
def test_a_function_the_library_lacks_is_refused_by_name(mode):
    _needs(mode)
    for name in sorted(MISSING[mode]):
        function, args, _ = CASES[name]
        xs = _inputs(args, "float64")
        with pytest.raises(UnsupportedOpsError, match=name):
            tg.function(xs, function(*xs), mode=mode)


def test_numba_calls_scipys_code_from_its_cache_in_a_new_process(tmp_path):
    # the symbol gets this process's address when the generated module is imported, before
    # Numba loads machine code compiled by another process
    _needs("NUMBA")
    import subprocess
    import sys

    code = ("import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt\n"
            "k, x = tt.dvector('k'), tt.dvector('x')\n"
            "f = tg.function([k, x], tt.gammaincc(k, x) + tt.log_ndtr(x), mode='NUMBA')\n"
            "print(repr(f(np.array([0.5, 3.0]), np.array([0.2, 4.0])).tolist()))\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    want = sp.gammaincc([0.5, 3.0], [0.2, 4.0]) + sp.log_ndtr([0.2, 4.0])
    for run in runs:
        np.testing.assert_array_equal(eval(run.stdout), want)
