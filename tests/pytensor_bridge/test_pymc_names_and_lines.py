"""PyMC's log-density in mode TENSORGRAPH keeps its terms' names (``mu_logprob``...: PyMC's
parameter checks make PyTensor name them "sigma > 0") and every node names a line: the model's
statement when PyTensor's trace (8 frames, deep inside PyMC) has none (issue 34)."""

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
tgp = pytest.importorskip("tensorgraph.pytensor")

from tensorgraph.graph.utils import format_user_line


def test_pymc_terms_keep_their_names_and_nodes_name_a_line():
    with pm.Model(coords={"school": list("abcd")}) as model:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("obs", theta, 10.0, observed=np.array([1.0, -2.0, 3.0, 0.5]), dims="school")
    logp = model.compile_logp(sum=False, mode="TENSORGRAPH")
    fn = tgp.unwrap(logp)
    names = [t.name for t in model.logp(sum=False)]
    assert names == ["mu_logprob", "tau_log___logprob", "theta_logprob", "obs_logprob"]
    assert [o.name for o in fn.maker.fgraph.outputs] == names
    lines = [format_user_line(n) for n in fn.maker.fgraph.toposort()]
    assert all(lines), lines  # never "(unknown)"
    assert any('pm.Normal("theta", mu, tau, dims="school")' in line for line in lines), lines
    assert any('pm.HalfCauchy("tau", 5)' in line for line in lines), lines
    # exp(tau_log__) overflows: PyTensor's trace of that node is all PyMC's, its input is tau's
    point = dict(model.initial_point(), tau_log__=np.array(800.0))
    culprit = fn.stepper(**point).run_until_nonfinite()
    assert 'created at ' in str(culprit) and 'tau = pm.HalfCauchy("tau", 5)' in str(culprit)
