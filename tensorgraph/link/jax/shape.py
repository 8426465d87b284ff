"""JAX for the shape ops: ``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``, ``MakeVector``,
``Join``, ``Split``, ``Alloc``, ``ARange``, ``Eye``, ``Tri`` and slice lengths.

JAX arrays have shapes fixed when tracing: sizes must be known then. They are when they come
from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.jax``); a size computed from the *values* of the inputs is refused with
``StaticShapeError`` when the function is first called with those shapes. The checks are
``tensorgraph.link.traced_shape``'s and the ops that build arrays
``tensorgraph.link.array_shape``'s, shared with PyTorch.
"""

from __future__ import annotations


from tensorgraph.link import array_shape, traced_shape
from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.jax.elemwise import LIBRARY
from tensorgraph.link.traced_shape import StaticShapeError, reshaped_size
from tensorgraph.tensor.shape import SpecifyShape

__all__ = ["StaticShapeError", "static_ints", "reshaped_size"]


def static_ints(value, what: str) -> tuple:
    """``value`` (a known integer scalar or vector) as Python ints, or StaticShapeError."""
    return traced_shape.static_ints(value, what, "JAX", _traced)


def _traced(value) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


traced_shape.register_known_size_ops(register, static_ints, _traced)


@register(SpecifyShape)
def jax_specify_shape(op, node):
    return traced_shape.specify_shape(op, _traced, LIBRARY.array, runtime_check)


for _cls, _implementation in array_shape.registrations(LIBRARY, static_ints).items():
    register(_cls)(_implementation)
