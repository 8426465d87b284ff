"""``Function``: the callable ``function()`` returns.

A call binds the arguments to the inputs (by position or by name, defaults from ``In(value=)``),
converts each value to its input's type (a ``TypeError`` naming the input otherwise), runs the
VM, copies the outputs that could alias storage the function keeps, and only then writes the
update values into the shared variables. A call that fails anywhere before that last step
leaves every shared variable as it was.

Threads and re-entry: a call runs in the function's VM (``f.vm``) when no other call is using
it; otherwise (another thread's call, or a call made from inside this one: an argument's
``__array__``, an op's ``perform``) it runs in a *spare* VM linked from the same rewritten
graph, kept for later calls. So calls never share storage cells or C buffers, and results do
not depend on what other threads do. The C entry point of a whole-graph VM does the same in C
(``glue_workspace.h``: workspace clones). Shared variables are read when a call starts and written when
it ends: concurrent calls that update the same shared variable each commit their own result,
the last one to finish wins.
"""

from __future__ import annotations

import functools
import threading
import time
import warnings

import numpy as np

from tensorgraph.compile.sharedvalue import copy_value
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import clone_get_equiv


class Function:
    """A compiled function. Call it with values for its inputs.

    Attributes
    ----------
    maker : FunctionMaker (``maker.fgraph``, ``maker.inputs``, ``maker.outputs``, ``maker.mode``)
    vm : the linked graph (``vm.nodes``, ``vm.thunks``, ``vm.pre_hook`` / ``vm.post_hook``)
    name : str or None
    trust_input : bool
        Skip the conversion and checking of input values (faster calls; a wrong value then
        fails inside a node or silently gives wrong results).
    """

    def __init__(self, maker, vm, name=None, pending=None):
        self.maker = maker
        self.name = name
        self._trust_input = False
        self._vm_lock = threading.Lock()  # held while a call runs in self.vm
        self._spare_vms: list = []  # idle spare VMs (see the module docstring)
        self._generation = 0  # bumped when the VM is replaced (spares of older VMs are dropped)
        self._pending = pending  # a TierJob building the optimized VM, or None
        self._tier_error = None
        self._record = None  # the CompileRecord function() made for this function
        self._first_call = True  # its first call is timed into the record
        inputs = maker.inputs
        self._n_inputs = len(inputs)
        self._filters = [functools.partial(i.variable.type.filter, strict=i.strict,
                                           allow_downcast=i.allow_downcast) for i in inputs]
        self._positions = {}
        for pos, inp in enumerate(inputs):
            if inp.name is not None:
                self._positions[inp.name] = pos if inp.name not in self._positions else None
        self._copy_on_entry = [i.mutable and not i.borrow for i in inputs]
        self._any_copy_on_entry = any(self._copy_on_entry)
        self._overwritten = _overwritten_inputs(maker)
        n_out = len(maker.outputs)
        self._n_outputs = n_out
        self._update_cells = [s.container.storage for s in maker.update_targets]
        self._adopt(vm)

    def _adopt(self, vm):
        """Make ``vm`` the one calls run in: its cells, which outputs to copy, its C entry."""
        maker, n_out = self.maker, self._n_outputs
        self.vm = vm
        fg_outputs = maker.fgraph.outputs
        borrowed = [o.borrow for o in maker.outputs] + [False] * len(self._update_cells)
        self._copy_output = _outputs_to_copy(vm.fgraph, borrowed,
                                             keeps_intermediates=not getattr(vm, "allow_gc", False))
        if getattr(vm, "readonly_outputs", False):
            # a VM handing out read-only buffers (JAX's): the user gets writable copies, as in
            # every mode, unless borrowed; update values go to the shared variables as they are
            self._copy_output = sorted(set(self._copy_output)
                                       | {k for k in range(n_out) if not borrowed[k]})
        # computed outputs whose cells are emptied after each call, so no op reuses a buffer
        # the caller (or a shared variable) now owns; borrowed outputs keep theirs
        self._cleared_outputs = [k for k, var in enumerate(fg_outputs)
                                 if var.owner is not None and not borrowed[k]]
        self._cells = _VMCells(vm, self._n_inputs, self._cleared_outputs)
        # a C VM can run whole calls itself (checks, shared values, updates): vm.c_call
        self._c_vm = None
        make_call = getattr(vm, "make_call", None)
        if make_call is not None and not self._any_copy_on_entry and not self._overwritten \
                and make_call(
                _input_converter(self), self._n_inputs, borrowed, n_out,
                maker.unpack_single, self._update_cells):
            self._c_vm = vm
            self._c_vm.set_trust_input(self._trust_input)

    # -- tiers ----------------------------------------------------------------------------

    @property
    def tier(self) -> str:
        """Where calls run now: 'quick' while the first calls run on what was ready at once
        and the optimized code compiles in the background (see config.compile__tiers), and
        for good if that code could not be built; 'optimized' once this function runs it;
        'python' when a C linker runs every node in Python because config.cxx cannot be
        used (docs/c_backend.md)."""
        return getattr(self.vm, "tier", "optimized")

    def wait_optimized(self, timeout: float | None = None) -> Function:
        """Wait until the optimized code is built, and use it from the next call on (at once
        if no call is running). Raises the compile's error if it failed. For benchmarks and
        tests: normal use needs nothing, the function switches by itself between calls.
        ``timeout``: seconds to wait at most (a ``TimeoutError`` then, the function still
        running on the quick tier)."""
        import concurrent.futures

        job = self._pending
        if job is not None:
            try:
                job.result(timeout)
            except concurrent.futures.TimeoutError:
                raise TimeoutError(f"the optimized code of {self._label()} was not built "
                                   f"within {timeout:g} s; it runs on the quick tier until "
                                   "it is") from None
            self._switch_tier(block=True)
        if self._tier_error is not None:
            raise self._tier_error
        return self

    def _switch_tier(self, block: bool = False) -> None:
        """Use the optimized VM if it is ready, between two calls: never while a call runs in
        ``self.vm`` (the lock), and calls already in spare VMs finish there."""
        __tracebackhide__ = True  # noqa: F841
        job = self._pending
        if job is None or not (block or job.done()):
            return
        if not self._vm_lock.acquire(blocking=block):
            return
        try:
            if self._pending is not job:
                return
            error = job.failed()
            if error is not None:
                self._pending = None
                self._tier_error = error
                if self._record is not None:
                    self._record.tier_settled(error=error)
                warnings.warn(f"tensorgraph: the optimized code of {self._label()} could not be "
                              f"built, so it keeps running on the quick tier (cached and "
                              f"quick C, numpy where exact): {type(error).__name__}: {error}", RuntimeWarning,
                              stacklevel=3)
                return
            self._adopt(job.result())
            self._spare_vms = []
            self._generation += 1
            self._pending = None
            if self._record is not None:
                self._record.tier_settled(vm=self.vm)
        finally:
            self._vm_lock.release()

    @property
    def trust_input(self) -> bool:
        return self._trust_input

    @trust_input.setter
    def trust_input(self, value: bool) -> None:
        self._trust_input = bool(value)
        if self._c_vm is not None:
            self._c_vm.set_trust_input(self._trust_input)

    # -- calling --------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 - IPython: the user's frame comes first
        if self._first_call:
            return self._timed_first_call(args, kwargs)
        if self._pending is not None:
            self._switch_tier()
        c_vm = self._c_vm
        if c_vm is not None and not kwargs:
            c_call = c_vm.c_call  # None while hooks are set
            if c_call is not None:
                result = c_call(*args)
                if result is not NotImplemented:  # NotImplemented: defaults to bind
                    return result
        if kwargs or len(args) != self._n_inputs:
            args = self._bind(args, kwargs)
        if self._vm_lock.acquire(blocking=False):
            try:
                return self._call_in(self.vm, self._cells, args)
            finally:
                self._vm_lock.release()
        return self._call_busy(args)

    def _timed_first_call(self, args, kwargs):
        """The first call, its seconds written into the compile record (graph to first
        result is what a user waits for: the record's split ends with this call)."""
        __tracebackhide__ = True  # noqa: F841
        self._first_call = False
        started = time.perf_counter()
        result = Function.__call__(self, *args, **kwargs)  # not a subclass's (profiling)
        if self._record is not None:
            self._record.first_call_seconds = time.perf_counter() - started
        return result

    def _call_busy(self, args):
        """A call while ``self.vm`` runs another one: in a spare VM."""
        __tracebackhide__ = True  # noqa: F841
        generation = self._generation
        spare = self._spare_vms.pop() if self._spare_vms else self._link_spare()
        try:
            return self._call_in(*spare, args)
        finally:
            if generation == self._generation:  # not a spare of a VM replaced meanwhile
                self._spare_vms.append(spare)

    def _call_in(self, vm, cells, args):
        """Run one call in ``vm`` (``cells``: its ``_VMCells``), arguments already bound."""
        __tracebackhide__ = True  # noqa: F841
        inputs = cells.inputs
        if self.trust_input:
            for cell, value in zip(inputs, args):
                cell[0] = value
        else:
            pos = 0
            try:
                for pos, (cell, value, convert) in enumerate(zip(inputs, args, self._filters)):
                    cell[0] = convert(value)
            except (TypeError, ValueError) as exc:
                cells.clear_inputs()
                raise TypeError(self._bad_input_message(pos, value, exc)) from None
            except OverflowError as exc:  # Python ints out of the dtype's range
                cells.clear_inputs()
                raise OverflowError(self._bad_input_message(pos, value, exc)) from None
        if self._any_copy_on_entry:
            for cell, do_copy in zip(inputs, self._copy_on_entry):
                if do_copy:
                    cell[0] = copy_value(cell[0])
        if self._overwritten:
            self._unalias_overwritten(inputs)
        try:
            vm()
        except Exception:
            cells.clear_inputs()
            raise
        values = [cell[0] for cell in cells.outputs]
        for k in self._copy_output:
            values[k] = copy_value(values[k])
        cells.clear_inputs()
        for cell in cells.cleared:
            cell[0] = None
        n_out = self._n_outputs
        for cell, value in zip(self._update_cells, values[n_out:]):
            cell[0] = value
        if self.maker.unpack_single:
            return values[0]
        return values[:n_out] if self._update_cells else values

    def _link_spare(self):
        """(vm, cells) of a new spare VM: the rewritten graph linked again, reading the same
        shared variables (the C modules come from memory: nothing is compiled again)."""
        vm = self.new_vm()
        return vm, _VMCells(vm, self._n_inputs, self._cleared_outputs)

    def new_vm(self, storage=None):
        """Another VM of this function's current tier (``vm.tier``: 'quick' or 'optimized'),
        with cells of its own for the explicit inputs and, unless ``storage`` (one cell per
        graph input) says otherwise, the cells of the same shared variables (spare VMs)."""
        maker = self.maker
        if storage is None:
            storage = [[None] for _ in maker.inputs] + [s.container.storage
                                                         for s in maker.shared_inputs]
        job = self._pending
        if job is not None and hasattr(job, "make_quick"):
            return job.make_quick(storage)
        return maker.linker.make_vm(maker.fgraph, storage, None)

    # -- pickling -------------------------------------------------------------------------

    def __reduce__(self):
        """Pickled as its maker (the rewritten graph, the settings, the shared variables with
        their values), its name and trust_input; unpickling links the graph again in the
        unpickling process, whose module cache supplies the C (compiled there once if it is
        not cached). ``config.unpickle_function = False`` makes it unpickle as None;
        ``config.reoptimize_unpickled_function`` rewrites the original graph again. A profiled
        function unpickles unprofiled. Pickles are not a security boundary: unpickling runs
        code, as any pickle does."""
        defaults = [i.value if i.has_default else None for i in self.maker.inputs]
        return _unpickle_function, (self.maker, self.name, self.trust_input, defaults)

    def stepper(self, *args, **kwargs):
        """A call with these arguments that runs node by node on request (``step()``,
        ``run_to(node)``, ``run_until_nonfinite()``, ``values``, ``finish()``): see
        ``tensorgraph.compile.stepper``. Normal calls are not affected."""
        from tensorgraph.compile.stepper import Stepper

        return Stepper(self, *args, **kwargs)

    def _bind(self, args, kwargs):
        """Arguments in input order, defaults filled in; a TypeError for any mismatch."""
        inputs = self.maker.inputs
        if len(args) > self._n_inputs:
            raise TypeError(f"{self._label()} takes {self._n_inputs} input"
                            f"{'s' if self._n_inputs != 1 else ''} "
                            f"({self._signature()}), got {len(args)} positional arguments")
        values = list(args) + [_MISSING] * (self._n_inputs - len(args))
        for key, value in kwargs.items():
            pos = self._positions.get(key, _MISSING)
            if pos is _MISSING:
                raise TypeError(f"{self._label()} has no input named {key!r}; inputs: "
                                f"{self._signature()}")
            if pos is None:
                raise TypeError(f"{self._label()}: several inputs are named {key!r}; pass "
                                "them by position")
            if values[pos] is not _MISSING:
                raise TypeError(f"{self._label()}: input {key!r} is given both by position "
                                "and by keyword")
            values[pos] = value
        for pos, value in enumerate(values):
            if value is _MISSING:
                if not inputs[pos].has_default:
                    raise TypeError(f"{self._label()}: missing value for input {pos} "
                                    f"({_input_label(inputs[pos])}); inputs: "
                                    f"{self._signature()}")
                values[pos] = inputs[pos].value
        return values

    def _unalias_overwritten(self, inputs) -> None:
        """Copy the value of an input the graph overwrites (``In(mutable=True)``) when it
        shares memory with another input's value or a shared variable's: overwriting it
        would change what the graph reads there (``f(v, v)``)."""
        others = [cell[0] for cell in inputs]
        others += [s.container.storage[0] for s in self.maker.shared_inputs]
        for pos in self._overwritten:
            value = inputs[pos][0]
            if not isinstance(value, np.ndarray):
                continue
            if any(k != pos and isinstance(o, np.ndarray) and np.may_share_memory(value, o)
                   for k, o in enumerate(others)):
                inputs[pos][0] = others[pos] = copy_value(value)

    def _bad_input_message(self, pos, value, exc) -> str:
        inp = self.maker.inputs[pos]
        return f"bad value for input {pos} ({_input_label(inp)}) of {self._label()}: {exc}"

    def _label(self) -> str:
        return f"function {self.name!r}" if self.name else "the function"

    def _signature(self) -> str:
        return ", ".join(_input_label(i) for i in self.maker.inputs) or "none"

    # -- copies ---------------------------------------------------------------------------

    def copy(self, share_memory: bool = False, swap=None, delete_updates: bool = False,
             name=None, profile=None) -> Function:
        """A new function computing the same graph.

        ``swap`` ({old_shared: new_shared}) makes the copy use other shared variables (same
        types); ``delete_updates`` drops the updates; ``share_memory`` lets the copy reuse this
        function's storage for intermediate results (calls then must not interleave). Default
        values are copied as they are now. ``profile`` (a ``ProfileStats``, or True for a new
        one, as ``function(profile=True)``) makes a profiled copy (``%tg_profile`` profiles a
        function compiled without ``profile=True`` so).
        """
        maker = self.maker
        swap = dict(swap or {})
        for old, new in swap.items():
            if old not in maker.shared_inputs:
                raise ValueError(f"copy(swap=...): {old} is not a shared variable of this "
                                 "function")
            if new.type != old.type:
                raise TypeError(f"copy(swap=...): {old} has type {old.type} but {new} has "
                                f"type {new.type}")
        fgraph = maker.fgraph
        n_explicit = len(maker.inputs)
        new_shared = [swap.get(s, s) for s in maker.shared_inputs]
        memo = {old: new.clone() for old, new in
                zip(fgraph.inputs[n_explicit:], new_shared)}
        outputs = fgraph.outputs[:len(maker.outputs)] if delete_updates else fgraph.outputs
        equiv = clone_get_equiv(fgraph.inputs, outputs, memo=memo)
        from tensorgraph.graph.fg import FunctionGraph

        new_maker = object.__new__(type(maker))
        new_maker.__dict__.update(maker.__dict__)
        new_maker.name = maker.name if name is None else name
        new_maker.fgraph = FunctionGraph([equiv[v] for v in fgraph.inputs],
                                         [equiv[v] for v in outputs], clone=False)
        destroyable = getattr(fgraph, "destroyable_inputs", ())
        if destroyable:  # the inputs In(mutable=True) lets the function overwrite
            new_maker.fgraph.destroyable_inputs = frozenset(
                equiv[v] for v in fgraph.inputs if v in destroyable)
        new_maker.shared_inputs = new_shared
        new_maker.update_targets = [] if delete_updates else [
            swap.get(s, s) for s in maker.update_targets]
        new_maker.linker = maker.mode.linker
        if profile is True:
            from tensorgraph.compile.profiling import ProfileStats

            profile = ProfileStats(new_maker.name or "")
        if profile is not None and profile is not False:
            new_maker.profile = profile
        storage_map = None
        if share_memory:
            storage_map = {equiv[v]: cell for v, cell in self.vm.storage_map.items()
                           if v in equiv and v not in fgraph.inputs}
        defaults = [[copy_value(i.value) if i.has_default else None] for i in maker.inputs]
        new = new_maker.create(input_storage=defaults, storage_map=storage_map)
        new.trust_input = self.trust_input
        if name is None and self.name:
            new.name = self.name + " copy"
        return new

    # -- introspection --------------------------------------------------------------------

    def dprint(self, **kwargs):
        """``debugprint`` of this function's compiled graph (same keyword arguments)."""
        from tensorgraph.printing import debugprint

        return debugprint(self, **kwargs)

    def get_shared(self) -> list:
        """The shared variables this function reads or updates."""
        return list(self.maker.shared_inputs)

    def __repr__(self):
        outs = len(self.maker.outputs)
        ups = len(self._update_cells)
        extra = f", {ups} update{'s' if ups != 1 else ''}" if ups else ""
        return (f"<Function{_named(self.name)}: ({self._signature()}) -> {outs} "
                f"output{'s' if outs != 1 else ''}{extra}, mode {self.maker.mode}"
                f"{self._tier_note()}>")

    def _tier_note(self) -> str:
        job = self._pending
        tier = self.tier
        if job is not None and not job.done():
            return (f"; running on the quick tier, optimized code ready in "
                    f"~{max(0.1, job.remaining_seconds()):.1f} s")
        error = job.failed() if job is not None else self._tier_error
        if job is not None and error is None:
            return "; optimized code ready, used from the next call"
        if tier == "quick" and error is not None:
            return (f"; running on the quick tier: its optimized code could not be built "
                    f"({type(error).__name__})")
        if tier == "python":
            return f"; running in Python: {self.vm.tier_reason}"
        return ""


_MISSING = object()


def _unpickle_function(maker, name, trust_input, defaults):
    """A pickled Function again (see ``Function.__reduce__``), or None when
    ``config.unpickle_function`` is off."""
    if not config.unpickle_function:
        return None
    function = maker.create(input_storage=[[value] for value in defaults])
    function.name = name
    function.trust_input = trust_input
    return function


class _VMCells:
    """The storage cells of a VM a call reads and clears: the explicit inputs' cells, the
    outputs' cells and, of those, the ones emptied after each call."""

    __slots__ = ("inputs", "outputs", "cleared")

    def __init__(self, vm, n_inputs: int, cleared_outputs):
        self.inputs = vm.input_storage[:n_inputs]
        self.outputs = vm.output_storage
        self.cleared = [vm.output_storage[k] for k in cleared_outputs]

    def clear_inputs(self):
        for cell in self.inputs:
            cell[0] = None


def _overwritten_inputs(maker) -> list[int]:
    """Positions of the explicit inputs some node of the rewritten graph overwrites (only
    ``In(mutable=True)`` inputs can be): their values are checked for aliasing at each call,
    which the C call path does not do, so such a function calls through Python."""
    fgraph = maker.fgraph
    destroyable = getattr(fgraph, "destroyable_inputs", ())
    if not destroyable:
        return []
    destroyed = {node.inputs[i] for node in fgraph.apply_nodes
                 for ins in (node.op.destroy_map or {}).values() for i in ins}
    return [pos for pos, var in enumerate(fgraph.inputs[:len(maker.inputs)])
            if var in destroyable and var in destroyed]


def _input_converter(function):
    """``convert(pos, value)`` for the C call path: graph input ``pos`` converted as a call
    converts it, or the same TypeError. Holds the Function weakly (the C workspace keeps the
    converter, and the Function keeps the workspace)."""
    import weakref

    ref = weakref.ref(function)
    n_inputs = function._n_inputs
    fg_inputs = function.maker.fgraph.inputs

    def convert(pos, value):
        f = ref()
        if pos >= n_inputs:  # a shared variable's value
            return fg_inputs[pos].type.filter(value)
        try:
            return f._filters[pos](value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f._bad_input_message(pos, value, exc)) from None
        except OverflowError as exc:  # Python ints out of the dtype's range
            raise OverflowError(f._bad_input_message(pos, value, exc)) from None

    return convert


def _named(name) -> str:
    return f" {name!r}" if name else ""


def _input_label(inp) -> str:
    return repr(inp.name) if inp.name is not None else str(inp.variable)


def _alias_root(var):
    """The variable whose storage ``var`` may share: follow view/destroy maps to an input."""
    while var.owner is not None:
        node = var.owner
        index = node.outputs.index(var)
        sources = node.op.view_map.get(index) or node.op.destroy_map.get(index)
        if not sources:
            return var
        var = node.inputs[sources[0]]
    return var


def _outputs_to_copy(fgraph, borrowed, keeps_intermediates: bool) -> list[int]:
    """Positions of the fgraph outputs to copy before handing them out.

    An output is copied when it is (a view of) an input, a shared variable or a constant, or
    of an intermediate result the VM keeps between calls (it may be overwritten by the next
    one), or when an earlier output already hands out the same storage. Borrowed outputs are
    only copied in that last case (two outputs must never be one array).
    """
    seen = set()
    to_copy = []
    for k, var in enumerate(fgraph.outputs):
        root = _alias_root(var)
        aliases_kept_storage = root.owner is None or (root is not var and keeps_intermediates)
        if root in seen or (aliases_kept_storage and not borrowed[k]):
            to_copy.append(k)
        seen.add(root)
    return to_copy
