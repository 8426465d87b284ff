"""Shape rewrites: sizes computed from what is known instead of from computed arrays.

``ShapeFeature`` (attached to a graph on first use, ``fgraph.shape_feature``) infers the shape
of any variable: a static size where the type knows it, else the expression the op's
``infer_shape`` derives from its inputs' shapes, else ``Shape_i(d)(variable)``. The rewrites:

* ``shape(x)[i]`` -> ``Shape_i(x)`` (for a constant ``i``);
* ``Shape_i(x)`` / ``Shape(x)`` where the sizes are static -> constants;
* ``Shape_i(d)(x)`` / ``Shape(x)`` -> the sizes the feature infers when they do not need ``x``
  computed (``exp(a).shape[0]`` is ``a.shape[0]``; ``mean`` divides by a length of its input);
* ``specify_shape(x, ...)`` whose sizes ``x``'s type guarantees, or the feature proves -> ``x``.

Rewrites that drop a variable from an elementwise computation (``x - x + y`` -> ``y``) rely on
the dropped variable having had the result's size: ``shape_asserts`` proves it with the
feature or checks it at run time with an ``Assert`` (which the ``unsafe`` preset removes).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant, Variable
from tensorgraph.graph.fg import Feature
from tensorgraph.raise_op import Assert, assert_op
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize, register_in
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import constant
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.join import make_vector
from tensorgraph.tensor.rewriting.utils import fits, op_is, same_structure
from tensorgraph.tensor.shape import Shape, Shape_i, SpecifyShape
from tensorgraph.tensor.subtensor import Subtensor
from tensorgraph.tensor.type import TensorType

_INFER_ERRORS = (NotImplementedError, AttributeError, TypeError, IndexError, ValueError)


def _int64(value):
    return constant(np.asarray(value, dtype="int64"))


@register_canonicalize("shape")
@node_rewriter([Subtensor])
def local_shape_to_shape_i(fgraph, node):
    """shape(x)[i] -> Shape_i(x) for a constant index i."""
    source = node.inputs[0].owner
    if node.op.idx_list != ("int",) or source is None or not op_is(source, Shape):
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
    if op_is(node, Shape_i):
        size = x.type.shape[node.op.i]
        return [fits(node.outputs[0], _int64(size))] if size is not None else None
    if None in x.type.shape:
        return None
    return [fits(node.outputs[0], _int64(x.type.shape))]


@register_canonicalize("shape", "useless")
@node_rewriter([SpecifyShape])
def local_useless_specify_shape(fgraph, node):
    """specify_shape(x, sizes) where x's static shape has those sizes, or the shape feature
    proves them (and the output type adds nothing to x's)."""
    x, *sizes = node.inputs
    out = node.outputs[0]
    if not out.type.is_super(x.type):
        return None
    feature = shape_feature(fgraph)
    for d, s in zip(node.op.checked, sizes):
        inferred = feature.size(x, d)
        if not (same_structure(inferred, s) or (
                isinstance(s, Constant) and x.type.shape[d] == int(s.data))):
            return None
    return [x]


# ----------------------------------------------------------------------------------------------
# The shape feature


class ShapeFeature(Feature):
    """Inferred shapes of a graph's tensor variables (see the module docstring).

    Shapes are inferred on demand and cached (``shape_of``): one entry per dimension, an int64
    0-d variable (a constant when static). An inferred expression stays valid when the graph
    changes: a replacement computes the same values, so expressions naming a replaced variable
    still compute the right size (they just read it from the replaced computation).
    """

    def __init__(self):
        self.shape_of: dict = _InferOnLookup(self)
        self.fgraph = None

    def on_attach(self, fgraph):
        if getattr(fgraph, "shape_feature", None) is not None:
            raise ValueError("the graph already has a ShapeFeature")
        fgraph.shape_feature = self
        self.fgraph = fgraph

    def on_detach(self, fgraph):
        if getattr(fgraph, "shape_feature", None) is self:
            del fgraph.shape_feature
        self.shape_of.clear()

    def on_prune(self, fgraph, node, reason):
        for out in node.outputs:
            self.shape_of.pop(out, None)

    def shape_tuple(self, var) -> tuple | None:
        """The inferred shape of ``var`` (``None`` if it is not a tensor)."""
        if not isinstance(var.type, TensorType):
            return None
        got = self.shape_of.get(var)
        if got is not None:
            return got
        # infer the owners' inputs first, iteratively (graphs may be deep)
        todo, order, seen = [var], [], set()
        while todo:
            v = todo.pop()
            if v in self.shape_of or v.owner is None or v in seen:
                continue
            seen.add(v)
            order.append(v)
            todo.extend(i for i in v.owner.inputs if isinstance(i.type, TensorType))
        for v in reversed(order):
            if v not in self.shape_of:
                self._infer_node(v.owner)
        if var not in self.shape_of:
            self.shape_of[var] = self._fallback(var)
        return self.shape_of[var]

    def size(self, var, d: int):
        """The inferred size of dimension ``d`` of ``var``."""
        return self.shape_tuple(var)[d]

    def _infer_node(self, node):
        inputs = [self.shape_tuple(i) if isinstance(i.type, TensorType) else None
                  for i in node.inputs]
        try:
            shapes = node.op.infer_shape(self.fgraph, node, inputs)
        except _INFER_ERRORS:
            shapes = None
        for k, out in enumerate(node.outputs):
            if not isinstance(out.type, TensorType):
                continue
            shape = shapes[k] if shapes is not None and len(shapes) > k else None
            self.shape_of[out] = self._normalized(out, shape)

    def _normalized(self, var, shape) -> tuple:
        if shape is None or len(shape) != var.ndim:
            return self._fallback(var)
        entries = []
        for d, (static, entry) in enumerate(zip(var.type.shape, shape)):
            if static is not None:
                entries.append(_int64(static))
            elif isinstance(entry, (int, np.integer)):
                entries.append(_int64(int(entry)))
            elif isinstance(entry, Variable) and entry.ndim == 0 and entry.dtype.startswith(
                    ("int", "uint")):
                entries.append(entry if entry.dtype == "int64" else tm.cast(entry, "int64"))
            else:
                entries.append(Shape_i(d)(var))
        return tuple(entries)

    @staticmethod
    def _fallback(var) -> tuple:
        return tuple(_int64(s) if s is not None else Shape_i(d)(var)
                     for d, s in enumerate(var.type.shape))


class _InferOnLookup(dict):
    """``shape_of``: a cache that infers a missing tensor's shape when indexed
    (``feature.shape_of[var]``, as PyTensor's eagerly filled ``shape_of`` is read), while
    ``get`` and ``in`` still only look at what is cached."""

    def __init__(self, feature):
        super().__init__()
        self._feature = feature

    def __missing__(self, var):
        if not isinstance(getattr(var, "type", None), TensorType):
            raise KeyError(var)
        return self._feature.shape_tuple(var)

    def __reduce__(self):
        return (dict, (dict(self),))


def shape_feature(fgraph) -> ShapeFeature:
    """The graph's ``ShapeFeature``, attached on first use."""
    feature = getattr(fgraph, "shape_feature", None)
    if feature is None:
        feature = ShapeFeature()
        fgraph.attach_feature(feature)
    return feature


def _depends_on(var, target) -> bool:
    """Whether computing ``var`` needs ``target``."""
    seen, todo = set(), [var]
    while todo:
        v = todo.pop()
        if v is target:
            return True
        if v in seen or v.owner is None:
            continue
        seen.add(v)
        todo.extend(v.owner.inputs)
    return False


def _known_without(fgraph, x, d):
    """The inferred size of dimension ``d`` of ``x`` when it does not need ``x``, else None."""
    entry = shape_feature(fgraph).size(x, d)
    if _depends_on(entry, x):
        return None
    return entry


@register_canonicalize("shape", "slow_compile")
@node_rewriter([Shape_i])
def local_shape_i_inferred(fgraph, node):
    """Shape_i(d)(x) -> the size the shape feature infers without computing x."""
    entry = _known_without(fgraph, node.inputs[0], node.op.i)
    if entry is None or same_structure(entry, node.outputs[0]):
        return None
    return [fits(node.outputs[0], entry)]


@register_canonicalize("shape", "slow_compile")
@node_rewriter([Shape])
def local_shape_inferred(fgraph, node):
    """Shape(x) -> the vector of inferred sizes, when none of them needs x computed."""
    x = node.inputs[0]
    if x.ndim == 0:
        return None
    entries = [_known_without(fgraph, x, d) for d in range(x.ndim)]
    if any(e is None for e in entries):
        return None
    return [fits(node.outputs[0], make_vector(*entries, dtype="int64"))]


def _sizes_like_result(fgraph, new, d) -> list:
    """Inferred sizes that dimension ``d`` of ``new`` is known to have: those of ``new`` and of
    every variable an elementwise computation of ``new`` (made by the rewrite) reads without
    broadcasting it in that dimension, since elementwise ops require equal sizes."""
    feature = shape_feature(fgraph)
    sizes, seen, todo = [], set(), [(new, d)]
    while todo:
        v, dim = todo.pop()
        if (v, dim) in seen:
            continue
        seen.add((v, dim))
        sizes.append(feature.size(v, dim))
        node = v.owner
        if node is None or v in fgraph.variables or not op_is(node, Elemwise):
            continue
        todo.extend((i, dim) for i in node.inputs if i.type.shape[dim] != 1)
    return sizes


def shape_asserts(fgraph, new, dropped, reason: str):
    """``new``, checked at run time to have the size of each of the ``dropped`` variables in
    every dimension they do not broadcast, where that is not proven (see module docstring)."""
    feature = shape_feature(fgraph)
    conditions, described, known = [], [], {}
    for var in dropped:
        if not isinstance(var.type, TensorType):
            continue
        offset = new.ndim - var.ndim
        for d in range(max(0, -offset), var.ndim):
            static = var.type.shape[d]
            if static == 1 or static is not None and static == new.type.shape[d + offset]:
                continue
            if d + offset not in known:
                known[d + offset] = _sizes_like_result(fgraph, new, d + offset)
            size = feature.size(var, d)
            if any(same_structure(size, s) for s in known[d + offset]):
                continue
            conditions.append(tm.eq(Shape_i(d)(var), Shape_i(d + offset)(new)))
            described.append(f"dimension {d} of {var}")
    if not conditions:
        return new
    return assert_op(new, *conditions, msg=(
        f"shapes differ: rewrite {reason} removed {', '.join(described)}, assuming its size "
        "equals the result's (the original graph would have failed on these inputs)"))


@register_canonicalize("shape", "useless")
@node_rewriter([Assert])
def local_useless_assert(fgraph, node):
    """Drop an Assert's conditions that are constant true (and the Assert when none is left)."""
    x, *conditions = node.inputs
    kept = [c for c in conditions if not (isinstance(c, Constant) and bool(np.asarray(c.data)))]
    if len(kept) == len(conditions):
        return None
    return [fits(node.outputs[0], assert_op(x, *kept, msg=node.op.msg, error=node.op.error))]


@register_in("specialize", "unsafe", "shape", "shape_unsafe", default_tags=False)
@node_rewriter([Assert])
def local_remove_all_assert(fgraph, node):
    """Assert(x, ...) -> x: trust that the inputs are valid (the 'unsafe' preset)."""
    return [fits(node.outputs[0], node.inputs[0])]
