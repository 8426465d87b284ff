"""Rewriters: objects that edit a ``FunctionGraph`` into an equivalent, better graph.

Two kinds, as in Theano / PyTensor:

* a **node rewriter** looks at one Apply node and returns replacement variables for its outputs
  (or ``None`` when it does not apply). ``tracks()`` lists the ops it cares about so walkers only
  call it on those nodes. Write one with the ``@node_rewriter([OpClassOrInstance, ...])``
  decorator, or with ``PatternNodeRewriter`` (see ``tensorgraph.rewriting.pattern``).
* a **graph rewriter** edits the whole graph (``apply(fgraph)``). Walkers (``in2out``,
  ``out2in``) and the ``EquilibriumGraphRewriter`` are graph rewriters that run node rewriters.

Every replacement goes through ``apply_replacement``: it is validated by the graph's features,
printed when ``config.optimizer_verbose``, timed per rewrite when ``config.profile_optimizer``,
and recorded as one step by the graph's ``RewriteHistory`` (see ``history.py``) with the
rewrite's name and the place it is defined. A rewrite that raises is handled as
``config.on_opt_error`` says ('warn': skipped with a warning naming it and the node; 'raise';
'pdb'; 'ignore'), never silently by default.
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass

from tensorgraph.configdefaults import config
from tensorgraph.graph.fg import Feature
from tensorgraph.graph.lookup import computes_as
from tensorgraph.graph.utils import InconsistencyError

__all__ = [
    "Rewriter", "NodeRewriter", "GraphRewriter", "node_rewriter", "graph_rewriter",
    "SequentialGraphRewriter", "WalkingGraphRewriter", "EquilibriumGraphRewriter", "in2out",
    "out2in", "apply_replacement", "RewriteLimitError", "RewriteSettings", "RewriteProfile",
]


class RewriteLimitError(RuntimeError):
    """Rewriting would not end: an equilibrium rewriter kept firing past
    ``config.optdb__max_use_ratio`` times the graph size (two rewrites probably undo each
    other, or one keeps growing the graph), or a walk kept coming back to one node."""


# ----------------------------------------------------------------------------------------------
# Base classes


class Rewriter:
    """Common part of node and graph rewriters: a name and where the rewrite is defined.

    ``source`` is ``(filename, line)`` of the code the user would read to understand the rewrite
    (the decorated function, the class, or the line that built a pattern rewriter); it is looked
    up lazily because most rewrites never need it.
    """

    name: str | None = None
    _source: tuple[str, int] | None = None

    def __str__(self):
        return self.name or type(self).__name__

    __repr__ = __str__

    @property
    def source(self) -> tuple[str, int]:
        if self._source is None:
            try:
                lines, lineno = inspect.getsourcelines(type(self))
                self._source = (inspect.getsourcefile(type(self)) or "?", lineno)
            except (OSError, TypeError):
                self._source = (sys.modules[type(self).__module__].__dict__.get("__file__", "?"), 0)
        return self._source

    @property
    def location(self) -> str:
        """``file:line`` of the definition."""
        filename, lineno = self.source
        return f"{filename}:{lineno}"

    def add_requirements(self, fgraph) -> None:
        """Attach the features this rewriter needs (e.g. a shape feature) to ``fgraph``."""


class NodeRewriter(Rewriter):
    """Rewrites one node: ``transform(fgraph, node)`` returns replacements or ``None``.

    The result may be a list with one variable per output of ``node`` (``None`` entries keep
    that output), or a dict ``{old_variable: new_variable}``. Returning ``None``/``False``
    means the rewrite does not apply.
    """

    def tracks(self):
        """Op classes and/or op instances this rewriter applies to; ``None`` means every node."""
        return None

    def transform(self, fgraph, node):
        raise NotImplementedError(f"{type(self).__name__} must implement transform")


class FromFunctionNodeRewriter(NodeRewriter):
    """A node rewriter made from a function by ``@node_rewriter``."""

    def __init__(self, fn, tracks, name=None):
        self.fn = fn
        self._tracks = tracks
        self.name = name or fn.__name__
        code = fn.__code__
        self._source = (code.co_filename, code.co_firstlineno)
        self.__doc__ = fn.__doc__

    def tracks(self):
        return self._tracks

    def transform(self, fgraph, node):
        return self.fn(fgraph, node)

    def __call__(self, fgraph, node):
        return self.fn(fgraph, node)


def node_rewriter(tracks, name: str | None = None):
    """Decorator: turn ``fn(fgraph, node) -> replacements | None`` into a ``NodeRewriter``.

    ``tracks`` lists Op classes (any node whose op is an instance) and/or Op instances (nodes
    whose op is equal); ``None`` tracks every node. The rewrite is named after the function
    and remembers where it is defined, for the history and error messages.
    """
    if tracks is not None:
        tracks = list(tracks)
        if not tracks:
            raise ValueError("node_rewriter: tracks must list at least one op or op class "
                             "(or be None to visit every node)")

    def decorate(fn):
        return FromFunctionNodeRewriter(fn, tracks, name)

    return decorate


class GraphRewriter(Rewriter):
    """Rewrites a whole graph. ``apply(fgraph)`` returns the number of replacements made."""

    def apply(self, fgraph) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement apply")

    def rewrite(self, fgraph) -> int:
        """Attach the required features, then apply (the entry point for users)."""
        self.add_requirements(fgraph)
        return self.apply(fgraph)

    def __call__(self, fgraph) -> int:
        return self.rewrite(fgraph)


class FromFunctionGraphRewriter(GraphRewriter):
    """A graph rewriter made from ``fn(fgraph) -> int | None`` by ``@graph_rewriter``."""

    def __init__(self, fn, requirements=(), name=None):
        self.fn = fn
        self.requirements = tuple(requirements)
        self.name = name or fn.__name__
        code = fn.__code__
        self._source = (code.co_filename, code.co_firstlineno)
        self.__doc__ = fn.__doc__

    def add_requirements(self, fgraph):
        for make_feature in self.requirements:
            make_feature(fgraph)

    def apply(self, fgraph):
        return self.fn(fgraph) or 0


def graph_rewriter(fn=None, *, requirements=(), name=None):
    """Decorator: turn ``fn(fgraph)`` into a ``GraphRewriter``. ``requirements`` are callables
    ``(fgraph) -> None`` attaching the features it needs."""
    if fn is None:
        return lambda f: FromFunctionGraphRewriter(f, requirements, name)
    return FromFunctionGraphRewriter(fn, requirements, name)


# ----------------------------------------------------------------------------------------------
# Settings, profile and the one place replacements happen


@dataclass
class RewriteSettings:
    """The rewrite flags, read once per graph rewrite rather than once per node."""

    on_error: str = "warn"
    verbose: bool = False
    profile: bool = False

    @classmethod
    def from_config(cls) -> RewriteSettings:
        return cls(config.on_opt_error, bool(config.optimizer_verbose),
                   bool(config.profile_optimizer))


class RewriteProfile:
    """Time spent per rewrite (``config.profile_optimizer``), kept as ``fgraph.rewrite_profile``.

    ``node_rewrites[name] = [seconds, calls, replacements]`` counts every call of a node
    rewriter, including the ones that did not apply; ``graph_rewrites[name] = [seconds, runs,
    replacements]`` covers graph rewriters (phases, walkers, merges).
    """

    def __init__(self):
        self.node_rewrites: dict[str, list] = {}
        self.graph_rewrites: dict[str, list] = {}

    def add_node(self, name, seconds, applied):
        entry = self.node_rewrites.setdefault(name, [0.0, 0, 0])
        entry[0] += seconds
        entry[1] += 1
        entry[2] += int(applied)

    def add_graph(self, name, seconds, replacements):
        entry = self.graph_rewrites.setdefault(name, [0.0, 0, 0])
        entry[0] += seconds
        entry[1] += 1
        entry[2] += replacements

    def summary(self, limit: int = 20) -> str:
        lines = ["Rewrite profile (seconds, calls, replacements):"]
        for title, table in (("graph rewriters", self.graph_rewrites),
                             ("node rewriters", self.node_rewrites)):
            lines.append(f"  {title}:")
            rows = sorted(table.items(), key=lambda kv: -kv[1][0])[:limit]
            lines.extend(f"    {s:9.6f} {c:6d} {r:6d}  {name}" for name, (s, c, r) in rows)
        return "\n".join(lines)


def profile_of(fgraph) -> RewriteProfile:
    prof = getattr(fgraph, "rewrite_profile", None)
    if prof is None:
        prof = fgraph.rewrite_profile = RewriteProfile()
    return prof


def handle_rewrite_error(rewriter, node, exc: BaseException, settings: RewriteSettings) -> None:
    """Apply ``config.on_opt_error`` to an exception raised by ``rewriter`` on ``node``."""
    where = f" at {node}" if node is not None else ""
    message = (f"rewrite {rewriter} (defined at {rewriter.location}) failed{where}: "
               f"{type(exc).__name__}: {exc}")
    if settings.on_error == "raise":
        exc.add_note(message)
        raise exc
    if settings.on_error == "pdb":
        import pdb

        print(message, file=sys.stderr)
        pdb.post_mortem(exc.__traceback__)
    elif settings.on_error == "warn":
        warnings.warn(message + "; the rewrite was skipped (config.on_opt_error='warn')",
                      stacklevel=2)


def _as_pairs(node, result):
    if isinstance(result, dict):
        return [(old, new) for old, new in result.items() if new is not None and old is not new]
    result = list(result)
    if len(result) != len(node.outputs):
        raise ValueError(f"returned {len(result)} replacements for the {len(node.outputs)} "
                         f"outputs of {node}")
    return [(old, new) for old, new in zip(node.outputs, result)
            if new is not None and old is not new]


def apply_replacement(fgraph, rewriter, node, pairs, settings: RewriteSettings,
                      started: float | None = None) -> bool:
    """Replace each ``(old, new)`` of ``pairs`` in ``fgraph`` as one recorded step.

    Returns whether the graph changed. A replacement a feature vetoes (``InconsistencyError``,
    e.g. the destroy handler refusing an inplace op) is undone and counts as not applied; any
    other error goes through ``config.on_opt_error``.
    """
    pairs = [(old, new) for old, new in pairs if old in fgraph.variables and old is not new]
    if not pairs:
        return False
    history = getattr(fgraph, "rewrite_history", None)
    if history is not None:
        history.begin_step(rewriter, node)
    try:
        fgraph.replace_all_validate(pairs, reason=rewriter)
    except InconsistencyError:
        if history is not None:
            history.abort_step()
        return False
    except Exception as exc:
        if history is not None:
            history.abort_step()
        handle_rewrite_error(rewriter, node, exc, settings)
        return False
    if history is not None:
        history.commit_step(time.perf_counter() - started if started is not None else 0.0)
    if settings.verbose:
        for old, new in pairs:
            print(f"rewriting: {rewriter}: {old} -> {new}")
    return True


def apply_node_rewriter(fgraph, rewriter: NodeRewriter, node, settings: RewriteSettings) -> bool:
    """Run one node rewriter on one node and make its replacement; whether the graph changed."""
    started = time.perf_counter()
    try:
        result = rewriter.transform(fgraph, node)
        pairs = _as_pairs(node, result) if result else None
    except Exception as exc:
        handle_rewrite_error(rewriter, node, exc, settings)
        result = pairs = None
    applied = bool(pairs) and apply_replacement(fgraph, rewriter, node, pairs, settings, started)
    if settings.profile:
        profile_of(fgraph).add_node(str(rewriter), time.perf_counter() - started, applied)
    return applied


# ----------------------------------------------------------------------------------------------
# Composite graph rewriters


class SequentialGraphRewriter(GraphRewriter):
    """Run graph rewriters one after the other (the phases of a preset)."""

    def __init__(self, rewriters, name=None):
        self.rewriters = list(rewriters)
        self.name = name or "sequence"

    def add_requirements(self, fgraph):
        for rw in self.rewriters:
            rw.add_requirements(fgraph)

    def apply(self, fgraph) -> int:
        settings = RewriteSettings.from_config()
        total = 0
        for rw in self.rewriters:
            started = time.perf_counter()
            count = rw.apply(fgraph) or 0
            total += count
            if settings.profile:
                profile_of(fgraph).add_graph(str(rw), time.perf_counter() - started, count)
        return total


class OpTracker:
    """Finds, fast, the node rewriters tracking a node's op (cached per op)."""

    def __init__(self, rewriters):
        self.rewriters = list(rewriters)
        self._cache: dict = {}

    def get(self, op):
        try:
            return self._cache[op]
        except KeyError:
            pass
        except TypeError:  # an unhashable op: no cache
            return [rw for rw in self.rewriters if _tracks_op(rw, op)]
        found = self._cache[op] = [rw for rw in self.rewriters if _tracks_op(rw, op)]
        return found


def _tracks_op(rewriter, op) -> bool:
    """Whether ``rewriter`` tracks ``op``: an op equal to one it lists, or of a class it lists
    that ``op`` computes as (a user's subclass with its own ``perform`` gets none of its
    parent's rewrites: ``tensorgraph.graph.lookup``)."""
    tracks = rewriter.tracks()
    if tracks is None:
        return True
    for t in tracks:
        if isinstance(t, type):
            if computes_as(type(op), t):
                return True
        elif t == op:
            return True
    return False


class _NodeQueue(Feature):
    """Feeds the nodes imported by replacements back into a walk's queue.

    In-to-out walks visit new nodes after the current position, out-to-in walks visit them
    next. Attached once per graph rewrite (nodes already there at attach time are ignored).
    """

    def __init__(self):
        self.queue: deque | None = None
        self.at_front = False

    def on_import(self, fgraph, node, reason):
        # a node brought back by undoing a refused replacement is not new: walking it again
        # would make the same refused replacement forever
        if self.queue is None or reason in ("on_attach", "undo"):
            return
        if self.at_front:
            self.queue.appendleft(node)
        else:
            self.queue.append(node)


class _listening:
    """Context manager: a ``_NodeQueue`` attached to ``fgraph`` for the duration of a rewrite."""

    def __init__(self, fgraph):
        self.fgraph = fgraph
        self.listener = _NodeQueue()

    def __enter__(self) -> _NodeQueue:
        self.fgraph.attach_feature(self.listener)
        return self.listener

    def __exit__(self, *exc):
        self.fgraph.remove_feature(self.listener)


class RunawayGuard:
    """Counts the replacements each rewrite makes during one graph rewrite, and raises
    ``RewriteLimitError`` when one makes more than ``ratio`` times the graph's starting node
    count (at least 10): it probably undoes another rewrite or keeps growing the graph."""

    def __init__(self, owner, fgraph, ratio: float):
        self.owner, self.fgraph, self.ratio = owner, fgraph, ratio
        self.start_nodes = len(fgraph.apply_nodes)
        self.base = max(self.start_nodes, 10)
        self.counts: dict = {}

    def __call__(self, rw, n: int) -> None:
        count = self.counts[rw] = self.counts.get(rw, 0) + n
        if count > self.ratio * self.base:
            raise RewriteLimitError(
                f"{self.owner}: the rewrite {rw} (defined at {getattr(rw, 'location', '?')}) "
                f"was applied {count} times, more than optdb__max_use_ratio={self.ratio} x "
                f"{self.base} nodes; the graph went from {self.start_nodes} to "
                f"{len(self.fgraph.apply_nodes)} nodes. It probably undoes another rewrite or "
                f"keeps growing the graph; exclude it (mode.excluding({str(rw)!r})) or raise "
                "config.optdb__max_use_ratio")


def _walk(fgraph, tracker: OpTracker, order: str, settings: RewriteSettings,
          listener: _NodeQueue | None, guard: RunawayGuard) -> int:
    """One walk over the graph calling the tracked node rewriters; returns replacements made.

    ``listener`` (or ``None`` to ignore new nodes) feeds nodes created on the way into the walk;
    ``guard(rewriter, 1)`` is called after each replacement (the runaway check), and no node
    is visited more than ``optdb__max_use_ratio`` times: either way ``RewriteLimitError``.
    """
    nodes = fgraph.toposort()
    if order == "out_to_in":
        nodes.reverse()
    queue = deque(nodes)
    if listener is not None:
        listener.queue, listener.at_front = queue, order == "out_to_in"
    replaced = 0
    apply_nodes = fgraph.apply_nodes
    visits: dict = {}
    limit = max(2, int(_max_use_ratio()))
    try:
        while queue:
            node = queue.popleft()
            if node not in apply_nodes:
                continue
            visits[node] = visits.get(node, 0) + 1
            if visits[node] > limit:
                raise RewriteLimitError(
                    f"rewriting visited {node} more than optdb__max_use_ratio={limit} times in "
                    f"one walk (rewrites tried: {', '.join(map(str, tracker.get(node.op)))}); "
                    "a replacement keeps being made and refused or undone. Exclude the "
                    "rewrite (mode.excluding(name)) and report the graph.")
            for rw in tracker.get(node.op):
                if apply_node_rewriter(fgraph, rw, node, settings):
                    replaced += 1
                    guard(rw, 1)
                    break
    finally:
        if listener is not None:
            listener.queue = None
    return replaced


def _max_use_ratio() -> float:
    return config.optdb__max_use_ratio


_ORDERS = ("in_to_out", "out_to_in")


class WalkingGraphRewriter(GraphRewriter):
    """Visit the nodes once, in-to-out (inputs first) or out-to-in, running the node rewriters
    that track each node's op; the first one that applies wins for that node.

    Nodes created by a replacement are visited too unless ``ignore_newtrees``.
    """

    def __init__(self, rewriters, order: str = "in_to_out", ignore_newtrees: bool = False,
                 name: str | None = None):
        if order not in _ORDERS:
            raise ValueError(f"order must be one of {_ORDERS}, got {order!r}")
        self.rewriters = list(rewriters)
        for rw in self.rewriters:
            if not isinstance(rw, NodeRewriter):
                raise TypeError(f"{type(self).__name__} runs node rewriters; got {rw!r}")
        self.order = order
        self.ignore_newtrees = ignore_newtrees
        self.tracker = OpTracker(self.rewriters)
        self.name = name or f"{order}({', '.join(str(r) for r in self.rewriters)})"

    def add_requirements(self, fgraph):
        for rw in self.rewriters:
            rw.add_requirements(fgraph)

    def apply(self, fgraph) -> int:
        settings = RewriteSettings.from_config()
        if self.ignore_newtrees:
            return _walk(fgraph, self.tracker, self.order, settings, None,
                         RunawayGuard(self, fgraph, _max_use_ratio()))
        with _listening(fgraph) as listener:
            return _walk(fgraph, self.tracker, self.order, settings, listener,
                         RunawayGuard(self, fgraph, _max_use_ratio()))


def in2out(*rewriters, name=None, ignore_newtrees=False) -> WalkingGraphRewriter:
    """A walker visiting inputs before the nodes that use them."""
    return WalkingGraphRewriter(rewriters, "in_to_out", ignore_newtrees, name)


def out2in(*rewriters, name=None, ignore_newtrees=False) -> WalkingGraphRewriter:
    """A walker visiting outputs first, then towards the inputs."""
    return WalkingGraphRewriter(rewriters, "out_to_in", ignore_newtrees, name)


class EquilibriumGraphRewriter(GraphRewriter):
    """Apply node and graph rewriters over and over until a full pass changes nothing.

    Each pass runs the graph rewriters, then walks the graph (in-to-out, new nodes included)
    with the node rewriters. A guard stops runaway rewriting: when one rewrite has fired more
    than ``max_use_ratio`` (``config.optdb__max_use_ratio``) times the graph's starting node
    count, ``RewriteLimitError`` names it, its count and the node counts.
    """

    def __init__(self, rewriters, max_use_ratio: float | None = None, name: str | None = None):
        self.node_rewriters = [r for r in rewriters if isinstance(r, NodeRewriter)]
        self.graph_rewriters = [r for r in rewriters if isinstance(r, GraphRewriter)]
        others = [r for r in rewriters if not isinstance(r, (NodeRewriter, GraphRewriter))]
        if others:
            raise TypeError(f"EquilibriumGraphRewriter takes node and graph rewriters; got {others}")
        self.max_use_ratio = max_use_ratio
        self.tracker = OpTracker(self.node_rewriters)
        self.name = name or "equilibrium"

    def add_requirements(self, fgraph):
        for rw in self.graph_rewriters + self.node_rewriters:
            rw.add_requirements(fgraph)

    def apply(self, fgraph) -> int:
        settings = RewriteSettings.from_config()
        ratio = config.optdb__max_use_ratio if self.max_use_ratio is None else self.max_use_ratio
        guard = RunawayGuard(self, fgraph, ratio)

        total = 0
        with _listening(fgraph) as listener:
            while True:
                changed = 0
                for rw in self.graph_rewriters:
                    started = time.perf_counter()
                    n = rw.apply(fgraph) or 0
                    if settings.profile:
                        profile_of(fgraph).add_graph(str(rw), time.perf_counter() - started, n)
                    if n:
                        guard(rw, n)
                    changed += n
                changed += _walk(fgraph, self.tracker, "in_to_out", settings, listener, guard)
                total += changed
                if not changed:
                    return total
