"""The Python virtual machine: runs a FunctionGraph's nodes one after the other.

Linking turns a FunctionGraph into a ``VM``: every variable gets a *storage cell* (a one-element
list shared by the node computing it and the nodes reading it) and a *compute flag* (a
one-element list of bool), every node gets a *thunk* (a no-argument callable reading its input
cells and filling its output cells, made by ``op.make_py_thunk``). Calling the VM runs the thunks
in toposort order.

Three things happen around that loop, all optional and all off the fast path:

* garbage collection: with ``allow_gc`` the cell of an intermediate result is emptied right
  after the last node reading it has run (graph inputs, outputs and constants are never
  touched), so peak memory stays low; without it, results stay in their cells between calls
  and ops may reuse them as output buffers;
* stepping hooks: ``vm.pre_hook(i, node, thunk)`` / ``vm.post_hook(i, node, thunk)`` are called
  before / after node ``i`` runs (``thunk.inputs`` / ``thunk.outputs`` are its cells). Monitors,
  NaN guards and the notebook stepper are written against these two attributes;
* laziness: a thunk with ``thunk.lazy = True`` (e.g. ``ifelse``) may be called before its inputs
  are computed. It returns a false value when it is done (outputs set, their compute flags set),
  or the list of input indices it needs; the VM then computes just those inputs (and only the
  nodes they depend on) and calls it again. So only the branch an ``ifelse`` takes is computed.
  Graphs without lazy nodes never pay for this.

An error raised by a node is re-raised through ``reraise_with_node``: same exception type, one
short paragraph naming the node, its position, the input shapes and the user's source line.
"""

from __future__ import annotations

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant
from tensorgraph.graph.errors import reraise_with_node


class VM:
    """A linked FunctionGraph: call it to compute ``fgraph.outputs`` from ``fgraph.inputs``.

    Attributes
    ----------
    fgraph : FunctionGraph
    nodes : list of Apply, in execution (toposort) order
    thunks : list of callables, ``thunks[i]`` computes ``nodes[i]``
    storage_map : dict {Variable: [value]}, the storage cells
    compute_map : dict {Variable: [bool]}, whether a value is computed in the current call
    input_storage, output_storage : the cells of ``fgraph.inputs`` / ``fgraph.outputs``
    allow_gc : bool, free intermediate results after their last use
    lazy : bool, whether some thunk is lazy (then nodes run on demand)
    pre_hook, post_hook : None or callable(i, node, thunk), called around every node run
    """

    def __init__(self, fgraph, nodes, thunks, storage_map, compute_map, allow_gc: bool):
        self.fgraph = fgraph
        self.nodes = list(nodes)
        self.thunks = list(thunks)
        self.storage_map = storage_map
        self.compute_map = compute_map
        self.input_storage = [storage_map[v] for v in fgraph.inputs]
        self.output_storage = [storage_map[v] for v in fgraph.outputs]
        self.allow_gc = allow_gc
        self.lazy = any(getattr(t, "lazy", False) for t in self.thunks)
        self.pre_hook = None
        self.post_hook = None

        kept = set(fgraph.inputs) | set(fgraph.outputs)
        self.intermediates = [out for node in self.nodes for out in node.outputs
                              if out not in kept]
        self._index = {node: i for i, node in enumerate(self.nodes)}
        # compute flags reset at the start of each lazy call: the outputs of every node
        self._node_output_flags = [compute_map[out] for node in self.nodes
                                   for out in node.outputs]
        self._free_after = self._last_uses() if allow_gc else None
        if self.lazy:
            intermediates = set(self.intermediates)
            self._readers = {v: [] for v in intermediates}
            for node in self.nodes:
                for inp in node.inputs:
                    if inp in intermediates and node not in self._readers[inp]:
                        self._readers[inp].append(node)

    def _last_uses(self) -> list[list]:
        """For each node, the cells of the intermediates nobody reads after it (gc schedule)."""
        last = {}
        for i, node in enumerate(self.nodes):
            for out in node.outputs:
                last[out] = i
            for inp in node.inputs:
                last[inp] = i
        free = [[] for _ in self.nodes]
        for var in self.intermediates:
            free[last[var]].append(self.storage_map[var])
        return free

    # -- running --------------------------------------------------------------------------

    def __call__(self):
        __tracebackhide__ = True  # noqa: F841 - IPython shows the user's frame first
        if self.lazy:
            self._run_lazy()
        elif self.pre_hook is None and self.post_hook is None:
            self._run_plain()
        else:
            self._run_hooked()

    def _run_plain(self):
        __tracebackhide__ = True  # noqa: F841
        i = -1
        try:
            if self._free_after is None:
                for i, thunk in enumerate(self.thunks):
                    thunk()
            else:
                for i, (thunk, free) in enumerate(zip(self.thunks, self._free_after)):
                    thunk()
                    for cell in free:
                        cell[0] = None
        except Exception as exc:
            self._fail(exc, i)

    def _run_hooked(self):
        __tracebackhide__ = True  # noqa: F841
        pre, post = self.pre_hook, self.post_hook
        free_after = self._free_after
        for i, (node, thunk) in enumerate(zip(self.nodes, self.thunks)):
            if pre is not None:
                pre(i, node, thunk)
            try:
                thunk()
            except Exception as exc:
                self._fail(exc, i)
            if post is not None:
                post(i, node, thunk)
            if free_after is not None:
                for cell in free_after[i]:
                    cell[0] = None

    def _run_lazy(self):
        """Run nodes on demand, from the outputs back (see ``lazy_schedule``)."""
        __tracebackhide__ = True  # noqa: F841
        pre, post = self.pre_hook, self.post_hook
        nodes, thunks, storage_map = self.nodes, self.thunks, self.storage_map
        schedule = self.lazy_schedule()
        i = next(schedule, None)
        while i is not None:
            node, thunk = nodes[i], thunks[i]
            if pre is not None:
                pre(i, node, thunk)
            try:
                requires = thunk()
            except Exception as exc:
                self._fail(exc, i)
            if post is not None:
                post(i, node, thunk)
            try:
                i = schedule.send(requires)
            except StopIteration:
                i = None
        if self.allow_gc:
            for var in self.intermediates:
                storage_map[var][0] = None

    def lazy_schedule(self):
        """The indices of the nodes a lazy run executes, in order: from the outputs back, a
        stack of nodes waiting for inputs. The caller runs each node yielded and sends back
        what its thunk returned (a lazy thunk's answer: the inputs it still needs). Marks
        outputs computed and frees read inputs as the run goes (the VM's loop and the
        stepper both drive it)."""
        compute_map = self.compute_map
        for flag in self._node_output_flags:
            flag[0] = False
        stack = [v.owner for v in reversed(self.fgraph.outputs) if not compute_map[v][0]]
        while stack:
            node = stack[-1]
            if all(compute_map[out][0] for out in node.outputs):
                stack.pop()
                continue
            i = self._index[node]
            thunk = self.thunks[i]
            if not thunk.lazy:
                missing = [inp.owner for inp in node.inputs if not compute_map[inp][0]]
                if missing:
                    stack.extend(reversed(missing))
                    continue
            requires = yield i
            if thunk.lazy and requires:
                missing = [node.inputs[k].owner for k in requires
                           if not compute_map[node.inputs[k]][0]]
                if not missing:
                    raise RuntimeError(
                        f"lazy node {node} asked for inputs {list(requires)}, which are already "
                        "computed: its thunk must read compute_map before asking")
                stack.extend(reversed(missing))
                continue
            for out in node.outputs:
                compute_map[out][0] = True
            stack.pop()
            if self.allow_gc:
                self._free_read_inputs(node)

    def _free_read_inputs(self, node):
        """Lazy gc: empty the cells of ``node``'s inputs once every reader has finished."""
        compute_map = self.compute_map
        for inp in node.inputs:
            readers = self._readers.get(inp)
            if readers is not None and all(compute_map[out][0] for reader in readers
                                           for out in reader.outputs):
                self.storage_map[inp][0] = None

    def _fail(self, exc: Exception, i: int):
        __tracebackhide__ = True  # noqa: F841
        node = self.nodes[i]
        values = [self.storage_map[v][0] for v in node.inputs]
        if self.allow_gc:
            for var in self.intermediates:
                self.storage_map[var][0] = None
        reraise_with_node(exc, node, values, i, fgraph=self.fgraph)

    def __repr__(self):
        kind = "lazy " if self.lazy else ""
        gc = "gc" if self.allow_gc else "no gc"
        return f"<{kind}VM: {len(self.nodes)} nodes, {gc}>"


class PyVMLinker:
    """Links a FunctionGraph into a ``VM`` running each node's numpy ``perform``.

    ``allow_gc=None`` follows ``config.allow_gc`` at link time. Registered as the linkers
    'py' and 'vm' (gc per config) and 'vm_nogc' (never gc).
    """

    def __init__(self, allow_gc: bool | None = None, name: str = "vm"):
        self.allow_gc = allow_gc
        self.name = name

    def make_vm(self, fgraph, input_storage=None, storage_map=None) -> VM:
        """Link ``fgraph``.

        ``input_storage``: cells to use for ``fgraph.inputs`` (shared variables pass their
        container's cell, so the VM reads their current value); fresh cells otherwise.
        ``storage_map``: cells to reuse for other variables (a function copy that shares
        memory with the original).
        """
        allow_gc = config.allow_gc if self.allow_gc is None else self.allow_gc
        nodes, storage_map, compute_map = prepare_storage(fgraph, input_storage, storage_map)
        thunks = [node.op.make_py_thunk(node, storage_map, compute_map) for node in nodes]
        return VM(fgraph, nodes, thunks, storage_map, compute_map, allow_gc)

    def __repr__(self):
        return f"PyVMLinker(name={self.name!r}, allow_gc={self.allow_gc})"


def input_cells(fgraph, input_storage=None, storage_map=None):
    """(the cells of ``fgraph.inputs``, a new storage map holding them): ``input_storage`` as
    given (one per input), or fresh cells."""
    storage_map = dict(storage_map or {})
    if input_storage is None:
        input_storage = [[None] for _ in fgraph.inputs]
    if len(input_storage) != len(fgraph.inputs):
        raise ValueError(f"{len(fgraph.inputs)} graph inputs but {len(input_storage)} "
                         "input cells")
    for var, cell in zip(fgraph.inputs, input_storage):
        storage_map[var] = cell
    return input_storage, storage_map


def prepare_storage(fgraph, input_storage=None, storage_map=None):
    """The nodes in execution order and one storage cell and compute flag per variable.

    Every linker starts from this: ``input_storage`` gives the cells of ``fgraph.inputs``
    (shared variables pass their container's cell), ``storage_map`` cells to reuse for other
    variables, constants get cells holding their value.
    """
    input_storage, storage_map = input_cells(fgraph, input_storage, storage_map)
    nodes = fgraph.toposort()
    for var in [v for node in nodes for v in node.inputs + node.outputs] + fgraph.outputs:
        if var not in storage_map:
            storage_map[var] = [var.data] if isinstance(var, Constant) else [None]
    compute_map = {var: [var.owner is None] for var in storage_map}
    return nodes, storage_map, compute_map
