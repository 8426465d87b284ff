"""PyTorch for the reductions (``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any``, ``Argmax``,
``Argmin``) and the softmax family (``Softmax``, ``LogSoftmax``), with perform's dtypes:
sums accumulate in ``acc_dtype`` and end in the output dtype (the wide unsigned integers in
int64, see ``tensorgraph.link.pytorch.elemwise``). An empty tuple of axes reduces nothing
(``torch.sum(x, dim=())`` would reduce every axis)."""

from __future__ import annotations

import numpy as np

from tensorgraph.link import array_reduction
from tensorgraph.link.pytorch import as_tensor, register, torch_dtype
from tensorgraph.link.pytorch.elemwise import LIBRARY, arithmetic_dtype, check_dtypes
from tensorgraph.scalar import basic as sb
from tensorgraph.scalar import math as sm
from tensorgraph.tensor.reduction import CAReduce, _ArgExtremum, _Extremum
from tensorgraph.tensor.special import LogSoftmax, Softmax

_REDUCTIONS = {sb.Add: "sum", sb.Mul: "prod", sm.Maximum: "amax", sm.Minimum: "amin",
               sm.AND: "all", sm.OR: "any"}


def axes_of(axis, ndim: int) -> tuple:
    """An op's ``axis`` prop (None, an int or a tuple) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(int(a) % ndim if ndim else int(a) for a in axis)


def _one_axis_at_a_time(fn, x, axes, **kwargs):
    """``fn`` of torch that takes one axis (prod, all, any), over several."""
    for a in sorted(axes, reverse=True):
        x = fn(x, dim=a, **kwargs)
    return x


@register(CAReduce)
def torch_careduce(op, node):
    import torch

    name = _REDUCTIONS.get(type(op.scalar_op))
    if name is None:
        raise NotImplementedError(f"no PyTorch reduction with the scalar op {op.scalar_op}")
    in_dtype = node.inputs[0].dtype
    out_dtype = node.outputs[0].dtype
    acc = op.acc_dtype if name in ("sum", "prod") else None
    check_dtypes([in_dtype, out_dtype], wraps=name not in ("amax", "amin"))
    if name in ("amax", "amin") and np.dtype(in_dtype).kind == "b":
        name = "any" if name == "amax" else "all"  # the extremum of booleans

    def careduce(x):
        x = as_tensor(x, arithmetic_dtype(in_dtype) if name not in ("all", "any") else "bool")
        shape = tuple(x.shape)
        axes = tuple(op.axis)
        if isinstance(op, _Extremum) and any(shape[a] == 0 for a in axes):
            op._check_empty_allowed(np.empty(shape, dtype=np.int8))
        if not axes:
            return as_tensor(x, out_dtype)
        if name == "sum":
            result = torch.sum(x, dim=axes,
                               dtype=torch_dtype(arithmetic_dtype(acc)) if acc else None)
        elif name == "prod":
            if acc:
                x = x.to(torch_dtype(arithmetic_dtype(acc)))
            result = _one_axis_at_a_time(torch.prod, x, axes)
        elif name in ("all", "any"):
            result = _one_axis_at_a_time(getattr(torch, name), x, axes)
        else:
            result = getattr(torch, name)(x, dim=axes)
        return as_tensor(result, out_dtype)

    return careduce


@register(_ArgExtremum)
def torch_arg_extremum(op, node):
    in_dtype = node.inputs[0].dtype
    check_dtypes([in_dtype], wraps=False)
    compute = "uint8" if np.dtype(in_dtype).kind == "b" else arithmetic_dtype(in_dtype)
    return array_reduction.arg_extremum(LIBRARY, op, compute)


def _shifted(op, x, dtype):
    import torch

    x = as_tensor(x, dtype)
    top = torch.amax(x, dim=axes_of(op.axis, x.ndim), keepdim=True)
    return x - torch.where(torch.isfinite(top), top, torch.zeros_like(top))


@register(Softmax)
def torch_softmax(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def softmax(x):
        if np.prod(np.shape(x)) == 0:
            return as_tensor(x, dtype)
        e = torch.exp(_shifted(op, x, dtype))
        return e / torch.sum(e, dim=axes_of(op.axis, e.ndim), keepdim=True)

    return softmax


@register(LogSoftmax)
def torch_log_softmax(op, node):
    import torch

    dtype = node.outputs[0].dtype

    def log_softmax(x):
        if np.prod(np.shape(x)) == 0:
            return as_tensor(x, dtype)
        shifted = _shifted(op, x, dtype)
        norm = torch.sum(torch.exp(shifted), dim=axes_of(op.axis, shifted.ndim), keepdim=True)
        return shifted - torch.log(norm)

    return log_softmax
