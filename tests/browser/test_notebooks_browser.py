"""Every tutorial notebook, run top to bottom in a real JupyterLab: no cell fails (but those
tagged ``raises-exception``), every widget it displays draws (graph views draw nodes), and a
screenshot of each is saved ($TG_SCREENSHOT_DIR). The PyTensor bridge's notebooks (PyMC) are
skipped, with the reason (tests/tutorials.py).
tests/test_notebooks.py executes the same notebooks headless in the Binder environment."""

import shutil

import pytest
from tutorials import NOTEBOOKS, bridge_skip

# the notebook's cells as the page holds them: the errors of cells not tagged raises-exception
ERRORS = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model;
  const errors = [];
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i).toJSON();
    const allowed = ((cell.metadata || {}).tags || []).includes("raises-exception");
    for (const out of cell.outputs || []) {
      if (out.output_type === "error" && !allowed) errors.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
    }
  }
  return errors;
}"""

# every graph view in the page has drawn what its kernel sent (its data-tg-drawn serial)
ALL_DRAWN = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .tg-graph')]
  .every((g) => g.dataset.tgDrawn && g.querySelector('[data-tg-node], [data-tg-group]'))"""


#: by default the notebooks whose widgets this test checks (01's graph views, 02's compile
#: reports, 03's stepper, 11's linear algebra); tests/test_notebooks.py runs every notebook
#: headless, and here the others are a slow sweep (09 times compiles in fresh processes, 10
#: starts a Dask cluster: 30 s each)
@pytest.mark.parametrize("path", [
    pytest.param(p, marks=bridge_skip(p) + (
        [] if p.name.startswith(("01_", "02_", "03_", "11_")) else [pytest.mark.slow]))
    for p in NOTEBOOKS], ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_jupyterlab(lab, path):
    shutil.copy(path, lab.server.root / path.name)
    nb = lab.open_notebook(path.name, run=False)
    try:
        nb.run_all(timeout=300)
        assert nb.page.evaluate(ERRORS) == []
        views = nb.panel().locator(".tg-graph").count()
        if views:
            nb.page.wait_for_function(ALL_DRAWN, timeout=60_000)
        if path.stem == "02_rewrites":
            assert nb.panel().locator(".tg-compile-report").count() == 8
            assert nb.panel().locator(".tg-compile-report .tg-mark-added").count() >= 6
        if path.stem == "03_debugging":
            assert nb.panel().locator(".tg-stepper .tg-mark-nonfinite").count() == 1
        nb.screenshot(f"notebook_{path.stem}.png")  # a CI artefact (see lab_driver)
    finally:
        nb.close()
