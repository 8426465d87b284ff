"""Converting between scalar variables (``ScalarType``) and 0-d tensors.

PyTensor code mixes the two: a scalar variable used where a tensor is expected
(``as_tensor_variable(ps.int8())``, ``x[ps.constant(1)]``, ``xs + tensor``) becomes a 0-d tensor
through ``tensor_from_scalar``; a 0-d tensor given to a scalar op (``ps.as_scalar(t)``)
becomes a scalar through ``scalar_from_tensor``. Both copy nothing but the number, and the
gradient passes through them unchanged (zero for integers, which have no gradient).

The two ops always make a node, as PyTensor's; the conversions ``as_tensor_variable`` and
``as_scalar`` use (``scalar_to_tensor``, ``tensor_to_scalar``) keep constants constant and add
no node for a round trip. The rewrites ``local_tensor_scalar_tensor`` and
``local_scalar_tensor_scalar`` remove round trips left in a graph.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Constant
from tensorgraph.graph.op import Op
from tensorgraph.scalar.basic import ScalarType, get_scalar_type
from tensorgraph.tensor.type import TensorType

__all__ = ["TensorFromScalar", "ScalarFromTensor", "tensor_from_scalar", "scalar_from_tensor",
           "scalar_to_tensor", "tensor_to_scalar"]

_FLOAT_OR_COMPLEX = ("f", "c")


class TensorFromScalar(Op):
    """A scalar variable as a 0-d tensor of its dtype."""

    __props__ = ()

    def make_node(self, s):
        if not isinstance(getattr(s, "type", None), ScalarType):
            raise TypeError(f"tensor_from_scalar takes a scalar variable (ScalarType), got "
                            f"{s!r}" + (f" of type {s.type}" if hasattr(s, "type") else ""))
        return Apply(self, [s], [TensorType(s.type.dtype, ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        (s,) = inputs
        if np.dtype(s.type.dtype).kind in _FLOAT_OR_COMPLEX:
            return [scalar_from_tensor(output_grads[0])]
        return [s.zeros_like(dtype=config.floatX)]


class ScalarFromTensor(Op):
    """A 0-d tensor as a scalar variable of its dtype."""

    __props__ = ()

    def make_node(self, t):
        if not isinstance(getattr(t, "type", None), TensorType) or t.type.ndim != 0:
            raise TypeError(f"scalar_from_tensor takes a 0-d tensor, got {t!r}"
                            + (f" of type {t.type}" if hasattr(t, "type") else ""))
        return Apply(self, [t], [get_scalar_type(t.type.dtype)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0])[()]

    def L_op(self, inputs, outputs, output_grads):
        (t,) = inputs
        if np.dtype(t.type.dtype).kind in _FLOAT_OR_COMPLEX:
            return [tensor_from_scalar(output_grads[0])]
        from tensorgraph.tensor.creation import zeros_like

        return [zeros_like(t)]


#: the ops (PyTensor's names: ``t.owner.op is tensor_from_scalar``); each call makes a node
tensor_from_scalar = TensorFromScalar()
scalar_from_tensor = ScalarFromTensor()


def scalar_to_tensor(s):
    """What ``as_tensor_variable`` makes of the scalar variable ``s``: a scalar constant gives
    a tensor constant, a scalar taken from a tensor gives that tensor back, anything else one
    ``tensor_from_scalar`` node."""
    if isinstance(s, Constant):
        return TensorType(s.type.dtype, ()).make_constant(np.asarray(s.data), name=s.name)
    if s.owner is not None and isinstance(s.owner.op, ScalarFromTensor):
        return s.owner.inputs[0]
    return tensor_from_scalar(s)


def tensor_to_scalar(t):
    """What ``tensorgraph.scalar.as_scalar`` makes of the 0-d tensor ``t``: a tensor constant
    gives a scalar constant, a tensor made from a scalar gives that scalar back, anything else
    one ``scalar_from_tensor`` node."""
    if isinstance(t, Constant):
        return get_scalar_type(t.type.dtype).make_constant(np.asarray(t.data)[()], name=t.name)
    if t.owner is not None and isinstance(t.owner.op, TensorFromScalar):
        return t.owner.inputs[0]
    return scalar_from_tensor(t)
