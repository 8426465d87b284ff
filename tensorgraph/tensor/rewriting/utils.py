"""Helpers shared by the tensor rewrites: recognising elementwise ops and constant values."""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.scalar.basic import Neg
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise


def scalar_op_of(var_or_node):
    """The scalar op of an (non-inplace) Elemwise node (or of the node computing a variable)."""
    node = getattr(var_or_node, "owner", var_or_node)
    if node is None or not isinstance(node.op, Elemwise) or node.op.inplace_pattern:
        return None
    return node.op.scalar_op


def is_elemwise(var_or_node, *scalar_classes) -> bool:
    """Whether ``var_or_node`` is (computed by) an Elemwise over one of ``scalar_classes``."""
    op = scalar_op_of(var_or_node)
    return op is not None and isinstance(op, scalar_classes)


def constant_value(var):
    """The one value every element of ``var`` has, if ``var`` is a constant (possibly behind
    dimshuffles) with all elements equal; else ``None``."""
    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
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


def negate(x):
    """``-x``, without stacking negations (``-(-a)`` is ``a``)."""
    from tensorgraph.tensor.math import neg

    if is_elemwise(x, Neg):
        return x.owner.inputs[0]
    return neg(x)
