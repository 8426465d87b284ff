"""What ``function()`` is doing while it compiles, for whoever listens (the notebook's
``%%tg_compile`` shows progress and a report from it), and the record it leaves behind.

``function()`` reports ``start``, then ``phase`` events (``rewriting``, ``generating C``,
``compiling`` with the number of C translation units, ``loading``), then ``done`` with a
``CompileRecord``; every compiled function keeps its record as ``f.maker.compile_record``.
Listeners are called in the compiling thread, in order; with none registered an event costs
one list test. The module is in the link layer, below ``tensorgraph.compile``, because code
generation (``link/c``) reports phases too.
"""

from __future__ import annotations

import contextlib
import threading
import time

__all__ = ["CompileRecord", "listening", "emit", "silenced"]

_listeners: list = []
_quiet = threading.local()


@contextlib.contextmanager
def listening(callback):
    """Call ``callback(event, info)`` for every compile event inside the block."""
    _listeners.append(callback)
    try:
        yield callback
    finally:
        _listeners.remove(callback)


@contextlib.contextmanager
def silenced():
    """No events from this thread inside the block (a background compile: its phases belong
    to no ``function()`` call a listener waits on)."""
    _quiet.on = True
    try:
        yield
    finally:
        _quiet.on = False


def emit(event: str, **info) -> None:
    """Tell the listeners (none: nothing happens)."""
    if _listeners and not getattr(_quiet, "on", False):
        for callback in list(_listeners):
            callback(event, info)


class CompileRecord:
    """How one function was compiled: settings, graph sizes, rewrite steps, times, C modules.

    Times are seconds: ``rewrite`` (the mode's rewrites), ``generate`` (writing the C code),
    ``compile`` (finding the C functions in memory or the cache, else running the compiler),
    ``link`` (everything ``create()`` did: the two before plus loading and the thunks).
    ``modules``: ``"compiled"``, ``"disk"`` (found in the module cache), ``"memory"`` (loaded
    before in this process) or None (no C).

    ``rewritten_from`` and ``generated_from``: None when the rewriting or the C was done
    now, ``"memory"`` or ``"disk"`` when it was kept from an earlier compile of the same graph
    (compile/rewrite_cache.py, link/c/codegen_cache.py). ``first_call_seconds``: the
    function's first call, once it returned (None before). ``split()`` gives all of it.

    A whole-graph back end (modes JAX, NUMBA) sets ``backend`` ('JAX', 'Numba'); then
    ``generate`` is writing (and, for JAX, tracing) its program, ``compile`` the back end's
    compile, ``modules`` ``"compiled"`` or ``"disk"`` (its own cache), and None for JAX when
    the input shapes are open: JAX compiles at the first call for each input shapes.
    """

    def __init__(self, maker, vm, mode_name: str, rewrite_seconds: float, link_seconds: float):
        mode = maker.mode
        history = getattr(maker.fgraph, "rewrite_history", None)
        cgraph = getattr(vm, "cgraph", None)
        self.name = maker.name or ""
        self.mode = mode_name
        self.optimizer = mode.optimizer
        self.linker = mode.linker_name
        self.nodes_before = history.original_node_count if history is not None else None
        self.nodes_after = len(maker.fgraph.apply_nodes)
        self.steps = len(history) if history is not None else 0
        self.rewrite_seconds = rewrite_seconds
        self.rewrite_recorded = history.total_seconds if history is not None else 0.0
        self.link_seconds = link_seconds
        times = getattr(cgraph, "seconds", {}) if cgraph is not None else {}
        # a whole-graph back end (JAX, Numba): its program's own times and where it came from
        self.backend = getattr(vm, "backend", None)
        program = getattr(vm, "program", None) if self.backend else None
        if program is not None:
            times = program.seconds
        self.backend_description = getattr(program, "description", "")
        self.generate_seconds = times.get("generate", 0.0)
        self.compile_seconds = times.get("compile", 0.0)
        self.rewritten_from = getattr(maker, "rewritten_from", None)
        self.generated_from = getattr(cgraph, "generated_from", None)
        self.first_call_seconds = None
        self.c_nodes = len(cgraph.c_nodes) if cgraph is not None else 0
        self.py_nodes = len(vm.nodes) - self.c_nodes
        self.modules = getattr(cgraph, "found", None) if self.c_nodes else None
        if program is not None:
            self.modules = program.compiled_from
        self.units = getattr(cgraph, "units_compiled", 0) if cgraph is not None else 0
        #: where the function runs (``Function.tier``, kept up to date by the function):
        #: 'quick' when its first calls run on what was ready (cached C, the quick tier's
        #: C, numpy where it is exact: link/c/quick.py) while the optimized code compiles
        #: (config.compile__tiers), with the compile's estimated seconds, and for good when
        #: that code could not be built (``tier_error`` says why); 'python' when a C linker
        #: runs every node in Python (``tier_reason``: config.cxx cannot be used);
        #: 'optimized' otherwise
        self.tier = getattr(vm, "tier", "optimized")
        self.tier_estimate = 0.0
        self.tier_error = ""
        self.tier_reason = getattr(vm, "tier_reason", "")
        self.quick_nodes = 0
        if self.tier == "quick":
            kinds = [getattr(t, "kind", "py") for t in vm.thunks]
            self.c_nodes, self.quick_nodes = kinds.count("c"), kinds.count("quick")
            self.py_nodes = len(vm.nodes) - self.c_nodes - self.quick_nodes
        self.warnings: list[str] = []
        self.finished = time.time()

    def tier_settled(self, vm=None, error=None) -> None:
        """The function left the quick tier for ``vm``, its optimized VM; or stays on it for
        good: its optimized code could not be built (``error``)."""
        if error is not None:
            first = str(error).strip().splitlines()
            self.tier_error = f"{type(error).__name__}: {first[0] if first else ''}"
            return
        cgraph = getattr(vm, "cgraph", None)
        self.tier = getattr(vm, "tier", "optimized")
        self.c_nodes = len(cgraph.c_nodes) if cgraph is not None else 0
        self.quick_nodes = 0
        self.py_nodes = len(vm.nodes) - self.c_nodes
        self.modules = getattr(cgraph, "found", None) if self.c_nodes else None
        self.units = getattr(cgraph, "units_compiled", 0) if cgraph is not None else 0

    @property
    def total_seconds(self) -> float:
        return self.rewrite_seconds + self.link_seconds

    @property
    def load_seconds(self) -> float:
        """Linking time that is neither writing nor compiling C: loading, thunks, storage."""
        return max(0.0, self.link_seconds - self.generate_seconds - self.compile_seconds)

    def split(self) -> list[tuple[str, float | None, str]]:
        """``(phase, seconds, where from)`` of rewriting, generating C, compiling C, loading
        and the first call (seconds None: not called yet). Where from: ``"now"``, ``"kept in
        memory"`` / ``"kept on disk"`` (an earlier compile of the same graph), for compiling
        ``"compiled"``, ``"module cache"``, ``"already loaded"``, or ``""`` (no C)."""
        kept = {None: "now", "memory": "kept in memory", "disk": "kept on disk"}
        modules = {"compiled": "compiled", "disk": "module cache", "memory": "already loaded"}
        phases = [("rewriting", self.rewrite_seconds, kept.get(self.rewritten_from, "now"))]
        if self.c_nodes and not self.backend:
            phases += [("generating C", self.generate_seconds,
                        kept.get(self.generated_from, "now")),
                       ("compiling C", self.compile_seconds, modules.get(self.modules, ""))]
        return phases + [("loading", self.load_seconds, ""),
                         ("first call", self.first_call_seconds, "")]

    def summary(self) -> str:
        """One line: name, settings, nodes before -> after, steps, where the time went (and
        what came from a cache)."""
        before = "?" if self.nodes_before is None else str(self.nodes_before)
        parts = [f"rewriting {self.rewrite_seconds * 1e3:.0f} ms"
                 + _kept(self.rewritten_from)]
        if self.backend:
            return self._backend_summary(before, parts)
        if self.c_nodes:
            parts += [f"generating C {self.generate_seconds * 1e3:.0f} ms"
                      + _kept(self.generated_from),
                      f"compiling C {self.compile_seconds * 1e3:.0f} ms"]
        parts.append(f"loading {self.load_seconds * 1e3:.0f} ms")
        where = {"compiled": f"compiled ({self.units} unit{'s' if self.units != 1 else ''})",
                 "disk": "found in the module cache", "memory": "already loaded"}
        runs = []
        if self.tier == "quick":
            runs.append(f"running on the quick tier ({self.c_nodes} node"
                        f"{'s' if self.c_nodes != 1 else ''} in C from the cache, "
                        f"{self.quick_nodes} in quick C, {self.py_nodes} in numpy), "
                        + (f"its optimized code could not be built ({self.tier_error})"
                           if self.tier_error else
                           f"optimized code ready in ~{max(0.1, self.tier_estimate):.1f} s"))
        elif self.tier == "python":
            runs.append(f"{_count(self.py_nodes, 'node')} in Python: {self.tier_reason}")
        elif self.c_nodes:
            runs.append(f"{_count(self.c_nodes, 'node')} in C, {where.get(self.modules, 'no module')}")
        if self.py_nodes and self.tier == "optimized":
            runs.append(f"{self.py_nodes} in Python")
        return (f"{self.name or '(unnamed)'}: mode {self.mode}, optimizer {self.optimizer}, "
                f"linker {self.linker}; {before} -> {self.nodes_after} nodes, "
                f"{_count(self.steps, 'rewrite step')}; {self.total_seconds * 1e3:.0f} ms: {', '.join(parts)}; "
                f"{'; '.join(runs)}"
                + (f"; first call {self.first_call_seconds * 1e3:.0f} ms"
                   if self.first_call_seconds is not None else "")
                + (f"; {_count(len(self.warnings), 'warning')}" if self.warnings else ""))

    def _backend_summary(self, before: str, parts: list) -> str:
        parts += [f"writing the {self.backend} program {self.generate_seconds * 1e3:.0f} ms",
                  f"compiling it {self.compile_seconds * 1e3:.0f} ms"]
        where = {"compiled": "compiled now", "disk": f"found in {self.backend}'s cache",
                 None: "compiled at the first call for each input shapes"}
        return (f"{self.name or '(unnamed)'}: mode {self.mode}, optimizer {self.optimizer}, "
                f"linker {self.linker}; {before} -> {self.nodes_after} nodes, "
                f"{_count(self.steps, 'rewrite step')}; {self.total_seconds * 1e3:.0f} ms: "
                f"{', '.join(parts)}; the whole graph as {self.backend_description}, "
                f"{where.get(self.modules, self.modules)}"
                + (f"; {_count(len(self.warnings), 'warning')}" if self.warnings else ""))

    def __repr__(self) -> str:
        return f"<CompileRecord {self.summary()}>"



def _kept(where) -> str:
    """`` (kept on disk)``: a phase whose result came from an earlier compile."""
    return f" (kept {'in memory' if where == 'memory' else 'on disk'})" if where else ""


def _count(n: int, noun: str) -> str:
    """``1 node``, ``2 nodes``: summaries read as sentences."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
