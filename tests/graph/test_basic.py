"""Graph objects: variables, nodes, ops, traversal, cloning and source locations."""

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.graph import (
    Apply,
    Constant,
    Op,
    Variable,
    ancestors,
    clone,
    clone_replace,
    graph_inputs,
    io_toposort,
)
from tensorgraph.graph.utils import TestValueError, format_user_line


class Double(Op):
    """The Op from the docs: a user-defined op written in a few lines."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes


class Scale(Op):
    __props__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * self.factor


class NoProps(Op):
    def make_node(self, x):
        return Apply(self, [x], [x.type()])


def test_variable_attributes():
    x = tt.matrix("x")
    y = Double()(x)
    assert x.owner is None and x.index is None and x.name == "x"
    assert y.owner.op == Double() and y.index == 0 and y.owner.inputs == [x]
    assert y.type == x.type
    assert str(x) == "x" and "Double" in str(y)


def test_op_equality_follows_props():
    assert Double() == Double() and hash(Double()) == hash(Double())
    assert Scale(2) == Scale(2) and Scale(2) != Scale(3)
    assert hash(Scale(2)) == hash(Scale(2))
    a, b = NoProps(), NoProps()
    assert a != b and a == a
    assert str(Scale(2)) == "Scale{2}"



def test_props_dict_rebuilds_an_op_with_changed_props():
    """``op._props_dict()`` (PyTensor's name): the props by name, so ``type(op)(**props)``
    rebuilds the op, with some props changed."""
    assert Scale(2)._props_dict() == {"factor": 2}
    assert type(Scale(2))(**{**Scale(2)._props_dict(), "factor": 3}) == Scale(3)
    assert Double()._props_dict() == {}
    with pytest.raises(ValueError, match="NoProps has no __props__"):
        NoProps()._props_dict()

def test_apply_refuses_non_variables():
    with pytest.raises(TypeError, match="input 0 must be a Variable"):
        Apply(Double(), [np.ones(3)], [tt.vector()])


def test_output_cannot_belong_to_two_nodes():
    x = tt.vector("x")
    y = Double()(x)
    with pytest.raises(ValueError, match="already belongs"):
        Apply(Double(), [x], [y])


def test_traversal():
    x, y = tt.vectors("x", "y")
    z = Double()(x) + y
    w = Double()(z)
    assert set(graph_inputs([w])) == {x, y}
    order = io_toposort([x, y], [w])
    assert [n.op for n in order][-1] == Double()
    positions = {n: i for i, n in enumerate(order)}
    for node in order:
        for inp in node.inputs:
            if inp.owner is not None:
                assert positions[inp.owner] < positions[node]
    assert z in ancestors([w]) and x in ancestors([w])
    assert io_toposort([x, y], [w]) == order  # deterministic


def test_toposort_detects_cycles():
    x = tt.vector("x")
    y = Double()(x)
    z = Double()(y)
    with pytest.raises(ValueError, match="cycle"):
        io_toposort([x], [z], orderings={y.owner: [z.owner]})


def test_clone_copies_nodes_and_inputs():
    x = tt.vector("x")
    y = Double()(x)
    (x2,), (y2,) = clone([x], [y])
    assert x2 is not x and x2.name == "x" and x2.type == x.type
    assert y2.owner is not y.owner and y2.owner.inputs == [x2]
    (x3,), (y3,) = clone([x], [y], copy_inputs=False)
    assert x3 is x and y3.owner.inputs == [x]


def test_clone_replace_swaps_a_subgraph():
    x, y = tt.vectors("x", "y")
    z = Double()(x)
    w = z + y
    new = clone_replace(w, {z: y})
    assert w.owner.inputs[0] is z  # the original graph is untouched
    assert new.owner.inputs[0] is y
    assert set(graph_inputs([new])) == {y}


def test_constants_are_shared_by_clone():
    x = tt.vector("x")
    y = x + np.ones(3)
    (_,), (y2,) = clone([x], [y])
    const = [i for i in y2.owner.inputs if isinstance(i, Constant)]
    assert const and const[0] is [i for i in y.owner.inputs if isinstance(i, Constant)][0]


def test_constant_signature():
    a, b = tt.constant(np.arange(3.0)), tt.constant(np.arange(3.0))
    assert a.signature() == b.signature() and a is not b
    assert tt.constant(np.arange(3.0)).signature() != tt.constant(np.arange(4.0)).signature()


def test_source_location_points_at_user_line():
    x = tt.vector("x")
    y = Double()(x)  # THIS LINE
    line = format_user_line(y.owner)
    assert __file__ in line and "THIS LINE" in line


def test_traceback_limit_zero_records_nothing():
    with config.change_flags(traceback__limit=0):
        y = Double()(tt.vector())
    assert y.owner.tag.trace == () and format_user_line(y.owner) == ""


def test_test_value_is_validated_on_assignment():
    x = tt.matrix("x")
    with pytest.raises(TypeError, match="expected 2 dimensions"):
        x.tag.test_value = np.ones(3)
    x.tag.test_value = [[1.0, 2.0]]
    assert isinstance(x.tag.test_value, np.ndarray)


def test_test_values_flow_and_errors_name_the_line():
    x, y = tt.vectors("x", "y")
    x.tag.test_value = np.ones(3)
    y.tag.test_value = np.ones(4)
    with config.change_flags(compute_test_value="raise"):
        z = Double()(x)
        np.testing.assert_array_equal(z.tag.test_value, 2 * np.ones(3))
        with pytest.raises(ValueError) as info:
            x + y  # BAD EXPRESSION
        message = str(info.value)
        assert "(3,)" in message and "(4,)" in message and "BAD EXPRESSION" in message


def test_missing_test_value_policies():
    x = tt.vector("x")
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(TestValueError, match="x has no test value"):
            Double()(x)
    with config.change_flags(compute_test_value="warn"):
        with pytest.warns(UserWarning, match="no test value"):
            y = Double()(x)
        assert not hasattr(y.tag, "test_value")
    with config.change_flags(compute_test_value="ignore"):
        y = Double()(x)
        assert not hasattr(y.tag, "test_value")


def test_get_test_value_of_constant():
    c = tt.constant(3.0)
    assert c.get_test_value() == 3.0
    with pytest.raises(TestValueError):
        tt.vector("v").get_test_value()


def test_variable_is_not_truthy_or_iterable():
    x = tt.vector("x")
    with pytest.raises(TypeError, match="truth value"):
        bool(x)
    with pytest.raises(TypeError, match="iterate"):
        iter(x)


def test_plain_variable_clone_keeps_tag_copy():
    x = tt.vector("x")
    x.tag.note = "keep"
    c = x.clone()
    assert c.tag.note == "keep" and c.tag is not x.tag and isinstance(c, Variable)


def test_print_test_value_shows_values_in_str():
    x = tt.vector("x")
    x.tag.test_value = np.array([1.5, 2.5])
    assert str(x) == "x"
    with config.change_flags(print_test_value=True):
        assert "1.5" in str(x) and str(x).startswith("x\n")


def test_eval_by_variable_and_by_name_and_caches():
    x = tt.dvector("x")
    y = x * 2 + 1
    np.testing.assert_allclose(y.eval({x: np.arange(3.0)}), [1.0, 3.0, 5.0])
    np.testing.assert_allclose(y.eval({"x": np.ones(2)}), [3.0, 3.0])
    assert len(y._eval_cache) == 1  # both calls compiled one function for input x
    assert tt.constant(2.0).eval() == 2.0
    with pytest.raises(TypeError, match="no input named 'z'"):
        y.eval({"z": 1.0})


def test_equal_computations_compares_literals_with_constants_by_value():
    from tensorgraph.graph.basic import equal_computations

    a = tt.as_tensor_variable(2)
    assert equal_computations([2], [a]) and equal_computations([a], [np.int64(2)])
    assert equal_computations([np.array([1.0, np.nan])], [np.array([1.0, np.nan])])
    assert not equal_computations([3], [a])
    assert not equal_computations([2], [tt.lscalar("s")])
    # every pair counts, not only the first
    assert not equal_computations([2, a], [a, tt.as_tensor_variable(5)])
