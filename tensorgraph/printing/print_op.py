"""``Print(message)(x)``: ``x``, with its value printed whenever a compiled function computes it
(Theano's way of looking at a value inside a compiled function)."""

from __future__ import annotations

from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.op import Op


class Print(Op):
    """``Print(message)(x)`` is ``x``, printing ``message`` and the value (each of ``attrs``
    of it: ``'__str__'``, ``'shape'``...) whenever it is computed: Theano's way of looking
    at a value inside a compiled function. ``global_fn(op, value)`` replaces the printing.
    It runs in Python and is never removed by rewriting (constant folding included)."""

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(self, message: str = "", attrs=("__str__",), global_fn=None):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def __str__(self):
        return f"Print{{{self.message}}}"

    def make_node(self, x):
        if not isinstance(x, Variable):
            from tensorgraph import hooks

            x = hooks.as_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (value,) = inputs
        output_storage[0][0] = value
        if self.global_fn is not None:
            self.global_fn(self, value)
            return
        for attr in self.attrs:
            shown = getattr(value, attr)
            print(self.message, attr, "=", shown() if callable(shown) else shown)

    def infer_shape(self, fgraph, node, input_shapes):
        return list(input_shapes)

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)

    def R_op(self, inputs, eval_points):
        return list(eval_points)

    def do_constant_folding(self, fgraph, node) -> bool:
        return False
