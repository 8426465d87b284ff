"""``ProfileStats``: where a compiled function spends its time (and memory).

``function(..., profile=True)`` (or ``config.profile``) gives the function a ``ProfileStats``
as ``f.profile``; pass the same ``ProfileStats`` object as ``profile=`` to several functions to
add them up. ``f.profile.summary()`` prints:

* time in calls (``Function.__call__``), in the VM (the node loop) and in the nodes themselves;
* compile time, split into rewriting and linking, with C module cache hits and misses when the
  linker reports them;
* tables by Op class, by Op and by Apply node (% time, cumulative %, time, time per call,
  calls, C or Py, node id, output shapes);
* with ``config.profile_memory``: peak memory of the intermediates with the current settings,
  with ``allow_gc=False`` and without inplace ops; with ``config.profile_optimizer``: the time
  of each rewrite; and tips.

``as_records()`` gives one dict per node for the notebook views; ``to_chrome_trace(path)``
writes a trace that chrome://tracing and Perfetto open.

How node times are measured
---------------------------
By default through the per-node hooks every linker offers (``vm.pre_hook`` /
``vm.post_hook``): a ``perf_counter`` before and after each thunk. A linker whose loop runs
outside Python (``cvm``) should measure the nodes itself, so no Python time is in the figures.
The interface for that:

* the VM sets ``vm.supports_node_times = True``;
* the profiler then sets ``vm.collect_node_times = True`` once, before the first call;
* from then on, the VM adds, after every call, the seconds spent in node ``i`` of ``vm.nodes``
  to ``vm.node_times[i]`` and the number of runs to ``vm.node_calls[i]`` (two numpy arrays of
  ``len(vm.nodes)``, float64 and int64, allocated by the VM and only ever added to);
* optionally, ``vm.last_node_starts`` (float64, seconds from the start of the last call; -1 for
  nodes that did not run) lets ``to_chrome_trace`` show the real timeline of the last call;
* optionally, ``vm.loop_seconds`` (float64 array of one element, only added to) is the time
  of the VM's own loop around the nodes, counted as time in the VM (calls that run whole in
  C never pass through Python, so it cannot be measured from there);
* a linker using a C module cache may expose ``vm.cache_stats = {"hits": n, "misses": n}``
  (modules found in the cache vs compiled while linking this function), optionally with
  ``"from_memory"`` / ``"from_disk"`` splitting the hits (loaded before by this process /
  imported from the cache directory).

The profiler reads these arrays; it never writes them.

Scans: the inner nodes of a scan run in its compiled step, not in the function's VM. The
profile times them there too (the step's VM, natively in C, the loop of iterations included,
or through its hooks) and ``as_records()`` gives, after the scan node's row, one row per inner
node with its time summed over every iteration (``calls`` = iterations, ``node_id`` ``D/B``
as dprint and the graph view name it, ``inside`` = the scan's id); the scan's own row gets
``iterations``, ``inner_seconds`` and ``loop_overhead`` (its time minus its inner nodes': the
loop's bookkeeping, copying each step's outputs into the rows). Inner rows are not added to
the totals (the scan's time holds them); the summary lists them under "Loops".

A whole-graph back end (modes JAX and NUMBA, ``vm.backend`` set) runs the graph as one
compiled function: there are no per-node times to measure. Its profile has the call and VM
(whole graph) times, the back end's own compile times, and says that the node tables are
empty for that reason.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
import weakref
from time import perf_counter

import numpy as np

from tensorgraph.compile.compiled import Function
from tensorgraph.compile.monitormode import add_hooks
from tensorgraph.configdefaults import config
from tensorgraph.graph.ids import graph_ids


class _FunctionRecord:
    """What one linked function contributed: its nodes and their times and calls."""

    def __init__(self, name, maker, vm, link_seconds):
        self.name = name or "<unnamed>"
        self.maker = maker  # its compile_record (set once compiling ends) has the time split
        self.fgraph = maker.fgraph
        self.mode = maker.mode
        self.vm = vm
        self.nodes = list(vm.nodes)
        n = len(self.nodes)
        self.kinds = ["C" if getattr(t, "kind", "py").lower().startswith("c") else "Py"
                      for t in vm.thunks]
        self.allow_gc = bool(getattr(vm, "allow_gc", False))
        history = getattr(maker.fgraph, "rewrite_history", None)
        self.rewrite_seconds = history.total_seconds if history is not None else 0.0
        self.rewrite_steps = len(history) if history is not None else 0
        self.rewrite_profile = getattr(maker.fgraph, "rewrite_profile", None)
        self.link_seconds = link_seconds
        self.cache_stats = getattr(vm, "cache_stats", None)
        self.native = bool(getattr(vm, "supports_node_times", False))
        # a whole-graph back end (JAX, Numba): one compiled function, no per-node thunks
        self.backend = getattr(vm, "backend", None)
        self.calls = 0
        self.call_seconds = 0.0
        self.vm_seconds = 0.0
        self.skip_next = False
        self.shapes = [None] * n
        self.nbytes = [None] * n
        if self.native:
            vm.collect_node_times = True
            self._baseline_times = np.zeros(n)
            self._baseline_calls = np.zeros(n, dtype=np.int64)
            self._baseline_loop = 0.0
        else:
            self.times = [0.0] * n
            self.node_calls = [0] * n
            self.last_starts = [-1.0] * n
            self.last_durations = [0.0] * n
            self.call_started = 0.0

    # -- per-node times, whichever way they are measured ----------------------------------

    def node_times(self) -> np.ndarray:
        if self.native:
            return np.asarray(self.vm.node_times, dtype=float) - self._baseline_times
        return np.asarray(self.times, dtype=float)

    def node_counts(self) -> np.ndarray:
        if self.native:
            return np.asarray(self.vm.node_calls, dtype=np.int64) - self._baseline_calls
        return np.asarray(self.node_calls, dtype=np.int64)

    def loop_seconds(self) -> float:
        """Seconds the VM reports for its own loop (``vm.loop_seconds``), 0 if it does not."""
        loop = getattr(self.vm, "loop_seconds", None) if self.native else None
        return float(loop[0]) - self._baseline_loop if loop is not None else 0.0

    def reset(self):
        """Forget the node times so far (``profiling__ignore_first_call``)."""
        if self.native:
            self._baseline_times = np.array(self.vm.node_times, dtype=float)
            self._baseline_calls = np.array(self.vm.node_calls, dtype=np.int64)
            self._baseline_loop += self.loop_seconds()
        else:
            n = len(self.nodes)
            self.times[:] = [0.0] * n
            self.node_calls[:] = [0] * n

    def timeline(self):
        """(start, duration) of each node in the last call, seconds from the call's start;
        None where unknown."""
        if self.native:
            starts = getattr(self.vm, "last_node_starts", None)
            if starts is None:
                return None
            counts = np.maximum(self.node_counts(), 1)
            means = self.node_times() / counts
            return [(float(s), float(d)) if s >= 0 else None for s, d in zip(starts, means)]
        return [(s, d) if s >= 0 else None
                for s, d in zip(self.last_starts, self.last_durations)]


def _shape_of(value):
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _nbytes_of(value) -> int:
    return int(getattr(value, "nbytes", 0) or 0)


class _LoopRecord:
    """A scan node of a profiled function: its compiled step's nodes timed over every
    iteration (see the module docstring)."""

    def __init__(self, node, node_id: str, runner):
        self.node, self.node_id, self.runner = node, node_id, runner
        function = runner.function
        if getattr(function, "tier", "optimized") != "optimized":
            function.wait_optimized()  # time the code that will keep running
        self.ids = graph_ids(function)
        self.record = _FunctionRecord(f"{node.op} (step)", function.maker, function.vm, 0.0)
        if self.record.native:
            ProfileStats._install_shape_hook(self.record, function.vm)
        else:
            ProfileStats._install_timing_hooks(self.record, function.vm)
        self._iterations0 = runner.counters["iterations"]

    @property
    def iterations(self) -> int:
        return self.runner.counters["iterations"] - self._iterations0

    def reset(self) -> None:
        self.record.reset()
        self._iterations0 = self.runner.counters["iterations"]


def _loop_records(maker, vm) -> list:
    """A ``_LoopRecord`` per scan node of the function's graph compiled for its mode."""
    loops = []
    ids = None
    for node in vm.nodes:
        runner = getattr(node.tag, "scan_runner", None)
        if runner is None or getattr(runner, "reference", False):
            continue
        if ids is None:
            ids = graph_ids(maker.fgraph)
        loops.append(_LoopRecord(node, ids[node], runner))
    return loops


class _TimedVM:
    """Stands in for a Function's VM: times each run, passes everything else through."""

    __slots__ = ("_vm", "_record")

    def __init__(self, vm, record):
        object.__setattr__(self, "_vm", vm)
        object.__setattr__(self, "_record", record)

    def __call__(self):
        __tracebackhide__ = True  # noqa: F841
        record = self._record
        started = perf_counter()
        record.call_started = started
        try:
            self._vm()
        finally:
            record.last_vm_seconds = perf_counter() - started

    def __getattr__(self, name):
        return getattr(self._vm, name)

    def __setattr__(self, name, value):
        setattr(self._vm, name, value)

    def __repr__(self):
        return f"<profiled {self._vm!r}>"


class ProfiledFunction(Function):
    """A ``Function`` that reports its calls to ``self.profile`` (a ``ProfileStats``).

    Its node times are measured in its one VM, so calls from several threads take turns
    there (a plain Function would run them side by side in spare VMs), and a call from inside
    one of its own calls is refused with a RuntimeError instead of mixing two calls' times.
    """

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        inside = self._inside_call
        if getattr(inside, "active", False):
            raise RuntimeError(
                f"{self._label()} is profiled and was called again from inside one of its own "
                "calls (an argument's __array__ or an op's perform calling it): a profile "
                "times one call at a time; compile the inner use without profile=True")
        inside.active = True
        record = self._profile_record
        record.last_vm_seconds = 0.0
        started = perf_counter()
        try:
            return Function.__call__(self, *args, **kwargs)
        finally:
            inside.active = False
            self.profile._end_call(record, perf_counter() - started)

    def _call_busy(self, args):
        __tracebackhide__ = True  # noqa: F841
        with self._vm_lock:  # another thread's call: wait for it
            return self._call_in(self.vm, self._cells, args)


#: Functions compiled with ``config.profile`` on, whose profiles print at exit while alive
_PRINT_AT_EXIT: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _print_profiles_at_exit():
    seen = []
    for f in list(_PRINT_AT_EXIT):
        if f.profile.print_at_exit and all(f.profile is not p for p in seen):
            seen.append(f.profile)
    for stats in seen:
        stats.summary(file=config.profiling__destination)


class ProfileStats:
    """Time and memory per node of one or more functions; see the module docstring.

    Parameters
    ----------
    name : str, shown at the top of the summary ('' takes the first function's name)
    print_at_exit : print the summary when the interpreter exits, if a function using this
        profile is still alive (``None``: when ``config.profile`` is on); may be changed
        later

    PyTensor's signature works too: ``ProfileStats(False, gpu_checks=False)`` (its first
    argument is ``atexit_print``; ``gpu_checks`` has nothing to check here).
    """

    def __init__(self, name: str = "", print_at_exit: bool | None = None, *,
                 atexit_print: bool | None = None, gpu_checks=None):
        if isinstance(name, bool):        # PyTensor's positional atexit_print
            name, atexit_print = "", name
        if atexit_print is not None and print_at_exit is None:
            print_at_exit = atexit_print
        self.name = name
        self.print_at_exit = config.profile if print_at_exit is None else print_at_exit
        self.records: list[_FunctionRecord] = []

    # -- plugging into functions (called by FunctionMaker.create) --------------------------

    def attach(self, maker, vm, name, link_seconds: float) -> ProfiledFunction:
        """Link ``vm`` into a ``ProfiledFunction`` recording into this profile."""
        record = _FunctionRecord(name, maker, vm, link_seconds)
        record.loops = _loop_records(maker, vm)
        record.skip_next = bool(config.profiling__ignore_first_call)
        self.records.append(record)
        if not self.name:
            self.name = record.name
        if record.native:
            self._install_shape_hook(record, vm)
        else:
            self._install_timing_hooks(record, vm)
        f = ProfiledFunction(maker, _TimedVM(vm, record), name)
        f._inside_call = threading.local()
        f.profile = self
        f._profile_record = record
        if self.print_at_exit:
            _PRINT_AT_EXIT.add(f)
        return f

    @staticmethod
    def _install_timing_hooks(record, vm):
        times, counts = record.times, record.node_calls
        starts, last_starts, durations = [0.0] * len(record.nodes), record.last_starts, \
            record.last_durations
        shapes, nbytes = record.shapes, record.nbytes
        # a lazy thunk (ifelse) runs several times per call, asking for its inputs: its time
        # adds up over them, its run counts once, when its outputs are computed
        compute_map = getattr(vm, "compute_map", {})
        done_flags = [[compute_map[o] for o in node.outputs]
                      if getattr(thunk, "lazy", False) and all(o in compute_map
                                                               for o in node.outputs) else None
                      for node, thunk in zip(record.nodes, vm.thunks)]

        def pre(i, node, thunk):
            starts[i] = perf_counter()

        def post(i, node, thunk):
            now = perf_counter()
            seconds = now - starts[i]
            times[i] += seconds
            flags = done_flags[i]
            if flags is not None and not all(f[0] for f in flags):
                return
            counts[i] += 1
            last_starts[i] = starts[i] - record.call_started
            durations[i] = seconds
            outputs = thunk.outputs
            shapes[i] = [_shape_of(c[0]) for c in outputs]
            nbytes[i] = [_nbytes_of(c[0]) for c in outputs]

        add_hooks(vm, pre, post)

    @staticmethod
    def _install_shape_hook(record, vm):
        """Native timing: record output shapes during the first call only (keeps Python out
        of the loop afterwards)."""
        old_post = vm.post_hook

        def post(i, node, thunk):
            record.shapes[i] = [_shape_of(c[0]) for c in thunk.outputs]
            record.nbytes[i] = [_nbytes_of(c[0]) for c in thunk.outputs]
            if i == len(record.nodes) - 1:
                vm.post_hook = old_post

        add_hooks(vm, None, post)

    def _end_call(self, record, seconds):
        if record.skip_next:
            record.skip_next = False
            record.reset()
            for loop in getattr(record, "loops", ()):
                loop.reset()
            return
        record.calls += 1
        record.call_seconds += seconds
        record.vm_seconds += record.last_vm_seconds

    def ignore_next_call(self) -> None:
        """Leave the next call of every function out of the figures (a warm-up call: the
        first call of a function pays one-time costs, such as starting OpenMP's threads,
        that inflate the mean of a short profile several times; see docs/profiling.md)."""
        for record in self.records:
            record.skip_next = True

    # -- totals ----------------------------------------------------------------------------

    @property
    def call_count(self) -> int:
        return sum(r.calls for r in self.records)

    @property
    def call_time(self) -> float:
        """Seconds spent in ``Function.__call__`` (input checks, VM, updates)."""
        return sum(r.call_seconds for r in self.records)

    @property
    def vm_call_time(self) -> float:
        """Seconds spent running the node loop (timed around the VM from Python, plus the
        loop time a VM measures itself for calls that ran whole in C)."""
        return sum(r.vm_seconds + r.loop_seconds() for r in self.records)

    @property
    def node_time(self) -> float:
        """Seconds spent inside the nodes' thunks."""
        return float(sum(r.node_times().sum() for r in self.records))

    @property
    def rewrite_time(self) -> float:
        return sum(r.rewrite_seconds for r in self.records)

    @property
    def link_time(self) -> float:
        return sum(r.link_seconds for r in self.records)

    def as_records(self) -> list[dict]:
        """One dict per node of every function: function, node_id (the node's id, as dprint
        and the graph view show it: ``tensorgraph.graph.ids``), position (in the toposort),
        node, op, op_class, kind ('C'/'Py'), calls, seconds, seconds_per_call, percent (of all
        node time), output_shapes and output_bytes (of the last call), output_dtypes."""
        total = self.node_time or 1.0
        rows = []
        for record in self.records:
            times, counts = record.node_times(), record.node_counts()
            ids = graph_ids(record.fgraph)
            loops = {loop.node: loop for loop in getattr(record, "loops", ())}
            for i, node in enumerate(record.nodes):
                calls = int(counts[i])
                rows.append({
                    "function": record.name, "node_id": ids[node], "position": i,
                    "node": str(node),
                    "op": str(node.op), "op_class": type(node.op).__name__,
                    "kind": record.kinds[i], "calls": calls, "seconds": float(times[i]),
                    "seconds_per_call": float(times[i]) / calls if calls else 0.0,
                    "percent": 100.0 * float(times[i]) / total,
                    "output_shapes": record.shapes[i], "output_bytes": record.nbytes[i],
                    "output_dtypes": [getattr(o.type, "dtype", None) for o in node.outputs],
                })
                if node in loops:
                    rows += self._loop_rows(record, loops[node], rows[-1], total)
        return rows

    @staticmethod
    def _loop_rows(record, loop, scan_row: dict, total: float) -> list[dict]:
        """The rows of a scan's inner nodes, and the scan row's loop figures."""
        inner = loop.record
        times, counts = inner.node_times(), inner.node_counts()
        inner_seconds = float(times.sum())
        scan_row.update(iterations=loop.iterations, inner_seconds=inner_seconds,
                        loop_overhead=max(scan_row["seconds"] - inner_seconds, 0.0))
        rows = []
        for i, node in enumerate(inner.nodes):
            calls = int(counts[i])
            rows.append({
                "function": record.name, "node_id": f"{loop.node_id}/{loop.ids[node]}",
                "inside": loop.node_id, "position": i, "node": str(node),
                "op": str(node.op), "op_class": type(node.op).__name__,
                "kind": inner.kinds[i], "calls": calls, "seconds": float(times[i]),
                "seconds_per_call": float(times[i]) / calls if calls else 0.0,
                "percent": 100.0 * float(times[i]) / total,
                "output_shapes": inner.shapes[i], "output_bytes": inner.nbytes[i],
                "output_dtypes": [getattr(o.type, "dtype", None) for o in node.outputs],
            })
        return rows

    def _loops_text(self, rows) -> str:
        """Per scan: iterations, its time, its inner nodes' time summed over the iterations
        and the loop's own overhead, then its inner nodes."""
        lines = []
        for scan in (r for r in rows if "iterations" in r):
            inner = sorted((r for r in rows if r.get("inside") == scan["node_id"]
                            and r["function"] == scan["function"]), key=lambda r: -r["seconds"])
            lines += [f"Loop {scan['node_id']} {scan['op']}: {scan['iterations']} iterations in "
                      f"{scan['calls']} calls, {scan['seconds']:.6f} s; inner nodes "
                      f"{scan['inner_seconds']:.6f} s, the loop's own overhead "
                      f"{scan['loop_overhead']:.6f} s",
                      "  <% of loop> <time (s)> <per iteration> <#iterations> <type> <id> <node>"]
            whole = scan["seconds"] or 1.0
            for row in inner:
                lines.append(f"  {100 * row['seconds'] / whole:6.1f}% {row['seconds']:10.6f} "
                             f"{row['seconds_per_call'] * 1e6:12.2f}us {row['calls']:8d} "
                             f"{row['kind']:>6} {row['node_id']:>5}  {row['node']}")
        return "\n".join(["Loops", "-----", *lines]) if lines else ""

    # -- the printed summary ---------------------------------------------------------------

    def summary(self, file=None, n_ops_to_print: int | None = None,
                n_apply_to_print: int | None = None) -> None:
        """Print the profile to ``file`` (a file object, 'stdout', 'stderr', a path to append
        to, or None: ``config.profiling__destination``)."""
        text = self.summary_text(n_ops_to_print, n_apply_to_print)
        destination = config.profiling__destination if file is None else file
        if destination == "stdout":
            print(text, file=sys.stdout)
        elif destination == "stderr":
            print(text, file=sys.stderr)
        elif isinstance(destination, str):
            with open(destination, "a") as handle:
                print(text, file=handle)
        else:
            print(text, file=destination)

    def summary_text(self, n_ops_to_print=None, n_apply_to_print=None) -> str:
        n_ops = config.profiling__n_ops if n_ops_to_print is None else n_ops_to_print
        n_apply = config.profiling__n_apply if n_apply_to_print is None else n_apply_to_print
        all_rows = self.as_records()
        rows = [r for r in all_rows if "inside" not in r]  # a scan's time holds its inner nodes'
        parts = [self._header(), self._class_table(rows, n_ops), self._op_table(rows, n_ops),
                 self._apply_table(rows, n_apply)]
        loops = self._loops_text(all_rows)
        if loops:
            parts.append(loops)
        if config.profile_memory:
            parts.append(self.memory_text())
        # recorded when the function was compiled with config.profile_optimizer on, and
        # shown whatever the flag says now (PyTensor's heading, for those who look for it)
        for record in self.records:
            if record.rewrite_profile is not None:
                title = f"Rewriter Profile of {record.name!r}"
                parts.append(f"{title}\n{'-' * len(title)}\n" +
                             record.rewrite_profile.summary())
        if config.profiling__debugprint:
            from tensorgraph.printing import debugprint

            for record in self.records:
                parts.append(f"Graph of {record.name!r}\n" +
                             debugprint(record.fgraph, file="str", print_type=True))
        parts.append(self._tips(rows))
        width = config.profiling__output_line_width
        lines = "\n\n".join(parts).splitlines()
        return "\n".join(line if len(line) <= width else line[:width - 3] + "..."
                         for line in lines)

    def _header(self) -> str:
        names = ", ".join(dict.fromkeys(r.name for r in self.records)) or "no function yet"
        calls, call_t, vm_t, node_t = (self.call_count, self.call_time, self.vm_call_time,
                                       self.node_time)

        def pct(t):
            return f" ({100 * t / call_t:.1f}% of call time)" if call_t else ""

        title = f"Function profile: {self.name or names}"
        lines = [title, "=" * len(title),
                 f"  Functions: {names}",
                 f"  Time in {calls} call{'s' if calls != 1 else ''} to Function.__call__: "
                 f"{call_t:.6f}s" + (f" ({call_t / calls * 1e6:.1f} us per call)" if calls
                                     else ""),
                 (f"  Time in the VM (the node loop): {vm_t:.6f}s{pct(vm_t)}" if vm_t or not
                  calls else "  Time in the VM: not measured (the calls ran whole in C)"),
                 f"  Time in the nodes (thunks): {node_t:.6f}s{pct(node_t)}",
                 f"  Compile time: {self.rewrite_time + self.link_time:.6f}s",
                 f"    Rewriting: {self.rewrite_time:.6f}s "
                 f"({sum(r.rewrite_steps for r in self.records)} rewrite steps)",
                 f"    Linking: {self.link_time:.6f}s"]
        stats = [r.cache_stats for r in self.records if r.cache_stats]
        backends = [r for r in self.records if r.backend]
        for r in backends:
            seconds = r.vm.seconds
            lines.append(f"    {r.backend} ({r.name}): writing and tracing the program "
                         f"{seconds.get('generate', 0.0):.6f}s, compiling it "
                         f"{seconds.get('compile', 0.0):.6f}s")
        if stats:
            hits = sum(s.get("hits", 0) for s in stats)
            misses = sum(s.get("misses", 0) for s in stats)
            where = ""
            if all("from_disk" in s and "from_memory" in s for s in stats):
                disk = sum(s["from_disk"] for s in stats)
                memory = sum(s["from_memory"] for s in stats)
                where = f" ({disk} loaded from disk, {memory} already in memory)"
            lines.append(f"    C module cache: {hits} hit{'s' if hits != 1 else ''}{where}, "
                         f"{misses} miss{'es' if misses != 1 else ''} (compiled)")
        elif len(backends) < len(self.records):
            lines.append("    C module cache: hits and misses not reported by the linker ("
                         + ", ".join(dict.fromkeys(r.mode.linker_name for r in self.records))
                         + ")")
        if any(r.native for r in self.records):
            lines.append("  Node times measured by the linker's own loop")
        if backends:
            names = ", ".join(dict.fromkeys(r.backend for r in backends))
            lines.append(f"  Per-node times do not exist for {names}: the whole graph runs as "
                         "one compiled function, so the time in the VM is the time of the whole "
                         "graph and the tables below list no node of it")
        return "\n".join(lines)

    @staticmethod
    def _grouped(rows, key):
        groups: dict = {}
        for row in rows:
            g = groups.setdefault(key(row), {"seconds": 0.0, "calls": 0, "applies": 0,
                                             "kinds": set()})
            g["seconds"] += row["seconds"]
            g["calls"] += row["calls"]
            g["applies"] += 1
            g["kinds"].add(row["kind"])
        return sorted(groups.items(), key=lambda kv: -kv[1]["seconds"])

    def _group_table(self, title, rows, key, limit) -> str:
        total = sum(r["seconds"] for r in rows) or 1.0
        lines = [title, "-" * len(title),
                 "  <% time> <sum %> <time (s)> <time per call> <#calls> <type> <#apply> "
                 "<name>"]
        cumulative = 0.0
        groups = self._grouped(rows, key)
        for name, g in groups[:limit]:
            share = 100 * g["seconds"] / total
            cumulative += share
            per_call = g["seconds"] / g["calls"] if g["calls"] else 0.0
            kind = "/".join(sorted(g["kinds"]))
            lines.append(f"  {share:6.1f}% {cumulative:6.1f}% {g['seconds']:10.6f} "
                         f"{per_call * 1e6:12.2f}us {g['calls']:8d} {kind:>6} "
                         f"{g['applies']:7d}  {name}")
        if len(groups) > limit:
            rest = sum(g["seconds"] for _, g in groups[limit:])
            lines.append(f"  ... and {len(groups) - limit} more ({100 * rest / total:.1f}% of "
                         "node time)")
        return "\n".join(lines)

    def _class_table(self, rows, limit) -> str:
        return self._group_table("Ops by class", rows, lambda r: r["op_class"], limit)

    def _op_table(self, rows, limit) -> str:
        return self._group_table("Ops", rows, lambda r: r["op"], limit)

    def _apply_table(self, rows, limit) -> str:
        total = sum(r["seconds"] for r in rows) or 1.0
        lines = ["Apply nodes", "-----------",
                 "  <% time> <sum %> <time (s)> <time per call> <#calls> <type> <id> "
                 "<node> <output shapes>"]
        several = len(self.records) > 1
        ordered = sorted(rows, key=lambda r: -r["seconds"])
        cumulative = 0.0
        for row in ordered[:limit]:
            share = 100 * row["seconds"] / total
            cumulative += share
            node_id = f"{row['function']}:{row['node_id']}" if several else str(row["node_id"])
            shapes = ", ".join(str(s) for s in (row["output_shapes"] or [])) or "?"
            lines.append(f"  {share:6.1f}% {cumulative:6.1f}% {row['seconds']:10.6f} "
                         f"{row['seconds_per_call'] * 1e6:12.2f}us {row['calls']:8d} "
                         f"{row['kind']:>6} {node_id:>4}  {row['node']}  [{shapes}]")
        if len(ordered) > limit:
            rest = sum(r["seconds"] for r in ordered[limit:])
            lines.append(f"  ... and {len(ordered) - limit} more nodes "
                         f"({100 * rest / total:.1f}% of node time)")
        return "\n".join(lines)

    # -- memory ----------------------------------------------------------------------------

    def memory_profile(self) -> list[dict]:
        """Per function: peak bytes of the results computed by its nodes (graph inputs not
        counted) with the current settings, with allow_gc=False and without inplace ops,
        from the output sizes of the last call; and, with ``profiling__min_peak_memory``,
        the smallest peak any node order reaches (small graphs only)."""
        result = []
        for record in self.records:
            sizes = {}
            for node, nbytes in zip(record.nodes, record.nbytes):
                for out, n in zip(node.outputs, nbytes or [0] * len(node.outputs)):
                    sizes[out] = n
            kept = set(record.fgraph.outputs)
            entry = {
                "function": record.name,
                "peak": _peak_memory(record.nodes, sizes, kept, record.allow_gc, True),
                "peak_without_gc": _peak_memory(record.nodes, sizes, kept, False, True),
                "peak_without_inplace": _peak_memory(record.nodes, sizes, kept,
                                                     record.allow_gc, False),
                "big_nodes": [(str(node), sum(n or 0 for n in nbytes or []))
                              for node, nbytes in zip(record.nodes, record.nbytes)
                              if sum(n or 0 for n in nbytes or []) >=
                              config.profiling__min_memory_size],
            }
            if config.profiling__min_peak_memory:
                entry["min_peak"] = _min_peak_memory(record.nodes, sizes, kept)
            result.append(entry)
        return result

    def memory_text(self) -> str:
        lines = ["Memory profile (results computed by the nodes, sizes of the last call)",
                 "---------------"]
        for entry in self.memory_profile():
            lines.append(f"  {entry['function']}:")
            lines.append(f"    peak with the current settings: {_kb(entry['peak'])}")
            lines.append(f"    peak with allow_gc=False:       {_kb(entry['peak_without_gc'])}")
            lines.append(f"    peak without inplace ops:       "
                         f"{_kb(entry['peak_without_inplace'])}")
            if "min_peak" in entry:
                best = entry["min_peak"]
                lines.append("    smallest peak of any node order: " + (
                    _kb(best) if best is not None else "skipped (more than "
                    f"{_MIN_PEAK_MAX_NODES} nodes)"))
            for node, n in entry["big_nodes"]:
                lines.append(f"    {_kb(n):>12}  {node}")
        return "\n".join(lines)

    # -- tips ------------------------------------------------------------------------------

    def _tips(self, rows) -> str:
        tips = []
        # a loop's row is a Python node whose iterations run its compiled step (the "Loops"
        # section says where its time goes), not a node without C
        py_rows = [r for r in rows if r["kind"] == "Py" and "iterations" not in r]
        linkers = {r.mode.linker_name for r in self.records}
        if py_rows and linkers & {"py", "vm", "vm_nogc"}:
            tips.append(f"All {len(py_rows)} nodes ran numpy perform (linker "
                        f"{'/'.join(sorted(linkers))}); FAST_RUN runs generated C when the C "
                        "backend is available.")
        elif py_rows:
            ops = ", ".join(sorted({r["op_class"] for r in py_rows}))
            tips.append(f"{len(py_rows)} nodes fell back to Python perform ({ops}).")
        if config.floatX == "float32":
            f64 = [r for r in rows if "float64" in r["output_dtypes"]]
            if f64:
                tips.append(f"{len(f64)} nodes compute in float64 although floatX is float32; "
                            "cast their inputs.")
        elementwise = sum(1 for r in rows if r["op_class"] == "Elemwise")
        if elementwise > 2 and any(r.mode.optimizer in (None, "fast_compile", "o1", "merge")
                                   for r in self.records):
            tips.append(f"{elementwise} separate Elemwise nodes: the 'fast_run' rewrites fuse "
                        "them into one loop.")
        if any(r["op_class"] == "Dot" for r in rows):
            tips.append("Dot nodes remain: the 'fast_run' BLAS rewrites turn matrix products "
                        "into Gemm/Gemv.")
        if not tips:
            tips.append("No tip for this profile.")
        return "Tips to make it faster\n----------------------\n" + "\n".join(
            f"  - {t}" for t in tips)

    # -- chrome trace ----------------------------------------------------------------------

    def to_chrome_trace(self, path) -> dict:
        """Write a Chrome trace event file (chrome://tracing, Perfetto) and return it as a dict.

        One row (thread) per function. Nodes are placed on the timeline of the function's
        last call when it is known, one after the other with their mean time otherwise; each
        event's ``args`` carry the totals (calls, total seconds, kind, output shapes).
        """
        events = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
                   "args": {"name": f"tensorgraph profile {self.name}"}}]
        for tid, record in enumerate(self.records, start=1):
            events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                           "args": {"name": record.name}})
            timeline = record.timeline()
            times, counts = record.node_times(), record.node_counts()
            ids = graph_ids(record.fgraph)
            clock = 0.0
            for i, node in enumerate(record.nodes):
                calls = int(counts[i])
                mean = float(times[i]) / calls if calls else 0.0
                if timeline is not None and timeline[i] is not None:
                    start, duration = timeline[i]
                else:
                    start, duration = clock, mean
                clock = max(clock, start + duration)
                events.append({
                    "name": str(node.op), "cat": record.kinds[i], "ph": "X", "pid": 1,
                    "tid": tid, "ts": start * 1e6, "dur": duration * 1e6,
                    "args": {"node": str(node), "node_id": ids[node], "position": i,
                             "calls": calls,
                             "total_seconds": float(times[i]),
                             "output_shapes": [list(s) if s is not None else None
                                               for s in (record.shapes[i] or [])]},
                })
        trace = {"traceEvents": events, "displayTimeUnit": "ms"}
        with open(path, "w") as handle:
            json.dump(trace, handle)
        return trace

    def __repr__(self):
        return (f"<ProfileStats {self.name!r}: {len(self.records)} function(s), "
                f"{self.call_count} calls, {self.call_time:.6f}s>")


def _kb(n) -> str:
    return f"{n / 1024:.1f} KB" if n is not None else "?"


def _peak_memory(nodes, sizes, kept, allow_gc: bool, inplace: bool) -> int:
    """Peak bytes alive while running ``nodes`` in order: each output allocates its size
    (nothing if it is a view, or overwrites an input while ``inplace``), intermediates are
    freed after their last reader when ``allow_gc``."""
    last_use = {}
    for i, node in enumerate(nodes):
        for inp in node.inputs:
            last_use[inp] = i
    allocated = {}
    live = peak = 0
    for i, node in enumerate(nodes):
        op = node.op
        for k, out in enumerate(node.outputs):
            shares = k in op.view_map or (inplace and k in op.destroy_map)
            allocated[out] = 0 if shares else sizes.get(out, 0) or 0
            live += allocated[out]
        peak = max(peak, live)
        if allow_gc:
            for inp in node.inputs:
                if last_use.get(inp) == i and inp in allocated and inp not in kept:
                    live -= allocated.pop(inp)
            for out in node.outputs:
                if out not in last_use and out not in kept and out in allocated:
                    live -= allocated.pop(out)
    return peak


_MIN_PEAK_MAX_NODES = 16


def _min_peak_memory(nodes, sizes, kept):
    """The smallest peak over all topological orders (with gc), by search over the sets of
    nodes already run; None for graphs above ``_MIN_PEAK_MAX_NODES`` nodes."""
    if len(nodes) > _MIN_PEAK_MAX_NODES:
        return None
    index = {node: i for i, node in enumerate(nodes)}
    deps = [frozenset(index[inp.owner] for inp in node.inputs if inp.owner in index)
            for node in nodes]
    readers = {}
    for i, node in enumerate(nodes):
        for inp in node.inputs:
            readers.setdefault(inp, set()).add(i)

    def live_bytes(done):
        total = 0
        for i in done:
            node = nodes[i]
            for k, out in enumerate(node.outputs):
                if k in node.op.view_map or k in node.op.destroy_map:
                    continue
                if out in kept or not readers.get(out, set()) <= done:
                    total += sizes.get(out, 0) or 0
        return total

    best: dict = {}

    def search(done):
        if len(done) == len(nodes):
            return 0
        if done in best:
            return best[done]
        result = None
        for i in range(len(nodes)):
            if i in done or not deps[i] <= done:
                continue
            node = nodes[i]
            step = live_bytes(done) + sum(sizes.get(o, 0) or 0 for k, o in
                                          enumerate(node.outputs)
                                          if k not in node.op.view_map
                                          and k not in node.op.destroy_map)
            candidate = max(step, search(done | {i}))
            result = candidate if result is None else min(result, candidate)
        best[done] = result
        return result

    return search(frozenset())
