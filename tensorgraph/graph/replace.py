"""Rebuilding a graph with some variables replaced: ``clone_replace`` (in ``basic``) swaps
variables of the same type; ``vectorize_graph`` swaps variables for *batched* versions of
them (extra leading dimensions) and rebuilds everything above them batched too.

``vectorize_graph(y, {x: xs})`` where ``xs`` stacks many ``x`` along new leading axes gives
``ys`` whose entry ``ys[i]`` is what ``y`` would be with ``x = xs[i]``, computed in one graph.
Each node is rebuilt by the batching rule of its op, found in a table this layer owns and
the tensor layer fills (``register_vectorize``; ``tensor/blockwise.py`` when tensors are
imported, ``tensor/vectorize_rules.py`` through ``hooks.load_vectorize_rules`` before the
first node is rebuilt): elementwise ops broadcast, reductions and
dimshuffles shift their axes, ``Dot`` becomes a batched matmul, and an op without a rule is
wrapped in a ``Blockwise`` that loops over the batch (``tensorgraph.tensor.blockwise``).
"""

from __future__ import annotations

from tensorgraph import hooks
from tensorgraph.graph.basic import Apply, Variable, io_toposort
from tensorgraph.graph.registry import Registry

__all__ = ["vectorize_graph", "vectorize_node", "register_vectorize", "RULES"]

#: op class -> rule(op, node, *batched_inputs) -> Apply
RULES = Registry("vectorize")
#: the rule of ops with none of their own (``register_vectorize(None)``), once registered
_default_rule: dict = {}


def register_vectorize(op_class):
    """Decorator registering ``rule(op, node, *batched_inputs)`` for ``op_class`` and its
    subclasses that compute as it does (``tensorgraph.graph.lookup``); the rule returns an
    Apply whose outputs are the batched outputs of ``node`` (or the list of those outputs).
    ``register_vectorize(None)`` sets the rule of ops with none of their own."""
    if op_class is None:
        def register_default(rule):
            _default_rule[None] = rule
            return rule
        return register_default
    return RULES.register(op_class)


def vectorize_node(node: Apply, *batched_inputs):
    """``node`` rebuilt on ``batched_inputs`` (each the node's input or a batched version
    of it): an Apply (or a list of outputs) carrying the leading batch dimensions.

    An op's own rule sees every rebuilt node, also one whose inputs gained no dimension:
    the rule decides what a changed input means (a ``Reshape`` given a longer shape vector
    takes it as the full batched shape). An op without a rule is rebuilt as it is when no
    input gained a dimension, and through the default rule (a ``Blockwise``) otherwise."""
    hooks.load_vectorize_rules()  # the ops' own rules, registered when first needed
    rule = RULES.lookup(node.op)
    if rule is not None:
        return rule(node.op, node, *batched_inputs)
    if all(getattr(new.type, "ndim", None) == getattr(old.type, "ndim", None)
           for old, new in zip(node.inputs, batched_inputs)):
        return node.op.make_node(*batched_inputs)      # nothing batched: the same op
    rule = _default_rule.get(None)
    if rule is None:
        raise NotImplementedError(f"vectorize_graph: no batching rule for {node.op} (import "
                                  "tensorgraph.tensor, which registers the tensor ops' rules)")
    return rule(node.op, node, *batched_inputs)


def vectorize_graph(outputs, replace):
    """``outputs`` rebuilt with each key of ``replace`` swapped for its value, a batched
    version of it (the same dtype, extra leading dimensions).

    Returns a variable or a list, as ``outputs`` was given. Outputs that do not depend on the
    replaced variables come back unchanged (unbatched).
    """
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace)
    memo: dict = {}
    for old, new in pairs:
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise TypeError(f"vectorize_graph: replace maps variables to variables, got "
                            f"{old!r}: {new!r}")
        old_ndim, new_ndim = getattr(old.type, "ndim", None), getattr(new.type, "ndim", None)
        if old_ndim is not None and (new_ndim is None or new_ndim < old_ndim or
                                     getattr(new.type, "dtype", None) != old.type.dtype):
            raise TypeError(f"vectorize_graph: {old} ({old.type}) must be replaced by a "
                            f"variable of the same dtype with at least as many dimensions, "
                            f"got {new} ({new.type})")
        memo[old] = new
    for node in io_toposort(list(memo), outs):
        inputs = [memo.get(v, v) for v in node.inputs]
        if all(a is b for a, b in zip(inputs, node.inputs)):
            continue
        new_node = vectorize_node(node, *inputs)
        new_outputs = new_node.outputs if isinstance(new_node, Apply) else list(new_node)
        for old, new in zip(node.outputs, new_outputs):
            memo[old] = new
    result = [memo.get(o, o) for o in outs]
    return result[0] if single else result
