"""The JAX back end (mode ``'JAX'``): the whole rewritten graph as one ``jax.jit``.

How each op computes in JAX lives here, in one table from op class to implementation (the
convention of ``tensorgraph.link.c.ops``): an implementation is a function of the op and the
node returning a function of the node's input values, built from the op's props and the
node's types. It returns the node's output (a tuple for several outputs)::

    from tensorgraph.link.jax import register

    @register(Double)
    def jax_double(op, node):
        def double(x):
            return x * 2
        return double

Lookup follows the class hierarchy (an implementation for a base class serves its
subclasses). Raising ``NotImplementedError(reason)`` from the implementation declines a node
(say, a dtype it cannot handle); the reason then appears in the one error listing every op
the graph cannot run in JAX. Scalar ops (inside ``Elemwise`` and fused ``Composite`` loops)
have a table of their own, ``register_scalar(ScalarOpClass)``: the function gets the op and the
input and output dtypes and returns a function of jax arrays.

While tracing, values computed from shapes and constants only are numpy values (the node's
``perform`` computes them), so sizes stay known to JAX: ``alloc(0, x.shape[0] + 1)`` has a
static shape. A check that can only be made on run-time values (an index in range, an
``Assert``) calls ``runtime_check(bad, error, message)``; the compiled function returns which
check failed and the call raises that error, naming the node.

This package imports jax only when a graph is compiled in mode JAX; the core never does.
"""

from __future__ import annotations

from tensorgraph.graph.registry import backend_tables

__all__ = ["register", "register_scalar", "implementation", "scalar_implementation",
           "runtime_check"]

#: op class -> its implementation; scalar op class -> its scalar function
TABLE, SCALAR_TABLE = backend_tables("JAX", __name__)
register, implementation = TABLE.register, TABLE.lookup
register_scalar, scalar_implementation = SCALAR_TABLE.register, SCALAR_TABLE.lookup


def runtime_check(bad, error: type, message: str) -> None:
    """Fail the call with ``error(message)`` where ``bad`` (a boolean, traced or not) is true
    (see the module docstring). Only valid while a node is being traced."""
    from tensorgraph.link.jax.linker import current_checks

    current_checks().add(bad, error, message)
