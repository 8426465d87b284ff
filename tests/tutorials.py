"""The tutorial notebooks, and the environment each runs in: the one list the tests that go
through notebooks/ read (tests/test_notebooks.py, tests/browser/test_notebooks_browser.py,
tests/link/test_tutorial_graphs.py, tests/pytensor_bridge/test_notebook_12.py)."""

import pathlib

import pytest

NOTEBOOK_DIR = pathlib.Path(__file__).parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

#: notebooks that run only in the PyTensor bridge's environment (.venv-pymc, the pymc-test
#: extra), tested there by tests/pytensor_bridge: {file name: why the main suite skips them}
BRIDGE_NOTEBOOKS = {
    "12_pymc.ipynb": "needs PyMC, which neither .venv nor the Binder environment has (PyTensor "
                     "2.38 pins numba<=0.65.1 against the numba extra's >=0.68); "
                     "tests/pytensor_bridge/test_notebook_12.py runs it in .venv-pymc",
}


def bridge_skip(notebook) -> list:
    """The marks for a main-suite test of ``notebook`` (a path or a file name): a skip with
    the reason when it is a bridge notebook, else none."""
    reason = BRIDGE_NOTEBOOKS.get(pathlib.Path(notebook).name)
    return [pytest.mark.skip(reason=reason)] if reason else []
