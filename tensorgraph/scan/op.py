"""The ``Scan`` op: a loop over an inner graph, as one node of the outer graph.

``scan()`` (``tensorgraph/scan/basic.py``) builds it from a user's step function. The op holds
the inner graph as a ``FunctionGraph`` (``op.fgraph``) and the loop's layout as a ``ScanInfo``.

Outer node inputs, in order::

    n_steps, sequences..., initial states..., shared initial values..., non-sequences...

Inner graph inputs (the step function's arguments), in order::

    one per (sequence, tap), one per (state, tap), one per shared state, one per non-sequence

Inner graph outputs::

    new value of each state, each output not fed back ("nit_sot"), each shared state's new
    value, and, for a while loop, the condition to stop after this step

Outer node outputs::

    per state: its values at each step (n_steps rows, the initial rows not included), per
    nit_sot output: its values (n_steps rows), per shared state: its final value

At step ``t`` a sequence ``x`` with taps ``taps`` gives ``x[t + k - lo]`` for each tap ``k``
(``lo = min(min(taps), 0)``), and a state with taps ``(-2, -1)`` gives its values of steps
``t - 2`` and ``t - 1`` (negative steps come from the initial value, whose first ``L = 2``
rows are steps ``-2, -1``). A state with the single tap ``-1`` has its initial value as is
(no leading axis).

``ScanInfo.keep`` (set by the memory rewrite, ``scan_save_mem``) makes an output hold only its
last ``k`` steps: the loop then keeps ``max(k, L)`` rows in a ring instead of ``n_steps``.

How it runs: ``perform`` runs ``ScanLoop`` (``loop.py``) with the node's *inner runner*: the
inner graph compiled with the outer function's mode (its rewrites, linker and wrappers:
DebugMode, NanGuardMode, MonitorMode) when the function is compiled
(``FunctionMaker`` calls ``op.prepare_for_mode(node, mode)``), kept as
``node.tag.scan_runner``; nodes evaluated outside a compiled function (test values, DebugMode's
rewrite checks) use a reference runner: every inner node's ``perform``, no rewrites.

For tools: ``op.fgraph`` (the inner graph as built), ``Scan.runner_of(node)`` (its compiled
inner ``Function``: ``runner.function.maker.fgraph`` and its ``rewrite_history``) and
``ScanLoop`` (``arguments()`` / ``accept(outputs)``: one iteration at a time) are what a
stepper, a profile or a graph view needs to look inside.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import tensorgraph.tensor as tt
from tensorgraph import hooks
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.op import Op
from tensorgraph.graph.utils import compiling
from tensorgraph.rewriting.history import graph_signature
from tensorgraph.tensor.shape import as_int_scalar
from tensorgraph.tensor.type import TensorType

__all__ = ["Scan", "ScanInfo"]


@dataclass(frozen=True)
class ScanInfo:
    """The layout of a scan: how many inputs and outputs of each kind, and their taps.

    Attributes
    ----------
    seq_taps : per sequence, its taps (ints, any sign)
    state_taps : per state (an output fed back), its taps (negative ints)
    n_nit_sot : outputs not fed back
    n_shared : shared variables the loop updates (their final value is an output)
    n_non_seqs : inputs read unchanged at every step
    as_while : the inner graph's last output says whether to stop after the step
    truncate_gradient : steps back-propagated by the gradient (-1: all)
    keep : None, or per state and nit_sot output the number of last steps kept (None: all)
    lengths_must_match : n_steps was taken from the sequences: they must all give that many
    """

    seq_taps: tuple = ()
    state_taps: tuple = ()
    n_nit_sot: int = 0
    n_shared: int = 0
    n_non_seqs: int = 0
    as_while: bool = False
    truncate_gradient: int = -1
    keep: tuple | None = None
    lengths_must_match: bool = False

    def __post_init__(self):
        seq_taps = tuple(tuple(int(k) for k in taps) for taps in self.seq_taps)
        state_taps = tuple(tuple(int(k) for k in taps) for taps in self.state_taps)
        for j, taps in enumerate(seq_taps):
            if not taps or len(set(taps)) != len(taps):
                raise ValueError(f"sequence {j}: taps must be distinct and non-empty, got "
                                 f"{list(taps)}")
        for k, taps in enumerate(state_taps):
            if not taps or len(set(taps)) != len(taps) or max(taps) >= 0:
                raise ValueError(f"output {k}: the taps of a value fed back must be distinct "
                                 f"negative ints (-1 is the previous step), got {list(taps)}")
        object.__setattr__(self, "seq_taps", seq_taps)
        object.__setattr__(self, "state_taps", state_taps)
        if self.keep is not None:
            keep = tuple(None if k is None else int(k) for k in self.keep)
            if len(keep) != self.n_steps_outputs or any(k is not None and k < 0 for k in keep):
                raise ValueError(f"keep needs one entry (None or >= 0) per state and nit_sot "
                                 f"output ({self.n_steps_outputs}), got {self.keep}")
            object.__setattr__(self, "keep", None if all(k is None for k in keep) else keep)

    # -- counts --------------------------------------------------------------------------

    @property
    def n_seqs(self) -> int:
        return len(self.seq_taps)

    @property
    def n_states(self) -> int:
        return len(self.state_taps)

    @property
    def n_steps_outputs(self) -> int:
        """Outputs with one row per step: the states, then the nit_sot outputs."""
        return self.n_states + self.n_nit_sot

    def state_length(self, k: int) -> int:
        """How many steps back state ``k`` reads: its initial value's rows (1 for tap -1)."""
        return -min(self.state_taps[k])

    def is_buffer_init(self, k: int) -> bool:
        """Whether state ``k``'s initial value has a leading axis of past steps (any taps but
        the single tap -1)."""
        return self.state_taps[k] != (-1,)

    def seq_span(self, j: int) -> tuple[int, int]:
        """(lo, hi): sequence ``j`` gives ``x[t + k - lo]``, so ``hi - lo`` of its entries are
        not steps."""
        taps = self.seq_taps[j]
        return min(min(taps), 0), max(max(taps), 0)

    def kept(self, i: int):
        """The number of last steps output ``i`` (state or nit_sot) keeps, None for all."""
        return None if self.keep is None else self.keep[i]

    # -- positions of the inner inputs and outputs, and of the outer ones ------------------

    @property
    def n_inner_inputs(self) -> int:
        return (sum(map(len, self.seq_taps)) + sum(map(len, self.state_taps)) + self.n_shared
                + self.n_non_seqs)

    @property
    def n_inner_outputs(self) -> int:
        return self.n_states + self.n_nit_sot + self.n_shared + int(self.as_while)

    def inner_seq_positions(self) -> list[list[int]]:
        """Per sequence, the inner input position of each of its taps."""
        pos, out = 0, []
        for taps in self.seq_taps:
            out.append(list(range(pos, pos + len(taps))))
            pos += len(taps)
        return out

    def inner_state_positions(self) -> list[list[int]]:
        pos, out = sum(map(len, self.seq_taps)), []
        for taps in self.state_taps:
            out.append(list(range(pos, pos + len(taps))))
            pos += len(taps)
        return out

    @property
    def inner_shared_start(self) -> int:
        return sum(map(len, self.seq_taps)) + sum(map(len, self.state_taps))

    @property
    def inner_non_seq_start(self) -> int:
        return self.inner_shared_start + self.n_shared

    @property
    def n_outer_inputs(self) -> int:
        return 1 + self.n_seqs + self.n_states + self.n_shared + self.n_non_seqs

    @property
    def outer_state_start(self) -> int:
        return 1 + self.n_seqs

    @property
    def outer_shared_start(self) -> int:
        return 1 + self.n_seqs + self.n_states

    @property
    def outer_non_seq_start(self) -> int:
        return 1 + self.n_seqs + self.n_states + self.n_shared

    def replace(self, **changes) -> ScanInfo:
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values.update(changes)
        return ScanInfo(**values)


class _GraphKey:
    """The structure of an inner graph (ops, constants, wiring, input types), compared and
    hashed so that equal scans are equal ops (merging identical loops needs it)."""

    __slots__ = ("entries", "_hash")

    def __init__(self, fgraph):
        self.entries = (tuple(graph_signature(fgraph)),
                        tuple(v.type for v in fgraph.inputs))
        self._hash = hash(self.entries)

    def __eq__(self, other):
        return (isinstance(other, _GraphKey) and self._hash == other._hash
                and self.entries == other.entries)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"<inner graph {self._hash & 0xffffffff:08x}>"


class Scan(Op):
    """A loop over an inner graph; see the module docstring.

    Parameters
    ----------
    inputs, outputs : the inner graph's inputs (placeholders, in ScanInfo order) and outputs
    info : ScanInfo
    name : shown in printing and errors ("scan 'rnn'")
    mode : None (the outer function's mode) or the mode the inner graph is compiled with
    labels : names of the user's variables, for messages and views: a dict with lists under
        'sequences', 'states', 'nit_sot', 'shared', 'non_sequences'
    allow_gc : None (``config.scan__allow_gc`` when the inner graph is compiled) or whether
        the inner function frees its intermediate results after each iteration
    """

    __props__ = ("info", "mode", "key")

    def __init__(self, inputs, outputs, info: ScanInfo, name: str | None = None, mode=None,
                 labels: dict | None = None, allow_gc: bool | None = None):
        self.info = info
        self.allow_gc = allow_gc
        self.fgraph = FunctionGraph(list(inputs), list(outputs), clone=True)
        self.name = name
        self.mode = mode
        self.labels = dict(labels or {})
        self._check_inner()
        self.key = _GraphKey(self.fgraph)
        self._lock = threading.Lock()
        self._reference = None
        self._shape_exprs = None

    def __str__(self):
        parts = [self.name] if self.name else []
        if self.info.as_while:
            parts.append("while")
        if self.info.keep is not None:
            parts.append("keep=[" + ", ".join("all" if k is None else str(k)
                                              for k in self.info.keep) + "]")
        return f"Scan{{{', '.join(parts)}}}" if parts else "Scan"

    __repr__ = __str__

    def __getstate__(self):
        """The layout, the inner graph, the name, mode and labels; the lock, the reference
        runner and the shape expressions are made again (the key too: hashes differ between
        processes)."""
        state = dict(self.__dict__)
        for transient in ("_lock", "_reference", "_shape_exprs", "key"):
            state.pop(transient, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.key = _GraphKey(self.fgraph)
        self._lock = threading.Lock()
        self._reference = None
        self._shape_exprs = None

    @property
    def title(self) -> str:
        """How messages name this loop: ``scan 'rnn'`` or ``scan``."""
        return f"scan {self.name!r}" if self.name else "scan"

    def outer_label(self, kind: str, i: int) -> str:
        """``sequence 1 (x)``, ``output 0 (h)``: how messages name an outer input or output."""
        names = self.labels.get(kind, ())
        name = names[i] if i < len(names) and names[i] else None
        word = {"sequences": "sequence", "states": "output", "nit_sot": "output",
                "shared": "shared variable", "non_sequences": "non-sequence"}[kind]
        number = i + self.info.n_states if kind == "nit_sot" else i
        return f"{word} {number}" + (f" ({name})" if name else "")

    # -- the inner graph's consistency --------------------------------------------------

    def _check_inner(self):
        info, fg = self.info, self.fgraph
        if len(fg.inputs) != info.n_inner_inputs:
            raise ValueError(f"{self.title}: the inner graph has {len(fg.inputs)} inputs, the "
                             f"layout needs {info.n_inner_inputs}")
        if len(fg.outputs) != info.n_inner_outputs:
            raise ValueError(f"{self.title}: the inner graph has {len(fg.outputs)} outputs, "
                             f"the layout needs {info.n_inner_outputs}")
        for k, positions in enumerate(info.inner_state_positions()):
            placeholder, out = fg.inputs[positions[0]], fg.outputs[k]
            if not _same_kind(placeholder.type, out.type):
                raise TypeError(f"{self.title}: {self.outer_label('states', k)} is fed back as "
                                f"{placeholder.type} but the step computes {out.type}")
        for q in range(info.n_shared):
            placeholder = fg.inputs[info.inner_shared_start + q]
            out = fg.outputs[info.n_steps_outputs + q]
            if not _same_kind(placeholder.type, out.type):
                raise TypeError(f"{self.title}: the update of {self.outer_label('shared', q)} "
                                f"has type {out.type} but the variable has type "
                                f"{placeholder.type}")
        if info.as_while:
            cond = fg.outputs[-1]
            if getattr(cond.type, "ndim", None) != 0:
                raise TypeError(f"{self.title}: the stop condition must be a scalar, got "
                                f"{cond.type}")

    # -- building nodes -----------------------------------------------------------------

    def expected_outer_types(self) -> list:
        """The type each outer input must fit (after n_steps), from the inner placeholders."""
        info, inputs = self.info, self.fgraph.inputs
        types = []
        for positions in info.inner_seq_positions():
            t = inputs[positions[0]].type
            types.append(TensorType(t.dtype, (None,) + tuple(t.shape)))
        for k, positions in enumerate(info.inner_state_positions()):
            t = inputs[positions[0]].type
            types.append(TensorType(t.dtype, (None,) + tuple(t.shape))
                         if info.is_buffer_init(k) else t)
        types.extend(v.type for v in inputs[info.inner_shared_start:])
        return types

    def make_node(self, n_steps, *outer):
        info = self.info
        n_steps = as_int_scalar(n_steps, f"{self.title}: n_steps")
        if len(outer) != info.n_outer_inputs - 1:
            raise TypeError(f"{self.title}: expected {info.n_outer_inputs - 1} inputs after "
                            f"n_steps, got {len(outer)}")
        converted = []
        for pos, (expected, var) in enumerate(zip(self.expected_outer_types(), outer)):
            if not isinstance(var, Variable):
                var = tt.as_tensor_variable(var)
            fit = _fit(expected, var)
            if fit is None:
                raise TypeError(f"{self.title}: {self._outer_input_label(pos + 1)} must have "
                                f"type {expected}, got {var.type} ({var})")
            converted.append(fit)
        static_n = None
        if isinstance(n_steps, Constant) and not info.as_while:
            static_n = int(n_steps.data)
        outputs = []
        fg = self.fgraph
        for i in range(info.n_steps_outputs):
            if i < info.n_states:
                init = converted[info.outer_state_start - 1 + i]
                shape = init.type.shape[1:] if info.is_buffer_init(i) else init.type.shape
                inner = fg.outputs[i].type.shape
                shape = tuple(a if a is not None else b for a, b in zip(shape, inner))
            else:
                shape = tuple(fg.outputs[i].type.shape)
            rows = static_n
            keep = info.kept(i)
            if keep is not None and rows is not None:
                rows = min(rows, keep)
            elif keep is not None and keep == 0:
                rows = 0
            outputs.append(TensorType(fg.outputs[i].type.dtype, (rows,) + tuple(shape))())
        for q in range(info.n_shared):
            outputs.append(converted[info.outer_shared_start - 1 + q].type())
        return Apply(self, [n_steps, *converted], outputs)

    def _outer_input_label(self, pos: int) -> str:
        info = self.info
        if pos == 0:
            return "n_steps"
        if pos < info.outer_state_start:
            return self.outer_label("sequences", pos - 1)
        if pos < info.outer_shared_start:
            state = pos - info.outer_state_start
            return "the initial value of " + self.outer_label("states", state)
        if pos < info.outer_non_seq_start:
            return self.outer_label("shared", pos - info.outer_shared_start)
        return self.outer_label("non_sequences", pos - info.outer_non_seq_start)

    # -- running ------------------------------------------------------------------------

    def prepare_for_mode(self, node, mode) -> None:
        """Compile the inner graph for a function compiled with ``mode`` (called by
        ``FunctionMaker`` after rewriting): the node then runs with it."""
        from tensorgraph.scan.loop import InnerRunner

        mode = self.mode if self.mode is not None else mode
        with compiling():
            maker = hooks.function_maker(list(self.fgraph.inputs), list(self.fgraph.outputs),
                                         mode=mode, name=f"{self.title} (inner)",
                                         on_unused_input="ignore")
        if getattr(maker.linker, "traces_inner_graphs", False):
            # a whole-graph back end (JAX, Numba, PyTorch) runs the loop inside its own
            # program: it needs the inner graph rewritten for it, not compiled on its own
            node.tag.scan_inner_fgraph = maker.fgraph
            return
        node.tag.scan_runner = InnerRunner(self, mode, maker=maker)

    @staticmethod
    def runner_of(node):
        """The inner runner ``node`` runs with: the one compiled for its function's mode, or
        the op's reference runner (numpy ``perform`` of every inner node)."""
        runner = getattr(node.tag, "scan_runner", None)
        return runner if runner is not None else node.op.reference_runner()

    def reference_runner(self):
        """The inner graph with every node's ``perform`` and no rewrites, compiled once."""
        if self._reference is None:
            with self._lock:
                if self._reference is None:
                    from tensorgraph.scan.loop import InnerRunner

                    self._reference = InnerRunner(self, hooks.perform_mode(), reference=True)
        return self._reference

    def perform(self, node, inputs, output_storage):
        from tensorgraph.scan.loop import ScanLoop

        runner = Scan.runner_of(node)
        loop = ScanLoop(self, node, inputs, output_storage, runner.prealloc)
        runner.run(loop)
        loop.store_results(output_storage)

    def do_constant_folding(self, fgraph, node) -> bool:
        return False  # a loop run at compile time could take as long as the call

    # -- shapes -------------------------------------------------------------------------

    def infer_shape(self, fgraph, node, input_shapes):
        from tensorgraph.scan.shapes import inner_output_shapes
        info = self.info
        n = node.inputs[0]
        if info.as_while:
            rows = [None] * info.n_steps_outputs
        else:
            rows = []
            for i in range(info.n_steps_outputs):
                keep = info.kept(i)
                rows.append(n if keep is None else tt.minimum(n, keep))
        shapes = []
        for k in range(info.n_states):
            init_shape = input_shapes[info.outer_state_start + k]
            state = tuple(init_shape[1:]) if info.is_buffer_init(k) else tuple(init_shape)
            shapes.append((rows[k],) + state)
        nit = inner_output_shapes(self, node, input_shapes)
        for m in range(info.n_nit_sot):
            shapes.append((rows[info.n_states + m],) + tuple(nit[m]))
        for q in range(info.n_shared):
            shapes.append(input_shapes[info.outer_shared_start + q])
        return shapes

    # -- gradients ------------------------------------------------------------------------

    def connection_pattern(self, node):
        from tensorgraph.scan.shapes import outer_dependencies

        deps = outer_dependencies(self)
        return [[i in deps[o] for o in range(len(node.outputs))]
                for i in range(len(node.inputs))]

    def L_op(self, inputs, outputs, output_grads):
        from tensorgraph.scan.grad import scan_l_op

        return scan_l_op(self, inputs, outputs, output_grads)

    def R_op(self, inputs, eval_points):
        from tensorgraph.scan.grad import scan_r_op

        return scan_r_op(self, inputs, eval_points)


def _same_kind(a, b) -> bool:
    """Whether values of type ``b`` can stand where type ``a`` is expected (same dtype and
    ndim for tensors, equal types otherwise)."""
    if hasattr(a, "dtype") and hasattr(b, "dtype"):
        return a.dtype == b.dtype and a.ndim == b.ndim
    return a == b


def _fit(expected, var):
    if expected == var.type:
        return var
    if hasattr(expected, "dtype"):
        if not (hasattr(var.type, "dtype") and var.type.dtype == expected.dtype
                and var.type.ndim == expected.ndim):
            return None
        return expected.convert_variable(var)
    return var if expected == var.type else None
