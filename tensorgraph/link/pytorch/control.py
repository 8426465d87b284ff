"""PyTorch for ``Assert`` (its conditions checked when the compiled function runs) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``). ``ifelse`` is not in the table: the
program itself computes each side's own nodes inside ``torch.cond``
(``tensorgraph.link.pytorch.linker``)."""

from __future__ import annotations

from tensorgraph.gradient import IndexLoop
from tensorgraph.link.pytorch import register, runtime_check
from tensorgraph.link.traced import assert_implementation, index_loop, inner_function
from tensorgraph.raise_op import Assert

register(Assert)(assert_implementation(runtime_check))


@register(IndexLoop)
def torch_index_loop(op, node):
    """The rows of a jacobian (or hessian), vectorized by ``torch.vmap``."""
    import torch

    from tensorgraph.link.pytorch.elemwise import LIBRARY
    from tensorgraph.link.pytorch.linker import TRACE, GraphFunction, static_ints

    def vmap(row, n_whole):
        return torch.vmap(row, in_dims=(0,) + (None,) * n_whole)

    inner = inner_function(op.fgraph, GraphFunction, "PyTorch")
    return index_loop(op, node, LIBRARY, inner, TRACE, static_ints, vmap)
