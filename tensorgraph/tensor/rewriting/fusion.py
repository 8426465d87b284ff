"""Elemwise fusion: a chain of elementwise ops becomes one ``Elemwise(Composite)`` node.

Walking outputs-first, an Elemwise node absorbs each input computed by another (non-inplace,
single-output) Elemwise that nobody else reads; the new node is visited next and absorbs
further, so a whole chain collapses into one node with one scalar graph. Scalar constants are
inlined into the scalar graph. Broadcasting needs no special care: the composite's numpy
evaluation broadcasts exactly as the separate nodes did. ``config.tensor__local_elemwise_fusion``
turns it off; so does excluding the 'fusion' tag.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.db import WalkerDB
from tensorgraph.rewriting.optdb import optdb
from tensorgraph.scalar.basic import ScalarType
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.rewriting.utils import fits, single_client


def _fusable(fgraph, var) -> bool:
    node = var.owner
    return (node is not None and isinstance(node.op, Elemwise) and not node.op.inplace_pattern
            and len(node.outputs) == 1 and single_client(fgraph, var)
            and var not in fgraph.outputs)


def inlinable_constant(var):
    """A scalar constant standing for ``var`` inside a Composite, or ``None``."""
    if not isinstance(var, Constant):
        return None
    data = np.asarray(var.data)
    if data.size != 1:
        return None
    return Constant(ScalarType(data.dtype.name), data.reshape(()))


def scalar_graph(node, args):
    """The scalar output of single-output Elemwise ``node``'s scalar op applied to the scalar
    variables ``args`` (a Composite's inner graph is rebuilt on them)."""
    op = node.op.scalar_op
    if isinstance(op, Composite):
        memo = dict(zip(op.inputs, args))
        for inner in op.nodes:
            new = inner.op.make_node(*[memo.get(v, v) for v in inner.inputs])
            memo.update(zip(inner.outputs, new.outputs))
        return memo.get(op.outputs[0], op.outputs[0])
    return op.make_node(*args).outputs[0]


@node_rewriter([Elemwise])
def local_elemwise_fusion(fgraph, node):
    """Fuse ``node`` with the elementwise nodes computing its inputs (see module docstring)."""
    from tensorgraph.configdefaults import config

    if not config.tensor__local_elemwise_fusion or node.op.inplace_pattern:
        return None
    if len(node.outputs) != 1 or not any(_fusable(fgraph, i) for i in node.inputs):
        return None
    out = node.outputs[0]
    tensor_inputs, scalar_of = [], {}

    def scalar_input(var):
        if var not in scalar_of:
            const = inlinable_constant(var)
            if const is not None and var.ndim <= out.ndim:
                scalar_of[var] = const
            else:
                scalar_of[var] = ScalarType(var.dtype)()
                tensor_inputs.append(var)
        return scalar_of[var]

    def expand(var, top=False):
        if not top and not _fusable(fgraph, var):
            return scalar_input(var)
        n = var.owner
        return scalar_graph(n, [expand(i) for i in n.inputs])

    scalar_out = expand(out, top=True)
    if not tensor_inputs:
        return None
    composite = Composite([scalar_of[v] for v in tensor_inputs], [scalar_out])
    new = Elemwise(composite)(*tensor_inputs)
    return [fits(out, new)]


fusion_db = WalkerDB(order="out_to_in")
optdb.register("elemwise_fusion", fusion_db, position=5)
fusion_db.register("local_elemwise_fusion", local_elemwise_fusion, "fast_run", "fusion")
