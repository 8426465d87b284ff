"""PyMC's compiled functions in mode TENSORGRAPH: names kept, unwrap, pickling."""

import pickle

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
tgp = pytest.importorskip("tensorgraph.pytensor")

from tensorgraph.compile.compiled import Function


def test_from_pytensor_keeps_pymc_names():
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        pm.HalfNormal("sigma", 1)
        pm.Poisson("k", pm.math.exp(mu), observed=[1, 2])
    ins, outs = tgp.from_pytensor(model.logp(sum=False))
    assert [v.name for v in ins] == ["mu", "sigma_log__"]
    assert [v.name for v in outs] == ["mu_logprob", "sigma_log___logprob", "k_logprob"]


def test_unwrap_takes_the_arguments_positionally_and_by_name():
    with pm.Model() as model:
        pm.Normal("mu", 0, 1)
        pm.HalfNormal("sigma", 1)
    logp = model.compile_logp(mode="TENSORGRAPH")
    fn = tgp.unwrap(logp)
    assert isinstance(fn, Function) and fn is tgp.unwrap(logp.f)
    want = logp({"mu": 0.5, "sigma_log__": -0.25})
    np.testing.assert_allclose(fn(0.5, -0.25), want, rtol=1e-15)
    np.testing.assert_allclose(fn(mu=0.5, sigma_log__=-0.25), want, rtol=1e-15)
    with pytest.raises(TypeError, match="not in mode TENSORGRAPH"):
        tgp.unwrap(model.compile_logp())
    with pytest.raises(TypeError, match="unwrap expects"):
        tgp.unwrap(42)


def test_functions_pickle():
    with pm.Model() as model:
        pm.Normal("mu", 0, 1)
        pm.HalfNormal("sigma", 1)
    dlogp = model.compile_dlogp(mode="TENSORGRAPH")
    point = {"mu": 0.3, "sigma_log__": 0.1}
    again = pickle.loads(pickle.dumps(dlogp))
    np.testing.assert_array_equal(again(point), dlogp(point))
    assert isinstance(tgp.unwrap(again), Function)


def test_a_failed_parameter_check_raises_pymcs_error():
    import pytensor
    import pytensor.tensor as pt
    from pymc.logprob.utils import ParameterValueError

    s = pt.scalar("s")
    f = pytensor.function([s], pm.logp(pm.Normal.dist(0, s), 1.0), mode="TENSORGRAPH")
    np.testing.assert_allclose(f(2.0), -0.5 * np.log(2 * np.pi) - np.log(2.0) - 0.125)
    with pytest.raises(ParameterValueError, match="sigma > 0"):
        f(-1.0)
    assert tgp.unsupported(f) == []
