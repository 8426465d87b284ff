"""Driving a real JupyterLab in Debian's chromium: for the browser tests (this directory),
the screenshots (``python tools/screenshots.py``) and the browser benchmark.

Test tooling, not in the wheel: it needs the ``test`` extra (playwright, jupyterlab, jupyter_client) and
``/usr/bin/chromium`` (Debian's; never ``playwright install``). ``LabServer`` starts JupyterLab
(and Notebook 7) on a free port with an empty token, a temporary root directory, its own
settings (windowing off, so cells out of view stay in the DOM; no news pop-up) and
``window.jupyterapp`` exposed. ``Lab`` writes a notebook, opens it (``?reset``: no saved
workspace) and runs every cell; ``LabNotebook`` scopes selectors to the visible panel and
reads state back from the notebook's kernel itself, through its connection file.
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

from tensorgraph.configparser import ENV_FLAGS, ENV_RC

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


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
        # windowing off: cells out of view stay in the DOM; no news pop-up
        for plugin, values in (("notebook-extension/tracker", {"windowingMode": "none"}),
                               ("apputils-extension/notification", {"fetchNews": "false",
                                                                    "checkForUpdates": False})):
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = dict(os.environ, HOME=str(home), JUPYTER_RUNTIME_DIR=str(home / "runtime"))
        for name in (ENV_FLAGS, ENV_RC):  # the notebooks run with tensorgraph's defaults
            env.pop(name, None)
        self.runtime_dir = home / "runtime"
        self.log = open(home / "lab.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
             "--ip=127.0.0.1", f"--ServerApp.root_dir={root}", "--IdentityProvider.token=",
             "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True", "--allow-root",
             "--LabApp.expose_app_in_browser=True",
             "--JupyterNotebookApp.expose_app_in_browser=True",
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
        # not awaited in the page: the command's promise waits on any dialog the page shows,
        # and evaluate() has no timeout; wait_idle() does
        self.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        self.wait_idle(timeout)

    def wait_idle(self, timeout: float = 120.0) -> None:
        """Until every code cell shows an execution count (no '*'); on timeout the error
        says what the page showed (a dialog's text, the prompts) and where its screenshot is."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self._wait_prompts(timeout)
        except PlaywrightTimeout:
            state = self.page.evaluate("""() => ({
                dialog: [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText),
                prompts: [...document.querySelectorAll(
                    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputArea-prompt')]
                    .map(p => p.textContent)})""")
            shot = self.screenshot(f"timeout-{pathlib.Path(self.path).stem}.png")
            raise TimeoutError(f"{self.path}: cells did not finish in {timeout:.0f} s; "
                               f"prompts {state['prompts']}, dialogs {state['dialog']}; "
                               f"screenshot {shot}") from None

    def _wait_prompts(self, timeout: float) -> None:
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

            # the session of this notebook exactly: 'scan_stepper.ipynb' also ends with
            # 'stepper.ipynb', and its kernel answered the stepper test's questions
            session = next(s for s in self.lab.server.sessions()
                           if s["path"] == self.path or s["path"].endswith("/" + self.path))
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

    def screenshot(self, name: str, element=None) -> pathlib.Path:
        """A PNG of the page (or of one element) in ``$TG_SCREENSHOT_DIR`` (default
        /tmp/tensorgraph-screenshots: CI keeps them as artefacts there), or at ``name`` when it
        is a path."""
        path = pathlib.Path(name)
        if not path.is_absolute():
            path = pathlib.Path(os.environ.get("TG_SCREENSHOT_DIR",
                                               "/tmp/tensorgraph-screenshots")) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (element or self.page).screenshot(path=str(path))
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
                      theme: str | None = None) -> LabNotebook:
        """Open a notebook in JupyterLab (``?reset``) once its kernel is connected and idle;
        with ``run``, run every cell."""
        if cells is not None:
            self.write_notebook(name, cells)
        page = self.browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{self.server.base}/lab/tree/{name}?reset")
        wait_kernel_idle(page)
        if theme is not None:
            page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', "
                          "{theme: t})", theme)
        notebook = LabNotebook(self, name, page)
        if run:
            notebook.run_all()
        return notebook


def wait_kernel_idle(page, timeout: float = 90.0) -> None:
    """Until the current notebook (JupyterLab or Notebook 7, app exposed as
    ``window.jupyterapp``) is loaded and its kernel connected and idle.  Running cells
    before that makes JupyterLab ask for a kernel in a dialog instead of running them."""
    page.wait_for_function(
        """() => {
            const app = window.jupyterapp, w = app && app.shell.currentWidget;
            const session = w && w.sessionContext && w.sessionContext.session;
            const kernel = session && session.kernel;
            return !!(w && w.context && w.context.isReady && kernel
                      && kernel.connectionStatus === 'connected' && kernel.status === 'idle');
        }""", timeout=timeout * 1000)


def launch_chromium(playwright):
    """Debian's chromium, headless, with the flags this machine needs."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
