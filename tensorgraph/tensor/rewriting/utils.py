"""Helpers shared by the tensor rewrites: recognising elementwise ops and constant values."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.graph.lookup import SCALAR_SAME, computes_as
from tensorgraph.scalar.basic import Neg
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.math import cast, neg, second


def scalar_op_of(var_or_node):
    """The scalar op of an (non-inplace) Elemwise node (or of the node computing a variable)."""
    node = getattr(var_or_node, "owner", var_or_node)
    if node is None or not op_is(node, Elemwise) or node.op.inplace_pattern:
        return None
    return node.op.scalar_op


def op_is(node, classes) -> bool:
    """``isinstance(node.op, classes)`` for rewrites: whether ``node`` (an Apply, or None) has
    an op of one of ``classes`` that computes as that class does. A user's subclass with its
    own ``perform`` is not matched, so it keeps its own result instead of getting its
    parent's algebra (``tensorgraph.graph.lookup``)."""
    if node is None:
        return False
    classes = classes if isinstance(classes, tuple) else (classes,)
    return any(computes_as(type(node.op), klass) for klass in classes)


def is_elemwise(var_or_node, *scalar_classes) -> bool:
    """Whether ``var_or_node`` is (computed by) an Elemwise over one of ``scalar_classes``."""
    op = scalar_op_of(var_or_node)
    return op is not None and any(computes_as(type(op), klass, SCALAR_SAME)
                                  for klass in scalar_classes)


def constant_value(var):
    """The one value every element of ``var`` has, if ``var`` is a constant (possibly behind
    dimshuffles) with all elements equal; else ``None``."""
    while var.owner is not None and op_is(var.owner, DimShuffle):
        var = var.owner.inputs[0]
    if not isinstance(var, Constant):
        return None
    data = np.asarray(var.data)
    if data.size == 0:
        return None
    first = data.flat[0]
    if data.size > 1 and not np.all(data == first):
        return None
    return first


def is_constant(var, value) -> bool:
    """Whether ``var`` is a constant whose every element equals ``value``."""
    got = constant_value(var)
    return got is not None and bool(got == value)


def fits(old, new):
    """``new`` converted to ``old``'s type (same dtype and ndim, compatible static shape), or
    ``None`` when it cannot stand in for ``old``."""
    if new is None or new.type.dtype != old.type.dtype or new.type.ndim != old.type.ndim:
        return None
    return old.type.convert_variable(new)


def single_client(fgraph, var) -> bool:
    return len(fgraph.clients.get(var, ())) == 1


def as_dtype(x, dtype: str):
    """``x`` computed in ``dtype``: itself, or cast to it.

    Rewrites that move a negation, a subtraction or a sum out of an op that converts its input
    (``sigmoid`` of a uint8 computes in float32) convert first, so nothing is computed in the
    narrower dtype where it would wrap around (uint8 ``-200`` is ``56``)."""
    return x if x.dtype == dtype else cast(x, dtype)


def negate(x, dtype: str | None = None):
    """``-x`` computed in ``dtype`` (default ``x``'s own), without stacking negations
    (``-(-a)`` is ``a`` when the inner negation was computed in ``dtype`` too)."""
    dtype = x.dtype if dtype is None else dtype
    if is_elemwise(x, Neg) and x.dtype == dtype:
        return x.owner.inputs[0] if x.owner.inputs[0].dtype == dtype else as_dtype(
            x.owner.inputs[0], dtype)
    return neg(as_dtype(x, dtype))


def constant_array(var):
    """The value of ``var`` as an array if it is a constant, possibly behind dimshuffles (which
    are applied to the value); else ``None``."""
    shuffles = []
    while var.owner is not None and op_is(var.owner, DimShuffle):
        shuffles.append(var.owner)
        var = var.owner.inputs[0]
    if not isinstance(var, Constant):
        return None
    value = np.asarray(var.data)
    for node in reversed(shuffles):
        storage = [[None]]
        node.op.perform(node, [value], storage)
        value = np.asarray(storage[0][0])
    return value


def same_structure(a, b) -> bool:
    """Whether ``a`` and ``b`` are the same variable, equal constants, or computed by equal ops
    from inputs with the same structure (how a rewrite tells that its result is what is there)."""
    if a is b:
        return True
    if isinstance(a, Constant) and isinstance(b, Constant):
        return a.type == b.type and a.signature() == b.signature()
    if a.owner is None or b.owner is None or a.index != b.index:
        return False
    na, nb = a.owner, b.owner
    return (na.op == nb.op and len(na.inputs) == len(nb.inputs)
            and all(same_structure(x, y) for x, y in zip(na.inputs, nb.inputs)))


def broadcast_like(old, new, sources):
    """``new`` made to stand in for ``old`` when a rewrite dropped some of ``old``'s inputs.

    Dropping a term or factor can lose the dimension it broadcast ``new`` to (``x - x + r`` with
    ``r`` a row is a matrix, ``r`` alone is not). Each dimension ``new`` would broadcast where
    ``old`` does not is restored with ``second(source, new)`` from one of ``sources`` (the
    dropped variables); ``new`` is cast to ``old``'s dtype. ``None`` when it cannot be done.
    """
    if new.ndim > old.ndim:
        return None
    for d in range(old.ndim):
        offset = old.ndim - new.ndim
        new_size = new.type.shape[d - offset] if d >= offset else 1
        if old.type.shape[d] == 1 or new_size != 1:
            continue
        source = next((s for s in sources if _carries(s, d - (old.ndim - s.ndim))), None)
        if source is None:
            return None
        new = second(_cheapest_carrier(source, d - (old.ndim - source.ndim)), new)
    if new.ndim != old.ndim:
        return None
    return fits(old, cast(new, old.dtype))


def _carries(var, d) -> bool:
    """Whether ``var`` has a dimension ``d`` that need not be 1."""
    return 0 <= d < var.ndim and var.type.shape[d] != 1


def _cheapest_carrier(var, d):
    """An input that ``var``'s elementwise computation takes dimension ``d`` from (so that
    restoring a shape does not keep a dropped computation alive), or ``var``."""
    while var.owner is not None and op_is(var.owner, Elemwise):
        inner = next((i for i in var.owner.inputs if _carries(i, d)), None)
        if inner is None:
            break
        var = inner
    return var


def dropped_variables(new, sources) -> list:
    """The ``sources`` (non-constant) that computing ``new`` does not read: what a rewrite left
    out. Looks at ``new``'s graph only down to the sources."""
    source_ids = {id(s) for s in sources}
    reached, seen, todo = set(), set(), [new]
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in source_ids:
            reached.add(id(v))
        elif v.owner is not None:
            todo.extend(v.owner.inputs)
    dropped, done = [], set()
    for s in sources:
        if id(s) not in reached and id(s) not in done and not isinstance(s, Constant):
            done.add(id(s))
            dropped.append(s)
    return dropped
