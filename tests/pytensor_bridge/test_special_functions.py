"""PyTensor's special functions (the ones PyMC's distributions call) convert to tensorgraph's
ops, so they run in C under mode TENSORGRAPH instead of as PyTensor ``perform`` nodes."""

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")
tgp = pytest.importorskip("tensorgraph.pytensor")

import pytensor.tensor as pt  # noqa: E402


def _graph():
    k, x, a = pt.dvector("k"), pt.dvector("x"), pt.dvector("a")
    u = x / 100
    outs = [pt.gammainc(k, x), pt.gammaincc(k, x), pt.gammaincinv(k, u), pt.gammainccinv(k, u),
            pt.betainc(k, a, u), pt.betaincinv(k, a, u), pt.owens_t(x, a), pt.ive(k, x),
            pt.kve(k, x), pt.kv(k, x), pt.i0(x), pt.i1(x), pt.hyp2f1(k, a, k + 2, u),
            pt.erfcx(x)]
    return [k, x, a], outs


def test_every_special_function_converts_to_a_tensorgraph_op():
    _, outs = _graph()
    _, converted = tgp.from_pytensor(outs)
    assert tgp.unsupported(converted) == []


def test_mode_tensorgraph_gives_pytensors_values():
    inputs, outs = _graph()
    values = [np.array([0.5, 2.0, 7.0]), np.array([0.3, 2.5, 40.0]), np.array([1.5, 0.7, 3.0])]
    mine = pytensor.function(inputs, outs, mode="TENSORGRAPH")
    theirs = pytensor.function(inputs, outs, mode="FAST_COMPILE")
    assert tgp.unsupported(mine) == []
    for got, want in zip(mine(*values), theirs(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
