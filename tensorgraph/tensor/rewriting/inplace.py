"""Inplace rewrites: an Elemwise writes its result into an input buffer nobody else needs.

Run last (one walk), with a ``DestroyHandler`` attached that checks every replacement: an
input may be overwritten only when it is not a graph input, output, constant or view and the
node is its only reader (see ``tensorgraph.rewriting.destroyhandler``).
"""

from __future__ import annotations

from tensorgraph.rewriting.basic import NodeRewriter
from tensorgraph.rewriting.destroyhandler import DestroyHandler, can_destroy
from tensorgraph.rewriting.optdb import register_inplace
from tensorgraph.tensor.elemwise import Elemwise


class ElemwiseInplace(NodeRewriter):
    """Elemwise -> the same Elemwise overwriting the first input it safely can."""

    name = "elemwise_inplace"

    def tracks(self):
        return [Elemwise]

    def add_requirements(self, fgraph):
        DestroyHandler.attach_to(fgraph)

    def transform(self, fgraph, node):
        op = node.op
        if op.inplace_pattern or len(node.outputs) != 1:
            return None
        out = node.outputs[0]
        for i, inp in enumerate(node.inputs):
            if inp.type != out.type:
                continue
            if can_destroy(fgraph, node, i) is None:
                return [Elemwise(op.scalar_op, {0: i})(*node.inputs)]
        return None


register_inplace(ElemwiseInplace())
