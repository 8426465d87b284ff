"""Every tutorial notebook in notebooks/ runs top to bottom in a real Jupyter kernel.

Cells tagged ``raises-exception`` may fail (they show an error on purpose); an error in
any other cell fails the test.
"""

import pathlib

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

NOTEBOOK_DIR = pathlib.Path(__file__).parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def execute(path, home):
    """Run a notebook in a python3 kernel whose HOME has no rc file; return it executed."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(path.parent)}}
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.delenv("TENSORGRAPH_FLAGS", raising=False)
        mp.delenv("TENSORGRAPHRC", raising=False)
        client.execute()
    return nb


def test_welcome_notebook_exists():
    assert NOTEBOOK_DIR / "00_welcome.ipynb" in NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    nb = execute(path, tmp_path)  # raises CellExecutionError on an unexpected error
    if path.name == "00_welcome.ipynb":
        check_welcome_outputs(nb)


def check_welcome_outputs(nb):
    outputs = {c.source: c.get("outputs", []) for c in nb.cells if c.cell_type == "code"}
    assert "<code>floatX</code>" in outputs["%tg_config"][0]["data"]["text/html"]
    # the failed, all-or-none assignment left floatX at float32
    shown = outputs["%tg_config floatX=float16 mode=FAST_RUNN"]
    assert "UsageError: tensorgraph config: invalid value 'FAST_RUNN'" in shown[0]["text"]
    assert "value: 'float32'" in outputs["%tg_config floatX"][0]["data"]["text/plain"]
    with_cell = next(s for s in outputs if s.startswith("with "))
    assert "inside: float32" in outputs[with_cell][0]["text"]
