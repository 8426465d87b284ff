"""JAX for ``Assert`` (its conditions checked when the compiled function runs) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``). ``ifelse`` is not in the table: the
program itself computes each side's own nodes inside ``lax.cond``
(``tensorgraph.link.jax.linker``)."""

from __future__ import annotations

from tensorgraph.gradient import IndexLoop
from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.traced import assert_implementation, index_loop, inner_function
from tensorgraph.raise_op import Assert

register(Assert)(assert_implementation(runtime_check))


@register(IndexLoop)
def jax_index_loop(op, node):
    """The rows of a jacobian (or hessian), vectorized by ``jax.vmap``."""
    import jax

    from tensorgraph.link.jax.elemwise import LIBRARY
    from tensorgraph.link.jax.linker import TRACE, GraphFunction
    from tensorgraph.link.jax.shape import static_ints

    def vmap(row, n_whole):
        return jax.vmap(row, in_axes=(0,) + (None,) * n_whole)

    inner = inner_function(op.fgraph, GraphFunction, "JAX")
    return index_loop(op, node, LIBRARY, inner, TRACE, static_ints, vmap)
