"""Stepping into a scan in a real JupyterLab (issue 22): the stepper's buttons, clicked, enter
the loop (the inner node marked on the opened loop group is the kernel's ``current``), run to
an iteration typed in the box, and run to the first Inf, which names the iteration and the
inner node; the state is read back from the kernel."""

SETUP = """\
%load_ext tensorgraph
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
import tensorgraph.notebook as tgn
from tensorgraph.scan import scan
x, h0 = tt.matrix("x", dtype="float32"), tt.vector("h0", dtype="float32")
w = tg.shared(np.eye(3, dtype="float32") * 2, name="w")
h, _ = scan(lambda x_t, h_prev: tt.maximum(tt.dot(h_prev, w) + x_t, 0), sequences=x,
            outputs_info=h0, name="relu_rnn")
f = tg.function([x, h0], h[-1].sum(), name="f")
X = np.ones((200, 3), dtype="float32")
before = next(i for i, n in enumerate(f.maker.fgraph.toposort()) if type(n.op).__name__ == "Scan")
st = tgn.Stepper(f, X, np.ones(3, dtype="float32"))
st"""


def wait_status(nb, text):
    nb.page.wait_for_function(
        """(t) => { const s = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-stepper .tg-step-status');
            return s && s.textContent.includes(t); }""", arg=text, timeout=30_000)


def current_mark(nb, stepper, expected):
    """The node marked current in the view, once it is ``expected`` (the kernel's)."""
    nb.page.wait_for_function(
        """(id) => { const m = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-stepper .tg-graph .tg-mark-current');
            return m && m.getAttribute('data-tg-node') === id; }""", arg=expected,
        timeout=30_000)
    return stepper.locator(".tg-graph .tg-mark-current").get_attribute("data-tg-node")


def test_stepping_into_a_scan_in_jupyterlab(lab):
    nb = lab.open_notebook("scan_stepper.ipynb", [SETUP])
    try:
        stepper = nb.panel().locator(".tg-stepper").first
        stepper.locator(".tg-graph [data-tg-node]").first.wait_for(timeout=60_000)
        before = int(nb.kernel_eval("before"))
        for _ in range(before + 1):  # the nodes before the loop, then into it
            stepper.locator(".tg-step-one").click()
        wait_status(nb, "iteration 0 of")
        assert nb.kernel_eval("st.iteration") == "0"
        current = nb.kernel_eval("st.current").strip("'")
        scan_id = nb.kernel_eval("st.run.ids[st.run.scan.node]").strip("'")
        assert current.startswith(scan_id + "/")
        assert current_mark(nb, stepper, current) == current  # drawn inside the opened loop
        assert stepper.locator(f'.tg-graph [data-tg-frame="in:{scan_id}"]').count() == 1

        box = stepper.locator(".tg-step-k input")
        box.fill("5")
        box.press("Enter")
        stepper.locator(".tg-step-iteration").click()
        wait_status(nb, "iteration 5 of")
        assert nb.kernel_eval("st.iteration") == "5"
        assert nb.kernel_eval("st.run.scan.inner.position") == "0"
        # the values of an inner variable at an earlier iteration, from the kernel
        assert nb.kernel_eval("float(st.values_at(st.current.split('/')[0] + '/' + "
                              "st.run.scan.inner.ids[st.run.scan.function.maker.fgraph"
                              ".outputs[0].owner], 2).max())") == "15.0"
        nb.screenshot("scan_stepper_iteration.png", stepper)

        stepper.locator(".tg-step-nan").click()
        wait_status(nb, "first NaN/Inf")
        found = nb.kernel_eval("(st._nonfinite.iteration, st._nonfinite.node_id)")
        iteration, node_id = eval(found)  # noqa: S307 - a tuple the kernel printed
        assert iteration == 126 and node_id.startswith(scan_id + "/")
        status = stepper.locator(".tg-step-status").inner_text()
        assert f"iteration {iteration} of Scan{{relu_rnn" in status
        bad = stepper.locator(".tg-graph .tg-mark-nonfinite")
        bad.wait_for(timeout=20_000)
        assert bad.get_attribute("data-tg-node") == node_id
        nb.screenshot("scan_stepper_nonfinite.png", stepper)
    finally:
        nb.close()
