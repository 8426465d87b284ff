"""The Numba back end (mode ``'NUMBA'``): the whole rewritten graph as Python source compiled
by one ``numba.njit``.

How each op computes in Numba lives here, in one table from op class to implementation (the
convention of ``tensorgraph.link.c.ops``). An implementation writes the Python (Numba's
subset) that computes a node, given the names of its input values and of its outputs: every
value is a numpy array (0-d for scalars) or, for random draws, a ``numpy.random.Generator``::

    from tensorgraph.link.numba import register

    @register(Double)
    def numba_double(op, node, code):
        (x,), (out,) = code.inputs, code.outputs
        code.line(f"{out} = {x} * 2")

``code`` (``tensorgraph.link.numba.codegen.NodeCode``) also gives fresh local names
(``code.name("i")``), indented blocks (``with code.block("for i in range(n):")``), the
statement that fails the node with an error (``code.fail("IndexError", "...")``) and
module-level helpers (``code.helper(name, source)``). Lookup follows the class hierarchy.
Raising ``NotImplementedError(reason)`` declines a node; the reason appears in the one error
listing every op the graph cannot run in Numba. Scalar ops (inside ``Elemwise`` loops and
fused ``Composite`` graphs) have their own table, ``register_scalar(ScalarOpClass)``: the
function returns a Python expression of one element (see ``tensorgraph.link.numba.elemwise``).

This package imports numba only when a graph is compiled in mode NUMBA; the core never does.
"""

from __future__ import annotations

from tensorgraph.graph.registry import backend_tables

__all__ = ["register", "register_scalar", "implementation", "scalar_implementation"]

#: op class -> its implementation; scalar op class -> its scalar function
TABLE, SCALAR_TABLE = backend_tables("Numba", __name__)


def register(op_class: type):
    """Decorator: ``@register(OpClass)`` makes ``fn(op, node, code)`` the Numba implementation
    of ``OpClass`` (see the module docstring)."""
    return TABLE.register(op_class)


def register_scalar(op_class: type):
    """Decorator: ``@register_scalar(ScalarOpClass)`` makes ``fn(op, in_dtypes, out_dtypes,
    args, code) -> expression`` the Numba implementation of a scalar op (the scalar family of
    ``tensorgraph.graph.registry``: the op, the dtypes, then Numba's context)."""
    return SCALAR_TABLE.register(op_class)


def implementation(op):
    """The registered implementation of ``op``'s class, or None."""
    return TABLE.lookup(op)


def scalar_implementation(op):
    return SCALAR_TABLE.lookup(op)
