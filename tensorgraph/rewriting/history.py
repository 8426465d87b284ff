"""``RewriteHistory``: the ordered record of every rewrite step applied to a FunctionGraph.

Attached to every graph a ``Mode`` rewrites (``f.maker.fgraph.rewrite_history``), always on.
For each step it keeps the rewrite's name and definition site, the node it was applied at, the
nodes removed and added (the before/after subgraphs: everything pruned, everything imported),
the exact input changes, and the time taken. From that it can rebuild the graph as it was after
any step, for the notebook's step-by-step replay.

How rebuilding works: at attach time the history snapshots each node's inputs (nodes are
edited in place later, so the snapshot is what the original graph was). Each step snapshots the
inputs of the nodes it imports and records each ``(node, input index, old, new)`` change.
``rebuild(n)`` copies the original graph, then replays the first ``n`` steps on the copy:
clone the added nodes onto the copy's variables, then make the same input changes.

Cost: one tuple per node and per change, a few list appends per step; no cloning unless
``rebuild`` is called.
"""

from __future__ import annotations

import json

from tensorgraph.graph.basic import Apply, Constant, io_toposort
from tensorgraph.graph.fg import Feature, FunctionGraph

__all__ = ["RewriteHistory", "RewriteStep", "NodeRecord", "structurally_equal", "graph_signature"]


def _label(var) -> str:
    if isinstance(var, Constant):
        return var._label()
    return var.name if var.name is not None else var.auto_name


class NodeRecord:
    """A node as it was when recorded: op, inputs (snapshot) and outputs."""

    __slots__ = ("node", "inputs")

    def __init__(self, node: Apply):
        self.node = node
        self.inputs = tuple(node.inputs)

    @property
    def op(self):
        return self.node.op

    @property
    def outputs(self):
        return self.node.outputs

    def to_dict(self) -> dict:
        return {"op": str(self.node.op), "inputs": [_label(v) for v in self.inputs],
                "outputs": [_label(v) for v in self.node.outputs],
                "types": [str(v.type) for v in self.node.outputs]}

    def __str__(self):
        outs = ", ".join(_label(v) for v in self.node.outputs)
        return f"{outs} = {self.node.op}({', '.join(_label(v) for v in self.inputs)})"

    __repr__ = __str__


class RewriteStep:
    """One replacement: which rewrite, where it is defined, what it removed and added.

    Attributes
    ----------
    index : position in the history (0-based)
    rewriter : the rewriter object (``None`` for a change made outside the rewrite machinery)
    name : the rewrite's name (or the ``reason`` given to ``fgraph.replace``)
    node : the node the rewrite was applied at (``None`` for graph rewriters)
    removed, added : lists of ``NodeRecord`` (the before and after subgraphs)
    changes : ``(node_or_"output", input_index, old_variable, new_variable)`` in order
    seconds : time from calling the rewrite to the end of the replacement
    """

    __slots__ = ("index", "rewriter", "name", "node", "removed", "added", "changes", "seconds",
                 "reason")

    def __init__(self, index, rewriter, node, reason=None):
        self.index = index
        self.rewriter = rewriter
        self.name = str(rewriter) if rewriter is not None else str(reason)
        self.reason = reason
        self.node = node
        self.removed: list[NodeRecord] = []
        self.added: list[NodeRecord] = []
        self.changes: list[tuple] = []
        self.seconds = 0.0

    @property
    def location(self) -> str:
        """``file:line`` where the rewrite is defined ('' when unknown)."""
        return self.rewriter.location if self.rewriter is not None else ""

    @property
    def replaced(self) -> list[tuple]:
        """The distinct ``(old, new)`` variable pairs of this step."""
        seen, pairs = set(), []
        for _, _, old, new in self.changes:
            if (old, new) not in seen:
                seen.add((old, new))
                pairs.append((old, new))
        return pairs

    def to_dict(self) -> dict:
        """A JSON-serialisable description (for the notebook widgets and for saving)."""
        return {
            "index": self.index, "rewrite": self.name, "location": self.location,
            "node": str(self.node) if self.node is not None else None,
            "replaced": [[_label(o), _label(n)] for o, n in self.replaced],
            "removed": [r.to_dict() for r in self.removed],
            "added": [r.to_dict() for r in self.added],
            "seconds": self.seconds,
        }

    def __str__(self):
        lines = [f"step {self.index}: {self.name}" + (f" ({self.location})" if self.location else "")
                 + f"  {self.seconds * 1e3:.3f} ms"]
        lines.extend(f"  - {r}" for r in self.removed)
        lines.extend(f"  + {r}" for r in self.added)
        lines.extend(f"  {_label(o)} -> {_label(n)}" for o, n in self.replaced)
        return "\n".join(lines)

    __repr__ = __str__


class RewriteHistory(Feature):
    """Records every change of a FunctionGraph as steps; see the module docstring.

    The rewrite machinery opens and closes steps (``begin_step``/``commit_step``/
    ``abort_step``). Changes made directly with ``fgraph.replace(..., reason=...)`` are
    recorded too, one step per consecutive run of the same reason.
    """

    def __init__(self):
        self.steps: list[RewriteStep] = []
        self.fgraph = None
        self._original_nodes: list[NodeRecord] = []
        self._original_inputs: list = []
        self._original_outputs: list = []
        self._open: RewriteStep | None = None
        self._implicit: RewriteStep | None = None
        #: wall time of the whole rewrite (set by the Mode), attempts that did not apply included
        self.total_seconds = 0.0

    # -- Feature callbacks ----------------------------------------------------------------

    def on_attach(self, fgraph):
        if self.fgraph is not None and self.fgraph is not fgraph:
            raise ValueError("a RewriteHistory records one FunctionGraph; make a new one")
        self.fgraph = fgraph
        self._original_inputs = list(fgraph.inputs)
        self._original_outputs = list(fgraph.outputs)
        fgraph.rewrite_history = self

    def on_detach(self, fgraph):
        if getattr(fgraph, "rewrite_history", None) is self:
            del fgraph.rewrite_history

    def _step(self, reason) -> RewriteStep:
        if self._open is not None:
            return self._open
        step = self._implicit
        if step is None or step.reason != reason:
            step = self._implicit = RewriteStep(len(self.steps), None, None, reason)
            self.steps.append(step)
        return step

    def on_import(self, fgraph, node, reason):
        if reason == "on_attach":
            self._original_nodes.append(NodeRecord(node))
            return
        self._step(reason).added.append(NodeRecord(node))

    def on_prune(self, fgraph, node, reason):
        self._step(reason).removed.append(NodeRecord(node))

    def on_change_input(self, fgraph, node, i, old, new, reason):
        self._step(reason).changes.append((node, i, old, new))

    # -- steps opened by the rewrite machinery --------------------------------------------

    def begin_step(self, rewriter, node) -> None:
        self._implicit = None
        self._open = RewriteStep(len(self.steps), rewriter, node)

    def commit_step(self, seconds: float) -> None:
        step, self._open = self._open, None
        if step is not None and step.changes:
            step.seconds = seconds
            self.steps.append(step)

    def abort_step(self) -> None:
        self._open = None

    # -- reading ---------------------------------------------------------------------------

    def __len__(self):
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    @property
    def original_inputs(self) -> tuple:
        """The graph's inputs before any rewrite (the recorded variables)."""
        return tuple(self._original_inputs)

    @property
    def original_nodes(self) -> tuple:
        """The records of the nodes the graph had before any rewrite."""
        return tuple(self._original_nodes)

    @property
    def original_node_count(self) -> int:
        """How many nodes the graph had before any rewrite."""
        return len(self._original_nodes)

    def made_by(self) -> dict:
        """``{node: step index}`` for every node a step added (the last step that added it)."""
        made = {}
        for step in self.steps:
            for record in step.added:
                made[record.node] = step.index
        return made

    @property
    def seconds(self) -> float:
        """Total time of the recorded steps."""
        return sum(s.seconds for s in self.steps)

    def to_json(self) -> str:
        return json.dumps([s.to_dict() for s in self.steps])

    def summary(self) -> str:
        """One line per step: index, rewrite name, what it replaced."""
        lines = []
        for s in self.steps:
            pairs = ", ".join(f"{_label(o)} -> {_label(n)}" for o, n in s.replaced)
            lines.append(f"{s.index:4d} {s.name}: {pairs}")
        return "\n".join(lines)

    def rebuild(self, n_steps: int | None = None, memo: dict | None = None) -> FunctionGraph:
        """A new FunctionGraph equal to the graph after the first ``n_steps`` steps
        (``0``: the graph before any rewrite; ``None``: after the last step).  ``memo``, a
        dict, receives ``{recorded node or variable: its copy in the new graph}`` (to find a
        step's nodes in the rebuilt graph)."""
        if n_steps is None:
            n_steps = len(self.steps)
        if not 0 <= n_steps <= len(self.steps):
            raise IndexError(f"rebuild: n_steps must be between 0 and {len(self.steps)}, "
                             f"got {n_steps}")
        memo = {} if memo is None else memo
        for v in self._original_inputs:
            memo[v] = v.clone()
        for record in self._original_nodes:
            _replay_node(record, memo)
        fg = FunctionGraph([memo[v] for v in self._original_inputs],
                           [_mapped(memo, v) for v in self._original_outputs], clone=False)
        destroyable = getattr(self.fgraph, "destroyable_inputs", ())
        if destroyable:  # the inputs the function may overwrite (In(mutable=True)) stay so
            fg.destroyable_inputs = frozenset(memo[v] for v in self._original_inputs
                                              if v in destroyable)
        for step in self.steps[:n_steps]:
            for record in step.added:
                if record.node not in memo:
                    _replay_node(record, memo)
            for node, i, old, new in step.changes:
                target = node if node == "output" else memo[node]
                fg.change_node_input(target, i, _mapped(memo, new), reason=step.name)
        return fg


def _mapped(memo, var):
    got = memo.get(var)
    if got is not None:
        return got
    if isinstance(var, Constant):
        return var
    raise KeyError(f"rebuild: {var} was never recorded (a change bypassed the history)")


def _replay_node(record: NodeRecord, memo: dict) -> None:
    node = record.node
    outputs = [o.clone() for o in node.outputs]
    new = Apply.__new__(Apply)
    new.op = node.op
    new.inputs = [_mapped(memo, v) for v in record.inputs]
    new.outputs = outputs
    for i, o in enumerate(outputs):
        o.owner, o.index = new, i
    new.tag = node.tag.copy()
    memo[node] = new
    for old, o in zip(node.outputs, outputs):
        memo[old] = o


def graph_signature(fgraph) -> list[tuple]:
    """The graph's structure as a list, equal for structurally equal graphs.

    One entry per node in toposort order (without feature orderings): the op and, per input, either ``("in", k)`` (graph
    input k), ``("const", signature)`` or ``("node", j, output)`` (output of the j-th node);
    then the outputs the same way.
    """
    position = {v: ("in", k) for k, v in enumerate(fgraph.inputs)}
    entries = []
    for j, node in enumerate(io_toposort(fgraph.inputs, fgraph.outputs)):
        ins = []
        for v in node.inputs:
            ins.append(("const", v.signature()) if isinstance(v, Constant) else position[v])
        entries.append((node.op, tuple(ins)))
        for k, o in enumerate(node.outputs):
            position[o] = ("node", j, k)
    outs = tuple(("const", v.signature()) if isinstance(v, Constant) else position[v]
                 for v in fgraph.outputs)
    entries.append(("outputs", outs))
    return entries


def structurally_equal(fg1, fg2) -> bool:
    """Whether two FunctionGraphs compute the same thing with the same nodes (ops compared by
    equality, constants by value, inputs by position)."""
    return graph_signature(fg1) == graph_signature(fg2)
