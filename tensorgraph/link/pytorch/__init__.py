"""The PyTorch back end (mode ``'PYTORCH'``): the whole rewritten graph as one FX graph that
Inductor (``torch.compile``'s compiler) compiles.

How each op computes in PyTorch lives here, in one table from op class to implementation (the
convention of ``tensorgraph.link.c.ops``): an implementation is a function of the op and the
node returning a function of the node's input values (``torch.Tensor``, or numpy values for
what is known while tracing, see below). It returns the node's output (a tuple for several
outputs)::

    from tensorgraph.link.pytorch import register

    @register(Double)
    def torch_double(op, node):
        return lambda x: x * 2

Lookup follows the class hierarchy (an implementation for a base class serves its
subclasses when they compute the same way). Raising ``NotImplementedError(reason)`` from the
implementation declines a node (a dtype PyTorch has no arithmetic for, say); the reason then
appears in the one error listing every op the graph cannot run in PyTorch. Scalar ops (inside
``Elemwise`` and fused ``Composite`` loops) have a table of their own,
``register_scalar(ScalarOpClass)``: the function gets the op and the input and output dtypes
and returns a function of tensors.

The graph is traced once per input signature into one FX graph of aten operations
(``make_fx`` on fake tensors: nothing is computed while tracing), which Inductor compiles
(generated C++ on the CPU; ``tensorgraph.link.pytorch.linker`` says why not through
TorchDynamo). While tracing, values computed from shapes and
constants only are numpy values (the node's ``perform`` computes them), so sizes stay known:
``alloc(0, x.shape[0] + 1)`` has a static shape. ``as_tensor(value, dtype)`` turns either kind
into a tensor. A check that can only be made on run-time values (an index in range, an
``Assert``) calls ``runtime_check(bad, error, message)``; the compiled function returns which
check failed and the call raises that error, naming the node.

This package imports torch only when a graph is compiled in mode PYTORCH; the core never does.
"""

from __future__ import annotations

from tensorgraph.graph.registry import backend_tables

__all__ = ["register", "register_scalar", "implementation", "scalar_implementation",
           "runtime_check", "traced", "as_tensor", "torch_dtype"]

#: op class -> its implementation; scalar op class -> its scalar function
TABLE, SCALAR_TABLE = backend_tables("PyTorch", __name__)
register, implementation = TABLE.register, TABLE.lookup
register_scalar, scalar_implementation = SCALAR_TABLE.register, SCALAR_TABLE.lookup


def traced(value) -> bool:
    """Whether ``value`` is a tensor of the trace (its value is known only when running)."""
    import torch

    return isinstance(value, torch.Tensor)


def torch_dtype(dtype):
    """The torch dtype of a numpy dtype (name), or NotImplementedError naming it."""
    from tensorgraph.link.pytorch.elemwise import torch_dtype as convert

    return convert(dtype)


def as_tensor(value, dtype=None):
    """``value`` (a tensor, or a numpy value known while tracing) as a tensor of ``dtype`` (a
    numpy dtype name; None keeps the value's)."""
    import numpy as np
    import torch

    if not isinstance(value, torch.Tensor):
        array = np.asarray(value)
        if dtype is not None:
            array = array.astype(dtype)
        return torch.as_tensor(np.ascontiguousarray(array) if array.ndim else array.copy())
    if dtype is not None:
        target = torch_dtype(dtype)
        if value.dtype != target:
            return value.to(target)
    return value


def runtime_check(bad, error: type, message: str) -> None:
    """Fail the call with ``error(message)`` where ``bad`` (a boolean, traced or known) is
    true (see the module docstring). Only valid while a node is being traced."""
    from tensorgraph.link.pytorch.linker import current_checks

    current_checks().add(bad, error, message)
