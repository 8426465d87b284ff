"""Tutorials 02 and 03 exported with ``jupyter nbconvert --to html --execute`` and opened in
chromium with the network off: the exported page asks a CDN for the widget script and gets
nothing, so every widget output must be followed by its static form, visible, with a picture
that is not empty. A screenshot of each page's first picture goes to $TG_SCREENSHOT_DIR.

The page also keeps each graph view's saved state, its ES module (``_esm``) included: loaded
as anywidget loads it (from a blob: URL, where relative imports do not resolve) it draws the
saved graph there, so the joined module of nbext's parts is all an exported page needs."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tensorgraph.configparser import ENV_FLAGS, ENV_RC

NOTEBOOKS = pathlib.Path(__file__).parents[2] / "notebooks"

# for every widget output of the page: whether the output after it is a visible static form
# with a drawn picture (an SVG of some size)
FALLBACKS = """() => [...document.querySelectorAll('.jupyter-widgets.jp-OutputArea-output')].map((w) => {
  const next = w.closest('.jp-OutputArea-child').nextElementSibling;
  const block = next && next.querySelector('.tg-static-fallback');
  const svg = block && block.querySelector('svg');
  const r = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {visible: !!block && block.offsetParent !== null, svg: [r.width, r.height]};
})"""


# every graph view saved in the page, drawn by its own saved module (as anywidget would: the
# module from a blob: URL, render() with the saved state): how many boxes each drew
RENDER_SAVED_VIEWS = """async () => {
  const saved = document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]');
  const views = Object.values(JSON.parse(saved.textContent).state)
    .map((m) => m.state).filter((s) => s._esm && s._esm.includes('tg-graph') && s.layout);
  const drawn = [];
  for (const state of views) {
    const url = URL.createObjectURL(new Blob([state._esm], {type: 'text/javascript'}));
    const module = await import(url);
    const model = {get: (k) => state[k], set() {}, save_changes() {}, send() {}, on() {}, off() {}};
    const el = document.createElement('div');
    document.body.appendChild(el);
    module.default.render({model, el});
    drawn.push(el.querySelectorAll('[data-tg-node], [data-tg-group]').length);
    el.remove();
  }
  return drawn;
}"""


def export(name: str, where: pathlib.Path) -> pathlib.Path:
    shutil.copy(NOTEBOOKS / f"{name}.ipynb", where / f"{name}.ipynb")
    env = {k: v for k, v in os.environ.items() if k not in (ENV_FLAGS, ENV_RC)}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
                    "--ExecutePreprocessor.timeout=300", f"{name}.ipynb"],
                   cwd=where, env=env, check=True, capture_output=True, timeout=600)
    return where / f"{name}.html"


@pytest.mark.parametrize("name", ["02_rewrites", "03_debugging"])
def test_an_exported_tutorial_shows_its_static_forms_offline(browser, tmp_path, name):
    pytest.importorskip("nbconvert")
    page_file = export(name, tmp_path)
    assert "widget-state+json" in page_file.read_text()  # the state that hid the static forms
    context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        "file:") else route.abort())
    page = context.new_page()
    try:
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        found = page.evaluate(FALLBACKS)
        assert len(found) >= (8 if name == "02_rewrites" else 3), found
        for k, f in enumerate(found):
            assert f["visible"] and min(f["svg"]) > 100, f"widget output {k}: {f}"
        drawn = page.evaluate(RENDER_SAVED_VIEWS)
        assert drawn and all(n > 3 for n in drawn), drawn
        first = page.locator(".tg-static-fallback").first
        first.scroll_into_view_if_needed()
        shots = pathlib.Path(os.environ.get("TG_SCREENSHOT_DIR", "/tmp/tensorgraph-screenshots"))
        shots.mkdir(parents=True, exist_ok=True)
        first.screenshot(path=str(shots / f"static_offline_{name}.png"))
    finally:
        context.close()
