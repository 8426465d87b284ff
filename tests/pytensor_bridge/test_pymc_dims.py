"""PyMC models with data and dims in mode TENSORGRAPH (issue 34): the dims' lengths and
``pm.Data`` are PyTensor shared variables, which the converted graph reads from PyTensor's own
cells: ``unwrap(fn)`` takes the value variables only, by position or name, and sees
``pm.set_data`` (new data, a new dim length)."""

import pickle

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
tgp = pytest.importorskip("tensorgraph.pytensor")

Y8 = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
S8 = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])


def test_a_model_with_dims_and_data():
    with pm.Model(coords={"school": list("abcdefgh")}) as model:
        y = pm.Data("y", Y8, dims="school")
        s = pm.Data("s", S8, dims="school")
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("obs", theta, s, observed=y, dims="school")
    logp = model.compile_logp(mode="TENSORGRAPH")
    dlogp = model.compile_dlogp(mode="TENSORGRAPH")
    tg_logp, tg_dlogp = tgp.unwrap(logp), tgp.unwrap(dlogp)
    assert [i.name for i in tg_logp.maker.inputs] == ["mu", "tau_log__", "theta"]
    point = model.initial_point()
    want = logp(point)
    np.testing.assert_allclose(tg_logp(**point)[0], want, rtol=1e-14)
    np.testing.assert_allclose(tg_logp(*point.values())[0], want, rtol=1e-14)
    np.testing.assert_allclose(tg_dlogp(**point)[0], dlogp(point), rtol=1e-14)

    with model:  # five schools: the data and the dim's length change
        pm.set_data({"y": Y8[:5] * 2, "s": S8[:5]}, coords={"school": list("abcde")})
    point5 = dict(point, theta=np.linspace(-1, 1, 5))
    got5 = logp(point5)
    assert np.isfinite(got5) and got5 != want
    np.testing.assert_allclose(tg_logp(**point5)[0], got5, rtol=1e-14)
    # PyTensor's Python, no C compile
    np.testing.assert_allclose(got5, model.compile_logp(mode="FAST_COMPILE")(point5), rtol=1e-12)
    np.testing.assert_allclose(tg_dlogp(**point5)[0],
                               model.compile_dlogp(mode="FAST_COMPILE")(point5), atol=1e-12)
    again = pickle.loads(pickle.dumps(logp))
    np.testing.assert_allclose(again(point5), got5, rtol=1e-14)


def test_the_value_grad_function_of_a_model_with_data():
    with pm.Model() as model:
        x = pm.Data("x", np.array([1.0, 2.0, 3.0]))
        b = pm.Normal("b", 0, 1)
        pm.Normal("y", b * x, 1.0, observed=np.array([1.0, 2.5, 2.9]))
    vg = model.logp_dlogp_function(mode="TENSORGRAPH", ravel_inputs=True)
    vg.set_extra_values({})
    tg = tgp.unwrap(vg)
    assert len(tg.maker.inputs) == 1
    for value in (0.5, 1.5):
        logp, grad = vg(np.array([value]))
        tg_logp, tg_grad = tg(np.array([value]))
        np.testing.assert_allclose(tg_logp, logp, rtol=1e-14)
        np.testing.assert_allclose(tg_grad, grad, rtol=1e-14)
        with model:
            pm.set_data({"x": np.array([2.0, 2.0, 2.0])})
