"""Rewrites and batching rules follow the one rule of ``tensorgraph.graph.lookup``: what is
registered for an op class (a rewrite tracking it, an ``isinstance``-style match inside a
rewrite, a ``vectorize_graph`` rule) serves a user's subclass only when the subclass computes
as its parent. A subclass with its own ``perform`` (``impl`` for a scalar op) keeps its own
result in every mode instead of getting its parent's algebra."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.shape import Shape

from user_subclasses import ExpPlusOne, Hotter, SameSoftmax, hotter

MODES = ("FAST_RUN", "FAST_COMPILE")


@pytest.mark.parametrize("mode", MODES)
def test_log_of_a_softmax_subclass_is_not_rewritten_into_log_softmax(mode):
    x = tt.dvector("x")
    value = np.array([0.0, 1.0, 3.0])
    f = tg.function([x], tt.log(Hotter(-1)(x)), mode=mode)
    np.testing.assert_allclose(f(value), np.log(hotter(value)))
    assert not any(type(n.op).__name__ == "LogSoftmax" for n in f.maker.fgraph.toposort())


@pytest.mark.parametrize("mode", MODES)
def test_log_sum_of_a_scalar_op_subclass_is_not_rewritten_into_logsumexp(mode):
    x = tt.dvector("x")
    value = np.array([0.0, 1.0, 3.0])
    f = tg.function([x], tt.log(tt.sum(Elemwise(ExpPlusOne())(x))), mode=mode)
    np.testing.assert_allclose(f(value), np.log(np.sum(np.exp(value) + 1)))


def test_a_subclass_that_computes_the_same_keeps_its_parents_rewrites():
    x = tt.dvector("x")
    f = tg.function([x], tt.log(SameSoftmax(-1)(x)), mode="FAST_RUN")
    assert any(type(n.op).__name__ == "LogSoftmax" for n in f.maker.fgraph.toposort())


class DoubledShape(Shape):
    """Twice the shape: Shape's batching rule (a shape of the batched input) does not apply."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = 2 * np.asarray(inputs[0].shape, dtype="int64")


def test_vectorize_batches_a_subclass_with_its_own_perform_by_its_own_perform():
    x = tt.dvector("x")
    rows = tt.dmatrix("rows")
    batched = vectorize_graph(DoubledShape()(x), {x: rows})
    got = tg.function([rows], batched, mode="FAST_COMPILE")(np.zeros((3, 5)))
    np.testing.assert_array_equal(got, [[10], [10], [10]])
