"""Where each output of a whole-graph back end's call comes from (``OutputPlan``): the compiled
function, an input as it came, a constant, or an advanced generator copy."""

from __future__ import annotations

from tensorgraph.link.random_plan import RandomPlan

__all__ = ["OutputPlan"]

class OutputPlan:
    """Where each fgraph output of a program comes from at a call: ``("computed", j)``, the
    compiled function's ``j``-th result; ``("input", k)``, the ``k``-th input value as it came;
    ``("constant", value)``; ``("rng", key)``, the advanced copy of a generator, keyed as the
    program keeps its copies (``rng_key(chain)``; an output that is an input generator itself
    is that input).

    ``returned``: the variables the compiled function returns, in order; None: the plan lists
    them itself (``self.computed``, each once) for a program that returns what it is asked.
    """

    def __init__(self, fgraph, plan: RandomPlan, rng_key, returned=None):
        from tensorgraph.graph.basic import Constant
        from tensorgraph.tensor.random.type import RandomGeneratorType

        self.computed = [] if returned is None else list(returned)
        self.entries = []
        for k, var in enumerate(fgraph.outputs):
            if isinstance(var.type, RandomGeneratorType):
                chain = plan.outputs.get(k)
                self.entries.append(("rng", rng_key(chain)) if chain is not None
                                    else ("input", fgraph.inputs.index(var)))
            elif isinstance(var, Constant):
                self.entries.append(("constant", var.data))
            elif var.owner is None:
                self.entries.append(("input", fgraph.inputs.index(var)))
            else:
                if returned is None and var not in self.computed:
                    self.computed.append(var)
                self.entries.append(("computed", self.computed.index(var)))

    def gather(self, computed, values, generators) -> list:
        """The fgraph's outputs of a call: ``computed``, what the compiled function returned;
        ``values``, the call's inputs; ``generators``, the advanced generator copies."""
        results = []
        for kind, what in self.entries:
            if kind == "computed":
                results.append(computed[what])
            elif kind == "input":
                results.append(values[what])
            elif kind == "rng":
                results.append(generators[what])
            else:
                results.append(what)
        return results
