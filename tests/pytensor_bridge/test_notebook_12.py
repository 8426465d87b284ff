"""Tutorial notebook 12_pymc runs top to bottom in this venv (the bridge's: PyMC, PyTensor 2.38),
in a kernel of this Python, from a copy outside the checkout, with an empty HOME: tensorgraph's
cache is cold, as a first-time user's. PyTensor's stays this process's (a PyMC user has
compiled models before; cold, its C for the notebook's sampling in mode FAST_RUN adds 8-10 s).
The notebook took 35-45 s so on 2 cores shared with other work (a load of 6-8), 13-16 s of CPU.

The main suite's notebook tests (tests/test_notebooks.py, the browser's, the JAX/NUMBA
recompiles) leave it out: their environments have no PyMC (tests/tutorials.py says why).
Cells tagged ``raises-exception`` may fail (they show an error on purpose); an error in any
other cell fails the test."""

import json
import os
import shutil
import sys
import time

import pytest

pytest.importorskip("pymc")
pytensor = pytest.importorskip("pytensor")
nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

from tutorials import BRIDGE_NOTEBOOKS, NOTEBOOK_DIR

NAME = "12_pymc.ipynb"
KERNEL = "tensorgraph-pymc"


def test_notebook_12_is_a_bridge_notebook():
    assert NAME in BRIDGE_NOTEBOOKS and (NOTEBOOK_DIR / NAME).exists()


def test_notebook_12_runs_in_the_bridge_environment(tmp_path, monkeypatch):
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "tensorgraph (PyMC env)", "language": "python"}))
    work, home = tmp_path / "notebooks", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    shutil.copy(NOTEBOOK_DIR / NAME, work / NAME)
    nb = nbformat.read(work / NAME, as_version=4)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("HOME", str(home))
    for name in [n for n in os.environ if n.startswith("TENSORGRAPH")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PYTENSOR_FLAGS", f"base_compiledir={pytensor.config.base_compiledir}")
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=300,
                                     resources={"metadata": {"path": str(work)}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    print(f"notebook {NAME}: {seconds:.1f} s with a cold tensorgraph cache")

    # the broken model: PyMC's error, then the term, node and line debug_logp names
    error = [o for o in cell(nb, "with pm.Model() as broken:").outputs
             if o.output_type == "error"]
    assert error and error[0].ename == "SamplingError"
    found = shown(nb, "found = tgn.debug_logp(broken)")
    assert found.startswith("theta_logprob: -inf, node ")
    assert 'from `theta_b = pm.Normal("theta", mu_b, tau_b, shape=8)`' in found
    assert "not converted: []" in shown(nb, "logp = model.compile_logp(")
    # both modes sampled, to one posterior (fixed seed: the same draws every run)
    sampled = shown(nb, "settings = dict(")
    assert "TENSORGRAPH: " in sampled and "FAST_RUN: " in sampled
    largest = shown(nb, "import arviz as az").rsplit("largest |diff| / se: ", 1)[1]
    assert float(largest) < 4
    # and tgn.compare ran both modes on the logp + dlogp function, which agree
    table = shown(nb, "logp_dlogp = model.compile_fn(")
    assert "FAST_RUN" in table and "NUMBA" in table and "yes" in table
    assert "error" not in table.lower()


def cell(nb, start: str):
    """The code cell whose source starts with ``start``."""
    return next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(start))


def shown(nb, start: str) -> str:
    """What the cell starting with ``start`` printed and displayed, as text."""
    return "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                     for o in cell(nb, start).outputs)
