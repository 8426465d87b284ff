"""Elemwise fusion: a chain of elementwise ops becomes one ``Elemwise(Composite)`` node.

Walking outputs-first, an Elemwise node absorbs each input computed by another (non-inplace,
single-output) Elemwise that nobody else reads; the new node is visited next and absorbs
further, so a whole chain collapses into one node with one scalar graph. Broadcasting needs no special care: the composite's numpy
evaluation broadcasts exactly as the separate nodes did. ``config.tensor__local_elemwise_fusion``
turns it off; so does excluding the 'fusion' tag.

Scalar constants: a value that lets the C compiler simplify (0, 1, 2, -1, 1/2, booleans, and
non-finite values) is inlined into the scalar graph. Any other number (a learning rate, a
regularisation weight) stays an *input* of the fused node, a broadcast constant the kernel reads
once before its loop: the generated C then does not depend on it, so changing the number in a
notebook cell finds the kernel already compiled instead of running the C compiler again. The
loop runs at the same speed (a loop-invariant scalar in a register either way; measured on the
seed step and the elementwise chain in benchmarks/).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.db import WalkerDB
from tensorgraph.rewriting.optdb import optdb
from tensorgraph.scalar.basic import ScalarType
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.basic import constant
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.rewriting.utils import fits, op_is, single_client


def _fusable(fgraph, var) -> bool:
    node = var.owner
    return (node is not None and op_is(node, Elemwise) and not node.op.inplace_pattern
            and len(node.outputs) == 1 and single_client(fgraph, var)
            and var not in fgraph.outputs)


#: constants worth a literal in the C (see the module docstring)
SIMPLIFYING_VALUES = (0.0, 1.0, 2.0, -1.0, 0.5)


def inlinable_constant(var):
    """A scalar constant standing for ``var`` inside a Composite, or ``None`` (``var`` is not a
    one-element constant, or its value is better passed at run time)."""
    if not isinstance(var, Constant):
        return None
    data = np.asarray(var.data)
    if data.size != 1:
        return None
    value = data.reshape(())
    if data.dtype.kind not in "bc" and np.isfinite(value) and value not in SIMPLIFYING_VALUES:
        return None
    return Constant(ScalarType(data.dtype.name), value)


def runtime_constant(var, ndim: int):
    """One-element constant ``var`` as a constant of ``ndim`` size-1 dimensions: the input a
    fused node reads it from (no DimShuffle node in between)."""
    if var.ndim == ndim:
        return var
    return constant(np.asarray(var.data).reshape((1,) * ndim), dtype=var.dtype)


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

    def tensor_input(var):
        if isinstance(var, Constant) and np.size(var.data) == 1 and var.ndim < out.ndim:
            return runtime_constant(var, out.ndim)
        return var

    def expand(var, top=False):
        if not top and not _fusable(fgraph, var):
            return scalar_input(var)
        n = var.owner
        return scalar_graph(n, [expand(i) for i in n.inputs])

    scalar_out = expand(out, top=True)
    if not tensor_inputs:
        return None
    composite = Composite([scalar_of[v] for v in tensor_inputs], [scalar_out])
    new = Elemwise(composite)(*[tensor_input(v) for v in tensor_inputs])
    return [fits(out, new)]


fusion_db = WalkerDB(order="out_to_in")
optdb.register("elemwise_fusion", fusion_db, position=5)
fusion_db.register("local_elemwise_fusion", local_elemwise_fusion, "fast_run", "fusion")
