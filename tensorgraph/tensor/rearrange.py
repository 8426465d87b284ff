"""Rearranging tensors as numpy does, composed of dimshuffles, indexing, joins and broadcasts
(so each has their C, shapes and gradients): ``swapaxes``, ``moveaxis``, ``matrix_transpose``,
``roll``, ``tile``, ``atleast_1d``/``2d``/``3d``/``atleast_Nd``, ``stacklists``,
``horizontal_stack``/``vertical_stack``, ``mgrid``/``ogrid``, ``inverse_permutation``,
``permute_row_elements`` and ``choose``.
"""

from __future__ import annotations

import numbers

from tensorgraph.tensor import math
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.creation import alloc, arange, zeros
from tensorgraph.tensor.elemwise import DimShuffle
from tensorgraph.tensor.extra_ops import (
    broadcast_arrays,
    broadcast_shape,
    broadcast_to,
    linspace,
)
from tensorgraph.tensor.join import concatenate, stack
from tensorgraph.tensor.shape import (
    as_int_scalar,
    as_shape_scalars,
    constant_int,
    flatten,
    normalize_axis,
    reshape,
    shape_i,
)
from tensorgraph.tensor.sort import argsort
from tensorgraph.tensor.subtensor import getitem, take_along_axis

__all__ = [
    "swapaxes", "moveaxis", "matrix_transpose", "roll", "tile", "atleast_Nd", "atleast_1d",
    "atleast_2d", "atleast_3d", "stacklists", "horizontal_stack", "vertical_stack", "mgrid",
    "ogrid", "inverse_permutation", "permute_row_elements", "choose",
]


def swapaxes(y, axis1: int, axis2: int):
    """``y`` with dimensions ``axis1`` and ``axis2`` exchanged (a view)."""
    y = as_tensor_variable(y)
    a1 = normalize_axis(axis1, y.ndim, "swapaxes axis1")
    a2 = normalize_axis(axis2, y.ndim, "swapaxes axis2")
    order = list(range(y.ndim))
    order[a1], order[a2] = order[a2], order[a1]
    return y if a1 == a2 else y.transpose(*order)


def moveaxis(a, source, destination):
    """``np.moveaxis``: the dimensions ``source`` (an int or a sequence) moved to the
    positions ``destination``, the others kept in order."""
    a = as_tensor_variable(a)
    source = [source] if isinstance(source, numbers.Integral) else list(source)
    destination = ([destination] if isinstance(destination, numbers.Integral)
                   else list(destination))
    if len(source) != len(destination):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same "
                         f"number of elements, got {len(source)} source axes and "
                         f"{len(destination)} destinations")
    source = [normalize_axis(s, a.ndim, "moveaxis source") for s in source]
    destination = [normalize_axis(d, a.ndim, "moveaxis destination") for d in destination]
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        raise ValueError("moveaxis: repeated axes")
    order = [d for d in range(a.ndim) if d not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return a if order == list(range(a.ndim)) else a.transpose(*order)


def matrix_transpose(x):
    """The transpose of the last two dimensions (``np.matrix_transpose``, ``x.mT``)."""
    x = as_tensor_variable(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: Input array must be at least 2-dimensional, {x} "
                         f"has {x.ndim} dimensions")
    return swapaxes(x, -1, -2)


def roll(x, shift, axis=None):
    """``np.roll``: the entries of ``x`` shifted by ``shift`` along ``axis`` (of the flattened
    ``x`` for None), those pushed past the end coming back at the start. ``shift`` and
    ``axis`` may be sequences of the same length (one roll per axis)."""
    tm = math
    x = as_tensor_variable(x)
    if axis is None:
        flat = roll(flatten(x, 1), shift, 0)
        return reshape(flat, [shape_i(x, d) for d in range(x.ndim)])
    if isinstance(axis, (list, tuple)):
        shifts = list(shift) if isinstance(shift, (list, tuple)) else [shift] * len(axis)
        if len(shifts) != len(axis):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(axis)} axes")
        for s, a in zip(shifts, axis):
            x = roll(x, s, a)
        return x
    axis = normalize_axis(axis, x.ndim, "roll")
    n = shape_i(x, axis)
    # the first ``cut`` entries move to the end
    cut = tm.mod(tm.sub(n, tm.mod(as_int_scalar(shift, "roll shift"), tm.maximum(n, 1))),
                 tm.maximum(n, 1))
    before = (slice(None),) * axis
    return concatenate([getitem(x, before + (slice(cut, None),)),
                        getitem(x, before + (slice(None, cut),))], axis=axis)


class TileRepsError(TypeError, ValueError):
    """``reps`` of ``tile`` that are not integers, or not a vector: a TypeError (what is wrong
    is their type) that is also the ValueError numpy and PyTensor raise."""


def tile(A, reps):
    """``np.tile``: ``A`` repeated ``reps[d]`` times along each dimension (``reps`` an int, a
    sequence of ints or integer scalars, or an integer vector of known length); ``A`` gets
    leading size-1 dimensions when ``reps`` is longer, ``reps`` leading 1s when shorter."""
    A = as_tensor_variable(A)
    try:
        reps = as_shape_scalars(reps, "tile reps")
    except TypeError as exc:
        raise TileRepsError(str(exc)) from None
    ndim = max(A.ndim, len(reps))
    if A.ndim < ndim:
        A = DimShuffle(A.ndim, ("x",) * (ndim - A.ndim) + tuple(range(A.ndim)))(A)
    one = constant(1, dtype="int64")
    reps = [one] * (ndim - len(reps)) + list(reps)
    if all(constant_int(r) == 1 for r in reps):
        return A
    # A[None, :, None, :, ...] broadcast to (r0, d0, r1, d1, ...), then merged pairwise
    pattern = []
    for d in range(ndim):
        pattern += ["x", d]
    expanded = DimShuffle(ndim, tuple(pattern))(A)
    sizes = []
    for d in range(ndim):
        sizes += [reps[d], shape_i(A, d)]
    tiled = alloc(expanded, *sizes)
    return reshape(tiled, [math.mul(reps[d], shape_i(A, d)) for d in range(ndim)])


def atleast_Nd(x, n: int = 1, left: bool = True):
    """``x`` with size-1 dimensions added on the left (or the right) until it has ``n``."""
    x = as_tensor_variable(x)
    if x.ndim >= n:
        return x
    pad = ("x",) * (n - x.ndim)
    order = pad + tuple(range(x.ndim)) if left else tuple(range(x.ndim)) + pad
    return DimShuffle(x.ndim, order)(x)


def _atleast(n, arys, left=True):
    results = [atleast_Nd(a, n, left) for a in arys]
    return results[0] if len(results) == 1 else results


def atleast_1d(*arys):
    """Each argument with at least one dimension (one tensor, or a list for several)."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """Each argument with at least two dimensions, size-1 ones added on the left."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """Each argument with at least three dimensions, size-1 ones added on the left."""
    return _atleast(3, arys)


def stacklists(arg):
    """A tensor from nested lists of tensors (or numbers): ``stacklists([[a, b], [c, d]])`` is
    the (2, 2, ...) tensor of the four."""
    if isinstance(arg, (list, tuple)):
        return stack([stacklists(item) for item in arg])
    return as_tensor_variable(arg)


def _check_matrices(what, args):
    for k, a in enumerate(args):
        a = as_tensor_variable(a)
        if a.ndim != 2:
            raise ValueError(f"{what}: All arguments must have two dimensions (matrices); "
                             f"argument {k} ({a}) has {a.ndim}")


def horizontal_stack(*args):
    """The matrices ``args`` side by side (joined along their columns)."""
    if len(args) < 2:
        raise ValueError(f"horizontal_stack takes at least two tensors, got {len(args)}")
    _check_matrices("horizontal_stack", args)
    return concatenate(args, axis=1)


def vertical_stack(*args):
    """The matrices ``args`` one above the other (joined along their rows)."""
    if len(args) < 2:
        raise ValueError(f"vertical_stack takes at least two tensors, got {len(args)}")
    _check_matrices("vertical_stack", args)
    return concatenate(args, axis=0)


class _Grid:
    """``mgrid[0:5, 0:3]`` / ``ogrid[...]``: numpy's index grids (a list of tensors, one per
    slice; one slice alone, ``mgrid[0:5]``, gives its tensor, as numpy; a complex step ``5j``
    means that many points, ends included)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            return self[(index,)][0]
        ranges = []
        for k, sl in enumerate(index):
            if not isinstance(sl, slice):
                raise TypeError(f"{'ogrid' if self.sparse else 'mgrid'}: entry {k} must be a "
                                f"slice, got {sl!r}")
            start = 0 if sl.start is None else sl.start
            step = 1 if sl.step is None else sl.step
            if isinstance(step, complex):
                ranges.append(linspace(start, sl.stop, int(abs(step))))
            else:
                ranges.append(arange(start, sl.stop, step))
        ndim = len(ranges)
        out = []
        for k, r in enumerate(ranges):
            order = ["x"] * ndim
            order[k] = 0
            out.append(DimShuffle(1, tuple(order))(r))
        if self.sparse:
            return out
        full = [zeros([shape_i(r, 0) for r in ranges], dtype=o.dtype) for o in out]
        return [math.add(o, z) for o, z in zip(out, full)]


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def inverse_permutation(perm):
    """The inverse of the permutation ``perm`` (along its last axis): ``out[perm[i]] = i``."""
    perm = as_tensor_variable(perm)
    if perm.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64"):
        raise TypeError(f"inverse_permutation: perm must be integers, got {perm} "
                        f"({perm.type})")
    return math.cast(argsort(perm, axis=-1, kind="stable"), perm.dtype)


def permute_row_elements(x, y, inverse: bool = False):
    """The entries of each row (last axis) of ``x`` permuted by the matching row of ``y``:
    ``out[..., j] = x[..., y[..., j]]``; ``inverse`` applies the inverse permutations. The
    leading dimensions of ``x`` and ``y`` broadcast."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if y.ndim < 1:
        raise TypeError(f"permute_row_elements: y must be at least a vector, got {y}")
    if inverse:
        y = inverse_permutation(y)
    ndim = max(x.ndim, y.ndim)
    x, y = (DimShuffle(v.ndim, ("x",) * (ndim - v.ndim) + tuple(range(v.ndim)))(v)
            if v.ndim < ndim else v for v in (x, y))
    lead = broadcast_shape(*[_lead(v) for v in (x, y)], arrays_are_shapes=True)
    x = broadcast_to(x, list(lead) + [shape_i(x, ndim - 1)])
    y = broadcast_to(y, list(lead) + [shape_i(y, ndim - 1)])
    return take_along_axis(x, y, -1)


def _lead(v):
    return [shape_i(v, d) for d in range(v.ndim - 1)]


def choose(a, choices, mode: str = "raise"):
    """``np.choose``: ``out[i...] = choices[a[i...]][i...]`` with ``a``, and each choice,
    broadcast together. ``choices`` is a list of tensors or one tensor whose first axis runs
    over the choices. ``mode``: 'raise' (out-of-range indices fail when run), 'wrap' (modulo
    the number of choices) or 'clip'."""
    tm = math
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    a = as_tensor_variable(a)
    if isinstance(choices, (list, tuple)):
        # the choices broadcast against each other, as numpy's: (1, 6, 1) with (1, 1, 5)
        options = [as_tensor_variable(c) for c in choices]
        if len(options) > 1:
            options = list(broadcast_arrays(*options))
        stacked = stack(options)
    else:
        stacked = as_tensor_variable(choices)
        if stacked.ndim == 0:
            raise ValueError(f"choose: choices must be a sequence or an array, got {stacked}")
    n = shape_i(stacked, 0)
    if mode == "wrap":
        a = tm.mod(a, n)
    elif mode == "clip":
        a = tm.clip(a, 0, tm.sub(n, 1))
    option_shape = [shape_i(stacked, d) for d in range(1, stacked.ndim)]
    common = list(broadcast_shape([shape_i(a, d) for d in range(a.ndim)], option_shape,
                                  arrays_are_shapes=True))
    a = broadcast_to(a, common)
    missing = len(common) - len(option_shape)   # the choices' new axes go after the first
    if missing:
        stacked = DimShuffle(stacked.ndim, (0,) + ("x",) * missing + tuple(
            range(1, stacked.ndim)))(stacked)
    stacked = broadcast_to(stacked, [n] + common)
    picked = take_along_axis(stacked, DimShuffle(a.ndim, ("x",) + tuple(range(a.ndim)))(a), 0)
    return picked[0]
