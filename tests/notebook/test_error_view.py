"""Errors shown where they happen: after a cell's traceback (left intact), the graph with the
failing node marked; DebugMode's disagreements with both values side by side, a bad rewrite
with its before/after graphs."""

import numpy as np
import pytest

IPython = pytest.importorskip("IPython")
import ipywidgets as widgets  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import tensorgraph.tensor as tt  # noqa: E402
from tensorgraph.compile.debugmode import BadOptimization, BadThunkOutput  # noqa: E402
from tensorgraph.notebook import GraphView  # noqa: E402
from tensorgraph.notebook.error_view import error_display  # noqa: E402

FAILING = """\
v, m = tt.vector('v'), tt.matrix('m')
f = tg.function([v, m], tt.dot(m, v) + 1)
f(np.ones(3), np.ones((2, 4)))"""


def test_a_cell_that_fails_in_a_node_shows_the_node_under_its_traceback(ipython_shell):
    ipython_shell.run_cell("import numpy as np\nimport tensorgraph as tg\n"
                           "import tensorgraph.tensor as tt")
    with capture_output() as out:
        result = ipython_shell.run_cell(FAILING)
    assert isinstance(result.error_in_exec, ValueError)
    assert "ValueError" in out.stdout + out.stderr  # the traceback as always
    views = [o for o in out.outputs if "in this node" in o.data.get("text/plain", "")]
    assert len(views) == 1
    with capture_output() as out:
        ipython_shell.run_cell("1 / 0")  # an error naming no node: nothing more
    assert out.outputs == []


def test_an_error_in_a_tg_compile_cell_is_shown_once(ipython_shell):
    ipython_shell.run_cell("import numpy as np\nimport tensorgraph as tg\n"
                           "import tensorgraph.tensor as tt")
    with capture_output() as out:
        ipython_shell.run_cell("%%tg_compile --mode FAST_RUN\n" + FAILING)
    assert sum("in this node" in o.data.get("text/plain", "") for o in out.outputs) == 1


def test_debugmode_disagreements_show_both_values():
    x = tt.vector("x")
    y = tt.exp(x)
    bad = BadThunkOutput("py and c disagree", node=y.owner, output_index=0,
                         kinds=("py", "c"), values=(np.ones(3), np.array([1.0, 2.0, 1.0])),
                         largest_difference=1.0)
    shown = error_display(bad)
    assert isinstance(shown, widgets.VBox) and isinstance(shown.children[0], GraphView)
    assert shown.children[0].marks == {shown.children[0].model.resolve(y.owner): "error"}
    values = shown.children[1].value
    assert "output 0 by py" in values and "output 0 by c" in values
    assert "largest difference: <code>1.0</code>" in values


def test_a_bad_rewrite_shows_the_graph_before_and_after():
    x = tt.vector("x")
    old, new = tt.log(1 + x), tt.log1p(x) * 2
    step = type("Step", (), {"name": "local_wrong"})()
    bad = BadOptimization("bad", step=step, old=old, new=new, old_value=np.array([0.5]),
                          new_value=np.array([1.0]), largest_difference=0.5)
    shown = error_display(bad)
    before, after = shown.children[1].children
    assert before.graph["title"] == "before local_wrong" and after.graph["title"] == "after local_wrong"
    assert "before the rewrite" in shown.children[2].value
    assert error_display(ValueError("no node")) is None


def _rendered(shell, exc) -> str:
    import re

    text = "\n".join(shell.InteractiveTB.structured_traceback(type(exc), exc,
                                                              exc.__traceback__))
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _our_frames(text) -> list:
    return [line for line in text.splitlines()
            if line.startswith("File ") and "/tensorgraph/" in line]


TRACEBACK_CELLS = {
    "FAST_RUN": FAILING.replace("+ 1)", "+ 1, mode='FAST_RUN')"),
    "FAST_COMPILE": FAILING.replace("+ 1)", "+ 1, mode='FAST_COMPILE')"),
    "c|py": FAILING.replace("+ 1)", "+ 1, mode=tg.Mode('c|py', 'fast_run'))"),
    "NanGuardMode": "v = tt.vector('v')\nf = tg.function([v], tt.log(v - 2), mode='NanGuardMode')"
                    "\nf(np.ones(3))",
    "%%tg_compile": "%%tg_compile --quiet\n" + FAILING,
    "%tg_profile": "v = tt.vector('v')\nf = tg.function([v], v[5])\n%tg_profile f(np.ones(3))",
}


@pytest.mark.parametrize("case", TRACEBACK_CELLS)
def test_tracebacks_show_the_users_cell_then_the_message(ipython_shell, case):
    ipython_shell.run_cell("import numpy as np\nimport tensorgraph as tg\n"
                           "import tensorgraph.tensor as tt")
    with capture_output():
        result = ipython_shell.run_cell(TRACEBACK_CELLS[case], store_history=True)
    exc = result.error_in_exec
    assert exc is not None
    text = _rendered(ipython_shell, exc)
    # IPython always shows the frame that raised; every other frame of ours is hidden
    assert len(_our_frames(text)) <= 1, text
    assert text.index(f"Cell In[{result.execution_count}]") < text.index("File ")
    ipython_shell.InteractiveTB.skip_hidden = False  # %xmode --show: every frame
    try:
        assert len(_our_frames(_rendered(ipython_shell, exc))) >= 2
    finally:
        ipython_shell.InteractiveTB.skip_hidden = True
