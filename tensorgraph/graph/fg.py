"""``FunctionGraph``: a graph with fixed inputs and outputs that rewrites can edit safely.

It tracks every variable's clients (who reads it), imports nodes as they are reached, prunes
nodes nobody reads anymore, and tells attached features (listeners) about every change so they
can record history, keep shape information, or veto a change (``validate``).
"""

from __future__ import annotations

from collections import OrderedDict

from tensorgraph.graph.basic import (
    Apply,
    Constant,
    Variable,
    clone_get_equiv,
    graph_inputs,
    io_toposort,
)
from tensorgraph.graph.utils import InconsistencyError, MissingInputError


class Feature:
    """A listener attached to a FunctionGraph. Override the callbacks you need.

    Callbacks: ``on_attach(fgraph)``, ``on_detach(fgraph)``, ``on_import(fgraph, node, reason)``,
    ``on_prune(fgraph, node, reason)``, ``on_change_input(fgraph, node, i, old, new, reason)``
    (``node`` is ``"output"`` for a graph output), ``validate(fgraph)`` (raise
    ``InconsistencyError`` to veto the last change) and ``orderings(fgraph)`` (extra
    ``{node: [nodes that must run first]}`` constraints for ``toposort``).
    """

    def on_attach(self, fgraph):
        pass

    def on_detach(self, fgraph):
        pass

    def on_import(self, fgraph, node, reason):
        pass

    def on_prune(self, fgraph, node, reason):
        pass

    def on_change_input(self, fgraph, node, i, old, new, reason):
        pass

    def validate(self, fgraph):
        pass

    def orderings(self, fgraph):
        return {}

    #: a pickled FunctionGraph gets a new feature of this class when it is unpickled (a
    #: feature whose state follows from the graph alone, like the destroy handler's); the
    #: others (rewrite history, shape inference) record how the graph was made and are dropped
    survives_pickling = False


class FunctionGraph:
    """A graph between ``inputs`` and ``outputs``, with client tracking and change listeners.

    Parameters
    ----------
    inputs, outputs : list of Variable
        ``inputs=None`` takes the free variables the outputs depend on (constants aside), as
        ``FunctionGraph(outputs=[y])`` does in PyTensor.
    features : list of Feature, attached at creation
    clone : bool
        Work on a copy of the graph (the default), so that rewrites never edit the user's graph.
    copy_inputs : bool
        With ``clone``, copy the input variables too (the default); ``False`` copies only the
        nodes, so the graph reads the caller's input variables.
    """

    def __init__(self, inputs=None, outputs=None, features=(), clone: bool = True,
                 copy_inputs: bool = True):
        if outputs is None:
            raise TypeError("FunctionGraph needs its outputs (a list of variables)")
        outputs = list(outputs)
        if inputs is None:
            inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
        inputs = list(inputs)
        if clone:
            equiv = clone_get_equiv(inputs, outputs, copy_inputs=copy_inputs)
            inputs = [equiv[v] for v in inputs]
            outputs = [equiv[v] for v in outputs]
        for i, v in enumerate(inputs):
            if v.owner is not None:
                raise ValueError(f"input {i} ({v}) is computed by {v.owner}; graph inputs must "
                                 "have no owner")
        self.inputs: list[Variable] = []
        self.outputs: list[Variable] = []
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        self.clients: dict[Variable, list] = {}
        self._features: list[Feature] = []
        #: bumped by every change (caches of derived facts, such as node ids, compare it)
        self.version = 0
        for v in inputs:
            self.add_input(v)
        for v in outputs:
            self.add_output(v, reason="init")
        for f in features:
            self.attach_feature(f)

    # -- construction ---------------------------------------------------------------------

    def add_input(self, var: Variable) -> None:
        if var in self.inputs:
            return
        self.inputs.append(var)
        self._setup_var(var)

    def add_output(self, var: Variable, reason=None) -> None:
        self.outputs.append(var)
        self.import_var(var, reason)
        self.clients[var].append(("output", len(self.outputs) - 1))

    def remove_output(self, index: int, reason=None) -> None:
        """Drop output ``index`` (later outputs move up one place); nodes only it needed are
        pruned."""
        if not -len(self.outputs) <= index < len(self.outputs):
            raise IndexError(f"remove_output: the graph has {len(self.outputs)} outputs, no "
                             f"output {index}")
        index %= len(self.outputs)
        var = self.outputs.pop(index)
        for j in range(index, len(self.outputs)):
            clients = self.clients[self.outputs[j]]
            clients[clients.index(("output", j + 1))] = ("output", j)
        self._remove_client(var, ("output", index), reason)
        self.version += 1

    def _setup_var(self, var: Variable) -> None:
        if var not in self.clients:
            self.clients[var] = []
            self.variables.add(var)

    def import_var(self, var: Variable, reason=None) -> None:
        if var.owner is not None and var.owner not in self.apply_nodes:
            self.import_node(var.owner, reason)
        elif var.owner is None and not isinstance(var, Constant) and var not in self.inputs:
            raise MissingInputError(
                f"{var} ({var.type}) is needed to compute the outputs but is not among the "
                f"inputs {[str(i) for i in self.inputs]}; add it to the inputs or give it a value")
        self._setup_var(var)

    def import_node(self, node: Apply, reason=None) -> None:
        """Add ``node`` and any of its ancestors not yet in the graph."""
        new_nodes = io_toposort(self.variables, node.outputs)
        for n in new_nodes:
            if n in self.apply_nodes:
                continue
            for inp in n.inputs:
                if inp.owner is None and not isinstance(inp, Constant) and inp not in self.inputs:
                    raise MissingInputError(
                        f"{inp} ({inp.type}), an input of {n}, is not among the graph inputs "
                        f"{[str(i) for i in self.inputs]}")
            self.apply_nodes.add(n)
            for out in n.outputs:
                self._setup_var(out)
            for i, inp in enumerate(n.inputs):
                self._setup_var(inp)
                self.clients[inp].append((n, i))
            self.execute_callbacks("on_import", n, reason)

    # -- editing --------------------------------------------------------------------------

    def _remove_client(self, var: Variable, client, reason=None) -> None:
        """Drop one client of ``var``; prune ``var``'s node when nothing reads it anymore."""
        stack = [(var, client)]
        while stack:
            v, c = stack.pop()
            clients = self.clients[v]
            clients.remove(c)
            if clients or v.owner is None:
                continue
            node = v.owner
            if any(self.clients[o] for o in node.outputs):
                continue
            self.apply_nodes.discard(node)
            for o in node.outputs:
                self.variables.discard(o)
                del self.clients[o]
            self.execute_callbacks("on_prune", node, reason)
            for i, inp in enumerate(node.inputs):
                stack.append((inp, (node, i)))

    def change_node_input(self, node, i: int, new_var: Variable, reason=None) -> None:
        """Make input ``i`` of ``node`` (or output ``i`` if ``node == "output"``) read ``new_var``."""
        if node == "output":
            old = self.outputs[i]
            if old.type != new_var.type and not old.type.is_super(new_var.type):
                raise TypeError(f"output {i} has type {old.type}; replacement {new_var} has "
                                f"type {new_var.type}")
            self.outputs[i] = new_var
        else:
            old = node.inputs[i]
            if old.type != new_var.type and not old.type.is_super(new_var.type):
                raise TypeError(f"{node}: input {i} has type {old.type}; replacement {new_var} "
                                f"has type {new_var.type}")
            node.inputs[i] = new_var
        if old is new_var:
            return
        self.import_var(new_var, reason)
        self.clients[new_var].append((node, i))
        self._remove_client(old, (node, i), reason)
        self.execute_callbacks("on_change_input", node, i, old, new_var, reason)

    def replace(self, var: Variable, new_var: Variable, reason=None, verbose=None) -> None:
        """Make every client of ``var`` read ``new_var`` instead (types must be compatible)."""
        if var not in self.variables:
            return
        converted = var.type.convert_variable(new_var)
        if converted is None:
            raise TypeError(f"cannot replace {var} ({var.type}) with {new_var} ({new_var.type}) "
                            f"(reason: {reason}): the types are incompatible")
        new_var = converted
        if verbose:
            print(f"rewriting: {reason}: {var} -> {new_var}")
        for node, i in list(self.clients[var]):
            if node == "output" or node in self.apply_nodes:
                self.change_node_input(node, i, new_var, reason)

    def replace_all(self, pairs, reason=None, verbose=None) -> None:
        for var, new_var in pairs:
            self.replace(var, new_var, reason, verbose)

    def replace_validate(self, var, new_var, reason=None) -> None:
        """Replace, then ask the features to validate; undo and re-raise if one objects."""
        self.replace_all_validate([(var, new_var)], reason)

    def replace_all_validate(self, pairs, reason=None) -> None:
        pairs = list(pairs)
        undo = []
        try:
            for var, new_var in pairs:
                if var not in self.variables:
                    continue
                clients = list(self.clients[var])
                self.replace(var, new_var, reason)
                undo.append((var, clients))
            self.validate()
        except Exception:
            for var, clients in reversed(undo):
                for node, i in clients:
                    self.change_node_input(node, i, var, reason="undo")
            raise

    def validate(self) -> None:
        for f in self._features:
            f.validate(self)

    # -- features -------------------------------------------------------------------------

    @property
    def features(self) -> list[Feature]:
        return list(self._features)

    def attach_feature(self, feature: Feature) -> None:
        if feature in self._features:
            return
        self._features.append(feature)
        feature.on_attach(self)
        for node in self.toposort():
            feature.on_import(self, node, "on_attach")

    def remove_feature(self, feature: Feature) -> None:
        self._features.remove(feature)
        feature.on_detach(self)

    def execute_callbacks(self, name: str, *args) -> None:
        if name in ("on_import", "on_prune", "on_change_input"):
            self.version += 1
        for f in self._features:
            getattr(f, name)(self, *args)

    # -- reading --------------------------------------------------------------------------

    def orderings(self) -> dict:
        """Extra order constraints from features: {node: [nodes that must run before it]}."""
        merged: dict = OrderedDict()
        for f in self._features:
            for node, before in f.orderings(self).items():
                merged.setdefault(node, []).extend(before)
        return merged

    def toposort(self) -> list[Apply]:
        """The nodes in execution order (deterministic for a given graph)."""
        if len(self.apply_nodes) < 2:
            return list(self.apply_nodes)
        return io_toposort(self.inputs, self.outputs, self.orderings())

    def clone(self, check_integrity: bool = True) -> FunctionGraph:
        """A copy of this graph (features are not copied)."""
        fg = FunctionGraph(self.inputs, self.outputs, clone=True)
        _copy_destroyable(self, fg)
        if check_integrity:
            fg.check_integrity()
        return fg

    def clone_get_equiv(self):
        """A copy of this graph and the {old: new} map of its variables and nodes."""
        equiv = clone_get_equiv(self.inputs, self.outputs)
        fg = FunctionGraph([equiv[v] for v in self.inputs], [equiv[v] for v in self.outputs],
                           clone=False)
        _copy_destroyable(self, fg)
        return fg, equiv

    def check_integrity(self) -> None:
        """Verify that clients, nodes and variables agree (for tests and debugging)."""
        reachable = set(io_toposort(self.inputs, self.outputs))
        if reachable != self.apply_nodes:
            raise InconsistencyError(
                f"nodes out of sync: {len(reachable)} reachable vs {len(self.apply_nodes)} tracked")
        for node in self.apply_nodes:
            for i, inp in enumerate(node.inputs):
                if (node, i) not in self.clients.get(inp, ()):
                    raise InconsistencyError(f"{inp} does not list {node} as client {i}")
        for i, out in enumerate(self.outputs):
            if ("output", i) not in self.clients.get(out, ()):
                raise InconsistencyError(f"output {i} ({out}) is not registered as an output")

    def __reduce__(self):
        # the nodes go first, in topological order: pickle meets each node after the nodes
        # it reads, so its recursion stays shallow however deep the graph is (through the
        # outputs alone, a 64-layer MLP's step exceeded Python's recursion limit)
        kept = [type(f) for f in self._features if f.survives_pickling]
        destroyable = [k for k, v in enumerate(self.inputs)
                       if v in getattr(self, "destroyable_inputs", ())]
        return _unpickled_fgraph, (self.toposort(), self.inputs, self.outputs, kept, destroyable)

    def __str__(self):
        return f"FunctionGraph({', '.join(str(o) for o in self.outputs)})"

    def __iter__(self):
        return iter(self.toposort())

    def __len__(self):
        return len(self.apply_nodes)


def _copy_destroyable(source, target) -> None:
    """Carry ``destroyable_inputs`` (the inputs a function may overwrite, ``In(mutable=True)``)
    from a graph to its copy, by input position."""
    destroyable = getattr(source, "destroyable_inputs", ())
    if destroyable:
        target.destroyable_inputs = frozenset(
            new for old, new in zip(source.inputs, target.inputs) if old in destroyable)


def _unpickled_fgraph(nodes, inputs, outputs, feature_classes, destroyable=()) -> FunctionGraph:
    """A pickled FunctionGraph again: the same (unpickled) variables and ``nodes``, with new
    features of the classes that survive pickling."""
    fgraph = FunctionGraph(inputs, outputs, clone=False)
    if destroyable:
        fgraph.destroyable_inputs = frozenset(inputs[k] for k in destroyable)
    for cls in feature_classes:
        fgraph.attach_feature(cls())
    return fgraph
