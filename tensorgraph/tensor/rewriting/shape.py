"""Shape rewrites: sizes computed from what is known instead of from computed arrays.

* ``shape(x)[i]`` -> ``Shape_i(x)`` (for a constant ``i``);
* ``Shape_i(x)`` / ``Shape(x)`` where the sizes are static -> constants;
* ``Shape_i(op(...))`` -> the size the op's ``infer_shape`` gives from its inputs' sizes, so
  asking for ``f(x).shape[0]`` no longer needs ``f(x)`` computed (e.g. ``mean`` dividing by a
  length);
* ``specify_shape(x, ...)`` whose sizes ``x``'s type already guarantees -> ``x``.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.math import cast
from tensorgraph.tensor.rewriting.utils import fits
from tensorgraph.tensor.shape import Shape, Shape_i, SpecifyShape
from tensorgraph.tensor.subtensor import Subtensor


def _int64(value):
    return constant(np.asarray(value, dtype="int64"))


@register_canonicalize("shape")
@node_rewriter([Subtensor])
def local_shape_to_shape_i(fgraph, node):
    """shape(x)[i] -> Shape_i(x) for a constant index i."""
    source = node.inputs[0].owner
    if node.op.idx_list != ("int",) or source is None or not isinstance(source.op, Shape):
        return None
    index = node.inputs[1]
    if not isinstance(index, Constant):
        return None
    x = source.inputs[0]
    i = int(index.data)
    if not -x.ndim <= i < x.ndim:
        return None
    return [fits(node.outputs[0], Shape_i(i % x.ndim)(x))]


@register_canonicalize("shape")
@node_rewriter([Shape_i, Shape])
def local_static_shape(fgraph, node):
    """Sizes known from the static type become constants."""
    x = node.inputs[0]
    if isinstance(node.op, Shape_i):
        size = x.type.shape[node.op.i]
        return [fits(node.outputs[0], _int64(size))] if size is not None else None
    if None in x.type.shape:
        return None
    return [fits(node.outputs[0], _int64(x.type.shape))]


@register_canonicalize("shape")
@node_rewriter([Shape_i])
def local_shape_i_infer(fgraph, node):
    """Shape_i(op(inputs)) -> the size op.infer_shape derives from the inputs' sizes."""
    x = node.inputs[0]
    owner = x.owner
    if owner is None or not hasattr(owner.op, "infer_shape"):
        return None
    shapes = [tuple(_int64(s) if s is not None else Shape_i(d)(v)
                    for d, s in enumerate(v.type.shape)) if hasattr(v.type, "shape") else None
              for v in owner.inputs]
    try:
        inferred = owner.op.infer_shape(fgraph, owner, shapes)[x.index][node.op.i]
    except (NotImplementedError, AttributeError, TypeError, IndexError):
        return None
    if isinstance(inferred, (int, np.integer)):
        return [fits(node.outputs[0], _int64(inferred))]
    inferred = as_tensor_variable(inferred)
    if inferred.ndim != 0 or inferred.dtype[:3] not in ("int", "uin"):
        return None
    if x in _ancestors_upto(inferred, owner.inputs):
        return None
    if not isinstance(inferred, Constant) and inferred.dtype != "int64":
        inferred = cast(inferred, "int64")
    return [fits(node.outputs[0], inferred)]


def _ancestors_upto(var, stop):
    """Variables ``var`` depends on, not looking past ``stop`` (the owner's inputs)."""
    stop, seen, todo = set(stop), set(), [var]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.owner is not None and v not in stop:
            todo.extend(v.owner.inputs)
    return seen


@register_canonicalize("shape", "useless")
@node_rewriter([SpecifyShape])
def local_useless_specify_shape(fgraph, node):
    """specify_shape(x, sizes) where x's static shape already has those sizes."""
    x, *sizes = node.inputs
    for d, s in zip(node.op.checked, sizes):
        if not isinstance(s, Constant) or x.type.shape[d] != int(s.data):
            return None
    return [fits(node.outputs[0], x)]
