"""Folded constants and shape plumbing in a real JupyterLab (issue 36): a NaN made by a
folded node (an Alloc of a NaN fill) shows that node drawn and marked in the stepper; search
finds a folded node by id and draws it; the "shape code" button brings the plumbing back
(and is hidden on a rewrite step, which draws every node);
edge labels show on the selected node's edges only; the folded lines read in the dark theme."""

import ast

from test_graph_view_browser import SEED, poll, wait_for_nodes
from view_checks import check_view, set_theme

NAN_FILL = '''\
z = tt.dvector("z")
nanfill = tg.function([z], tt.exp(z) * tt.alloc(np.nan, z.shape[0]), name="nanfill",
                      mode=tg.Mode("cvm", None))
hunt = tgn.Stepper(nanfill, np.ones(3))
found = hunt.run_to_nonfinite()
hunt'''


def test_folded_nodes_in_jupyterlab(lab):
    nb = lab.open_notebook("folding.ipynb", [SEED, NAN_FILL, "view = tgn.show(train)\nview",
                                             "rep = tgn.report(train)\nrep.show_step(3)\nrep"])
    try:
        wait_for_nodes(nb, 1, 5)
        # the stepper stopped on the Alloc: drawn (not folded) and marked
        alloc = ast.literal_eval(nb.kernel_eval("found.node_id"))
        assert nb.kernel_eval("type(found.node.op).__name__") == "'Alloc'"
        stepper = nb.panel().locator(".tg-stepper").first
        culprit = stepper.locator(f'.tg-graph [data-tg-node="{alloc}"]')
        culprit.wait_for(timeout=30_000)
        assert "tg-mark-nonfinite" in culprit.get_attribute("class")

        view = nb.panel().locator(".tg-graph").nth(1)
        folded = ast.literal_eval(nb.kernel_eval(
            "next(n['id'] for n in view.graph['nodes'] if n.get('cls') == 'Alloc')"))
        assert view.locator(f'[data-tg-node="{folded}"]').count() == 0
        # its host's badge names it
        assert view.locator(f'[data-tg-folded="{folded}"]').count() == 1
        # edge labels: none shown until a node is selected
        shown = "(root) => [...root.querySelectorAll('.tg-edge-label')].filter((t) => " \
                "getComputedStyle(t).display !== 'none').length"
        assert view.evaluate(shown) == 0
        search = view.locator(".tg-search")
        search.fill(folded)
        search.press("Enter")
        assert poll(nb, "view.selected", repr(folded))
        view.locator(f'[data-tg-node="{folded}"]').wait_for(timeout=30_000)
        assert "tg-selected" in view.locator(f'[data-tg-node="{folded}"]').get_attribute("class")
        labelled = view.evaluate(shown)
        edges = view.evaluate("(root) => root.querySelectorAll('.tg-edge-selected').length")
        assert edges >= 1 and labelled >= 1
        # the toggle: every plumbing node drawn again
        view.locator('[data-act="shapecode"]').click()
        assert poll(nb, "view.show_shape_code", "True")
        nb.page.wait_for_function(
            """(n) => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .tg-graph')[1]
                 .querySelectorAll('[data-tg-node]').length === n""",
            arg=int(nb.kernel_eval("view.wait() and len(view.layout['items'])")), timeout=30_000)
        view.locator('[data-act="shapecode"]').click()
        assert poll(nb, "view.show_shape_code", "False")
        nb.kernel_eval("view.select(None)")
        nb.page.wait_for_function(
            """(id) => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .tg-graph')[1]
                 .querySelectorAll(`[data-tg-node="${id}"]`).length === 0""",
            arg=folded, timeout=30_000)
        # a rewrite step drawn at its union places draws every node: no folding buttons
        report = nb.panel().locator(".tg-compile-report .tg-graph").first
        report.locator("[data-tg-node]").first.wait_for(timeout=30_000)
        assert report.locator('[data-act="shapecode"]').is_hidden()
        assert view.locator('[data-act="shapecode"]').is_visible()
        # the ports and badges read in both themes
        check_view(view, "folded light")
        set_theme(nb.page, "JupyterLab Dark")
        try:
            check_view(view, "folded dark")
        finally:
            set_theme(nb.page, "JupyterLab Light")
    finally:
        nb.close()
