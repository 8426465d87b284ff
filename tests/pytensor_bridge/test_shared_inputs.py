"""PyTensor's shared variables in mode TENSORGRAPH (issue 34): they become tensorgraph shared
variables holding their values in PyTensor's own storage cells, so ``unwrap(fn)`` takes the
arguments ``fn`` takes, and a value set on either side is the one both functions read (no
PyMC here: test_pymc_dims has PyMC's data and dims)."""

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt

import tensorgraph as tg
import tensorgraph.pytensor as tgp
from tensorgraph.graph.shared import SharedVariable


def test_a_shared_variable_is_not_an_input_and_its_value_is_shared():
    w = pytensor.shared(np.array([1.0, 2.0]), name="w")
    x = pt.vector("x")
    f = pytensor.function([x], (w * x).sum(), mode="TENSORGRAPH")
    fn = tgp.unwrap(f)
    assert [i.name for i in fn.maker.inputs] == ["x"]
    [tg_w] = fn.maker.shared_inputs
    assert isinstance(tg_w, SharedVariable) and tg_w.name == "w"
    assert fn([1.0, 1.0])[0] == f([1.0, 1.0]) == 3.0
    w.set_value(np.array([5.0, 7.0, 9.0]))  # a new length too
    assert fn(x=[1.0, 1.0, 1.0])[0] == f([1.0, 1.0, 1.0]) == 21.0
    tg_w.set_value(np.array([1.0]))  # and back: the same cell
    np.testing.assert_array_equal(w.get_value(), [1.0])
    assert f([2.0]) == 2.0


def test_from_pytensor_of_a_function_graph_shares_the_cells_too():
    w = pytensor.shared(np.array(2.0), name="w")
    x = pt.scalar("x")
    fgraph = pytensor.graph.fg.FunctionGraph([x, w], [x * w], clone=False)
    ins, [out] = tgp.from_pytensor(fgraph)
    assert [v.name for v in ins] == ["x"]
    fn = tg.function(ins, out)
    assert fn(3.0) == 6.0
    w.set_value(np.array(5.0))
    assert fn(3.0) == 15.0
