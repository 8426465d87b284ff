"""PyTorch for the shape ops: ``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``,
``MakeVector``, ``Join``, ``Split``, ``Alloc``, ``ARange``, ``Eye``, ``Tri`` and slice lengths.

The graph is traced for given input shapes, so sizes must be known then. They are when they
come from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.pytorch``); a size computed from the *values* of the inputs is refused
with ``StaticShapeError`` when the function is first called with those shapes. The checks are
``tensorgraph.link.traced_shape``'s and the ops that build arrays
``tensorgraph.link.array_shape``'s, shared with JAX.
"""

from __future__ import annotations


from tensorgraph.link import array_shape, traced_shape
from tensorgraph.link.pytorch import as_tensor, register, runtime_check, traced
from tensorgraph.link.pytorch.elemwise import LIBRARY
from tensorgraph.link.pytorch.linker import static_ints
from tensorgraph.tensor.shape import SpecifyShape

traced_shape.register_known_size_ops(register, static_ints, traced)


@register(SpecifyShape)
def torch_specify_shape(op, node):
    return traced_shape.specify_shape(op, traced, as_tensor, runtime_check)


for _cls, _implementation in array_shape.registrations(LIBRARY, static_ints).items():
    register(_cls)(_implementation)
