"""Render the graph views of the seed logistic regression (and a 64-layer MLP) to PNG files.

    python tools/screenshots.py [--out docs/images]

Starts a JupyterLab, runs a notebook in Debian's chromium (see ``tests/browser/lab_driver.py``)
and saves the views the README shows: the seed's ``train`` before and after rewriting, a
node's panel, the dark theme, the MLP's gradient closed and with a group open; the compile
report of ``%%tg_compile train`` at the stabilizing step and with the Gemv's generated C; the
stepper stopped at the first NaN; the profile view of the seed's ``train`` with its heat map;
a scan (an RNN's training step) closed, opened with its inner graph, in the light and the dark
theme (``--only scan`` renders just these).
A development tool (the ``test`` extra, not in the wheel); look at the pictures after changing
the view.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "browser")]  # the checkout, and its page tools

from demo_graphs import MLP_CELL, SEED_CELL, SEED_COMPILE_CELL  # noqa: E402
from lab_driver import Lab, LabServer, launch_chromium  # noqa: E402

CELLS = [
    SEED_CELL,
    "before = tgn.show([prediction, xent, w - 0.1 * gw, b - 0.1 * gb], "
    "title='train before rewriting', height=760)\nbefore",
    "after = tgn.show(train, height=560)\nafter",
    MLP_CELL + "\nbig = tgn.show(mlp_grads, height=560)\nbig",
]


def _view(nb, index: int):
    return nb.panel().locator(".jp-OutputArea-output .tg-graph").nth(index)


def _wait_drawn(nb, index: int, selector: str = "[data-tg-node],[data-tg-group]") -> None:
    nb.page.wait_for_function(
        """([i, sel]) => { const roots = document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-graph');
            return roots[i] && roots[i].querySelectorAll(sel).length > 0
                && !roots[i].classList.contains('tg-busy'); }""",
        arg=[index, selector], timeout=120_000)
    nb.page.wait_for_timeout(400)


# the step where log(sigmoid(-z)) (what log(1 - sigmoid(z)) became) turns into -softplus(z)
STABLE_STEP = ("next(s.index for s in rep.steps if s.name == 'local_stable_log' and any("
               "'sigmoid}(Elemwise{neg}' in str(r.node.inputs[0].owner) for r in s.removed))")


def _report_shots(lab, out: pathlib.Path) -> list[pathlib.Path]:
    """The compile report: at the stabilizing step, and the Gemv's generated C."""
    nb = lab.open_notebook("report_shots.ipynb", [SEED_CELL, SEED_COMPILE_CELL,
                                                  "rep = tgn.last_report('train')"])
    nb.page.set_viewport_size({"width": 1400, "height": 1500})
    report = nb.panel().locator(".tg-compile-report").first
    nb.kernel_eval(f"rep.show_step({STABLE_STEP})")
    _wait_drawn(nb, 0, ".tg-mark-added")
    shots = [nb.screenshot(str(out / "compile_report_step.png"), report)]
    nb.kernel_eval("setattr(rep, 'mode', 'after')")
    nb.page.wait_for_timeout(800)
    gemv = nb.kernel_eval("next(n['id'] for n in rep.view.graph['nodes'] "
                          "if n.get('cls') == 'Gemv')")
    report.locator(f'.tg-graph [data-tg-node={gemv}]').click()
    report.locator(".tg-c-source").wait_for(timeout=30_000)
    nb.page.wait_for_timeout(300)
    shots.append(nb.screenshot(str(out / "compile_report_c.png"), report))
    nb.close()
    return shots


NAN_CELL = """\
z = tt.vector("z")
scaled = tt.log(z) / 2
guarded = tg.function([z], [scaled.sum(), (z ** 2).sum()], name="guarded")
nan_run = tgn.Stepper(guarded, np.array([4.0, 0.0, 1.0], dtype="float32"))
nan_run.run_to_nonfinite()
nan_run"""


def _run_shots(lab, out: pathlib.Path) -> list[pathlib.Path]:
    """The stepper at the first NaN and the profile view's heat map."""
    nb = lab.open_notebook("run_shots.ipynb", [SEED_CELL, NAN_CELL,
                                               "prof = %tg_profile -n 200 train(*D)\nprof"])
    nb.page.set_viewport_size({"width": 1400, "height": 1600})
    stepper = nb.panel().locator(".tg-stepper").first
    stepper.locator(".tg-mark-nonfinite").wait_for(timeout=60_000)
    nb.page.wait_for_timeout(600)
    shots = [nb.screenshot(str(out / "stepper_nan.png"), stepper)]
    profile = nb.panel().locator(".tg-profile").first
    profile.locator(".tg-legend").wait_for(timeout=60_000)
    nb.page.wait_for_timeout(600)
    shots.append(nb.screenshot(str(out / "profile_heat_map.png"), profile))
    nb.close()
    return shots


SCAN_CELL = """\
%load_ext tensorgraph
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
import tensorgraph.notebook as tgn
from tensorgraph.scan import scan
rng = np.random.default_rng(0)
xs, h0 = tt.dtensor3("xs"), tt.dmatrix("h0")
w_in = tg.shared(rng.standard_normal((4, 8)) * 0.3, name="w_in")
w_rec = tg.shared(rng.standard_normal((8, 8)) * 0.3, name="w_rec")
hs, _ = scan(lambda x_t, h_prev, h_prev2: tt.tanh(tt.dot(x_t, w_in) + tt.dot(h_prev, w_rec)
                                                  + 0.1 * h_prev2),
             sequences=xs, outputs_info=dict(initial=tt.stack([h0, h0]), taps=[-1, -2]),
             name="rnn")
loss = (hs[-1] ** 2).mean()
g_in, g_rec = tg.grad(loss, [w_in, w_rec])
step = tg.function([xs, h0], loss, updates=[(w_in, w_in - 0.1 * g_in),
                                            (w_rec, w_rec - 0.1 * g_rec)], name="step")
view = tgn.show(step, height=700)
view"""


def _scan_shots(lab, out: pathlib.Path) -> list[pathlib.Path]:
    """An RNN's training step: the forward loop closed, then opened (its inner graph, the
    inputs marked by role) with a state's panel, in the light and the dark theme."""
    nb = lab.open_notebook("scan_shots.ipynb", [SCAN_CELL])
    nb.page.set_viewport_size({"width": 1400, "height": 1600})
    _wait_drawn(nb, 0)
    view = _view(nb, 0)
    shots = [nb.screenshot(str(out / "scan_closed.png"), view)]
    # the forward loop, in the group of the line that built it: open both by clicking
    path = nb.kernel_eval("view.model.group_path(next(g['node'] for g in view.graph['groups'] "
                          "if g.get('k') == 'loop' and 'grad' not in g['label']))")
    for group in ast.literal_eval(path):
        view.locator('[data-act="fit"]').click()  # the whole graph in sight
        nb.page.wait_for_timeout(400)
        view.locator(f'[data-tg-group="{group}"]').click()
        _wait_drawn(nb, 0, f'[data-tg-frame="{group}"]')
    state = nb.kernel_eval("next(n['id'] for n in view.graph['nodes'] if n.get('r') == 'state')")
    view.locator(f'[data-tg-node="{state.strip(chr(39))}"]').click()
    nb.page.wait_for_selector(".tg-detail .tg-role", timeout=30_000)
    nb.page.wait_for_timeout(500)
    shots.append(nb.screenshot(str(out / "scan_opened.png"), view))
    nb.page.evaluate("() => window.jupyterapp.commands.execute("
                     "'apputils:change-theme', {theme: 'JupyterLab Dark'})")
    nb.page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    nb.page.wait_for_timeout(800)
    shots.append(nb.screenshot(str(out / "scan_opened_dark.png"), view))
    nb.page.evaluate("() => window.jupyterapp.commands.execute("
                     "'apputils:change-theme', {theme: 'JupyterLab Light'})")
    nb.page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
    nb.close()
    return shots


def render(out: pathlib.Path, only: str | None = None) -> list[pathlib.Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as home:
        server = LabServer(pathlib.Path(root), pathlib.Path(home))
        try:
            with sync_playwright() as p:
                browser = launch_chromium(p)
                lab = Lab(server, browser)
                shots += _scan_shots(lab, out)
                if only == "scan":
                    return shots
                shots += _report_shots(lab, out)
                shots += _run_shots(lab, out)
                nb = lab.open_notebook("screenshots.ipynb", CELLS)
                for i in range(3):
                    _wait_drawn(nb, i)
                before, after, big = _view(nb, 0), _view(nb, 1), _view(nb, 2)
                shots.append(nb.screenshot(str(out / "graph_before_rewriting.png"), before))
                shots.append(nb.screenshot(str(out / "graph_train.png"), after))
                gemv = nb.kernel_eval(
                    "next(n['id'] for n in after.graph['nodes'] if n.get('cls') == 'Gemv')")
                after.locator(f'[data-tg-node={gemv}]').click()
                nb.page.wait_for_selector(".tg-detail .tg-line", timeout=30_000)
                nb.page.wait_for_timeout(300)
                shots.append(nb.screenshot(str(out / "graph_panel.png"), after))
                shots.append(nb.screenshot(str(out / "graph_mlp_closed.png"), big))
                layer = nb.kernel_eval("next(g['id'] for g in big.graph['groups'] "
                                       "if g['parent'] is None and 'tanh' in g['label'])")
                big.locator(f'[data-tg-group={layer}]').click()
                _wait_drawn(nb, 2, ".tg-frame")
                inner = nb.kernel_eval(f"next(g['id'] for g in big.graph['groups'] "
                                       f"if g['parent'] == {layer} and g['label'] == 'W3')")
                big.locator(f'[data-tg-group={inner}]').click()
                nb.page.wait_for_timeout(1500)
                shots.append(nb.screenshot(str(out / "graph_mlp_opened.png"), big))
                nb.page.evaluate("() => window.jupyterapp.commands.execute("
                                 "'apputils:change-theme', {theme: 'JupyterLab Dark'})")
                nb.page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
                nb.page.wait_for_timeout(800)
                shots.append(nb.screenshot(str(out / "graph_dark.png"), after))
                nb.close()
                browser.close()
        finally:
            server.stop()
    return shots


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/images", help="directory for the PNG files")
    parser.add_argument("--only", choices=["scan"], help="render only these views")
    args = parser.parse_args(argv)
    for path in render(pathlib.Path(args.out).resolve(), args.only):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
