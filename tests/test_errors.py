"""Errors raised in a node: one short paragraph in every mode and linker, pointing at the
user's line (also for nodes made by rewrites); 'high' verbosity adds the inputs' graph and
the compile-time frames."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile import DebugMode, MonitorMode
from tensorgraph.configdefaults import config
from tensorgraph.graph.errors import node_report
from tensorgraph.graph.utils import TestValueError


def mismatched():
    x = tt.dvector("x")
    y = tt.dvector("y")
    z = tt.exp(x) * 2 + tt.log(y)  # the user line
    return x, y, z


MODES = ["FAST_COMPILE", "FAST_RUN", "DebugMode", "NanGuardMode", "MonitorMode",
         tg.Mode("vm", None)]


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_same_short_paragraph_in_every_mode(mode):
    x, y, z = mismatched()
    if mode == "DebugMode":
        mode = DebugMode(patience=1)
    f = tg.function([x, y], z, mode=mode)
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    lines = str(info.value).splitlines()
    assert lines[1].startswith("  in node ") and "toposort position" in lines[1]
    assert "(3,)" in lines[2] and "(4,)" in lines[2] and lines[2].startswith("  inputs: ")
    assert lines[3].startswith("  created at ") and lines[3].endswith(
        "z = tt.exp(x) * 2 + tt.log(y)  # the user line")
    assert len(lines) == 4  # 'low' verbosity: no graph dump
    assert info.value.__cause__ is None


def test_nodes_made_by_rewrites_point_at_the_expression_not_at_function():
    x, y, z = mismatched()
    f = tg.function([x, y], z, mode=tg.Mode("vm", "fast_run"))
    (node,) = f.maker.fgraph.toposort()  # everything fused into one Composite
    assert "Composite" in str(node.op)
    assert node.tag.trace[0].line == "z = tt.exp(x) * 2 + tt.log(y)  # the user line"
    assert not hasattr(node.tag, "compile_trace")  # traceback__compile_limit=0 keeps none


def test_high_verbosity_adds_the_inputs_graph_and_compile_frames():
    x, y, z = mismatched()
    with config.change_flags(exception_verbosity="high", traceback__compile_limit=4):
        f = tg.function([x, y], z, mode=tg.Mode("vm", "fast_run"))
        (node,) = f.maker.fgraph.toposort()
        assert len(node.tag.compile_trace) == 4
        assert any("tensorgraph" in frame.filename for frame in node.tag.compile_trace)
        with pytest.raises(ValueError) as info:
            f(np.ones(3), np.ones(4))
    text = str(info.value)
    assert "inputs of the node:" in text and "x [id A]" in text
    assert "made during compilation at (innermost first):" in text
    assert "fusion" in text  # the rewrite that made the node
    assert info.value.__cause__ is not None  # the original traceback stays chained


def test_compile_limit_minus_one_keeps_every_frame():
    x, y, z = mismatched()
    with config.change_flags(traceback__compile_limit=-1):
        f = tg.function([x, y], z, mode=tg.Mode("vm", "fast_run"))
    (node,) = f.maker.fgraph.toposort()
    assert len(node.tag.compile_trace) > 4


def test_traceback_limit_zero_says_how_to_get_the_line():
    with config.change_flags(traceback__limit=0):
        x, y, z = mismatched()
    f = tg.function([x, y], z, mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="unknown line \\(set config.traceback__limit > 0"):
        f(np.ones(3), np.ones(4))


def test_test_value_errors_name_the_users_line():
    x = tt.dvector("x")
    y = tt.dvector("y")
    x.tag.test_value = np.ones(3)
    y.tag.test_value = np.ones(4)
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(ValueError) as info:
            x + y  # noqa: B018  (the failing line)
    text = str(info.value)
    assert "created at" in text and "x + y  # noqa: B018" in text
    x2 = tt.dvector("x2")
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TestValueError, match="x2 has no test value"):
            x2 * 2  # noqa: B018


def test_node_report_layout():
    x, y, z = mismatched()
    node = z.owner
    low = node_report("what failed", node, [np.ones((2, 2)), None], 7, verbosity="low")
    assert low.splitlines()[0] == "what failed"
    assert "(toposort position 7)" in low
    assert "float64 (2, 2)" in low and "not computed" in low
    typed = node_report("what failed", node, verbosity="low")
    assert "input types: " in typed
    high = node_report("what failed", node, verbosity="high")
    assert "inputs of the node:" in high


def test_errors_raised_by_monitor_hooks_reach_the_user_unchanged():
    x = tt.dvector("x")

    def broken(fgraph, i, node, thunk):
        raise KeyError("from the hook")

    f = tg.function([x], x + 1, mode=MonitorMode(post_func=broken))
    with pytest.raises(KeyError, match="from the hook"):
        f([1.0])
