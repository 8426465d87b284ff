"""Linker objects used by hand: ``accept(fgraph)``, ``make_thunk()``, ``make_function()``.

PyTensor code links a FunctionGraph without ``function`` this way; each linker class must
compute what the graph's numpy ``perform`` computes, with its own back end.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.link.basic import CLinker, OpWiseCLinker, PerformLinker, VMLinker
from tensorgraph.scalar import basic as ts
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.utils import from_return_values, to_return_values

LINKERS = [PerformLinker, CLinker, OpWiseCLinker, lambda: VMLinker(use_cloop=True)]


@pytest.mark.parametrize("make_linker", LINKERS, ids=["py", "c", "c|py", "cvm"])
def test_make_function_computes_the_graph(make_linker):
    x, y = tt.matrix("x"), tt.row("y")
    f = make_linker().accept(FunctionGraph([x, y], [tt.exp(x) * y + 1])).make_function()
    rng = np.random.default_rng(0)
    xv, yv = rng.normal(size=(3, 4)), rng.normal(size=(1, 4))
    np.testing.assert_allclose(f(xv, yv), np.exp(xv) * yv + 1)
    # a second call with other shapes reuses the same linked graph
    xv, yv = rng.normal(size=(2, 5)), rng.normal(size=(1, 5))
    np.testing.assert_allclose(f(xv, yv), np.exp(xv) * yv + 1)


@pytest.mark.parametrize("make_linker", LINKERS[:2], ids=["py", "c"])
def test_several_outputs_are_a_list(make_linker):
    x = tt.vector("x")
    linker = make_linker().accept(FunctionGraph([x], [x + 1, x * 2]))
    a, b = linker.make_function()(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(a, [2.0, 3.0])
    np.testing.assert_array_equal(b, [2.0, 4.0])
    single = make_linker().accept(FunctionGraph([x], [x + 1])).make_function(unpack_single=False)
    out = single(np.array([1.0]))
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_array_equal(out[0], [2.0])


@pytest.mark.parametrize("make_linker", LINKERS[:2], ids=["py", "c"])
def test_make_thunk_containers(make_linker):
    x = tt.vector("x")
    thunk, inputs, outputs = make_linker().accept(
        FunctionGraph([x], [tt.sqrt(x)])).make_thunk()
    assert [c.name for c in inputs] == ["x"]
    inputs[0].data = [4, 9]            # converted to the input's type, as the data setter does
    assert inputs[0].storage[0].dtype == np.float64
    thunk()
    np.testing.assert_array_equal(outputs[0].data, [2.0, 3.0])
    assert outputs[0].storage[0] is outputs[0].data


@pytest.mark.parametrize("make_linker", LINKERS[:2], ids=["py", "c"])
def test_inplace_node_overwrites_the_input_given(make_linker):
    x, y = tt.matrix("x"), tt.row("y")
    out = Elemwise(ts.add, {0: 0})(x, y)
    f = make_linker().accept(FunctionGraph([x, y], [out])).make_function()
    xv, yv = np.ones((2, 3)), np.full((1, 3), 2.0)
    result = f(xv, yv)
    np.testing.assert_array_equal(xv, 3.0)   # the graph says output 0 overwrites input 0
    assert np.shares_memory(result, xv)


def test_c_view_output_shares_the_input_memory():
    x = tt.vector("x")
    thunk, inputs, outputs = CLinker().accept(FunctionGraph([x], [x[None]])).make_thunk()
    xv = np.broadcast_to(5.0, (100,))
    inputs[0].storage[0] = xv
    thunk()
    assert outputs[0].storage[0].shape == (1, 100)
    assert np.shares_memory(outputs[0].storage[0], xv)


def test_output_storage_is_used():
    x = tt.vector("x")
    cell = [None]
    thunk, _, outputs = PerformLinker().accept(FunctionGraph([x], [x * 3])).make_thunk(
        output_storage=[cell])
    assert outputs[0].storage is cell
    with pytest.raises(ValueError, match="1 graph outputs but 2 output cells"):
        PerformLinker().accept(FunctionGraph([x], [x * 3])).make_thunk(
            output_storage=[[None], [None]])


def test_bad_calls_say_what_is_wrong():
    x = tt.vector("x")
    f = PerformLinker().accept(FunctionGraph([x], [x + 1])).make_function()
    with pytest.raises(TypeError, match="takes 1 arguments .* got 2"):
        f(np.zeros(2), np.zeros(2))
    with pytest.raises(TypeError):
        f(np.zeros((2, 2)))                      # a matrix for a vector input
    with pytest.raises(ValueError, match="call accept"):
        PerformLinker().make_thunk()
    with pytest.raises(TypeError, match="expects a FunctionGraph"):
        PerformLinker().accept([x])


def test_accepting_a_second_graph_gives_a_new_linker():
    x = tt.vector("x")
    g1, g2 = FunctionGraph([x], [x + 1]), FunctionGraph([x], [x * 2])
    linker = CLinker()
    assert linker.accept(g1) is linker and linker.fgraph is g1
    assert linker.accept(g1) is linker
    other = linker.accept(g2)
    assert other is not linker and other.fgraph is g2 and linker.fgraph is g1
    assert other.name == linker.name == "c"
    assert linker.clone().fgraph is None


def test_return_value_helpers():
    assert to_return_values([5]) == 5
    assert to_return_values([1, 2]) == [1, 2]
    assert from_return_values(5) == [5]
    assert from_return_values((1, 2)) == (1, 2)


def test_an_accepted_linker_pickles_with_its_graph():
    import pickle

    x = tt.vector("x")
    linker = pickle.loads(pickle.dumps(CLinker().accept(FunctionGraph([x], [x * 2]))))
    assert linker.fgraph is not None and linker.name == "c"
    np.testing.assert_array_equal(linker.make_function()(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_two_functions_of_one_linker_have_their_own_cells():
    # make_function is not for concurrent calls (one set of cells per callable, as in
    # PyTensor); two callables made from one accepted linker do not share cells
    x = tt.vector("x")
    linker = PerformLinker().accept(FunctionGraph([x], [x + 1]))
    f, g = linker.make_function(), linker.make_function()
    a = f(np.zeros(2))
    b = g(np.ones(2))
    np.testing.assert_array_equal(a, [1.0, 1.0])
    np.testing.assert_array_equal(b, [2.0, 2.0])
    assert f.inputs[0].storage is not g.inputs[0].storage
