"""The comparison widget (tgn.compare) in a real JupyterLab: the table draws a row per mode
(a failing mode's row shows its error), a click on a row shows that mode's graph below and the
kernel reads the same selection; screenshots in the light and the dark theme."""

from demo_graphs import SEED_CELL

COMPARE_CELL = ('cmp = tgn.compare(train, modes=["FAST_RUN", "JAX", "NUMBA", "NO_SUCH_MODE"], '
                'args=D, compile_times=["FAST_RUN", "JAX"], name="seed step")\n'
                'view = cmp.view()\nview')


def test_the_comparison_in_jupyterlab(lab):
    nb = lab.open_notebook("compare.ipynb", [SEED_CELL, COMPARE_CELL])
    try:
        view = nb.panel().locator(".tg-compare-view")
        assert view.count() == 1
        rows = view.locator(".tg-compare tbody tr[data-tg-mode]")
        rows.first.wait_for(timeout=30_000)
        assert rows.count() == 4
        failed = view.locator("tr.tg-cmp-error")
        assert failed.count() == 1 and "unknown mode" in failed.inner_text()
        view.locator(".tg-graph [data-tg-node]").first.wait_for(timeout=30_000)
        nb.page.set_viewport_size({"width": 1400, "height": 1500})
        nb.screenshot("compare_light.png", view)

        view.locator('tr[data-tg-mode="JAX"]').click()
        nb.page.wait_for_function(
            """() => { const t = document.querySelector(
                '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-compare-view .tg-graph .tg-title');
                return t && t.textContent.startsWith('JAX'); }""", timeout=30_000)
        assert nb.kernel_eval("view.selected") == "'JAX'"
        assert view.locator("tr.tg-cmp-selected").get_attribute("data-tg-mode") == "JAX"
        view.locator(".tg-graph [data-tg-node]").first.wait_for(timeout=30_000)

        nb.page.evaluate("() => window.jupyterapp.commands.execute("
                         "'apputils:change-theme', {theme: 'JupyterLab Dark'})")
        nb.page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'",
                                  timeout=30_000)
        nb.page.wait_for_timeout(600)
        nb.screenshot("compare_dark.png", view)
        nb.page.evaluate("() => window.jupyterapp.commands.execute("
                         "'apputils:change-theme', {theme: 'JupyterLab Light'})")
    finally:
        nb.close()


BACKGROUND_CELL = ('bg = tgn.compare(train, modes=["FAST_RUN", "JAX", "NUMBA"], args=D, '
                   'wait=False, name="in the background")\nbg.view()')


def test_compile_columns_fill_in_and_cancel_stops_them(lab):
    """The table is there when the cell ends; the compile columns are still being measured
    (a progress line, "measuring..." cells); Cancel kills the fresh processes and the kernel
    reads the comparison as cancelled."""
    nb = lab.open_notebook("compare_background.ipynb", [SEED_CELL, BACKGROUND_CELL])
    try:
        view = nb.panel().locator(".tg-compare-view")
        view.locator(".tg-compare tbody tr[data-tg-mode]").first.wait_for(timeout=30_000)
        assert view.locator(".tg-compare tbody tr[data-tg-mode]").count() == 3
        progress = view.locator(".tg-cmp-progress")
        progress.wait_for(timeout=10_000)
        assert "compile times:" in progress.inner_text()
        assert view.locator(".tg-cmp-pending").count() >= 1
        nb.screenshot("compare_measuring.png", view)
        view.locator("button.tg-cmp-cancel").click()
        progress.wait_for(state="detached", timeout=60_000)
        assert nb.kernel_eval("bg.done") == "True"
        notes = nb.kernel_eval("sorted({r['compile_note'] or 'measured' for r in bg.rows})")
        assert "cancelled" in notes, notes
        assert view.locator(".tg-cmp-pending").count() == 0
    finally:
        nb.close()
