"""What the whole-graph back ends share (JAX in ``link/jax``, Numba in ``link/numba``, PyTorch
in ``link/pytorch``; what the two that trace the graph, JAX and PyTorch, share besides is in
``link/traced.py`` and ``link/traced_shape.py``).

Such a back end turns the whole rewritten FunctionGraph into *one* function of its own (one
``jax.jit``, one ``numba.njit`` over generated source) instead of one thunk per node. The parts
that do not depend on the back end live here (each back end's op tables are
``tensorgraph.graph.registry.Registry`` instances in its own package):

* ``UnsupportedOpsError``: the one compile-time error listing every op of a graph the back
  end cannot run (never a silent fallback to Python, never a wrong answer);
* ``require``: the back end's library, or an ImportError naming the extra to install;
* ``branch_owners``: the nodes only one side of an ``ifelse`` needs, which the back ends
  compute inside that side (so the branch not taken does not run, as in the Python VM);
* ``RandomPlan``: how ``numpy.random.Generator`` states enter and leave the compiled function;
* ``OutputPlan``: where each output of a call comes from (the compiled function, an input, a
  constant, an advanced generator);
* ``WholeGraphVM`` and ``WholeGraphLinker``: what ``Function`` calls. The VM has the
  attributes ``Function`` and the tools read (``input_storage``, ``output_storage``,
  ``storage_map``, ``fgraph``) but no per-node thunks (``nodes`` and ``thunks`` are empty):
  nothing runs node by node, so per-node hooks, per-node profile times and stepping do not
  exist for these back ends.

A back end subclasses ``WholeGraphLinker`` naming its ``Program`` class (``program``); a
``Program`` computes the fgraph's outputs from its inputs (``run``), is shared by every VM
linked from the same graph (spare VMs of concurrent calls, see ``compile/compiled.py``) and so
must be safe to call from several threads at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
import weakref

import numpy as np

__all__ = ["UnsupportedOpsError", "require", "available", "branch_owners",
           "RandomPlan", "generator_state_after", "OutputPlan", "copy_generator",
           "draws_with_the_generator_method", "draw_of", "TRACED_DRAWS", "draws_named",
           "Program", "WholeGraphVM", "WholeGraphLinker", "registered_linker",
           "refuse_gemv_pair"]


# ----------------------------------------------------------------------------------------------
# Errors

class UnsupportedOpsError(NotImplementedError):
    """The graph has ops the back end cannot run: raised when compiling, listing all of them.

    Attributes: ``backend`` (e.g. 'JAX') and ``problems``: one ``(node, reason)`` per node.
    """

    def __init__(self, backend: str, problems, fgraph=None):
        self.backend = backend
        self.problems = list(problems)
        super().__init__(self._message(fgraph))

    def _message(self, fgraph) -> str:
        from tensorgraph.graph.ids import graph_ids
        from tensorgraph.graph.utils import format_user_line

        ids = graph_ids(fgraph) if fgraph is not None else None
        grouped: dict = {}
        for node, reason in self.problems:
            grouped.setdefault((str(node.op), reason), []).append(node)
        n_ops = len(grouped)
        lines = [f"the {self.backend} back end cannot compile this graph: "
                 f"{n_ops} op{'s' if n_ops != 1 else ''} "
                 f"{'have' if n_ops != 1 else 'has'} no {self.backend} implementation"]
        for (op, reason), nodes in grouped.items():
            where = ", ".join(f"[id {ids[n]}]" for n in nodes[:4]) if ids is not None else ""
            if len(nodes) > 4:
                where += f" and {len(nodes) - 4} more"
            line = format_user_line(nodes[0])
            lines.append(f"  - {op} {where}: {reason}" + (f" (created at {line})" if line else ""))
        lines.append(f"Compile it with mode='FAST_RUN' (C), or give the op a {self.backend} "
                     f"implementation: tensorgraph.link.{self.backend.lower()}.register(OpClass) "
                     "(docs/backends.md).")
        return "\n".join(lines)


def unsupported_reason(op, backend: str) -> str:
    """Why ``op`` has no implementation (the message's line for it)."""
    return f"no {backend} implementation is registered for {type(op).__name__}"


# ----------------------------------------------------------------------------------------------
# Optional libraries


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None


def require(module: str, extra: str, mode: str):
    """Import ``module``, or an ImportError saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"mode {mode} needs {module}, which is not installed here ({exc}); "
                          f"install it with: pip install tensorgraph[{extra}]") from None


# ----------------------------------------------------------------------------------------------
# ifelse: which nodes each side owns


def branch_owners(fgraph, nodes=None) -> dict:
    """``{node: (ifelse_node, side)}`` for the nodes only one side (0: then, 1: else) of an
    ``IfElse`` needs, the innermost such side when ifelse nodes nest. A node outside every
    branch is not in the dict. ``nodes``: the toposort (computed if not given)."""
    from tensorgraph.ifelse import IfElse

    nodes = nodes if nodes is not None else fgraph.toposort()
    ifelses = [n for n in nodes if isinstance(n.op, IfElse)]
    if not ifelses:
        return {}
    owners: dict = {}
    everything = _needed(fgraph, None, None)
    for ifnode in reversed(ifelses):  # outermost first: inner branches overwrite
        n = ifnode.op.n_outs
        for side in (0, 1):
            taken = ifnode.inputs[1 + side * n:1 + (side + 1) * n]
            if_other = _needed(fgraph, ifnode, side)
            below = _needed_from(taken)
            for node in below:
                if node in everything and node not in if_other:
                    owners[node] = (ifnode, side)
    return owners


def _needed_from(variables) -> set:
    seen, stack = set(), [v.owner for v in variables if v.owner is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(i.owner for i in node.inputs if i.owner is not None)
    return seen


def _needed(fgraph, skipped_ifelse, side) -> set:
    """Nodes needed for the outputs when ``skipped_ifelse`` does *not* take ``side``."""
    seen, stack = set(), [v.owner for v in fgraph.outputs if v.owner is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        inputs = node.inputs
        if node is skipped_ifelse:
            n = node.op.n_outs
            other = 1 - side
            inputs = [node.inputs[0]] + node.inputs[1 + other * n:1 + (other + 1) * n]
        stack.extend(i.owner for i in inputs if i.owner is not None)
    return seen


# ----------------------------------------------------------------------------------------------
# Random generators


def refuse_gemv_pair(op, mode: str) -> None:
    """A ``Gemv`` fusing a pair of products (``Gemv{pair}``) has C only: the whole-graph modes
    leave out the rewrite that makes it, so meeting one is NotImplementedError."""
    if op.pair is not None:
        raise NotImplementedError(f"the fused pair of products is made for C only (mode {mode} "
                                  "leaves its rewrite out)")


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


# ----------------------------------------------------------------------------------------------
# Programs, VMs and linkers


class Program:
    """One compiled function of a back end for one FunctionGraph (see the module docstring).

    Subclasses set ``backend`` ('JAX'), ``description`` ('one jax.jit'), ``seconds``
    (``{"generate": s, "compile": s}``: writing the back end's program, compiling it) and
    define ``run(values) -> list`` (one value per fgraph output) and ``source()`` (the back
    end's own code, as text, for the compile report).
    """

    backend = ""
    description = ""
    readonly_outputs = False

    def __init__(self):
        self.seconds = {"generate": 0.0, "compile": 0.0}
        self.compiled_from = None  # "compiled", "disk" (the back end's cache) or None

    def run(self, values: list) -> list:
        raise NotImplementedError

    def source(self) -> str:
        raise NotImplementedError


class WholeGraphVM:
    """What ``Function`` calls for a whole-graph back end: reads the input cells, runs the
    program, fills the output cells (see the module docstring for what it lacks)."""

    lazy = False
    allow_gc = True  # nothing is kept between calls: every output is a new array
    supports_node_times = False

    @property
    def readonly_outputs(self) -> bool:
        """Whether the outputs are read-only buffers (``Function`` copies the user's)."""
        return self.program.readonly_outputs

    def __init__(self, program, fgraph, input_storage=None, storage_map=None):
        self.program = program
        self.fgraph = fgraph
        self.backend = program.backend
        storage_map = dict(storage_map or {})
        if input_storage is None:
            input_storage = [[None] for _ in fgraph.inputs]
        if len(input_storage) != len(fgraph.inputs):
            raise ValueError(f"{len(fgraph.inputs)} graph inputs but {len(input_storage)} "
                             "input cells")
        for var, cell in zip(fgraph.inputs, input_storage):
            storage_map[var] = cell
        for var in fgraph.outputs:
            storage_map.setdefault(var, [None])
        self.storage_map = storage_map
        self.input_storage = list(input_storage)
        self.output_storage = [storage_map[v] for v in fgraph.outputs]
        self.nodes: list = []
        self.thunks: list = []
        self.pre_hook = None
        self.post_hook = None

    @property
    def seconds(self) -> dict:
        return self.program.seconds

    def source(self) -> str:
        """The back end's own code for this graph (jaxpr / StableHLO, generated Python)."""
        return self.program.source()

    def __call__(self):
        __tracebackhide__ = True  # noqa: F841 - IPython shows the user's frame first
        values = self.program.run([cell[0] for cell in self.input_storage])
        for cell, value in zip(self.output_storage, values):
            cell[0] = value

    def __repr__(self):
        return (f"<{self.backend} VM: {len(self.fgraph.apply_nodes)} nodes as "
                f"{self.program.description}>")


class WholeGraphLinker:
    """Links a FunctionGraph into a ``WholeGraphVM``: ``build(fgraph)`` once per graph (the
    program is kept for the spare VMs of concurrent calls, which link the same graph again).
    Subclasses set ``name`` and ``program`` (the back end's ``Program`` class)."""

    name = ""
    program: type = Program
    #: ops holding an inner graph (Scan) run inside the program: ``prepare_for_mode`` only
    #: rewrites their inner graph for the mode, it does not compile it on its own
    traces_inner_graphs = True

    def __init__(self):
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def make_vm(self, fgraph, input_storage=None, storage_map=None) -> WholeGraphVM:
        with self._lock:
            program = self._programs.get(fgraph)
            if program is None:
                program = self._programs[fgraph] = self.build(fgraph)
        return WholeGraphVM(program, fgraph, input_storage, storage_map)

    def build(self, fgraph) -> Program:
        return self.program(fgraph)

    def __repr__(self):
        return f"{type(self).__name__}()"


def registered_linker(cls: type) -> type:
    """Class decorator: make a ``WholeGraphLinker`` subclass the linker ``cls.name``
    (``tensorgraph.link.register_linker``), as each back end's linker module does on import."""
    from tensorgraph import link

    link.register_linker(cls.name, cls)
    return cls
