"""``einsum(subscripts, *operands)``: numpy's Einstein summation, as PyTensor's: one ``Einsum``
node (an ``OpFromGraph`` whose inner graph is built of the ops that already exist:
``diagonal``, ``sum``, ``transpose``, ``reshape``, ``matmul``), inlined when a function is
compiled, so every back end runs plain ops and the gradient follows from theirs.

The subscripts are numpy's: letters per operand, ``...`` for the leading (broadcast)
dimensions, ``->`` then the output's letters; without ``->`` the output is the ellipsis
dimensions then the letters that appear once, in alphabetical order. An explicit output
without ``...`` sums the ellipsis dimensions, as PyTensor's einsum does (numpy refuses). A
letter repeated in one operand takes that operand's diagonal (``'ii->i'``, ``'ii'`` is the trace).

How it is built: each operand first loses its repeated letters (diagonals) and the letters no
other operand and not the output has (sums). Then the operands are combined two at a time in
the order of a contraction path (numpy's convention: each step names the positions of the
operands it takes out of the list, and the result goes to its end; the first named is the left
factor): the letters both have and
something later needs (another operand, the output) are batch dimensions, the ones only they
have are contracted, and one ``matmul`` of the two, reshaped to (batch..., kept, contracted)
and (batch..., contracted, kept), computes the pair (a dot product or a BLAS call per batch
element in C).

The path: when every operand's static shape is known and there are more than two operands,
``np.einsum_path(..., optimize="optimal")`` (``"greedy"`` beyond 8 operands) picks the order
that costs the fewest operations, and the node says ``optimized=True``; otherwise the
operands are combined left to right, as written (``((0, 1), (n-2, 0), ..., (1, 0))``: the
result so far with the next operand), and ``optimized`` is False (True for one or two
operands: there is nothing to choose). ``out.owner.op.path`` is the path taken.
"""

from __future__ import annotations

import string
import warnings

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.op_from_graph import OpFromGraph
from tensorgraph.scalar.basic import upcast
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.diagonal import diagonal
from tensorgraph.tensor.dot import matmul
from tensorgraph.tensor.math import cast, mul
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import reshape, transpose

__all__ = ["Einsum", "einsum"]

_LETTERS = frozenset(string.ascii_letters)

#: up to this many operands the path search is numpy's exhaustive "optimal"; beyond, "greedy"
_OPTIMAL_UP_TO = 8


class Einsum(OpFromGraph):
    """The node of one ``einsum`` call (PyTensor's ``Einsum``): an ``OpFromGraph`` with
    ``inline=True`` whose inner graph computes the contraction in the order of ``path``.

    Props: ``subscripts`` (as the user wrote them), ``path`` (the contraction steps, numpy's
    convention) and ``optimized`` (whether the path was searched with all static shapes
    known; see the module docstring). Compiling inlines the node (the rewrite
    ``inline_op_from_graph``), so compiled graphs hold only plain ops.
    """

    __props__ = ("subscripts", "path", "optimized")

    def __init__(self, inputs, outputs, *, subscripts: str, path, optimized: bool, **kwargs):
        self.subscripts = subscripts
        self.path = tuple(tuple(step) for step in path)
        self.optimized = bool(optimized)
        kwargs.setdefault("inline", True)
        super().__init__(inputs, outputs, strict=True, **kwargs)

    def __str__(self):
        return (f"Einsum{{subscripts={self.subscripts!r}, path={self.path}, "
                f"optimized={self.optimized}}}")


def einsum(subscripts: str, *operands, optimize=None):
    """numpy's ``einsum(subscripts, *operands)`` (see the module docstring) as one ``Einsum``
    node; the result has the operands' common dtype, as numpy's. ``optimize`` is PyTensor's
    parameter, which it refuses too: the path is searched whenever the static shapes allow."""
    if optimize is not None:
        raise NotImplementedError("einsum(optimize=...) is not supported, as in PyTensor: the "
                                  "contraction path is searched whenever every operand's "
                                  "static shape is known (see op.path, op.optimized)")
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str such as 'ij,jk->ik', got "
                        f"{type(subscripts).__name__}")
    if not operands:
        raise ValueError("einsum: no operands given after the subscripts")
    tensors = [as_tensor_variable(x) for x in operands]
    terms, output = _parse(subscripts, tensors)
    _check_sizes(subscripts, terms, tensors)
    path, optimized = _contraction_path(terms, output, tensors)
    # the inner graph is built on fresh inputs (a constant operand, or one operand given
    # twice, stays one input per position) and without test values (they have none)
    inner_inputs = [x.type() for x in tensors]
    with config.change_flags(compute_test_value="off"):
        result = _build(inner_inputs, terms, output, path)
    op = Einsum(inner_inputs, [result], subscripts=subscripts, path=path, optimized=optimized)
    return op(*tensors)


def _build(tensors, terms, output, path):
    """The einsum of ``tensors`` (labelled by ``terms``) contracted in the order of ``path``."""
    dtype = upcast(*[x.dtype for x in tensors])
    tensors = [cast(x, dtype) for x in tensors]
    needed = [set(output)] + [set(labels) for labels in terms]
    pieces = []
    for k, (x, labels) in enumerate(zip(tensors, terms)):
        x, labels = _take_diagonals(x, labels)
        elsewhere = set(output).union(*[needed[j + 1] for j in range(len(terms)) if j != k])
        pieces.append(_sum_labels(x, labels, [lab for lab in labels if lab not in elsewhere]))
    # every label of a piece is now in the output or in another piece, and stays so: a pair's
    # result keeps only the labels something after it needs
    for step in path:
        chosen = [pieces[k] for k in step]
        pieces = [piece for k, piece in enumerate(pieces) if k not in step]
        later = set(output).union(*[set(lab) for _, lab in pieces])
        x, labels = chosen[0]
        for y, y_labels in chosen[1:]:
            x, labels = _combine(x, labels, y, y_labels, later)
        pieces.append((x, labels))
    [(x, labels)] = pieces
    x, labels = _sum_labels(x, labels, [lab for lab in labels if lab not in output])
    return transpose(x, [labels.index(lab) for lab in output]) if labels != output else x


def _contraction_path(terms, output, tensors):
    """(path, optimized): see the module docstring."""
    n = len(tensors)
    if n == 1:
        return ((0,),), True
    if n == 2:
        return ((0, 1),), True
    left_to_right = ((0, 1),) + tuple((k, 0) for k in range(n - 2, 0, -1))
    shapes = [x.type.shape for x in tensors]
    if any(size is None for shape in shapes for size in shape):
        return left_to_right, False
    # numpy's subscripts for the parsed labels: an ellipsis dimension gets a letter of its own
    letters = {}
    spare = iter(sorted(_LETTERS - {lab for t in terms for lab in t if isinstance(lab, str)}))
    for labels in terms + [output]:
        for lab in labels:
            if lab not in letters:
                letters[lab] = lab if isinstance(lab, str) else next(spare, None)
    if None in letters.values():
        return left_to_right, False
    _warn_mixed_broadcasting(terms, shapes)
    spec = (",".join("".join(letters[lab] for lab in t) for t in terms) + "->"
            + "".join(letters[lab] for lab in output))
    stand_ins = [np.broadcast_to(np.empty((), dtype=np.float64), shape) for shape in shapes]
    try:
        found = np.einsum_path(spec, *stand_ins,
                               optimize="optimal" if n <= _OPTIMAL_UP_TO else "greedy")[0]
    except ValueError:   # a case numpy refuses and this einsum takes: the default order
        return left_to_right, False
    path = tuple(tuple(int(k) for k in step) for step in found[1:])
    if any(len(step) != 2 for step in path):   # one step of all: nothing to order
        return left_to_right, True
    return path, True


def _warn_mixed_broadcasting(terms, shapes):
    """PyTensor's warning: a letter of static size 1 in one operand and more in another makes
    the path search count it at the larger size everywhere (opt_einsum issue 220)."""
    sizes = {}
    for labels, shape in zip(terms, shapes):
        for lab, size in zip(labels, shape):
            if isinstance(lab, str):     # ellipsis dimensions broadcast by design
                sizes.setdefault(lab, set()).add(size)
    mixed = sorted(lab for lab, seen in sizes.items() if 1 in seen and len(seen) > 1)
    if mixed:
        plural = len(mixed) > 1
        warnings.warn(f"einsum: the same subscript{'s' if plural else ''} "
                      f"{', '.join(map(repr, mixed))} {'name' if plural else 'names'} a "
                      "dimension of size 1 (broadcastable) in one operand and a larger one in "
                      "another. This can result in a suboptimal contraction path: give the "
                      "size-1 dimension a letter of its own.", UserWarning, stacklevel=4)


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


def _check_sizes(subscripts, terms, tensors):
    """The static sizes of one label agree (or are 1: broadcasting), as numpy requires."""
    seen = {}
    for k, (labels, x) in enumerate(zip(terms, tensors)):
        for lab, size in zip(labels, x.type.shape):
            if size is None or size == 1:
                continue
            if lab in seen and seen[lab][1] != size:
                what = (f"the subscript {lab!r}" if isinstance(lab, str)
                        else "an ellipsis dimension")
                raise ValueError(f"einsum: {what} of {subscripts!r} has size {seen[lab][1]} in "
                                 f"operand {seen[lab][0]} and {size} in operand {k} (sizes of "
                                 "one subscript must be equal, or 1)")
            seen.setdefault(lab, (k, size))


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
