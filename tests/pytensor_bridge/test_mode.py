"""The PyTensor mode TENSORGRAPH and the graph import on plain PyTensor graphs (no PyMC: these
also run against PyTensor 3.x): PyTensor's semantics kept, shared variables, updates and
random generators, ops without a conversion (PyTensor perform nodes), threads."""


import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from thread_checks import run_in_threads

import tensorgraph as tg
import tensorgraph.pytensor as tgp
from tensorgraph import config


class Twice(Op):
    """A user's PyTensor op with a perform only: no conversion exists for it."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


def test_int_true_division_whatever_int_division_says():
    config.int_division = "int"
    i, j = pt.lvector("i"), pt.lvector("j")
    f = pytensor.function([i, j], i / j, mode="TENSORGRAPH")
    out = f([1, 3], [2, 2])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [0.5, 1.5])


def test_shared_variables_and_updates():
    acc = pytensor.shared(np.zeros(2), name="acc")
    x = pt.vector("x")
    f = pytensor.function([x], acc.sum(), updates={acc: acc + x}, mode="TENSORGRAPH")
    assert f([1.0, 2.0]) == 0.0
    assert f([1.0, 2.0]) == 3.0
    np.testing.assert_array_equal(acc.get_value(), [2.0, 4.0])


def test_random_generators_advance_as_in_pytensor():
    def draws(mode):
        rng = pytensor.shared(np.random.default_rng(7))
        next_rng, draw = pt.random.normal(0, 1, size=3, rng=rng).owner.outputs
        f = pytensor.function([], draw, updates={rng: next_rng}, mode=mode)
        return [f() for _ in range(3)]

    got, want = draws("TENSORGRAPH"), draws("FAST_RUN")
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got[0], got[1])


def test_an_op_without_conversion_runs_its_perform_and_is_listed():
    x = pt.vector("x")
    f = pytensor.function([x], Twice()(pt.exp(x)).sum(), mode="TENSORGRAPH")
    np.testing.assert_allclose(f([0.0, 1.0]), 2 * (1 + np.e))
    [(op, reason)] = tgp.unsupported(f)
    assert op == "Twice" and "no conversion is registered for Twice" in reason
    assert "PyTensor[Twice]" in tgp.unwrap(f).dprint(file="str")


def test_a_registered_conversion_replaces_the_perform_node():
    tgp.register(Twice)(lambda op, node, x: x * 2)
    try:
        x = pt.vector("x")
        ins, out = tgp.from_pytensor(Twice()(x))
        assert tgp.unsupported(out) == []
        np.testing.assert_array_equal(tg.function(ins, out)([1.0, 2.0]), [2.0, 4.0])
    finally:
        tgp.convert.TABLE._table.pop(Twice)


def test_the_tensorgraph_function_runs_in_many_threads_at_once():
    x = pt.matrix("x")
    fn = tgp.unwrap(pytensor.function([x], pt.log1p(pt.exp(x)).sum(axis=0), mode="TENSORGRAPH"))
    inputs = [np.full((50, 4), float(k)) for k in range(8)]
    want = [fn(v) for v in inputs]
    found = {}

    def work(k):
        found[k] = [fn(inputs[k]) for _ in range(20)]

    run_in_threads(work, 8)
    for k in range(8):
        for value in found[k]:
            np.testing.assert_array_equal(value, want[k])
