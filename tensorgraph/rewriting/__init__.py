"""Graph rewriting: rewriters, the rewrite database with its presets, and the rewrite history.

See ``basic`` (node/graph rewriters, walkers, equilibrium), ``pattern`` (algebraic rules as
tuples), ``db`` (database and tag queries), ``optdb`` (the phases every Mode uses), ``presets``
(named presets and the Mode hook), ``history`` (the recorded steps) and ``utils``
(``rewrite_graph``: rewriting an expression without compiling it).
"""

from tensorgraph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    RewriteLimitError,
    RewriteProfile,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    graph_rewriter,
    in2out,
    node_rewriter,
    out2in,
)
from tensorgraph.rewriting.db import (
    EquilibriumDB,
    RewriteDatabase,
    RewriteDatabaseQuery,
    SequenceDB,
    WalkerDB,
)
from tensorgraph.rewriting.history import RewriteHistory, RewriteStep, structurally_equal
from tensorgraph.rewriting.merge import MergeRewriter
from tensorgraph.rewriting.optdb import (
    optdb,
    register_blas,
    register_canonicalize,
    register_inplace,
    register_specialize,
    register_stabilize,
)
from tensorgraph.rewriting.pattern import PatternNodeRewriter
from tensorgraph.rewriting.presets import PRESETS, query_for_mode, rewrite_for_mode
from tensorgraph.rewriting.utils import is_same_graph, rewrite_graph

__all__ = [
    "EquilibriumGraphRewriter", "GraphRewriter", "NodeRewriter", "RewriteLimitError",
    "RewriteProfile", "SequentialGraphRewriter", "WalkingGraphRewriter", "graph_rewriter",
    "in2out", "node_rewriter", "out2in", "EquilibriumDB", "RewriteDatabase",
    "RewriteDatabaseQuery", "SequenceDB", "WalkerDB", "RewriteHistory", "RewriteStep",
    "structurally_equal", "MergeRewriter", "optdb", "register_blas", "register_canonicalize",
    "register_inplace", "register_specialize", "register_stabilize", "PatternNodeRewriter",
    "PRESETS", "query_for_mode", "rewrite_for_mode", "rewrite_graph", "is_same_graph",
]
