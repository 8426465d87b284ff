"""``Print(message)(x)``: ``x``, with its value printed whenever a compiled function computes it
(Theano's way of looking at a value inside a compiled function)."""

from __future__ import annotations

from tensorgraph.graph.op import ValueIdentityOp


class Print(ValueIdentityOp):
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

    def perform(self, node, inputs, output_storage):
        (value,) = inputs
        output_storage[0][0] = value
        if self.global_fn is not None:
            self.global_fn(self, value)
            return
        for attr in self.attrs:
            shown = getattr(value, attr)
            print(self.message, attr, "=", shown() if callable(shown) else shown)
