"""The rewrite database: every rewrite registered once, with a name, tags and a position.

A database is a tree. The root (``tensorgraph.rewriting.optdb``) is a ``SequenceDB`` of
*phases* (merge, canonicalize, stabilize, specialize, blas, fusion, inplace, ...) run in order of
``position``; a phase is itself a database: an ``EquilibriumDB`` (apply its rewrites until
nothing changes), a ``WalkerDB`` (one in-to-out pass) or a ``SequenceDB``.

Tags belong to rewrites. A rewrite's effective tags are its own tags, its name, and the names of
the phases containing it, so ``excluding("stabilize")`` drops the whole stabilize phase and
``excluding("local_stable_log")`` drops one rewrite. A query selects the rewrites that have at least
one ``include`` tag, all the ``require`` tags and no ``exclude`` tag; phases left empty are
skipped. ``position_cutoff`` leaves out the phases at or after a position.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

from tensorgraph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    Rewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
)

__all__ = ["RewriteDatabaseQuery", "RewriteDatabase", "SequenceDB", "EquilibriumDB", "WalkerDB",
           "register_alias", "register_absent", "register_built_in"]


#: other names of rewrites and tags (PyTensor's spelling -> ours), see ``register_alias``
ALIASES: dict[str, str] = {}


def register_alias(alias: str, name: str) -> None:
    """Let queries (and ``Mode.including/excluding``) say ``alias`` for the rewrite or tag
    ``name``: PyTensor code names ``local_add_canonizer`` where the rewrite here is
    ``local_add_canonical``."""
    ALIASES[alias] = name


#: PyTensor rewrite names and tags with no counterpart here -> why (see ``register_absent``)
ABSENT: dict[str, str] = {}


def register_absent(name: str, reason: str) -> None:
    """Record that PyTensor's rewrite or tag ``name`` has no counterpart here, and why.

    Ported code often excludes a PyTensor rewrite (``mode.excluding("local_cut_useless_reduce")``)
    to keep a node its test looks at; with no such rewrite here, excluding it changes nothing,
    so ``excluding`` accepts the name. Including or requiring it raises a ValueError that says
    why (a misspelt name is still an error: only registered names pass)."""
    ABSENT[name] = reason


#: PyTensor rewrite names whose result the graph constructors here always build -> how
BUILT_IN: dict[str, str] = {}


def register_built_in(name: str, how: str) -> None:
    """Record that PyTensor's rewrite ``name`` needs no rewrite here: the constructors build its
    result directly (``concatenate([x])`` is ``x``: no Join to remove, PyTensor's
    ``local_join_1``). Including or requiring it passes (the effect is always there);
    excluding it passes too but cannot undo it (``how`` says why)."""
    BUILT_IN[name] = how


def _tag_set(value, what: str) -> frozenset:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        raise TypeError(f"RewriteDatabaseQuery({what}=...) takes a collection of tags, "
                        f"not the string {value!r}")
    # PyTensor code writes include=[None] for "no tag": None selects nothing, so drop it
    return frozenset(ALIASES.get(t, t) for t in value if t is not None)


class RewriteDatabaseQuery:
    """Which rewrites to take from a database: see the module docstring.

    ``position_cutoff`` keeps only the phases (entries of a ``SequenceDB``) at a position
    below it: with ``optdb``'s positions, 1.51 stops after ``stabilize``, 2.01 after
    ``specialize``, as in PyTensor. ``subquery`` maps a sub-database's name to the query used
    inside it; ``extra_rewrites`` are ``(graph rewriter, position)`` pairs run among the
    phases of the database queried (``register`` adds them). The attributes may be changed
    after creation (PyTensor code sets ``query.position_cutoff``); ``key()`` is the
    hashable snapshot caches use.
    """

    def __init__(self, include=None, require=None, exclude=None, subquery=None,
                 position_cutoff=math.inf, extra_rewrites=None):
        self.include = _tag_set(include, "include")
        self.require = _tag_set(require, "require")
        self.exclude = _tag_set(exclude, "exclude")
        self.subquery = dict(subquery or {})
        self.position_cutoff = position_cutoff
        self.extra_rewrites = list(extra_rewrites or ())

    def _with(self, **changes) -> RewriteDatabaseQuery:
        args = dict(include=self.include, require=self.require, exclude=self.exclude,
                    subquery=self.subquery, position_cutoff=self.position_cutoff,
                    extra_rewrites=self.extra_rewrites)
        args.update(changes)
        return RewriteDatabaseQuery(**args)

    def including(self, *tags) -> RewriteDatabaseQuery:
        """Add ``tags`` to include (and take them out of exclude: asking for a tag wins)."""
        tags = _tag_set(tags, "include")
        return self._with(include=self.include | tags, exclude=self.exclude - tags)

    def excluding(self, *tags) -> RewriteDatabaseQuery:
        return self._with(exclude=self.exclude | _tag_set(tags, "exclude"))

    def requiring(self, *tags) -> RewriteDatabaseQuery:
        return self._with(require=self.require | _tag_set(tags, "require"))

    def register(self, *rewrites) -> RewriteDatabaseQuery:
        """A query that also runs these ``(graph rewriter, position)`` pairs."""
        for pair in rewrites:
            if not (isinstance(pair, tuple) and len(pair) == 2
                    and isinstance(pair[0], GraphRewriter)
                    and isinstance(pair[1], (int, float))):
                raise TypeError("RewriteDatabaseQuery.register takes (graph rewriter, "
                                f"position) pairs, got {pair!r}")
        return self._with(extra_rewrites=self.extra_rewrites + list(rewrites))

    def selects(self, tags) -> bool:
        return (not self.include.isdisjoint(tags) and self.require <= tags
                and self.exclude.isdisjoint(tags))

    def key(self) -> tuple:
        """A hashable snapshot of the query as it is now."""
        return (self.include, self.require, self.exclude, float(self.position_cutoff),
                tuple(sorted((name, q.key()) for name, q in self.subquery.items())),
                tuple((id(rw), float(pos)) for rw, pos in self.extra_rewrites))

    def __eq__(self, other):
        return isinstance(other, RewriteDatabaseQuery) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __str__(self):
        parts = [f"{k}={sorted(getattr(self, k))}" for k in ("include", "require", "exclude")
                 if getattr(self, k)]
        if self.position_cutoff != math.inf:
            parts.append(f"position_cutoff={self.position_cutoff}")
        if self.subquery:
            parts.append(f"subquery={{{', '.join(sorted(self.subquery))}}}")
        if self.extra_rewrites:
            parts.append(f"extra_rewrites={[str(rw) for rw, _ in self.extra_rewrites]}")
        return f"RewriteDatabaseQuery({', '.join(parts)})"

    __repr__ = __str__

    @classmethod
    def from_tags(cls, *tags: str, **kwargs) -> RewriteDatabaseQuery:
        """The query PyTensor's ``db.query('+a', '-b', '&c')`` strings describe: ``+tag`` (or
        a bare tag) includes, ``-tag`` excludes, ``&tag`` requires; keyword arguments are
        those of the constructor."""
        include, exclude, require = set(kwargs.pop("include", None) or ()), set(), set()
        exclude |= set(kwargs.pop("exclude", None) or ())
        require |= set(kwargs.pop("require", None) or ())
        for tag in tags:
            if not isinstance(tag, str) or not tag.lstrip("+-&"):
                raise TypeError(f"query: tags are non-empty strings ('+tag', '-tag', '&tag'), "
                                f"got {tag!r}")
            kind, name = (tag[0], tag[1:]) if tag[0] in "+-&" else ("+", tag)
            {"+": include, "-": exclude, "&": require}[kind].add(name)
        return cls(include, require, exclude, **kwargs)


@dataclass
class _Entry:
    name: str
    rewriter: object  # a Rewriter or a RewriteDatabase
    tags: frozenset
    position: float
    order: int


class RewriteDatabase:
    """A named collection of rewrites (or sub-databases); see the module docstring."""

    def __init__(self, name: str | None = None):
        self.name = name
        self._entries: dict[str, _Entry] = {}
        self._registered_objects: dict[int, str] = {}

    def register(self, name: str, rewriter, *tags: str, position: float | None = None):
        """Add ``rewriter`` (a node/graph rewriter or a database) under ``name`` with ``tags``.

        Names are unique within the whole tree and an object is registered once. Returns the
        rewriter, so this works as a decorator helper.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"register: the name must be a non-empty string, got {name!r}")
        if not isinstance(rewriter, (Rewriter, RewriteDatabase)):
            raise TypeError(f"register({name!r}, ...): expected a rewriter or a database, got "
                            f"{type(rewriter).__name__}")
        root = self._root()
        if root._find(name) is not None:
            raise ValueError(f"a rewrite named {name!r} is already registered; each rewrite is "
                             "registered once")
        if id(rewriter) in root._all_object_ids():
            raise ValueError(f"{rewriter!r} is already registered (as "
                             f"{root._name_of(rewriter)!r}); register it once")
        for t in tags:
            if not isinstance(t, str):
                raise TypeError(f"register({name!r}, ...): tags must be strings, got {t!r}")
        if isinstance(rewriter, RewriteDatabase):
            rewriter.name = name
            rewriter._parent = self
        elif rewriter.name is None or rewriter.name == type(rewriter).__name__:
            rewriter.name = name
        if position is None:
            position = max((e.position for e in self._entries.values()), default=0) + 1
        self._entries[name] = _Entry(name, rewriter, frozenset(tags), float(position),
                                     len(self._entries))
        root._version += 1
        return rewriter

    _parent: RewriteDatabase | None = None
    _version = 0

    @property
    def version(self) -> int:
        """Changes with every registration anywhere in the tree (for caching queries)."""
        return self._root()._version

    def _root(self) -> RewriteDatabase:
        db = self
        while db._parent is not None:
            db = db._parent
        return db

    def _walk_entries(self):
        for e in self._entries.values():
            yield e
            if isinstance(e.rewriter, RewriteDatabase):
                yield from e.rewriter._walk_entries()

    def _find(self, name):
        for e in self._walk_entries():
            if e.name == name:
                return e
        return None

    def _all_object_ids(self):
        return {id(e.rewriter) for e in self._walk_entries()}

    def _name_of(self, rewriter):
        for e in self._walk_entries():
            if e.rewriter is rewriter:
                return e.name
        return None

    def __getitem__(self, name: str):
        entry = self._find(name)
        if entry is None:
            raise KeyError(f"no rewrite named {name!r} in {self.name or 'the database'}")
        return entry.rewriter

    def __contains__(self, name: str) -> bool:
        return self._find(name) is not None

    def known_tags(self) -> frozenset:
        """Every name or tag a query can use here: the rewrites' and databases' names and tags."""
        return frozenset(t for e in self._walk_entries() for t in (e.name, *e.tags))

    def check_tags(self, tags, excluding: bool = False) -> None:
        """A ValueError naming the close matches for the first of ``tags`` no rewrite or
        database here has (a misspelt tag would otherwise select or drop nothing, silently).
        ``excluding``: the tags are to be excluded, so PyTensor's names of rewrites that do
        not exist here (``register_absent``) pass."""
        known = self.known_tags()
        for tag in tags:
            if ALIASES.get(tag, tag) in known:
                continue
            if tag in BUILT_IN:
                continue
            if tag in ABSENT:
                if excluding:
                    continue
                raise ValueError(f"{tag!r} is a PyTensor rewrite or tag with no counterpart in "
                                 f"tensorgraph ({ABSENT[tag]}); it can be excluded (a no-op) "
                                 "but not included or required")
            close = difflib.get_close_matches(tag, sorted(known), n=3)
            hint = (f"did you mean {' or '.join(map(repr, close))}?" if close else
                    "optdb.describe() lists the rewrites, their tags and phases")
            raise ValueError(f"unknown rewrite name or tag {tag!r}; {hint}")

    def tags_of(self, name: str) -> frozenset:
        """The effective tags of a registered rewrite (own tags, name and enclosing phases)."""
        path = self._path_to(name)
        if path is None:
            raise KeyError(name)
        tags = set()
        for e in path:
            tags |= e.tags
            tags.add(e.name)
        return frozenset(tags)

    def phase_of(self, name: str) -> str | None:
        """The top-level entry (the phase, in ``optdb``) holding the rewrite ``name``; None
        when no rewrite has that name."""
        path = self._path_to(name)
        return path[0].name if path else None

    def _path_to(self, name):
        for e in self._sorted():
            if e.name == name:
                return [e]
            if isinstance(e.rewriter, RewriteDatabase):
                sub = e.rewriter._path_to(name)
                if sub is not None:
                    return [e] + sub
        return None

    def _sorted(self) -> list[_Entry]:
        return sorted(self._entries.values(), key=lambda e: (e.position, e.order))

    def describe(self, indent: int = 0) -> str:
        """The tree: position, name, tags, and where each rewrite is defined."""
        lines = []
        pad = "  " * indent
        for e in self._sorted():
            tags = ", ".join(sorted(e.tags))
            if isinstance(e.rewriter, RewriteDatabase):
                lines.append(f"{pad}{e.position:g} {e.name} ({type(e.rewriter).__name__}) "
                             f"[{tags}]")
                lines.append(e.rewriter.describe(indent + 1))
            else:
                lines.append(f"{pad}{e.position:g} {e.name} [{tags}]  {e.rewriter.location}")
        return "\n".join(line for line in lines if line)

    def selected(self, query: RewriteDatabaseQuery, context=frozenset(), top=False) -> list:
        """The rewriters (sub-databases turned into graph rewriters) ``query`` picks, in order.
        ``top``: this is the database queried (a SequenceDB's ``extra_rewrites`` join it)."""
        entries = [(e.position, e.order, e) for e in self._sorted()]
        if top and isinstance(self, SequenceDB):
            entries += [(float(pos), len(self._entries) + k, rw)
                        for k, (rw, pos) in enumerate(query.extra_rewrites)]
            entries.sort(key=lambda item: item[:2])
        picked = []
        for position, _, e in entries:
            if isinstance(self, SequenceDB) and position >= query.position_cutoff:
                continue
            if not isinstance(e, _Entry):      # an extra rewrite
                picked.append(e)
                continue
            tags = context | e.tags | {e.name}
            if isinstance(e.rewriter, RewriteDatabase):
                sub = e.rewriter._query(query.subquery.get(e.name, query), tags)
                if sub is not None:
                    picked.append(sub)
            elif query.selects(tags):
                picked.append(e.rewriter)
        return picked

    def query(self, *tags, **kwargs) -> GraphRewriter | None:
        """A graph rewriter running what the query selects, or ``None`` if it selects nothing.

        The query is a ``RewriteDatabaseQuery``, or PyTensor's short forms: tag strings
        (``db.query('+fast_run', '-inplace', '&unsafe')``) and the constructor's keyword
        arguments (``db.query(include=['fast_run'], position_cutoff=2.01)``).
        """
        if kwargs.get("position_cutoff", 0) is None:    # PyTensor's "no cutoff"
            kwargs["position_cutoff"] = math.inf
        if len(tags) == 1 and isinstance(tags[0], RewriteDatabaseQuery):
            query = tags[0]
            if kwargs:
                query = query._with(**kwargs)
        else:
            query = RewriteDatabaseQuery.from_tags(*tags, **kwargs)
        return self._query(query, frozenset(), top=True)

    def _query(self, query, context=frozenset(), top=False):
        raise NotImplementedError


class SequenceDB(RewriteDatabase):
    """Phases run one after the other in order of position."""

    def _query(self, query, context=frozenset(), top=False):
        picked = self.selected(query, context, top)
        for rw in picked:
            if not isinstance(rw, GraphRewriter):
                raise TypeError(f"{self.name}: {rw} is a node rewriter; a SequenceDB holds graph "
                                "rewriters and databases (put node rewriters in an "
                                "EquilibriumDB or a WalkerDB)")
        if not picked:
            return None
        return SequentialGraphRewriter(picked, name=self.name)


class EquilibriumDB(RewriteDatabase):
    """Rewrites applied together until none of them changes the graph."""

    def __init__(self, name=None, max_use_ratio=None):
        super().__init__(name)
        self.max_use_ratio = max_use_ratio

    def _query(self, query, context=frozenset(), top=False):
        picked = self.selected(query, context, top)
        if not picked:
            return None
        return EquilibriumGraphRewriter(picked, self.max_use_ratio, name=self.name)


class WalkerDB(RewriteDatabase):
    """Node rewriters applied in one walk over the graph (e.g. the inplace pass)."""

    def __init__(self, name=None, order="in_to_out"):
        super().__init__(name)
        self.order = order

    def _query(self, query, context=frozenset(), top=False):
        picked = self.selected(query, context, top)
        if not picked:
            return None
        for rw in picked:
            if not isinstance(rw, NodeRewriter):
                raise TypeError(f"{self.name}: {rw} is not a node rewriter")
        return WalkingGraphRewriter(picked, self.order, name=self.name)
