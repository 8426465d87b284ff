"""The stepper in a real JupyterLab: step the seed's train with the button and read the
position back from the kernel; run to the first NaN of a graph with log(0) and see the node
marked and named."""

from demo_graphs import SEED_CELL

STEPPER = """\
st = tgn.Stepper(train, *D)
st"""

NAN = """\
z = tt.vector("z")
ratio = tt.log(z) / 2
guarded = tg.function([z], [ratio.sum(), (z ** 2).sum()], name="guarded")
nan_run = tgn.Stepper(guarded, np.array([4.0, 0.0, 1.0], dtype="float32"))
nan_run"""


def wait_text(nb, index, text):
    nb.page.wait_for_function(
        """([i, t]) => { const s = document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-stepper')[i];
            return s && s.textContent.includes(t); }""", arg=[index, text], timeout=30_000)


def test_the_stepper_in_jupyterlab(lab):
    nb = lab.open_notebook("stepper.ipynb", [SEED_CELL, STEPPER, NAN])
    try:
        steppers = nb.panel().locator(".tg-stepper")
        assert steppers.count() == 2
        seed = steppers.nth(0)
        seed.locator(".tg-graph [data-tg-node]").first.wait_for(timeout=30_000)
        wait_text(nb, 0, "0 of 15 nodes run")
        for k in (1, 2, 3):
            seed.locator(".tg-step-one").click()
            wait_text(nb, 0, f"{k} of 15 nodes run")
        assert nb.kernel_eval("st.run.position") == "3"
        current = nb.kernel_eval("st.run.ids[st.run.current]").strip("'")
        marked = seed.locator(".tg-graph .tg-mark-current")
        marked.wait_for(timeout=20_000)
        assert marked.get_attribute("data-tg-node") == current
        # the three done nodes, those drawn: shape plumbing run folds into a badge (issue 36)
        done = int(nb.kernel_eval("len([i for i, m in st.view.marks.items() if m == 'done' "
                                  "and i in st.view.layout['items']])"))
        assert done >= 1 and seed.locator(".tg-graph .tg-mark-done").count() == done
        assert "output 0" in seed.locator(".tg-step-panel").inner_text()
        nb.screenshot("stepper_seed.png", seed)

        guarded = steppers.nth(1)
        guarded.locator(".tg-step-nan").click()
        wait_text(nb, 1, "first NaN/Inf")
        bad = guarded.locator(".tg-graph .tg-mark-nonfinite")
        bad.wait_for(timeout=20_000)
        found = nb.kernel_eval("nan_run._nonfinite.node_id").strip("'")
        assert bad.get_attribute("data-tg-node") == found
        status = guarded.locator(".tg-step-status").inner_text()
        assert "ratio = tt.log(z) / 2" in status and "1 inf" in status
        nb.page.set_viewport_size({"width": 1400, "height": 1400})
        nb.screenshot("stepper_nan.png", guarded)
    finally:
        nb.close()


def test_the_stepper_and_the_profile_view_in_notebook_7(lab):
    from lab_driver import wait_kernel_idle

    # every node drawn (the first two run are shape plumbing, folded by default: issue 36)
    lab.write_notebook("nb7_run.ipynb", [SEED_CELL, "st7 = tgn.Stepper(train, *D)\n"
                                         "st7.view.set_folding(shape_code=True)\n"
                                         "st7.step(2)",
                                         "%tg_profile -n 5 train(*D)"])
    page = lab.browser.new_page(viewport={"width": 1300, "height": 900})
    try:
        page.goto(f"{lab.server.base}/notebooks/nb7_run.ipynb")
        wait_kernel_idle(page)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        page.wait_for_function(
            """() => document.querySelector('.tg-stepper .tg-mark-current')
                && document.querySelector('.tg-profile .tg-legend')
                && document.querySelectorAll('.tg-graph [data-tg-node]').length > 20""",
            timeout=120_000)
        assert page.locator(".tg-stepper .tg-mark-done").count() == 2
    finally:
        page.close()
