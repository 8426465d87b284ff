"""``Composite``: a scalar op made of a small graph of scalar ops (what fusion produces).

Elemwise fusion turns a chain like ``tanh(x*y + exp(-x))*0.5`` into one ``Elemwise`` node whose
scalar op is a ``Composite`` holding the scalar graph. ``impl`` evaluates the inner ops' own
``impl`` in order on whole arrays (numpy broadcasting), casting each intermediate result to its
scalar dtype as separate Elemwise nodes would; the C backend emits the graph as one loop body.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant, io_toposort
from tensorgraph.scalar.basic import ScalarOp

__all__ = ["Composite"]

#: the readable name writes the graph as nested calls, which repeats every shared
#: subexpression: a chain where each step reads the previous value twice doubles per step
#: (60 steps would be 2**60 characters), so each written subexpression is cut at this length
TEXT_LIMIT = 200


def _bounded(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 3] + "..."


class Composite(ScalarOp):
    """A scalar graph from ``inputs`` (ScalarType variables) to ``outputs`` used as one op.

    Two Composites are equal when their graphs are the same (same ops, dtypes, constants and
    wiring), so fused nodes merge like any other.
    """

    __props__ = ("signature",)

    def __init__(self, inputs, outputs):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.nin = len(self.inputs)
        self.nout = len(self.outputs)
        self.nodes = io_toposort(self.inputs, self.outputs)
        self.signature, self._text = self._describe()

    def _describe(self):
        names = {v: f"i{k}" for k, v in enumerate(self.inputs)}
        parts, text = [], {}
        for v in self.inputs:
            text[v] = names[v]
        for j, node in enumerate(self.nodes):
            args = []
            for v in node.inputs:
                if isinstance(v, Constant):
                    args.append(f"{v.data!r}:{v.type.dtype}")
                else:
                    args.append(names[v])
            names[node.outputs[0]] = f"t{j}"
            parts.append(f"t{j}={node.op.name}({','.join(args)}):{node.outputs[0].type.dtype}")
            inner = ", ".join(text.get(v, str(v.data) if isinstance(v, Constant) else "?")
                              for v in node.inputs)
            text[node.outputs[0]] = _bounded(f"{node.op.name}({inner})")
        outs = ",".join(names.get(v, "?") for v in self.outputs)
        in_types = ",".join(v.type.dtype for v in self.inputs)
        signature = f"({in_types})->{';'.join(parts)}->{outs}"
        return signature, _bounded(", ".join(text[v] for v in self.outputs))

    @property
    def name(self) -> str:
        return f"Composite{{{self._text}}}"

    def output_rule(self, *dtypes):
        expected = [v.type.dtype for v in self.inputs]
        if list(dtypes) != expected:
            raise TypeError(f"{self.name} takes inputs of dtypes {expected}, got {list(dtypes)}")
        return tuple(v.type.dtype for v in self.outputs)

    def impl(self, *inputs):
        values = dict(zip(self.inputs, inputs))
        for node in self.nodes:
            args = [v.data if isinstance(v, Constant) else values[v] for v in node.inputs]
            result = node.op.impl(*args)
            if node.op.nout == 1:
                result = (result,)
            for out, value in zip(node.outputs, result):
                values[out] = np.asarray(value, dtype=out.type.dtype)
        results = tuple(values[v] if not isinstance(v, Constant) else v.data
                        for v in self.outputs)
        return results[0] if self.nout == 1 else results
