"""``Stepper``: one call of a compiled function, run node by node on request.

``f.stepper(*args)`` prepares a call and runs nothing. ``step()`` runs the next node's thunk,
the same thunk a call runs (its C function where the node has C), in the same order (for a
lazy ``ifelse``: only the branch it takes), so what a stepper shows is what runs::

    run = train.stepper(X, Y)
    run.step(); run.step(5); run.run_to("BK"); run.run_until_nonfinite()
    run.values["BK"]            # what node BK computed (ids as dprint prints them)
    prediction, xent = run.finish()   # the rest; the same results as train(X, Y)

Stepping into a scan: when the next node is a ``Scan``, ``step()`` enters it and runs its
inner graph (the step as compiled, the ids the graph view draws in the scan's group: ``D/B``
is inner node ``B`` of scan ``D``) node by node, one iteration after the other, with a
stepper of the inner function per iteration fed by the loop (``ScanLoop``: the same buffers,
the same checks as a call); after the last iteration the scan's outputs are stored and the
outer graph goes on. ``run_to_iteration(k)`` runs the entered (or next) scan up to the start
of iteration ``k``; ``values_at("D/B", k)`` is what inner node ``B`` computed in iteration
``k``; ``run_until_nonfinite()`` looks inside the loop and names the iteration and the inner
node. ``step_over()`` runs a whole scan (or the rest of it) as one node.

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
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.errors import reraise_with_node
from tensorgraph.graph.ids import graph_ids
from tensorgraph.graph.utils import format_user_line

__all__ = ["Stepper", "NonFinite", "NonFiniteInputs", "ScanVisit", "call_arguments"]

#: joins a scan node's id and an inner node's id (``D/B``), as the graph view does
SEP = "/"


class NonFinite:
    """Where ``run_until_nonfinite`` stopped: the first node whose output holds nan or inf
    while none of its inputs did (the culprit, not a victim)."""

    #: inside a scan: the iteration, and the scan node and its id (None outside)
    iteration = scan = scan_id = None

    def __init__(self, node, node_id: str, output: int, nan: int, inf: int, size: int):
        self.node, self.node_id, self.output = node, node_id, output
        self.nan, self.inf, self.size = nan, inf, size
        self.line = format_user_line(node)

    def inside(self, scan, scan_id: str, iteration: int) -> NonFinite:
        """This culprit was found in ``iteration`` of ``scan`` (id ``scan_id``): its id gets
        the scan's as prefix (``D/B``), outermost scan first."""
        if self.scan is None:
            self.iteration, self.scan, self.scan_id = iteration, scan, scan_id
        self.node_id = scan_id + SEP + self.node_id
        return self

    def __str__(self) -> str:
        var = self.node.outputs[self.output]
        name = f" ({var.name})" if var.name else ""
        counts = ", ".join(f"{n} {kind}" for kind, n in (("nan", self.nan), ("inf", self.inf))
                           if n)
        where = (f" in iteration {self.iteration} of {self.scan.op} [id {self.scan_id}]"
                 if self.scan is not None else "")
        return (f"output {self.output}{name} of {self.node.op} [id {self.node_id}]{where} has "
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

    __repr__ = __str__  # a cell's last line shows the message, as NonFinite's


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
        except OverflowError as exc:  # Python ints out of the dtype's range
            raise OverflowError(function._bad_input_message(pos, value, exc)) from None
    return values


class Stepper:
    """A resumable call of ``function`` with ``args`` (see the module docstring).

    Attributes
    ----------
    function : the Function
    position : how many nodes have run
    current : the node that runs next (None when every node has run)
    ran : the nodes run so far, in order
    times : {node: seconds its thunk took} (a scan stepped into: the time of its inner nodes)
    done : every node has run; finished : ``finish()`` returned the results
    scan : the ``ScanVisit`` of the scan node being stepped through, or None
    visits : {scan node: its ScanVisit}, for every scan stepped into (finished ones too)
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
        #: which code the nodes run: 'quick' (cached C, the quick tier's C, numpy perform
        #: where it is exact: link/c/quick.py) or 'optimized'; each thunk's ``kind`` ('c',
        #: 'quick' or 'py') says it per node
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
        self.scan: ScanVisit | None = None
        self.visits: dict = {}
        self._last = None  # what the last advance ran: ("node" | "entered", node) or
        #                    ("scan", visit, inner stepper, iteration)
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

    @property
    def current_id(self) -> str | None:
        """The id of the node that runs next, inside the scans entered: ``'D/B'`` (None when
        every node has run)."""
        if self.scan is not None:
            inner = self.scan.inner
            rest = inner.current_id if inner is not None else None
            return self.ids[self.scan.node] + (SEP + rest if rest else "")
        return None if self.current is None else self.ids[self.current]

    @property
    def current_node(self) -> Apply | None:
        """The node that runs next, inside the scans entered (an inner node)."""
        if self.scan is not None and self.scan.inner is not None:
            return self.scan.inner.current_node
        return self.current

    @property
    def iteration(self) -> int | None:
        """The iteration of the scan entered (this level's), or None outside a scan."""
        return None if self.scan is None else self.scan.loop.t

    def where(self) -> str:
        """Where the run is, in words: the scans entered with their iterations, the next node."""
        parts, run = [], self
        while run.scan is not None:
            parts.append(f"iteration {run.scan.loop.t} of {run.scan.node.op} "
                         f"[id {run.ids[run.scan.node]}]")
            if run.scan.inner is None:
                break
            run = run.scan.inner
        node = self.current_node
        if node is not None:
            parts.append(f"next: {node.op} [id {self.current_id}]")
        return ", ".join(parts)

    def __repr__(self) -> str:
        name = self.function.name or "function"
        state = ("finished" if self.finished else "failed" if self.failed else
                 "done, finish() for the results" if self.done else self.where())
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
        if isinstance(node_or_id, str) and SEP in node_or_id:
            return self._run_to_inner(node_or_id.strip().upper())
        node = self._node(node_or_id)
        if node in self.times:
            raise ValueError(f"run_to: {node.op} [id {self.ids[node]}] has run already "
                             f"(position {self.ran.index(node)})")
        ran = []
        while not self.done:
            ran.append(self._advance())
            if self._last is not None and self._last[0] != "scan" and self._last[1] is node:
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
            if self._last[0] == "scan":
                continue
            node = self._last[1]
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
        bad_inputs = self._nonfinite_inputs() if self.position == 0 and self.scan is None else []
        if bad_inputs:
            return NonFiniteInputs(bad_inputs)
        while not self.done:
            self._advance()
            found = self._last_culprit()
            if found is not None:
                return found
        return None

    def _last_culprit(self) -> NonFinite | None:
        """The last node run (an inner node inside a scan), when it turned finite inputs into
        nan or inf."""
        last = self._last
        if last is None or last[0] == "entered":
            return None  # a scan stepped through: its inner nodes were looked at
        if last[0] == "scan":
            _, visit, inner, t = last
            found = inner._last_culprit() if inner is not None else None
            return None if found is None else found.inside(visit.node, self.ids[visit.node], t)
        node = last[1]
        # a NaN written into the graph (a constant) enters where it is read: not a victim
        if node not in self.times or any(self._holds_bad(v) for v in node.inputs
                                         if not isinstance(v, Constant)):
            return None  # not run (a lazy node's request), or a victim of an earlier node
        for k, out in enumerate(node.outputs):
            counts = _bad_counts(self._values.get(out)) if self._holds_bad(out) else None
            if counts:
                return NonFinite(node, self.ids[node], k, counts[0], counts[1],
                                 int(np.size(self._values[out])))
        return None

    # -- scans ----------------------------------------------------------------------------

    def run_to_iteration(self, k: int) -> Stepper:
        """Run the scan stepped into (when none is: the nodes before the next scan of the call,
        then into it) until iteration ``k`` is about to start: iterations before ``k`` have
        run node by node (``values_at`` has their values), nothing of ``k`` has. ``k`` equal
        to the number of steps runs the whole loop and leaves it."""
        self._alive()
        if not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"run_to_iteration(k): k must be a whole number >= 0, got {k!r}")
        if self.scan is None:
            while not self.done and not self._is_scan(self._next):
                self._advance()
            if self.done:
                raise ValueError("run_to_iteration: no scan is left to run in this call of "
                                 f"{self.function._label()}")
            self._enter()
        visit = self.scan
        loop = visit.loop
        started = visit.inner is not None and visit.inner.position > 0
        if k < loop.t or (k == loop.t and started):
            raise ValueError(f"run_to_iteration({k}): {visit.node.op} "
                             f"[id {self.ids[visit.node]}] is in iteration {loop.t} already"
                             + (" (some of its nodes have run)" if started else ""))
        if k > loop.n_steps:
            raise ValueError(f"run_to_iteration({k}): {visit.node.op} "
                             f"[id {self.ids[visit.node]}] runs at most {loop.n_steps} "
                             "iterations")
        while self.scan is visit and loop.t < k:
            self._advance()
        if loop.t < k:
            raise ValueError(f"run_to_iteration({k}): the loop stopped after iteration "
                             f"{loop.t - 1} (its until condition)")
        return self

    def step_over(self) -> Apply:
        """Run the scan stepped into to its end (node by node), or the next node whole (a
        scan without stepping into it); the node completed."""
        self._alive()
        if self.scan is not None:
            node = self.scan.node
            while self.scan is not None:
                self._advance()
            return node
        if self.done:
            raise ValueError("step_over: every node has run")
        return self._advance(enter=False)

    def values_at(self, key, k: int):
        """What an inner variable of a scan stepped into held in iteration ``k``: ``key`` is its
        id with the scan's (``'D/B'``, as the graph view shows it)."""
        scan_id, _, rest = str(key).strip().upper().partition(SEP)
        visit = self._visit_of(scan_id, key)
        stepper = visit.steppers.get(k)
        if stepper is None and visit.inner is not None and visit.loop.t == k:
            stepper = visit.inner
        if stepper is None:
            raise KeyError(f"iteration {k} of {visit.node.op} [id {scan_id}] has not been "
                           f"stepped through (iterations stepped: "
                           f"{_ranges(sorted(visit.steppers))})")
        return stepper.values[rest]

    def _visit_of(self, scan_id: str, key) -> ScanVisit:
        node = self.ids.find(scan_id)
        if node is None or not self._is_scan_node(node):
            raise KeyError(f"{key!r}: {scan_id!r} is not the id of a scan node of "
                           f"{self.function._label()} (inner ids look like 'D/B')")
        visit = self.visits.get(node)
        if visit is None:
            raise KeyError(f"{key!r}: {node.op} [id {scan_id}] has not been stepped into "
                           "(step into it, or run_to_iteration(k))")
        return visit

    def _run_to_inner(self, text: str) -> list:
        """run_to an inner node (``'D/B'``): until it has run next (in this iteration or a
        later one)."""
        scan_id, _, rest = text.partition(SEP)
        node = self.ids.find(scan_id)
        if node is None or not self._is_scan_node(node):
            raise KeyError(f"no scan node with id {scan_id!r} in the compiled graph of "
                           f"{self.function._label()}")
        if node in self.times:
            raise ValueError(f"run_to: {node.op} [id {scan_id}] has run already")
        ran = []
        while not self.done:
            ran.append(self._advance())
            if self._last_id() == text:
                return ran
        raise ValueError(f"run_to: no node {text!r} ran in this call")

    def _last_id(self) -> str | None:
        last = self._last
        if last is None:
            return None
        if last[0] == "scan":
            _, visit, inner, _t = last
            rest = inner._last_id() if inner is not None else None
            return self.ids[visit.node] + (SEP + rest if rest else "")
        return self.ids[last[1]]

    def _is_scan_node(self, node) -> bool:
        op = getattr(node, "op", None)
        return type(op).__name__ == "Scan" and hasattr(op, "info")

    def _is_scan(self, index) -> bool:
        return index is not None and self._is_scan_node(self.vm.nodes[index])

    def _enter(self) -> None:
        """Step into the scan that runs next: its loop on the values of its inputs."""
        node = self.vm.nodes[self._next]
        inputs = [self.vm.storage_map[v][0] for v in node.inputs]
        self.scan = self.visits[node] = ScanVisit(node, inputs)

    def _advance_in_scan(self) -> Apply:
        """One inner node of the scan stepped into (the loop left when it ends)."""
        visit = self.scan
        started = time.perf_counter()
        try:
            node, inner, t = visit.advance()
        except Exception as exc:
            self.failed = exc
            self._next = None
            self._give_back.detach()
            self.vm.storage_map.clear()
            raise
        self._scan_time = getattr(self, "_scan_time", 0.0) + time.perf_counter() - started
        self._last = ("scan", visit, inner, t)
        if not visit.loop.done:
            return node
        i = self._next
        outer, thunk = self.vm.nodes[i], self.vm.thunks[i]
        visit.loop.store_results(thunk.outputs)
        self.scan = None
        self._completed(i, outer, thunk, None, self._scan_time)
        self._scan_time = 0.0
        self._last = ("entered", outer) if node is None else self._last
        return node if node is not None else outer

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

    def _advance(self, enter: bool = True) -> Apply:
        """Run one node: the next of this graph, or inside a scan the next inner node (the
        first step on a scan node enters it); the node run."""
        if enter and self.scan is None and self._is_scan(self._next):
            self._enter()
        if self.scan is not None:
            return self._advance_in_scan()
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
        self._completed(i, node, thunk, requires, time.perf_counter() - started)
        self._last = ("node", node)
        return node

    def _completed(self, i: int, node, thunk, requires, elapsed: float) -> None:
        """Node ``i`` ran (or, lazy, asked for inputs): record it, move to the next."""
        self.position += 1
        if not (getattr(thunk, "lazy", False) and requires):
            self.times[node] = self.times.get(node, 0.0) + elapsed
            self.ran.append(node)
            unsafe = self._unsafe
            for out, cell in zip(node.outputs, thunk.outputs):
                self._values[out] = copy_value(cell[0]) if unsafe is None or out in unsafe \
                    else cell[0]
        try:
            self._next = self._order.send(requires)
        except StopIteration:
            self._next = None

    def _plain_order(self):
        """Node indices in toposort order (the VM's loop), freeing cells as it does."""
        free_after = self.vm._free_after
        for i in range(len(self.vm.nodes)):
            yield i
            if free_after is not None:
                for cell in free_after[i]:
                    cell[0] = None


class ScanVisit:
    """A scan node a stepper steps through: its loop (``ScanLoop``: the iteration ``loop.t``,
    the buffers), a stepper of the compiled step per iteration (``inner``: the current one;
    ``steppers``: {iteration: finished stepper}, their values kept), and per inner node the
    time summed over the iterations stepped (``times``) and how many ran it (``runs``)."""

    def __init__(self, node, inputs):
        from tensorgraph.scan.loop import ScanLoop
        from tensorgraph.scan.op import Scan

        self.node = node
        runner = Scan.runner_of(node)
        self.function = runner.function
        self.loop = ScanLoop(node.op, node, inputs, None, runner.prealloc)
        self.steppers: dict = {}
        self.times: dict = {}
        self.runs: dict = {}
        self.inner: Stepper | None = None
        self._start()

    def _start(self) -> None:
        if not self.loop.done:
            self.inner = Stepper(self.function, *self.loop.arguments())

    def _end(self) -> None:
        """The iteration's step has run: hand its outputs to the loop, start the next."""
        inner, loop = self.inner, self.loop
        outputs = inner.finish()
        for node, took in inner.times.items():
            self.times[node] = self.times.get(node, 0.0) + took
            self.runs[node] = self.runs.get(node, 0) + 1
        self.steppers[loop.t] = inner
        self.inner = None
        loop.accept(outputs if isinstance(outputs, list) else [outputs])
        self._start()

    def advance(self):
        """Run the next inner node: ``(node, its stepper, iteration)``, or Nones when the
        loop ended without running one (no steps left)."""
        from tensorgraph.scan.loop import reraise_in_iteration

        while not self.loop.done:
            inner, t = self.inner, self.loop.t
            if inner.done:  # a step without nodes
                self._end()
                continue
            try:
                node = inner._advance()
            except Exception as exc:
                reraise_in_iteration(exc, self.loop)
            if inner.done:
                self._end()
            return node, inner, t
        return None, None, None

    def __repr__(self) -> str:
        return (f"<ScanVisit of {self.node.op}: iteration {self.loop.t} of at most "
                f"{self.loop.n_steps}>")


def _ranges(values) -> str:
    """``0-3, 7``: a sorted list of ints as ranges."""
    out, start = [], None
    for k, v in enumerate(values):
        if start is None:
            start = v
        if k + 1 == len(values) or values[k + 1] != v + 1:
            out.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ", ".join(out) or "none"


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
        if isinstance(key, str) and SEP in key:
            # 'D/B': its latest value (this iteration's, else the last iteration's)
            stepper = self._stepper
            scan_id, _, rest = key.strip().upper().partition(SEP)
            visit = stepper._visit_of(scan_id, key)
            last = visit.steppers.get(max(visit.steppers, default=-1))
            for inner in (visit.inner, last):
                if inner is not None and rest in inner.values:
                    return inner.values[rest]
            raise KeyError(f"{key!r} has not been computed yet in {visit.node.op} "
                           f"[id {scan_id}]")
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
