"""The shape logic the traced back ends (JAX, PyTorch) share: sizes known while tracing.

Both libraries fix array sizes when they trace the graph, so a size must be known then: it
is when it comes from shapes and constants (those nodes compute with numpy while tracing, see
``tensorgraph.link.traced``). What checks those sizes and computes with them is the same for
both and lives here; each back end's ``shape`` module registers the ops in its own table,
passing the library-specific bits (its name, its traced-value test, its array conversion).
"""

from __future__ import annotations

import numpy as np

__all__ = ["StaticShapeError", "static_ints", "shape_of", "reshaped_size", "check_join",
           "check_split", "specify_shape", "register_known_size_ops",
           "check_inner", "check_tensordot", "check_matmul", "gemv_mismatch", "check_gemv",
           "check_gemm", "scaled_sum", "gemv_result", "draw_shape", "choice_sizes",
           "check_position", "known_mask", "check_label_shape", "label_range_message",
           "check_labels"]


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


# ----------------------------------------------------------------------------------------------
# Products: the shapes their operands must have (perform's messages)


def check_inner(sa, sb, what: str = "dot") -> None:
    """The last dimension of ``sa`` is the first of ``sb``, or ValueError."""
    if sa[-1] != sb[0]:
        raise ValueError(f"{what}: inner dimensions differ: shapes {tuple(sa)} and {tuple(sb)} "
                         f"({sa[-1]} != {sb[0]})")


def check_tensordot(op, sa, sb) -> None:
    """The axes a ``TensorDot`` sums over have the same lengths, or ValueError."""
    for ia, ib in zip(op.axes_a, op.axes_b):
        if sa[ia] != sb[ib]:
            raise ValueError(f"tensordot: axis {ia} of the first input (shape {sa}) and axis "
                             f"{ib} of the second (shape {sb}) have different lengths "
                             f"({sa[ia]} != {sb[ib]})")


def check_matmul(node, sa, sb) -> None:
    """A ``MatMul``'s inner dimensions agree and its batch dimensions broadcast (size 1 only
    where the type says so), or ValueError."""
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: inner dimensions differ: shapes {sa} and {sb} "
                         f"({sa[-1]} != {sb[-2]})")
    for d, (x, y) in enumerate(zip(sa[:-2], sb[:-2])):
        if x == y:
            continue
        for var, size in zip(node.inputs, (x, y)):
            if size == 1 and var.type.shape[d] != 1:
                raise ValueError(f"matmul: {var} has size 1 in batch dimension {d} at run "
                                 f"time but its type {var.type} does not declare it "
                                 f"broadcastable; shapes {sa} and {sb}")
        if x != 1 and y != 1:
            raise ValueError(f"matmul: batch dimension {d} differs: shapes {sa} and {sb}")


def gemv_mismatch(sy, sA, sx) -> str:
    return f"Gemv: shapes do not match: y {sy}, A {sA}, x {sx}"


def check_gemv(sy, sA, sx) -> None:
    if sA[1] != sx[0]:
        raise ValueError(gemv_mismatch(sy, sA, sx))


def check_gemm(sz, sa, sb) -> None:
    if sa[1] != sb[0]:
        raise ValueError(f"Gemm: shapes do not match: z {sz}, a {sa}, b {sb}")


def scaled_sum(xp, alpha, product, beta, y):
    """``alpha * product + beta * y``, with ``y`` not read where ``beta == 0`` (as BLAS);
    ``xp``: the array library (its ``where``)."""
    scaled = alpha * product
    return xp.where(beta == 0, scaled, scaled + beta * y)


def gemv_result(xp, alpha, product, beta, y, shapes, runtime_check, given_beta=None):
    """``alpha * product + beta * y`` of a ``Gemv`` (``shapes``: y's, A's, x's). A ``y`` that
    does not fit must not be read: then ``beta`` (as given, before any cast) must be 0, checked
    when the call runs if it is known only then."""
    sy, sA, sx = shapes
    if sy != (sA[0],):
        runtime_check((beta if given_beta is None else given_beta) != 0, ValueError,
                      gemv_mismatch(sy, sA, sx))
        return alpha * product
    return scaled_sum(xp, alpha, product, beta, y)


def draw_shape(op, sized: bool, size, params, static_ints) -> tuple:
    """The shape of a random draw: its ``size`` when the node has one (``sized``), else the
    batch shape the parameters broadcast to (their core dimensions left out)."""
    if sized:
        return static_ints(size, "the size of a random draw")
    shapes = [np.shape(p)[:np.ndim(p) - core] for p, core in zip(params, op.ndims_params)]
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


# ----------------------------------------------------------------------------------------------
# Indices: checked when known while tracing, else by a run-time check


def choice_sizes(node, size, a, static_ints) -> tuple:
    """A ``ChoiceRV`` node's draw shape and, when it picks from ``range(a)`` (a scalar ``a``),
    that number (else None): both must be known while tracing."""
    sized = bool(node.inputs[1].type.shape[0])
    shape = static_ints(size, "the size of a random draw") if sized else ()
    n = static_ints(a, "the number of choices")[0] if node.op.a_ndim == 0 else None
    return shape, n


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
