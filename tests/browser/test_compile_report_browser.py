"""The compile report in a real JupyterLab: ``%%tg_compile train`` on the seed renders the
report; clicking "next" and picking a step from the filtered list scrubs the rewrite steps (the
kernel reads the same step); the stabilizing step shows its name and its diff; the Gemv node's
generated C shows in the graph after rewriting."""

import time

from demo_graphs import SEED_CELL, SEED_COMPILE_CELL

REPORT = ".tg-compile-report"


def drawn_serial(nb):
    """The graph serial the report's view has drawn (``data-tg-drawn``)."""
    return nb.panel().locator(f"{REPORT} .tg-graph").first.get_attribute("data-tg-drawn")


def wait_drawn(nb, serial: str, timeout_ms: int = 30_000):
    nb.page.wait_for_function(
        """(s) => { const r = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-compile-report .tg-graph');
            return r && r.dataset.tgDrawn === s; }""", arg=serial, timeout=timeout_ms)


def kernel_serial(nb) -> str:
    return nb.kernel_eval("rep.view.graph['serial']")


def wait_redrawn(nb, before: str, timeout: float = 30.0) -> None:
    """Wait until the kernel has a new drawing (serial other than ``before``) and the page has
    drawn it. A click reaches the kernel through the page's websocket, and our questions
    through another connection: the first answer may come before the click arrives."""
    deadline = time.time() + timeout
    serial = kernel_serial(nb)
    while serial == before and time.time() < deadline:
        time.sleep(0.1)
        serial = kernel_serial(nb)
    assert serial != before, "the click made no new drawing in the kernel"
    wait_drawn(nb, serial)


def test_the_compile_report_in_jupyterlab(lab):
    nb = lab.open_notebook("report.ipynb", [SEED_CELL, SEED_COMPILE_CELL,
                                            "rep = tgn.last_report('train')"])
    try:
        report = nb.panel().locator(REPORT)
        assert report.count() == 1
        assert "compile report: train" in report.locator(".tg-report-summary").inner_text()
        assert "train(x: float32 (?, ?), y: float32 (?,))" in nb.panel().inner_text()
        wait_drawn(nb, kernel_serial(nb))
        assert report.locator(".tg-graph [data-tg-node]").count() > 10

        # the rewrite steps: the scrubber shows, "next" moves one step (the kernel follows)
        report.locator(".widget-toggle-button", has_text="rewrite steps").click()
        next_button = report.locator("button", has_text="next")
        next_button.wait_for(state="visible", timeout=20_000)
        assert nb.kernel_eval("rep.mode") == "'steps'"
        next_button.click()
        next_button.click()
        nb.page.wait_for_function(
            """() => [...document.querySelectorAll('.tg-compile-report .tg-step-info')]
                .some(e => e.textContent.startsWith('step 2:'))""", timeout=20_000)
        assert nb.kernel_eval("rep.step") == "2"

        # filter the list to the stabilizing rewrite and pick its log(1 - sigmoid) step
        # (canonicalization turned 1 - sigmoid(z) into sigmoid(-z) before: the step removes
        # log(sigmoid(-z)) and adds -softplus(z))
        stable = int(nb.kernel_eval(
            "next(s.index for s in rep.steps if s.name == 'local_stable_log' and any("
            "'sigmoid}(Elemwise{neg}' in str(r.node.inputs[0].owner) for r in s.removed))"))
        report.locator("input[placeholder^='filter steps']").fill("stable_log")
        select = report.locator("select")
        nb.page.wait_for_function(
            """() => { const s = document.querySelector('.tg-compile-report select');
                return s && s.options.length > 0 && [...s.options].every(o => o.text.includes('stable_log')); }""",
            timeout=20_000)
        position = int(nb.kernel_eval(
            f"[v for _, v in rep._list.options].index({stable})"))
        select.select_option(index=position)
        nb.page.wait_for_function(
            """(k) => [...document.querySelectorAll('.tg-compile-report .tg-step-info')]
                .some(e => e.textContent.startsWith(`step ${k}: local_stable_log`))""",
            arg=stable, timeout=20_000)
        assert nb.kernel_eval("rep.step") == str(stable)  # the Python side reads the same step
        wait_drawn(nb, kernel_serial(nb))
        added = report.locator(".tg-graph .tg-mark-added")
        assert added.count() >= 1
        assert "softplus" in " ".join(added.evaluate_all("els => els.map(e => e.textContent)"))
        info = report.locator(".tg-step-info").inner_text()
        assert "phase stabilize" in info and "stabilize.py:" in info
        nb.page.set_viewport_size({"width": 1400, "height": 1500})
        nb.screenshot("compile_report_step.png", report)

        # the graph before the step: what it removed is marked
        before = kernel_serial(nb)
        report.locator("label", has_text="graph before this step").click()
        wait_redrawn(nb, before)
        assert report.locator(".tg-graph .tg-mark-removed").count() >= 1

        # after rewriting: click the Gemv node, its generated C shows
        before = kernel_serial(nb)
        report.locator(".widget-toggle-button", has_text="after rewriting").click()
        wait_redrawn(nb, before)
        gemv = nb.kernel_eval(
            "next(n['id'] for n in rep.view.graph['nodes'] if n.get('cls') == 'Gemv')").strip("'")
        report.locator(f'.tg-graph [data-tg-node="{gemv}"]').click()
        c_source = report.locator(".tg-c-source")
        c_source.wait_for(state="visible", timeout=20_000)
        text = c_source.inner_text()
        assert "Gemv{pair=" in text and "tg_n_" in text and "-O" in text
        assert nb.kernel_eval("rep.view.selected") == repr(gemv)
        nb.screenshot("compile_report_c.png", report)
    finally:
        nb.close()


QUICK_CELL = '''\
import random, threading, uuid
import tensorgraph as tg
import tensorgraph.tensor as tt
import tensorgraph.notebook as tgn
from tensorgraph.link import tiers
go = threading.Event()
tiers._background().submit(go.wait, 120)  # the optimized code waits for go: the quick tier
v = tt.vector("v")
out = v  # an elementwise chain never compiled before: not in the module cache
for fn in random.Random(uuid.uuid4().int).sample(
        [tt.exp, tt.tanh, tt.sin, tt.cos, tt.sigmoid, tt.softplus, tt.arctan, tt.erf], 6):
    out = fn(out)
quick = tg.function([v], out + tt.sum(tt.tanh(v)), name="quick")
rep = tgn.report(quick)
rep'''


def test_the_report_of_a_quick_tier_function_follows_the_switch(lab):
    """The summary says the quick tier (as the text form does) and changes by itself, through
    the kernel's thread, when the optimized code arrives."""
    nb = lab.open_notebook("report_tier.ipynb", [QUICK_CELL])
    try:
        summary = nb.panel().locator(f"{REPORT} .tg-report-summary")
        assert nb.kernel_eval("quick.tier") == "'quick'"
        text = summary.inner_text()
        assert "runs on the quick tier (" in text and "until the optimized code is ready" in text
        nb.screenshot("compile_report_quick_tier.png", summary)
        nb.page.evaluate("() => window.jupyterapp.commands.execute("
                         "'apputils:change-theme', {theme: 'JupyterLab Dark'})")
        nb.page.wait_for_timeout(1500)  # the theme's CSS applies
        nb.screenshot("compile_report_quick_tier_dark.png", summary)
        nb.page.evaluate("() => window.jupyterapp.commands.execute("
                         "'apputils:change-theme', {theme: 'JupyterLab Light'})")
        nb.kernel_eval("go.set()")
        nb.page.wait_for_function(
            """() => { const s = document.querySelector(
                '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-report-summary');
                return s && !s.textContent.includes('quick tier')
                    && / runs? C/.test(s.textContent); }""", timeout=120_000)
        assert nb.kernel_eval("(rep.tier, quick.tier)") == "('optimized', 'optimized')"
    finally:
        nb.close()
