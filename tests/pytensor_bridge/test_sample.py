"""pm.sample runs with every function compiled in mode TENSORGRAPH, in one process and in two
(started by 'spawn': PyMC pickles the step method, with its compiled functions, to its worker
processes, which unpickle them in a fresh interpreter)."""

import numpy as np
import pytest

pm = pytest.importorskip("pymc")
pytest.importorskip("tensorgraph.pytensor")  # registers the mode

from pytensor_bridge.pymc_models import MODELS


@pytest.mark.parametrize("cores", [1, 2])
def test_sample_in_mode_tensorgraph(cores):
    spawn = {"mp_ctx": "spawn"} if cores > 1 else {}
    model = MODELS["eight_noncentered"]()
    with model:
        idata = pm.sample(draws=60, tune=60, chains=2, cores=cores, random_seed=[1, 2],
                          progressbar=False, compute_convergence_checks=False,
                          compile_kwargs={"mode": "TENSORGRAPH"}, **spawn)
    mu = idata.posterior["mu"].values
    assert mu.shape == (2, 60) and np.isfinite(mu).all()
    assert np.ptp(mu) > 0  # the chains moved
