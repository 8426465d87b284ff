"""A real JupyterLab and a real browser for the widget tests, shared by the whole test run.

One JupyterLab server per test session: these tests all run in one xdist worker (the
``browser`` xdist group; pytest runs with ``--dist loadgroup``). The server and the page
helpers are ``lab_driver`` (this directory; shared with ``tools/screenshots.py`` and the
browser benchmark).

Use (see tests/browser/test_graph_view_browser.py)::

    def test_x(lab):
        nb = lab.open_notebook("x.ipynb", ["import tensorgraph", "view = ..."])
        nb.page.click(...)
        assert nb.kernel_eval("view.selected") == "'A'"
"""

from __future__ import annotations

import os

import pytest

from lab_driver import CHROMIUM, Lab, LabServer, launch_chromium

@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its worker registers first)
def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    server = LabServer(tmp_path_factory.mktemp("lab-root"), tmp_path_factory.mktemp("lab-home"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def lab(lab_server, browser):
    return Lab(lab_server, browser)
