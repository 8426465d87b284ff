"""``optdb``: the rewrite database every Mode queries, and its phases.

Phases, in order (position in parentheses):

* ``merge1`` (0): merge equal constants and common subexpressions;
* ``canonicalize`` (1): simplify to a canonical form (constant folding, useless ops, sorted
  add/mul chains, shape rewrites) until nothing changes;
* ``stabilize`` (1.5): numerically safer forms (log1p, softplus, logsumexp, ...);
* ``specialize`` (2): cheaper forms (sqr for pow(x, 2), neg for mul by -1, ...);
* ``blas`` (4): dot products to ``Gemv``/``Gemm``/``Dot22`` with scalings folded in;
* ``fusion`` (5): chains of elementwise ops fused into one node (registered by the tensor rewrites);
* ``merge2`` (6): merge again what the phases made equal;
* ``inplace`` (7): ops write into buffers nobody else reads (one walk, checked by a destroy
  handler).

The first four positions are PyTensor's, so a query's ``position_cutoff`` written for PyTensor
(1.51: through stabilize, 2.01: through specialize) stops at the same phase here.

Tags the modes of the whole-graph back ends use: 'blas' (the phase, and the fused Gemv pair)
and 'c_only' (rewrites making ops that exist in C only) are left out by the JAX and NUMBA
modes, 'fusion' and 'inplace' by JAX too (``tensorgraph.compile.mode.BACKEND_MODES``).

The tensor and scan rewrites (``tensorgraph.tensor.rewriting``, ``tensorgraph.scan.rewriting``,
``tensorgraph.scan.hoist_matmul``) register themselves into these phases with the helpers below
when imported; the package imports them before the first query (``presets.load_rewrites``,
through ``tensorgraph.hooks``), so this layer never names them.
"""

from __future__ import annotations

from tensorgraph.rewriting.db import (EquilibriumDB, SequenceDB, WalkerDB, register_absent,
                                      register_alias, register_built_in)
from tensorgraph.rewriting.merge import MergeRewriter

__all__ = ["optdb", "register_canonicalize", "register_stabilize", "register_specialize",
           "register_blas", "register_inplace", "register_in"]

optdb = SequenceDB("optdb")
optdb.register("merge1", MergeRewriter("merge1"), "fast_run", "fast_compile", "merge",
               position=0)
optdb.register("canonicalize", EquilibriumDB(), position=1)
optdb.register("stabilize", EquilibriumDB(), position=1.5)
optdb.register("specialize", EquilibriumDB(), position=2)
optdb.register("blas", EquilibriumDB(), position=4)
optdb.register("merge2", MergeRewriter("merge2"), "fast_run", "merge", position=6)
optdb.register("inplace", WalkerDB(), position=7)

# PyTensor's names of rewrites that have another name here (for including/excluding them)
for _alias, _name in {"local_add_canonizer": "local_add_canonical",
                      "local_mul_canonizer": "local_mul_canonical",
                      "inplace_elemwise_optimizer": "elemwise_inplace",
                      "InplaceElemwiseOptimizer": "elemwise_inplace",
                      "cond_make_inplace": "ifelse_as_view",
                      # PyTensor runs its constant folding also as one topological walk under
                      # this name; here the one constant_folding rewrite does both jobs
                      "topo_constant_folding": "constant_folding",
                      "BlasOpt": "blas"}.items():
    register_alias(_alias, _name)

# PyTensor rewrites and tags with no counterpart here: excluding them is a no-op
for _name, _why in {
        "local_cut_useless_reduce": "PyTensor removes reductions over no axis",
        "local_useless_fill": "PyTensor removes fill(x, y) in canonicalize where y has the "
                              "result's type; here local_second_to_alloc (specialize) "
                              "does it where y's shape is proven the result's",
        "bool_idx_to_nonzero": "PyTensor turns boolean-mask indexing into nonzero() integer "
                               "indexing; here the indexing ops take the mask as it is",
        "c_blas": "PyTensor's tag of the rewrites that swap its Python BLAS ops for C ones; "
                  "tensorgraph's Gemm and Gemv carry their C themselves",
        "scipy_blas": "PyTensor's tag of the rewrites that run Ger through scipy's BLAS",
        "local_useless_slice": "PyTensor drops slice entries that select everything from an "
                               "index (x[0:n, i] -> x[:, i]); here only a Subtensor that keeps "
                               "all of x is removed (local_useless_subtensor)",
        "extract_diag_lift_pass": "PyTensor moves diagonal and index reads below allocs, "
                                  "elementwise ops and writes; no rewrite here does that",
        "fuse_indexed_into_elemwise": "PyTensor fuses indexing into the elementwise loops of "
                                      "its Numba back end; here indexing stays its own node",
}.items():
    register_absent(_name, _why)

# PyTensor rewrites whose result the constructors here build directly
for _name, _how in {
        "local_join_1": "concatenate/join of one tensor returns that tensor, no Join node",
}.items():
    register_built_in(_name, _how)

# tags given to every rewrite of a phase by its register_* helper, as in Theano / PyTensor
_PHASE_TAGS = {
    "canonicalize": ("fast_run", "fast_compile"),
    "stabilize": ("fast_run",),  # the cheap, important ones add "fast_compile"
    "specialize": ("fast_run",),
    "blas": ("fast_run",),
    "inplace": ("fast_run", "inplace"),
}


def register_in(phase: str, *tags: str, name: str | None = None, position=None, default_tags=True):
    """Decorator (or direct call with a rewriter) registering a rewrite into ``phase``.

    The name defaults to the rewriter's name; ``default_tags=False`` leaves out the phase's
    usual tags (e.g. for 'unsafe' rewrites that no safe preset should pick).
    """
    db = optdb[phase]
    extra = _PHASE_TAGS.get(phase, ()) if default_tags else ()

    def register(rewriter):
        db.register(name or str(rewriter), rewriter, *extra, *tags, position=position)
        return rewriter

    return register


def register_canonicalize(rewriter=None, *tags, **kwargs):
    return _helper("canonicalize", rewriter, tags, kwargs)


def register_stabilize(rewriter=None, *tags, **kwargs):
    return _helper("stabilize", rewriter, tags, kwargs)


def register_specialize(rewriter=None, *tags, **kwargs):
    return _helper("specialize", rewriter, tags, kwargs)


def register_blas(rewriter=None, *tags, **kwargs):
    return _helper("blas", rewriter, tags, kwargs)


def register_inplace(rewriter=None, *tags, **kwargs):
    return _helper("inplace", rewriter, tags, kwargs)


def _helper(phase, rewriter, tags, kwargs):
    if isinstance(rewriter, str):  # used as @register_x("tag", ...)
        return register_in(phase, rewriter, *tags, **kwargs)
    if rewriter is None:
        return register_in(phase, *tags, **kwargs)
    return register_in(phase, *tags, **kwargs)(rewriter)
