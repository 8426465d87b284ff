"""The Python VM: execution order, garbage collection, stepping hooks, lazy nodes, errors;
the linker registry and the modes."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link import registry as linkers
from tensorgraph.compile.mode import FAST_COMPILE, FAST_RUN, Mode, get_mode, register_mode
from tensorgraph.configdefaults import config
from tensorgraph.graph import Apply, Op


class Record(Op):
    """Identity that logs its tag each time it runs (to see what the VM executed)."""

    __props__ = ("tag",)

    def __init__(self, tag, log):
        self.tag = tag
        self.log = log

    def __hash__(self):
        return hash(self.tag)

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        self.log.append(self.tag)
        output_storage[0][0] = inputs[0].copy()


class Choose(Op):
    """A lazy 'if': inputs (cond, a, b); asks only for the branch it takes."""

    __props__ = ()

    def make_node(self, cond, a, b):
        cond, a, b = (tt.as_tensor_variable(v) for v in (cond, a, b))
        return Apply(self, [cond, a, b], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[1] if inputs[0] else inputs[2]

    def make_py_thunk(self, node, storage_map, compute_map):
        cells = [storage_map[v] for v in node.inputs]
        flags = [compute_map[v] for v in node.inputs]
        out_cell, out_flag = storage_map[node.outputs[0]], compute_map[node.outputs[0]]

        def thunk():
            if not flags[0][0]:
                return [0]
            k = 1 if cells[0][0] else 2
            if not flags[k][0]:
                return [k]
            out_cell[0] = cells[k][0].copy()
            out_flag[0] = True
            return None

        thunk.inputs = cells
        thunk.outputs = [out_cell]
        thunk.lazy = True
        return thunk


class Boom(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise ValueError("boom")


def test_nodes_run_in_order_and_values_flow():
    log = []
    x = tt.dvector("x")
    y = Record("b", log)(Record("a", log)(x) * 2)
    f = tg.function([x], y, mode="FAST_COMPILE")
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    assert log == ["a", "b"]


@pytest.mark.parametrize("allow_gc", [True, False])
def test_gc_frees_intermediates_only_when_allowed(allow_gc):
    x = tt.dvector("x")
    mid = x * 2
    out = mid + 1
    with config.change_flags(allow_gc=allow_gc):
        f = tg.function([x], out, mode=Mode("vm", None))
    f([1.0, 2.0])
    vm = f.vm
    assert vm.allow_gc is allow_gc
    kept = [vm.storage_map[v][0] is not None for v in vm.intermediates]
    assert vm.intermediates and all(kept) is (not allow_gc)
    # inputs of the fgraph that are constants keep their value
    for var, cell in vm.storage_map.items():
        if isinstance(var, tg.graph.Constant):
            assert cell[0] is not None


def test_vm_nogc_linker_keeps_intermediates_regardless_of_config():
    x = tt.dvector("x")
    with config.change_flags(allow_gc=True):
        f = tg.function([x], (x * 2) + 1, mode=Mode("vm_nogc", None))
    f([1.0])
    assert not f.vm.allow_gc
    assert all(f.vm.storage_map[v][0] is not None for v in f.vm.intermediates)


def test_nogc_results_stay_correct_across_calls():
    x = tt.dvector("x")
    f = tg.function([x], [(x * 2) + 1, x * 3], mode=Mode("vm_nogc"))
    first = f([1.0, 2.0])
    second = f([5.0, 6.0])
    np.testing.assert_array_equal(first[0], [3.0, 5.0])
    np.testing.assert_array_equal(second[0], [11.0, 13.0])
    np.testing.assert_array_equal(first[1], [3.0, 6.0])


def test_hooks_see_every_node_before_and_after():
    x = tt.dvector("x")
    f = tg.function([x], (x * 2) + 1, mode="FAST_COMPILE")
    events = []
    f.vm.pre_hook = lambda i, node, thunk: events.append(("pre", i, thunk.outputs[0][0]))
    f.vm.post_hook = lambda i, node, thunk: events.append(("post", i, thunk.outputs[0][0].copy()))
    f([1.0])
    n = len(f.vm.nodes)
    assert [e[:2] for e in events] == [(k, i) for i in range(n) for k in ("pre", "post")]
    assert events[-1][2].tolist() == [3.0]
    assert all(e[2] is None for e in events if e[0] == "pre")
    f.vm.pre_hook = f.vm.post_hook = None
    events.clear()
    f([1.0])
    assert events == []


def test_thunks_expose_nodes_and_cells():
    x = tt.dvector("x")
    f = tg.function([x], x * 2, mode="FAST_COMPILE")
    assert len(f.vm.thunks) == len(f.vm.nodes) == len(f.maker.fgraph.toposort())
    for node, thunk in zip(f.vm.nodes, f.vm.thunks):
        assert thunk.inputs == [f.vm.storage_map[v] for v in node.inputs]


def test_lazy_node_runs_only_the_taken_branch():
    log = []
    c = tt.lscalar("c")
    x = tt.dvector("x")
    out = Choose()(c, Record("then", log)(x), Record("else", log)(x * 10))
    for allow_gc in (True, False):
        with config.change_flags(allow_gc=allow_gc):
            f = tg.function([c, x], out, mode="FAST_COMPILE")
        assert f.vm.lazy
        log.clear()
        np.testing.assert_array_equal(f(1, [1.0]), [1.0])
        assert log == ["then"]
        log.clear()
        np.testing.assert_array_equal(f(0, [1.0]), [10.0])
        assert log == ["else"]


def test_lazy_graph_with_shared_subexpression_and_hooks():
    log = []
    c = tt.lscalar("c")
    x = tt.dvector("x")
    common = Record("common", log)(x)
    out = Choose()(c, common + 1, common * 3) + common
    f = tg.function([c, x], out, mode="FAST_COMPILE")
    seen = []
    f.vm.post_hook = lambda i, node, thunk: seen.append(i)
    np.testing.assert_array_equal(f(0, [2.0]), [8.0])
    assert log == ["common"]
    assert seen  # hooks also run on the lazy path
    if f.vm.allow_gc:
        assert all(f.vm.storage_map[v][0] is None for v in f.vm.intermediates)


def test_plain_graph_takes_the_fast_path():
    x = tt.dvector("x")
    f = tg.function([x], x + 1, mode="FAST_COMPILE")
    assert not f.vm.lazy


def test_node_error_names_the_node_and_keeps_its_type():
    x = tt.dvector("x")
    s = tg.shared(np.zeros(1), name="s")
    y = Boom()(x * 2)
    f = tg.function([x], y, updates=[(s, s + 1)], mode="FAST_COMPILE")
    with pytest.raises(ValueError) as info:
        f([1.0])
    message = str(info.value)
    assert "boom" in message and "Boom" in message
    assert "toposort position" in message and "float64 (1,)" in message
    assert "test_vm.py" in message  # the user's line that built the node
    assert s.get_value().tolist() == [0.0]
    if f.vm.allow_gc:
        assert all(f.vm.storage_map[v][0] is None for v in f.vm.intermediates)


def test_hooked_path_reports_node_errors_too():
    x = tt.dvector("x")
    f = tg.function([x], Boom()(x), mode="FAST_COMPILE")
    f.vm.pre_hook = lambda i, node, thunk: None
    with pytest.raises(ValueError, match="boom"):
        f([1.0])


# -- linkers and modes --------------------------------------------------------------------------


def test_linker_registry_lists_available_names():
    assert {"py", "vm", "vm_nogc"} <= set(linkers.available_linkers())
    with pytest.raises(ValueError, match="not available.*py"):
        linkers.get_linker("no-such-linker")
    with pytest.raises(TypeError):
        linkers.register_linker("bad", 3)


def test_registered_linker_is_used_by_mode():
    made = []

    class Wrapping:
        name = "wrapping"

        def make_vm(self, fgraph, input_storage=None, storage_map=None):
            made.append(fgraph)
            return linkers.get_linker("vm").make_vm(fgraph, input_storage, storage_map)

    linkers.register_linker("test-wrapping", Wrapping)
    try:
        x = tt.dvector("x")
        f = tg.function([x], x + 1, mode=Mode("test-wrapping"))
        np.testing.assert_array_equal(f([1.0]), [2.0])
        assert made == [f.maker.fgraph]
    finally:
        linkers._LINKERS.pop("test-wrapping")


def test_named_modes():
    assert get_mode("FAST_COMPILE").linker_name == "py"
    assert get_mode("FAST_COMPILE") == FAST_COMPILE
    expected = "cvm" if linkers.is_registered("cvm") else "vm"
    assert get_mode("FAST_RUN").linker_name == expected == FAST_RUN.linker_name
    assert get_mode(FAST_COMPILE) is FAST_COMPILE
    with pytest.raises(ValueError, match="unknown mode 'FAST'.*FAST_COMPILE"):
        get_mode("FAST")
    with pytest.raises(TypeError):
        get_mode(3)


def test_register_mode_adds_a_name():
    register_mode("TEST_PY", Mode("vm_nogc", None))
    assert get_mode("TEST_PY").linker_name == "vm_nogc"
    x = tt.dvector("x")
    assert tg.function([x], x + 1, mode="TEST_PY")([1.0]).tolist() == [2.0]


def test_default_mode_follows_config():
    with config.change_flags(mode="FAST_COMPILE"):
        assert get_mode().linker_name == "py"
    with config.change_flags(mode="Mode", linker="vm_nogc", optimizer="None"):
        mode = get_mode()
        assert mode.linker_name == "vm_nogc" and mode.optimizer is None
    with config.change_flags(mode=Mode("vm")):
        assert get_mode().linker_name == "vm"


def test_default_mode_is_the_c_vm_and_unknown_linkers_are_refused():
    assert config.linker == "cvm" and Mode().linker_name == "cvm"
    with pytest.raises(ValueError, match="linker 'nope' is not available"):
        Mode(linker="nope")


def test_mode_optimizer_names():
    assert Mode("py").optimizer == config.optimizer
    assert Mode("py", None).optimizer is None
    assert Mode("py", "None").optimizer is None
    assert Mode("py", "fast_run").clone(optimizer="merge").optimizer == "merge"
    assert Mode("py").clone(linker="vm_nogc").linker_name == "vm_nogc"
    assert "linker='py'" in repr(Mode("py", "o1"))
    with pytest.raises(TypeError):
        Mode("py", 3)
    with pytest.raises(TypeError):
        Mode(linker=3)


def test_rewriter_hook_is_called_with_the_mode():
    from tensorgraph.compile import mode as mode_module

    calls = []
    previous = mode_module._rewriter
    mode_module.set_rewriter(lambda fgraph, mode: calls.append((fgraph, mode.optimizer)))
    try:
        x = tt.dvector("x")
        f = tg.function([x], x + 1, mode=Mode("py", "fast_compile"))
        tg.function([x], x + 1, mode=Mode("py", None))
    finally:
        mode_module.set_rewriter(previous)
    assert calls[0] == (f.maker.fgraph, "fast_compile")
    assert calls[1][1] is None
