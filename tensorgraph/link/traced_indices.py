"""The index checks the traced back ends (JAX, PyTorch) share: integer positions, boolean
masks and the labels of ``TakeAlongLastAxis`` / ``PutAlongLastAxis``, checked while tracing
when their values are known, else by a run-time check, with ``perform``'s messages.

Split from ``traced_shape`` so each module has one job; each back end's ``indexing`` module
passes its traced-value test and its run-time check.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.traced_shape import StaticShapeError

__all__ = ["check_position", "known_mask", "check_label_shape", "label_range_message",
           "check_labels"]


def check_position(value, size: int, axis: int, what, traced, runtime_check):
    """An integer index (or index array) into an axis of ``size``: a traced one gets a run-time
    check (and comes back as it is), a known one is checked now and comes back as a numpy
    array."""
    if traced(value):
        runtime_check((value < -size) | (value >= size), IndexError,
                      f"{what}: an index is out of bounds for axis {axis} with size {size}")
        return value
    array = np.asarray(value)
    bad = (array < -size) | (array >= size)
    if np.any(bad):
        raise IndexError(f"{what}: index {array[bad].flat[0]} is out of bounds for axis {axis} "
                         f"with size {size}")
    return array


def known_mask(op, value, dims: tuple, backend: str, traced):
    """A boolean index as a numpy mask over axes of sizes ``dims``: it must be known while
    tracing (it fixes a size) and fit those axes."""
    if traced(value):
        raise StaticShapeError(f"{op}: {backend} needs a boolean mask when it traces the graph "
                               "(the number of selected elements is a size), but this one is "
                               "computed from the inputs' values")
    mask = np.asarray(value)
    dims = tuple(dims[:mask.ndim])
    if mask.shape != dims:
        raise IndexError(f"{op}: boolean index did not match the indexed array: "
                         f"mask of shape {mask.shape}, axes of sizes {dims}")
    return mask


def check_label_shape(op, x_shape, labels) -> None:
    """The labels of ``TakeAlongLastAxis``/``PutAlongLastAxis`` have the leading shape of
    the values, or ValueError."""
    if tuple(x_shape[:-1]) != tuple(np.shape(labels)):
        raise ValueError(f"{op}: labels of shape {tuple(np.shape(labels))} do not match the "
                         f"leading dimensions of values of shape {tuple(x_shape)}")


def label_range_message(op, n: int) -> str:
    return f"{op}: a label is out of range for {n} classes (labels must be in 0..{n - 1})"


def check_labels(op, x_shape, labels, traced, runtime_check, checked_position) -> None:
    """The labels of ``TakeAlongLastAxis`` / ``PutAlongLastAxis``: their shape checked now,
    their range now when known (``checked_position``), else at run time."""
    check_label_shape(op, x_shape, labels)
    n = x_shape[-1]
    if traced(labels):
        runtime_check((labels < 0) | (labels >= n), IndexError, label_range_message(op, n))
    else:
        checked_position(labels, n, len(x_shape) - 1, op)
