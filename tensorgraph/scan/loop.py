"""Running a scan: the loop state (``ScanLoop``) and the compiled inner graph (``InnerRunner``).

``ScanLoop`` owns one run's buffers: it checks the outer values (n_steps, sequence lengths,
initial states), gives each iteration's inner arguments (``arguments()``), stores what the
inner graph returned (``accept(outputs)``, checking shapes) and builds the outer outputs
(``store_results``). It never runs the inner graph itself, so a caller can run an iteration
however it likes: ``InnerRunner.run`` calls the compiled inner function in a Python loop; a
stepper can step through one iteration's inner nodes and hand the values to ``accept``.

Outputs never alias inputs or each other across iterations: every step's values are copied
into the loop's own buffers, and a shared state's final value is copied when it is an input.

The two scan flags, read when the inner graph is compiled:

* ``scan__allow_gc``: the inner function frees its intermediate results after their last use
  in each iteration (its linker with gc); off, they stay in the inner function between
  iterations and calls and the kernels reuse their buffers (``held_intermediates()`` counts
  them).
* ``scan__allow_output_prealloc``: each output's buffer of ``n_steps`` rows is allocated once
  per call (the previous call's buffer is reused when the outer function hands it back) and
  every step is written into its row; off, the steps are kept as separate arrays and stacked
  at the end (a second copy of every output at that moment). ``counters`` says which
  happened (``buffers_allocated``, ``buffers_reused``, ``outputs_stacked``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from tensorgraph import hooks
from tensorgraph.configdefaults import config
from tensorgraph.graph.utils import compiling
from tensorgraph.scan.shapes import empty_output_shape

__all__ = ["ScanLoop", "InnerRunner", "LoopBuffers", "OutputRows"]


class InnerRunner:
    """A scan's inner graph compiled with one mode, run by ``run(loop)``.

    Attributes
    ----------
    function : the compiled inner ``Function`` (``function.maker.fgraph`` is the rewritten
        inner graph, with its ``rewrite_history``)
    mode : the mode it was compiled with
    allow_gc, prealloc : the scan flags when it was compiled (``allow_gc``: the op's own
        setting, ``scan(allow_gc=...)``, when given)
    c_loop_enabled : whether iterations may run in C (``link/c/scan_loop.py``, reached through
        ``hooks.scan_c_loop``) when the compiled step allows it (True; False runs one call of
        the step per iteration, for comparisons)
    counters : ``calls``, ``iterations``, ``buffers_allocated``, ``buffers_reused``,
        ``outputs_stacked`` summed over every run; ``c_runs`` (calls of the C loop, each
        running iterations without returning to Python) and ``python_iterations``
        (iterations run by a call of the compiled step from Python)
    """

    def __init__(self, op, mode, reference: bool = False, maker=None):
        self.op = op
        self.mode = mode
        self.reference = reference
        self.allow_gc = bool(config.scan__allow_gc if op.allow_gc is None else op.allow_gc)
        self.prealloc = bool(config.scan__allow_output_prealloc)
        if maker is None:  # else: the inner graph already rewritten for ``mode``
            with compiling():
                maker = hooks.function_maker(list(op.fgraph.inputs), list(op.fgraph.outputs),
                                             mode=mode, name=f"{op.title} (inner)",
                                             on_unused_input="ignore")
        maker.linker = _with_gc(maker.linker, self.allow_gc)
        self.function = maker.create()
        self.function.trust_input = True
        self.counters = {"calls": 0, "iterations": 0, "buffers_allocated": 0,
                         "buffers_reused": 0, "outputs_stacked": 0, "c_runs": 0,
                         "python_iterations": 0}
        self._c_loop = None
        self.c_loop_enabled = True

    def run(self, loop: ScanLoop) -> None:
        """Run every iteration of ``loop`` with the compiled inner function: in C when it is
        whole-graph C and nothing watches its nodes (``link/c/scan_loop.py``), else one call of
        it per iteration."""
        __tracebackhide__ = True  # noqa: F841 - IPython: the user's frame comes first
        fn = self.function
        c_loop = self._c_loop
        if c_loop is None and not self.reference:
            c_loop = self._c_loop = hooks.scan_c_loop(self)
        entry = None
        if c_loop is not None and self.c_loop_enabled:
            entry = c_loop.entry(fn)
        while not loop.done:
            if entry is not None:
                try:
                    ran = c_loop.run(loop, entry)
                except Exception as exc:
                    reraise_in_iteration(exc, loop)
                if ran:
                    self.counters["c_runs"] += 1
                    continue
                if ran is None:
                    entry = None
            args = loop.arguments()
            try:
                outputs = fn(*args)
            except Exception as exc:
                reraise_in_iteration(exc, loop)
            loop.accept(outputs)
            self.counters["python_iterations"] += 1
        counters = self.counters
        counters["calls"] += 1
        counters["iterations"] += loop.t
        counters["buffers_allocated"] += loop.allocated
        counters["buffers_reused"] += loop.reused
        counters["outputs_stacked"] += loop.stacked

    def __getstate__(self):
        """Everything but the C loop's tables (ctypes pointers: made again when needed)."""
        state = dict(self.__dict__)
        state["_c_loop"] = None
        return state

    def held_intermediates(self) -> int:
        """How many inner intermediate results the inner function holds now (between calls):
        0 with ``scan__allow_gc``."""
        vm = self.function.vm
        if getattr(vm, "whole_graph", False):
            return int(vm.buffer_counters()["held"])
        return sum(vm.storage_map[v][0] is not None for v in vm.intermediates)

    def __repr__(self):
        kind = "reference" if self.reference else repr(self.mode)
        return f"<InnerRunner of {self.op.title}: {kind}>"


def _with_gc(linker, allow_gc: bool):
    """A copy of ``linker`` (or of the linker it wraps) with its gc set as scan's flag says."""
    linker = copy.copy(linker)
    if hasattr(linker, "allow_gc"):
        linker.allow_gc = allow_gc
    elif hasattr(linker, "inner"):
        linker.inner = _with_gc(linker.inner, allow_gc)
    return linker


def reraise_in_iteration(exc: Exception, loop: ScanLoop):
    """Raise ``exc`` again, same type, its first line saying which iteration of which scan
    failed (``.scan_iteration`` and ``.scan_name`` say it too)."""
    __tracebackhide__ = True  # noqa: F841
    where = f"iteration {loop.t} of {loop.op.title}"
    text = str(exc)
    first, sep, rest = text.partition("\n")
    message = f"{first} ({where}){sep}{rest}"
    try:
        new = type(exc)(message)
    except Exception:  # noqa: BLE001 - unusual constructors keep their own message
        new = None
    if new is None or str(new) != message:
        exc.add_note(f"in {where}")
        exc.scan_iteration, exc.scan_name = loop.t, loop.op.name
        raise exc
    new.scan_iteration, new.scan_name = loop.t, loop.op.name
    for attr in ("node", "fgraph"):
        if hasattr(exc, attr):
            setattr(new, f"inner_{attr}", getattr(exc, attr))
    new.__traceback__ = None
    if config.exception_verbosity == "high":
        raise new from exc
    raise new from None


class _Steps:
    """The rows one state or nit_sot output keeps: every step (an array written row by row,
    grown for a while loop, or separate arrays stacked at the end) or a ring of the last
    ``max(keep, back)`` steps (``back``: how far the loop reads into the past)."""

    __slots__ = ("shape", "dtype", "ring", "size", "array", "rows", "grow")

    def __init__(self, n_steps, keep, back, shape, dtype, as_while, prealloc, reuse):
        self.shape, self.dtype = shape, dtype
        self.ring = keep is not None
        self.rows = None
        self.grow = False
        if self.ring:
            self.size = max(keep, back)
        elif not prealloc:
            self.size, self.rows = n_steps, []
        elif as_while:
            self.size, self.grow = min(n_steps, 16), True
        else:
            self.size = n_steps
        self.array = None
        if self.rows is None and shape is not None:
            self.allocate(reuse)

    def allocate(self, reuse=None) -> bool:
        """Make the row buffer; reuse ``reuse`` when it fits exactly. Returns whether reused."""
        full = (self.size,) + self.shape
        if (not self.ring and not self.grow and isinstance(reuse, np.ndarray)
                and reuse.shape == full and reuse.dtype == self.dtype
                and reuse.flags.writeable):
            self.array = reuse
            return True
        self.array = np.empty(full, dtype=self.dtype)
        return False

    def read(self, p: int):
        if self.rows is not None:
            return self.rows[p]
        return self.array[p % self.size if self.ring else p, ...]

    def write(self, t: int, value) -> None:
        if self.rows is not None:
            self.rows.append(value if isinstance(value, np.ndarray) and value.dtype == self.dtype
                             else np.asarray(value, dtype=self.dtype))
            return
        if self.ring:
            if self.size:
                self.array[t % self.size] = value
            return
        if self.grow and t >= self.size:
            bigger = np.empty((max(2 * self.size, 1),) + self.shape, dtype=self.dtype)
            bigger[:self.size] = self.array
            self.array, self.size = bigger, bigger.shape[0]
        self.array[t] = value

    def result(self, done: int, keep):
        if self.rows is not None:
            if not self.rows:
                return np.empty((0,) + self.shape, dtype=self.dtype)
            return np.stack(self.rows)
        if self.array is None:  # no step ran
            return np.empty((0,) + self.shape, dtype=self.dtype)
        if self.ring:
            m = min(keep, done)
            if m == 0 or self.size == 0:
                return np.empty((0,) + self.shape, dtype=self.dtype)
            return self.array[np.arange(done - m, done) % self.size]
        return self.array if done == self.array.shape[0] else self.array[:done]


@dataclass(frozen=True)
class OutputRows:
    """One state or nit_sot output's row buffer as it is now: ``array`` (None until its shape
    is known), ``size`` (its rows) and ``ring`` (step ``t`` is row ``t % size``; else row
    ``t``)."""

    array: np.ndarray | None
    size: int
    ring: bool


@dataclass(frozen=True)
class LoopBuffers:
    """What a loop runner outside scan (the C loop, ``link/c/scan_loop.py``) reads of a
    ``ScanLoop``: a read-only view, taken when a run starts, so the loop's own fields stay
    free to change.

    ``sequence_reads``: ``(sequence, offset)`` per sequence tap, in the inner graph's order;
    ``outputs``: an ``OutputRows`` per state then nit_sot output; ``initial_states``: each
    state's outer initial value; ``non_sequences``: the values read unchanged every step.
    """

    sequence_reads: tuple
    outputs: tuple
    initial_states: tuple
    non_sequences: tuple


class ScanLoop:
    """One run of a scan node on its outer input values (see the module docstring).

    Attributes: ``t`` (the next iteration), ``n_steps`` (the bound for a while loop),
    ``done``, and the counters ``allocated``, ``reused``, ``stacked`` of this run.
    """

    def __init__(self, op, node, inputs, output_storage=None, prealloc: bool = True):
        info = op.info
        self.op, self.node, self.info = op, node, info
        self.inputs = list(inputs)
        self.t = 0
        self.stopped = False
        self.allocated = self.reused = self.stacked = 0
        seqs = inputs[1:info.outer_state_start]
        inits = inputs[info.outer_state_start:info.outer_shared_start]
        self._check_sequences(seqs)
        n = self.n_steps = self._steps(inputs[0])
        self._check_sequence_steps(seqs, n)

        self._seq_reads = []
        for j, x in enumerate(seqs):
            lo, _ = info.seq_span(j)
            self._seq_reads.extend((x, k - lo) for k in info.seq_taps[j])

        self._init_rows = []
        shapes = []
        for k, init in enumerate(inits):
            length = info.state_length(k)
            if info.is_buffer_init(k):
                if init.shape[0] < length:
                    raise ValueError(
                        f"{op.title}: {op.outer_label('states', k)} reads taps "
                        f"{list(info.state_taps[k])}, so its initial value needs at least "
                        f"{length} rows (the steps -{length} to -1) along axis 0; it has "
                        f"shape {init.shape}")
                self._init_rows.append([init[i, ...] for i in range(length)])
                shapes.append(tuple(init.shape[1:]))
            else:
                self._init_rows.append([init])
                shapes.append(tuple(init.shape))
        self._steps_out = []
        out_vars = node.outputs
        for i in range(info.n_steps_outputs):
            state = i < info.n_states
            reuse = output_storage[i][0] if (output_storage is not None and prealloc) else None
            if reuse is not None and _aliases(reuse, self.inputs):
                reuse = None
            steps = _Steps(n, info.kept(i), info.state_length(i) if state else 0,
                           shapes[i] if state else None, out_vars[i].type.numpy_dtype,
                           info.as_while, prealloc, reuse)
            self._count(steps, reuse)
            self._steps_out.append(steps)
        self._reuse = [output_storage[i][0] if (output_storage is not None and prealloc)
                       else None for i in range(info.n_steps_outputs)]
        self._shared = list(inputs[info.outer_shared_start:info.outer_non_seq_start])
        self._non_seqs = list(inputs[info.outer_non_seq_start:])

    def buffers(self) -> LoopBuffers:
        """The buffers as they are now, for a loop runner outside scan (``LoopBuffers``)."""
        info = self.info
        return LoopBuffers(
            tuple(self._seq_reads),
            tuple(OutputRows(s.array, s.size, s.ring) for s in self._steps_out),
            tuple(self.inputs[info.outer_state_start:info.outer_shared_start]),
            tuple(self._non_seqs))

    # -- checks ---------------------------------------------------------------------------

    def _steps(self, value) -> int:
        op = self.op
        n = int(value)
        if n < 0:
            what = "n_steps" + (" (the bound of the while loop)" if self.info.as_while else "")
            raise ValueError(f"{op.title}: {what} is {n}; the number of steps cannot be "
                             "negative")
        return n

    def _check_sequences(self, seqs) -> None:
        """Every sequence is long enough for its taps."""
        op, info = self.op, self.info
        for j, x in enumerate(seqs):
            lo, hi = info.seq_span(j)
            if x.shape[0] < hi - lo:
                raise ValueError(
                    f"{op.title}: {op.outer_label('sequences', j)} has {x.shape[0]} entries "
                    f"but its taps {list(info.seq_taps[j])} need at least {hi - lo}"
                    f"{'' if hi == lo else ' plus one per step'}")

    def _check_sequence_steps(self, seqs, n: int) -> None:
        """The sequences give n steps (exactly, when n_steps came from them)."""
        op, info = self.op, self.info
        for j, x in enumerate(seqs):
            lo, hi = info.seq_span(j)
            steps = x.shape[0] - (hi - lo)
            if info.lengths_must_match and steps != n:
                raise ValueError(
                    f"{op.title}: {op.outer_label('sequences', j)} gives {steps} steps "
                    f"({x.shape[0]} entries) but {op.outer_label('sequences', 0)} gives {n}; "
                    "the sequences must have the same length (pass n_steps to use the first "
                    "n_steps entries of each)")
            if steps < n:
                raise ValueError(
                    f"{op.title}: {op.outer_label('sequences', j)} gives {steps} steps "
                    f"({x.shape[0]} entries) but n_steps is {n}")

    def _count(self, steps: _Steps, reuse) -> None:
        if steps.rows is not None:
            self.stacked += 1
        elif steps.array is not None:
            if steps.array is reuse:
                self.reused += 1
            else:
                self.allocated += 1

    # -- iterating ------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.stopped or self.t >= self.n_steps

    def arguments(self) -> list:
        """The inner graph's input values for iteration ``t`` (views into the loop's
        buffers and the sequences: do not write into them)."""
        t = self.t
        args = [x[t + offset, ...] for x, offset in self._seq_reads]
        for k, steps in enumerate(self._steps_out[:self.info.n_states]):
            init_rows = self._init_rows[k]
            for tap in self.info.state_taps[k]:
                p = t + tap
                args.append(steps.read(p) if p >= 0 else init_rows[len(init_rows) + p])
        args.extend(self._shared)
        args.extend(self._non_seqs)
        return args

    def accept(self, outputs) -> None:
        """Store iteration ``t``'s inner outputs and move to the next iteration."""
        info, op, t = self.info, self.op, self.t
        for i, steps in enumerate(self._steps_out):
            value = outputs[i]
            shape = np.shape(value)
            if steps.shape is None:  # a nit_sot output's first step fixes its shape
                steps.shape = tuple(shape)
                if steps.rows is None:
                    reuse = self._reuse[i]
                    steps.allocate(None if reuse is None or _aliases(reuse, self.inputs)
                                   else reuse)
                    self._count(steps, reuse)
            elif shape != steps.shape:
                state = i < info.n_states
                kind = "states" if state else "nit_sot"
                before = ("its initial value has" if state else
                          "the earlier iterations gave")
                raise ValueError(
                    f"{op.title}: {op.outer_label(kind, i if state else i - info.n_states)} "
                    f"has shape {shape} at iteration {t}, but {before} shape {steps.shape}; "
                    "the step function must keep the shape of what it returns"
                    + (" (the shape of the state it updates)" if state else ""))
            steps.write(t, value)
        base = info.n_steps_outputs
        for q in range(info.n_shared):
            self._shared[q] = outputs[base + q]
        self.t = t + 1
        if info.as_while and bool(outputs[-1]):
            self.stopped = True

    # -- results --------------------------------------------------------------------------

    def results(self) -> list:
        """The outer outputs after the iterations run so far."""
        info, done = self.info, self.t
        values = []
        for i, steps in enumerate(self._steps_out):
            if steps.shape is None:  # a nit_sot output that never ran
                steps.shape = empty_output_shape(self.op, self.node, self.inputs,
                                                 i - info.n_states)
            values.append(steps.result(done, info.kept(i)))
        for value in self._shared:
            if _aliases(value, self.inputs):
                value = value.copy() if isinstance(value, np.ndarray) else copy.deepcopy(value)
            values.append(value)
        return values

    def store_results(self, output_storage) -> None:
        for cell, value in zip(output_storage, self.results()):
            cell[0] = value


def _aliases(value, inputs) -> bool:
    """Whether ``value`` is one of ``inputs`` or shares memory with an array among them."""
    for inp in inputs:
        if value is inp:
            return True
        if (isinstance(value, np.ndarray) and isinstance(inp, np.ndarray)
                and np.may_share_memory(value, inp)):
            return True
    return False
