"""PyTorch for the shape ops: ``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``,
``MakeVector``, ``Join``, ``Split``, ``Alloc``, ``ARange``, ``Eye``, ``Tri`` and slice lengths.

The graph is traced for given input shapes, so sizes must be known then. They are when they
come from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.pytorch``); a size computed from the *values* of the inputs is refused
with ``StaticShapeError`` when the function is first called with those shapes.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.pytorch import as_tensor, register, runtime_check, traced
from tensorgraph.link.pytorch.linker import static_ints
from tensorgraph.tensor.creation import ARange, Alloc, _Matrix2D
from tensorgraph.tensor.join import Join, MakeVector, Split
from tensorgraph.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
from tensorgraph.tensor.subtensor import _SliceLength


def shape_of(x) -> tuple:
    return tuple(int(s) for s in np.shape(x))


@register(Shape)
def torch_shape(op, node):
    return lambda x: np.asarray(shape_of(x), dtype="int64")


@register(Shape_i)
def torch_shape_i(op, node):
    return lambda x: np.asarray(shape_of(x)[op.i], dtype="int64")


@register(SpecifyShape)
def torch_specify_shape(op, node):
    def specify_shape(x, *sizes):
        shape = shape_of(x)
        for d, size in zip(op.checked, sizes):
            if traced(size):
                runtime_check(size != shape[d], AssertionError,
                              f"specify_shape: dimension {d} has size {shape[d]}, which is not "
                              f"the size asked for (input shape {shape})")
            elif int(size) != shape[d]:
                raise AssertionError(f"specify_shape: dimension {d} has size {shape[d]}, "
                                     f"expected {int(size)} (input shape {shape})")
        return x

    return specify_shape


def reshaped_size(shape, requested) -> tuple:
    """numpy's answer to reshaping an array of ``shape`` to ``requested`` (one -1 allowed), or
    its error with perform's message."""
    if sum(s == -1 for s in requested) > 1 or any(s < -1 for s in requested):
        raise ValueError(f"reshape: invalid shape {requested}: sizes must be >= 0, with at most "
                         "one -1")
    size = int(np.prod(shape, dtype=np.int64))
    known = int(np.prod([s for s in requested if s != -1], dtype=np.int64))
    out = list(requested)
    if -1 in requested:
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of shape {tuple(shape)} (size "
                             f"{size}) into shape {requested}")
        out[requested.index(-1)] = size // known
    elif known != size:
        raise ValueError(f"reshape: cannot reshape an array of shape {tuple(shape)} (size "
                         f"{size}) into shape {requested}")
    return tuple(out)


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

    def join(*tensors):
        shapes = [shape_of(t) for t in tensors]
        for s in shapes[1:]:
            if len(s) != len(shapes[0]) or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0]))
                                               if d != op.axis):
                text = ", ".join(str(tuple(v)) for v in shapes)
                raise ValueError(f"join along axis {op.axis}: inputs of shapes {text} do not fit")
        return torch.cat([as_tensor(t, dtype) for t in tensors], dim=op.axis)

    return join


@register(Split)
def torch_split(op, node):
    def split(x, sizes):
        sizes = static_ints(sizes, "the sizes of a split")
        length = shape_of(x)[op.axis]
        if len(sizes) != op.n_splits:
            raise ValueError(f"split: expected {op.n_splits} sizes, got {len(sizes)}")
        if any(s < 0 for s in sizes) or sum(sizes) != length:
            raise ValueError(f"split: sizes {list(sizes)} (sum {sum(sizes)}) do not divide "
                             f"dimension {op.axis} of size {length} (input shape "
                             f"{shape_of(x)})")
        x = as_tensor(x)
        pieces, start = [], 0
        for s in sizes:
            pieces.append(x.narrow(op.axis, start, s))
            start += s
        return tuple(pieces)

    return split


@register(Alloc)
def torch_alloc(op, node):
    value_type = node.inputs[0].type
    dtype = node.outputs[0].dtype

    def alloc(value, *sizes):
        shape = tuple(static_ints(s, "the size of an alloc")[0] for s in sizes)
        offset = len(shape) - np.ndim(value)
        for d, vsize in enumerate(np.shape(value)):
            size = shape[d + offset]
            if vsize != size and not (vsize == 1 and value_type.shape[d] == 1):
                detail = ("its type does not declare the dimension broadcastable (size 1)"
                          if vsize == 1 else "the sizes differ")
                raise ValueError(f"alloc: cannot fill shape {shape} with a value of shape "
                                 f"{tuple(np.shape(value))}: dimension {d} of the value has "
                                 f"size {vsize}, the target {size} ({detail})")
        # a new array (not a broadcast view): later ops may write its elements
        return as_tensor(value, dtype).expand(shape).clone()

    return alloc


@register(ARange)
def torch_arange(op, node):
    def arange(start, stop, step):
        bounds = [np.asarray(v).item() if not traced(v) else static_ints(v, "an arange bound")
                  for v in (start, stop, step)]
        return np.arange(*bounds, dtype=op.dtype)

    return arange


@register(_Matrix2D)
def torch_matrix_2d(op, node):
    def matrix(n, m, k):
        n, m, k = (static_ints(v, "the size of an eye/tri")[0] for v in (n, m, k))
        return type(op).numpy_function(n, m, k, dtype=op.dtype)

    return matrix


@register(_SliceLength)
def torch_slice_length(op, node):
    def slice_length(size, *given):
        size = static_ints(size, "a sliced length")[0]
        given = iter(static_ints(g, "a slice bound")[0] for g in given)
        parts = [next(given) if present else None for present in op.parts]
        return np.asarray(len(range(*slice(*parts).indices(size))), dtype="int64")

    return slice_length
