"""The 'jax' linker: a FunctionGraph as one ``jax.jit``, compiled once per input shapes.

Linking looks up every node's implementation (``tensorgraph.link.jax``) and raises one
``UnsupportedOpsError`` listing every op without one. The program is a Python function that
evaluates the nodes in order on JAX values; ``jax.jit`` traces it once per signature (the
shapes and dtypes of the inputs) and XLA compiles the trace. When every input's shape is known
when linking (static types), that happens while linking; otherwise at the first call with
each new signature (``program.seconds`` adds up both: tracing under ``"generate"``, XLA under
``"compile"``).

Sizes computed from input values: JAX fixes array sizes when it traces. When a size turns out
to depend on the value of an input (``zeros(n)``, a draw of ``size=(n, 3)``), the program passes
the integer scalar inputs as static arguments from then on: each new value of them traces and
compiles again (once; later calls with that value reuse it). A graph without such inputs gets
a ``StaticShapeError`` naming the node.

64-bit types: the program traces, compiles and runs inside ``jax.enable_x64(True)`` (a
thread-local setting), so float64 and int64 graphs stay 64-bit without changing JAX's
defaults for the rest of the process.

Values crossing the boundary: inputs go in as numpy arrays; outputs come back as read-only
numpy views of JAX's buffers (no copy; ``Function`` copies the user's outputs into writable
arrays, update values go to the shared variables as they are). Random generators: each call
draws a seed from a copy of each input generator (so the call never changes it), the graph
draws with JAX keys made from those seeds, and a generator output (a shared generator's
update) is that advanced copy.

Persistent cache: unless the process already set ``jax_compilation_cache_dir``, XLA's
executables are cached under ``<compiledir>/jax`` (every compile, however quick), so a new
process finds them there.
"""

from __future__ import annotations

import os
from time import perf_counter

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.link.jax import TABLE
from tensorgraph.link.jax.elemwise import LIBRARY
from tensorgraph.link.jax.shape import StaticShapeError
from tensorgraph.link.optional import require
from tensorgraph.link.random_plan import copy_generator
from tensorgraph.link.traced import Checks, Trace, TracedGraph, TracedProgram
from tensorgraph.link.whole_graph import WholeGraphLinker, registered_linker

__all__ = ["JaxLinker", "JaxProgram", "current_checks"]


class _Checks(Checks):
    """Run-time checks folded into a ``jnp.int32`` code (see ``tensorgraph.link.traced``)."""

    array_library = LIBRARY

    @staticmethod
    def traced(value) -> bool:
        import jax

        return isinstance(value, jax.core.Tracer)



TRACE = Trace("JAX", _Checks)
current_checks = TRACE.current
#: ``with checks_scope(node) as scope``: a scope of checks of its own (a side of ``lax.cond``,
#: a loop body), whose ``scope.result()`` the function JAX traces on its own returns
checks_scope = TRACE.scope


_cache_ready: list = []


def _use_cache_dir(jax) -> None:
    """XLA's persistent cache under ``<compiledir>/jax`` (see the module docstring)."""
    if _cache_ready:
        return
    _cache_ready.append(True)
    if jax.config.jax_compilation_cache_dir:
        return  # the user's own cache: leave it
    from tensorgraph.link.c import cachedir

    path = os.path.join(config.compiledir, "jax")
    cachedir.prepare(path)
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


class _Compiled:
    """One signature's XLA executable and the run-time checks its trace registered."""

    __slots__ = ("executable", "registry", "lowered", "signature")

    def __init__(self, executable, registry, lowered, signature):
        self.executable = executable
        self.registry = registry
        self.lowered = lowered
        self.signature = signature


class GraphFunction(TracedGraph):
    """A FunctionGraph evaluated on JAX values while tracing (``tensorgraph.link.traced``):
    the program's graph, or the inner graph of an op (``IndexLoop``)."""

    backend = "JAX"
    trace = TRACE

    implementation = staticmethod(TABLE.lookup)

    @staticmethod
    def cast(value, dtype):
        import jax.numpy as jnp

        return jnp.asarray(value, dtype=dtype)

    def cond(self, node, condition, env):
        """Only the side taken computes its own nodes: ``lax.cond`` over the two sides."""
        import jax
        import jax.numpy as jnp

        def side(k):
            def branch():
                with checks_scope(node) as scope:
                    results = self.side(node, k, env)
                return results, scope.result()
            return branch

        try:
            results, code = jax.lax.cond(jnp.asarray(condition) != 0, side(0), side(1))
        except TypeError as exc:
            raise ValueError(f"JAX computes both sides of an ifelse with the same shapes and "
                             f"dtypes; here they differ ({exc})") from None
        current_checks().merge(code)
        return results


class JaxProgram(TracedProgram):
    """The graph as one jitted function (see the module docstring)."""

    backend = "JAX"
    description = "one jax.jit"
    readonly_outputs = True
    graph_class = GraphFunction

    def __init__(self, fgraph):
        started = perf_counter()
        jax = require("jax", "jax", "JAX")
        _use_cache_dir(jax)
        self.jax = jax
        super().__init__(fgraph)
        self._jitted = jax.jit(self._trace)
        self.seconds["generate"] = perf_counter() - started
        self._compile_when_shapes_are_known()

    # -- tracing ------------------------------------------------------------------------------

    def _trace(self, *args):
        import jax

        env = {}
        n = len(self.array_positions)
        inputs = self.fgraph.inputs
        for pos, value in zip(self.array_positions, args[:n]):
            env[inputs[pos]] = value
        for pos, seed in zip(self.plan.inputs, args[n:]):
            env[inputs[pos]] = jax.random.key(seed)
        TRACE.start()
        with checks_scope(None) as scope:
            self.graph.evaluate(self.graph.top, env)
        return tuple(env[v] for v in self.computed), scope.result()

    # -- compiling ----------------------------------------------------------------------------

    def _signature(self, args):
        return tuple((a.shape, a.dtype.str) if hasattr(a, "shape") else a for a in args)

    def _scalars_made_static(self) -> None:
        """The static inputs are JAX's static arguments."""
        self._jitted = self.jax.jit(self._trace, static_argnums=self.static)

    def _compile(self, args) -> _Compiled:
        """Trace and compile for the shapes and dtypes of ``args`` (arrays or
        ``jax.ShapeDtypeStruct``), once per signature."""
        import jax

        key = self._signature(args)
        with self._lock:
            if (found := self._compiled.get(key)) is not None:
                return found
            registry = TRACE.new_registry()
            started = perf_counter()
            with jax.enable_x64(True):
                lowered = self._jitted.lower(*args)
                traced = perf_counter()
                executable = lowered.compile()
            self.seconds["generate"] += traced - started
            self.seconds["compile"] += perf_counter() - traced
            self.compiled_from = "compiled"
            found = self._compiled[key] = _Compiled(executable, registry, lowered, key)
            self._last = found
            return found

    def _compile_when_shapes_are_known(self):
        import jax

        avals = []
        for pos in self.array_positions:
            var = self.fgraph.inputs[pos]
            shape = getattr(var.type, "shape", None)
            if shape is None or None in shape:
                return
            avals.append(jax.ShapeDtypeStruct(shape, np.dtype(var.type.dtype)))
        avals += [jax.ShapeDtypeStruct((), np.int64) for _ in self.plan.inputs]
        try:
            self._compile(avals)
        except StaticShapeError:
            self._make_scalars_static()  # sizes need input values: compile at the first call

    # -- calling ------------------------------------------------------------------------------

    def run(self, values: list) -> list:
        __tracebackhide__ = True  # noqa: F841
        args = [values[k] for k in self.array_positions]
        for j in self.static:
            args[j] = int(args[j])
        copies = {}
        for pos in self.plan.inputs:
            copy = copies[pos] = copy_generator(values[pos])
            args.append(np.asarray(copy.integers(1 << 62), dtype=np.int64))
        compiled = self._compiled_for(args)
        if compiled is None:
            return self.run(values)
        if self.static:  # the executable takes the other arguments only
            args = [a for j, a in enumerate(args) if j not in self.static]
        with self.jax.enable_x64(True):
            outputs, code = compiled.executable(*args)
        if compiled.registry:  # reading the code waits for the device: only when it may fail
            code = int(np.asarray(code))
            if code:
                self._fail(compiled.registry[code - 1])
        return self.output_plan.gather([np.asarray(o) for o in outputs], values, copies)

    # -- showing ------------------------------------------------------------------------------

    def source(self) -> str:
        """The jaxpr and the StableHLO of the last compiled signature (JAX compiles per input
        shapes: before the first call of a graph whose shapes are not static, there is none)."""
        import jax

        last = self._last
        if last is None:
            return ("# JAX traces and compiles this graph at its first call, for the shapes of\n"
                    "# that call's inputs (the input types leave some sizes open); call the\n"
                    "# function once to see the program.")
        avals = [jax.ShapeDtypeStruct(a[0], np.dtype(a[1])) if isinstance(a, tuple) else a
                 for a in last.signature]
        registry_before = TRACE.registry
        TRACE.registry = []
        try:
            with jax.enable_x64(True):
                jaxpr = jax.make_jaxpr(self._trace, static_argnums=self.static)(*avals)
        finally:
            TRACE.registry = registry_before
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" if hasattr(a, "shape") else str(a)
                           for a in avals) or "no arguments"
        return (f"# jaxpr for inputs {shapes}\n{jaxpr}\n\n# StableHLO (what XLA compiles)\n"
                f"{last.lowered.as_text()}")


@registered_linker
class JaxLinker(WholeGraphLinker):
    """Registered as the linker 'jax' (mode 'JAX')."""

    name = "jax"
    program = JaxProgram


#: PyTensor's spelling of the class
JAXLinker = JaxLinker
