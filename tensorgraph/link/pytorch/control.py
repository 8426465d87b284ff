"""PyTorch for ``Assert`` (its conditions checked when the compiled function runs) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``). ``ifelse`` is not in the table: the
program itself computes each side's own nodes inside ``torch.cond``
(``tensorgraph.link.pytorch.linker``)."""

from __future__ import annotations

import numpy as np

from tensorgraph.gradient import IndexLoop
from tensorgraph.link.pytorch import as_tensor, register, runtime_check
from tensorgraph.link.traced import assert_implementation, inner_function
from tensorgraph.raise_op import Assert

register(Assert)(assert_implementation(runtime_check))


@register(IndexLoop)
def torch_index_loop(op, node):
    """The rows of a jacobian (or hessian): the inner graph vectorized over the index
    (``torch.vmap``), its run-time checks collected from every row."""
    import torch

    from tensorgraph.link.pytorch.linker import (
        GraphFunction,
        checks_scope,
        current_checks,
        static_ints,
    )

    inner = inner_function(op.fgraph, GraphFunction, "PyTorch")
    dtypes = [o.dtype for o in node.outputs]

    def loop(n, *outer):
        n = static_ints(n, "the length of a jacobian loop")[0]
        if n == 0:
            return _one_or_tuple(tuple(as_tensor(np.zeros((0,) + np.shape(outer[k]), dtype=d))
                                       for k, d in zip(op.shape_of, dtypes)))
        outer = [as_tensor(v) for v in outer]

        def row(i, *values):
            with checks_scope(node) as scope:
                results = inner(i, *values)
            return tuple(as_tensor(r, d) for r, d in zip(results, dtypes)) + (scope.result(),)

        *rows, codes = torch.vmap(row, in_dims=(0,) + (None,) * len(outer))(
            torch.arange(n, dtype=torch.int64), *outer)
        current_checks().merge(torch.amax(codes))
        return _one_or_tuple(tuple(rows))

    return loop


def _one_or_tuple(values):
    return values[0] if len(values) == 1 else values
