"""A scan's iterations run in C: the glue's ``run_steps`` over the compiled step's workspace.

When the step is compiled to whole-graph C (FAST_RUN, linkers 'cvm', 'cvm_nogc', 'c'), the
loop over iterations need not return to Python: ``run_steps`` (``glue_steps.h``)
binds each iteration's inputs as rows of the loop's buffers (sequence rows, past states; no
copy), runs the step's node functions, copies its outputs into the rows of the states and
outputs, and checks the stop condition, for every iteration of the run. The buffers, the
checks of the outer values and the results stay those of ``ScanLoop``: this module only
describes how the loop reads and writes them (``tg_scan_layout``, graph_desc.h, filled by
field name once per loop) and hands the arrays to each run (C reads their data, shapes and
strides). It reads the loop through its public view (``ScanLoop.buffers()``) and writes only
``t`` and ``stopped``.

Scan sits below the link layer and does not import this module: the package fills
``tensorgraph.hooks.scan_c_loop`` with ``CLoop``, which an ``InnerRunner`` builds once.

The Python loop (``InnerRunner.run``) remains what runs:

* a step that is not whole-graph C (FAST_COMPILE, a node without C such as a random draw, a
  function still on its quick tier) or is watched node by node (hooks: DebugMode,
  NanGuardMode, MonitorMode, a stepper);
* loops with shared variables as states, and ``scan__allow_output_prealloc=False`` (each step
  kept as its own array); a run whose arrays C cannot use as they are (unaligned,
  byte-swapped);
* an iteration C hands back: the first one of an output whose shape is not known yet, one
  whose output has another shape than its rows (Python raises the error that names it), one
  that needs a bigger buffer (a while loop growing its rows).

A node failing inside the C loop raises the error its report gives in the Python loop (the
node, its inputs, the line that built it), and ``reraise_in_iteration`` adds the iteration.
"""

from __future__ import annotations

import ctypes

from tensorgraph.link.c.graph_desc import LAYOUT_ELEMENT, ScanLayout
from tensorgraph.link.c.linkers import CVM

__all__ = ["CLoop", "run_steps_entry"]


def run_steps_entry(function):
    """``(run_steps, layout, elements)``: the ``run_steps`` entry point of ``function``'s VM as
    it is now, the ``ctypes.Structure`` of the ``tg_scan_layout`` it reads and the element type
    of each of its pointer fields; None when its calls do not run the whole graph in C or
    hooks watch its nodes."""
    vm = function.vm
    if not isinstance(vm, CVM) or not vm.whole_graph:
        return None
    if vm.pre_hook is not None or vm.post_hook is not None:
        return None
    run_steps = vm.entry_point("run_steps")
    return None if run_steps is None else (run_steps, ScanLayout, LAYOUT_ELEMENT)


class _Tables:
    """One ``tg_scan_layout`` and the arrays its fields point to, for one run at a time."""

    def __init__(self, fields: dict, structure: type[ctypes.Structure], elements: dict):
        self.layout = structure()
        self.address = ctypes.addressof(self.layout)
        self.size = ctypes.sizeof(structure)
        self.arrays = []
        for name, values in fields.items():
            if name not in elements:  # not a pointer field
                setattr(self.layout, name, values)
                continue
            element = elements[name]
            array = (element * max(len(values), 1))(*values)
            self.arrays.append(array)
            setattr(self.layout, name, ctypes.cast(array, ctypes.POINTER(element)))


class CLoop:
    """Runs a ``ScanLoop``'s iterations in C with the compiled step of ``runner``.

    Built once per inner runner: the layout (which inner inputs are bound to rows, sequence
    taps and state taps in the inner graph's order, and how; which outputs are written), the
    same for every run; each run passes its arrays.
    """

    def __init__(self, runner):
        info = runner.op.info
        self.info = info
        fg = runner.function.maker.fgraph
        self.ok = (info.n_shared == 0 and runner.prealloc
                   and len(fg.inputs) == info.n_inner_inputs
                   and len(fg.outputs) == info.n_inner_outputs)
        self.nbind = sum(map(len, info.seq_taps)) + sum(map(len, info.state_taps))
        self.nout = info.n_steps_outputs
        self._spare: dict[tuple, list[_Tables]] = {}  # idle layouts, by their rings
        offsets, init_rows = [], []
        for j, taps in enumerate(info.seq_taps):
            lo, _ = info.seq_span(j)
            offsets += [k - lo for k in taps]
            init_rows += [0] * len(taps)
        for k, taps in enumerate(info.state_taps):
            offsets += list(taps)
            init_rows += [info.state_length(k) if info.is_buffer_init(k) else -1] * len(taps)
        self._fields = {"nbind": self.nbind, "nout": self.nout,
                        "cond": info.n_inner_outputs - 1 if info.as_while else -1,
                        "bind_input": list(range(self.nbind)), "bind_offset": offsets,
                        "bind_init_rows": init_rows, "out_output": list(range(self.nout))}

    def _tables(self, rings: tuple, structure, elements) -> _Tables:
        """A layout for the given rings (per binding, then per output) that no other run
        uses (runs in other threads take others: list.pop is atomic)."""
        try:
            return self._spare.get(rings, []).pop()
        except IndexError:
            return _Tables(dict(self._fields, bind_ring=list(rings[:self.nbind]),
                                out_ring=list(rings[self.nbind:])), structure, elements)

    def entry(self, function):
        """What ``run`` needs of ``function`` (the compiled step as it is now: a tier may have
        replaced its VM), or None when its iterations cannot run in C."""
        return run_steps_entry(function) if self.ok else None

    def run(self, loop, entry):
        """Run iterations of ``loop`` from ``loop.t`` in C: True when some ran, False when
        none could (the caller then runs iteration ``loop.t`` in Python), None when this
        run's arrays cannot be used by C as they are (the caller runs the rest). Raises a
        node's error with the iteration in ``loop.t``."""
        view = loop.buffers()
        steps_out = view.outputs
        if any(s.array is None for s in steps_out):
            return False  # an output's shape is not known before its first iteration
        info = self.info
        owners, rings = [], []
        for x, _ in view.sequence_reads:
            owners += (x, None)
            rings.append(0)
        inits = view.initial_states
        for k, taps in enumerate(info.state_taps):
            steps = steps_out[k]
            owners += (steps.array, inits[k]) * len(taps)
            rings += [steps.size if steps.ring else 0] * len(taps)
        n_steps = loop.n_steps
        for steps in steps_out:
            if steps.ring:
                rings.append(steps.size if steps.size else -1)
            else:
                rings.append(0)
                n_steps = min(n_steps, steps.size)
        if n_steps <= loop.t:
            return False  # a growing buffer is full: the Python iteration makes room
        outs = tuple(s.array for s in steps_out)
        values = (None,) * self.nbind + view.non_sequences
        key = tuple(rings)
        entry, structure, elements = entry
        tables = self._tables(key, structure, elements)
        try:
            lay = tables.layout
            lay.t, lay.n_steps, lay.stopped = loop.t, n_steps, 0
            try:
                status = entry(tables.address, tables.size, tuple(owners), outs, values)
            finally:
                ran = lay.t - loop.t
                loop.t = lay.t
                loop.stopped = bool(lay.stopped)
        finally:
            self._spare.setdefault(key, []).append(tables)
        if status == 2:
            return None  # arrays C cannot take as they are (a dtype, alignment...)
        return ran > 0 or status == 0
