"""The shape ops that build arrays (``Reshape``, ``MakeVector``, ``Join``, ``Split``,
``Alloc``, ``ExtractDiag``) for an array library (JAX, PyTorch), once.

Sizes must be known while the library traces the graph (``tensorgraph.link.traced_shape``
checks them); what the ops then compute is the same in both libraries up to names, which the
``ArrayLibrary`` adapter of ``tensorgraph.link.array_elemwise`` gives. Each factory takes the
adapter and the back end's ``static_ints`` and returns ``fn(op, node)`` for the back end's
``shape`` module to register in its own table. This module imports neither library.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import traced_shape
from tensorgraph.tensor.creation import Alloc, check_alloc
from tensorgraph.tensor.diagonal import ExtractDiag
from tensorgraph.tensor.join import Join, MakeVector, Split
from tensorgraph.tensor.shape import Reshape


def reshape(lib, static_ints):
    def implement(op, node):
        def compute(x, shp):
            requested = static_ints(shp, "the shape of a reshape")
            if len(requested) != op.ndim:
                raise ValueError(f"reshape: got a shape with {len(requested)} entries, "
                                 f"expected {op.ndim}")
            size = traced_shape.reshaped_size(traced_shape.shape_of(x), requested)
            return lib.xp.reshape(lib.array(x), size)

        return compute
    return implement


def make_vector(lib, static_ints):
    def implement(op, node):
        def compute(*scalars):
            if not scalars:
                return np.zeros(0, dtype=op.dtype)
            return lib.xp.stack([lib.xp.reshape(lib.array(s, op.dtype), ()) for s in scalars])

        return compute
    return implement


def join(lib, static_ints):
    def implement(op, node):
        dtype = node.outputs[0].dtype
        ndim = node.outputs[0].ndim

        def compute(*tensors):
            axis = traced_shape.known_axis(op, tensors[0], ndim, static_ints, "join")
            if op.axis is None:
                tensors = tensors[1:]
            traced_shape.check_join(axis, [traced_shape.shape_of(t) for t in tensors])
            return lib.xp.concatenate([lib.array(t, dtype) for t in tensors], axis=axis)

        return compute
    return implement


def split(lib, static_ints):
    def implement(op, node):
        ndim = node.inputs[0].ndim

        def compute(x, *rest):
            axis = traced_shape.known_axis(op, rest[0], ndim, static_ints, "split")
            sizes = static_ints(rest[-1], "the sizes of a split")
            traced_shape.check_split(op, traced_shape.shape_of(x), sizes, axis)
            x = lib.array(x)
            pieces, start = [], 0
            for s in sizes:
                pieces.append(x[(slice(None),) * axis + (slice(start, start + s),)])
                start += s
            return tuple(pieces)

        return compute
    return implement


def alloc(lib, static_ints):
    def implement(op, node):
        def compute(value, *sizes):
            shape = tuple(static_ints(s, "the size of an alloc")[0] for s in sizes)
            check_alloc(node.inputs[0].type, value, shape)
            filled = lib.array(value, node.outputs[0].dtype)
            return lib.owned(lib.xp.broadcast_to(filled, shape))

        return compute
    return implement


def extract_diag(lib, static_ints):
    def implement(op, node):
        axis1, axis2 = op.axes(node.inputs[0].ndim)

        def compute(x):   # both libraries take numpy's positional order
            return lib.owned(lib.xp.diagonal(lib.array(x), op.offset, axis1, axis2))

        return compute
    return implement


def registrations(lib, static_ints) -> dict:
    """Op class -> implementation, for a back end's ``shape`` module to register."""
    return {Reshape: reshape(lib, static_ints), MakeVector: make_vector(lib, static_ints),
            Join: join(lib, static_ints), Split: split(lib, static_ints),
            Alloc: alloc(lib, static_ints), ExtractDiag: extract_diag(lib, static_ints)}
