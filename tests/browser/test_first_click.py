"""Issue 26: one click is enough, right after Run All, in JupyterLab and in Notebook 7.

A user runs every cell and clicks once on a node of a graph view in the output of a cell that
is not the active one: the panel opens and the kernel has the selection. The same for the
graph views of the compile report, the stepper and the profile, for a closed group (one click
opens it) and for toolbar buttons (the graph view's zoom-in, the stepper's step). Each front
end: 20 fresh pages (3 unless ``-m slow``; the page reloads: a new document, the same
kernel), Run All, then one click on each target, in a rotating order, so every target is
clicked first after Run All in some page and never in the active cell; the kernel is checked
after each click.

A click is a press and a release (``press``: the pointer moves onto the target, presses,
releases 60 ms later). The view acts on the press and release itself: the browser's click
event is lost when the boxes are redrawn between them (``test_a_press_survives_a_redraw``)."""

from __future__ import annotations

import textwrap

import pytest

from demo_graphs import SEED_CELL

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

# the compiled seed is kept across Run All (each page runs every cell; the widgets are new)
_LOAD, _, _BODY = SEED_CELL.partition("\n")
SEED = f"{_LOAD}\nif 'train' not in globals():\n" + textwrap.indent(_BODY, "    ")
GROUPS = '''\
if "grads" not in globals():
    h, params = x, []
    for k in range(8):  # more than AUTO_OPEN op nodes of math: grouped
        W = tg.shared(rng.standard_normal((8, 8)).astype("float32"), name=f"W{k}")
        c = tg.shared(np.zeros(8, dtype="float32"), name=f"c{k}")
        h = tt.tanh(tt.dot(h, W) + c)
        params += [W, c]
    grads = tg.grad((h ** 2).mean(), params)
big = tgn.show(grads, height=360)
big'''
CELLS = [SEED, "view = tgn.show(train, height=360)\nview", "rep = tgn.report(train)\nrep",
         "st = tgn.Stepper(train, *D)\nst", "prof = %tg_profile -n 3 train(*D)\nprof", GROUPS,
         "done = True"]
#: the graph views in page order, by their names in the kernel
VIEWS = ["view", "rep.view", "st.view", "prof.view", "big"]
#: what is clicked, in an order where neighbours are in different cells (the rotation keeps
#: that): a node of each view, a closed group, a button of the graph view's toolbar (zoom in)
#: and of the stepper's (step)
TARGETS = ["view", "rep.view", "st.view", "prof.view", "group", "zoomin", "step"]
CELL_OF = {"view": 1, "rep.view": 2, "st.view": 3, "prof.view": 4, "group": 5, "zoomin": 1,
           "step": 3}

ALL_DRAWN = """(n) => { const roots = [...document.querySelectorAll('%s .tg-graph')];
  return roots.length === n && roots.every((g) => g.dataset.tgDrawn
    && !g.classList.contains('tg-busy') && g.querySelector('[data-tg-node], [data-tg-group]')); }
""" % PANEL
PROMPTS_DONE = """() => { const p = document.querySelectorAll('%s .jp-CodeCell .jp-InputArea-prompt');
  return p.length > 0 && [...p].every((e) => /\\[\\d+\\]/.test(e.textContent)); }""" % PANEL
ACTIVE_CELL = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
QUIET_MS = 150


def in_root(index: int, body: str) -> str:
    """A JavaScript predicate on the index-th graph view of the page (``r``) and ``arg``."""
    return ("(arg) => { const r = document.querySelectorAll('%s .tg-graph')[%d]; "
            "return !!r && (%s); }" % (PANEL, index, body))


#: where to press for a target: the view comes into sight, then the middle of the first node
#: (or closed group) that shows in its drawing and is what the pointer hits there, or of a
#: toolbar button, once it has kept its place and nothing has come into the notebook for
#: QUIET_MS (what the kernel sent for the previous click may still grow a cell above);
#: returns {x, y, id}
AIM = """async ([index, selector, attr]) => {
  const panel = document.querySelector('%s');
  const root = index === null ? panel.querySelector('.tg-stepper') :
    panel.querySelectorAll('.tg-graph')[index];
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const find = () => {
    root.scrollIntoView({block: 'nearest'});
    const svg = root.querySelector('svg') && root.querySelector('svg').getBoundingClientRect();
    for (const el of root.querySelectorAll(selector)) {
      const r = (el.querySelector('rect') || el).getBoundingClientRect();
      const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
      if (attr && (x < svg.left || x > svg.right || y < svg.top || y > svg.bottom)) continue;
      const hit = document.elementFromPoint(x, y);
      if (hit && el.contains(hit)) return {x, y, id: attr ? el.getAttribute(attr) : null};
    }
    return null;
  };
  let changed = performance.now();
  const arrivals = new MutationObserver(() => { changed = performance.now(); });
  arrivals.observe(panel, {subtree: true, childList: true, characterData: true});
  let aim = find();
  const started = performance.now();
  while (performance.now() - started < 10000) {
    await frame();
    const again = find();
    if (!aim || !again || aim.x !== again.x || aim.y !== again.y) changed = performance.now();
    aim = again;
    if (aim && performance.now() - changed >= %d) break;
  }
  arrivals.disconnect();
  return aim; }""" % (PANEL, QUIET_MS)

#: what the last press landed on: [index of its graph view (-1: none), the node's or group's
#: id, a button's data-act, or 'step']
PRESSED = """document.addEventListener('pointerdown', (ev) => {
  const roots = [...document.querySelectorAll('%s .tg-graph')];
  const hit = ev.target.closest('[data-tg-node],[data-tg-group],[data-act],.tg-step-one');
  window.tgPressed = hit && [roots.indexOf(hit.closest('.tg-graph')),
    hit.getAttribute('data-tg-node') ?? hit.getAttribute('data-tg-group')
      ?? hit.getAttribute('data-act') ?? 'step'];
}, true);""" % PANEL


def press(page, index, selector: str, attr: str | None = None, hold_ms: int = 60) -> str:
    """A user's click on a target (see ``AIM``): the pointer comes onto it, presses,
    releases. Returns the id pressed (``attr``)."""
    aim = page.evaluate(AIM, [index, selector, attr])
    assert aim, f"no {selector} in sight in view {index}"
    page.mouse.move(aim["x"] - 30, aim["y"] - 20)
    page.mouse.move(aim["x"], aim["y"], steps=2)
    page.mouse.down()
    page.wait_for_timeout(hold_ms)
    page.mouse.up()
    expected = [-1 if index is None else index,
                aim["id"] or ("step" if index is None else selector.split('"')[1])]
    assert page.evaluate("() => window.tgPressed") == expected, (
        f"the press missed {expected}: the page moved under the pointer")
    return aim["id"]


def click_target(page, name: str) -> tuple[str, str]:
    """Click ``name`` once and wait until the page shows what it does. Returns the kernel
    expression that must then hold and the ``repr`` it must have."""
    index = {view: k for k, view in enumerate(VIEWS)}
    if name in index and name != "big":  # a node of that view: the panel opens on it
        node = press(page, index[name], "[data-tg-node].tg-k-apply", "data-tg-node")
        page.wait_for_function(in_root(index[name], "!r.querySelector('.tg-detail').hidden && "
                                       "r.querySelector('.tg-detail').textContent.includes("
                                       "`[id ${arg}]`)"), arg=node, timeout=10_000)
        return f"{name}.selected", repr(node)
    if name == "group":  # a closed group opens
        group = press(page, index["big"], "[data-tg-group]", "data-tg-group")
        page.wait_for_function(in_root(index["big"], "r.querySelector("
                                                     "`[data-tg-frame=\"${arg}\"]`)"),
                               arg=group, timeout=30_000)
        return f"{group!r} in big.expanded", "True"
    if name == "zoomin":
        scale = "r.querySelector('.tg-viewport').getScreenCTM().a"
        before = page.evaluate(in_root(index["view"], scale).replace("!!r && ", ""))
        press(page, index["view"], '[data-act="zoomin"]')
        page.wait_for_function(in_root(index["view"], f"{scale} > arg * 1.2"), arg=before,
                               timeout=10_000)
        return "True", "True"
    assert name == "step"  # the stepper's own button (an ipywidgets Button)
    press(page, None, ".tg-step-one")
    page.wait_for_function("() => document.querySelector('%s .tg-step-status')"
                           ".textContent.startsWith('1 of')" % PANEL, timeout=10_000)
    return "st.run.position", "1"


def kernel_holds(nb, checks: list[tuple[str, str]], tries: int = 50) -> list:
    """The checks whose expression's ``repr`` is not (yet, after ``tries`` polls) the
    expected one (the page's messages reach the kernel asynchronously)."""
    expression = "[" + ", ".join(f"repr({e})" for e, _ in checks) + "]"
    for _ in range(tries):
        missed = [(e, v, g) for (e, v), g in zip(checks, eval(nb.kernel_eval(expression)))
                  if g != v]
        if not missed:
            return []
        nb.page.wait_for_timeout(100)
    return missed


class FrontEnd:
    """One front end's page on its own notebook (and kernel), reloaded for every round."""

    def __init__(self, lab, name: str, url: str):
        from lab_driver import LabNotebook

        lab.write_notebook(name, CELLS)
        self.name, self.url = name, url
        self.page = lab.browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.add_init_script(PRESSED)
        self.nb = LabNotebook(lab, name, self.page)

    def load(self) -> None:
        self.page.goto(self.url, wait_until="commit")

    def run_all(self) -> None:
        from lab_driver import wait_kernel_idle

        wait_kernel_idle(self.page)
        self.page.evaluate("() => { window.jupyterapp.commands.execute("
                           "'notebook:run-all-cells'); }")

    def click_once_each(self, k: int) -> None:
        """After Run All: one click on every target, the k-th first."""
        self.page.wait_for_function(PROMPTS_DONE, timeout=120_000)
        self.page.wait_for_function(ALL_DRAWN, arg=len(VIEWS), timeout=60_000)
        order = TARGETS[k % len(TARGETS):] + TARGETS[:k % len(TARGETS)]
        for target in order:
            active = self.page.evaluate(ACTIVE_CELL)
            assert active != CELL_OF[target], (self.name, k, target, active)
            try:
                check = click_target(self.page, target)
            except Exception as exc:  # the page as it was, for the report
                shot = self.nb.screenshot(f"first_click_lost_{self.name.split('.')[0]}.png")
                raise AssertionError(f"{self.name}, page {k} (order {order}): the click on "
                                     f"{target} did nothing visible ({exc}); {shot}") from None
            # the kernel has it (and has sent what it shows, before the next click aims)
            missed = kernel_holds(self.nb, [check])
            assert not missed, f"{self.name}, page {k} (order {order}): {missed}"


@pytest.mark.parametrize("pages", [pytest.param(3, marks=pytest.mark.slow),
                                   pytest.param(20, marks=pytest.mark.slow)])
def test_one_click_after_run_all_in_jupyterlab_and_notebook_7(lab, pages):
    """Fresh pages in each front end, their loading and Run All overlapping (two kernels).
    Issue 26 asks for 20 in a row: about 3 minutes on an idle 2-core machine (5 under load),
    so that one is marked slow (``--all``); every run of the suite does 3."""
    base = lab.server.base
    fronts = [FrontEnd(lab, "first_click_lab.ipynb",
                       f"{base}/lab/tree/first_click_lab.ipynb?reset"),
              FrontEnd(lab, "first_click_nb7.ipynb", f"{base}/notebooks/first_click_nb7.ipynb")]
    try:
        for k in range(pages):
            for front in fronts:
                front.load()
            for front in fronts:
                front.run_all()
            for front in fronts:
                front.click_once_each(k)
        for front in fronts:
            front.page.mouse.move(1, 1)
            front.nb.screenshot(f"first_click_{front.name.split('.')[0]}.png")
    finally:
        for front in fronts:
            front.nb.close()


@pytest.mark.parametrize("target", ["node", "group"])
def test_a_press_survives_a_redraw_before_the_release(lab, target):
    """The kernel sends a layout while the button is down (a relayout, the stepper marking,
    a group opening): the boxes are drawn anew and the pressed element leaves the DOM. The
    browser then fires no click; the view still acts on the press. A drag pans instead; a
    click no pointer made still acts."""
    nb = lab.open_notebook(f"press_{target}.ipynb", [SEED_CELL, GROUPS.replace(
        'if "grads" not in globals():', "if True:")])
    try:
        root = nb.panel().locator(".tg-graph").first
        nb.page.wait_for_function(ALL_DRAWN, arg=1, timeout=60_000)
        if target == "node":
            nb.kernel_eval("big.expand_all() and None")
            root.locator("[data-tg-node].tg-k-apply").first.wait_for(timeout=30_000)
            nb.page.wait_for_function(in_root(0, "!r.classList.contains('tg-busy')"),
                                      timeout=30_000)
        selector = "[data-tg-node].tg-k-apply" if target == "node" else "[data-tg-group]"
        attr = "data-tg-node" if target == "node" else "data-tg-group"
        aim = nb.page.evaluate(AIM, [0, selector, attr])
        ident = aim["id"]
        root.locator(f'[{attr}="{ident}"]').evaluate("el => { el.dataset.before = 'yes'; }")
        nb.page.mouse.move(aim["x"], aim["y"])
        nb.page.mouse.down()
        nb.kernel_eval("setattr(big, 'layout', {**big.layout, 'again': 1}) or None")
        nb.page.wait_for_function(
            in_root(0, f"r.querySelector('[{attr}=\"' + arg + '\"]') && !r.querySelector("
                       f"'[{attr}=\"' + arg + '\"]').dataset.before"), arg=ident, timeout=10_000)
        nb.page.mouse.up()
        if target == "node":
            assert kernel_holds(nb, [("big.selected", repr(ident))]) == []
        else:
            assert kernel_holds(nb, [(f"{ident!r} in big.expanded", "True")]) == []

        # a press that moves pans the drawing and clicks nothing
        nb.kernel_eval("big.select(None) and None")
        nb.page.wait_for_timeout(300)
        nb.page.wait_for_function(in_root(0, "!r.classList.contains('tg-busy')"), timeout=30_000)
        aim = nb.page.evaluate(AIM, [0, selector, attr])
        before = root.evaluate("r => r.querySelector('.tg-viewport').getAttribute('transform')")
        nb.page.mouse.move(aim["x"], aim["y"])
        nb.page.mouse.down()
        nb.page.mouse.move(aim["x"] + 40, aim["y"] + 30, steps=5)
        nb.page.mouse.up()
        assert root.evaluate("r => r.querySelector('.tg-viewport').getAttribute('transform')") \
            != before
        expanded = nb.kernel_eval("big.expanded")
        nb.page.wait_for_timeout(300)
        assert nb.kernel_eval("(big.selected, big.expanded)") == f"('', {expanded})"

        # a click no pointer made (assistive technology, a script: detail 0) acts as a tap
        clicked = root.locator(selector).last
        ident = clicked.get_attribute(attr)
        clicked.dispatch_event("click")
        if target == "node":
            assert kernel_holds(nb, [("big.selected", repr(ident))]) == []
        else:
            assert kernel_holds(nb, [(f"{ident!r} in big.expanded", "True")]) == []
    finally:
        nb.close()
