"""Node functions called through ctypes without the glue library (link/c/direct.py, the
quick tier's calls): the glue's results, bit for bit; outputs that are views keep their
input alive; a failing node raises the glue's error."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.graph.basic import Constant
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.link.c.codegen import CGraph
from tensorgraph.link.c.direct import DirectCall
from tensorgraph.link.c.linkers import c_error


def _raise(k, message, inputs, whole):
    raise c_error(message)


def _compiled(outputs):
    cgraph = CGraph(FunctionGraph(outputs=outputs, clone=False), whole_graph=False)
    cgraph.compile()  # with the glue: its node_call is the reference
    return cgraph


def _inputs(fn, data):
    return [v.data if isinstance(v, Constant) else data[v] for v in fn.node.inputs]


def test_direct_calls_give_the_glues_results_and_views_keep_their_input():
    x, v = tt.matrix("x"), tt.vector("v")
    outputs = [tt.sum(x, axis=0), tt.exp(v), x.T, x[1:], tt.cast(v, "int32"), v[0]]
    cgraph = _compiled(outputs)
    rng = np.random.default_rng(0)
    data = {x: rng.standard_normal((5, 7))[:, ::2], v: rng.standard_normal(9) * 5}
    direct = DirectCall(cgraph, c_error)
    glue = cgraph.workspace(gc=True, report=_raise)["node_call"]
    for k, fn in enumerate(cgraph.functions):
        got = direct(k, *_inputs(fn, data))
        expected = glue(k, *_inputs(fn, data))
        for a, b in zip(got, expected):
            assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
            assert np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                  np.ascontiguousarray(b).view(np.uint8)), fn.node
    (k,) = [k for k, fn in enumerate(cgraph.functions) if fn.node.outputs[0] is outputs[3]]
    source = data[x].copy()
    (view,) = direct(k, *_inputs(cgraph.functions[k], {x: source}))
    assert np.shares_memory(view, source)
    del source
    gc.collect()
    np.testing.assert_array_equal(view, data[x][1:])  # the input lives as long as the view


def test_a_failing_direct_call_raises_the_glues_error():
    v, w = tt.vector("v"), tt.vector("w")
    cgraph = _compiled([v * w])
    direct = DirectCall(cgraph, c_error)
    glue = cgraph.workspace(gc=True, report=_raise)["node_call"]
    with pytest.raises(ValueError) as expected:
        glue(0, np.ones(3), np.ones(4))
    with pytest.raises(ValueError) as got:
        direct(0, np.ones(3), np.ones(4))
    assert str(got.value) == str(expected.value)
    with pytest.raises(TypeError, match="input 1 of the node: expected a 1-d array, got 2"):
        direct(0, np.ones(3), np.ones((3, 1)))
