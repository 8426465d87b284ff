"""Every tutorial notebook runs top to bottom where users run it: in an environment made
only from ``binder/requirements.txt`` (as repo2docker makes it on Binder), from a directory
outside the checkout. The PyTensor bridge's notebooks (PyMC) are skipped, with the reason
(tests/tutorials.py); tests/pytensor_bridge runs them in .venv-pymc.

The environment is built once per test run and shared by the xdist workers (a file lock
guards the build), so a package-data file missing from the wheel or a dependency that only
the ``test`` extra brings fails here.  Cells tagged ``raises-exception`` may fail (they show
an error on purpose); an error in any other cell fails the test.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest
from filelock import FileLock
from tutorials import NOTEBOOK_DIR, NOTEBOOKS, bridge_skip

# one worker runs them all: the other would only wait for the environment's build
pytestmark = pytest.mark.xdist_group("binder")

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

ROOT = pathlib.Path(__file__).parents[1]
KERNEL = "tensorgraph-binder"


def build_binder_env(where: pathlib.Path) -> pathlib.Path:
    """A fresh venv with exactly what ``binder/requirements.txt`` installs; returns a
    Jupyter data directory holding a kernelspec that runs that venv's Python."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # repo2docker runs `pip install -r binder/requirements.txt` from the repository root.
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
         "-r", "binder/requirements.txt"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    spec = where / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps(
        {"argv": argv, "display_name": "tensorgraph (Binder env)", "language": "python"}))
    return where / "jupyter"


@pytest.fixture(scope="session")
def binder_jupyter_path(testrun_uid) -> pathlib.Path:
    where = pathlib.Path(tempfile.gettempdir()) / f"tensorgraph-binder-{testrun_uid}"
    where.mkdir(exist_ok=True)
    with FileLock(str(where) + ".lock"):
        if not (where / "jupyter").exists():
            build_binder_env(where)
    return where / "jupyter"


@pytest.fixture
def notebook_copy(tmp_path):
    """The notebooks copied to a directory outside the checkout."""
    dest = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOK_DIR, dest)
    return dest


def execute(path: pathlib.Path, jupyter_path: pathlib.Path, home: pathlib.Path):
    """Run a notebook in the Binder environment's kernel with an empty HOME; return it."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name=KERNEL, timeout=600, resources={"metadata": {"path": str(path.parent)}}
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(jupyter_path))
        mp.setenv("HOME", str(home))
        for name in [n for n in os.environ if n.startswith("TENSORGRAPH")]:
            mp.delenv(name)
        client.execute()
    return nb


def test_welcome_notebook_exists():
    assert NOTEBOOK_DIR / "00_welcome.ipynb" in NOTEBOOKS


@pytest.mark.parametrize("name", [pytest.param(p.name, marks=bridge_skip(p)) for p in NOTEBOOKS])
def test_notebook_runs_in_the_binder_environment(name, binder_jupyter_path, notebook_copy):
    # one HOME for the run's notebooks, empty at the first, as a Binder user's: the C
    # modules one notebook compiled serve the next (the seed model recurs)
    home = binder_jupyter_path.parent / "home"
    home.mkdir(exist_ok=True)
    nb = execute(notebook_copy / name, binder_jupyter_path, home)
    assert str(ROOT) not in json.dumps(nb), "the notebook ran against the checkout"
    if name == "00_welcome.ipynb":
        check_welcome_outputs(nb)


def check_welcome_outputs(nb):
    outputs = {c.source: c.get("outputs", []) for c in nb.cells if c.cell_type == "code"}
    assert "<code>floatX</code>" in outputs["%tg_config"][0]["data"]["text/html"]
    # the failed, all-or-none assignment left floatX at float32
    shown = outputs["%tg_config floatX=float16 mode=FAST_RUNN"]
    assert "UsageError: %tg_config: tensorgraph config: invalid value 'FAST_RUNN'" in \
        shown[0]["text"]
    assert "value: 'float32'" in outputs["%tg_config floatX"][0]["data"]["text/plain"]
    with_cell = next(s for s in outputs if s.startswith("with "))
    assert "inside: float32" in outputs[with_cell][0]["text"]
