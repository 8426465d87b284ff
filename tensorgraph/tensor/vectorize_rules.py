"""The ``vectorize_graph`` rules of the shape, creation, joining, diagonal and indexing ops.

``vectorize_graph`` rebuilds each node on inputs that gained leading (batch) dimensions.
The generic rule wraps the op in a ``Blockwise``, whose ``perform`` loops over the batch in
Python; the rules here instead give each op's own batched form, computed by the op (in C)
on the whole batch at once:

- ``Shape``: the core part of the batched shape, repeated for every batch item;
- ``SpecifyShape``: the same sizes on the core dimensions, none asserted on the batch ones;
- ``Reshape``: the batch dimensions in front of the requested shape (a shape vector longer
  by the number of batch dimensions is taken as the full batched shape);
- ``Alloc``: the value's batch dimensions in front of the requested shape;
- ``MakeVector``: the scalars, broadcast to one batch shape, stacked along a new last axis;
- ``Join``: the same join on the axis shifted past the batch dimensions, when every input
  has the same batch dimensions (otherwise, or when the axis is a run-time input, the
  Blockwise, which broadcasts them);
- ``ExtractDiag``: the same diagonal of the shifted axes;
- ``Subtensor``, ``AdvancedSubtensor1``, ``AdvancedSubtensor``: the same index after a full
  slice per batch dimension, when only ``x`` is batched (and, for advanced indexing, the
  index arrays are adjacent, so that numpy puts their dimensions in the same place);
- ``Einsum`` (``tt.einsum``): the same einsum with ``...`` in front of every operand's and the
  output's subscripts, the batch dimensions being the ellipsis (when the subscripts have
  none of their own), so the path is searched again and each pair stays one batched
  ``matmul``;
- ``OpFromGraph`` with ``inline=True`` (an ``Einsum`` whose subscripts have ``...``): its
  inner graph, inlined on the node's inputs and vectorized op by op (a graph the compiler
  would inline anyway); one without ``inline`` stays one node, in a Blockwise.

A batched size, shape vector or index (one that gained dimensions) needs a different
computation per batch item: those fall back to the Blockwise, except ``SpecifyShape``, whose
sizes describe one static type and cannot vary over a batch (a NotImplementedError).
"""

from __future__ import annotations

from tensorgraph.graph.op_from_graph import OpFromGraph
from tensorgraph.graph.replace import register_vectorize, vectorize_graph
from tensorgraph.tensor.blockwise import _batch_dims, _vectorize_with_blockwise
from tensorgraph.tensor.creation import Alloc, alloc
from tensorgraph.tensor.diagonal import ExtractDiag
from tensorgraph.tensor.einsum import Einsum, _parse, einsum
from tensorgraph.tensor.extra_ops import broadcast_arrays, broadcast_to
from tensorgraph.tensor.join import Join, MakeVector, stack
from tensorgraph.tensor.math import cast
from tensorgraph.tensor.shape import (
    Reshape,
    Shape,
    SpecifyShape,
    get_vector_length,
    reshape,
    shape,
    shape_i,
    specify_shape,
)
from tensorgraph.tensor.subtensor import (
    AdvancedSubtensor,
    AdvancedSubtensor1,
    Subtensor,
)

_FULL_SLICE = ("slice", None, None, None)


def _unbatched(op, node, inputs):
    """The node rebuilt by ``op`` itself when no input gained a dimension, else None."""
    if any(_batch_dims(node, inputs)):
        return None
    return op.make_node(*inputs)


@register_vectorize(Shape)
def _vectorize_shape(op, node, x):
    """Every batch item has the core shape: the core part of the batched shape, broadcast
    to ``batch_shape + (core ndim,)``."""
    (b,) = _batch_dims(node, [x])
    if b == 0:
        return op.make_node(x)
    full = shape(x)
    return broadcast_to(full[b:], (*full[:b], node.inputs[0].type.ndim)).owner


@register_vectorize(SpecifyShape)
def _vectorize_specify_shape(op, node, x, *sizes):
    x_b, *size_b = _batch_dims(node, [x, *sizes])
    if any(size_b):
        raise NotImplementedError(f"vectorize_graph: the sizes of {op} cannot be batched: a "
                                  "static type asserts one size per dimension for the whole "
                                  "batch")
    core_ndim = node.inputs[0].type.ndim
    entries = [None] * (x_b + core_ndim)
    for d, size in zip(op.checked, sizes):
        entries[x_b + d] = size
    out = specify_shape(x, entries)
    return [out]


@register_vectorize(Reshape)
def _vectorize_reshape(op, node, x, shp):
    """A batched ``x`` keeps its batch dimensions in front of the requested shape; a shape
    vector longer by exactly that many entries is the whole new shape."""
    bx, bs = _batch_dims(node, [x, shp])
    if bs:      # a shape per batch item
        return _vectorize_with_blockwise(op, node, x, shp)
    old_length = op.ndim
    try:
        length = get_vector_length(shp)
    except ValueError:
        length = old_length     # a shape vector of unknown length: the core one
    if length == old_length:
        if bx == 0:
            return op.make_node(x, shp)
        return reshape(x, (*shape(x)[:bx], *shp)).owner
    if length == old_length + bx:
        return Reshape(length).make_node(x, shp)
    raise ValueError(f"Invalid shape length passed into vectorize node of Reshape: {op} of "
                     f"{node.inputs[0]} ({node.inputs[0].type}) took a shape of {old_length} "
                     f"entries; the batched {x} ({x.type}, {bx} batch dimensions) got one of "
                     f"{length}, expected {old_length} or {old_length + bx}")


@register_vectorize(Alloc)
def _vectorize_alloc(op, node, value, *sizes):
    """The value's batch dimensions go in front of the requested shape; the value's core
    dimensions stay aligned to the right of it (size-1 axes inserted between)."""
    value_b, *size_b = _batch_dims(node, [value, *sizes])
    if any(size_b):
        return _vectorize_with_blockwise(op, node, value, *sizes)
    if value_b == 0:
        return op.make_node(value, *sizes)
    core_ndim = node.inputs[0].type.ndim
    pad = len(sizes) - core_ndim
    if pad:
        value = value.dimshuffle(*range(value_b), *["x"] * pad,
                                 *range(value_b, value_b + core_ndim))
    batch = [shape_i(value, d) for d in range(value_b)]
    return alloc(value, *batch, *sizes).owner


@register_vectorize(MakeVector)
def _vectorize_make_vector(op, node, *scalars):
    """The batched scalars broadcast to one batch shape (when their static shapes differ),
    cast to the vector's dtype and stacked along a new last axis."""
    done = _unbatched(op, node, scalars)
    if done is not None:
        return done
    if len({s.type.shape for s in scalars}) > 1:
        scalars = broadcast_arrays(*scalars)
    scalars = [s if s.dtype == op.dtype else cast(s, op.dtype) for s in scalars]
    return [stack(scalars, axis=-1)]


@register_vectorize(Join)
def _vectorize_join(op, node, *tensors):
    """The same join on the shifted axis when every input has the same batch dimensions
    (the same number, and size 1 in the same ones); else the Blockwise broadcasts them."""
    if op.axis is None:     # an axis known only at run time (an input): item by item
        return _vectorize_with_blockwise(op, node, *tensors)
    batch = _batch_dims(node, tensors)
    if len(set(batch)) == 1:
        b = batch[0]
        patterns = {tuple(s == 1 for s in t.type.shape[:b]) for t in tensors}
        if len(patterns) == 1:
            return Join(op.axis + b).make_node(*tensors)
    return _vectorize_with_blockwise(op, node, *tensors)


@register_vectorize(ExtractDiag)
def _vectorize_extract_diag(op, node, x):
    """The same diagonal, of the axes shifted past the batch dimensions."""
    (b,) = _batch_dims(node, [x])
    a1, a2 = op.axes(node.inputs[0].type.ndim)
    return ExtractDiag(op.offset, a1 + b, a2 + b).make_node(x)


def _advanced_adjacent(idx_list) -> bool:
    """Whether the advanced entries (arrays and, mixed with them, ints) are next to each
    other: then numpy puts the indexed dimensions where they are, after any batch slices."""
    where = [k for k, e in enumerate(idx_list) if e in ("int", "array")]
    return where == list(range(where[0], where[-1] + 1)) if where else True


@register_vectorize(Subtensor)
@register_vectorize(AdvancedSubtensor)
def _vectorize_indexing(op, node, x, *index):
    """A batched ``x`` indexed by unbatched indices: the same index after a full slice per
    batch dimension."""
    x_b, *index_b = _batch_dims(node, [x, *index])
    if any(index_b) or (x_b and isinstance(op, AdvancedSubtensor)
                        and not _advanced_adjacent(op.idx_list)):
        return _vectorize_with_blockwise(op, node, x, *index)
    if x_b == 0:
        return op.make_node(x, *index)
    return type(op)((_FULL_SLICE,) * x_b + tuple(op.idx_list)).make_node(x, *index)


@register_vectorize(AdvancedSubtensor1)
def _vectorize_advanced_subtensor1(op, node, x, ilist):
    """``x[ilist]`` on a batched ``x``: ``x[:, ..., ilist]`` past the batch dimensions."""
    x_b, i_b = _batch_dims(node, [x, ilist])
    if i_b:
        return _vectorize_with_blockwise(op, node, x, ilist)
    if x_b == 0:
        return op.make_node(x, ilist)
    return AdvancedSubtensor((_FULL_SLICE,) * x_b + ("array",)).make_node(x, ilist)


@register_vectorize(OpFromGraph)
def _vectorize_op_from_graph(op, node, *inputs):
    if not any(_batch_dims(node, inputs)):
        return op.make_node(*inputs)
    if not op.inline:
        return _vectorize_with_blockwise(op, node, *inputs)
    outputs = op._inlined(node.inputs, op.fgraph.outputs)
    return vectorize_graph(outputs, dict(zip(node.inputs, inputs)))


@register_vectorize(Einsum)
def _vectorize_einsum(op, node, *inputs):
    if "..." in op.subscripts or not any(_batch_dims(node, inputs)):
        return _vectorize_op_from_graph(op, node, *inputs)
    terms, output = _parse(op.subscripts, node.inputs)
    batched = (",".join("..." + "".join(labels) for labels in terms) + "->..."
               + "".join(output))
    return einsum(batched, *inputs).owner
