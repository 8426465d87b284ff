"""Evaluating a FunctionGraph node by node while a back end traces it (JAX, PyTorch).

The JAX and PyTorch back ends both build their program by running the graph once on the
library's traced values (``jax.jit``'s tracers, ``make_fx``'s fake tensors) and let the
library record the operations. What that run does is the same for both, and lives here:

* ``TracedGraph``: the graph walk. Each node computes with its implementation from the back
  end's op table; a node whose inputs are all known while tracing (constants, shapes) computes
  with its numpy ``perform`` instead, so sizes stay known to the library; an ``ifelse`` computes
  only the nodes of the side taken (``branch_owners``); a failure is re-raised naming its node.
  A back end subclasses it with its op table, the cast of a known side's outputs and the
  library's conditional for a condition known only when running (``lax.cond``, ``cond``).
* ``Checks`` and ``Trace``: run-time checks (an index in range) made inside the traced
  program. Each scope (the graph, a side of a conditional, a loop body) folds its failing
  checks into one int32 code the traced function returns; the program raises the registered
  error of a nonzero code after the call. A back end subclasses ``Checks`` with its
  library's traced-value test and int32 scalar.
* ``TracedProgram``: what such a program knows of its graph before any trace (the graph's
  implementations, which inputs are arrays and which generators, where each output comes
  from, the inputs made static when a size needs their values), finding the compiled program
  of a call's signature, and how it raises a failed run-time check.

What differs in substance stays with each back end: how a traced conditional gets its
operands (JAX closes over them; ``torch.cond`` takes them as arguments and refuses aliases),
how programs are compiled, cached and called.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorgraph.gradient import IndexLoop
from tensorgraph.graph.basic import Constant
from tensorgraph.link.ifelse_branches import branch_owners
from tensorgraph.link.output_plan import OutputPlan
from tensorgraph.link.random_plan import RandomPlan
from tensorgraph.link.traced_shape import StaticShapeError
from tensorgraph.link.unsupported import UnsupportedOpsError, unsupported_reason
from tensorgraph.link.whole_graph import Program
from tensorgraph.raise_op import Assert

__all__ = ["Checks", "Trace", "TracedGraph", "TracedProgram", "concrete", "perform",
           "assert_implementation", "inner_function", "index_loop", "composite_function"]


class Checks:
    """The run-time checks of one scope of a trace (the graph, or one side of an ifelse):
    ``code`` is None, or the library's int32 scalar: 0, or the number of the first failing
    check in the trace's registry. Subclasses give ``traced`` and ``array_library`` (the back
    end's ``ArrayLibrary``, ``tensorgraph.link.array_elemwise``: its ``xp`` has ``any`` and
    ``where``)."""

    array_library = None

    def __init__(self, registry: list, node):
        self.registry = registry
        self.node = node
        self.code = None

    @staticmethod
    def traced(value) -> bool:
        """Whether ``value`` is known only when the program runs."""
        raise NotImplementedError

    @classmethod
    def int32(cls, number: int):
        return cls.array_library.array(np.int32(number))

    @classmethod
    def library(cls):
        return cls.array_library.xp

    def add(self, bad, error, message):
        if not self.traced(bad):
            if bool(np.any(bad)):
                raise error(message)
            return
        xp = self.library()
        self.registry.append((self.node, error, message))
        number = self.int32(len(self.registry))
        bad = xp.any(bad)
        code = self.result()
        self.code = xp.where((code == 0) & bad, number, code)

    def merge(self, code):
        self.code = code if self.code is None else \
            self.library().where(self.code == 0, code, self.code)

    def result(self):
        return self.int32(0) if self.code is None else self.code


class Trace:
    """The state of the traces a back end runs, one per thread: ``registry`` (the checks of
    the signature being compiled) and the stack of check scopes."""

    def __init__(self, backend: str, checks: type):
        self.backend = backend
        self.checks = checks
        self.state = threading.local()

    @property
    def registry(self):
        return getattr(self.state, "registry", None)

    @registry.setter
    def registry(self, registry):
        self.state.registry = registry

    def new_registry(self) -> list:
        """An empty registry of checks, now this thread's (a signature is being compiled)."""
        self.state.registry = []
        return self.state.registry

    def start(self):
        """A new trace of the whole graph: no scopes open."""
        self.state.scopes = []

    def current(self) -> Checks:
        stack = getattr(self.state, "scopes", None)
        if not stack:
            raise RuntimeError(f"runtime_check is only valid while a {self.backend} node is "
                               "traced")
        return stack[-1]

    def scope(self, node) -> _Scope:
        """``with trace.scope(node) as scope``: the run-time checks registered inside go to a
        scope of their own (a function the library traces on its own: a side of a
        conditional, a loop body), whose ``scope.result()`` that function returns."""
        return _Scope(self, self.checks(self.state.registry, node))


class _Scope:
    def __init__(self, trace: Trace, checks: Checks):
        self.trace = trace
        self.checks = checks

    def __enter__(self) -> Checks:
        self.trace.state.scopes.append(self.checks)
        return self.checks

    def __exit__(self, *exc):
        self.trace.state.scopes.pop()
        return False


def concrete(value) -> bool:
    """Whether ``value`` is known while tracing (a numpy or Python value)."""
    return isinstance(value, (np.ndarray, np.generic, bool, int, float, complex))


def perform(node, values):
    """A node whose inputs are all known while tracing (constants, shapes): computed with its
    numpy ``perform``, so the result stays a known value."""
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, [np.asarray(v) if not isinstance(v, np.ndarray) else v
                           for v in values], storage)
    return [cell[0] for cell in storage]


def assert_implementation(runtime_check):
    """The implementation ``fn(op, node)`` of ``Assert`` for a back end whose run-time check is
    ``runtime_check``: the value, each condition failing the call with the op's error when it
    is false."""
    from tensorgraph.raise_op import ERRORS

    def implement(op, node):
        error = ERRORS[op.error]

        def check(x, *conditions):
            for k, condition in enumerate(conditions):
                runtime_check(condition == 0, error, f"{op.msg} (condition {k} is false)")
            return x

        return check
    return implement


def inner_function(fgraph, graph_function, backend: str):
    """The back end's ``graph_function`` (its ``GraphFunction`` class) of an inner graph (a
    scan's step, an ``IndexLoop``'s row), or NotImplementedError naming the inner ops it
    lacks."""
    problems: list = []
    function = graph_function(fgraph, problems)
    if problems:
        names = ", ".join(sorted({str(n.op) for n, _ in problems}))
        raise NotImplementedError(f"its inner graph has ops without {backend}: {names}")
    return function


def register_control(register, runtime_check, backend: str, parts, vmap) -> None:
    """Register a traced back end's ``Assert`` (``runtime_check`` failing the call) and
    ``IndexLoop`` (the rows of ``jacobian`` / ``hessian``, vectorized by ``vmap(row,
    n_whole)``, the library's vmap with the first argument mapped). ``parts()`` gives the back
    end's ``(ArrayLibrary, TRACE, GraphFunction, static_ints)``, imported when a loop is
    compiled."""
    register(Assert)(assert_implementation(runtime_check))

    def implement_index_loop(op, node):
        lib, trace, graph_function, static_ints = parts()
        inner = inner_function(op.fgraph, graph_function, backend)
        return index_loop(op, node, lib, inner, trace, static_ints, vmap)

    register(IndexLoop)(implement_index_loop)


def index_loop(op, node, lib, inner, trace, static_ints, vmap):
    """``IndexLoop`` (the rows of a jacobian or hessian): the ``inner`` function vectorized
    over the row index by the library's ``vmap(row, n_whole)`` (the first argument mapped, the
    next ``n_whole`` passed whole), each row's run-time checks (``trace``'s scopes) merged.
    ``lib`` is the back end's ``ArrayLibrary``."""
    dtypes = [o.dtype for o in node.outputs]

    def loop(n, *outer):
        n = static_ints(n, "the length of a jacobian loop")[0]
        if n == 0:
            return _one_or_tuple(tuple(lib.array(np.zeros((0,) + np.shape(outer[k]), dtype=d))
                                       for k, d in zip(op.shape_of, dtypes)))
        outer = [lib.array(v) for v in outer]

        def row(i, *values):
            with trace.scope(node) as scope:
                results = inner(i, *values)
            return tuple(lib.array(r, d) for r, d in zip(results, dtypes)) + (scope.result(),)

        *rows, codes = vmap(row, len(outer))(lib.array(np.arange(n), "int64"), *outer)
        trace.current().merge(lib.xp.max(codes))
        return _one_or_tuple(tuple(rows))

    return loop


def _one_or_tuple(values):
    return values[0] if len(values) == 1 else values


def composite_function(op, scalar_function, constant, cast):
    """``Composite``: its inner scalar graph, node by node, each intermediate cast to its
    dtype (as separate nodes would be). The back end's parts: ``scalar_function(op,
    in_dtypes, out_dtypes)``, ``constant(array)`` (a numpy constant as the library takes it)
    and ``cast(value, dtype)``."""
    steps = []
    for inner in op.nodes:
        steps.append((inner, scalar_function(inner.op, [i.type.dtype for i in inner.inputs],
                                             [o.type.dtype for o in inner.outputs])))

    def read(v, env):
        if isinstance(v, Constant):
            return constant(np.asarray(v.data, dtype=v.type.dtype))
        return env[v]

    def composite(*values):
        env = dict(zip(op.inputs, values))
        for inner, fn in steps:
            results = fn(*[read(v, env) for v in inner.inputs])
            if inner.op.nout == 1:
                results = (results,)
            for out, value in zip(inner.outputs, results):
                env[out] = cast(value, out.type.dtype)
        outs = tuple(read(v, env) for v in op.outputs)
        return outs[0] if op.nout == 1 else outs

    return composite


def _value(var, env):
    return var.data if isinstance(var, Constant) else env[var]


class TracedGraph:
    """A FunctionGraph evaluated on a library's traced values: a program's graph, or the inner
    graph of an op (``IndexLoop``). Building it looks up every node's implementation and adds
    ``(node, reason)`` to ``problems`` for each node the back end cannot run.

    An implementation's function may carry ``reads``, the variables it takes in place of its
    node's inputs (earlier in the graph): a product whose operand is a transpose reads the
    array before the transpose and contracts its other axis, which XLA's CPU runs at twice
    the speed of transposing first. A node whose inputs are all known computes with
    ``perform`` on its own inputs as always.

    Subclasses set ``backend`` (its name in messages) and ``trace`` (its ``Trace``) and define
    ``implementation(op)`` (its op table's lookup), ``cast(value, dtype)`` (an output of the
    side of an ifelse taken) and ``cond(node, condition, env)`` (an ifelse whose condition is
    known only when running)."""

    backend = ""
    trace: Trace

    def __init__(self, fgraph, problems: list):
        from tensorgraph.ifelse import IfElse

        self.fgraph = fgraph
        self.nodes = fgraph.toposort()
        self.position = {node: i for i, node in enumerate(self.nodes)}
        self.functions = {}
        for node in self.nodes:
            if isinstance(node.op, IfElse):
                continue
            impl = self.implementation(node.op)
            if impl is None:
                problems.append((node, unsupported_reason(node.op, self.backend)))
                continue
            try:
                self.functions[node] = impl(node.op, node)
            except NotImplementedError as exc:
                problems.append((node, str(exc) or unsupported_reason(node.op, self.backend)))
        owners = branch_owners(fgraph, self.nodes)
        self.top = [n for n in self.nodes if n not in owners]
        self.blocks: dict = {}
        for node in self.nodes:
            if node in owners:
                self.blocks.setdefault(owners[node], []).append(node)

    @staticmethod
    def implementation(op):
        raise NotImplementedError

    @staticmethod
    def cast(value, dtype):
        raise NotImplementedError

    def cond(self, node, condition, env):
        raise NotImplementedError

    def __call__(self, *inputs) -> list:
        """The outputs of the graph for ``inputs`` (inside a trace: an inner graph)."""
        env = dict(zip(self.fgraph.inputs, inputs))
        self.evaluate(self.top, env)
        return [_value(v, env) for v in self.fgraph.outputs]

    def evaluate(self, nodes, env):
        """Compute ``nodes`` (in order) into ``env``, {variable: value}."""
        from tensorgraph.ifelse import IfElse

        scope = self.trace.current()
        for node in nodes:
            # an ifelse reads its condition only: each side computes its own values
            read = node.inputs[:1] if isinstance(node.op, IfElse) else node.inputs
            values = [_value(v, env) for v in read]
            scope.node = node
            try:
                if isinstance(node.op, IfElse):
                    if concrete(values[0]):
                        outputs = self.side(node, 0 if np.asarray(values[0]) else 1, env)
                    else:
                        outputs = self.cond(node, values[0], env)
                elif all(concrete(v) for v in values):
                    outputs = perform(node, values)
                else:
                    function = self.functions[node]
                    reads = getattr(function, "reads", None)
                    if reads is not None:  # it reads other variables than its node's inputs
                        values = [_value(v, env) for v in reads]
                    outputs = function(*values)
                    if len(node.outputs) == 1:
                        outputs = (outputs,)
            except Exception as exc:  # noqa: BLE001 - every failure names its node
                if getattr(exc, "node", None) is not None:
                    raise
                from tensorgraph.graph.errors import reraise_with_node

                reraise_with_node(exc, node, None, self.position[node], fgraph=self.fgraph)
            env.update(zip(node.outputs, outputs))

    def side(self, node, k: int, env) -> tuple:
        """The outputs of side ``k`` (0: then, 1: else) of the ifelse ``node``: its own nodes
        computed into a copy of ``env``, each output cast to the ifelse's dtype."""
        child = dict(env)
        self.evaluate(self.blocks.get((node, k), []), child)
        return tuple(self.cast(_value(v, child), out.type.dtype)
                     for v, out in zip(self.chosen(node, k), node.outputs))

    @staticmethod
    def chosen(node, k: int) -> list:
        """The inputs of the ifelse ``node`` that are side ``k``'s outputs."""
        n = node.op.n_outs
        return node.inputs[1 + k * n:1 + (k + 1) * n]


class TracedProgram(Program):
    """The part of a traced back end's program that does not depend on the library (see the
    module docstring). Subclasses set ``graph_class`` (their ``TracedGraph``), import their
    library before calling ``__init__`` and may refuse inputs (``input_problems``)."""

    graph_class: type

    def __init__(self, fgraph):
        super().__init__()
        self.fgraph = fgraph
        self.plan = RandomPlan(fgraph)
        problems = list(self.plan.problems)
        self.graph = self.graph_class(fgraph, problems)
        problems += self.input_problems()
        if problems:
            raise UnsupportedOpsError(self.backend, problems, fgraph)
        self.position = self.graph.position
        rng_inputs = set(self.plan.inputs)
        self.array_positions = [k for k in range(len(fgraph.inputs)) if k not in rng_inputs]
        self.output_plan = OutputPlan(fgraph, self.plan,
                                      lambda chain: self.plan.chains[chain][0])
        self.computed = self.output_plan.computed  # what the traced function returns, once each
        self.static: tuple = ()  # positions in array_positions passed as Python ints
        self._compiled: dict = {}
        self._lock = threading.Lock()
        self._last = None

    def input_problems(self) -> list:
        """``(node, reason)`` for inputs the library cannot take (none by default)."""
        return []

    def _make_scalars_static(self) -> bool:
        """After a size turned out to depend on input values: pass the integer scalar inputs
        as Python ints (a new value traces and compiles again). False when there are none,
        or they already are."""
        if self.static:
            return False
        inputs = self.fgraph.inputs
        candidates = tuple(j for j, pos in enumerate(self.array_positions)
                           if getattr(inputs[pos].type, "ndim", None) == 0
                           and np.dtype(inputs[pos].type.dtype).kind in "iu")
        if not candidates:
            return False
        with self._lock:
            self.static = candidates
            self._scalars_made_static()
            self._compiled = {}
        return True

    def _scalars_made_static(self) -> None:
        """What the back end changes when ``static`` changes (under the program's lock)."""

    def _compiled_for(self, args):
        """The compiled program for the signature of ``args`` (traced and compiled at its
        first call; ``_signature`` and ``_compile`` are the back end's), or None when a size
        turned out to need the values of the integer scalar inputs: they are static now, so
        the caller builds its arguments again."""
        compiled = self._compiled.get(self._signature(args))
        if compiled is None:
            try:
                compiled = self._compile(args)
            except StaticShapeError:
                if self._make_scalars_static():
                    return None
                raise
        return compiled

    def _fail(self, check):
        __tracebackhide__ = True  # noqa: F841
        from tensorgraph.graph.errors import reraise_with_node

        node, error, message = check
        reraise_with_node(error(message), node, None, self.position.get(node),
                          fgraph=self.fgraph)
