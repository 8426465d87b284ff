"""The C linkers: 'c|py', 'c|py_nogc', 'c', 'cvm', 'cvm_nogc'.

All of them compile one module per graph (``codegen.CGraph``) and return a ``CVM``, a
``tensorgraph.link.vm.VM`` whose thunks run the nodes' compiled C functions (``thunk.kind ==
'c'``) or, for nodes without C, their ``perform`` (``'py'``). They differ in how a call runs:

* 'c|py', 'c|py_nogc': the VM's Python loop over the thunks (with or without gc of the cells);
* 'cvm': the whole graph in one C call (the loop over nodes in C, intermediates released right
  after their last reader), when every node has C and none is lazy; 'cvm_nogc' keeps the
  intermediates' buffers and reuses them on the next call; 'c' too, with the nodes as
  straight-line code in one C function (direct calls the compiler may inline) instead of a
  loop over a table of node functions. Otherwise (a
  node without C, an ``ifelse``) they run the Python loop over the same thunks, so a lazy node
  still computes only the branch it takes.

Hooks (``vm.pre_hook`` / ``vm.post_hook``) always run node by node through the thunks: the same
C functions as the whole-graph run. ``Function`` calls the C entry point ``vm.c_call`` directly
(input checks, shared values, updates and output copies in C) when the VM offers one.

For the profiler (``tensorgraph/compile/profiling.py``), a whole-graph VM times its nodes in C
(``supports_node_times``): once ``collect_node_times`` is set, the C loop reads the monotonic
clock around every node and adds to ``node_times`` / ``node_calls``, with the last call's
timeline in ``last_node_starts`` and the loop's own total in ``loop_seconds``; unprofiled
calls never read the clock. ``cache_stats`` says whether the module was compiled for this
function or found in the module cache.
"""

from __future__ import annotations

import warnings

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.errors import reraise_with_node
from tensorgraph.graph.op import node_thunk
from tensorgraph.link.registry import register_linker
from tensorgraph.link.c.compiler import (
    CompilationUnavailable,
    CompileError,
    CompilerUnusableWarning,
    compiler_problem,
)
from tensorgraph.link.vm import VM, PyVMLinker, prepare_storage

_warned_no_compiler: list[str] = []  # the problems already reported by a warning


class CVM(VM):
    """A VM with C thunks and, for whole-graph C, a C run of the whole graph.

    ``c_call`` is the C function implementing a whole ``Function`` call, or None while hooks
    are set (or the graph is not all C, or no Function configured it).
    """

    def __init__(self, fgraph, nodes, thunks, storage_map, compute_map, allow_gc, entry, cgraph):
        self._pre = self._post = None
        self._entry = entry or {}
        self._trusted = False
        self._configured = False
        self.c_call = None
        super().__init__(fgraph, nodes, thunks, storage_map, compute_map, allow_gc)
        self.cgraph = cgraph
        self._run_all = self._entry.get("run_all")
        self.whole_graph = self._run_all is not None
        found = cgraph.found
        self.cache_stats = {"hits": int(found in ("memory", "disk")),
                            "misses": int(found == "compiled"),
                            "from_memory": int(found == "memory"),
                            "from_disk": int(found == "disk")}
        self._collect = False
        self.node_times = self.node_calls = self.last_node_starts = self.loop_seconds = None

    def entry_point(self, name: str):
        """The workspace's entry point ``name`` (glue.h: ``run_all``, ``run_steps``...), or
        None when this graph's workspace has none (it does not run whole in C): how code
        outside the VM, such as scan's loop in C (``scan_loop.py``), calls the glue."""
        return self._entry.get(name)

    # -- profiling: node times measured by the C loop ------------------------------------

    @property
    def supports_node_times(self) -> bool:
        """Whether the C loop can time the nodes (whole-graph runs; the others are timed
        through the hooks)."""
        return self.whole_graph

    @property
    def collect_node_times(self) -> bool:
        return self._collect

    @collect_node_times.setter
    def collect_node_times(self, value: bool) -> None:
        value = bool(value)
        if value and not self.whole_graph:
            raise ValueError(f"{self!r} runs node by node in Python and cannot time its nodes "
                             "in C (supports_node_times is False); time it through the hooks")
        if value and self.node_times is None:
            n = len(self.nodes)
            self.node_times = np.zeros(n)
            self.node_calls = np.zeros(n, dtype=np.int64)
            self.last_node_starts = np.full(n, -1.0)
            self.loop_seconds = np.zeros(1)
        if self.whole_graph:
            if value:
                self._entry["profile"](self.node_times, self.node_calls,
                                       self.last_node_starts, self.loop_seconds)
            else:
                self._entry["profile"](None)
        self._collect = value

    # -- buffer counters (for tests of the gc semantics) ---------------------------------

    def buffer_counters(self, track: bool = False) -> dict:
        """Counters of the whole-graph workspace: ``allocations`` (buffers allocated by the
        kernels so far; reused buffers are not counted), ``held`` (distinct buffers the
        intermediates hold now) and ``peak_held`` (the most they held after any node since
        the previous ``buffer_counters(track=True)``; 0 unless tracking). ``track`` turns
        that per-node count on (off by default: it costs a scan of the workspace per node).
        """
        if not self.whole_graph:
            raise ValueError(f"{self!r} has no whole-graph workspace to count buffers in")
        return self._entry["debug_state"](bool(track))

    # hooks switch the whole-graph C call off: they need node-by-node runs
    @property
    def pre_hook(self):
        return self._pre

    @pre_hook.setter
    def pre_hook(self, value):
        self._pre = value
        self._sync()

    @property
    def post_hook(self):
        return self._post

    @post_hook.setter
    def post_hook(self, value):
        self._post = value
        self._sync()

    def _sync(self):
        usable = self._configured and self._pre is None and self._post is None
        self.c_call = (self._entry["call_trusted" if self._trusted else "call"]
                       if usable else None)

    def make_call(self, convert, n_explicit: int, borrowed, n_returned: int,
                  unpack_single: bool, update_cells) -> bool:
        """Let ``c_call`` run whole Function calls (False if this VM cannot).

        ``convert(pos, value)`` returns the value converted to graph input ``pos``'s type or
        raises the user-facing TypeError; ``borrowed`` has one flag per graph output.
        """
        if not self.whole_graph:
            return False
        shared = tuple(self.input_storage[n_explicit:])
        self._entry["configure"](convert, shared, tuple(update_cells),
                                 bytes(int(bool(b)) for b in borrowed), n_explicit,
                                 n_returned, bool(unpack_single))
        self._configured = True
        self._sync()
        return True

    def set_trust_input(self, trusted: bool) -> None:
        self._trusted = bool(trusted)
        self._sync()

    def __call__(self):
        __tracebackhide__ = True  # noqa: F841 - IPython shows the user's frame first
        if self._run_all is None or self._pre is not None or self._post is not None:
            return super().__call__()
        outputs = self._run_all(*[cell[0] for cell in self.input_storage])
        for cell, value in zip(self.output_storage, outputs):
            cell[0] = value

    def __repr__(self):
        how = "whole-graph C" if self.whole_graph else "per-node"
        gc = "gc" if self.allow_gc else "no gc"
        return f"<CVM: {len(self.nodes)} nodes, {how}, {gc}>"


def _c_thunk(node_call, k, node, storage_map, compute_map):
    """A thunk running module node ``k`` (``node``) on its storage cells."""
    input_cells = [storage_map[v] for v in node.inputs]
    output_cells = [storage_map[v] for v in node.outputs]
    output_flags = [compute_map[v] for v in node.outputs]

    if len(output_cells) == 1:
        (cell,), (flag,) = output_cells, output_flags

        def thunk():
            cell[0] = node_call(k, *[c[0] for c in input_cells])[0]
            flag[0] = True
    else:
        def thunk():
            values = node_call(k, *[c[0] for c in input_cells])
            for c, value in zip(output_cells, values):
                c[0] = value
            for f in output_flags:
                f[0] = True

    return node_thunk(thunk, node, input_cells, output_cells, "c")


class CLinker:
    """Links a FunctionGraph into a ``CVM`` (see the module docstring).

    ``allow_gc=None`` follows ``config.allow_gc``; ``whole_graph`` lets the VM run all-C graphs
    in one C call.
    """

    def __init__(self, name: str, allow_gc: bool | None, whole_graph: bool):
        self.name = name
        self.allow_gc = allow_gc
        self.whole_graph = whole_graph

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        """The VM running ``fgraph``: C where nodes have it; every node in Python (one warning
        per process) when the compiler cannot build C at all (docs/c_backend.md). ``cxx=''``
        set by the user (a compiler was found) asks for that, as in PyTensor: no warning."""
        problem = compiler_problem(probe=False)  # cheap: cxx empty, missing, or known broken
        if not problem:
            try:
                return self._make_c_vm(fgraph, input_storage, storage_map)
            except (CompileError, CompilationUnavailable):
                problem = compiler_problem()  # a broken compiler, or broken generated code?
                if not problem:
                    raise
        fix = "set cxx to a C compiler such as /usr/bin/gcc" + (
            f" or fix gcc__cxxflags={config.gcc__cxxflags!r}" if config.gcc__cxxflags else "")
        if self.name == "c":
            raise CompilationUnavailable(
                f"linker 'c' needs a working C compiler, but config.cxx={config.cxx!r} cannot "
                f"be used: {problem}. To fix it, {fix}; or use the linker 'cvm' (it runs "
                "Python when C is unavailable) or 'py'.")
        chosen = not config.cxx and not config.info("cxx").is_default  # cxx='' set on purpose
        if problem not in _warned_no_compiler and not chosen:
            _warned_no_compiler.append(problem)
            warnings.warn(
                f"tensorgraph: the C compiler config.cxx={config.cxx!r} cannot be used "
                f"({problem}), so the C linkers ('cvm' of FAST_RUN, 'cvm_nogc', 'c|py') run "
                f"every node in Python (numpy) in this process; to fix it, {fix}.",
                CompilerUnusableWarning, stacklevel=4)
        vm = PyVMLinker(self.allow_gc, self.name).make_vm(fgraph, input_storage, storage_map)
        vm.tier = "python"  # what f.tier, its repr and its compile record say, and why
        vm.tier_reason = f"config.cxx={config.cxx!r} cannot be used ({problem})"
        return vm

    def make_tiered(self, fgraph, input_storage, final_storage):
        """``(vm, job)``: a VM to run at once and a ``TierJob`` building the optimized one
        (on ``final_storage``: fresh cells for the explicit inputs, the same shared cells), or
        ``(vm, None)`` when the optimized VM is ready at once (nothing to compile), or
        ``(None, None)`` when this linker does not tier (only 'cvm' and 'cvm_nogc' do; see
        config.compile__tiers). The quick VM runs node by node: the C of the node functions
        already in the module cache, the quick thunks of the others (``link/c/quick.py``:
        graph-independent C giving the optimized bits, compiled now where missing, or
        ``perform`` where it is exact)."""
        from tensorgraph.link.c.codegen import CGraph
        from tensorgraph.link.c.quick import QuickCode
        from tensorgraph.link.tiers import TierJob

        if self.name not in ("cvm", "cvm_nogc") or compiler_problem(probe=False):
            return None, None
        nodes = fgraph.toposort()
        cgraph = CGraph(fgraph, nodes, whole_graph=not any(_is_lazy(n) for n in nodes))
        if not cgraph.c_nodes or not cgraph.needs_compiler():
            return self._make_c_vm(fgraph, input_storage, None, cgraph=cgraph), None
        if compiler_problem():  # probed once per process, before its first compile: the
            return None, None   # caller's make_vm warns now, not a background build later
        ready = cgraph.ready_now() or {}
        code = QuickCode(nodes, skip=[cgraph.c_nodes[k] for k in ready])
        if code.compiled and not cgraph.needs_compiler():  # it built all the graph needs
            return self._make_c_vm(fgraph, input_storage, None, cgraph=cgraph), None
        quick = self._make_c_vm(fgraph, input_storage, None, cgraph=cgraph, ready=ready,
                                quick=code)
        job = TierJob(lambda: self._make_c_vm(fgraph, final_storage, None, cgraph=cgraph),
                      cgraph.estimate_seconds(ready))
        job.make_quick = lambda storage: self._make_c_vm(fgraph, storage, None, cgraph=cgraph,
                                                         ready=ready, quick=code)
        return quick, job

    def _make_c_vm(self, fgraph, input_storage, storage_map, cgraph=None, ready=None,
                   quick=None):
        """The VM; ``cgraph``: its C already generated; ``ready``: make the quick tier's VM
        (only the node functions in ``ready`` run the graph's C; the others the quick
        thunks of ``quick``, a ``QuickCode`` of the graph's nodes, made here if None)."""
        from tensorgraph.link.c.codegen import CGraph
        from tensorgraph.link.c.quick import QuickCode

        allow_gc = config.allow_gc if self.allow_gc is None else self.allow_gc
        nodes, storage_map, compute_map = prepare_storage(fgraph, input_storage, storage_map)

        if cgraph is None:
            lazy = any(_is_lazy(n) for n in nodes)
            cgraph = CGraph(fgraph, nodes, whole_graph=self.whole_graph and not lazy,
                            straight=self.name == "c")
        c_index = (cgraph.index if ready is None else
                   {node: k for node, k in cgraph.index.items() if k in ready})
        entry = None
        if c_index:
            positions = {node: i for i, node in enumerate(nodes)}

            def report(k, message, inputs, whole):
                __tracebackhide__ = True  # noqa: F841
                node = cgraph.c_nodes[k]
                exc = c_error(message)
                if whole:
                    reraise_with_node(exc, node, list(inputs), positions[node], fgraph=fgraph)
                raise exc

            entry = (cgraph.workspace(gc=allow_gc, report=report) if ready is None else
                     cgraph.partial_workspace(ready, gc=allow_gc, report=report))
        if ready is not None and quick is None:
            quick = QuickCode(nodes, skip=c_index)
        quick_call = quick.new_call() if quick is not None else None
        thunks = []
        for node in nodes:
            k = c_index.get(node)
            if k is None:
                thunk = (quick.thunk(node, storage_map, compute_map, quick_call)
                         if quick_call else None)
                thunks.append(thunk or node.op.make_py_thunk(node, storage_map, compute_map))
            else:
                thunks.append(_c_thunk(entry["node_call"], k, node, storage_map, compute_map))
        if (ready is not None or not cgraph.whole_graph) and entry is not None:
            entry = {"node_call": entry["node_call"]}
        vm = CVM(fgraph, nodes, thunks, storage_map, compute_map, allow_gc, entry, cgraph)
        vm.tier = "quick" if ready is not None else "optimized"
        return vm

    def __repr__(self):
        return f"CLinker(name={self.name!r}, allow_gc={self.allow_gc})"


def _is_lazy(node) -> bool:
    from tensorgraph.ifelse import IfElse

    return isinstance(node.op, IfElse) or getattr(node.op, "lazy", False)


register_linker("c|py", lambda: CLinker("c|py", None, whole_graph=False))
register_linker("c|py_nogc", lambda: CLinker("c|py_nogc", False, whole_graph=False))
register_linker("cvm", lambda: CLinker("cvm", None, whole_graph=True))
register_linker("cvm_nogc", lambda: CLinker("cvm_nogc", False, whole_graph=True))
register_linker("c", lambda: CLinker("c", False, whole_graph=True))


#: Exception classes a C kernel may name with a ``"IndexError: "``-style message prefix.
_C_ERROR_TYPES = {"IndexError": IndexError, "TypeError": TypeError, "ValueError": ValueError,
                  "AssertionError": AssertionError, "LinAlgError": np.linalg.LinAlgError}


def c_error(message: str) -> Exception:
    """The exception for a kernel's ``tg_error`` message: ``ValueError`` unless the message
    starts with one of ``_C_ERROR_TYPES`` and ``": "``, so C raises what ``perform`` raises."""
    kind, sep, rest = message.partition(": ")
    exc_type = _C_ERROR_TYPES.get(kind) if sep else None
    return exc_type(rest) if exc_type else ValueError(message)
