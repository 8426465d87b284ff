"""PyTorch for ``Assert`` (its conditions checked when the compiled function runs) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``, by ``torch.vmap``). ``ifelse`` is not
in the table: the program itself computes each side's own nodes inside ``torch.cond``
(``tensorgraph.link.pytorch.linker``)."""

from __future__ import annotations

from tensorgraph.link.pytorch import register, runtime_check
from tensorgraph.link.traced import register_control


def _parts():
    from tensorgraph.link.pytorch.elemwise import LIBRARY
    from tensorgraph.link.pytorch.linker import TRACE, GraphFunction, static_ints

    return LIBRARY, TRACE, GraphFunction, static_ints


def _vmap(row, n_whole):
    import torch

    return torch.vmap(row, in_dims=(0,) + (None,) * n_whole)


register_control(register, runtime_check, "PyTorch", _parts, _vmap)
