"""Named rewrite presets and how a ``Mode`` rewrites a graph with them.

Presets (``Mode(optimizer=...)`` / ``config.optimizer``), with Theano's meanings:

============== ==========================================================================
``None``       no rewrites
``merge``      only merging of equal constants and common subexpressions
``fast_compile`` / ``o1``  cheap rewrites: merge, canonicalize, the cheap stabilize ones
``o2``         o1 + stabilize + elemwise fusion (still no inplace)
``o3``         everything safe except inplace and the rewrites tagged 'slow_compile'
``fast_run`` / ``o4``  everything safe
``unsafe``     o3 + rewrites that assume valid inputs and drop safety checks (shape asserts)
``stabilize``  only the numerical-stability rewrites
============== ==========================================================================

``slow_compile`` marks rewrites whose cost grows with the size of the graph they look at rather
than with the node they rewrite, and that no result depends on: the shape-inference rewrites
(``local_shape_i_inferred``, ``local_shape_inferred``), which infer sizes through the whole
subgraph below a ``Shape_i`` and may build an expression per dimension. Canonicalization and
the stabilize rewrites are local and needed for stable results (fast_compile keeps them);
fusion is what o2 adds, so it is not 'slow_compile' either.

``Mode(optimizer=...)`` may also be a ``RewriteDatabaseQuery`` (queried on ``optdb`` as it is)
or a graph rewriter (run as it is, e.g. ``EquilibriumDB.query('+tag')``), as in PyTensor.

A mode adds its own tags on top (``Mode.including/excluding/requiring``); the default mode also
takes ``config.optimizer_including/excluding/requiring``. ``including`` a tag the preset
excludes brings it back (``Mode('py', 'fast_run').including('unsafe')`` does what it says).

Every rewritten graph gets a ``RewriteHistory`` (``fgraph.rewrite_history``) and, with
``config.profile_optimizer``, a ``RewriteProfile`` (``fgraph.rewrite_profile``).
"""

from __future__ import annotations

import time

from tensorgraph import hooks
from tensorgraph.configdefaults import config
from tensorgraph.rewriting.basic import GraphRewriter
from tensorgraph.rewriting.db import RewriteDatabaseQuery as Q
from tensorgraph.rewriting.history import RewriteHistory
from tensorgraph.rewriting.optdb import optdb

__all__ = ["PRESETS", "query_for_mode", "rewriter_for_query", "rewrite_for_mode", "check_tags",
           "load_rewrites"]

_SAFE = {"unsafe"}
_FAST_RUN = Q({"fast_run"}, exclude=_SAFE)
_O1 = Q({"fast_compile"}, exclude=_SAFE | {"slow_compile"})
_O3 = Q({"fast_run"}, exclude=_SAFE | {"inplace", "slow_compile"})

PRESETS: dict[str, Q] = {
    "None": Q(),
    "merge": Q({"merge"}),
    "fast_compile": _O1,
    "o1": _O1,
    "o2": Q({"fast_compile", "stabilize", "fusion"}, exclude=_SAFE | {"inplace", "slow_compile"}),
    "o3": _O3,
    "fast_run": _FAST_RUN,
    "o4": _FAST_RUN,
    "unsafe": Q({"fast_run", "unsafe"}, exclude={"inplace", "slow_compile"}),
    "stabilize": Q({"stabilize"}, exclude=_SAFE),
}

def load_rewrites() -> None:
    """Have the layers above (tensor, scan) register their rewrites into ``optdb``, before a
    query reads it. They are imported on the first query, not with this layer (``import
    tensorgraph.tensor`` stays fast), and this layer names none of them: the package fills
    ``tensorgraph.hooks.load_rewrites`` with what imports them."""
    hooks.load_rewrites()


def check_tags(tags, excluding: bool = False) -> None:
    """A ValueError, naming the close matches, for a tag or name no registered rewrite has
    (``Mode.including/excluding/requiring``, ``%%tg_compile --including``); ``excluding``
    lets PyTensor's names of rewrites absent here pass (``db.register_absent``)."""
    load_rewrites()
    optdb.check_tags(tags, excluding=excluding)


def query_for_mode(mode) -> Q:
    """The database query of a Mode: its preset (or its own ``RewriteDatabaseQuery``) plus
    its including/excluding/requiring tags."""
    if isinstance(mode.optimizer, Q):
        query = mode.optimizer
    else:
        preset = mode.optimizer if mode.optimizer is not None else "None"
        if preset not in PRESETS:
            raise ValueError(f"unknown rewrite preset {preset!r}; known presets: "
                             f"{', '.join(sorted(PRESETS))}")
        query = PRESETS[preset]
    query = query.including(*getattr(mode, "rewrite_including", ()))
    query = query.excluding(*getattr(mode, "rewrite_excluding", ()))
    return query.requiring(*getattr(mode, "rewrite_requiring", ()))


_cache: dict = {}


def rewriter_for_query(query: Q, db=None):
    """The graph rewriter ``db`` gives for ``query`` (``None`` if it selects nothing); for
    ``optdb`` (the default) cached."""
    load_rewrites()
    if db is not None and db is not optdb:
        return db.query(query)
    key = (query.key(), optdb.version)  # a snapshot: queries may change after creation
    if key not in _cache:
        _cache[key] = optdb.query(query)
    return _cache[key]


def rewrite_for_mode(fgraph, mode, excluding: tuple = ()) -> None:
    """Rewrite ``fgraph`` in place as ``mode`` says (leaving out the rewrites tagged or named
    in ``excluding``), recording the steps in its history.

    While it runs, ``fgraph.rewrite_mode`` is ``mode``: rewrites of ops holding an inner graph
    (scan's ``scan_pushout_rewritten``) rewrite that graph as the function's own mode would,
    so what those rewrites make inside is visible outside."""
    history = getattr(fgraph, "rewrite_history", None)
    if history is None:
        history = RewriteHistory()
        fgraph.attach_feature(history)
    if isinstance(mode.optimizer, GraphRewriter):      # Mode(optimizer=<a rewriter>)
        rewriter = mode.optimizer
    else:
        query = query_for_mode(mode)
        if excluding:
            query = query.excluding(*excluding)
        rewriter = rewriter_for_query(query, getattr(mode, "db", None))
    started = time.perf_counter()
    if rewriter is not None:
        fgraph.rewrite_mode = mode
        try:
            # nodes made by rewrites get test values as config.compute_test_value_opt says
            with config.change_flags(compute_test_value=config.compute_test_value_opt):
                rewriter.rewrite(fgraph)
        finally:
            del fgraph.rewrite_mode
    history.total_seconds = time.perf_counter() - started
