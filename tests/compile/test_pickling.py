"""Compiled functions and graphs pickle (pickle and cloudpickle), in every linker and mode,
and unpickle in another process with their C from that process's module cache."""

from __future__ import annotations

import pickle
import textwrap

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.io import In, Out
from tensorgraph.compile.monitormode import MonitorMode
from tensorgraph.graph import Apply, Op
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.rewriting.destroyhandler import DestroyHandler

cloudpickle = pytest.importorskip("cloudpickle")

LINKERS = ["cvm", "cvm_nogc", "c", "c|py", "py", "vm"]


def watch(fgraph, i, node, thunk):
    """A MonitorMode hook defined at module level (so it pickles)."""


MODES = ["FAST_RUN", "FAST_COMPILE", "DebugMode", "NanGuardMode", MonitorMode(post_func=watch),
         "JAX", "NUMBA", "PYTORCH"]


def _train(mode):
    x, y = tt.matrix("x"), tt.vector("y")
    w = tg.shared(np.linspace(-1, 1, 3), name="w")
    b = tg.shared(np.asarray(0.5), name="b")
    p = tt.sigmoid(tt.dot(x, w) + b)
    cost = tt.mean((p - y) ** 2)
    gw, gb = tg.grad(cost, [w, b])
    return tg.function([x, y], [cost, p > 0.5], updates=[(w, w - 0.5 * gw), (b, b - 0.5 * gb)],
                       mode=mode, name="train"), w, b


DATA = (np.arange(12.0).reshape(4, 3) / 10, np.array([0.0, 1.0, 1.0, 0.0]))


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("mode", [tg.Mode(linker=k, optimizer="fast_run") for k in LINKERS] + MODES,
                         ids=[f"linker-{k}" for k in LINKERS] + ["FAST_RUN", "FAST_COMPILE",
                                                                  "DebugMode", "NanGuardMode",
                                                                  "MonitorMode", "JAX", "NUMBA",
                                                                  "PYTORCH"])
def test_a_pickled_function_computes_and_updates_as_the_original(mode, dumps):
    train, w, b = _train(mode)
    train(*DATA)  # the pickle holds the shared values as they are now
    copy = pickle.loads(dumps(train))
    assert copy.name == "train" and copy.maker.mode.linker_name == train.maker.mode.linker_name
    for _ in range(3):
        expected, got = train(*DATA), copy(*DATA)
        np.testing.assert_allclose(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    copy_w = copy.maker.shared_inputs[0]
    assert copy_w is not w and copy_w.name == "w"
    np.testing.assert_allclose(copy_w.get_value(), w.get_value())


def test_inputs_and_outputs_keep_their_settings_and_givens_stay_applied():
    x, y, k = tt.vector("x"), tt.vector("y"), tt.scalar("k")
    scale = tg.shared(np.asarray(3.0), name="scale")
    f = tg.function([In(x, name="first"), In(k, value=2.0, name="k")],
                    Out(x * k * y, borrow=True), givens={y: x + 1}, mode="FAST_RUN")
    f.trust_input = False
    g = pickle.loads(pickle.dumps(f))
    assert np.allclose(g(np.ones(2)), f(np.ones(2))) and np.allclose(g(np.ones(2)), 4.0)
    assert np.allclose(g(first=np.ones(2), k=5.0), 10.0)
    assert g.maker.outputs[0].borrow and g.maker.inputs[1].has_default
    assert not g.maker.inputs[0].has_default
    del scale


def test_a_shared_variable_pickled_with_its_function_stays_the_same_object():
    train, w, _ = _train("FAST_RUN")
    copy, copy_w = pickle.loads(pickle.dumps((train, w)))
    before = copy_w.get_value().copy()
    copy(*DATA)
    assert not np.allclose(copy_w.get_value(), before)  # the copy's update went to copy_w
    assert np.allclose(w.get_value(), before)


def test_unpickle_function_off_gives_none_and_reoptimize_rewrites_again():
    train, _, _ = _train("FAST_RUN")
    data = pickle.dumps(train)
    with config.change_flags(unpickle_function=False):
        assert pickle.loads(data) is None
    plain = pickle.loads(data)
    assert getattr(plain.maker.fgraph, "rewrite_history", None) is None  # reused as pickled
    with config.change_flags(reoptimize_unpickled_function=True):
        again = pickle.loads(data)
    assert len(again.maker.fgraph.rewrite_history) > 0  # rewritten in this process
    np.testing.assert_allclose(again(*DATA)[0], plain(*DATA)[0])


def test_the_random_state_travels_with_the_function():
    from tensorgraph.tensor.random.utils import RandomStream

    srng = RandomStream(seed=7)
    draw = tg.function([], srng.normal(size=(3,)), updates=srng.updates())
    copy = pickle.loads(pickle.dumps(draw))
    for _ in range(3):
        np.testing.assert_array_equal(copy(), draw())


def test_graphs_pickle_variables_ops_types_and_function_graphs():
    x = tt.matrix("x")
    y = tt.exp(x).sum(axis=1) + 1
    y2 = pickle.loads(pickle.dumps(y))
    assert str(y2.type) == str(y.type) and y2.owner.op == y.owner.op
    f = tg.function([y2.owner.inputs[0].owner.inputs[0].owner.inputs[0]], y2)
    assert np.allclose(f(np.zeros((2, 3))), 4.0)
    fgraph = FunctionGraph([x], [y])
    DestroyHandler.attach_to(fgraph)
    fg2 = pickle.loads(pickle.dumps(fgraph))
    assert len(fg2.apply_nodes) == len(fgraph.apply_nodes)
    assert [type(ft) for ft in fg2.features] == [DestroyHandler]
    assert [n.op for n in fg2.toposort()] == [n.op for n in fgraph.toposort()]


class _HoldsAFile(Op):
    __props__ = ()

    def __init__(self, handle):
        self.handle = handle

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


def test_an_op_that_cannot_be_pickled_is_named_with_its_line(tmp_path):
    with open(tmp_path / "log.txt", "w") as handle:
        x = tt.vector("x")
        y = _HoldsAFile(handle)(x) + 1  # the line the error names
        with pytest.raises(pickle.PicklingError) as info:
            pickle.dumps(y)
        message = str(info.value)
        assert "_HoldsAFile" in message and "TextIOWrapper" in message
        assert "y = _HoldsAFile(handle)(x) + 1" in message
        f = tg.function([x], y, mode="FAST_COMPILE")
        with pytest.raises(pickle.PicklingError, match="_HoldsAFile"):
            pickle.dumps(f)


def test_another_process_unpickles_with_its_cache(run_python, tmp_path):
    """The unpickling process finds the C in its cache: compiled there once when the cache is
    empty, found on disk by the next process."""
    train, _, _ = _train("FAST_RUN")
    path = tmp_path / "train.pkl"
    path.write_bytes(pickle.dumps(train))
    expected = train(*DATA)[0]
    code = textwrap.dedent(f"""
        import pickle, numpy as np
        f = pickle.load(open({str(path)!r}, "rb")).wait_optimized()
        x = np.arange(12.0).reshape(4, 3) / 10
        y = np.array([0.0, 1.0, 1.0, 0.0])
        print(repr(float(f(x, y)[0])), f.vm.cgraph.found)
    """)
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'cache'},compile__tiers=False"}
    first = run_python("-c", code, env=env)
    assert first.returncode == 0, first.stderr
    value, found = first.stdout.split()
    assert np.isclose(float(value), expected) and found == "compiled"
    second = run_python("-c", code, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split()[1] == "disk"


def test_unpickling_loads_no_module_from_an_untrusted_cache(run_python, tmp_path):
    train, _, _ = _train("FAST_RUN")
    path = tmp_path / "train.pkl"
    path.write_bytes(pickle.dumps(train))
    cache = tmp_path / "cache"
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={cache},compile__tiers=False"}
    code = f"import pickle; pickle.load(open({str(path)!r}, 'rb'))"
    assert run_python("-c", code, env=env).returncode == 0
    cache.chmod(0o777)  # now anyone could replace the modules in it
    result = run_python("-c", code, env=env)
    assert result.returncode != 0 and "UntrustedCacheError" in result.stderr


def test_deep_graphs_and_their_functions_pickle():
    """A graph thousands of nodes deep (a 64-layer MLP's step is ~700 nodes deep with its
    gradient) pickles as a FunctionGraph and inside a function: pickle meets the nodes in
    topological order instead of recursing from the outputs (RecursionError before)."""
    x = tt.dvector("x")
    y = x
    for k in range(1500):
        y = tt.tanh(y) * 0.5 + x
    fgraph = FunctionGraph([x], [y])
    again = pickle.loads(pickle.dumps(fgraph))
    assert len(again.apply_nodes) == len(fgraph.apply_nodes)
    f = tg.function([x], y, mode="FAST_COMPILE")
    g = pickle.loads(pickle.dumps(f))
    value = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(g(value), f(value))
