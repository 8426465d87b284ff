"""Inplace rewrites: an Elemwise writes its result into an input buffer nobody else needs, an
IncSubtensor increments (or sets) the part of its first input in place instead of a copy.

Run last (one walk), with a ``DestroyHandler`` attached that checks every replacement: an
input may be overwritten only when it is not a graph input, output, constant or view and the
node is its only reader (see ``tensorgraph.rewriting.destroyhandler``).
"""

from __future__ import annotations

from tensorgraph.rewriting.basic import NodeRewriter
from tensorgraph.rewriting.destroyhandler import DestroyHandler, can_destroy
from tensorgraph.rewriting.optdb import register_inplace
from tensorgraph.tensor.elemwise import Elemwise, output_dtypes
from tensorgraph.tensor.subtensor import IncSubtensor


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
        if output_dtypes(op.scalar_op, node.inputs) != (out.dtype,):
            # dtypes that depend on config.floatX, built under another value than now: the
            # node made again would not have its output's type
            return None
        for i, inp in enumerate(node.inputs):
            if inp.type != out.type:
                continue
            if can_destroy(fgraph, node, i) is None:
                return [Elemwise(op.scalar_op, {0: i})(*node.inputs)]
        return None


register_inplace(ElemwiseInplace())


class IncSubtensorInplace(NodeRewriter):
    """IncSubtensor -> the same op writing into its first input, when it safely can (a
    gradient's ``inc_subtensor(zeros(...), g, -1)`` then fills the zeros it allocated instead
    of copying them first)."""

    name = "incsubtensor_inplace"

    def tracks(self):
        return [IncSubtensor]

    def add_requirements(self, fgraph):
        DestroyHandler.attach_to(fgraph)

    def transform(self, fgraph, node):
        op = node.op
        if op.inplace or node.inputs[0].type != node.outputs[0].type:
            return None
        if can_destroy(fgraph, node, 0) is not None:
            return None
        return [IncSubtensor(op.idx_list, inplace=True,
                             set_instead_of_inc=op.set_instead_of_inc)(*node.inputs)]


register_inplace(IncSubtensorInplace())
