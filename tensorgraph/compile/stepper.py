"""``Stepper``: one call of a compiled function, run node by node on request.

``f.stepper(*args)`` prepares a call and runs nothing. ``step()`` runs the next node's thunk,
the same thunk a call runs (its C function where the node has C), in the same order (for a
lazy ``ifelse``: only the branch it takes), so what a stepper shows is what runs::

    run = train.stepper(X, Y)
    run.step(); run.step(5); run.run_to("BK"); run.run_until_nonfinite()
    run.values["BK"]            # what node BK computed (ids as dprint prints them)
    prediction, xent = run.finish()   # the rest; the same results as train(X, Y)

Why a VM of its own: the stepper links the function's graph again with its own storage cells
(the compiled C is found in memory, nothing compiles), so normal calls of the function, even
between two steps, neither see nor disturb it, and their fast path stays untouched. Shared
variables are read into copies when the stepper is made: inplace nodes write into the copies,
and the updates are written to the shared variables by ``finish()``, all at once. A stepper
abandoned, or stopped by an error, leaves them as they were.

``values`` keeps every output a node produced, as it was then: a copy where a later node of
the call may overwrite it (an input of an inplace node, a view, or any buffer of a VM that
keeps its buffers between calls), the array itself otherwise (gc only drops the VM's
reference). Memory grows with the graph, a price paid only while stepping. The stepper's VM goes back to its function when the stepper finishes (or is
dropped), and the next stepper of that function reuses it: making a stepper then costs
microseconds, not a new link.
"""

from __future__ import annotations

import time
import weakref

import numpy as np

from tensorgraph.compile.sharedvalue import copy_value
from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.errors import reraise_with_node
from tensorgraph.graph.ids import graph_ids
from tensorgraph.graph.utils import format_user_line

__all__ = ["Stepper", "NonFinite", "NonFiniteInputs", "call_arguments"]


class NonFinite:
    """Where ``run_until_nonfinite`` stopped: the first node whose output holds nan or inf
    while none of its inputs did (the culprit, not a victim)."""

    def __init__(self, node, node_id: str, output: int, nan: int, inf: int, size: int):
        self.node, self.node_id, self.output = node, node_id, output
        self.nan, self.inf, self.size = nan, inf, size
        self.line = format_user_line(node)

    def __str__(self) -> str:
        var = self.node.outputs[self.output]
        name = f" ({var.name})" if var.name else ""
        counts = ", ".join(f"{n} {kind}" for kind, n in (("nan", self.nan), ("inf", self.inf))
                           if n)
        return (f"output {self.output}{name} of {self.node.op} [id {self.node_id}] has "
                f"{counts} (of {self.size} elements); created at {self.line or '(unknown)'}")

    __repr__ = __str__


class NonFiniteInputs:
    """Where ``run_until_nonfinite`` stopped before running any node: values the call starts
    with (its arguments, the shared variables it reads) already hold nan or inf, as after a
    training loop that diverged. ``found``: one ``(variable, label, nan, inf, size)`` per such
    value, in input order; ``node`` is None (no node made them)."""

    node = None

    def __init__(self, found):
        self.found = found

    @property
    def variables(self) -> list:
        return [item[0] for item in self.found]

    def __str__(self) -> str:
        parts = []
        for _var, label, nan, inf, size in self.found:
            counts = ", ".join(f"{n} {kind}" for kind, n in (("nan", nan), ("inf", inf)) if n)
            parts.append(f"{label} has {counts} (of {size} elements)")
        return ("the call starts with NaN/Inf before any node runs: " + "; ".join(parts)
                + ". No node of this call made them: they come from an earlier call (a "
                "diverged training step writes them into the shared variables) or from the "
                "caller; step the earlier call, or reset the values")


def call_arguments(function, args, kwargs) -> list:
    """The values a call ``function(*args, **kwargs)`` would run with (bound to the inputs,
    defaults filled in, converted to the inputs' types, copied), or the TypeError the call
    would raise, naming the input. Nothing runs (the stepper and ``%tg_profile`` check a call
    before making it)."""
    if kwargs or len(args) != len(function.maker.inputs):
        args = function._bind(args, kwargs)
    values = []
    for pos, (value, convert) in enumerate(zip(args, function._filters)):
        try:
            values.append(copy_value(convert(value)))
        except (TypeError, ValueError) as exc:
            raise TypeError(function._bad_input_message(pos, value, exc)) from None
    return values


class Stepper:
    """A resumable call of ``function`` with ``args`` (see the module docstring).

    Attributes
    ----------
    function : the Function
    position : how many nodes have run
    current : the node that runs next (None when every node has run)
    ran : the nodes run so far, in order
    times : {node: seconds its thunk took}
    done : every node has run; finished : ``finish()`` returned the results
    """

    def __init__(self, function, *args, **kwargs):
        backend = getattr(function.vm, "backend", None)
        if backend is not None:
            raise TypeError(f"a stepper runs the nodes one by one, but mode "
                            f"{function.maker.mode.linker_name!r} runs the whole graph as one "
                            f"{backend} program (it has no per-node thunks); compile the function "
                            "with mode='FAST_RUN' or 'FAST_COMPILE' to step it")
        self.function = function
        maker = function.maker
        self.ids = graph_ids(function)
        values = call_arguments(function, args, kwargs)
        self._args = [copy_value(v) for v in values]  # for restart(): nodes may destroy inputs
        shared = [copy_value(s.container.storage[0]) for s in maker.shared_inputs]
        # a VM of the function's current tier (no waiting for its optimized code): idle ones
        # left by earlier steppers of that tier, else a new one with cells of its own
        tier = function.tier
        idle = [vm for vm in _IDLE_VMS.get(function, []) if getattr(vm, "tier", tier) == tier]
        _IDLE_VMS[function] = idle
        self.vm = idle.pop() if idle else function.new_vm([[None] for _ in maker.fgraph.inputs])
        #: which code the nodes run: 'quick' (cached C, numpy perform for the rest) or
        #: 'optimized'; each thunk's ``kind`` ('c' or 'py') says it per node
        self.tier = getattr(self.vm, "tier", "optimized")
        for cell, value in zip(self.vm.input_storage, values + shared):
            cell[0] = value
        self._give_back = weakref.finalize(self, _give_back, weakref.ref(function), self.vm)
        self._bad: dict = {}  # variable -> whether its value holds nan/inf (computed once)
        self._unsafe = _overwritten(self.vm)
        self.position = 0
        self.ran: list[Apply] = []
        self.times: dict = {}
        self._values: dict = {}
        for var, cell in zip(maker.fgraph.inputs, self.vm.input_storage):
            self._values[var] = cell[0]
        self.failed: BaseException | None = None
        self.finished = False
        self._order = self.vm.lazy_schedule() if self.vm.lazy else self._plain_order()
        self._next = next(self._order, None)

    # -- where the run is ---------------------------------------------------------------

    @property
    def current(self) -> Apply | None:
        return None if self._next is None else self.vm.nodes[self._next]

    @property
    def done(self) -> bool:
        return self._next is None

    @property
    def values(self) -> StepValues:
        """``values[var_or_id]``: the value a variable had when its node ran (graph inputs and
        shared variables: as the call started)."""
        return StepValues(self)

    def __repr__(self) -> str:
        name = self.function.name or "function"
        state = ("finished" if self.finished else "failed" if self.failed else
                 "done, finish() for the results" if self.done else
                 f"next: {self.current.op} [id {self.ids[self.current]}]")
        return f"<Stepper of {name}: {self.position} of {len(self.vm.nodes)} nodes run; {state}>"

    # -- running --------------------------------------------------------------------------

    def step(self, n: int = 1) -> list[Apply]:
        """Run the next ``n`` nodes (fewer when the call ends first); the nodes run."""
        self._alive()
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"step(n): n must be a whole number >= 0, got {n!r}")
        ran = []
        while len(ran) < n and not self.done:
            ran.append(self._advance())
        return ran

    def run_to(self, node_or_id) -> list[Apply]:
        """Run until ``node_or_id`` (an Apply, one of its outputs, or its id) has run."""
        self._alive()
        node = self._node(node_or_id)
        if node in self.times:
            raise ValueError(f"run_to: {node.op} [id {self.ids[node]}] has run already "
                             f"(position {self.ran.index(node)})")
        ran = []
        while not self.done:
            ran.append(self._advance())
            if ran[-1] is node:
                return ran
        raise ValueError(f"run_to: {node.op} [id {self.ids[node]}] did not run in this call "
                         "(a branch of an ifelse not taken); every other node has run")

    def run_until(self, predicate) -> Apply | None:
        """Run until ``predicate(node, outputs)`` is true after a node (its output values); that
        node, or None when the call ended first. Bounded: a call runs each node at most once
        (a lazy node a few times)."""
        self._alive()
        while not self.done:
            node = self._advance()
            if node in self.times and predicate(node, [self._values.get(o)
                                                       for o in node.outputs]):
                return node
        return None

    def run_until_nonfinite(self) -> NonFinite | NonFiniteInputs | None:
        """Run until the first node that turns finite inputs into nan or inf; where it stopped
        (node, output, counts, user line), or None when the call ended with none. When the
        call's own arguments or shared variables already hold nan or inf, nothing runs: the
        answer is a ``NonFiniteInputs`` naming them (every node reading them would only be a
        victim)."""
        self._alive()
        bad_inputs = self._nonfinite_inputs()
        if bad_inputs:
            return NonFiniteInputs(bad_inputs)
        while not self.done:
            node = self._advance()
            if node not in self.times:
                continue
            if any(self._holds_bad(v) for v in node.inputs):
                continue  # a victim of an earlier node, not the culprit
            for k, out in enumerate(node.outputs):
                counts = _bad_counts(self._values.get(out)) if self._holds_bad(out) else None
                if counts:
                    return NonFinite(node, self.ids[node], k, counts[0], counts[1],
                                     int(np.size(self._values[out])))
        return None

    def finish(self):
        """Run the rest; return the outputs as the function returns them, and write the
        updates to the shared variables (all at once)."""
        self._alive()
        if self.finished:
            raise RuntimeError("this stepper has finished; make another with f.stepper(...)")
        while not self.done:
            self._advance()
        maker = self.function.maker
        values = [cell[0] for cell in self.vm.output_storage]
        if not self.vm.allow_gc:  # kept buffers are reused by the next run: hand out copies
            values = [copy_value(v) for v in values]
        n_out = len(maker.outputs)
        for target, value in zip(maker.update_targets, values[n_out:]):
            target.container.storage[0] = value
        self.finished = True
        self._give_back()
        if maker.unpack_single:
            return values[0]
        return values[:n_out] if maker.update_targets else values

    def restart(self) -> Stepper:
        """The same call from the start, in a new stepper (this one is abandoned)."""
        return Stepper(self.function, *self._args)

    # -- inside ---------------------------------------------------------------------------

    def _node(self, node_or_id) -> Apply:
        if isinstance(node_or_id, Variable) and node_or_id.owner is not None:
            node_or_id = node_or_id.owner
        if isinstance(node_or_id, Apply):
            if node_or_id not in self.vm._index:
                raise KeyError(f"{node_or_id} is not a node of the compiled graph of "
                               f"{self.function._label()}")
            return node_or_id
        found = self.ids.find(str(node_or_id).strip()) if isinstance(node_or_id, str) else None
        if not isinstance(found, Apply):
            raise KeyError(f"no node with id {node_or_id!r} in the compiled graph of "
                           f"{self.function._label()} (ids as dprint(f) prints them)")
        return found

    def _nonfinite_inputs(self) -> list:
        """(variable, label, nan, inf, size) for each graph input holding nan or inf."""
        maker = self.function.maker
        n_explicit = len(maker.inputs)
        found = []
        for pos, var in enumerate(maker.fgraph.inputs):
            if not self._holds_bad(var):
                continue
            value = self._values[var]
            nan, inf = _bad_counts(value)
            if pos < n_explicit:
                name = maker.inputs[pos].name
                label = f"input {pos}" + (f" ({name})" if name else "")
            else:
                shared = maker.shared_inputs[pos - n_explicit]
                label = f"shared variable {shared.name or shared}"
            found.append((var, label, nan, inf, int(np.size(value))))
        return found

    def _holds_bad(self, var) -> bool:
        found = self._bad.get(var)
        if found is None:
            value = self._values.get(var, getattr(var, "data", None))
            found = self._bad[var] = _holds_nonfinite(value)
        return found

    def _alive(self) -> None:
        if self.failed is not None:
            raise RuntimeError(f"this stepper stopped on an error ({type(self.failed).__name__})"
                               "; make another with f.stepper(...)")

    def _advance(self) -> Apply:
        i = self._next
        node, thunk = self.vm.nodes[i], self.vm.thunks[i]
        started = time.perf_counter()
        try:
            requires = thunk()
        except Exception as exc:
            self.failed = exc
            self._next = None
            self._give_back.detach()  # a VM that failed mid-call is not reused
            try:
                reraise_with_node(exc, node, [self.vm.storage_map[v][0] for v in node.inputs],
                                  i, fgraph=self.vm.fgraph)
            finally:
                self.vm.storage_map.clear()  # nothing of the failed call stays alive
        self.position += 1
        if not (getattr(thunk, "lazy", False) and requires):
            self.times[node] = self.times.get(node, 0.0) + time.perf_counter() - started
            self.ran.append(node)
            unsafe = self._unsafe
            for out, cell in zip(node.outputs, thunk.outputs):
                self._values[out] = copy_value(cell[0]) if unsafe is None or out in unsafe \
                    else cell[0]
        try:
            self._next = self._order.send(requires)
        except StopIteration:
            self._next = None
        return node

    def _plain_order(self):
        """Node indices in toposort order (the VM's loop), freeing cells as it does."""
        free_after = self.vm._free_after
        for i in range(len(self.vm.nodes)):
            yield i
            if free_after is not None:
                for cell in free_after[i]:
                    cell[0] = None


class StepValues:
    """``run.values``: look values up by Variable, by an op node (its only output) or by id."""

    def __init__(self, stepper: Stepper):
        self._stepper = stepper

    def _var(self, key) -> Variable:
        stepper = self._stepper
        if isinstance(key, str):
            found = stepper.ids.find(key.strip())
            if found is None:
                raise KeyError(f"no variable or node with id {key!r} in the compiled graph")
            key = found
        if isinstance(key, Apply):
            if len(key.outputs) != 1:
                raise KeyError(f"{key.op} has {len(key.outputs)} outputs: ask for one of "
                               "node.outputs")
            key = key.outputs[0]
        return key

    def __getitem__(self, key):
        var = self._var(key)
        values = self._stepper._values
        if var not in values:
            if var.owner is None and hasattr(var, "data"):
                return var.data
            raise KeyError(f"{var} has not been computed yet (its node has not run)")
        return values[var]

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return len(self._stepper._values)

    def __iter__(self):
        return iter(self._stepper._values)


#: {function: [VMs of finished steppers]}: the next stepper reuses one (see the module docstring)
_IDLE_VMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _give_back(function_ref, vm) -> None:
    """A stepper is done with ``vm``: empty its cells, keep it for the next stepper."""
    function = function_ref()
    for cell in vm.input_storage + vm.output_storage:  # what the caller now owns goes too
        cell[0] = None
    if function is not None:
        _IDLE_VMS.setdefault(function, []).append(vm)


def _overwritten(vm):
    """The variables whose buffers a later node of the call may write into (inputs of inplace
    nodes, views and what they view); None when any may be (a VM keeping its buffers reuses
    them in the next call). Kept on the VM: it is the same for every stepper using it."""
    found = getattr(vm, "_stepper_overwritten", False)
    if found is not False:
        return found
    if not vm.allow_gc:
        found = None
    else:
        found = set()
        for node in vm.nodes:
            for inputs in (getattr(node.op, "destroy_map", None) or {}).values():
                found.update(node.inputs[i] for i in inputs)
            for k, inputs in (getattr(node.op, "view_map", None) or {}).items():
                found.add(node.outputs[k])
                found.update(node.inputs[i] for i in inputs)
    vm._stepper_overwritten = found
    return found


def _holds_nonfinite(value) -> bool:
    """Whether a float value holds nan or inf: one reduction (a sum is finite only when every
    element is), then an exact look only when the sum is not (it may overflow)."""
    if not isinstance(value, (np.ndarray, np.generic, float, complex)):
        return False
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc":
        return False
    with np.errstate(all="ignore"):
        if np.isfinite(arr.sum()):
            return False
    return not bool(np.isfinite(arr).all())


def _bad_counts(value) -> tuple[int, int] | None:
    """(nan, inf) counts of a float value that has any, else None."""
    if not isinstance(value, (np.ndarray, np.generic, float, complex)):
        return None
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc":
        return None
    nan, inf = int(np.count_nonzero(np.isnan(arr))), int(np.count_nonzero(np.isinf(arr)))
    return (nan, inf) if nan or inf else None
