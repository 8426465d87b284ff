"""FunctionGraph: clients, replacement, pruning, features and validation."""

import pytest

import tensorgraph.tensor as tt
from tensorgraph.graph import Feature, FunctionGraph, InconsistencyError, MissingInputError


class Recorder(Feature):
    def __init__(self):
        self.events = []

    def on_attach(self, fgraph):
        self.events.append(("attach",))

    def on_import(self, fgraph, node, reason):
        self.events.append(("import", str(node.op), reason))

    def on_prune(self, fgraph, node, reason):
        self.events.append(("prune", str(node.op), reason))

    def on_change_input(self, fgraph, node, i, old, new, reason):
        self.events.append(("change", i, reason))


def make_graph():
    x, y = tt.vectors("x", "y")
    z = x * 3
    out = z + y
    return x, y, out


def test_build_tracks_clients_and_clones():
    x, y, out = make_graph()
    fg = FunctionGraph([x, y], [out])
    assert fg.inputs[0] is not x and fg.inputs[0].name == "x"
    assert len(fg.apply_nodes) >= 2
    fg.check_integrity()
    (o,) = fg.outputs
    assert fg.clients[o] == [("output", 0)]
    assert len(fg.clients[fg.inputs[1]]) == 1


def test_no_clone_uses_the_given_variables():
    x, y, out = make_graph()
    fg = FunctionGraph([x, y], [out], clone=False)
    assert fg.inputs == [x, y] and fg.outputs == [out]


def test_missing_input_is_reported_by_name():
    x, y, out = make_graph()
    with pytest.raises(MissingInputError, match="y"):
        FunctionGraph([x], [out])


def test_replace_prunes_and_notifies():
    x, y, out = make_graph()
    rec = Recorder()
    fg = FunctionGraph([x, y], [out], features=[rec])
    before = len(fg.apply_nodes)
    x_in, y_in = fg.inputs
    add_node = fg.outputs[0].owner
    fg.replace(add_node.inputs[0], x_in * 2, reason="test")
    fg.check_integrity()
    kinds = [e[0] for e in rec.events]
    assert "change" in kinds and "prune" in kinds
    assert ("change", 0, "test") in rec.events
    assert len(fg.apply_nodes) == before  # one node pruned, one imported
    assert fg.outputs[0].owner.inputs[0].owner.inputs[0] is x_in


def test_replace_output():
    x, y, out = make_graph()
    fg = FunctionGraph([x, y], [out])
    x_in, y_in = fg.inputs
    fg.replace(fg.outputs[0], y_in + x_in, reason="swap")
    fg.check_integrity()
    assert fg.outputs[0].owner.inputs[0] is y_in


def test_replace_refuses_incompatible_types():
    x, y, out = make_graph()
    fg = FunctionGraph([x, y], [out])
    with pytest.raises(TypeError, match="incompatible"):
        fg.replace(fg.outputs[0], tt.matrix("m"), reason="bad")


class Vetoer(Feature):
    def __init__(self):
        self.armed = False

    def validate(self, fgraph):
        if self.armed:
            raise InconsistencyError("vetoed")


def test_replace_validate_undoes_on_veto():
    x, y, out = make_graph()
    vetoer = Vetoer()
    fg = FunctionGraph([x, y], [out], features=[vetoer])
    x_in, y_in = fg.inputs
    old = fg.outputs[0].owner.inputs[0]
    vetoer.armed = True
    with pytest.raises(InconsistencyError):
        fg.replace_validate(old, x_in * 2, reason="vetoed change")
    fg.check_integrity()
    assert fg.outputs[0].owner.inputs[0] is old


def test_toposort_respects_feature_orderings():
    x = tt.vector("x")
    a, b = x * 2, x * 3
    fg = FunctionGraph([x], [a, b], clone=False)
    natural = fg.toposort()
    assert natural.index(a.owner) < natural.index(b.owner)

    class Order(Feature):
        def orderings(self, fgraph):
            return {a.owner: [b.owner]}

    fg.attach_feature(Order())
    order = fg.toposort()
    assert order.index(b.owner) < order.index(a.owner)


def test_clone_is_independent():
    x, y, out = make_graph()
    fg = FunctionGraph([x, y], [out])
    cp = fg.clone()
    assert cp.inputs[0] is not fg.inputs[0]
    cp.replace(cp.outputs[0], cp.inputs[1], reason="t")
    assert fg.outputs[0].owner is not None
