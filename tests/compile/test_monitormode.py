"""MonitorMode: pre_func / post_func see every node of every call with its storage cells."""

import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile import MonitorMode, get_mode
from tensorgraph.compile.monitormode import add_hooks, detect_nan
from tensorgraph.ifelse import ifelse


def test_hooks_see_every_node_in_order_with_values():
    seen = []

    def pre(fgraph, i, node, thunk):
        seen.append(("pre", i, node, [c[0] for c in thunk.inputs]))

    def post(fgraph, i, node, thunk):
        assert fgraph is f.maker.fgraph
        seen.append(("post", i, node, [c[0] for c in thunk.outputs]))

    x = tt.dvector("x")
    y = tt.exp(x) * 2
    f = tg.function([x], y.sum(), mode=MonitorMode(pre, post, optimizer=None))
    assert f([0.0, 0.0]) == 4.0
    nodes = f.maker.fgraph.toposort()
    assert [(kind, i) for kind, i, _, _ in seen] == [
        (kind, i) for i in range(len(nodes)) for kind in ("pre", "post")]
    assert [n for _, _, n, _ in seen[::2]] == nodes
    np.testing.assert_array_equal(seen[1][3][0], [1.0, 1.0])  # exp's output cell
    assert seen[-1][3] == [4.0]
    seen.clear()
    f([1.0, 1.0])
    assert len(seen) == 2 * len(nodes)  # every call


def test_runs_the_configured_linker_and_its_thunk_kinds():
    kinds = []
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(x) + 1,
                    mode=MonitorMode(post_func=lambda fg, i, n, t: kinds.append(t.kind)))
    f([1.0])
    assert kinds == [t.kind for t in f.vm.thunks]


def test_lazy_ifelse_only_runs_the_branch_taken():
    ran = []
    a, b = tt.dscalar("a"), tt.dscalar("b")
    z = ifelse(tt.lt(a, b), tt.exp(a), tt.log(b))
    f = tg.function([a, b], z, mode=MonitorMode(post_func=lambda fg, i, n, t: ran.append(
        str(n.op)), linker="vm", optimizer=None))
    assert f(1.0, 2.0) == pytest.approx(np.e)
    assert any("exp" in op for op in ran) and not any("log" in op for op in ran)


def test_detect_nan_prints_the_node_and_its_values(capsys):
    x = tt.dvector("x")
    y = tt.sqrt(x - 1)  # nan below 1
    f = tg.function([x], y, mode=MonitorMode(post_func=detect_nan, optimizer=None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        f([0.0, 4.0])
    out = capsys.readouterr().out
    assert "*** NaN detected in node" in out and "sqrt" in out
    assert "y = tt.sqrt(x - 1)" in out
    assert "input 0: Elemwise{sub}.out = array([-1.,  3.])" in out
    assert "output 0: array([" in out and "nan" in out.split("output 0:")[1]
    f([1.0, 4.0])
    assert capsys.readouterr().out == ""


def test_bad_arguments():
    with pytest.raises(TypeError, match="pre_func"):
        MonitorMode(pre_func=3)


def test_add_hooks_keeps_existing_hooks_and_nests_new_ones_inside():
    class FakeVM:
        pre_hook = post_hook = None

    order = []
    vm = FakeVM()
    add_hooks(vm, lambda *a: order.append("pre1"), lambda *a: order.append("post1"))
    add_hooks(vm, lambda *a: order.append("pre2"), lambda *a: order.append("post2"))
    vm.pre_hook(0, None, None)
    vm.post_hook(0, None, None)
    assert order == ["pre1", "pre2", "post2", "post1"]


def test_named_mode():
    mode = get_mode("MonitorMode")
    assert isinstance(mode, MonitorMode) and mode.pre_func is None
    x = tt.dvector("x")
    assert tg.function([x], x + 1, mode="MonitorMode")([1.0]).tolist() == [2.0]
