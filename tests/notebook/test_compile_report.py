"""The compile report's Python side beyond what tests/notebook/test_compile_magic.py covers: the step
list follows the step shown; every graph it shows names the outputs as the graph view does."""

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.notebook.compile_report import report


def seed_function():
    with tg.config.change_flags(floatX="float32"):
        x, y = tt.matrix("x"), tt.vector("y")
        w = tg.shared(np.zeros(20, dtype="float32"), name="w")
        b = tg.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tg.grad(cost, [w, b])
        return tg.function([x, y], [p_1 > 0.5, xent],
                           updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], name="train")


def test_the_step_list_lights_the_step_shown_or_none_when_its_filter_hides_it():
    train = seed_function()
    rep = report(train)
    gemv = next(n for n in train.maker.fgraph.apply_nodes if type(n.op).__name__ == "Gemv")
    made = rep.step_of(gemv)
    stable = next(s.index for s in rep.steps if s.name == "local_stable_log")
    rep._filter.value = "stable_log"
    rep.show_step(stable)
    assert rep._list.value == stable
    rep.mode = "after"
    rep.view.select(rep.view.model.ids[gemv])
    rep._goto.click()  # "show the step that made it": a step the filter hides
    assert rep.step == made and rep._list.value is None
    rep._filter.value = ""
    rep.show_step(made)
    assert rep._list.value == made


def test_every_graph_of_the_report_names_updates_as_the_graph_view_does():
    rep = report(seed_function())
    rep.show_step(3)
    stepped = [o for n in rep.view.graph["nodes"] for o in n.get("o", ())]
    rep.mode = "before"
    before = [o for n in rep.view.graph["nodes"] for o in n.get("o", ())]
    for labels in (stepped, before):
        assert "update of w" in labels and "update of b" in labels, labels


def test_a_steps_static_picture_covers_that_step_not_the_union_of_all_steps():
    """A step is drawn at its places in the union of every step's graph; its static picture
    (nbconvert, GitHub) crops to what the step draws, not to the whole union."""
    import re

    rep = report(seed_function())
    rep.show_step(len(rep.steps) - 1)
    x0, y0, x1, y1 = rep.view.layout["bbox"]
    assert rep.view.layout["engine"] == "dot (union of the steps)"
    view_box = [float(v) for v in re.search(r'viewBox="([^"]+)"', rep.view.to_svg()).group(1).split()]
    # (12 more below for the "output 0" labels under the lowest boxes)
    assert view_box in ([x0 - 10, y0 - 10, x1 - x0 + 20, y1 - y0 + 20],
                        [x0 - 10, y0 - 10, x1 - x0 + 20, y1 - y0 + 32])
    assert (x1 - x0) * (y1 - y0) < 0.8 * rep.view.layout["size"][0] * rep.view.layout["size"][1]


def test_a_node_whose_c_declines_its_types_is_told_from_an_op_without_c():
    """Why a node runs Python: an op whose C (registered in tensorgraph.link.c.ops, not a
    c_code method) declines the node's types is not called an op without C."""
    from tensorgraph.graph.basic import Apply
    from tensorgraph.graph.op import Op
    from tensorgraph.notebook.graph_model import _why_python
    from tensorgraph.tensor.subtensor import AdvancedSubtensor1

    class PerformOnly(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0]

    x = tt.matrix("x")
    rows = x[tt.vector("i", dtype="uint64")]  # uint64 indices run perform
    assert isinstance(rows.owner.op, AdvancedSubtensor1)
    assert "declined" in _why_python(rows.owner)
    assert "PerformOnly has no C implementation" in _why_python(PerformOnly()(x).owner)


def test_the_jax_program_is_shown_without_terminal_colour_codes(monkeypatch):
    # in a Jupyter kernel JAX colours its jaxpr (ANSI codes); the report's text and HTML
    # must not carry them. Here: JAX told it runs where colour is on, as in Jupyter.
    pretty = __import__("pytest").importorskip("jax._src.pretty_printer")
    monkeypatch.setattr(pretty, "CAN_USE_COLOR", True)
    x = tt.fvector("x")
    f = tg.function([x], tt.exp(x).sum(), mode="JAX")
    f(np.ones(3, dtype="float32"))
    assert "\x1b[" in f.vm.source()  # what JAX gives in a notebook
    rep = report(f)
    text = rep.backend_source()
    assert "\x1b" not in text and "exp a" in text
    assert "\x1b" not in rep._backend_html() and "[34;1m" not in rep._backend_html()


def test_a_quick_tier_function_s_report_says_so_and_follows_the_switch_to_the_optimized_code():
    """The widget said "no node runs C; N run Python" while the function ran on the quick
    tier; it says what the text form says, and changes when the optimized code arrives."""
    import random
    import threading
    import time
    import uuid

    from tensorgraph.link import tiers

    x = tt.vector("x")
    y = x  # an elementwise chain no earlier test compiled: its C is not in the module cache
    for fn in random.Random(uuid.uuid4().int).sample(
            [tt.exp, tt.tanh, tt.sin, tt.cos, tt.sigmoid, tt.softplus, tt.arctan, tt.erf], 6):
        y = fn(y)
    go = threading.Event()
    tiers._background().submit(go.wait, 60)  # background compiles wait: the quick tier, sure
    try:
        with tg.config.change_flags(compile__tiers=True):
            f = tg.function([x], y + tt.sum(tt.tanh(x)), name="quick_one")
        assert f.tier == "quick"
        rep = report(f)
        quick = rep._summary.value
        assert rep.tier == "quick" and "no node runs C" not in quick
        assert "runs on the quick tier (" in quick and "(the optimized bits) for " in quick
        assert "until the optimized code is ready (~" in quick
        assert "runs on the quick tier" in rep._repr_mimebundle_()[0]["text/html"]
    finally:
        go.set()
    deadline = time.time() + 120
    while rep.tier == "quick" and time.time() < deadline:  # the report follows by itself
        time.sleep(0.05)
    assert rep.tier == "optimized" == f.tier
    c_nodes = len(f.vm.cgraph.c_nodes)
    assert c_nodes and f"{c_nodes} node{'s' if c_nodes > 1 else ''} run" in rep._summary.value
    assert "quick tier" not in rep._summary.value
