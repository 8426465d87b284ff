"""``Blockwise`` (a core op applied to every item of a batch) for an array library (JAX,
PyTorch), once, for any core op the back end has an implementation of.

The batch axes of the inputs broadcast (numpy's rule, which the graph's types already
checked) and are flattened into one axis, which the library's ``vmap`` maps the core op's
implementation over; the outputs get the batch axes back. So the core implementation is
written for one item, as ``perform`` is, and the library batches what it calls (LAPACK
routines run per matrix in both). Run-time checks of the core op (a singular matrix) are made
per item inside a check scope of their own, as an ``IndexLoop``'s rows are, and folded into
the program's: the first failing check fails the call. An empty batch gives what ``perform``
gives: zeros, the core sizes the types know, the others 0.
"""

from __future__ import annotations

import math

import numpy as np

from tensorgraph.link import traced_shape


def implementation(lib, lookup, trace, vmap):
    """``Blockwise``'s implementation ``fn(op, node)`` for a back end: ``lib`` its
    ``ArrayLibrary``, ``lookup(op)`` its op table's lookup, ``trace`` its ``Trace``,
    ``vmap(fn, axes)`` its library's map (``axes``: 0 or None per argument)."""
    return lambda op, node: blockwise(op, node, lib, lookup, trace, vmap)


def blockwise(op, node, lib, lookup, trace, vmap):
    """The function computing the ``Blockwise`` node (see ``implementation``), or
    NotImplementedError when the core op has no implementation in the back end."""
    core = op._core_node(node.inputs)
    impl = lookup(op.core_op)
    if impl is None:
        raise NotImplementedError(f"Blockwise: its core op {op.core_op} has no {lib.name} "
                                  "implementation")
    core_function = impl(op.core_op, core)
    nb = node.outputs[0].ndim - core.outputs[0].ndim
    dtypes = [o.dtype for o in node.outputs]
    batch_ndims = [0 if nd is None else var.ndim - nd
                   for var, nd in zip(node.inputs, op.core_ndims)]

    def item(*values):
        with trace.scope(node) as scope:
            results = core_function(*values)
        results = results if isinstance(results, tuple) else (results,)
        return tuple(lib.array(r, d) for r, d in zip(results, dtypes)) + (scope.result(),)

    def compute(*values):
        if nb == 0:
            return core_function(*values)
        shapes = [tuple(traced_shape.shape_of(v)) for v in values]
        batch = tuple(np.broadcast_shapes(*(s[:b] for s, b in zip(shapes, batch_ndims) if b)))
        size = math.prod(batch)
        flat, axes = [], []
        for value, shape, b in zip(values, shapes, batch_ndims):
            if b == 0:
                flat.append(value)
                axes.append(None)
                continue
            full = lib.xp.broadcast_to(lib.array(value), batch + shape[b:])
            flat.append(lib.xp.reshape(full, (size,) + shape[b:]))
            axes.append(0)
        if size == 0:  # perform's empty batch: core sizes from the types, unknown ones 0
            return _one_or_tuple(tuple(
                lib.array(np.zeros(batch + tuple(s or 0 for s in o.type.shape), o.dtype))
                for o in core.outputs))
        *outs, codes = vmap(item, tuple(axes))(*flat)
        trace.current().merge(lib.xp.max(codes))
        outs = tuple(lib.xp.reshape(o, batch + tuple(traced_shape.shape_of(o))[1:])
                     for o in outs)
        return _one_or_tuple(outs)

    return compute


def _one_or_tuple(values: tuple):
    return values[0] if len(values) == 1 else values
