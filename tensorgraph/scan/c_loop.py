"""A scan's iterations run in C: the glue's ``run_steps`` over the compiled step's workspace.

When the step is compiled to whole-graph C (FAST_RUN, linkers 'cvm', 'cvm_nogc', 'c'), the
loop over iterations need not return to Python: ``run_steps`` (``tensorgraph/link/c/glue.h``)
binds each iteration's inputs as rows of the loop's buffers (sequence rows, past states; no
copy), runs the step's node functions, copies its outputs into the rows of the states and
outputs, and checks the stop condition, for every iteration of the run. The buffers, the
checks of the outer values and the results stay those of ``ScanLoop``: this module only
describes its buffers to C (``tg_scan_layout``, graph_desc.h, filled by field name).

The Python loop (``InnerRunner.run``) remains what runs:

* a step that is not whole-graph C (FAST_COMPILE, a node without C such as a random draw, a
  function still on its quick tier) or is watched node by node (hooks: DebugMode,
  NanGuardMode, MonitorMode, a stepper);
* loops with shared variables as states, and ``scan__allow_output_prealloc=False`` (each step
  kept as its own array);
* an iteration C hands back: the first one of an output whose shape is not known yet, one
  whose output has another shape than its rows (Python raises the error that names it), one
  that needs a bigger buffer (a while loop growing its rows).

A node failing inside the C loop raises the error its report gives in the Python loop (the
node, its inputs, the line that built it), and ``reraise_in_iteration`` adds the iteration.
"""

from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["CLoop", "run_steps_entry"]

_MAXDIM = 16


def run_steps_entry(function):
    """The ``run_steps`` entry point of ``function``'s VM as it is now, or None when its calls
    do not run the whole graph in C or hooks watch its nodes."""
    vm = function.vm
    entry = getattr(vm, "_entry", None)  # CVM: the workspace's entry points
    if not entry or not getattr(vm, "whole_graph", False):
        return None
    if vm.pre_hook is not None or vm.post_hook is not None:
        return None
    return entry.get("run_steps")


def _usable_array(value) -> bool:
    return (isinstance(value, np.ndarray) and value.flags.aligned
            and value.dtype.isnative)


class _Tables:
    """One ``tg_scan_layout`` and the arrays its fields point to, for one run at a time."""

    def __init__(self, nbind: int, nout: int):
        # the C back end's struct, imported here: scan sits below the link layer
        from tensorgraph.link.c.graph_desc import LAYOUT_ELEMENT, ScanLayout

        self.layout = ScanLayout()
        self.address = ctypes.addressof(self.layout)
        self.size = ctypes.sizeof(ScanLayout)
        self.arrays = {}
        sizes = {"bind": max(nbind, 1), "out": max(nout, 1)}
        for name, element in LAYOUT_ELEMENT.items():
            kind = name.split("_", 1)[0]
            n = sizes[kind] * (_MAXDIM if name.endswith(("_shape", "strides")) else 1)
            array = (element * n)()
            self.arrays[name] = array
            setattr(self.layout, name, ctypes.cast(array, ctypes.POINTER(element)))
        self.layout.nbind, self.layout.nout = nbind, nout

    def set(self, name: str, values) -> None:
        array = self.arrays[name]
        array[:len(values)] = values


class CLoop:
    """Runs a ``ScanLoop``'s iterations in C with the compiled step of ``runner``.

    Built once per inner runner: which inner inputs are bound to rows (sequence taps and
    state taps, in the inner graph's order), which are the same at every iteration.
    """

    def __init__(self, runner):
        op = runner.op
        info = op.info
        self.runner = runner
        self.info = info
        fg = runner.function.maker.fgraph
        self.ok = (info.n_shared == 0 and runner.prealloc
                   and len(fg.inputs) == info.n_inner_inputs
                   and len(fg.outputs) == info.n_inner_outputs)
        self.nbind = sum(map(len, info.seq_taps)) + sum(map(len, info.state_taps))
        self.nout = info.n_steps_outputs
        self._spare: list[_Tables] = []
        offsets = []
        for j, taps in enumerate(info.seq_taps):
            lo, _ = info.seq_span(j)
            offsets += [k - lo for k in taps]
        for taps in info.state_taps:
            offsets += list(taps)
        self._offsets = offsets
        inputs = op.fgraph.inputs
        self._bind_ndim = [inputs[b].type.ndim for b in range(self.nbind)]
        self._out_ndim = [v.type.ndim for v in op.fgraph.outputs[:self.nout]]

    def _tables(self) -> _Tables:
        try:
            return self._spare.pop()
        except IndexError:
            tables = _Tables(self.nbind, self.nout)
            tables.set("bind_input", list(range(self.nbind)))
            tables.set("bind_ndim", self._bind_ndim)
            tables.set("bind_offset", self._offsets)
            tables.set("out_output", list(range(self.nout)))
            tables.set("out_ndim", self._out_ndim)
            tables.layout.cond = self.info.n_inner_outputs - 1 if self.info.as_while else -1
            return tables

    def run(self, loop, entry) -> bool:
        """Run iterations of ``loop`` from ``loop.t`` in C; False when none could run there
        (the caller then runs iteration ``loop.t`` in Python). Raises a node's error with the
        iteration in ``loop.t``."""
        steps_out = loop._steps_out
        if any(s.array is None for s in steps_out):
            return False  # an output's shape is not known before its first iteration
        bound = [x for x, _ in loop._seq_reads]
        owners, data, rings, stride0, shapes, strides = [], [], [], [], [], []
        init_data, init_rows, init_stride0, init_strides = [], [], [], []
        for x in bound:
            owners += (x, None)
            data.append(x.ctypes.data)
            rings.append(0)
            stride0.append(x.strides[0])
            shapes.append(x.shape[1:])
            strides.append(x.strides[1:])
            init_data.append(None)
            init_rows.append(0)
            init_stride0.append(0)
            init_strides.append(())
        info = self.info
        inits = loop.inputs[info.outer_state_start:info.outer_shared_start]
        for k, taps in enumerate(info.state_taps):
            steps, init = steps_out[k], inits[k]
            if not _usable_array(init):
                return False
            ring = steps.size if steps.ring else 0
            array = steps.array
            if info.is_buffer_init(k):
                rows, i_stride0, i_strides = info.state_length(k), init.strides[0], init.strides[1:]
            else:
                rows, i_stride0, i_strides = 1, 0, init.strides
            for _ in taps:
                owners += (array, init)
                data.append(array.ctypes.data)
                rings.append(ring)
                stride0.append(array.strides[0])
                shapes.append(steps.shape)
                strides.append(array.strides[1:])
                init_data.append(init.ctypes.data)
                init_rows.append(rows)
                init_stride0.append(i_stride0)
                init_strides.append(i_strides)
        if not all(_usable_array(x) for x in bound):
            return False
        values = [None] * self.nbind + list(loop._non_seqs)
        if not all(_usable_array(v) for v in values[self.nbind:]):
            return False
        n_steps = loop.n_steps
        out_data, out_ring, out_stride0, out_shape, out_strides, out_type = [], [], [], [], [], []
        for steps in steps_out:
            array = steps.array
            if steps.ring:
                out_ring.append(steps.size if steps.size else -1)
            else:
                out_ring.append(0)
                n_steps = min(n_steps, steps.size)
            out_data.append(array.ctypes.data)
            out_stride0.append(array.strides[0] if array.ndim else 0)
            out_shape.append(steps.shape)
            out_strides.append(array.strides[1:])
            out_type.append(array.dtype.num)
        if n_steps <= loop.t:
            return False  # a growing buffer is full: the Python iteration makes room
        tables = self._tables()
        try:
            lay = tables.layout
            lay.t, lay.n_steps, lay.stopped = loop.t, n_steps, 0
            tables.set("bind_data", data)
            tables.set("bind_ring", rings)
            tables.set("bind_stride0", stride0)
            tables.set("bind_shape", _rows(shapes))
            tables.set("bind_strides", _rows(strides))
            tables.set("bind_init", init_data)
            tables.set("bind_init_rows", init_rows)
            tables.set("bind_init_stride0", init_stride0)
            tables.set("bind_init_strides", _rows(init_strides))
            tables.set("out_data", out_data)
            tables.set("out_ring", out_ring)
            tables.set("out_stride0", out_stride0)
            tables.set("out_shape", _rows(out_shape))
            tables.set("out_strides", _rows(out_strides))
            tables.set("out_typenum", out_type)
            try:
                status = entry(tables.address, tables.size, tuple(owners), tuple(values))
            finally:
                ran = lay.t - loop.t
                loop.t = lay.t
                loop.stopped = bool(lay.stopped)
        finally:
            self._spare.append(tables)
        return ran > 0 or status == 0


def _rows(rows) -> list:
    """Shapes or strides, one per binding or output, as TG_MAXDIM entries each."""
    flat = []
    for row in rows:
        flat += row
        flat += [0] * (_MAXDIM - len(row))
    return flat
