"""How ``numpy.random.Generator`` states flow through a graph compiled by a whole-graph back end
(``RandomPlan``: which inputs hold generators, which draws read each along a chain, which
output is the advanced state of which chain), and the draws the traced back ends map to
their own (``TRACED_DRAWS``, ``draw_of``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["RandomPlan", "generator_state_after", "copy_generator",
           "draws_with_the_generator_method", "TRACED_DRAWS", "draws_named", "draw_of"]

def copy_generator(gen: np.random.Generator) -> np.random.Generator:
    """A new Generator in ``gen``'s state (``copy.deepcopy`` costs three times as much)."""
    bit = gen.bit_generator
    new = type(bit)(0)
    new.state = bit.state
    return np.random.Generator(new)


def draws_with_the_generator_method(op) -> bool:
    """Whether a random op draws with the numpy ``Generator`` method of its name, which the
    back ends map to their own draws (a subclass with its own ``rng_fn`` draws otherwise:
    scipy's distributions, batches of vector parameters), or is the Bernoulli draw."""
    from tensorgraph.tensor.random.basic import BernoulliRV
    from tensorgraph.tensor.random.op import RandomVariable

    return type(op).rng_fn is RandomVariable.rng_fn or isinstance(op, BernoulliRV)


#: the numpy ``Generator`` methods the traced back ends (JAX, PyTorch) draw with: each by the
#: function ``_<name>`` of its ``random`` module (``draws_named``)
TRACED_DRAWS = ("uniform", "normal", "standard_normal", "exponential", "gamma", "beta",
                "integers", "binomial", "poisson", "bernoulli", "lognormal", "laplace",
                "logistic", "weibull", "geometric")


def draws_named(namespace: dict) -> dict:
    """Draw name -> the function ``_<name>`` of a back end's ``random`` module (its
    ``globals()``), for each of ``TRACED_DRAWS``."""
    return {name: namespace[f"_{name}"] for name in TRACED_DRAWS}


def draw_of(op, draws: dict, backend: str):
    """``draws[op.name]``: the back end's draw for a random op drawing with the numpy
    ``Generator`` method of its name, or NotImplementedError naming the distribution."""
    draw = draws.get(op.name)
    if draw is None or not draws_with_the_generator_method(op):
        raise NotImplementedError(f"no {backend} draw for the distribution {op.name!r} "
                                  f"({type(op).__name__})")
    return draw


class RandomPlan:
    """How the random generators of a graph flow: which fgraph inputs hold generators, which
    random nodes read each of them (directly or along a chain of draws, each reading the
    advanced generator of the one before), and which fgraph output is the advanced state of
    which chain.

    Attributes
    ----------
    inputs : list of int, the positions of the generator inputs
    chains : list of (input position, [random nodes]) one per random node reading an fgraph
        input directly, followed by the nodes reading its advanced state, in order
    outputs : {output position: chain index}, the generator outputs (a shared generator's
        update), each the state at the end of its chain; ``None`` for an output that is the
        input generator itself
    problems : [(node, reason)], generator flows the plan cannot express
    """

    def __init__(self, fgraph):
        from tensorgraph.tensor.random.op import RandomVariable
        from tensorgraph.tensor.random.type import RandomGeneratorType

        self.inputs = [k for k, v in enumerate(fgraph.inputs)
                       if isinstance(v.type, RandomGeneratorType)]
        self.chains: list = []
        self.outputs: dict = {}
        self.problems: list = []
        chain_of: dict = {}  # generator variable -> chain index whose state it is
        clients = _clients(fgraph)
        for pos in self.inputs:
            var = fgraph.inputs[pos]
            for node in clients.get(var, []):
                state = generator_state_after(node, var)
                if state is None:
                    continue
                chain = (pos, [node])
                self.chains.append(chain)
                self._follow(state, len(self.chains) - 1, chain, chain_of, clients)
        position = {v: k for k, v in enumerate(fgraph.inputs)}
        for k, out in enumerate(fgraph.outputs):
            if not isinstance(out.type, RandomGeneratorType):
                continue
            if out in chain_of:
                self.outputs[k] = chain_of[out]
            elif out in position:
                self.outputs[k] = None
            elif out.owner is not None:
                self.problems.append((out.owner, "its generator output does not come from "
                                                 "the random draws of an input generator"))
        for node in fgraph.apply_nodes:
            if isinstance(node.op, RandomVariable) and node.inputs[0] not in chain_of and \
                    node.inputs[0] not in position:
                self.problems.append((node, "it draws from a generator that is neither an "
                                            "input nor the state left by one earlier draw"))

    def _follow(self, state, index, chain, chain_of, clients):
        chain_of[state] = index
        readers = [(n, generator_state_after(n, state)) for n in clients.get(state, [])]
        readers = [(n, after) for n, after in readers if after is not None]
        if len(readers) > 1:
            for extra, _ in readers[1:]:
                self.problems.append((extra, "two draws read the same intermediate "
                                             "generator state"))
        if readers:
            node, after = readers[0]
            chain[1].append(node)
            self._follow(after, index, chain, chain_of, clients)

    @property
    def empty(self) -> bool:
        return not self.inputs


def generator_state_after(node, generator):
    """The state ``node`` leaves ``generator`` in, when it advances it: a random draw reading
    it (its first output), or a ``Scan`` carrying it as a shared state (the loop's draws; its
    final value), else None."""
    from tensorgraph.scan.op import Scan
    from tensorgraph.tensor.random.op import RandomVariable

    if isinstance(node.op, RandomVariable):
        return node.outputs[0] if node.inputs[0] is generator else None
    if isinstance(node.op, Scan):
        info = node.op.info
        shared = node.inputs[info.outer_shared_start:info.outer_non_seq_start]
        for q, var in enumerate(shared):
            if var is generator:
                return node.outputs[info.n_steps_outputs + q]
    return None


def _clients(fgraph) -> dict:
    clients: dict = {}
    for node in fgraph.toposort():
        for var in node.inputs:
            clients.setdefault(var, []).append(node)
    return clients
