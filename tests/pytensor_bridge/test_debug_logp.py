"""tgn.debug_logp: the first non-finite term of a PyMC model's log-density at a point, the node
that made it and the model's line that made the random variable."""

from pathlib import Path

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
tgn = pytest.importorskip("tensorgraph.notebook")

from tensorgraph.compile.stepper import NonFinite  # noqa: E402


def test_data_outside_the_support_names_the_likelihood_and_its_line():
    with pm.Model() as model:
        lam = pm.Gamma("lam", 2, 1)
        pm.Poisson("k", lam, observed=np.array([1, -2, 3]))
    found = tgn.debug_logp(model)
    assert found.term == "k_logprob" and found.value == -np.inf
    assert isinstance(found.culprit, NonFinite) and found.culprit.inf == 1
    assert found.line == 'pm.Poisson("k", lam, observed=np.array([1, -2, 3]))'
    lineno = 1 + Path(__file__).read_text().splitlines().index(f"        {found.line}")
    assert found.location.endswith(f"test_debug_logp.py:{lineno}")
    assert str(found).startswith("k_logprob: -inf, node ")
    assert f"[id {found.culprit.node_id}], from `{found.line}`" in str(found)
    assert np.isfinite(found.terms["lam_log___logprob"])


def test_a_point_with_a_negative_scale_and_a_finite_one():
    with pm.Model() as model:
        s = pm.Normal("s", 1, 1)
        pm.Normal("y", 0, s, observed=[0.1, 0.2])
    assert tgn.debug_logp(model, {"s": -1.0}).term == "y_logprob"
    fine = tgn.debug_logp(model)
    assert fine.term is None and str(fine).startswith("every log-density term is finite")
    with pytest.raises(KeyError, match="no value for"):
        tgn.debug_logp(model, {"t": 1.0})
