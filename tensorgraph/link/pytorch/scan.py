"""PyTorch for ``Scan``: a loop of known length is one operator of the program's FX graph,
calling the step compiled once (a while loop: PyTorch's ``while_loop`` operator).

How a loop of ``n`` steps runs (``StepLoop``). While the program is traced, the step (the
inner graph) is traced on its own with ``make_fx``, for the shapes and dtypes of its
arguments, and the program's FX graph gets one call of
``torch.ops.tensorgraph.scan_loop(key, n, tensors)``, a ``torch.library.custom_op`` that
Inductor runs as an opaque kernel (its fake implementation gives the outputs' shapes from
the step's traced outputs and the loop's layout). ``key`` names the ``StepLoop`` in a
process-wide table: a hash of what the loop computes (the step's FX graph and constants, the
shapes of its arguments, the loop's layout), so a graph Inductor cached on disk means the
same loop in every process, and programs with the same loop share its compiled step; each
compiled program holds its loops (the table holds them weakly). At the program's first run
Inductor compiles each step once, as it compiles the program's graph
(``linker.compile_graph``), and the operator's implementation is a Python loop: ``n`` calls of
the compiled step, carrying each state's window of its last values and the shared values,
stacking the rows kept.

Why: the program is one FX graph that Inductor compiles directly (not through TorchDynamo,
``tensorgraph.link.pytorch.linker``), and a Python loop is not something an FX graph holds:
``make_fx`` records the operations each iteration runs. Until 2026-12-07 the loop was
therefore unrolled, ``n`` copies of the step in the one graph, and the compile time grew
with the steps: for the 100-step RNN of ``benchmarks/cases/rnn_forward.py`` (batch 32, 256
units, float32), cold (a new process, empty caches, Inductor started by a tiny graph first),
42 s for the forward pass and 115 s for the training step (389 s on a loaded machine), and
loops of more than 1000 steps were refused. As one operator: 5.6 s and 9.7 s, on the same
loaded 2-core machine (2026-12-07 at b7dc576), whatever the number of steps (a 2000-step loop
compiles in a test). PyTorch's own loop operators (``torch._higher_order_ops.scan`` and
``while_loop``) compile on the CPU in torch 2.13 only through ``torch.compile``'s front
end, which cannot trace this program's evaluator (it keeps Python state); measured on a
10-step RNN of 16 units written directly for them: 25.6 s cold and 170 us a call
(2026-11-25 at f903a72).

What it costs: every step is a call of the compiled step from Python (Inductor's wrapper
and the loop's bookkeeping), and Inductor no longer fuses across steps. Measured
(2026-12-07 at b7dc576, one thread, ``OMP_NUM_THREADS=1``, ``benchmarks/run.py --quick``): a 100-step
RNN of 16 units in float64 takes 12-14 us a step against 4.2 us unrolled, so about 9 us of
dispatch a step; the benchmark RNN's forward pass 12.4 ms a call against 9.4 ms unrolled
(FAST_RUN: 10.1-10.3 ms), its training step 33 ms against 50 ms unrolled (FAST_RUN: 27-36
ms; these vary by a third from run to run on this loaded machine). With PyTorch's default
two OpenMP threads on a loaded machine both forms vary from tens of milliseconds to seconds
a call (threads spinning for a busy core), unrolled or not. The steps' compile time went
from tens of seconds to a few, so short loops are not unrolled either.

What that means:

* ``n_steps`` must be known while tracing (the outputs' sizes are fixed when compiling).
  Computed from shapes or constants (the sequences' length, ``n_steps=10``) it is, and each
  new input shape traces and compiles again, as for every PyTorch graph. Computed from an
  input's value (``n_steps=n`` with ``n`` an input), the program makes its integer scalar
  inputs static: each new value of ``n`` traces and compiles the program again, and reuses
  the compiled step (the same key).
* The step is compiled for fixed shapes: a state or shared value whose shape changes from
  step to step is refused with that reason (FAST_RUN runs it). Values known while tracing
  that the step reads unchanged (a non-sequence computed from shapes) stay known inside it;
  the states are tensors from the first step on.
* ``until`` (a while loop) runs a number of steps known only when running: it is PyTorch's
  ``while_loop`` operator, traced into the FX graph as the ``cond`` operator is for
  ``ifelse`` (so such a program compiles through ``torch.compile``, as graphs with ``cond``
  do: measured 7.9 s for a power iteration, against about 2 s for a graph without;
  2026-11-25 at e85addc). As for JAX, every output of a while loop must be read at its last
  step only (its full history has as many rows as steps ran); draws inside a while loop are
  refused (the operator carries tensors only).
* Random draws inside the step run as draws outside loops do: from PyTorch's generator,
  seeded at each call of the program from the input generator (the loop's generator is
  carried as the marker that stands for it); each call of the compiled step draws new
  numbers (Inductor takes its seeds from that generator at every call).
* A run-time check inside the step (an index out of range) makes the step return its code:
  the loop stops at the first step that fails and the program raises that check's error,
  naming the inner node.

Taps: a state reading ``L`` steps back keeps its last ``L`` values (the last rows of its
initial value at first); a sequence tap ``k`` reads row ``t + k - lo``; every step's value of
a state or output not fed back is stacked (``torch.stack``) into the output, the last ``keep``
rows of it when the memory rewrite says so (only those rows are kept while looping).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import weakref

import numpy as np

from tensorgraph.graph.basic import Constant
from tensorgraph.link.backend_scan import (
    check_initial_rows,
    check_sequences,
    loop_layout,
    refusal,
    traced_step,
    while_refusal,
)
from tensorgraph.link.pytorch import as_tensor, register, torch_dtype
from tensorgraph.link.pytorch.linker import (
    _COMPILE_LOCK,
    GENERATOR,
    GraphFunction,
    checks_scope,
    compile_graph,
    current_checks,
    hold_loop,
    static_ints,
)
from tensorgraph.scan.op import Scan


@register(Scan)
def torch_scan(op, node):

    reason = refusal(op, node, "PyTorch", draws=True) or while_refusal(op, "PyTorch")
    if not reason and op.info.as_while and refusal(op, node, "PyTorch"):
        reason = (f"{op.title} draws random numbers inside a while loop (until): PyTorch's "
                  "while_loop operator carries tensors only, not the generator (compile it "
                  "with mode='FAST_RUN', 'JAX' or 'NUMBA')")
    if reason:
        raise NotImplementedError(reason)
    fgraph, step = traced_step(node, GraphFunction, "PyTorch")
    info = op.info
    # a random generator is a marker: the draws use PyTorch's generator, seeded per call
    n_states, n_nit, _, out_dtypes, _ = loop_layout(op, fgraph)

    def loop(n_steps, *outer):
        n = static_ints(n_steps, f"the number of steps of {op.title} (PyTorch sizes the "
                                 "loop's outputs when compiling)")[0]
        seqs = outer[:info.n_seqs]
        inits = outer[info.n_seqs:info.n_seqs + n_states]
        shared = list(outer[info.outer_shared_start - 1:info.outer_non_seq_start - 1])
        non_seqs = list(outer[info.outer_non_seq_start - 1:])
        check_sequences(op, [np.shape(x)[0] for x in seqs], n)
        check_initial_rows(op, inits)
        if info.as_while:
            return _while(op, node, step, fgraph, n, seqs, inits, shared, non_seqs)
        if n == 0:
            results = [_empty(op, node, fgraph, i, inits, out_dtypes[i])
                       for i in range(n_states + n_nit)]
            results += [v if d is None else as_tensor(v, d) for v, d in
                        zip(shared, out_dtypes[n_states + n_nit:])]
            return results[0] if len(results) == 1 else tuple(results)
        runner, operands = StepLoop.traced(op, node, fgraph, step, seqs, inits, shared,
                                           non_seqs)
        results = runner.call(n, operands, GENERATOR)
        return results[0] if len(results) == 1 else tuple(results)

    return loop


# ----------------------------------------------------------------------------------------------
# One compiled step, run n times by one opaque operator of the FX graph


#: content key -> StepLoop; each compiled program holds its own (``_Compiled.loops``)
_LOOPS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_LOOPS_LOCK = threading.Lock()
_OPERATOR: list = []


def loop_operator():
    """``torch.ops.tensorgraph.scan_loop(key, n, tensors) -> tensors``: the loop of the
    ``StepLoop`` registered under ``key`` (defined once per process, at the first loop)."""
    with _LOOPS_LOCK:
        if _OPERATOR:
            return _OPERATOR[0]
        import torch

        def run(key, n, inputs):
            return _loop(key).run(n, inputs)

        scan_loop = torch.library.custom_op(
            "tensorgraph::scan_loop", run, mutates_args=(),
            schema="(str key, int n, Tensor[] inputs) -> Tensor[]")

        @scan_loop.register_fake
        def _(key, n, inputs):
            return _loop(key).empty_outputs(n)

        _OPERATOR.append(torch.ops.tensorgraph.scan_loop.default)
        return _OPERATOR[0]


def _loop(key: str) -> StepLoop:
    found = _LOOPS.get(key)
    if found is None:
        raise RuntimeError(f"the PyTorch loop {key} is not in this process (its program was "
                           "dropped)")
    return found


class StepLoop:
    """A ``Scan`` of known length: its step traced once (``make_fx``) for the shapes of one
    signature and compiled once (Inductor), and a Python loop calling it ``n`` times, carrying
    the states' windows of past values and the shared values, stacking the rows kept (see the
    module docstring). In the program's FX graph it is one call of ``loop_operator()``, keyed
    by a hash of what it computes (the step's FX graph and constants, the loop's layout), so
    Inductor's cache of that graph is right in every process."""

    def __init__(self, op, node, gm, examples, layout, outputs, has_checks):
        self.title = op.title
        self.node = node
        self.graph_module = gm
        self.examples = examples  # (shape, dtype) of each tensor argument of the step
        (self.seq_reads, self.n_seq_tensors, self.windows, self.n_shared_tensors,
         self.n_non_seq_tensors, self.keep, self.n_rows, self.markers) = layout
        self.layout = layout
        self.outputs = outputs  # (shape, dtype) of each tensor output of the step
        self.has_checks = has_checks
        self.function = None
        self.key = ""

    # -- while tracing the program --------------------------------------------------------

    @classmethod
    def traced(cls, op, node, fgraph, step, seqs, inits, shared, non_seqs):
        """The loop for these outer values (tensors of the trace, known numpy values or the
        generator marker): its step traced now, for their shapes."""
        import torch


        info = op.info
        in_dtypes = [v.type.dtype if hasattr(v.type, "dtype") else None for v in fgraph.inputs]
        out_dtypes = [getattr(v.type, "dtype", None) for v in fgraph.outputs]
        n_states, n_nit = info.n_states, info.n_nit_sot
        examples, slots = [], []  # per step input: None (a tensor argument) or its value
        operands = []  # the operator's tensors: sequences, initial values, shared, non_seqs
        seq_reads, position = [], 0
        for j, x in enumerate(seqs):
            x = as_tensor(x)
            operands.append(x)
            lo, _ = info.seq_span(j)
            for tap in info.seq_taps[j]:
                seq_reads.append((j, tap - lo))
                examples.append((tuple(x.shape[1:]), in_dtypes[position]))
                slots.append(None)
                position += 1
        windows = []  # per state: (operand index, buffer rows or None, its length, its taps)
        for k, init in enumerate(inits):
            init = as_tensor(init, in_dtypes[_state_position(info, k)])
            buffer = info.is_buffer_init(k)
            windows.append((len(operands), init.shape[0] if buffer else None,
                            info.state_length(k), info.state_taps[k]))
            operands.append(init)
            row = tuple(init.shape[1:] if buffer else init.shape)
            for _ in info.state_taps[k]:
                examples.append((row, in_dtypes[position]))
                slots.append(None)
                position += 1
        n_shared_tensors = 0
        for v in shared:
            if isinstance(v, torch.Tensor) or not _is_marker(v):
                v = as_tensor(v, in_dtypes[position])
                operands.append(v)
                examples.append((tuple(v.shape), in_dtypes[position]))
                slots.append(None)
                n_shared_tensors += 1
            else:
                slots.append(v)
            position += 1
        n_non_seq_tensors = 0
        for v in non_seqs:
            if isinstance(v, torch.Tensor):
                operands.append(v)
                examples.append((tuple(v.shape), in_dtypes[position]))
                slots.append(None)
                n_non_seq_tensors += 1
            else:  # known while tracing (sizes stay known) or the generator marker
                slots.append(v)
            position += 1
        checked = []

        def step_function(*tensors):
            tensors = iter(tensors)
            args = [next(tensors) if s is None else s for s in slots]
            with checks_scope(node) as scope:
                outputs = step(*args)
            checked.append(scope.code is not None)
            results = [as_tensor(v.data if isinstance(v, Constant) else o, d)
                       for v, o, d in zip(fgraph.outputs, outputs, out_dtypes) if d is not None]
            return tuple(results) + (scope.result(),)

        gm = _trace(step_function, examples)
        shapes = [tuple(v.shape) for v in _output_values(gm)][:-1]  # the last: the check code
        outputs = list(zip(shapes, [d for d in out_dtypes if d is not None]))
        if any(d is None for d in out_dtypes[:n_states + n_nit]):
            raise NotImplementedError(f"{op.title} has a random generator as a state")
        # the values carried from step to step keep their shapes: the step is compiled once
        carried = [(op.outer_label("states", k), examples[_state_position(info, k)], k)
                   for k in range(n_states)]
        tensor_shared = [i for i in range(len(examples))
                         if info.inner_shared_start <= _slot_position(slots, i)
                         < info.inner_non_seq_start]
        carried += [(f"shared value {m}", examples[i], n_states + n_nit + m)
                    for m, i in enumerate(tensor_shared)]
        for label, (shape, dtype), i in carried:
            if outputs[i] != (shape, dtype):
                raise ValueError(f"{op.title}: the step turns {label} ({dtype}, shape {shape}) "
                                 f"into a {outputs[i][1]} of shape {outputs[i][0]}; PyTorch "
                                 "compiles the step once, for fixed shapes and dtypes "
                                 "(compile it with mode='FAST_RUN')")
        keep = [info.kept(i) for i in range(n_states + n_nit)]
        markers = tuple(i for i, d in enumerate(out_dtypes) if d is None)
        layout = (tuple(seq_reads), len(seqs), tuple(windows), n_shared_tensors,
                  n_non_seq_tensors, tuple(keep), n_states + n_nit, markers)
        runner = cls(op, node, gm, examples, layout, outputs, checked[-1])
        with _outside_trace():
            key = runner.content_key()
        with _LOOPS_LOCK:
            found = _LOOPS.get(key)
            if found is None:
                runner.key = key
                _LOOPS[key] = found = runner
        hold_loop(found)
        return found, operands

    def call(self, n, operands, generator):
        """The operator's call in the FX graph being traced: the loop's outputs (a random
        generator output is the marker)."""
        results = list(loop_operator()(self.key, n, operands))
        if self.has_checks:

            current_checks().merge(results.pop())
        for i in self.markers:
            results.insert(i, generator)
        return results

    def content_key(self) -> str:
        """A hash of what the loop computes: the step's FX graph, its constants, the shapes
        of its arguments and the loop's layout."""
        import torch

        digest = hashlib.sha256()
        digest.update(self.graph_module.code.encode())
        for node in self.graph_module.graph.nodes:
            if node.op == "get_attr":
                value = getattr(self.graph_module, node.target)
                digest.update(node.target.encode())
                if isinstance(value, torch.Tensor):
                    array = value.detach().contiguous().reshape(-1)
                    digest.update(f"{array.dtype}{tuple(value.shape)}".encode())
                    digest.update(array.view(torch.uint8).numpy().tobytes())
                else:
                    digest.update(repr(value).encode())
        digest.update(repr((self.examples, self.outputs, self.layout,
                            self.has_checks)).encode())
        return digest.hexdigest()[:32]

    # -- compiling and running -------------------------------------------------------------

    def compile(self) -> None:
        """Inductor's compile of the step, once (the program's first run does it)."""
        import torch


        with _COMPILE_LOCK:
            if self.function is None:
                examples = [torch.zeros(shape, dtype=_torch_dtype(d))
                            for shape, d in self.examples]
                self.function = compile_graph(self.graph_module, examples)

    def empty_outputs(self, n: int) -> list:
        """Tensors of the shapes and dtypes of the operator's outputs for ``n`` steps."""
        import torch

        results = []
        for i in range(self.n_rows):
            shape, dtype = self.outputs[i]
            keep = self.keep[i]
            rows = n if keep is None else min(n, keep)
            results.append(torch.empty((rows,) + shape, dtype=_torch_dtype(dtype)))
        for shape, dtype in self.outputs[self.n_rows:]:
            results.append(torch.empty(shape, dtype=_torch_dtype(dtype)))
        if self.has_checks:
            results.append(torch.zeros((), dtype=torch.int32))
        return results

    def run(self, n: int, inputs: list) -> list:
        """The loop, on the operator's tensors: ``n`` calls of the compiled step."""
        import torch

        if self.function is None:
            self.compile()
        step = self.function
        # the step was compiled for C-contiguous arguments: the sequences and non-sequences
        # are made so once, the values carried (the step's outputs) when they are not
        seqs = [x.contiguous() for x in inputs[:self.n_seq_tensors]]
        reads = [(seqs[j], offset) for j, offset in self.seq_reads]
        windows, taps = [], []
        for index, rows, length, state_taps in self.windows:
            init = inputs[index]
            windows.append([init[r] for r in range(rows - length, rows)] if rows is not None
                           else [init])
            taps.append([length + tap for tap in state_taps])
        start = self.n_seq_tensors + len(self.windows)
        shared = list(inputs[start:start + self.n_shared_tensors])
        non_seqs = [x.contiguous() for x in inputs[start + self.n_shared_tensors:]]
        n_rows = self.n_rows
        first = [n - (n if k is None else min(n, k)) for k in self.keep]
        stacks = [[] for _ in range(n_rows)]
        code = None
        for t in range(n):
            args = [x[t + offset] for x, offset in reads]
            for window, positions in zip(windows, taps):
                args += [_contiguous(window[p]) for p in positions]
            args += [_contiguous(v) for v in shared]
            args += non_seqs
            outputs = step(*args)
            if self.has_checks:
                code = outputs[-1]
                if int(code):
                    return self._failed(n, code)
            for k, window in enumerate(windows):
                window.append(outputs[k])
                del window[0]
            for i in range(n_rows):
                if t >= first[i]:
                    stacks[i].append(outputs[i])
            shared = list(outputs[n_rows:n_rows + self.n_shared_tensors])
        results = [torch.stack(rows) if rows else
                   torch.empty((0,) + self.outputs[i][0], dtype=_torch_dtype(self.outputs[i][1]))
                   for i, rows in enumerate(stacks)]
        taken = {t.untyped_storage().data_ptr() for t in inputs if t.numel()}
        for value in shared:  # an operator's output may not alias its inputs or another output
            if value.numel() and value.untyped_storage().data_ptr() in taken:
                value = value.clone()
            if value.numel():
                taken.add(value.untyped_storage().data_ptr())
            results.append(value)
        if self.has_checks:
            results.append(code if code is not None else torch.zeros((), dtype=torch.int32))
        return results

    def _failed(self, n, code):
        """A failed run-time check: outputs of the right shapes (zeros) and its code."""
        results = [t.zero_() for t in self.empty_outputs(n)[:-1]]
        return results + [code.clone()]

    def source(self) -> str:
        return (f"# the step of {self.title}, compiled once and run n times by "
                f"tensorgraph::scan_loop('{self.key}')\n{self.graph_module.code.strip()}\n")


def _contiguous(tensor):
    return tensor if tensor.is_contiguous() else tensor.contiguous()


def _is_marker(value) -> bool:

    return value is GENERATOR


def _state_position(info, k: int) -> int:
    """The position of state ``k``'s first tap among the step's inputs."""
    return sum(map(len, info.seq_taps)) + sum(map(len, info.state_taps[:k]))


def _slot_position(slots, i: int) -> int:
    """The step input position of the ``i``-th tensor argument."""
    count = -1
    for position, slot in enumerate(slots):
        if slot is None:
            count += 1
            if count == i:
                return position
    raise IndexError(i)


@contextlib.contextmanager
def _outside_trace():
    """Outside the trace under way (the program's: its fake tensors and its recording)."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing

    with unset_fake_temporarily(), disable_proxy_modes_tracing():
        yield


def _trace(function, examples):
    """``function`` traced by ``make_fx`` for arguments of the shapes and dtypes
    ``examples``, on its own (``_outside_trace``)."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    with _outside_trace():
        tensors = [torch.empty(shape, dtype=_torch_dtype(d)) for shape, d in examples]
        return make_fx(function, tracing_mode="fake")(*tensors)


def _output_values(gm) -> list:
    (output,) = [n for n in gm.graph.nodes if n.op == "output"]
    values = output.args[0]
    return [v.meta["val"] for v in values]


def _torch_dtype(dtype):

    return torch_dtype(dtype)


def _empty(op, node, fgraph, i, inits, dtype):
    """No row: a state's rows have its shape; an output not fed back, the shape its type
    gives (unknown sizes 0)."""
    info = op.info
    if i < info.n_states:
        shape = np.shape(inits[i])
        shape = shape[1:] if info.is_buffer_init(i) else shape
    else:
        shape = tuple(s or 0 for s in fgraph.outputs[i].type.shape)
    return as_tensor(np.zeros((0,) + tuple(shape), dtype=dtype))


def _while(op, node, step, fgraph, n, seqs, inits, shared, non_seqs):
    """``until``: PyTorch's ``while_loop`` operator, traced into the FX graph as ``cond`` is
    for ``ifelse`` (the program then compiles through ``torch.compile``, the only way Inductor
    takes such operators). At most ``n`` steps, stopping after the step whose condition holds;
    every output keeps its last step only (``while_refusal``), so every size is known."""
    import torch
    from torch._higher_order_ops.while_loop import while_loop_op


    info = op.info
    n_states, n_nit, n_shared = info.n_states, info.n_nit_sot, info.n_shared
    dtypes = [v.type.dtype for v in fgraph.outputs]
    lengths = [info.state_length(k) for k in range(n_states)]
    if n == 0:
        results = [_empty(op, node, fgraph, i, inits, dtypes[i])
                   for i in range(n_states + n_nit)]
        results += [as_tensor(v, d) for v, d in zip(shared, dtypes[n_states + n_nit:])]
        return results[0] if len(results) == 1 else tuple(results)
    sliced = []  # per (sequence, tap): its n rows
    for j, x in enumerate(seqs):
        lo, _ = info.seq_span(j)
        x = as_tensor(x)
        sliced += [x[tap - lo:tap - lo + n] for tap in info.seq_taps[j]]
    windows = []
    for k, init in enumerate(inits):
        init = as_tensor(init, dtypes[k])
        windows.append(init[init.shape[0] - lengths[k]:].clone() if info.is_buffer_init(k)
                       else init[None].clone())
    outer = [as_tensor(v) for v in non_seqs]

    def run_step(t, windows, shared, extra):
        sliced_now, non_seq_now = extra[:len(sliced)], extra[len(sliced):]
        args = [x[t] for x in sliced_now]
        for k, window in enumerate(windows):
            args += [window[lengths[k] + tap] for tap in info.state_taps[k]]
        args += list(shared) + list(non_seq_now)
        with checks_scope(node) as scope:
            outputs = step(*args)
        outputs = [as_tensor(v.data if isinstance(v, Constant) else o, d)
                   for v, o, d in zip(fgraph.outputs, outputs, dtypes)]
        return outputs, scope.result()

    # the first step, outside the loop, fixes the shapes of the outputs not fed back
    first, code = run_step(torch.tensor(0), windows, [as_tensor(v) for v in shared],
                           sliced + outer)
    windows = [torch.cat([w[1:], o[None]]) for w, o in zip(windows, first[:n_states])]
    lasts = [o.clone() for o in first[n_states:n_states + n_nit]]
    shared = [o.clone() for o in first[n_states + n_nit:n_states + n_nit + n_shared]]
    stop = (first[-1] != 0).reshape(())
    counts = (len(windows), len(lasts), len(shared))

    def split(carried):
        a, b, c = counts
        t, stop, code = carried[:3]
        rest = carried[3:]
        return t, stop, code, rest[:a], rest[a:a + b], rest[a + b:a + b + c]

    def cond_fn(*carried):
        t, stop = carried[0], carried[1]
        return (t < n) & torch.logical_not(stop)

    def body_fn(*carried_and_extra):
        carried = carried_and_extra[:3 + sum(counts)]
        extra = carried_and_extra[3 + sum(counts):]
        t, _, code, windows, lasts, shared = split(carried)
        outputs, step_code = run_step(t, windows, shared, extra)
        windows = [torch.cat([w[1:], o[None]]) for w, o in zip(windows, outputs[:n_states])]
        lasts = [o.clone() for o in outputs[n_states:n_states + n_nit]]
        shared = [o.clone() for o in outputs[n_states + n_nit:n_states + n_nit + n_shared]]
        code = torch.where(code == 0, step_code, code)
        return (t + 1, (outputs[-1] != 0).reshape(()), code, *windows, *lasts, *shared)

    carried = (torch.tensor(1, dtype=torch.int64), stop, torch.as_tensor(code,
               dtype=torch.int32), *windows, *lasts, *shared)
    final = while_loop_op(cond_fn, body_fn, carried, tuple(sliced + outer))
    _, _, code, windows, lasts, shared = split(final)
    current_checks().merge(code)
    rows = [w[-1:] for w in windows] + [v[None] for v in lasts]
    results = [r if info.kept(i) == 1 else r[:0] for i, r in enumerate(rows)] + list(shared)
    return results[0] if len(results) == 1 else tuple(results)
