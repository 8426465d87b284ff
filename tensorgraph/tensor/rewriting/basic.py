"""Canonicalize-phase basics: constant folding and removal of useless operations.

Useless ops: ``x * 1``, ``x + 0``, ``x - 0``, ``x / 1``, ``neg(neg(x))``, identity
dimshuffles, ``cast`` to the dtype ``x`` already has, ``reshape`` to ``x``'s own static shape,
dimshuffles of dimshuffles (composed into one), and scalar/0-d tensor round trips
(``tensor_from_scalar(scalar_from_tensor(t))``). Each keeps the output's exact type or is
skipped (a ``x * ones`` that broadcasts ``x`` is not useless).

Also here: ``inline_op_from_graph``, which replaces a node of an ``OpFromGraph(inline=True)``
(``tt.einsum``'s ``Einsum``) by a copy of its inner graph.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.graph.op_from_graph import OpFromGraph
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize, register_specialize
from tensorgraph.scalar import basic as ps
from tensorgraph.tensor.basic import constant
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.rewriting.utils import fits, is_constant, is_elemwise, op_is, scalar_op_of
from tensorgraph.tensor.scalar_convert import ScalarFromTensor, TensorFromScalar
from tensorgraph.tensor.shape import Reshape
from tensorgraph.tensor.type import TensorType


@register_canonicalize("constant_folding")
@node_rewriter(None)
def constant_folding(fgraph, node):
    """A node whose inputs are all constants becomes its value (computed with ``perform``),
    unless the op says not to (``do_constant_folding``, e.g. a huge ``alloc``). It runs again
    in specialize, which builds constant subgraphs of its own (``alloc(1, 59)`` for a fill)."""
    if not node.inputs or not all(isinstance(i, Constant) for i in node.inputs):
        return None
    if node.op.destroy_map or not node.op.do_constant_folding(fgraph, node):
        return None
    if not all(isinstance(o.type, (TensorType, ps.ScalarType)) for o in node.outputs):
        return None
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, [i.data for i in node.inputs], storage)
    results = []
    for out, (value,) in zip(node.outputs, storage):
        value = np.asarray(value, dtype=out.type.dtype)
        if value.ndim != out.type.ndim:
            return None
        if isinstance(out.type, ps.ScalarType):   # a scalar graph's node (xs * 2 + 1)
            results.append(out.type.make_constant(value[()]))
        else:
            results.append(constant(value))
    return results


# the same folding once more in specialize, whose rewrites build constant subgraphs of their
# own (local_second_to_alloc's alloc(1, 59) for a gradient's fill); tagged so that excluding
# "constant_folding" leaves out both
register_specialize(node_rewriter(None, "specialize_constant_folding")(constant_folding.fn),
                    "constant_folding",
                    name="specialize_constant_folding")


@register_canonicalize("useless")
@node_rewriter([TensorFromScalar])
def local_tensor_scalar_tensor(fgraph, node):
    """tensor_from_scalar(scalar_from_tensor(t)) -> t (PyTensor's name)."""
    (s,) = node.inputs
    if s.owner is not None and op_is(s.owner, ScalarFromTensor):
        return [s.owner.inputs[0]]
    return None


@register_canonicalize("useless")
@node_rewriter([ScalarFromTensor])
def local_scalar_tensor_scalar(fgraph, node):
    """scalar_from_tensor(tensor_from_scalar(s)) -> s (PyTensor's name)."""
    (t,) = node.inputs
    if t.owner is not None and op_is(t.owner, TensorFromScalar):
        return [t.owner.inputs[0]]
    return None


@register_canonicalize("useless")
@node_rewriter([Elemwise])
def local_useless_elemwise(fgraph, node):
    """x * 1, 1 * x, x + 0, x - 0, x / 1, neg(neg(x)), identity(x), cast to x's own dtype."""
    op = scalar_op_of(node)
    if op is None:
        return None
    out = node.outputs[0]
    inputs = node.inputs
    keep = None
    if isinstance(op, (ps.Mul, ps.Add)):
        neutral = 1 if isinstance(op, ps.Mul) else 0
        rest = [i for i in inputs if not is_constant(i, neutral)]
        if len(rest) == len(inputs):
            return None
        if len(rest) == 1:
            keep = rest[0]
        elif rest:
            keep = node.op(*rest)
        else:
            return None
    elif isinstance(op, ps.Sub) and is_constant(inputs[1], 0):
        keep = inputs[0]
    elif isinstance(op, ps.TrueDiv) and is_constant(inputs[1], 1):
        keep = inputs[0]
    elif isinstance(op, ps.Neg) and is_elemwise(inputs[0], ps.Neg):
        keep = inputs[0].owner.inputs[0]
    elif isinstance(op, ps.Identity) or (isinstance(op, ps.Cast)
                                         and inputs[0].type.dtype == op.dtype):
        keep = inputs[0]
    keep = fits(out, keep) if keep is not None else None
    return [keep] if keep is not None else None


@register_canonicalize("useless", "local_dimshuffle_lift")
@node_rewriter([DimShuffle])
def local_dimshuffle(fgraph, node):
    """Drop identity dimshuffles and compose a dimshuffle of a dimshuffle into one.

    PyTensor calls it ``local_dimshuffle_lift``: that name is the same object and a tag of
    it, so ``mode.excluding("local_dimshuffle_lift")`` works too. PyTensor's version also
    moves a dimshuffle below an elementwise op; this one does not (fusion reads dimshuffled
    inputs without a node in between)."""
    op = node.op
    (x,) = node.inputs
    if op.new_order == tuple(range(op.input_ndim)):
        return [fits(node.outputs[0], x)]
    inner = x.owner
    if inner is not None and op_is(inner, DimShuffle):
        inner_order = inner.op.new_order
        composed = tuple("x" if d == "x" else inner_order[d] for d in op.new_order)
        source = inner.inputs[0]
        if composed == tuple(range(source.ndim)):
            return [fits(node.outputs[0], source)]
        dropped = [d for d in range(source.ndim) if d not in composed]
        if any(source.type.shape[d] != 1 for d in dropped):
            return None
        return [fits(node.outputs[0], DimShuffle(source.ndim, composed)(source))]
    return None


#: PyTensor's name of ``local_dimshuffle``
local_dimshuffle_lift = local_dimshuffle


@register_canonicalize("useless")
@node_rewriter([Reshape])
def local_useless_reshape(fgraph, node):
    """reshape(x, shape) where x already has that (fully static) shape."""
    x = node.inputs[0]
    out = node.outputs[0]
    if x.type.ndim == out.type.ndim and None not in x.type.shape and x.type.shape == out.type.shape:
        return [fits(out, x)]
    return None


@register_canonicalize
@node_rewriter([OpFromGraph])
def inline_op_from_graph(fgraph, node):
    """OpFromGraph(inline=True) (``Einsum`` among them): the node becomes a copy of its inner
    graph, rewritten with the rest, so no mode's linker sees the op."""
    if not node.op.inline:
        return None
    return node.op._inlined(node.inputs, node.op.fgraph.outputs)
