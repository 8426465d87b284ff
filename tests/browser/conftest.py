"""A real JupyterLab and a real browser for the widget tests, shared by the whole test run.

One JupyterLab server per test session (these tests all run in one xdist worker: the
``browser`` xdist group, with ``--dist loadgroup`` in pytest's options), started on a free
port with an empty token, a temporary root directory, its own settings (windowing off, so
cells scrolled out of view stay in the DOM) and ``window.jupyterapp`` exposed. Debian's
chromium is driven by Playwright (never ``playwright install``).

Tests write a notebook, open it in Lab (``?reset``: no saved workspace), run every cell and
then click, type and read state back from the kernel itself (``LabNotebook.kernel_eval`` talks
to the notebook's kernel directly, through its connection file).

Use (see tests/browser/test_graph_view_browser.py)::

    def test_x(lab):
        nb = lab.open_notebook("x.ipynb", ["import tensorgraph", "view = ..."])
        nb.page.click(...)
        assert nb.kernel_eval("view.selected") == "'A'"
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SCREENSHOTS = pathlib.Path(os.environ.get("TG_SCREENSHOT_DIR", "/tmp/tensorgraph-screenshots"))


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.xdist_group("browser"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A running JupyterLab (and Notebook 7) server with an empty token."""

    def __init__(self, root: pathlib.Path, home: pathlib.Path):
        self.root = root
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        settings = home / "lab-settings" / "@jupyterlab"
        for plugin, values in (("notebook-extension/tracker", {"windowingMode": "none"}),
                               ("apputils-extension/notification", {"fetchNews": "false",
                                                                    "checkForUpdates": False})):
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = dict(os.environ, HOME=str(home), JUPYTER_RUNTIME_DIR=str(home / "runtime"))
        env.pop("TENSORGRAPH_FLAGS", None)
        self.runtime_dir = home / "runtime"
        self.log = open(home / "lab.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
             "--ip=127.0.0.1", f"--ServerApp.root_dir={root}", "--IdentityProvider.token=",
             "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", "--allow-root",
             "--LabApp.expose_app_in_browser=True",
             f"--LabApp.user_settings_dir={home / 'lab-settings'}",
             f"--LabApp.workspaces_dir={home / 'workspaces'}"],
            cwd=root, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.base}/api/status", timeout=2)
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"JupyterLab did not start: {(home / 'lab.log').read_text()[-3000:]}")

    def sessions(self) -> list:
        with urllib.request.urlopen(f"{self.base}/api/sessions", timeout=10) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class LabNotebook:
    """A notebook opened in the browser, and a direct line to its kernel."""

    def __init__(self, lab: Lab, path: str, page):
        self.lab, self.path, self.page = lab, path, page
        self._client = None

    def panel(self):
        """The visible notebook panel (selectors are scoped to it)."""
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first

    def run_all(self, timeout: float = 120.0) -> None:
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        self.wait_idle(timeout)

    def wait_idle(self, timeout: float = 120.0) -> None:
        """Until every code cell shows an execution count (no '*')."""
        self.page.wait_for_function(
            """() => {
                const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
                if (!panel) return false;
                const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
                return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
            }""", timeout=timeout * 1000)

    def kernel(self):
        """A blocking client of the notebook's kernel (the same kernel the page uses)."""
        if self._client is None:
            from jupyter_client import BlockingKernelClient

            session = next(s for s in self.lab.server.sessions()
                           if s["path"].endswith(self.path))
            kernel_id = session["kernel"]["id"]
            connection = self.lab.server.runtime_dir / f"kernel-{kernel_id}.json"
            client = BlockingKernelClient(connection_file=str(connection))
            client.load_connection_file()
            client.start_channels()
            client.wait_for_ready(timeout=30)
            self._client = client
        return self._client

    def kernel_eval(self, expression: str, timeout: float = 30.0) -> str:
        """``repr`` of an expression evaluated in the notebook's kernel."""
        client = self.kernel()
        msg_id = client.execute(f"print(repr({expression}))", store_history=False)
        out, error = [], None
        deadline = time.time() + timeout
        while time.time() < deadline:
            msg = client.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                break
        if error:
            raise AssertionError(f"{expression} failed in the kernel: {error}")
        return "".join(out).strip()

    def screenshot(self, name: str) -> pathlib.Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / name
        self.page.screenshot(path=str(path), full_page=False)
        return path

    def close(self) -> None:
        if self._client is not None:
            self._client.stop_channels()
        self.page.close()


class Lab:
    """Opens notebooks of the shared server in fresh browser pages."""

    def __init__(self, server: LabServer, browser):
        self.server, self.browser = server, browser

    def write_notebook(self, name: str, cells: list[str]) -> str:
        nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{k}",
                         "metadata": {}, "outputs": [], "source": src}
                        for k, src in enumerate(cells)],
              "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                          "name": "python3"}},
              "nbformat": 4, "nbformat_minor": 5}
        (self.server.root / name).write_text(json.dumps(nb))
        return name

    def open_notebook(self, name: str, cells: list[str] | None = None, run: bool = True,
                      ui: str = "lab", theme: str | None = None) -> LabNotebook:
        if cells is not None:
            self.write_notebook(name, cells)
        page = self.browser.new_page(viewport={"width": 1400, "height": 1000})
        url = (f"{self.server.base}/lab/tree/{name}?reset" if ui == "lab"
               else f"{self.server.base}/notebooks/{name}")
        page.goto(url)
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=90_000)
        if theme is not None:
            page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', "
                          "{theme: t})", theme)
        page.wait_for_function("() => window.jupyterapp && document.querySelector("
                               "'.jp-NotebookPanel .jp-Notebook-cell')", timeout=60_000)
        # the kernel is ready when its status says idle
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], "
                               "#jp-main-statusbar :text('Idle')", timeout=90_000)
        notebook = LabNotebook(self, name, page)
        if run:
            notebook.run_all()
        return notebook


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    server = LabServer(root, home)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def lab(lab_server, browser):
    return Lab(lab_server, browser)
