"""PyTorch for the shape ops: ``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``,
``MakeVector``, ``Join``, ``Split``, ``Alloc``, ``ARange``, ``Eye``, ``Tri`` and slice lengths.

The graph is traced for given input shapes, so sizes must be known then. They are when they
come from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.pytorch``); a size computed from the *values* of the inputs is refused
with ``StaticShapeError`` when the function is first called with those shapes. The checks are
``tensorgraph.link.traced_shape``'s, shared with JAX.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import traced_shape
from tensorgraph.link.pytorch import as_tensor, register, runtime_check, traced
from tensorgraph.link.pytorch.linker import static_ints
from tensorgraph.link.traced_shape import reshaped_size, shape_of
from tensorgraph.tensor.creation import Alloc, check_alloc
from tensorgraph.tensor.join import Join, MakeVector, Split
from tensorgraph.tensor.shape import Reshape, SpecifyShape

traced_shape.register_known_size_ops(register, static_ints, traced)


@register(SpecifyShape)
def torch_specify_shape(op, node):
    return traced_shape.specify_shape(op, traced, as_tensor, runtime_check)


@register(Reshape)
def torch_reshape(op, node):
    def reshape(x, shp):
        requested = static_ints(shp, "the shape of a reshape")
        if len(requested) != op.ndim:
            raise ValueError(f"reshape: got a shape with {len(requested)} entries, expected "
                             f"{op.ndim}")
        return as_tensor(x).reshape(reshaped_size(shape_of(x), requested))

    return reshape


@register(MakeVector)
def torch_make_vector(op, node):
    import torch

    def make_vector(*scalars):
        if not scalars:
            return np.zeros(0, dtype=op.dtype)
        return torch.stack([as_tensor(s, op.dtype).reshape(()) for s in scalars])

    return make_vector


@register(Join)
def torch_join(op, node):
    import torch

    dtype = node.outputs[0].dtype
    ndim = node.outputs[0].ndim

    def join(*tensors):
        axis = traced_shape.known_axis(op, tensors[0], ndim, static_ints, "join")
        if op.axis is None:
            tensors = tensors[1:]
        traced_shape.check_join(axis, [shape_of(t) for t in tensors])
        return torch.cat([as_tensor(t, dtype) for t in tensors], dim=axis)

    return join


@register(Split)
def torch_split(op, node):
    ndim = node.inputs[0].ndim

    def split(x, *rest):
        axis = traced_shape.known_axis(op, rest[0], ndim, static_ints, "split")
        sizes = static_ints(rest[-1], "the sizes of a split")
        traced_shape.check_split(op, shape_of(x), sizes, axis)
        x = as_tensor(x)
        pieces, start = [], 0
        for s in sizes:
            pieces.append(x.narrow(axis, start, s))
            start += s
        return tuple(pieces)

    return split


@register(Alloc)
def torch_alloc(op, node):
    value_type = node.inputs[0].type
    dtype = node.outputs[0].dtype

    def alloc(value, *sizes):
        shape = tuple(static_ints(s, "the size of an alloc")[0] for s in sizes)
        check_alloc(value_type, value, shape)
        # a new array (not a broadcast view): later ops may write its elements
        return as_tensor(value, dtype).expand(shape).clone()

    return alloc
