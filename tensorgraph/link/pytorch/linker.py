"""The 'pytorch' linker: a FunctionGraph as one FX graph compiled by Inductor, once per input shapes.

Linking looks up every node's implementation (``tensorgraph.link.pytorch``) and raises one
``UnsupportedOpsError`` listing every op without one. At the first call with each input
signature (the shapes and dtypes of the inputs), the program

1. traces the graph into one FX graph of aten operations: ``make_fx`` runs a Python function
   evaluating the nodes in order on fake tensors (shapes and dtypes only, no data), so
   Python-level work (numpy shape arithmetic, the op implementations' own code) leaves no
   trace and the graph holds only tensor operations;
2. compiles that graph with Inductor, ``torch.compile``'s compiler (``torch._inductor.compile``:
   C++ kernels on the CPU, built by the system's C++ compiler), for the shapes of that
   signature, and runs it.

``program.seconds`` adds tracing (and, at the first graph, importing torch) to ``"generate"``
and Inductor's compile to ``"compile"``; ``source()`` shows the FX graph and the code Inductor
wrote for it.

Why trace first instead of handing ``torch.compile`` the node-evaluating Python function
itself: TorchDynamo would trace that interpreter (dicts of variables, numpy shape
arithmetic, ``perform`` calls) and break the graph wherever it cannot, silently falling back
to eager Python between the pieces. ``make_fx`` records only tensor operations, so the
compiled graph is always one graph. And why Inductor without TorchDynamo in front: Dynamo
would only trace that FX graph again and check its guards at every call (90 us a call on a
3-element graph, against 12 us for Inductor's function, 2026-11-25 at c7eba68; the
program keys its compiled graphs
by input signature itself). The exception is a graph with ``torch.cond`` (an ifelse whose
condition is known only when running): Inductor takes higher-order operators only through
Dynamo, so that graph goes through ``torch.compile(graph, fullgraph=True, dynamic=False)``.
A loop (``Scan``) of known length is one call of the operator ``tensorgraph::scan_loop`` in
the graph; its step, traced with the graph, is compiled once with it (``compile_graph``) at
the first run (``tensorgraph.link.pytorch.scan``).

Sizes computed from input values: fake tensors have no values, so an array size that
depends on the value of an input (``zeros(n)``, a draw of ``size=(n, 3)``) makes the program
pass the integer scalar inputs as Python ints from then on (each new value traces and
compiles again, once); a graph without such inputs gets a ``StaticShapeError`` naming the
node.

Random draws: a compiled graph takes no ``torch.Generator`` argument (TorchDynamo: "Failed
to convert args/kwargs to proxy" for the generator), so the compiled graph draws from
PyTorch's default generator (Inductor's own random kernels). Each call seeds it from a seed
drawn from a copy of each input numpy generator (so the call never changes the input
generator; a generator output, a shared generator's update, is that advanced copy) and
restores the process's own PyTorch random state afterwards; calls drawing random numbers
take turns (one lock) because that generator is process-wide. The numbers are PyTorch's, not
numpy's; a reseeded stream repeats itself.

Values crossing the boundary: inputs go in as tensors sharing the numpy arrays' memory
(``torch.from_numpy``; arrays that are not C-contiguous are copied first, so one compiled
graph fits every call of a signature); outputs come back as numpy arrays sharing the output
tensors' memory, copied when they would alias an input.

Compile cache: unless the process chose one itself (``TORCHINDUCTOR_CACHE_DIR`` set and not
empty; a child process inherits the parent's choice, tensorgraph's included), Inductor's
caches (FX graphs, generated C++ and its shared libraries) live under
``<compiledir>/torch``, so a new process compiling the same graph skips Inductor's codegen
and the C++ compiler (``program.compiled_from == "disk"``).
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from time import perf_counter

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant
from tensorgraph.link import traced_shape
from tensorgraph.link.optional import require
from tensorgraph.link.pytorch import TABLE
from tensorgraph.link.pytorch.elemwise import LIBRARY
from tensorgraph.link.random_plan import copy_generator
from tensorgraph.link.traced import Checks, Trace, TracedGraph, TracedProgram
from tensorgraph.link.traced_shape import StaticShapeError
from tensorgraph.link.whole_graph import WholeGraphLinker, registered_linker

__all__ = ["TorchLinker", "TorchProgram", "current_checks", "StaticShapeError", "static_ints",
           "compile_graph", "hold_loop"]

#: Inductor's compiles and hooks and the seeding of the default generator are process-wide
_COMPILE_LOCK = threading.RLock()
_RANDOM_LOCK = threading.Lock()
#: per thread, the loops (``scan.StepLoop``) the signature being traced calls
_TRACING = threading.local()


def static_ints(value, what: str) -> tuple:
    """``value`` (a known integer scalar or vector) as Python ints, or StaticShapeError."""
    from tensorgraph.link.pytorch import traced

    return traced_shape.static_ints(value, what, "PyTorch", traced)


class _Checks(Checks):
    """Run-time checks folded into an int32 tensor code (see ``tensorgraph.link.traced``)."""

    array_library = LIBRARY

    @staticmethod
    def traced(value) -> bool:
        import torch

        return isinstance(value, torch.Tensor)



TRACE = Trace("PyTorch", _Checks)
current_checks = TRACE.current
#: ``with checks_scope(node) as scope``: a scope of checks of its own (a side of
#: ``torch.cond``, a loop body), whose ``scope.result()`` the function traced on its own returns
checks_scope = TRACE.scope


class _Generator:
    """What a random generator input is while tracing: the draws use PyTorch's default
    generator (see the module docstring), so the value only marks the chain."""

    def __repr__(self):
        return "<the default torch generator>"


GENERATOR = _Generator()


# ----------------------------------------------------------------------------------------------
# Evaluating a graph while tracing


class GraphFunction(TracedGraph):
    """A FunctionGraph evaluated on tensors while tracing (``tensorgraph.link.traced``): the
    program's graph, or the inner graph of an op (``IndexLoop``)."""

    backend = "PyTorch"
    trace = TRACE

    implementation = staticmethod(TABLE.lookup)

    @staticmethod
    def cast(value, dtype):
        """A known value stays a numpy value (sizes computed from it stay known)."""
        import torch

        if isinstance(value, torch.Tensor):
            from tensorgraph.link.pytorch import as_tensor

            return as_tensor(value, dtype)
        return np.asarray(value, dtype=dtype)

    def _side_nodes(self, node, side) -> list:
        """The nodes of one side of an ifelse, those of the ifelse nodes inside it included."""
        from tensorgraph.ifelse import IfElse

        found = []
        for inner in self.blocks.get((node, side), []):
            found.append(inner)
            if isinstance(inner.op, IfElse):
                found += self._side_nodes(inner, 0) + self._side_nodes(inner, 1)
        return found

    def cond(self, node, condition, env):
        """Only the side taken computes its own nodes: the ``cond`` operator (``torch.cond``'s)
        over the two sides. Each side gets the tensors it reads from outside as operands."""
        import torch

        from tensorgraph.link.pytorch import as_tensor

        inside = {o for k in (0, 1) for m in self._side_nodes(node, k) for o in m.outputs}
        outside = []
        for k in (0, 1):
            for var in [i for m in self._side_nodes(node, k) for i in m.inputs] + \
                    list(self.chosen(node, k)):
                if var not in inside and not isinstance(var, Constant) and var not in outside \
                        and isinstance(env.get(var), torch.Tensor):
                    outside.append(var)

        def side(k):
            def branch(*operands):
                child = dict(env)
                child.update(zip(outside, operands))
                with checks_scope(node) as scope:
                    results = self.side(node, k, child)
                # a side's output may not be one of its operands: torch.cond refuses aliases
                return tuple(as_tensor(v).clone() for v in results) + (scope.result(),)
            return branch

        # the operator itself, not torch.cond: torch.cond hands the sides to TorchDynamo,
        # which cannot trace this evaluator (it keeps Python state); inside make_fx, the
        # operator traces each side with make_fx, as everything else here
        from torch._higher_order_ops.cond import cond_op

        predicate = as_tensor(condition) != 0
        try:
            *results, code = cond_op(predicate, side(0), side(1),
                                     tuple(env[v] for v in outside))
        except Exception as exc:  # noqa: BLE001 - torch's message says what differs
            if "metadata" in str(exc) or "same" in str(exc):
                raise ValueError(f"PyTorch computes both sides of an ifelse with the same "
                                 f"shapes and dtypes; here they differ ({exc})") from None
            raise
        current_checks().merge(code)
        return tuple(results)


# ----------------------------------------------------------------------------------------------
# The compile cache


_cache_ready: list = []
_cache_lock = threading.Lock()


def _use_cache_dir() -> None:
    """Inductor's caches under ``<compiledir>/torch`` (see the module docstring). Inductor
    reads its directory from the environment, so this sets TORCHINDUCTOR_CACHE_DIR, unless the
    process set it to a directory of its own before. The variable is read before torch is
    imported here: torch writes its own choice into it (the absolute path of an empty value,
    the current directory) the first time it asks for the directory."""
    with _cache_lock:
        if _cache_ready:
            return
        current = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or None  # empty: not set
        require("torch", "pytorch", "PYTORCH")
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        if current is None or os.path.abspath(current) == os.path.abspath(default_cache_dir()):
            from tensorgraph.link.c import cachedir

            path = os.path.join(config.compiledir, "torch")
            cachedir.prepare(path)
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
        # else: the user's own cache, left alone
        _cache_ready.append(True)


def hold_loop(loop) -> None:
    """Keep ``loop`` (a ``scan.StepLoop`` the graph being traced calls) as long as the
    compiled graph (the operator's table holds it weakly)."""
    loops = getattr(_TRACING, "loops", None)
    if loops is None:
        raise RuntimeError("a PyTorch loop is traced outside the trace of a program")
    if loop not in loops:
        loops.append(loop)


class _Compiled:
    """One signature's compiled graph, the run-time checks its trace registered, its FX graph
    and the code Inductor wrote, and the loops it calls (``scan.StepLoop``: their steps are
    compiled with it)."""

    __slots__ = ("function", "registry", "graph_module", "fx_code", "signature",
                 "inductor_code", "compiled", "loops")

    def __init__(self, function, registry, graph_module, signature, loops=()):
        self.function = function
        self.registry = registry
        self.graph_module = graph_module
        self.fx_code = graph_module.code.strip()  # as traced, before Inductor's passes
        self.signature = signature
        self.inductor_code: list = []
        self.compiled = False
        self.loops = list(loops)


def _counter(name: str) -> int:
    from torch._dynamo.utils import counters

    return int(counters["inductor"][name])


def _tracing_context():
    """The tracing context TorchDynamo would give Inductor: its FX graph cache (on disk) keys
    graphs by their shape environment and without one bypasses the cache ('No shape env')."""
    from torch._guards import TracingContext, tracing
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    return tracing(TracingContext(FakeTensorMode(shape_env=ShapeEnv())))


def _has_higher_order_ops(graph_module) -> bool:
    """Whether the FX graph calls a higher-order operator (``cond``, the sides of an ifelse)."""
    from torch._ops import HigherOrderOperator

    return any(node.op == "call_function" and isinstance(node.target, HigherOrderOperator)
               for node in graph_module.graph.nodes)


def compile_graph(graph_module, tensors):
    """Inductor's function of an FX graph for arguments like ``tensors`` (a graph calling a
    higher-order operator goes through ``torch.compile``, which compiles at a first call: made
    here, on ``tensors``, without touching the process's random state)."""
    import torch
    from torch._inductor import compile as inductor_compile

    with _COMPILE_LOCK:
        if _has_higher_order_ops(graph_module):
            function = torch.compile(graph_module, fullgraph=True, dynamic=False)
            with torch.random.fork_rng(devices=[]):
                function(*tensors)
            return function
        with _tracing_context():
            return inductor_compile(graph_module, list(tensors))


def _to_tensor(value, torch):
    """A numpy input as a tensor sharing its memory (copied when not C-contiguous)."""
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if not array.flags.c_contiguous or not array.dtype.isnative:
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    if not array.flags.writeable:
        with warnings.catch_warnings():
            # torch warns that it cannot protect read-only memory; the graph never writes it
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(array)
    return torch.from_numpy(array)


# ----------------------------------------------------------------------------------------------
# The program


class TorchProgram(TracedProgram):
    """The graph as one Inductor-compiled FX graph per input signature (see the module
    docstring)."""

    backend = "PyTorch"
    description = "one FX graph compiled by Inductor (torch.compile's compiler)"
    graph_class = GraphFunction

    def __init__(self, fgraph):
        started = perf_counter()
        _use_cache_dir()  # before torch is imported: see there
        torch = require("torch", "pytorch", "PYTORCH")
        self.torch = torch
        super().__init__(fgraph)
        self.out_dtypes = [v.type.dtype for v in self.computed]
        self.seconds["generate"] = perf_counter() - started

    def input_problems(self) -> list:
        from tensorgraph.tensor.random.type import RandomGeneratorType
        from tensorgraph.tensor.type import TensorType

        problems = []
        for var in self.fgraph.inputs:
            if not isinstance(var.type, (TensorType, RandomGeneratorType)):
                client = next((n for n in self.graph.nodes if var in n.inputs), None)
                if client is not None:
                    problems.append((client, f"PyTorch takes no input of type {var.type}"))
        return problems

    # -- tracing ------------------------------------------------------------------------------

    def _trace(self, static_values, *tensors):
        """The graph's computed outputs and the check code, from the array inputs (tensors;
        the static ones, Python ints, bound first)."""
        from tensorgraph.link.pytorch import as_tensor

        env = {}
        inputs = self.fgraph.inputs
        tensors = iter(tensors)
        for j, pos in enumerate(self.array_positions):
            env[inputs[pos]] = (np.asarray(static_values[j], dtype=inputs[pos].type.dtype)
                                if j in static_values else next(tensors))
        for pos in self.plan.inputs:
            env[inputs[pos]] = GENERATOR
        TRACE.start()
        with checks_scope(None) as scope:
            self.graph.evaluate(self.graph.top, env)
        return tuple(as_tensor(env[v], d) for v, d in zip(self.computed, self.out_dtypes)) + \
            (scope.result(),)

    # -- compiling ----------------------------------------------------------------------------

    def _signature(self, args):
        return tuple((tuple(a.shape), str(a.dtype)) if hasattr(a, "shape") else a for a in args)

    def _compile(self, args) -> _Compiled:
        """Trace for the shapes and dtypes of ``args`` (tensors, and Python ints for the
        static inputs), once per signature (Inductor compiles the FX graph at the first run,
        ``_run_first``, which needs real tensors)."""
        from torch.fx.experimental.proxy_tensor import make_fx

        key = self._signature(args)
        with self._lock:
            if (found := self._compiled.get(key)) is not None:
                return found
            registry = TRACE.new_registry()
            static_values = {j: args[j] for j in self.static}
            tensors = [a for j, a in enumerate(args) if j not in static_values]
            started = perf_counter()
            with _COMPILE_LOCK:
                _TRACING.loops = []
                try:
                    graph_module = make_fx(functools.partial(self._trace, static_values),
                                           tracing_mode="fake")(*tensors)
                finally:
                    loops, _TRACING.loops = _TRACING.loops, None
            self.seconds["generate"] += perf_counter() - started
            found = self._compiled[key] = _Compiled(None, registry, graph_module, key, loops)
            self._last = found
            return found

    def _run_first(self, compiled, tensors):
        """The first run of a signature: Inductor compiles the FX graph now (timed, with its
        code kept for ``source()``)."""
        from unittest import mock

        from torch._inductor import compile as inductor_compile
        from torch._inductor.graph import GraphLowering

        outputs = None
        with _COMPILE_LOCK:
            if not compiled.compiled:
                hits = _counter("fxgraph_cache_hit")
                started = perf_counter()
                with mock.patch.object(GraphLowering, "save_output_code",
                                       compiled.inductor_code.append):
                    for loop in compiled.loops:  # the step of each loop, once
                        loop.compile()
                    if _has_higher_order_ops(compiled.graph_module):
                        # torch.cond: Inductor takes it only through TorchDynamo's front end
                        function = self.torch.compile(compiled.graph_module, fullgraph=True,
                                                      dynamic=False)
                        outputs = function(*tensors)  # compiles, then runs
                    else:
                        with _tracing_context():
                            function = inductor_compile(compiled.graph_module, list(tensors))
                    compiled.function = function
                self.seconds["compile"] += perf_counter() - started
                self.compiled_from = ("disk" if _counter("fxgraph_cache_hit") > hits
                                      else "compiled")
                compiled.compiled = True  # after the function is in place: _call reads it
        return compiled.function(*tensors) if outputs is None else outputs

    # -- calling ------------------------------------------------------------------------------

    def run(self, values: list) -> list:
        __tracebackhide__ = True  # noqa: F841
        torch = self.torch
        args = [values[k] for k in self.array_positions]
        for j in range(len(args)):
            args[j] = int(args[j]) if j in self.static else _to_tensor(args[j], torch)
        compiled = self._compiled_for(args)
        if compiled is None:
            return self.run(values)
        tensors = [a for j, a in enumerate(args) if j not in self.static]
        copies = {}
        if self.plan.inputs:
            seeds = []
            for pos in self.plan.inputs:
                copy = copies[pos] = copy_generator(values[pos])
                seeds.append(int(copy.integers(1 << 62)))
            seed = int(np.random.SeedSequence(seeds).generate_state(1, np.uint64)[0] >> 1)
            with _RANDOM_LOCK, torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                outputs = self._call(compiled, tensors)
        else:
            outputs = self._call(compiled, tensors)
        *outputs, code = outputs
        if compiled.registry:
            code = int(code)
            if code:
                self._fail(compiled.registry[code - 1])
        return self.output_plan.gather(self._arrays(outputs, tensors), values, copies)

    def _call(self, compiled, tensors):
        if not compiled.compiled:
            return self._run_first(compiled, tensors)
        return compiled.function(*tensors)

    @staticmethod
    def _arrays(outputs, tensors) -> list:
        """The output tensors as numpy arrays, copied where one would share memory with an
        input (the caller's array) or an earlier output, or is a broadcast (stride 0)."""
        import torch

        taken = {t.untyped_storage().data_ptr() for t in tensors if t.numel()}
        arrays = []
        for t in outputs:
            if t.numel() and (t.untyped_storage().data_ptr() in taken or 0 in t.stride()):
                t = t.clone(memory_format=torch.contiguous_format)
            if t.numel():
                taken.add(t.untyped_storage().data_ptr())
            arrays.append(t.numpy())
        return arrays

    # -- showing ------------------------------------------------------------------------------

    def source(self) -> str:
        """The FX graph of the last traced signature and the code Inductor wrote for it
        (PyTorch traces and compiles per input shapes: before the first call there is none)."""
        last = self._last
        if last is None:
            return ("# PyTorch traces and compiles this graph at its first call, for the shapes\n"
                    "# of that call's inputs; call the function once to see the program.")
        shapes = ", ".join(f"{d}{list(s)}" if isinstance(s, tuple) else str(s)
                           for s, d in (a if isinstance(a, tuple) else (a, "int")
                                        for a in last.signature)) or "no arguments"
        text = (f"# FX graph (aten operations) for inputs {shapes}\n"
                f"{last.fx_code}\n")
        for loop in last.loops:
            text += "\n" + loop.source()
        if last.inductor_code:
            text += "\n# Inductor's code for it (what the function runs)\n" + \
                "\n".join(last.inductor_code)
        elif last.compiled:
            text += "\n# Inductor's code: not shown (Inductor found it in its cache)\n"
        return text


@registered_linker
class TorchLinker(WholeGraphLinker):
    """Registered as the linker 'pytorch' (mode 'PYTORCH')."""

    name = "pytorch"
    program = TorchProgram


#: PyTensor's spelling of the class
PytorchLinker = TorchLinker
