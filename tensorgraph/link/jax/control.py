"""JAX for ``Assert`` (its conditions checked when the compiled function runs) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``). ``ifelse`` is not in the table: the
program itself computes each side's own nodes inside ``lax.cond``
(``tensorgraph.link.jax.linker``)."""

from __future__ import annotations

import numpy as np

from tensorgraph.gradient import IndexLoop
from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.traced import assert_implementation, inner_function
from tensorgraph.raise_op import Assert

register(Assert)(assert_implementation(runtime_check))


@register(IndexLoop)
def jax_index_loop(op, node):
    """The rows of a jacobian (or hessian): the inner graph vectorized over the index
    (``jax.vmap``), its run-time checks collected from every row."""
    import jax
    import jax.numpy as jnp

    from tensorgraph.link.jax.linker import GraphFunction, checks_scope, current_checks
    from tensorgraph.link.jax.shape import static_ints

    inner = inner_function(op.fgraph, GraphFunction, "JAX")
    dtypes = [o.dtype for o in node.outputs]

    def loop(n, *outer):
        n = static_ints(n, "the length of a jacobian loop")[0]
        if n == 0:
            return _one_or_tuple(tuple(jnp.zeros((0,) + np.shape(outer[k]), dtype=d)
                                       for k, d in zip(op.shape_of, dtypes)))

        def row(i):
            with checks_scope(node) as scope:
                values = inner(i, *outer)
            return tuple(values), scope.result()

        rows, codes = jax.vmap(row)(jnp.arange(n, dtype="int64"))
        current_checks().merge(jnp.max(codes))
        return _one_or_tuple(tuple(jnp.asarray(r).astype(d) for r, d in zip(rows, dtypes)))

    return loop


def _one_or_tuple(values):
    return values[0] if len(values) == 1 else values
