"""Small ops PyTensor code builds by hand: ``as_op`` (a Python function as an op) and
``DeepCopyOp`` (a copy that is never a view).

``@as_op(itypes=[tt.dmatrix], otypes=[tt.dvector])`` (PyTensor 3: ``wrap_py``) turns a numpy function into an op whose
nodes call it: the quickest way to put code tensorgraph has no op for into a graph. It runs
in Python in every mode and has no gradient (define an ``Op`` with ``L_op`` for one).

``deep_copy_op(x)`` is ``x`` copied into memory of its own. (PyTensor's ``function`` puts one
on outputs that could alias an input; tensorgraph's copies such outputs itself, so compiled
graphs do not contain it: it is there for code that asks for a copy explicitly.)
"""

from __future__ import annotations

import copy

import numpy as np

from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.op import Op, ValueIdentityOp

__all__ = ["as_op", "wrap_py", "AsOp", "DeepCopyOp", "deep_copy_op"]


class DeepCopyOp(ValueIdentityOp):
    """Its output is a copy of its input, never sharing memory with it."""

    __props__ = ()

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        output_storage[0][0] = x.copy() if isinstance(x, np.ndarray) else copy.deepcopy(x)

    def __str__(self):
        return "DeepCopyOp"


deep_copy_op = DeepCopyOp()


class AsOp(Op):
    """The op ``as_op`` makes: ``fn`` called on the input values, its results checked
    against ``otypes``."""

    __props__ = ("fn", "itypes", "otypes", "infer_shape_fn")

    def __init__(self, fn, itypes, otypes, infer_shape=None, name=None):
        self.fn = fn
        self.itypes = tuple(itypes)
        self.otypes = tuple(otypes)
        self.infer_shape_fn = infer_shape
        self.name = name or getattr(fn, "__name__", "as_op")

    def __str__(self):
        return f"AsOp{{{self.name}}}"

    def make_node(self, *inputs):
        from tensorgraph.tensor.basic import as_tensor_variable

        if len(inputs) != len(self.itypes):
            raise TypeError(f"{self}: expected {len(self.itypes)} inputs, got {len(inputs)}")
        converted = []
        for k, (itype, var) in enumerate(zip(self.itypes, inputs)):
            var = var if isinstance(var, Variable) else as_tensor_variable(var)
            fit = itype.convert_variable(var)
            if fit is None:
                raise TypeError(f"{self}: input {k} must have type {itype}, got {var} "
                                f"({var.type})")
            converted.append(fit)
        return Apply(self, converted, [t() for t in self.otypes])

    def perform(self, node, inputs, output_storage):
        results = self.fn(*inputs)
        if len(self.otypes) == 1:
            results = [results]
        if len(results) != len(self.otypes):
            raise ValueError(f"{self}: the function returned {len(results)} values, expected "
                             f"{len(self.otypes)}")
        for k, (cell, otype, value) in enumerate(zip(output_storage, self.otypes, results)):
            try:
                cell[0] = otype.filter(value)
            except TypeError as exc:
                raise TypeError(f"{self}: output {k} of the function does not fit {otype}: "
                                f"{exc}") from None

    def infer_shape(self, fgraph, node, input_shapes):
        if self.infer_shape_fn is None:
            raise NotImplementedError(f"{self} was made without infer_shape")
        return self.infer_shape_fn(fgraph, node, input_shapes)

    def do_constant_folding(self, fgraph, node) -> bool:
        return False


def as_op(itypes, otypes, infer_shape=None):
    """Decorator: the numpy function it decorates becomes an op taking inputs of the types
    ``itypes`` and returning values of the types ``otypes`` (e.g. ``[tt.dmatrix]``).
    ``infer_shape(fgraph, node, input_shapes)`` may give the output shapes symbolically."""
    itypes = list(itypes) if isinstance(itypes, (list, tuple)) else [itypes]
    otypes = list(otypes) if isinstance(otypes, (list, tuple)) else [otypes]
    for what, types in (("itypes", itypes), ("otypes", otypes)):
        for t in types:
            if not hasattr(t, "filter") or not callable(t):
                raise TypeError(f"as_op: {what} must be types (tt.dmatrix, "
                                f"TensorType(...)), got {t!r}")

    def decorate(fn):
        return AsOp(fn, itypes, otypes, infer_shape)

    return decorate


#: PyTensor 3's name of ``as_op``
wrap_py = as_op
