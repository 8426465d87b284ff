"""The one registry class every back end's op table, scalar table and the vectorize rules are
instances of (``tensorgraph.graph.registry``)."""

import pytest

from tensorgraph.graph.registry import Registry


class Base:
    pass


class Child(Base):
    pass


class Other:
    pass


def test_lookup_follows_the_class_hierarchy():
    table = Registry("Test")

    @table.register(Base)
    def base_impl(op, node):
        return "base"

    assert table.lookup(Child()) is base_impl and table.lookup(Other()) is None

    @table.register(Child)
    def child_impl(op, node):
        return "child"

    assert table.lookup(Child()) is child_impl and table.lookup(Base()) is base_impl
    assert table.registered() == [Base, Child]


def test_registering_something_not_a_class_is_a_clear_type_error():
    table = Registry("Test")
    with pytest.raises(TypeError, match=r"Test register\(\) takes an op class, got .* \(a Child\)"):
        table.register(Child())
    with pytest.raises(TypeError, match="takes an op class"):
        table.add("Child", object())
