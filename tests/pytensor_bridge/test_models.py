"""PyMC log-densities compiled in mode TENSORGRAPH equal PyTensor's C (rtol 1e-7, float64),
logp and its gradient, at the model's initial point and at perturbed points; no node of these
models runs as a PyTensor perform node, but for the model with ``scan`` (Scan has no
conversion yet: its loops run PyTensor's Scan.perform)."""

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
tgp = pytest.importorskip("tensorgraph.pytensor")

from pytensor_bridge.pymc_models import MODELS


def points(model, n=3, seed=0):
    rng = np.random.default_rng(seed)
    start = model.initial_point()
    yield start
    for _ in range(n - 1):
        yield {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in start.items()}


def assert_same(got, want):
    want = np.asarray(want)
    # an entry PyTensor computes as ~1e-17 (a cancellation) is compared at the vector's scale
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-13 * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_logp_and_dlogp_equal_pytensor_c(name):
    model = MODELS[name]()
    outs = [model.logp(), model.dlogp()]  # one function each: PyTensor's rewrites run twice
    reference = model.compile_fn(outs, mode="FAST_RUN")
    bridged = model.compile_fn(outs, mode="TENSORGRAPH")
    for point in points(model):
        (logp, dlogp), (want_logp, want_dlogp) = bridged(point), reference(point)
        assert_same(logp, want_logp)
        assert_same(dlogp, want_dlogp)
    left = {op.split("{")[0] for op, _ in tgp.unsupported(bridged)}
    assert left == ({"Scan"} if name == "with_scan" else set())
