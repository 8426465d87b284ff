"""The array-library implementations JAX and PyTorch share (``link/array_elemwise.py``,
``link/array_shape.py``, ``link/array_reduction.py``) are written against a namespace only:
with numpy as a third library behind the same adapter they compute what perform computes."""

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.link import array_elemwise, array_reduction, array_shape
from tensorgraph.graph.lookup import SCALAR_SAME
from tensorgraph.graph.registry import Registry
from tensorgraph.tensor.elemwise import Elemwise


class NumpyLibrary(array_elemwise.ArrayLibrary):
    name = "numpy"
    xp = np

    def __init__(self):
        self.scalars = Registry("numpy scalar", same=SCALAR_SAME)
        for cls, make in array_elemwise.registrations(self, {}).items():
            self.scalars.register(cls)(make)

    def array(self, value, dtype=None):
        array = np.asarray(value)
        return array if dtype is None else array.astype(dtype)

    def transpose(self, x, axes):
        return np.transpose(x, axes)

    def integer_power(self, a, b, dtype):
        return np.power(a, b)

    def scalar_implementation(self, op):
        return self.scalars.lookup(op)

    def runtime_check(self, bad, error, message):
        if np.any(bad):
            raise error(message)


def _perform(node, values):
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, list(values), storage)
    return storage[0][0]


def _node(outputs):
    return FunctionGraph(outputs=outputs, clone=False).outputs[0].owner


LIB = NumpyLibrary()


@pytest.mark.parametrize("build, values", [
    (lambda a, b: a // b, (np.array([7, -7, 3], "int8"), np.array([2, 0, -2], "int8"))),
    (lambda a, b: a % b, (np.array([7, -7, 3], "int16"), np.array([0, 3, -2], "int16"))),
    (lambda a, b: a ** b, (np.array([3, -2, 2], "int8"), np.array([5, 3, 9], "int8"))),
    (lambda a, b: tt.round(a, mode="half_away_from_zero"),
     (np.array([1.5, -2.5, 0.4]), np.array([0.0, 0.0, 0.0]))),
    (lambda a, b: -a, (np.array([np.inf, -2.0]), np.array([0.0, 0.0]))),
    (lambda a, b: tt.cast(a, "uint8"), (np.array([-2.5, 300.7]), np.array([0.0, 0.0]))),
])
def test_elemwise_against_numpy_computes_as_perform(build, values):
    a = tt.tensor(dtype=values[0].dtype, shape=(None,))
    b = tt.tensor(dtype=values[1].dtype, shape=(None,))
    out = build(a, b)
    node = _node([out])
    assert isinstance(node.op, Elemwise)
    inputs = [values[[a, b].index(v)] if v in (a, b) else v.data for v in node.inputs]
    got = array_elemwise.elemwise(LIB)(node.op, node)(*inputs)
    expected = _perform(node, inputs)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_argmax_join_and_alloc_against_numpy_compute_as_perform():
    x = tt.tensor(dtype="float64", shape=(None, None, None))
    value = np.random.default_rng(0).normal(size=(2, 3, 4))
    node = _node([tt.argmax(x, axis=(0, 2))])
    got = array_reduction.arg_extremum(LIB, node.op)(value)
    np.testing.assert_array_equal(got, _perform(node, [value]))

    static = lambda v, what: tuple(int(i) for i in np.atleast_1d(v))  # noqa: E731
    node = _node([tt.concatenate([x, x], axis=1)])
    inputs = [v.data if v not in (x,) else value for v in node.inputs]
    got = array_shape.join(LIB, static)(node.op, node)(*inputs)
    np.testing.assert_array_equal(got, _perform(node, inputs))
