"""``einsum(subscripts, *operands)``: numpy's Einstein summation, built as a graph of the ops
that already exist (``diagonal``, ``sum``, ``transpose``, ``reshape``, ``matmul``), so every
back end runs it and its gradient follows from theirs.

The subscripts are numpy's: letters per operand, ``...`` for the leading (broadcast)
dimensions, ``->`` then the output's letters; without ``->`` the output is the ellipsis
dimensions then the letters that appear once, in alphabetical order. An explicit output
without ``...`` sums the ellipsis dimensions, as PyTensor's einsum does (numpy refuses). A
letter repeated in one operand takes that operand's diagonal (``'ii->i'``, ``'ii'`` is the trace).

How it is built: each operand first loses its repeated letters (diagonals) and the letters no
other operand and not the output has (sums). Then the operands are combined left to right,
two at a time: the letters both have and something later needs (another operand, the
output) are batch dimensions, the ones only they have are contracted, and one ``matmul`` of
the two, reshaped to (batch..., kept, contracted) and (batch..., contracted, kept), computes
the pair (a dot product or a BLAS call per batch element in C). No contraction order is
searched: write the operands in a good order for long chains.
"""

from __future__ import annotations

import string

import numpy as np

from tensorgraph.scalar.basic import upcast
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.diagonal import diagonal
from tensorgraph.tensor.dot import matmul
from tensorgraph.tensor.math import cast, mul
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import reshape, transpose

__all__ = ["einsum"]

_LETTERS = frozenset(string.ascii_letters)


def einsum(subscripts: str, *operands):
    """numpy's ``einsum(subscripts, *operands)`` (see the module docstring); the result has
    the operands' common dtype, as numpy's."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str such as 'ij,jk->ik', got "
                        f"{type(subscripts).__name__}")
    if not operands:
        raise ValueError("einsum: no operands given after the subscripts")
    tensors = [as_tensor_variable(x) for x in operands]
    dtype = upcast(*[x.dtype for x in tensors])
    tensors = [cast(x, dtype) for x in tensors]
    terms, output = _parse(subscripts, tensors)
    needed = [set(output)] + [set(labels) for labels in terms]
    pieces = []
    for k, (x, labels) in enumerate(zip(tensors, terms)):
        x, labels = _take_diagonals(x, labels)
        elsewhere = set(output).union(*[needed[j + 1] for j in range(len(terms)) if j != k])
        pieces.append(_sum_labels(x, labels, [lab for lab in labels if lab not in elsewhere]))
    x, labels = pieces[0]
    for k, (y, y_labels) in enumerate(pieces[1:], start=1):
        later = set(output).union(*[set(lab) for _, lab in pieces[k + 1:]])
        x, labels = _combine(x, labels, y, y_labels, later)
    x, labels = _sum_labels(x, labels, [lab for lab in labels if lab not in output])
    return transpose(x, [labels.index(lab) for lab in output]) if labels != output else x


# ----------------------------------------------------------------------------------------------
# Parsing: labels are letters, and ('...', j) for the j-th ellipsis dimension counted from the
# right (so operands with fewer ellipsis dimensions broadcast against the others, as numpy's)


def _parse(subscripts, tensors):
    text = subscripts.replace(" ", "")
    inputs, arrow, output_text = text.partition("->")
    specs = inputs.split(",")
    if len(specs) != len(tensors):
        raise ValueError(f"einsum: the subscripts {subscripts!r} name {len(specs)} operand"
                         f"{'s' if len(specs) != 1 else ''}, got {len(tensors)}")
    terms, widest = [], 0
    for k, (spec, x) in enumerate(zip(specs, tensors)):
        letters = spec.replace("...", "")
        _check_letters(letters, subscripts)
        if "..." in spec:
            width = x.ndim - len(letters)
            if width < 0 or spec.count("...") > 1:
                raise ValueError(f"einsum: operand {k} ({x.ndim}-d) does not fit its "
                                 f"subscripts {spec!r}")
            head, _, tail = spec.partition("...")
            labels = list(head) + [("...", j) for j in range(width - 1, -1, -1)] + list(tail)
            widest = max(widest, width)
        else:
            if len(spec) != x.ndim:
                raise ValueError(f"einsum: operand {k} is {x.ndim}-d but its subscripts "
                                 f"{spec!r} name {len(spec)} dimensions (use '...' for the "
                                 "others)")
            labels = list(spec)
        terms.append(labels)
    ellipsis = [("...", j) for j in range(widest - 1, -1, -1)]
    if arrow:
        letters = output_text.replace("...", "")
        _check_letters(letters, subscripts)
        if len(set(letters)) != len(letters):
            raise ValueError(f"einsum: the output {output_text!r} repeats a subscript")
        known = set().union(*[set(t) for t in terms])
        for letter in letters:
            if letter not in known:
                raise ValueError(f"einsum: the output subscript {letter!r} is in no operand")
        head, _, tail = output_text.partition("...")
        output = list(head) + (ellipsis if "..." in output_text else []) + list(tail)
    else:
        counts = {}
        for labels in terms:
            for lab in labels:
                if isinstance(lab, str):
                    counts[lab] = counts.get(lab, 0) + 1
        output = ellipsis + sorted(lab for lab, n in counts.items() if n == 1)
    return terms, output


def _check_letters(letters, subscripts):
    for ch in letters:
        if ch not in _LETTERS:
            raise ValueError(f"einsum: {ch!r} in {subscripts!r} is not a subscript (letters "
                             "a-z, A-Z, '...', ',' and '->' only)")


# ----------------------------------------------------------------------------------------------
# Building


def _take_diagonals(x, labels):
    """``x`` with each repeated label reduced to one axis (the diagonal, moved last)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        first = next(lab for k, lab in enumerate(labels) if lab in labels[k + 1:])
        i = labels.index(first)
        j = labels.index(first, i + 1)
        x = diagonal(x, 0, i, j)
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [first]
    return x, labels


def _sum_labels(x, labels, gone):
    """``x`` summed over the axes of the labels ``gone``, in its own dtype."""
    if not gone:
        return x, labels
    axes = tuple(labels.index(lab) for lab in gone)
    return tsum(x, axis=axes, dtype=x.dtype), [lab for lab in labels if lab not in gone]


def _combine(x, x_labels, y, y_labels, later):
    """The product of two operands summed over the labels only they have."""
    shared = [lab for lab in x_labels if lab in y_labels]
    # a contracted label of static size 1 on one side broadcasts: sum each side on its own
    ones = [lab for lab in shared if lab not in later and
            1 in (x.type.shape[x_labels.index(lab)], y.type.shape[y_labels.index(lab)])]
    if ones:
        x, x_labels = _sum_labels(x, x_labels, ones)
        y, y_labels = _sum_labels(y, y_labels, ones)
        shared = [lab for lab in shared if lab not in ones]
    batch = [lab for lab in shared if lab in later]
    summed = [lab for lab in shared if lab not in later]
    x_free = [lab for lab in x_labels if lab not in shared]
    y_free = [lab for lab in y_labels if lab not in shared]
    if not summed and not x_free and not y_free:  # elementwise
        out = mul(transpose(x, [x_labels.index(lab) for lab in batch]),
                  transpose(y, [y_labels.index(lab) for lab in batch]))
        return out, batch
    xt = transpose(x, [x_labels.index(lab) for lab in batch + x_free + summed])
    yt = transpose(y, [y_labels.index(lab) for lab in batch + summed + y_free])
    nb = len(batch)
    x_free_sizes = [_size(xt, nb + k) for k in range(len(x_free))]
    y_free_sizes = [_size(yt, nb + len(summed) + k) for k in range(len(y_free))]
    summed_size = _product([_size(xt, nb + len(x_free) + k) for k in range(len(summed))])
    x_batch = [_size(xt, k) for k in range(nb)]
    y_batch = [_size(yt, k) for k in range(nb)]
    x3 = reshape(xt, [*x_batch, _product(x_free_sizes), summed_size], ndim=nb + 2)
    y3 = reshape(yt, [*y_batch, summed_size, _product(y_free_sizes)], ndim=nb + 2)
    out = matmul(x3, y3)
    out_batch = [_size(out, k) for k in range(nb)]
    out = reshape(out, [*out_batch, *x_free_sizes, *y_free_sizes],
                  ndim=nb + len(x_free) + len(y_free))
    return out, batch + x_free + y_free


def _size(x, axis):
    """The length of ``x`` along ``axis``: a constant when its type knows it (so a broadcast
    dimension stays broadcastable through the reshapes), else ``x.shape[axis]``."""
    static = x.type.shape[axis]
    return constant(np.int64(static)) if static is not None else x.shape[axis]


def _product(sizes):
    result = constant(np.int64(1))
    for size in sizes:
        result = mul(result, size)
    return result
