"""Rewrites of nodes that only broadcast, so that a value needed for its shape alone is not
computed.

* ``local_second_to_alloc`` (specialize): ``second(model, value)`` (``fill``) reads ``model``
  only for its shape. It becomes ``value`` where the shape feature proves ``value`` already has
  the result's shape, else ``alloc(value, *sizes)`` with the sizes the feature infers. A
  gradient's ``second(h, 1)`` then no longer keeps the forward ``h`` alive: ``grad((x +
  1).sum(), x)`` is ``alloc(1, x.shape[0], x.shape[1])``, and the forward ``add`` is gone. The
  rewrite applies only when the result does not need ``model`` computed (otherwise the fill
  costs what it did and may fuse with its neighbours). It runs in specialize, after the
  canonical add/mul chains have looked through fills (``fill(h, 1) * 2`` -> ``fill(h, 2)``).
* ``local_elemwise_alloc`` (specialize): an elementwise op reading ``alloc(v, *sizes)`` (maybe
  behind a dimshuffle adding axes) reads ``v`` where its other inputs are proven to give the
  result those sizes, so such an alloc (often made by the rewrite above) is not built.
* ``local_useless_broadcast_switch`` (canonicalize): the gradient of a set/inc value that may
  broadcast at run time is ``switch(eq(s, 1), sum(g, axis=d, keepdims=True), g)`` with ``s``
  the value's size in ``d``. Where ``g`` has size ``s`` in ``d`` (shape feature), both branches
  are equal (a sum over one element), so the switch is ``g``.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize, register_in
from tensorgraph.scalar import math as psm
from tensorgraph.tensor.creation import Alloc, alloc
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.reduction import Sum
from tensorgraph.tensor.rewriting.shape import _depends_on, shape_feature
from tensorgraph.tensor.rewriting.utils import as_dtype, fits, is_constant, op_is, same_structure, \
    scalar_op_of


def _computed(var) -> bool:
    """Whether ``var`` is computed by the graph (not an input or a constant)."""
    return var.owner is not None and not isinstance(var, Constant)


@register_in("specialize", "shape", name="local_second_to_alloc")
@node_rewriter([Elemwise])
def local_second_to_alloc(fgraph, node):
    """second(model, value) -> value, or alloc(value, *inferred sizes), without computing model
    (see the module docstring)."""
    if not isinstance(scalar_op_of(node), psm.Second):
        return None
    model, value = node.inputs
    out = node.outputs[0]
    feature = shape_feature(fgraph)
    value = as_dtype(value, out.dtype)
    sizes = feature.shape_tuple(out)
    if any(_depends_on(s, out) or _computed(model) and _depends_on(s, model) for s in sizes):
        return None
    offset = out.ndim - value.ndim
    same_pattern = offset == 0 and all(
        (v == 1) == (o == 1) for v, o in zip(value.type.shape, out.type.shape))
    if same_pattern and all(same_structure(feature.size(value, d), sizes[d])
                            or value.type.shape[d] is not None and value.type.shape[d]
                            == out.type.shape[d] for d in range(out.ndim)):
        new = fits(out, value)
    else:
        new = fits(out, alloc(value, *sizes))
    return None if new is None else [new]


def _without_new_axes(var):
    """``var`` with dimshuffles that only add broadcast axes peeled off."""
    while var.owner is not None and op_is(var.owner, DimShuffle):
        kept = [d for d in var.owner.op.new_order if d != "x"]
        if kept != list(range(var.owner.inputs[0].ndim)):
            break
        var = var.owner.inputs[0]
    return var


def _summed_axis(var, g):
    """``d`` when ``var`` is ``sum(g, axis=d, keepdims=True)``, else ``None``."""
    node = var.owner
    if node is None or not op_is(node, DimShuffle):
        return None
    inner = node.inputs[0].owner
    if inner is None or not op_is(inner, Sum) or inner.inputs[0] is not g:
        return None
    axes = inner.op.axis
    if axes is None or len(axes) != 1:
        return None
    (d,) = axes
    expected = [i for i in range(g.ndim - 1)]
    expected.insert(d, "x")
    return d if list(node.op.new_order) == expected else None


def _size_tested(cond):
    """``s`` when ``cond`` is ``eq(s, 1)`` (possibly with broadcast axes added), else ``None``."""
    cond = _without_new_axes(cond)
    if not isinstance(scalar_op_of(cond), psm.EQ):
        return None
    a, b = cond.owner.inputs
    if is_constant(b, 1) and a.ndim == 0:
        return a
    if is_constant(a, 1) and b.ndim == 0:
        return b
    return None


@register_canonicalize("shape", "useless")
@node_rewriter([Elemwise])
def local_useless_broadcast_switch(fgraph, node):
    """switch(eq(s, 1), sum(g, axis=d, keepdims=True), g) -> g where g's size in d is s."""
    if not isinstance(scalar_op_of(node), psm.Switch):
        return None
    cond, summed, g = node.inputs
    out = node.outputs[0]
    d = _summed_axis(summed, g)
    size = _size_tested(cond)
    if d is None or size is None or g.ndim != out.ndim:
        return None
    inferred = shape_feature(fgraph).size(g, d)
    if not same_structure(inferred, size):
        return None
    new = fits(out, as_dtype(g, out.dtype))
    return None if new is None else [new]


def _allocated(var):
    """``(value, shuffle)`` when ``var`` is ``alloc(value, ...)``, possibly behind a dimshuffle
    that only adds broadcast axes (``shuffle``, else ``None``); else ``None``."""
    shuffle = None
    if var.owner is not None and op_is(var.owner, DimShuffle):
        kept = [d for d in var.owner.op.new_order if d != "x"]
        if kept != list(range(var.owner.inputs[0].ndim)):
            return None
        shuffle, var = var.owner.op, var.owner.inputs[0]
    if var.owner is None or not op_is(var.owner, Alloc):
        return None
    value = var.owner.inputs[0]
    if value.ndim < var.ndim:
        value = value.dimshuffle(["x"] * (var.ndim - value.ndim) + list(range(value.ndim)))
    return value, shuffle


@register_in("specialize", "shape", name="local_elemwise_alloc")
@node_rewriter([Elemwise])
def local_elemwise_alloc(fgraph, node):
    """Elemwise(..., alloc(v, *sizes), ...) -> Elemwise(..., v, ...) where the other inputs are
    proven to give the result those sizes (an alloc ``local_second_to_alloc`` made for a fill
    that feeds an elementwise op broadcasts nothing the op would not)."""
    if len(node.inputs) < 2 or scalar_op_of(node) is None:
        return None
    feature = shape_feature(fgraph)
    inputs = list(node.inputs)
    changed = False
    for i, old in enumerate(node.inputs):
        found = _allocated(old)
        if found is None:
            continue
        value, shuffle = found
        new = shuffle(value) if shuffle is not None else value
        if new.dtype != old.dtype or new.ndim != old.ndim:
            continue
        others = [x for j, x in enumerate(inputs) if j != i]
        if all(_same_size(feature, new, old, others, d) for d in range(old.ndim)):
            inputs[i] = new
            changed = True
    if not changed:
        return None
    outs = node.op.make_node(*inputs).outputs
    fitted = [fits(o, n) for o, n in zip(node.outputs, outs)]
    return None if any(f is None for f in fitted) else fitted


def _same_size(feature, new, old, others, d) -> bool:
    """Whether the result keeps ``old``'s size in ``d`` with ``new`` in its place: ``new``
    has that size, or broadcasts there and another input is proven to have it."""
    size = feature.size(old, d)
    if old.type.shape[d] == 1:
        return True
    if new.type.shape[d] != 1:
        return same_structure(feature.size(new, d), size)
    return any(x.type.shape[d] != 1 and same_structure(feature.size(x, d), size)
               for x in others)
