"""JAX for the shape ops: ``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``, ``MakeVector``,
``Join``, ``Split``, ``Alloc``, ``ARange``, ``Eye``, ``Tri`` and slice lengths.

JAX arrays have shapes fixed when tracing: sizes must be known then. They are when they come
from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.jax``); a size computed from the *values* of the inputs is refused with
``StaticShapeError`` when the function is first called with those shapes. The checks are
``tensorgraph.link.traced_shape``'s, shared with PyTorch.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import traced_shape
from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.traced_shape import StaticShapeError, reshaped_size
from tensorgraph.tensor.creation import Alloc, check_alloc
from tensorgraph.tensor.join import Join, MakeVector, Split
from tensorgraph.tensor.shape import Reshape, SpecifyShape

__all__ = ["StaticShapeError", "static_ints", "reshaped_size"]


def static_ints(value, what: str) -> tuple:
    """``value`` (a known integer scalar or vector) as Python ints, or StaticShapeError."""
    return traced_shape.static_ints(value, what, "JAX", _traced)


def _traced(value) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


def _asarray(value):
    import jax.numpy as jnp

    return jnp.asarray(value)


traced_shape.register_known_size_ops(register, static_ints, _traced)


@register(SpecifyShape)
def jax_specify_shape(op, node):
    return traced_shape.specify_shape(op, _traced, _asarray, runtime_check)


@register(Reshape)
def jax_reshape(op, node):
    import jax.numpy as jnp

    def reshape(x, shp):
        requested = static_ints(shp, "the shape of a reshape")
        if len(requested) != op.ndim:
            raise ValueError(f"reshape: got a shape with {len(requested)} entries, expected "
                             f"{op.ndim}")
        return jnp.reshape(x, reshaped_size(np.shape(x), requested))

    return reshape


@register(MakeVector)
def jax_make_vector(op, node):
    import jax.numpy as jnp

    def make_vector(*scalars):
        if not scalars:
            return np.zeros(0, dtype=op.dtype)
        return jnp.stack([jnp.asarray(s).astype(op.dtype).reshape(()) for s in scalars])

    return make_vector


@register(Join)
def jax_join(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype
    ndim = node.outputs[0].ndim

    def join(*tensors):
        axis = traced_shape.known_axis(op, tensors[0], ndim, static_ints, "join")
        if op.axis is None:
            tensors = tensors[1:]
        traced_shape.check_join(axis, [np.shape(t) for t in tensors])
        return jnp.concatenate(tensors, axis=axis).astype(dtype)

    return join


@register(Split)
def jax_split(op, node):
    ndim = node.inputs[0].ndim

    def split(x, *rest):
        axis = traced_shape.known_axis(op, rest[0], ndim, static_ints, "split")
        sizes = static_ints(rest[-1], "the sizes of a split")
        traced_shape.check_split(op, np.shape(x), sizes, axis)
        pieces, start = [], 0
        for s in sizes:
            index = (slice(None),) * axis + (slice(start, start + s),)
            pieces.append(x[index])
            start += s
        return tuple(pieces)

    return split


@register(Alloc)
def jax_alloc(op, node):
    import jax.numpy as jnp

    value_type = node.inputs[0].type
    dtype = node.outputs[0].dtype

    def alloc(value, *sizes):
        shape = tuple(static_ints(s, "the size of an alloc")[0] for s in sizes)
        check_alloc(value_type, value, shape)
        return jnp.broadcast_to(jnp.asarray(value).astype(dtype), shape)

    return alloc
