"""``Gemv(y2, a2, X.T, f(Gemv(y1, a1, X, w, b1), ...), b2)`` -> one ``Gemv(pair=f)`` node.

The gradient step of a linear model reads its matrix twice: forward ``z = X @ w`` and
backward ``X.T @ f(z)``. After elementwise fusion the graph holds two ``Gemv`` nodes on the same
``X`` with elementwise nodes between them; this rewrite (after the ``fusion`` phase, before
``inplace``) folds the elementwise nodes that depend on ``z`` into one scalar ``Composite`` and
gives the three values to ``Gemv(pair=f)`` (see ``tensorgraph.tensor.gemv_pair``), which
computes them in one pass over ``X``. The elementwise nodes stay for their other readers (they
now read the pair's ``z``); merging and dead-code removal drop what nobody reads.

It applies only where every elementwise node on the way takes vectors (``X``'s rows, or
broadcast scalars) and nothing else on the way depends on ``z`` (a reduction of ``z`` would
need all of it before the first row of ``d``). Tagged 'fusion' (excluding fusion turns it
off), 'blas' and 'c_only' (the pair exists in C only: the JAX and NUMBA modes leave it out).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Constant, ancestors
from tensorgraph.rewriting.basic import node_rewriter
from tensorgraph.rewriting.db import WalkerDB
from tensorgraph.rewriting.optdb import optdb
from tensorgraph.scalar.basic import ScalarType
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.blas import Gemv
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.rewriting.fusion import inlinable_constant, runtime_constant, scalar_graph
from tensorgraph.tensor.rewriting.utils import op_is


def _transposed_matrix(var):
    """``X`` when ``var`` is ``X.T`` (a DimShuffle{1,0}), else ``None``."""
    node = var.owner
    if node is not None and op_is(node, DimShuffle) and tuple(node.op.new_order) == (1, 0):
        return node.inputs[0]
    return None


def _elementwise(var) -> bool:
    node = var.owner
    return (node is not None and op_is(node, Elemwise) and not node.op.inplace_pattern
            and len(node.outputs) == 1 and var.ndim == 1)


@node_rewriter([Gemv])
def local_gemv_pair(fgraph, node):
    """The module docstring's rewrite, from the second ``Gemv``."""
    if node.op.pair is not None:
        return None
    y2, alpha2, At, d, beta2 = node.inputs
    X = _transposed_matrix(At)
    if X is None or not _elementwise(d):
        return None
    # the forward product: a Gemv over X itself among d's elementwise ancestors
    forward, depends = None, {}

    def reaches(var):  # does var depend on the forward product through elementwise nodes?
        nonlocal forward
        if var not in depends:
            owner = var.owner
            if (owner is not None and op_is(owner, Gemv) and owner.op.pair is None
                    and owner.inputs[2] is X):
                if forward is None or forward is owner:
                    forward = owner
                    depends[var] = True
                    return True
                depends[var] = False  # a second forward product: leave it outside
                return False
            depends[var] = _elementwise(var) and any(reaches(i) for i in owner.inputs)
        return depends[var]

    if not reaches(d) or forward is None:
        return None
    z = forward.outputs[0]
    n_static = X.type.shape[0]

    extra, extra_scalars, scalar_of = [], [], {z: ScalarType(z.dtype)()}

    def expand(var):
        if var in scalar_of:
            return scalar_of[var]
        if depends.get(var):
            owner = var.owner
            out = scalar_graph(owner, [expand(i) for i in owner.inputs])
            scalar_of[var] = out
            return out
        const = inlinable_constant(var)
        if const is not None:
            scalar_of[var] = const
            return const
        value = var
        if isinstance(var, Constant) and np.size(var.data) == 1:
            value = runtime_constant(var, 1)  # a number passed at run time (see fusion.py)
        if value.ndim != 1 or (value.type.shape[0] not in (1, None, n_static)):
            raise _NotApplicable
        if z in ancestors([value]):  # reads z other than elementwise: a reduction, an index...
            raise _NotApplicable
        scalar_of[var] = ScalarType(var.dtype)()
        extra.append(value)
        extra_scalars.append(scalar_of[var])
        return scalar_of[var]

    try:
        scalar_out = expand(d)
    except _NotApplicable:
        return None
    if scalar_out.type.dtype != d.dtype:
        return None
    composite = Composite([scalar_of[z]] + extra_scalars, [scalar_out])
    y1, alpha1, _, w, beta1 = forward.inputs
    new_z, new_d, new_g = Gemv(pair=composite)(y1, alpha1, X, w, beta1, y2, alpha2, beta2,
                                               *extra)
    return {node.outputs[0]: new_g, d: new_d, z: new_z}


class _NotApplicable(Exception):
    """Raised while building the scalar graph when the pattern does not hold."""


gemv_pair_db = WalkerDB(order="out_to_in")
optdb.register("gemv_pair_fusion", gemv_pair_db, position=5.5)
gemv_pair_db.register("local_gemv_pair", local_gemv_pair, "fast_run", "fusion", "blas", "c_only")
