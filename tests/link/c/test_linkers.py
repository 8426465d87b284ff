"""The C linkers ('c|py', 'c|py_nogc', 'c', 'cvm', 'cvm_nogc') against the Python linker: same
results on a corpus, per-node thunks and hooks running the C kernels, lazy ifelse, the call
path (checks, trust_input, fresh outputs, borrow, all-or-nothing updates) and no compiler."""

import warnings

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.io import In, Out
from tensorgraph.compile.mode import Mode, get_mode
from tensorgraph.graph import Apply, Op
from tensorgraph.ifelse import ifelse

LINKERS = ["c|py", "c|py_nogc", "c", "cvm", "cvm_nogc"]


def _corpus():
    """{name: build}; build() -> (inputs, outputs, updates, argument tuples), the same values
    at every build."""

    def logreg():
        rng = np.random.default_rng(0)
        x, y = tt.fmatrix("x"), tt.fvector("y")
        w = tensorgraph.shared(rng.normal(size=5).astype("float32"), name="w")
        b = tensorgraph.shared(np.float32(0.1), name="b")
        p = tt.sigmoid(tt.dot(x, w) + b)
        cost = -(y * tt.log(p) + (1 - y) * tt.log(1 - p)).mean()
        gw, gb = tensorgraph.grad(cost, [w, b])
        updates = [(w, tt.cast(w - 0.1 * gw, "float32")), (b, tt.cast(b - 0.1 * gb, "float32"))]
        args = [(rng.normal(size=(8, 5)).astype("float32"),
                 (rng.random(8) > 0.5).astype("float32")) for _ in range(3)]
        return [x, y], [cost, p > 0.5], updates, args

    def elementwise():
        rng = np.random.default_rng(1)
        x, y = tt.dmatrix("x"), tt.drow("y")
        out = [tt.tanh(x * y + tt.exp(-x)) * 0.5 + tt.log1p(y * y), x.T, x, x * 2, x * 2,
               tt.constant(np.arange(3.0))]
        args = [(rng.normal(size=(4, 3)), rng.normal(size=(1, 3))),
                (rng.normal(size=(6, 3))[::-2], rng.normal(size=(1, 3)))]
        return [x, y], out, [], args

    def lazy():
        rng = np.random.default_rng(1)
        c, x = tt.iscalar("c"), tt.dvector("x")
        out = ifelse(c > 0, tt.exp(x).sum(), (x * 3).max()) + x
        return [c, x], [out], [], [(np.int32(1), rng.normal(size=4)),
                                   (np.int32(0), rng.normal(size=4))]

    def counter():
        s = tensorgraph.shared(np.zeros(3), name="s")
        x = tt.dvector("x")
        return [x], [s * 2, (s + x).sum()], [(s, s + x)], [(np.ones(3),), (np.arange(3.0),)]

    return {"logreg": logreg, "elementwise": elementwise, "lazy": lazy, "counter": counter}


CORPUS = _corpus()


def _run(name, linker, optimizer):
    inputs, outputs, updates, args = CORPUS[name]()
    shared_values = {}
    f = tensorgraph.function(inputs, outputs, updates=updates, mode=Mode(linker, optimizer))
    results = [[np.array(v) for v in f(*a)] for a in args]
    for s in f.get_shared():
        shared_values[s.name] = s.get_value()
    return f, results, shared_values


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_linkers_agree_with_python(linker, name):
    for optimizer in ("fast_run", None):
        _, expected, expected_shared = _run(name, "py", optimizer)
        f, got, got_shared = _run(name, linker, optimizer)
        for call_got, call_expected in zip(got, expected):
            for g, e in zip(call_got, call_expected):
                assert g.dtype == e.dtype and g.shape == e.shape
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        for key in expected_shared:
            np.testing.assert_allclose(got_shared[key], expected_shared[key], rtol=1e-5)
        assert "c" in {t.kind for t in f.vm.thunks}


def test_fast_run_uses_the_c_vm_and_runs_all_c_graphs_in_one_call():
    assert get_mode("FAST_RUN").linker_name == "cvm"
    x = tt.fvector("x")
    f = tensorgraph.function([x], tt.exp(x) + 1, mode="FAST_RUN")
    assert f.vm.whole_graph and f.vm.c_call is not None
    np.testing.assert_allclose(f(np.zeros(3, "float32")), 2.0)


def test_hooks_run_the_same_c_thunks_node_by_node():
    x = tt.dvector("x")
    f = tensorgraph.function([x], [tt.exp(x) * 2, tt.sin(x)], mode=Mode("cvm", None))
    seen = []

    def post(i, node, thunk):
        assert thunk.kind == "c"
        seen.append((i, str(node.op), [np.array(c[0]) for c in thunk.outputs]))

    f.vm.post_hook = post
    assert f.vm.c_call is None  # hooks switch the whole-graph call off
    out = f(np.array([0.0, 1.0]))
    assert [s[0] for s in seen] == list(range(len(f.vm.nodes)))
    np.testing.assert_allclose(out[0], 2 * np.exp([0.0, 1.0]))
    final = [s for s in seen if "mul" in s[1]][0][2][0]
    np.testing.assert_allclose(final, out[0])
    f.vm.post_hook = None
    assert f.vm.c_call is not None
    np.testing.assert_allclose(f(np.array([0.0, 1.0]))[1], np.sin([0.0, 1.0]))


def test_a_thunk_can_be_called_alone():
    x = tt.fvector("x")
    f = tensorgraph.function([x], tt.tanh(x) * 3, mode=Mode("cvm", None))
    first = f.vm.thunks[0]
    first.inputs[0][0] = np.array([0.5, -1.0], dtype="float32")
    first()
    np.testing.assert_allclose(first.outputs[0][0], np.tanh([0.5, -1.0]), rtol=1e-6)


class CountingDouble(Op):
    """x * 2 in Python, counting its runs (no C): shows which branch of an ifelse ran."""

    __props__ = ()
    runs = 0

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        CountingDouble.runs += 1
        output_storage[0][0] = inputs[0] * 2


@pytest.mark.parametrize("linker", LINKERS)
def test_ifelse_computes_only_the_taken_branch(linker):
    c, x = tt.iscalar("c"), tt.dvector("x")
    out = ifelse(c > 0, tt.exp(x) + 1, CountingDouble()(tt.sin(x)))
    f = tensorgraph.function([c, x], out, mode=Mode(linker, None))
    CountingDouble.runs = 0
    np.testing.assert_allclose(f(1, np.zeros(2)), [2.0, 2.0])
    assert CountingDouble.runs == 0
    np.testing.assert_allclose(f(0, np.ones(2)), 2 * np.sin(np.ones(2)))
    assert CountingDouble.runs == 1


@pytest.mark.parametrize("linker", ["cvm", "cvm_nogc", "c|py_nogc"])
def test_outputs_are_fresh_arrays(linker):
    x = tt.dvector("x")
    f = tensorgraph.function([x], [tt.exp(x) + 1, x, x + 0], mode=Mode(linker, None))
    value = np.zeros(3)
    first = f(value)
    first_copy = [a.copy() for a in first]
    second = f(np.ones(3))
    for a, b in zip(first, first_copy):
        np.testing.assert_array_equal(a, b)
    assert not np.shares_memory(first[1], value)
    assert not any(np.shares_memory(a, b) for a in first for b in second)
    second[0][:] = -5
    np.testing.assert_allclose(f(np.ones(3))[0], np.e + 1)


def test_the_same_variable_twice_gives_two_arrays_and_borrow_may_alias():
    x = tt.dvector("x")
    y = tt.exp(x)
    f = tensorgraph.function([x], [y, y], mode="FAST_RUN")
    a, b = f(np.zeros(2))
    assert not np.shares_memory(a, b)
    g = tensorgraph.function([x], Out(x, borrow=True), mode="FAST_RUN")
    value = np.arange(3.0)
    assert np.shares_memory(g(value), value)


def test_updates_are_all_or_nothing():
    s = tensorgraph.shared(np.zeros(3), name="s")
    t = tensorgraph.shared(np.zeros(3), name="t")
    x = tt.dvector("x")
    f = tensorgraph.function([x], [], updates=[(s, s + 1), (t, t + x)], mode="FAST_RUN")
    f(np.ones(3))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        f(np.ones(4))
    np.testing.assert_array_equal(s.get_value(), np.ones(3))
    np.testing.assert_array_equal(t.get_value(), np.ones(3))


def test_input_checks_conversions_and_trust_input():
    x = tt.fvector("x")
    m = tt.tensor("float64", shape=(2, None))
    f = tensorgraph.function([x, m], [x * 2, m + 1], mode="FAST_RUN")
    # safe casts and lists are converted
    np.testing.assert_allclose(f(np.array([1, 2], "int8"), [[1.0], [2.0]])[0], [2, 4])
    with pytest.raises(TypeError, match=r"input 0 \('x'\).*float64"):
        f(np.ones(2), np.ones((2, 1)))
    with pytest.raises(TypeError, match="static shape"):
        f(np.ones(2, "float32"), np.ones((3, 1)))
    swapped = np.ones((2, 3), dtype=">f8")
    np.testing.assert_allclose(f(np.ones(2, "float32"), swapped)[1], 2.0)
    longlong = np.arange(3, dtype=np.longlong)
    i = tt.lvector("i")
    g = tensorgraph.function([i], i + 1, mode="FAST_RUN")
    np.testing.assert_array_equal(g(longlong), [1, 2, 3])
    f.trust_input = True
    np.testing.assert_allclose(f(np.ones(2, "float32"), np.ones((2, 2)))[1], 2.0)
    assert f.copy().trust_input


def test_keywords_defaults_and_copies_take_the_python_path():
    x, y = tt.dvector("x"), tt.dscalar("y")
    f = tensorgraph.function([x, In(y, value=2.0)], x * y, mode="FAST_RUN")
    np.testing.assert_allclose(f(np.ones(2)), 2.0)
    np.testing.assert_allclose(f(np.ones(2), y=3.0), 3.0)
    g = f.copy()
    np.testing.assert_allclose(g(np.ones(2), 4.0), 4.0)


def test_node_errors_are_reported_once_with_the_node():
    x, y = tt.fvector("x"), tt.fvector("y")
    for linker in ("c|py", "cvm"):
        f = tensorgraph.function([x, y], tt.exp(x) * y, mode=Mode(linker, None))
        with pytest.raises(ValueError) as info:
            f(np.ones(2, "float32"), np.ones(3, "float32"))
        message = str(info.value)
        assert message.count("in node") == 1, message
        assert "test_linkers.py" in message


def test_without_a_compiler_c_py_warns_and_c_refuses():
    from tensorgraph.link.c import linkers

    x = tt.dvector("x")
    for cxx, warned in (("/nonexistent/gcc", True), ("", False)):  # '' set by hand: asked for
        config.cxx = cxx
        linkers._warned_no_compiler.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = tensorgraph.function([x], x + 1, mode=Mode("c|py", None))
        assert any("config.cxx=" in str(w.message) for w in caught) is warned, cxx
        np.testing.assert_allclose(f(np.zeros(2)), 1.0)
        with pytest.raises(RuntimeError, match="needs a working C compiler"):
            tensorgraph.function([x], x + 1, mode=Mode("c", None))


def _chain(linker):
    """exp, mul, add, tanh, sum: four intermediates, each read once by the next node."""
    x = tt.dvector("x")
    f = tensorgraph.function([x], tt.tanh(tt.exp(x) * 2 + 1).sum(), mode=Mode(linker, None))
    assert f.vm.whole_graph
    return f


def test_cvm_frees_each_intermediate_right_after_its_last_reader():
    f = _chain("cvm")
    schedule = f.vm.cgraph._free_schedule()
    slot_of = f.vm.cgraph.slot
    for k, node in enumerate(f.vm.nodes):
        for out in node.outputs:
            readers = [j for j, n in enumerate(f.vm.nodes) if out in n.inputs]
            if out not in f.maker.fgraph.outputs and readers:
                assert slot_of[out] in schedule[max(readers)]
    f.vm.buffer_counters(track=True)
    value = np.linspace(0.0, 1.0, 1000)
    kept = [f(value) for _ in range(2)]
    counters = f.vm.buffer_counters()
    assert counters["peak_held"] == 1  # never two dead intermediates alive at once
    assert counters["held"] == 0  # nothing kept between calls
    assert counters["allocations"] == 2 * 5  # every buffer allocated afresh each call
    np.testing.assert_allclose(kept[1], np.tanh(np.exp(value) * 2 + 1).sum())


@pytest.mark.parametrize("linker", ["cvm_nogc", "c"])
def test_nogc_linkers_keep_and_reuse_intermediate_buffers(linker):
    f = _chain(linker)
    value = np.linspace(0.0, 1.0, 1000)
    f.vm.buffer_counters(track=True)
    first = f(value)
    after_first = f.vm.buffer_counters(track=True)
    assert after_first["held"] == after_first["peak_held"] == 4
    second = f(value)
    after_second = f.vm.buffer_counters()
    assert after_second["held"] == 4
    # only the output is new: the caller still holds the first call's output buffer
    assert after_second["allocations"] - after_first["allocations"] == 1
    assert first == second == pytest.approx(np.tanh(np.exp(value) * 2 + 1).sum())


def test_c_runs_the_nodes_as_straight_line_code_and_cvm_loops():
    assert _chain("c").vm.cgraph.straight
    assert "TG_STRAIGHT_NODES TG_STEP(0) TG_STEP(1)" in _chain("c").vm.cgraph.source
    assert not _chain("cvm_nogc").vm.cgraph.straight
    x, y = tt.fvector("x"), tt.fvector("y")
    f = tensorgraph.function([x, y], tt.exp(x) * y, mode=Mode("c", None))
    with pytest.raises(ValueError, match="in node"):
        f(np.ones(2, "float32"), np.ones(3, "float32"))
    np.testing.assert_allclose(f(np.zeros(2, "float32"), np.ones(2, "float32")), 1.0)


def test_buffer_counters_need_a_whole_graph_workspace():
    x = tt.dvector("x")
    f = tensorgraph.function([x], x + 1, mode=Mode("c|py", None))
    with pytest.raises(ValueError, match="no whole-graph workspace"):
        f.vm.buffer_counters()
