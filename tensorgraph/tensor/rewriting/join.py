"""Join and Split rewrites.

* ``local_join_1`` (PyTensor's name): a join of one tensor is that tensor. ``concatenate`` and
  ``join`` build no such node, but ``Join(axis)(x)`` and ``Join()(axis, x)`` do.
* ``local_join_split_constant_axis``: a join or split whose axis input became a constant (a
  ``givens`` value, a folded expression) uses the op with that axis fixed, the form every back
  end compiles without reading the axis at run time. An out-of-range constant is left to fail
  when the function runs, with the op's own error.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.optdb import register_canonicalize
from tensorgraph.tensor.join import Join, Split
from tensorgraph.tensor.rewriting.utils import fits, op_is


@register_canonicalize("useless")
@node_rewriter([Join])
def local_join_1(fgraph, node):
    """Join of one tensor -> that tensor (its type is the join's)."""
    tensors = node.inputs if node.op.axis is not None else node.inputs[1:]
    if len(tensors) != 1:
        return None
    new = fits(node.outputs[0], tensors[0])
    return None if new is None else [new]


@register_canonicalize("shape")
@node_rewriter([Join, Split])
def local_join_split_constant_axis(fgraph, node):
    """Join()(c, ...) / Split(n)(x, c, sizes) with a constant axis c -> the fixed-axis op."""
    if node.op.axis is not None:
        return None
    at = 0 if op_is(node, Join) else 1
    axis = node.inputs[at]
    if not isinstance(axis, Constant):
        return None
    ndim = node.inputs[0 if at else 1].type.ndim
    value = int(axis.data)
    if not -ndim <= value < ndim:
        return None
    rest = [i for k, i in enumerate(node.inputs) if k != at]
    if at == 0:
        new = Join(value % ndim).make_node(*rest)
    else:
        new = Split(node.op.n_splits, value % ndim).make_node(*rest)
    results = [fits(o, n) for o, n in zip(node.outputs, new.outputs)]
    return None if any(r is None for r in results) else results
