"""``FunctionMaker``: from the user's inputs, outputs, updates and givens to a linked function.

The steps, in order:

1. wrap inputs in ``In`` and outputs in ``Out``, check them;
2. apply ``givens`` (a copy of the graph with the variables swapped, ``clone_replace``);
3. check the updates and add the shared variables' default updates;
4. build the FunctionGraph: inputs are the explicit inputs followed by the shared variables the
   graph reads or updates; outputs are the user's outputs followed by the update expressions;
5. rewrite it (``mode.rewrite``), then link it into a VM (``mode.linker.make_vm``).

The graph objects the user built are never modified: the FunctionGraph works on a copy.
"""

from __future__ import annotations

import copy
import time
import warnings

from tensorgraph.compile.io import In, Out
from tensorgraph.compile.mode import get_mode
from tensorgraph.compile.sharedvalue import SharedVariable
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant, Variable, clone_replace, graph_inputs, io_toposort
from tensorgraph.graph.errors import inherit_user_traces
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.utils import MissingInputError, compiling


class UnusedInputError(Exception):
    """An explicit input of ``function`` takes no part in computing the outputs or updates."""


class DuplicateInputError(UnusedInputError, ValueError):
    """An explicit input of ``function`` given more than once. An UnusedInputError as in
    PyTensor (the later copies have no use), and a ValueError (a bad list of inputs)."""


class FunctionMaker:
    """Builds, rewrites and links the graph of a function; ``create()`` gives the Function.

    Attributes
    ----------
    inputs : list of In, the explicit inputs
    outputs : list of Out
    fgraph : FunctionGraph, inputs = explicit inputs + shared variables, outputs = outputs +
        update expressions
    shared_inputs : list of SharedVariable, the user's shared variables behind the fgraph
        inputs that follow the explicit ones
    update_targets : list of SharedVariable, the variable each update output is written to
    mode : Mode
    linker : the linker object that made the VM
    profile : None, or the ``ProfileStats`` the function records its calls into
    unpack_single : whether the function returns one value rather than a list
    """

    def __init__(self, inputs, outputs, updates=None, givens=None, mode=None, name=None,
                 profile=None, on_unused_input=None, allow_input_downcast=None,
                 no_default_updates=False, accept_inplace=False, rebuild_strict=True):
        self.name = name
        self.mode = get_mode(mode)
        self.profile = profile
        self.accept_inplace = accept_inplace
        self.on_unused_input = on_unused_input or config.on_unused_input
        if self.on_unused_input not in ("raise", "warn", "ignore"):
            raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', got "
                             f"{self.on_unused_input!r}")
        self.inputs = _wrap_inputs(inputs, allow_input_downcast)
        self.inputs, state_givens, state_updates = _stateful_inputs(self.inputs)
        self.unpack_single, self.outputs = _wrap_outputs(outputs)
        _check_no_default_updates(no_default_updates)

        input_vars = [i.variable for i in self.inputs]
        output_vars = [o.variable for o in self.outputs]
        update_pairs = _update_pairs(updates) + state_updates
        givens = _givens_pairs(givens, input_vars, rebuild_strict) + state_givens
        if givens:
            replaced = clone_replace(output_vars + [u for _, u in update_pairs], givens)
            output_vars = replaced[:len(output_vars)]
            update_pairs = list(zip([s for s, _ in update_pairs], replaced[len(output_vars):]))
        update_pairs += _default_updates(output_vars, update_pairs, givens, no_default_updates,
                                         input_vars)

        self.update_targets = [s for s, _ in update_pairs]
        update_vars = [u for _, u in update_pairs]
        computed = output_vars + update_vars
        self.shared_inputs = _shared_inputs(computed, input_vars, self.update_targets)
        self._check_unused(input_vars, computed)
        # the graph as given (after givens): what a function unpickled with
        # config.reoptimize_unpickled_function is rewritten from again
        self.original_graph = (input_vars + self.shared_inputs, computed)
        self.fgraph = self._rewritten(*self.original_graph)
        self.linker = self.mode.linker

    def _rewritten(self, inputs, outputs) -> FunctionGraph:
        """A FunctionGraph over a copy of the graph, checked and rewritten by the mode (or the
        same graph rewritten before, kept by ``rewrite_cache``)."""
        from tensorgraph.compile import rewrite_cache

        key = (rewrite_cache.graph_key(inputs, outputs, self.mode)
               if rewrite_cache.usable(self.mode) else None)
        # inputs the rewrites may overwrite (In(mutable=True)): part of what the graph is
        mutable = [pos for pos, inp in enumerate(self.inputs) if inp.mutable]
        if key is not None and mutable:
            key = f"{key}:mutable={mutable}"
        fgraph, self.rewritten_from = (rewrite_cache.lookup(key)
                                       if key is not None and not rewrite_cache.recorded()
                                       else (None, None))
        if fgraph is not None:
            self._check_inplace_nodes(io_toposort(inputs, outputs))
        else:
            fgraph = FunctionGraph(inputs, outputs, clone=True)
            if mutable:
                fgraph.destroyable_inputs = frozenset(fgraph.inputs[pos] for pos in mutable)
            self._check_inplace(fgraph)
            with compiling():
                self.mode.rewrite(fgraph)
            history = getattr(fgraph, "rewrite_history", None)
            if history is not None:
                inherit_user_traces(history)
            if key is not None:
                rewrite_cache.store(key, fgraph)
        if key is not None:  # what the C generated for this graph is kept by (codegen_cache)
            fgraph.content_key = (key, fgraph.version)
        for node in fgraph.toposort():  # ops with an inner graph compile it (scan)
            prepare = getattr(node.op, "prepare_for_mode", None)
            if prepare is not None:
                prepare(node, self.mode)
        _keep_output_names(fgraph, outputs)
        return fgraph

    def _check_unused(self, input_vars, computed):
        used = set(graph_inputs(_with_gradient_costs(computed), blockers=input_vars))
        for pos, var in enumerate(input_vars):
            if var in used or self.on_unused_input == "ignore":
                continue
            message = (f"input {pos} ({var}) of {_label(self.name)} is not used to "
                       "compute the outputs or updates; pass on_unused_input='ignore' (or "
                       "'warn') to allow it")
            if self.on_unused_input == "raise":
                raise UnusedInputError(message)
            warnings.warn(message, stacklevel=5)

    def _check_inplace(self, fgraph):
        self._check_inplace_nodes(fgraph.apply_nodes)

    def _check_inplace_nodes(self, nodes):
        if self.accept_inplace:
            return
        for node in nodes:
            if node.op.destroy_map:
                raise TypeError(f"the graph contains the inplace node {node}, which overwrites "
                                "its inputs; pass accept_inplace=True if that is intended")

    # -- pickling ---------------------------------------------------------------------------

    def __getstate__(self):
        """What a pickled function keeps of its maker: the rewritten graph, the graph as
        given, the inputs and outputs with their settings, the shared variables (with their
        values), the updates, the mode. The profile and the compile record stay behind."""
        # the given graph's nodes first, in topological order, so that pickle's recursion
        # stays shallow however deep the graph is (as FunctionGraph.__reduce__ does)
        state = {"_nodes_in_order": io_toposort(*self.original_graph), **self.__dict__}
        for transient in ("profile", "compile_record", "linker"):
            state.pop(transient, None)
        return state

    def __setstate__(self, state):
        state.pop("_nodes_in_order", None)
        self.__dict__.update(state)
        self.profile = None
        self.linker = self.mode.linker
        if config.reoptimize_unpickled_function:
            self.fgraph = self._rewritten(*self.original_graph)

    def create(self, input_storage=None, storage_map=None):
        """Link the graph and return the ``Function``.

        ``input_storage``: default cells for the explicit inputs; ``storage_map``: cells to share
        for other variables (used by ``Function.copy(share_memory=True)``).
        """
        from tensorgraph.compile.compiled import Function

        cells = input_storage or [[i.value if i.has_default else None] for i in self.inputs]
        shared_cells = [s.container.storage for s in self.shared_inputs]
        cells = cells + shared_cells
        started = time.perf_counter()
        vm = job = None
        make_tiered = getattr(self.linker, "make_tiered", None)
        if (make_tiered is not None and config.compile__tiers and not self.profile
                and storage_map is None):
            # at once: what is ready; the optimized VM builds in the background
            vm, job = make_tiered(self.fgraph, cells,
                                  [[None] for _ in self.inputs] + shared_cells)
        if vm is None:
            vm = self.linker.make_vm(self.fgraph, cells, storage_map)
        if self.profile:
            return self.profile.attach(self, vm, self.name, time.perf_counter() - started)
        return Function(self, vm, self.name, pending=job)


def _with_gradient_costs(variables) -> list:
    """``variables`` and the costs of the gradients among them: ``grad`` tags its seed (the
    constant one it starts from) ``seed_of`` the cost. In PyTensor the seed is computed from
    the cost, so an input a cost reads counts as used by a function computing its gradient,
    even when the gradient itself no longer depends on it; this keeps that rule."""
    from tensorgraph.graph.basic import ancestors

    result, seen = list(variables), set()
    frontier = list(variables)
    while frontier:
        costs = []
        for var in ancestors(frontier):
            origin = getattr(var.tag, "seed_of", None)
            for cost in origin if isinstance(origin, list) else [origin]:
                if cost is not None and id(cost) not in seen:
                    seen.add(id(cost))
                    costs.append(cost)
        result += costs
        frontier = costs
    return result


def _label(name) -> str:
    return f"function {name!r}" if name else "the function"


def _wrap_inputs(inputs, allow_input_downcast):
    if inputs is None:
        inputs = []
    if isinstance(inputs, (Variable, In)):
        raise TypeError("function() takes a list of inputs: write function([x], ...), "
                        "not function(x, ...)")
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"function() takes its inputs as a list (their order is the order of "
                        f"the arguments), got a {type(inputs).__name__}")
    wrapped = []
    for pos, inp in enumerate(inputs):
        if not isinstance(inp, In):
            if not isinstance(inp, Variable):
                raise TypeError(f"input {pos} of function() must be a symbolic variable, got "
                                f"{type(inp).__name__}: {inp!r}")
            inp = In(inp)
        else:
            inp = copy.copy(inp)       # the function's settings; the user's In stays as it was
        if isinstance(inp.variable, SharedVariable):
            raise TypeError(f"Cannot use a shared variable ({inp.variable}) as explicit input: "
                            "functions read shared variables implicitly. To feed it a value, "
                            "use a regular input and givens={shared_var: input}")
        if inp.allow_downcast is None:
            inp.allow_downcast = allow_input_downcast
        wrapped.append(inp)
    seen = {}
    for pos, inp in enumerate(wrapped):
        if inp.variable in seen:
            raise DuplicateInputError(
                f"input {inp.variable} is used twice in inputs (positions {seen[inp.variable]} "
                f"and {pos}); each input of function() is given once")
        seen[inp.variable] = pos
    return wrapped


def _stateful_inputs(inputs):
    """Theano's stateful inputs (``In(x, value=..., update=..., implicit=...)``) as shared
    variables over the input's container: ``(explicit inputs, givens, updates)``. An implicit
    input is replaced by its shared variable in the graph; an input with an update gets the
    shared variable as the target of that update, so its stored value (the default of the
    next call) changes when the call's updates are written."""
    from tensorgraph.compile.sharedvalue import Container

    kept, givens, updates = [], [], []
    for inp in inputs:
        if inp.update is None and not inp.implicit:
            kept.append(inp)
            continue
        if inp.container is None:
            value = inp.value if inp.has_default else None
            inp.container = Container(inp.variable.type, [value], inp.name)
        state = _state_variable(inp.variable.type, inp.container,
                                inp.name or str(inp.variable))
        if inp.implicit:
            givens.append((inp.variable, state))
        else:
            kept.append(inp)
        if inp.update is not None:
            updates.append((state, state.filter_update(inp.update)))
    return kept, givens, updates


def _state_variable(type, container, name):
    """A shared variable of the class ``shared()`` makes for ``type``, over ``container``."""
    from tensorgraph.tensor.type import TensorType

    cls = SharedVariable
    if isinstance(type, TensorType):
        from tensorgraph.tensor.sharedvar import TensorSharedVariable as cls
    return cls(type, None, container=container, name=name)


def _check_no_default_updates(value):
    if isinstance(value, bool):
        return
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, SharedVariable) for v in value):
        raise TypeError(f"no_default_updates takes True, False or a list of shared variables, "
                        f"got {value!r}")


def _wrap_outputs(outputs):
    """(unpack_single, [Out]) for one output, a list/tuple of outputs, or None."""
    if outputs is None:
        return False, []
    single = isinstance(outputs, (Variable, Out))
    items = [outputs] if single else list(outputs)
    wrapped = []
    for pos, out in enumerate(items):
        if not isinstance(out, Out):
            if not isinstance(out, Variable):
                raise TypeError(f"output {pos} of function() must be a symbolic variable, got "
                                f"{type(out).__name__}: {out!r}")
            out = Out(out)
        _check_computable(pos, out.variable)
        wrapped.append(out)
    return single, wrapped


def _check_computable(pos, var) -> None:
    """An undefined or disconnected gradient has no value: say so at compile time."""
    from tensorgraph.gradient import DisconnectedType, NullType, NullTypeGradError

    if isinstance(var.type, NullType):
        raise NullTypeGradError(f"output {pos} of function() is an undefined gradient and has "
                                f"no value: {var.type.why_null}")
    if isinstance(var.type, DisconnectedType):
        raise TypeError(f"output {pos} of function() marks a disconnected gradient and has no "
                        "value; ask grad for zeros (return_disconnected='zero')")


def _update_pairs(updates):
    if updates is None:
        return []
    if isinstance(updates, dict):
        items = list(updates.items())
    else:
        items = list(updates)
    pairs, seen = [], set()
    for item in items:
        if not isinstance(item, (tuple, list)):
            raise TypeError(f"updates must be (shared_variable, new_expression) pairs, got "
                            f"{item!r}")
        try:
            var, update = item
        except (TypeError, ValueError):
            raise TypeError(f"updates must be (shared_variable, new_expression) pairs, got "
                            f"{item!r}") from None
        if not isinstance(var, SharedVariable):
            raise TypeError(f"updates: {var!r} is not a shared variable; only shared variables "
                            "can be updated")
        if var in seen:
            raise ValueError(f"updates: shared variable {var} is updated twice")
        seen.add(var)
        pairs.append((var, var.filter_update(update)))
    return pairs


def _givens_pairs(givens, input_vars, rebuild_strict=True):
    if not givens:
        return []
    items = list(givens.items()) if isinstance(givens, dict) else list(givens)
    pairs = []
    for item in items:
        try:
            old, new = item
        except (TypeError, ValueError):
            raise TypeError(f"givens must be (variable, replacement) pairs, got {item!r}") from None
        if not isinstance(old, Variable):
            raise TypeError(f"givens: {old!r} is not a symbolic variable")
        if old in input_vars:
            raise ValueError(f"givens replaces {old}, which is an input of the function; "
                             "drop it from the inputs or from givens")
        if not isinstance(new, Variable):
            new = old.type.make_constant(old.type.filter(new))
        converted = old.type.convert_variable(new)
        if converted is None and not rebuild_strict:
            converted = new   # rebuild_strict=False: the graph above is rebuilt for its type
        if converted is None:
            raise TypeError(f"givens: {old} has type {old.type} but its replacement {new} has "
                            f"type {new.type} (rebuild_strict=False rebuilds the graph for it)")
        pairs.append((old, converted))
    return pairs


def _default_updates(output_vars, update_pairs, givens, no_default_updates, input_vars):
    """Default updates of the shared variables the graph reads, not updated explicitly.

    Only what the function computes counts: a shared variable behind an explicit input (``b``
    in ``function([b], b)`` with ``b = 2 * a``) is not read, so it is not updated. A default
    update may read further shared variables with default updates: repeat until no new one
    appears.
    """
    if no_default_updates is True:
        return []
    excluded = set(no_default_updates or ())
    updated = {s for s, _ in update_pairs}
    added = []
    frontier = output_vars + [u for _, u in update_pairs]
    while frontier:
        new = []
        for var in graph_inputs(frontier, blockers=input_vars):
            if (isinstance(var, SharedVariable) and var.default_update is not None
                    and var not in updated and var not in excluded):
                update = var.filter_update(var.default_update)
                if givens:
                    update = clone_replace(update, givens)
                updated.add(var)
                added.append((var, update))
                new.append(update)
        frontier = new
    return added


def _shared_inputs(computed, input_vars, update_targets):
    explicit = set(input_vars)
    shared, seen = [], set()
    for var in graph_inputs(computed, blockers=input_vars) + list(update_targets):
        if var in explicit or var in seen or isinstance(var, Constant):
            continue
        if not isinstance(var, SharedVariable):
            raise MissingInputError(
                f"{var} ({var.type}) is needed to compute the outputs but is not an input of "
                "the function: add it to the inputs, give it a value with givens, or make it "
                "a shared variable")
        seen.add(var)
        shared.append(var)
    return shared


def _keep_output_names(fgraph, outputs) -> None:
    """The user's names of the outputs on the rewritten graph's outputs, where a rewrite put an
    unnamed variable in their place (a fused loop for ``cost``): the graph view, ``dprint``
    and profiles then say ``cost``. An output that became an input or another named
    variable keeps that variable's own name."""
    for new, old in zip(fgraph.outputs, outputs):
        if new.name is None and old.name is not None and new.owner is not None:
            new.name = old.name
