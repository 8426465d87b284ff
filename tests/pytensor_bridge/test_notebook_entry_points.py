"""Every notebook entry point takes PyTensor's and PyMC's compiled functions in mode TENSORGRAPH
(issue 34): ``tgn.show``, ``tgn.report``, ``tgn.Stepper`` and ``%tg_show``, ``%tg_step``,
``%tg_profile`` unwrap them in one place (``tensorgraph.notebook.unwrapping``), and a PyMC
point given alone is read by the inputs' names, as PyMC's ``PointFunc`` reads it. A function
compiled in another PyTensor mode is a one-line error saying to compile it in TENSORGRAPH."""

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
tgp = pytest.importorskip("tensorgraph.pytensor")
pytest.importorskip("IPython")

import pytensor
import pytensor.tensor as pt
from IPython.core.error import UsageError

import tensorgraph.notebook as tgn
from tensorgraph.notebook.unwrapping import as_tensorgraph

Y8 = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
S8 = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])


@pytest.fixture(scope="module")
def schools():
    with pm.Model(coords={"school": list("abcdefgh")}) as model:
        y = pm.Data("y", Y8, dims="school")
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("obs", theta, S8, observed=y, dims="school")
    return model, model.compile_logp(mode="TENSORGRAPH", sum=False), model.initial_point()


def test_pymc_and_pytensor_functions_are_unwrapped(schools):
    model, logp, _ = schools
    assert as_tensorgraph(logp) is tgp.unwrap(logp) is as_tensorgraph(logp.f)
    dlogp = model.compile_dlogp(mode="TENSORGRAPH")
    assert as_tensorgraph(dlogp) is tgp.unwrap(dlogp.f)
    fn = model.compile_fn(model.varlogp, mode="TENSORGRAPH")  # a PointFunc too
    assert as_tensorgraph(fn) is tgp.unwrap(fn.f)
    vg = model.logp_dlogp_function(mode="TENSORGRAPH", ravel_inputs=True)
    assert as_tensorgraph(vg) is tgp.unwrap(vg._pytensor_function)
    tg = as_tensorgraph(logp)
    assert as_tensorgraph(tg) is tg and as_tensorgraph(3) == 3  # the rest: as it is


def test_show_report_and_stepper(schools):
    _, logp, point = schools
    tg = tgp.unwrap(logp)
    view = tgn.show(logp)
    assert view.model.function is tg
    assert tgn.report(logp).function is tg
    stepper = tgn.Stepper(logp, point)  # a PyMC point, as logp(point) takes it
    assert stepper.function is tg
    for got, want in zip(stepper.finish(), logp(point), strict=True):
        np.testing.assert_array_equal(got, want)
    stepper = tgn.Stepper(logp.f, **point)
    stepper.run_to_nonfinite()
    assert stepper.run.done


def test_the_value_grad_function_steps_on_its_raveled_point(schools):
    model, _, _ = schools
    vg = model.logp_dlogp_function(mode="TENSORGRAPH", ravel_inputs=True)
    vg.set_extra_values({})
    x = np.linspace(-1, 1, 10)
    got, want = tgn.Stepper(vg, x).finish(), vg(x)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_another_mode_is_a_one_line_error_naming_the_mode():
    x = pt.vector("x")
    f = pytensor.function([x], pt.exp(x).sum(), mode="FAST_COMPILE")
    for entry in (tgn.show, tgn.report, tgn.Stepper):
        with pytest.raises(TypeError, match='compile it with mode="TENSORGRAPH"') as info:
            entry(f)
        assert "\n" not in str(info.value)
    with pytest.raises(TypeError, match="not a function tensorgraph compiled"):
        tgn.show(x)


def test_magics(schools, ipython_shell):
    model, logp, point = schools
    ns = ipython_shell.user_ns
    ns.update(logp=logp, point=point)
    assert ipython_shell.run_line_magic("tg_show", "logp").model.function is tgp.unwrap(logp)
    widget = ipython_shell.run_line_magic("tg_step", "logp(point)")
    assert widget.function is tgp.unwrap(logp) and widget.run.position == 0
    assert ipython_shell.run_line_magic("tg_step", "logp(**point)").run.position == 0
    view = ipython_shell.run_line_magic("tg_profile", "logp.f(**point)")
    assert view.rows
    ns["other"] = model.compile_logp(mode="FAST_COMPILE")
    for magic, line in (("tg_step", "other(point)"), ("tg_show", "other")):
        with pytest.raises(UsageError, match='compile it with mode="TENSORGRAPH"'):
            ipython_shell.run_line_magic(magic, line)
