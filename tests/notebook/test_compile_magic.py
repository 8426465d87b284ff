"""%%tg_compile and the compile report through a real IPython shell: options, NAME binding,
updates, bad usage (one-line errors, nothing bound), errors in the cell (flags restored, the
failing node shown), live progress, and the report's steps, diffs and generated C."""

import numpy as np
import pytest

IPython = pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import tensorgraph as tg  # noqa: E402
import tensorgraph.tensor  # noqa: E402,F401 - seed_function uses tg.tensor
from tensorgraph import config  # noqa: E402
from tensorgraph.notebook import CompileReport, GraphView, report  # noqa: E402

SEED = '''
x, y = tt.matrix("x"), tt.vector("y")
w = tg.shared(np.zeros(7, dtype="float32"), name="w")
b = tg.shared(np.float32(0.0), name="b")
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
cost = xent.mean() + 0.01 * (w ** 2).sum()
gw, gb = tg.grad(cost, [w, b])
updates = [(w, w - 0.1 * gw), (b, b - 0.1 * gb)]
'''


@pytest.fixture
def ip(ipython_shell):
    ipython_shell.run_cell("import numpy as np\nimport tensorgraph as tg\n"
                           "import tensorgraph.tensor as tt")
    for name in ("train", "f", "seen", "bad"):
        ipython_shell.user_ns.pop(name, None)
    return ipython_shell


def run(ip, line, cell):
    with capture_output() as out:
        ip.run_cell_magic("tg_compile", line, cell)
    return out


def test_name_binds_a_function_of_the_free_inputs_with_the_cell_updates(ip):
    with config.change_flags(floatX="float32"):
        out = run(ip, "train --mode FAST_RUN", SEED + "[p_1 > 0.5, xent]")
    train = ip.user_ns["train"]
    assert [i.variable.name for i in train.maker.inputs] == ["x", "y"]
    assert "train(x: float32 (?, ?), y: float32 (?,))" in out.stdout
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((5, 7)).astype("float32"), np.ones(5, dtype="float32")
    before = ip.user_ns["w"].get_value().copy()
    prediction, xent = train(X, Y)
    assert prediction.shape == (5,) and xent.shape == (5,)
    assert not np.array_equal(ip.user_ns["w"].get_value(), before)  # the cell's updates ran
    reports = [o for o in out.outputs if "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(reports) == 1  # one compile in the cell, one report


def test_options_are_in_force_in_the_cell_and_restored_after(ip):
    mode, test_values = config.mode, config.compute_test_value
    run(ip, "f --mode FAST_COMPILE --test-values warn --quiet",
        "seen = (tg.config.mode, tg.config.compute_test_value)\n"
        "v = tt.vector('v')\nv * 2")
    assert ip.user_ns["seen"] == ("FAST_COMPILE", "warn")
    assert (config.mode, config.compute_test_value) == (mode, test_values)
    f = ip.user_ns["f"]
    assert f.maker.mode.linker_name == "py" and f.maker.mode.optimizer == "fast_compile"

    run(ip, "f --linker py --optimizer o1 --quiet", "v = tt.vector('v')\ntt.exp(v) * 2")
    assert ip.user_ns["f"].maker.mode.linker_name == "py"
    assert ip.user_ns["f"].maker.mode.optimizer == "o1"

    out = run(ip, "f --mode FAST_RUN --excluding fusion --profile --quiet",
              "v = tt.vector('v')\ntt.exp(v) * 2 + 1")
    f = ip.user_ns["f"]
    names = {s.name for s in f.maker.fgraph.rewrite_history}
    assert "local_elemwise_fusion" not in names and f.profile is not None
    assert out.outputs == [] and out.stdout.startswith("f: mode FAST_RUN")  # --quiet: a line
    run(ip, "f --mode FAST_RUN --quiet", "v = tt.vector('v')\ntt.exp(v) * 2 + 1")
    assert "local_elemwise_fusion" in {s.name for s in ip.user_ns["f"].maker.fgraph.rewrite_history}


def test_every_function_compiled_in_the_cell_gets_a_report(ip):
    out = run(ip, "", "v = tt.vector('v')\nf1 = tg.function([v], v + 1)\n"
                      "f2 = tg.function([v], v * 3, mode='FAST_COMPILE')")
    reports = [o for o in out.outputs if "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(reports) == 2


@pytest.mark.parametrize("line, cell, message", [
    ("--nope", "1", "unrecognized arguments: --nope"),
    ("--mode NOPE", "1", "invalid value 'NOPE' for flag 'mode'"),
    ("--linker nope", "1", "linker"),
    ("bad", "v = tt.vector('v')\nv = v * 2", "last line must be an expression"),
    ("bad", "v = tt.vector('v')\n1 + 1", "got int; nothing was bound"),
    ("bad", "v = tt.vector('v')\n[v, 3]", "got list; nothing was bound"),
    ("1bad", "1", "NAME must be a Python identifier"),
    ("class", "1", "NAME must be a Python identifier that is not a keyword, got 'class'"),
    ("None", "1", "not a keyword, got 'None'"),
    ("bad", "v = tt.vector('v')\nupdates = 5\nv * 2",
     r"`updates` must be a list of \(shared variable, expression\) pairs or a dict, got int"),
    ("--including local_elemwise_fusio", "1",
     "unknown rewrite name or tag 'local_elemwise_fusio'; did you mean 'local_elemwise_fusion'"),
    ("--excluding 'a b c'", "1", "unknown rewrite name or tag 'a b c'"),
    ("bad", "def (", "does not parse"),
])
def test_bad_usage_is_one_line_and_binds_nothing(ip, line, cell, message):
    mode = config.mode
    with pytest.raises(UsageError, match=message) as info:
        ip.run_cell_magic("tg_compile", line, cell)
    assert "\n" not in str(info.value)
    assert "bad" not in ip.user_ns and config.mode == mode
    assert "class" not in ip.user_ns and ip.user_ns.get("None") is None


def test_an_error_in_the_cell_restores_the_flags_and_shows_the_failing_node(ip):
    mode = config.mode
    cell = ("v, m = tt.vector('v'), tt.matrix('m')\n"
            "f = tg.function([v, m], tt.dot(m, v))\n"
            "f(np.ones(3), np.ones((2, 4)))")
    with capture_output() as out, pytest.raises(ValueError) as info:
        ip.run_cell_magic("tg_compile", "--mode FAST_RUN", cell)
    assert config.mode == mode
    assert getattr(info.value, "node", None) is not None
    views = [o for o in out.outputs if "application/vnd.jupyter.widget-view+json" in o.data
             and "in this node" in o.data.get("text/plain", "")]
    assert len(views) == 1


def test_a_compile_running_the_c_compiler_shows_its_progress(ip):
    # A chain of functions no other test uses (numbers would not do: they reach the kernel at
    # run time): the kernel is not in the C cache, so gcc runs.
    chain = "v"
    for k in np.random.default_rng().integers(0, 4, 12):
        chain = f"tt.{('tanh', 'exp', 'sin', 'cos')[k]}({chain})"
    out = run(ip, "f --mode FAST_RUN", f"v = tt.vector('v')\n{chain} + 0.25")
    texts = [o.data.get("text/plain", "") for o in out.outputs]
    assert any(t.startswith("compiling f: compiling C (1 translation unit) (") for t in texts)
    done = [t for t in texts if t.startswith("compiled f: mode FAST_RUN")]
    assert len(done) == 1 and done[0].endswith("1 node in C, compiled (1 unit)"), texts


def seed_function():
    with config.change_flags(floatX="float32"):
        x, y = tg.tensor.matrix("x"), tg.tensor.vector("y")
        w = tg.shared(np.zeros(7, dtype="float32"), name="w")
        b = tg.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + tg.tensor.exp(-tg.tensor.dot(x, w) - b))
        xent = -y * tg.tensor.log(p_1) - (1 - y) * tg.tensor.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tg.grad(cost, [w, b])
        return tg.function([x, y], [p_1 > 0.5, xent],
                           updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], name="train",
                           mode="FAST_RUN")


def test_the_report_steps_through_the_rewrites_with_a_diff():
    train = seed_function()
    rep = report(train)
    assert isinstance(rep, CompileReport) and isinstance(rep.view, GraphView)
    assert rep.record.nodes_after == len(train.maker.fgraph.apply_nodes)
    assert rep.record.nodes_before > rep.record.nodes_after
    assert "compile report: train" in rep._summary.value
    stable = next(s.index for s in rep.steps if s.name == "local_stable_log")
    rep.show_step(stable)
    assert rep.mode == "steps" and rep.step == stable and rep._slider.value == stable
    assert "local_stable_log" in rep._step_info.value and "stabilize" in rep._step_info.value
    assert "tensorgraph/tensor/rewriting/stabilize.py:" in rep._step_info.value
    added = set(rep.view.marks)
    assert added and set(rep.view.marks.values()) == {"added"}
    assert any("softplus" in n["op"] for n in rep.view.graph["nodes"] if n["id"] in added)
    rep._before.value = True  # the graph before the step, what it removed marked
    assert set(rep.view.marks.values()) == {"removed"}
    assert any("log" in n["op"] for n in rep.view.graph["nodes"] if n["id"] in rep.view.marks)
    rep._next.click()
    assert rep.step == stable + 1
    rep._filter.value = "blas"
    assert rep._list.options and all("blas" in label.lower() or "gemv" in label.lower()
                                      for label, _ in rep._list.options)
    rep.mode = "before"
    assert rep.view.graph["title"] == "before rewriting"
    assert sum(n["k"] == "apply" for n in rep.view.graph["nodes"]) == rep.record.nodes_before
    with pytest.raises(IndexError, match="between 0 and"):
        rep.show_step(10_000)


def test_the_report_names_the_step_that_made_a_node_and_its_c_source():
    train = seed_function()
    rep = report(train)
    gemv = next(n for n in train.maker.fgraph.apply_nodes if type(n.op).__name__ == "Gemv")
    made = rep.step_of(gemv)
    assert rep.steps[made].name == "local_gemv_pair"
    source = rep.c_source(gemv)
    assert source.startswith("/* Gemv{pair=") and "tg_n_" in source
    gid = rep.view.model.ids[gemv]
    rep.view.select(gid)  # a click in the graph after rewriting
    assert "local_gemv_pair" in rep._node_info.value and "generated C" in rep._node_info.value
    rep._goto.click()
    assert rep.mode == "steps" and rep.step == made
    with pytest.raises(KeyError, match="no op node 'ZZZ'"):
        rep.c_source("ZZZ")
    q = tg.tensor.vector("q")
    slow = report(tg.function([q], q * 2, mode="FAST_COMPILE"))
    with pytest.raises(ValueError, match="runs Python"):
        slow.c_source(slow.function.maker.fgraph.outputs[0])
    with pytest.raises(TypeError, match="takes a compiled function"):
        report(gemv)


def test_the_report_names_the_module_of_a_node_and_shows_the_whole_unit_when_asked():
    train = seed_function()
    rep = report(train)
    gemv = next(n for n in train.maker.fgraph.apply_nodes if type(n.op).__name__ == "Gemv")
    module = rep.c_module(gemv)
    assert module["symbol"] in rep.c_source(gemv)
    assert module["path"] is not None and module["key"] in module["path"]
    import os
    assert os.path.isdir(module["path"])
    unit = rep.c_source(gemv, whole_unit=True)
    assert unit.index("tensorgraph generated node functions") < unit.index(module["symbol"])
    assert len(unit) > 3 * len(rep.c_source(gemv))
    rep.view.select(rep.view.model.ids[gemv])
    assert module["path"] in rep._node_info.value


def test_last_report_is_the_widget_the_magic_showed_and_the_bundle_has_a_static_form(ip):
    from tensorgraph.notebook import last_report

    out = run(ip, "f --mode FAST_RUN", "v = tt.vector('v')\ntt.exp(v) + 1")
    shown = last_report("f")
    assert shown is last_report() and shown.function is ip.user_ns["f"]
    widget_id = next(o.data for o in out.outputs
                     if "application/vnd.jupyter.widget-view+json" in o.data)
    assert widget_id["application/vnd.jupyter.widget-view+json"]["model_id"] == shown.model_id
    with pytest.raises(LookupError, match="no compile report of a function named 'nope'"):
        last_report("nope")
    data, _ = shown._repr_mimebundle_()
    assert data["text/plain"].startswith("f: mode FAST_RUN")
    assert "compile report: f" in data["text/html"] and "<svg" in data["text/html"]


def test_nodes_that_survive_a_step_keep_their_place(monkeypatch):
    from tensorgraph.notebook import step_layout

    rep = report(seed_function())
    seen = []
    for index in (9, 10, 30, 31):
        rep.show_step(index)
        assert rep.view.layout["engine"] == "dot (union of the steps)"
        assert rep.view.layout["graph"] == rep.view.graph["serial"]
        seen.append({tuple(box) for box in rep.view.layout["items"].values()})
        x0, y0, x1, y1 = rep.view.layout["bbox"]
        assert all(x0 <= x and x <= x1 and y0 <= y <= y1
                   for x, y, _, _ in rep.view.layout["items"].values())
    # a step changes a few nodes: every other box stays where it was
    for a, b in ((seen[0], seen[1]), (seen[2], seen[3])):
        assert len(a & b) >= min(len(a), len(b)) - 4
    assert rep.view.to_svg().startswith("<svg")

    # a union too big to read is laid out step by step
    small = report(seed_function())
    monkeypatch.setattr(step_layout, "UNION_MAX", 10)
    small.show_step(3)
    small.view.wait()
    assert small.view.layout["engine"] == "dot" and small._places.too_big


def test_help_lists_every_option_and_the_binding_rules(ip):
    with capture_output() as out:
        ip.run_line_magic("tg_compile", "--help")
    for option in ("--mode", "--optimizer", "--linker", "--including", "--excluding",
                   "--profile", "--test-values", "--quiet", "NAME"):
        assert option in out.stdout, option
    assert "order they were created" in out.stdout and "`updates`" in out.stdout
    with pytest.raises(UsageError, match="is a cell magic") as info:
        ip.run_line_magic("tg_compile", "train")
    assert "\n" not in str(info.value)


def _plain(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_locations_in_the_cell_name_its_number_and_its_lines(ip):
    cell = ("%%tg_compile --mode FAST_RUN --quiet\n"
            "v, m = tt.vector('v'), tt.matrix('m')\n"
            "\n"
            "f = tg.function([v, m], tt.dot(m, v))\n"
            "f(np.ones(3), np.ones((2, 4)))")
    with capture_output():
        result = ip.run_cell(cell, store_history=True)
    here = f"Cell In[{result.execution_count}]"
    assert f"created at {here}, line 4: f = tg.function([v, m], tt.dot(m, v))" in str(
        result.error_in_exec)
    from tensorgraph.graph.utils import format_user_line  # the panel's and stepper's lines

    node = ip.user_ns["f"].maker.fgraph.toposort()[-1]
    assert format_user_line(node) == f"{here}, line 4: f = tg.function([v, m], tt.dot(m, v))"
    with capture_output():
        result = ip.run_cell("%%tg_compile --quiet\nv = 1\n1 / 0", store_history=True)
    exc = result.error_in_exec
    shown = _plain("\n".join(ip.InteractiveTB.structured_traceback(
        type(exc), exc, exc.__traceback__)))
    assert f"Cell In[{result.execution_count}], line 3" in shown and "1 / 0" in shown
    assert f"In[{result.execution_count + 1}]" not in shown


def test_a_single_output_gives_a_single_array_and_a_list_a_list(ip):
    run(ip, "f --quiet", "v = tt.vector('v')\nv * 2")
    assert isinstance(ip.user_ns["f"](np.ones(2)), np.ndarray)
    run(ip, "f --quiet", "v = tt.vector('v')\n[v * 2]")
    assert isinstance(ip.user_ns["f"](np.ones(2)), list)


def test_a_plain_text_front_end_prints_the_summary_once(ip, capsys):
    chain = "v"  # a chain no other test compiles, so the C compiler runs and progress shows
    for k in np.random.default_rng().integers(0, 4, 12):
        chain = f"tt.{('tanh', 'exp', 'sin', 'cos')[k]}({chain})"
    ip.run_cell_magic("tg_compile", "f --mode FAST_RUN", f"v = tt.vector('v')\n{chain} + 0.5")
    out = capsys.readouterr().out  # the global test shell prints displays as text
    assert out.count("f: ") == 1 and "f: mode FAST_RUN" in out, out
