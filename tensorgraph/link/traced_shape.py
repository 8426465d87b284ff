"""The shape logic the traced back ends (JAX, PyTorch) share: sizes known while tracing.

Both libraries fix array sizes when they trace the graph, so a size must be known then: it
is when it comes from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.traced``). What checks those sizes and computes with them is the same for
both and lives here; each back end's ``shape`` module registers the ops in its own table,
passing the library-specific bits (its name, its traced-value test, its array conversion).
The checks of the ops' operands live beside it: products in ``traced_products``, random draws
in ``traced_random``, indices in ``traced_indices``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["StaticShapeError", "static_ints", "shape_of", "reshaped_size", "check_join",
           "check_split", "specify_shape", "register_known_size_ops"]


class StaticShapeError(ValueError):
    """A size the library needs when tracing depends on the values of the function's inputs."""


def static_ints(value, what: str, backend: str, traced) -> tuple:
    """``value`` (a known integer scalar or vector) as Python ints, or StaticShapeError when
    ``traced(value)`` (its value is known only when running)."""
    if traced(value):
        raise StaticShapeError(
            f"{backend} needs {what} when it traces the graph (array sizes are fixed then), but "
            "it is computed from the values of the function's inputs; compute it from shapes "
            "or constants, or use mode FAST_RUN")
    return tuple(int(v) for v in np.asarray(value).reshape(-1))


def shape_of(x) -> tuple:
    return tuple(int(s) for s in np.shape(x))


def reshaped_size(shape, requested) -> tuple:
    """numpy's answer to reshaping an array of ``shape`` to ``requested`` (one -1 allowed), or
    its error with perform's message."""
    if sum(s == -1 for s in requested) > 1 or any(s < -1 for s in requested):
        raise ValueError(f"reshape: invalid shape {requested}: sizes must be >= 0, with at most "
                         "one -1")
    size = int(np.prod(shape, dtype=np.int64))
    known = int(np.prod([s for s in requested if s != -1], dtype=np.int64))
    out = list(requested)
    if -1 in requested:
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of shape {tuple(shape)} (size "
                             f"{size}) into shape {requested}")
        out[requested.index(-1)] = size // known
    elif known != size:
        raise ValueError(f"reshape: cannot reshape an array of shape {tuple(shape)} (size "
                         f"{size}) into shape {requested}")
    return tuple(out)


def check_join(axis: int, shapes: list) -> None:
    """The inputs of a join along ``axis`` agree on every other dimension, or ValueError."""
    for s in shapes[1:]:
        if len(s) != len(shapes[0]) or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0]))
                                           if d != axis):
            text = ", ".join(str(tuple(v)) for v in shapes)
            raise ValueError(f"join along axis {axis}: inputs of shapes {text} do not fit")


def known_axis(op, value, ndim: int, static_ints, what: str) -> int:
    """The axis of a join or split: the op's fixed one, or its axis input's value known while
    tracing (a StaticShapeError when it is not), checked and made non-negative."""
    if op.axis is not None:
        return op.axis
    (axis,) = static_ints(value, f"the axis of a {what}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of range for {ndim}-d inputs (it must be "
                         f"in [{-ndim}, {ndim - 1}])")
    return axis % ndim


def check_split(op, shape: tuple, sizes: tuple, axis: int | None = None) -> None:
    """``sizes`` divide dimension ``axis`` (default ``op.axis``) of an array of ``shape``, or
    ValueError."""
    axis = op.axis if axis is None else axis
    length = shape[axis]
    if len(sizes) != op.n_splits:
        raise ValueError(f"split: expected {op.n_splits} sizes, got {len(sizes)}")
    if any(s < 0 for s in sizes) or sum(sizes) != length:
        raise ValueError(f"split: sizes {list(sizes)} (sum {sum(sizes)}) do not divide "
                         f"dimension {axis} of size {length} (input shape {tuple(shape)})")


def specify_shape(op, traced, asarray, runtime_check):
    """``SpecifyShape``: sizes known while tracing are checked then, the others by a run-time
    check (``asarray``: the library's conversion of a traced size)."""

    def specify(x, *sizes):
        shape = shape_of(x)
        for d, size in zip(op.checked, sizes):
            if traced(size):
                runtime_check(asarray(size) != shape[d], AssertionError,
                              f"specify_shape: dimension {d} has size {shape[d]}, which is not "
                              f"the size asked for (input shape {shape})")
            elif int(size) != shape[d]:
                raise AssertionError(f"specify_shape: dimension {d} has size {shape[d]}, "
                                     f"expected {int(size)} (input shape {shape})")
        return x

    return specify


def register_known_size_ops(register, static_ints, traced) -> None:
    """Register in a back end's table the ops whose results are sizes or built from sizes,
    computed with numpy while tracing: ``Shape``, ``Shape_i``, ``ARange``, ``Eye``/``Tri`` and
    slice lengths (``static_ints(value, what)``: the back end's)."""
    from tensorgraph.tensor.creation import ARange, _Matrix2D
    from tensorgraph.tensor.shape import Shape, Shape_i
    from tensorgraph.tensor.subtensor import _SliceLength

    @register(Shape)
    def shape(op, node):
        return lambda x: np.asarray(shape_of(x), dtype="int64")

    @register(Shape_i)
    def shape_i(op, node):
        return lambda x: np.asarray(shape_of(x)[op.i], dtype="int64")

    @register(ARange)
    def arange(op, node):
        def compute(start, stop, step):
            bounds = [np.asarray(v).item() if not traced(v)
                      else static_ints(v, "an arange bound") for v in (start, stop, step)]
            return np.arange(*bounds, dtype=op.dtype)

        return compute

    @register(_Matrix2D)
    def matrix_2d(op, node):
        def compute(n, m, k):
            n, m, k = (static_ints(v, "the size of an eye/tri")[0] for v in (n, m, k))
            return type(op).numpy_function(n, m, k, dtype=op.dtype)

        return compute

    @register(_SliceLength)
    def slice_length(op, node):
        def compute(size, *given):
            size = static_ints(size, "a sliced length")[0]
            given = iter(static_ints(g, "a slice bound")[0] for g in given)
            parts = [next(given) if present else None for present in op.parts]
            return np.asarray(len(range(*slice(*parts).indices(size))), dtype="int64")

        return compute
