"""JAX for ``Assert`` (its conditions checked when the compiled function runs) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``, by ``jax.vmap``). ``ifelse`` is not in
the table: the program itself computes each side's own nodes inside ``lax.cond``
(``tensorgraph.link.jax.linker``)."""

from __future__ import annotations

from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.traced import register_control


def _parts():
    from tensorgraph.link.jax.elemwise import LIBRARY
    from tensorgraph.link.jax.linker import TRACE, GraphFunction
    from tensorgraph.link.jax.shape import static_ints

    return LIBRARY, TRACE, GraphFunction, static_ints


def _vmap(row, n_whole):
    import jax

    return jax.vmap(row, in_axes=(0,) + (None,) * n_whole)


register_control(register, runtime_check, "JAX", _parts, _vmap)
