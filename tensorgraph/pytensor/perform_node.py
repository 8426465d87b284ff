"""``PyTensorPerform``: a tensorgraph node that runs a PyTensor op's own ``perform``.

Why: the bridge converts PyTensor graphs op by op, and an op without a conversion entry (a
PyMC or user op, a PyTensor op tensorgraph has no twin of) must still run, so that every graph
compiles. Such a node keeps the PyTensor node it stands for and calls its op's ``perform`` on
the same numpy values; the C back end runs it as any op without C (its ``perform`` in the
loop). A ``Scan`` runs PyTensor's own thunk of the node instead (``make_thunk``: its loop in
Cython, where ``perform`` is the Python loop), on cells of the node's own, one call at a time
(a call meanwhile from another thread runs ``perform``). ``tensorgraph.pytensor.unsupported`` lists these nodes, and printing shows them as
``PyTensor[OpName]``.
"""

from __future__ import annotations

import threading

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op

__all__ = ["PyTensorPerform"]


class PyTensorPerform(Op):
    """Runs ``pt_node.op.perform`` (``pt_node``: the PyTensor Apply node this node stands for).

    ``reason`` says why the node was not converted (shown by ``unsupported``). ``fixed`` maps
    the positions of PyTensor inputs that have no tensorgraph type (``NoneConst``, the ``size``
    of a random variable drawn without one; a constant ``slice``) to their Python value: they
    are not inputs of the tensorgraph node, and ``perform`` puts them back in place. Two such
    ops are equal when they wrap equal PyTensor ops with the same output types and the same
    fixed values, so merging keeps working on converted graphs."""

    __props__ = ("pt_op", "out_types", "fixed_key")

    def __init__(self, pt_node, out_types, reason: str = "", fixed=None):
        self.pt_node = pt_node
        self.pt_op = pt_node.op
        self.out_types = tuple(out_types)
        self.reason = reason
        self.fixed = dict(fixed or {})
        # slices are unhashable before Python 3.12: their repr stands for them
        self.fixed_key = tuple((i, repr(v)) for i, v in sorted(self.fixed.items()))

    def __str__(self):
        return f"PyTensor[{self.pt_op}]"

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_thunk", None)   # made again where it runs
        state.pop("_thunk_lock_", None)
        return state

    def __setstate__(self, state):
        state.setdefault("fixed", {})       # pickled before inputs could be fixed
        state.setdefault("fixed_key", ())
        self.__dict__.update(state)
        _repair_inner_graph(self.pt_op)

    def _pt_thunk(self):
        """(thunk, input cells, output cells) of PyTensor's own thunk of a ``Scan`` node, made
        on the first call, or None (other ops, or PyTensor could not make one)."""
        thunk = self.__dict__.get("_thunk", False)
        if thunk is not False:
            return thunk
        thunk = None
        if type(self.pt_op).__name__ == "Scan" and type(self.pt_op).__module__.startswith(
                "pytensor.scan"):
            node = self.pt_node
            cells = {v: [None] for v in [*node.inputs, *node.outputs]}
            computed = {v: [v in node.inputs] for v in cells}
            try:
                run = self.pt_op.make_thunk(node, cells, computed, [])
            except Exception:  # noqa: BLE001 - perform is always there
                run = None
            if run is not None:
                thunk = (run, [cells[v] for v in node.inputs], [cells[v] for v in node.outputs])
        self.__dict__["_thunk"] = thunk
        return thunk

    @property
    def _thunk_lock(self):
        return self.__dict__.setdefault("_thunk_lock_", threading.Lock())

    def make_node(self, *inputs):
        n = len(self.pt_node.inputs) - len(self.fixed)
        if len(inputs) != n:
            raise TypeError(f"{self} takes {n} inputs, got {len(inputs)}")
        return Apply(self, list(inputs), [t() for t in self.out_types])

    def perform(self, node, inputs, output_storage):
        if self.fixed:
            given = iter(inputs)
            inputs = [self.fixed[i] if i in self.fixed else next(given)
                      for i in range(len(self.pt_node.inputs))]
        thunk = self._pt_thunk()
        if thunk is not None:
            # one call at a time: the thunk's cells, and the inner compiled function that its
            # loop and PyTensor's Scan.perform both run, hold one call's values
            with self._thunk_lock:
                run, in_cells, out_cells = thunk
                for cell, value in zip(in_cells, inputs):
                    cell[0] = value
                for cell in out_cells:
                    cell[0] = None  # never reuse (and overwrite) what a call returned
                try:
                    run()
                    for out, cell in zip(output_storage, out_cells):
                        out[0] = cell[0]
                finally:
                    for cell in (*in_cells, *out_cells):
                        cell[0] = None
        elif hasattr(self.pt_op, "fgraph"):  # an op with an inner function: the same rule
            with self._thunk_lock:
                self.pt_op.perform(self.pt_node, list(inputs), output_storage)
        else:
            # PyTensor's perform writes into the same one-element lists tensorgraph uses
            self.pt_op.perform(self.pt_node, list(inputs), output_storage)
        for cell, out in zip(output_storage, node.outputs):
            cell[0] = out.type.filter(cell[0]) if hasattr(out.type, "filter") else cell[0]


def _repair_inner_graph(pt_op) -> None:
    """PyTensor's ``ReplaceValidate`` leaves its ``history`` out of a pickle and does not make
    it again when unpickled, so an op's inner graph (``Scan``'s) that had it attached fails
    every rewrite that checkpoints when the op compiles its inner function in the unpickling
    process (``pm.sample(cores=2)``'s workers: "'ReplaceValidate' object has no attribute
    'history'", logged, those rewrites skipped). The history starts empty, as when attached;
    the graph's ``execute_callbacks_times``, which its own pickle leaves out as well (a
    replacement then fails half done), starts empty too."""
    fgraph = getattr(pt_op, "fgraph", None)
    if fgraph is None:
        return
    from collections import defaultdict

    from pytensor.graph.features import History

    for feature in getattr(fgraph, "_features", ()):
        if isinstance(feature, History) and not hasattr(feature, "history"):
            feature.history = {fgraph: []}
    if not hasattr(fgraph, "execute_callbacks_times"):  # dropped by its __getstate__ too
        fgraph.execute_callbacks_times = defaultdict(float)
