"""Differences that PyMC's own tests found between PyTensor's C and the mode TENSORGRAPH
(tools/pymc_suite), each fixed in the bridge and checked here on a small graph."""

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt

import tensorgraph.pytensor as tgp


def test_a_random_variable_drawn_without_size_runs_as_a_perform_node():
    # `size=None` is a NoneConst input, which has no tensorgraph type: the perform node holds
    # it and hands it back to PyTensor's perform (test_multivariate's CAR and
    # StickBreakingWeights draws, `pt.random.normal()` itself)
    rng = pytensor.shared(np.random.default_rng(3))
    next_rng, x = pt.random.normal(np.zeros(3), 1, rng=rng).owner.outputs
    f_c = pytensor.function([], x, updates={rng: next_rng})
    c_draws = [f_c(), f_c()]
    rng.set_value(np.random.default_rng(3))
    f_tg = pytensor.function([], x, updates={rng: next_rng}, mode="TENSORGRAPH")
    for expected in c_draws:
        np.testing.assert_array_equal(f_tg(), expected)
    assert [op for op, _ in tgp.unsupported(f_tg)] == [str(x.owner.op)]


def test_perform_nodes_that_differ_in_a_fixed_input_are_not_merged():
    rng = pytensor.shared(np.random.default_rng(5))
    a = pt.random.normal(0, 1, rng=rng)             # size None
    b = pt.random.normal(0, 1, size=(), rng=rng)    # a size given: another node
    f = pytensor.function([], [a, b], mode="TENSORGRAPH")
    out_a, out_b = f()
    g = pytensor.function([], [a, b])
    np.testing.assert_array_equal([out_a, out_b], g())


def test_a_perform_node_pickled_before_fixed_inputs_existed_still_loads():
    from tensorgraph.pytensor.perform_node import PyTensorPerform

    x = pt.vector("x")
    node = pt.exp(x).owner
    op = PyTensorPerform(node, [tgp.convert.convert_type(node.outputs[0].type)])
    old_state = {k: v for k, v in op.__getstate__().items() if k not in ("fixed", "fixed_key")}
    loaded = PyTensorPerform.__new__(PyTensorPerform)
    loaded.__setstate__(old_state)
    assert loaded == op and loaded.fixed == {}
    import tensorgraph.tensor as tt

    out = [[None]]
    loaded.perform(loaded.make_node(tt.vector("x")), [np.zeros(2)], out)
    np.testing.assert_array_equal(out[0][0], [1.0, 1.0])
