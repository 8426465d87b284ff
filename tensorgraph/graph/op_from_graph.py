"""``OpFromGraph``: a graph packaged as one op, as in Theano / PyTensor
(``tensorgraph.compile.builders`` is PyTensor's import path of it).

``op = OpFromGraph([x, y], [x * y + 1])`` makes an op whose nodes compute that graph from
their own inputs: ``op(a, b)`` stands for ``a * b + 1``. Uses: a reusable block that prints
and shows as one node (``op.fgraph`` is its inner graph, which the graph view and
``debugprint`` open), a custom gradient (``lop_overrides``), a unit the rewrites leave
alone, or an op of the tensor layer built from other ops (``tensor.einsum.Einsum``).

- Shared variables the inner graph reads become extra inputs of each node (implicitly).
- ``inline=True``: rewriting replaces each node by a copy of the inner graph (then rewritten
  with the rest; the rewrite ``inline_op_from_graph``, in canonicalize, so in every mode);
  otherwise the node runs the inner graph compiled with the calling function's mode
  (``FunctionMaker`` calls ``prepare_for_mode``), or every inner node's ``perform`` when
  evaluated outside a function.
- The gradient is the inner graph's gradient, built on the node's inputs, outputs and output
  gradients (``lop_overrides`` replaces it: a callable ``(inputs, outputs, output_grads) ->
  input gradients``, or a list with one entry per input, each such a callable, ``None`` for
  the default or a ``DisconnectedType``/``NullType`` variable); the forward derivative
  likewise (``rop_overrides``: ``(inputs, eval_points) -> output derivatives``).
- Two OpFromGraph ops are equal only when they are the same object.

It is in the graph layer, so that the tensor layer can build ops on it: what it needs from
higher layers (compiling the inner graph, tensors of plain values, ``grad`` and ``Rop``) it
reaches through ``tensorgraph.hooks`` (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import threading

from tensorgraph import hooks
from tensorgraph.graph.basic import Apply, Constant, Variable, clone_replace, graph_inputs
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.gradient_types import DisconnectedType, NullType, disconnected_type
from tensorgraph.graph.op import HasInnerGraph, Op
from tensorgraph.graph.shared import SharedVariable
from tensorgraph.graph.utils import MissingInputError

__all__ = ["OpFromGraph"]


class OpFromGraph(HasInnerGraph, Op):
    """The graph from ``inputs`` to ``outputs`` as one op; see the module docstring."""

    __props__ = ()

    def __init__(self, inputs, outputs, inline=False, lop_overrides=None,
                 grad_overrides=None, rop_overrides=None, connection_pattern=None,
                 strict=False, name=None, **kwargs):
        single = isinstance(outputs, Variable)
        outputs = [outputs] if single else list(outputs)
        inputs = list(inputs)
        for what, items in (("inputs", inputs), ("outputs", outputs)):
            for k, var in enumerate(items):
                if not isinstance(var, Variable):
                    raise TypeError(f"OpFromGraph: {what}[{k}] must be a symbolic variable, "
                                    f"got {type(var).__name__}: {var!r}")
        for k, var in enumerate(inputs):
            if isinstance(var, (Constant, SharedVariable)):
                raise TypeError(f"OpFromGraph: inputs[{k}] ({var}) is a constant or shared "
                                "variable; inputs are free symbolic variables (shared "
                                "variables the graph reads are added by themselves)")
        shared = []
        for var in graph_inputs(outputs, blockers=inputs):
            if var in inputs or isinstance(var, Constant) or var in shared:
                continue
            if not isinstance(var, SharedVariable):
                raise MissingInputError(f"OpFromGraph: the outputs need {var} ({var.type}), "
                                        "which is not among the inputs; add it to them")
            if strict:
                raise ValueError(f"OpFromGraph(strict=True): the graph reads the shared "
                                 f"variable {var}; pass it as an input instead")
            shared.append(var)
        if grad_overrides is not None and lop_overrides is not None:
            raise ValueError("OpFromGraph: give lop_overrides or grad_overrides, not both")
        self.shared_inputs = shared
        if shared:         # inside, a shared variable is a plain input like the others
            stand_ins = [var.type() for var in shared]
            outputs = clone_replace(outputs, dict(zip(shared, stand_ins)))
            shared_inner = stand_ins
        else:
            shared_inner = []
        self.fgraph = FunctionGraph(inputs + shared_inner, outputs, clone=True)
        self.inline = bool(inline)
        self.lop_overrides = lop_overrides
        self.grad_overrides = grad_overrides
        self.rop_overrides = rop_overrides
        self._connection_pattern = connection_pattern
        self.name = name
        self.kwargs = kwargs
        self._lock = threading.Lock()
        self._functions: dict = {}

    # -- identity, printing, pickling -------------------------------------------------------

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __str__(self):
        return f"{self.name or type(self).__name__}{{inline={self.inline}}}"

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_lock", None)
        state["_functions"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- nodes ------------------------------------------------------------------------------

    def make_node(self, *inputs):
        n_explicit = len(self.fgraph.inputs) - len(self.shared_inputs)
        if len(inputs) == len(self.fgraph.inputs):        # a copy made with the shared ones
            inputs = inputs[:n_explicit]
        if len(inputs) != n_explicit:
            raise TypeError(f"{self}: expected {n_explicit} inputs, got {len(inputs)}")
        converted = []
        for k, (inner, var) in enumerate(zip(self.fgraph.inputs, inputs)):
            if not isinstance(var, Variable):
                var = hooks.as_variable(var)
            fit = inner.type.convert_variable(var)
            if fit is None:
                raise TypeError(f"{self}: input {k} must have type {inner.type}, got {var} "
                                f"({var.type})")
            converted.append(fit)
        return Apply(self, converted + list(self.shared_inputs),
                     [out.type() for out in self.fgraph.outputs])

    def __call__(self, *inputs, **kwargs):
        # Op.__call__: the node, with test values when they are on (computed by the inner
        # graph's perform)
        return super().__call__(*inputs)

    def connection_pattern(self, node):
        if self._connection_pattern is not None:
            pattern = [list(row) for row in self._connection_pattern]
            return pattern + [[True] * len(node.outputs)
                              for _ in range(len(node.inputs) - len(pattern))]
        reads = [set(graph_inputs([out])) for out in self.fgraph.outputs]
        return [[inp in r for r in reads] for inp in self.fgraph.inputs]

    def do_constant_folding(self, fgraph, node) -> bool:
        return False

    # -- running ----------------------------------------------------------------------------

    def prepare_for_mode(self, node, mode) -> None:
        """Run ``node`` with the inner graph compiled in ``mode`` (the calling function's)."""
        node.tag.ofg_mode = mode

    def function(self, mode=None):
        """The inner graph compiled with ``mode`` (default: every node's ``perform``, no
        rewrites), once per mode."""
        mode = hooks.perform_mode() if mode is None else mode
        fn = self._functions.get(mode)
        if fn is None:
            with self._lock:
                fn = self._functions.get(mode)
                if fn is None:
                    fgraph, _ = self.fgraph.clone_get_equiv()
                    fn = hooks.compile_function(fgraph.inputs, fgraph.outputs, mode=mode,
                                                on_unused_input="ignore", name=str(self))
                    self._functions[mode] = fn
        return fn

    def perform(self, node, inputs, output_storage):
        fn = self.function(getattr(node.tag, "ofg_mode", None))
        results = fn(*inputs)
        results = results if isinstance(results, list) else [results]
        for cell, value in zip(output_storage, results):
            cell[0] = value

    # -- derivatives ------------------------------------------------------------------------

    def _inlined(self, node_inputs, variables, extra=None):
        """``variables`` of the inner graph, rebuilt on the node's inputs (and ``extra``
        replacements)."""
        pairs = dict(zip(self.fgraph.inputs, node_inputs))
        pairs.update(extra or {})
        return clone_replace(list(variables), pairs)

    def L_op(self, inputs, outputs, output_grads):
        explicit = len(inputs) - len(self.shared_inputs)
        if self.grad_overrides is not None:
            return self._complete(self.grad_overrides(inputs[:explicit], output_grads), inputs)
        if callable(self.lop_overrides):
            return self._complete(self.lop_overrides(inputs[:explicit], outputs, output_grads),
                                  inputs)
        cotangents = [g.type() if not isinstance(g.type, (DisconnectedType, NullType))
                      else None for g in output_grads]
        known = {out: c for out, c in zip(self.fgraph.outputs, cotangents) if c is not None}
        if not known:
            return [disconnected_type() for _ in inputs]
        inner = hooks.grad(None, list(self.fgraph.inputs), known_grads=known,
                           disconnected_inputs="ignore",
                           return_disconnected="disconnected", null_gradients="return")
        extra = {c: g for c, g in zip(cotangents, output_grads) if c is not None}
        extra.update(dict(zip(self.fgraph.outputs, outputs)))
        plain = [k for k, g in enumerate(inner)
                 if not isinstance(g.type, (DisconnectedType, NullType))]
        rebuilt = self._inlined(inputs, [inner[k] for k in plain], extra) if plain else []
        result = list(inner)
        for k, g in zip(plain, rebuilt):
            result[k] = g
        if isinstance(self.lop_overrides, (list, tuple)):
            result = self._per_input_overrides(inputs, outputs, output_grads, result)
        return result

    def _per_input_overrides(self, inputs, outputs, output_grads, default):
        explicit = len(inputs) - len(self.shared_inputs)
        if len(self.lop_overrides) != explicit:
            raise ValueError(f"{self}: lop_overrides has {len(self.lop_overrides)} entries, "
                             f"one per input ({explicit}) expected")
        result = list(default)
        for k, entry in enumerate(self.lop_overrides):
            if entry is None:
                continue
            if isinstance(entry, Variable):
                result[k] = entry
            elif callable(entry):
                result[k] = entry(inputs[:explicit], outputs, output_grads)
            else:
                raise TypeError(f"{self}: lop_overrides[{k}] must be None, a callable or a "
                                f"DisconnectedType/NullType variable, got {entry!r}")
        return result

    def _complete(self, grads, inputs):
        """An override's gradients for the explicit inputs, plus the shared inputs' (none:
        an override says nothing about them)."""
        grads = list(grads)
        explicit = len(inputs) - len(self.shared_inputs)
        if len(grads) != explicit:
            raise ValueError(f"{self}: the gradient override returned {len(grads)} gradients "
                             f"for {explicit} inputs")
        return grads + [disconnected_type() for _ in self.shared_inputs]

    def R_op(self, inputs, eval_points):
        if self.rop_overrides is not None:
            return list(self.rop_overrides(inputs, eval_points))
        wrt = [inp for inp, p in zip(self.fgraph.inputs, eval_points) if p is not None]
        if not wrt:
            return [None] * len(self.fgraph.outputs)
        tangents = [p.type() for p in eval_points if p is not None]
        inner = hooks.Rop(list(self.fgraph.outputs), wrt, tangents,
                          disconnected_outputs="ignore", return_disconnected="None")
        present = [k for k, t in enumerate(inner) if t is not None]
        extra = dict(zip(tangents, [p for p in eval_points if p is not None]))
        rebuilt = self._inlined(inputs, [inner[k] for k in present], extra) if present else []
        result = [None] * len(inner)
        for k, t in zip(present, rebuilt):
            result[k] = t
        return result
