"""The graph view in a real JupyterLab (and once in Notebook 7), driven by Debian's chromium:
nodes are drawn, a click selects (read back from the kernel), search finds an id, the dark
theme applies, a closed group opens, a fused node shows its inner loop."""

import ast
import re

from lab_driver import wait_kernel_idle

SEED = '''\
%load_ext tensorgraph
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
import tensorgraph.notebook as tgn
tg.config.floatX = "float32"
rng = np.random.default_rng(0)
x, y = tt.matrix("x"), tt.vector("y")
w = tg.shared(rng.standard_normal(784).astype("float32"), name="w")
b = tg.shared(np.float32(0.0), name="b")
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
prediction = p_1 > 0.5
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
cost = xent.mean() + 0.01 * (w ** 2).sum()
gw, gb = tg.grad(cost, [w, b])
train = tg.function([x, y], [prediction, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)],
                    name="train")'''

BIG = '''\
h, params = x, []
for k in range(64):
    W = tg.shared(rng.standard_normal((32, 32)).astype("float32") * 0.1, name=f"W{k}")
    c = tg.shared(np.zeros(32, dtype="float32"), name=f"c{k}")
    h = tt.tanh(tt.dot(h, W) + c)
    params += [W, c]
labels = tt.ivector("labels")
loss = tt.special.categorical_crossentropy(tt.special.softmax(h), labels).mean()
big = tgn.show(tg.grad(loss, params), height=600)
big'''


def drawn(nb, scope=".tg-graph"):
    return nb.panel().locator(f"{scope} [data-tg-node]")


def wait_for_nodes(nb, root_index=0, at_least=1):
    nb.page.wait_for_function(
        """([i, n]) => { const roots = document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .tg-graph');
            return roots[i] && roots[i].querySelectorAll('[data-tg-node],[data-tg-group]').length >= n; }""",
        arg=[root_index, at_least], timeout=60_000)


def poll(nb, expression, expected, tries=50):
    """Whether the kernel's ``repr(expression)`` becomes ``expected`` (the browser's
    messages reach the kernel asynchronously)."""
    for _ in range(tries):
        if nb.kernel_eval(expression) == expected:
            return True
        nb.page.wait_for_timeout(100)
    return False


def test_graph_view_in_jupyterlab(lab):
    nb = lab.open_notebook("graph_view.ipynb", [SEED, "view = tgn.show(train)\nview", BIG])
    try:
        wait_for_nodes(nb, 0, 10)
        roots = nb.panel().locator(".tg-graph")
        assert roots.count() == 2
        first = roots.nth(0)
        expected = int(nb.kernel_eval(
            "len([k for k in view.layout['items'] if not k.startswith('G:')])"))
        assert first.locator("[data-tg-node]").count() == expected > 10
        # every box says what the kernel wrote for it (layout["text"]), not a text of its own
        text = ast.literal_eval(nb.kernel_eval("view.layout['text']"))
        drawn = first.evaluate("""(root) => Object.fromEntries([...root.querySelectorAll(
            '[data-tg-node]')].map((g) => [g.getAttribute('data-tg-node'),
            [...g.querySelectorAll(':scope > text:not(.tg-badge):not(.tg-outlabel)')]
              .map((t) => t.textContent)]))""")
        assert drawn == text
        nb.screenshot("graph_view_seed_train.png")

        # click the Gemv node: the kernel sees the selection, the panel shows it
        gemv = nb.kernel_eval("next(n['id'] for n in view.graph['nodes'] if n.get('cls') == 'Gemv')")
        gemv = gemv.strip("'")
        first.locator(f'[data-tg-node="{gemv}"]').click()
        nb.page.wait_for_function(
            "(id) => [...document.querySelectorAll('.tg-detail')].some(p => !p.hidden && p.textContent.includes(`[id ${id}]`))",
            arg=gemv, timeout=20_000)
        assert nb.kernel_eval("view.selected") == repr(gemv)
        # the details come from the kernel after the selection's header
        first.locator(".tg-detail .tg-line", has_text="tt.dot(x, w)").first.wait_for(timeout=20_000)

        # search by id selects and centres another node
        target = nb.kernel_eval("view.model.ids[train.maker.fgraph.outputs[0]]").strip("'")
        search = first.locator(".tg-search")
        search.fill(target)
        search.press("Enter")
        assert poll(nb, "view.selected", repr(target))

        # a fused loop shows its inner scalar graph in the panel
        fused = nb.kernel_eval("next(n['id'] for n in view.graph['nodes'] if 'f' in n.get('f', ''))")
        first.locator(f'[data-tg-node="{fused.strip(chr(39))}"]').click()
        nb.page.wait_for_selector(".tg-detail .tg-inner", timeout=20_000)
        assert re.search(r"t0 = \w+\(", first.locator(".tg-detail .tg-inner").inner_text())
        nb.screenshot("graph_view_panel.png")

        # fold: the Gemv's ancestors become one box, which opens and unfolds again
        first.locator(f'[data-tg-node="{gemv}"]').click()
        first.locator('[data-act="ancestors"]').click()
        first.locator('[data-act="fold"]').click()
        first.locator('[data-tg-group="f1"]').wait_for(timeout=30_000)
        folded = nb.kernel_eval("[n['id'] for n in view.graph['nodes'] if n.get('g') == 'f1']")
        assert len(eval(folded)) > 3 and gemv in folded
        assert first.locator(f'[data-tg-node="{gemv}"]').count() == 0
        first.locator('[data-tg-group="f1"]').click()
        first.locator('[data-tg-unfold="f1"]').click()
        assert poll(nb, "[g['id'] for g in view.graph['groups']]", "[]")
        first.locator('[data-tg-frame="f1"]').wait_for(state="detached", timeout=30_000)

        # the big graph opens closed; clicking a group opens it (a new layout from the kernel)
        big = roots.nth(1)
        wait_for_nodes(nb, 1, 2)
        groups_before = big.locator("[data-tg-group]").count()
        assert 1 < groups_before <= 6 and big.locator("[data-tg-node]").count() == 0
        layer_group = nb.kernel_eval(
            "next(g['id'] for g in big.graph['groups'] if g['parent'] is None and 'tanh' in g['label'])"
        ).strip("'")
        big.locator(f'[data-tg-group="{layer_group}"]').click()
        nb.page.wait_for_function(
            """(g) => { const roots = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .tg-graph');
                return roots[1] && roots[1].querySelector(`[data-tg-frame="${g}"]`); }""",
            arg=layer_group, timeout=30_000)
        assert layer_group in nb.kernel_eval("big.expanded")
        assert big.locator("[data-tg-group]").count() > groups_before  # 64 layer boxes
        nb.screenshot("graph_view_big_opened.png")

        # dark theme: the view follows JupyterLab's theme variables
        light = first.evaluate("el => getComputedStyle(el).backgroundColor")
        nb.page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                         "{theme: 'JupyterLab Dark'})")
        nb.page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'",
                                  timeout=30_000)
        nb.page.wait_for_timeout(500)
        dark = first.evaluate("el => getComputedStyle(el).backgroundColor")
        assert dark != light
        rgb = [int(v) for v in re.findall(r"\d+", dark)[:3]]
        assert sum(rgb) < 200, dark  # a dark background
        nb.screenshot("graph_view_dark.png")
        nb.page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                         "{theme: 'JupyterLab Light'})")
    finally:
        nb.close()


def test_graph_view_in_notebook_7(lab):
    lab.write_notebook("nb7.ipynb", [SEED, "tgn.show(train)"])
    page = lab.browser.new_page(viewport={"width": 1300, "height": 900})
    try:
        page.goto(f"{lab.server.base}/notebooks/nb7.ipynb")
        wait_kernel_idle(page)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        page.wait_for_function(
            "() => document.querySelectorAll('.tg-graph [data-tg-node]').length > 10",
            timeout=120_000)
        assert page.locator(".tg-graph").count() == 1
    finally:
        page.close()
