"""The profile view in a real JupyterLab: %tg_profile on the seed's train draws the heat map
on the graph, clicking a sort button re-sorts the table (the kernel reads the same order)."""

import re

from demo_graphs import SEED_CELL


def test_the_profile_view_in_jupyterlab(lab):
    nb = lab.open_notebook("profile.ipynb", [SEED_CELL, "prof = %tg_profile -n 50 train(*D)\nprof"])
    try:
        view = nb.panel().locator(".tg-profile")
        assert view.count() == 1
        view.locator(".tg-graph [data-tg-node]").first.wait_for(timeout=30_000)
        legend = view.locator(".tg-graph .tg-legend")
        legend.wait_for(timeout=20_000)
        assert "% of node time" in legend.inner_text()
        hottest = nb.kernel_eval("prof.rows()[0]['node_id']").strip("'")
        first_cell = view.locator(".tg-profile-table tbody tr").first.locator("td").first
        assert first_cell.inner_text() == hottest
        nb.page.set_viewport_size({"width": 1400, "height": 1600})
        nb.screenshot("profile_heat_map.png", view)

        view.locator(".widget-toggle-button").filter(has_text=re.compile(r"^calls$")).click()
        view.locator(".widget-toggle-button").filter(has_text=re.compile(r"^op$")).click()
        nb.page.wait_for_function(
            """() => { const rows = [...document.querySelectorAll(
                '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-profile .tg-profile-table tbody tr')];
                const ops = rows.map(r => r.children[1].textContent);
                return ops.length > 3 && ops.every((o, i) => i === 0 || ops[i - 1] <= o); }""",
            timeout=20_000)
        assert nb.kernel_eval("prof.sort_by") == "'op'"
        shown = view.locator(".tg-profile-table tbody tr").first.locator("td").first.inner_text()
        assert shown == nb.kernel_eval("prof.rows()[0]['node_id']").strip("'")
    finally:
        nb.close()
