"""Numba for the shape ops: ``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``,
``MakeVector``, ``Join``, ``Split``, ``Alloc``, ``ARange``, ``Eye``, ``Tri``, ``ExtractDiag`` and
slice lengths, with perform's checks and messages."""

from __future__ import annotations

from tensorgraph.link.numba import register
from tensorgraph.link.numba.elemwise import check_dtypes
from tensorgraph.tensor.creation import ARange, Alloc, Eye, Tri
from tensorgraph.tensor.diagonal import ExtractDiag
from tensorgraph.tensor.join import Join, MakeVector, Split
from tensorgraph.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
from tensorgraph.tensor.subtensor import _SliceLength


def tuple_of(items) -> str:
    """Python source of a tuple of the expressions ``items``."""
    return "(" + "".join(f"{i}, " for i in items) + ")"


def scalar(code, out, dtype, expr) -> None:
    """``out`` = a 0-d array of ``dtype`` holding ``expr``."""
    code.line(f"{out} = np.empty((), np.{dtype})")
    code.line(f"{out}[()] = {expr}")


@register(Shape)
def numba_shape(op, node, code):
    (x,), (out,) = code.inputs, code.outputs
    ndim = node.inputs[0].ndim
    code.line(f"{out} = np.empty({ndim}, np.int64)")
    for d in range(ndim):
        code.line(f"{out}[{d}] = {x}.shape[{d}]")


@register(Shape_i)
def numba_shape_i(op, node, code):
    scalar(code, code.outputs[0], "int64", f"{code.inputs[0]}.shape[{op.i}]")


@register(SpecifyShape)
def numba_specify_shape(op, node, code):
    x, *sizes = code.inputs
    for d, size in zip(op.checked, sizes):
        with code.block(f"if {x}.shape[{d}] != {size}[()]:"):
            code.line(code.fail("AssertionError", f"specify_shape: dimension {d} does not have "
                                                  "the size asked for"))
    code.line(f"{code.outputs[0]} = {x}")


@register(Reshape)
def numba_reshape(op, node, code):
    x, shp = code.inputs
    (out,) = code.outputs
    entries = [code.name("s") for _ in range(op.ndim)]
    with code.block(f"if {shp}.shape[0] != {op.ndim}:"):
        code.line(code.fail("ValueError", f"reshape: the shape has the wrong number of entries "
                                          f"(expected {op.ndim})"))
    for d, name in enumerate(entries):
        code.line(f"{name} = {shp}[{d}]")
    known, free = code.name("known"), code.name("free")
    code.line(f"{known} = 1")
    code.line(f"{free} = 0")
    for name in entries:
        with code.block(f"if {name} == -1:"):
            code.line(f"{free} += 1")
        with code.block("else:"):
            with code.block(f"if {name} < 0:"):
                code.line(code.fail("ValueError", "reshape: sizes must be >= 0, with at most "
                                                  "one -1"))
            code.line(f"{known} *= {name}")
    with code.block(f"if {free} > 1 or ({free} == 0 and {known} != {x}.size) or "
                    f"({free} == 1 and ({known} == 0 or {x}.size % {known} != 0)):"):
        code.line(code.fail("ValueError", "reshape: cannot reshape the array into the shape "
                                          "asked for (the sizes do not match)"))
    for name in entries:
        code.line(f"{name} = {x}.size // {known} if {name} == -1 else {name}")
    code.line(f"{out} = np.ascontiguousarray({x}).reshape({tuple_of(entries)})")


@register(MakeVector)
def numba_make_vector(op, node, code):
    (out,) = code.outputs
    check_dtypes([op.dtype])
    code.line(f"{out} = np.empty({len(code.inputs)}, np.{op.dtype})")
    for k, value in enumerate(code.inputs):
        code.line(f"{out}[{k}] = {value}[()]")


def _axis_line(op, code, value, ndim: int, what: str) -> str:
    """The name holding the axis of a join or split: its fixed one, or a local checked
    against ``ndim`` and made non-negative from the node's axis input ``value``."""
    if op.axis is not None:
        return str(op.axis)
    axis = code.name("axis")
    code.line(f"{axis} = int({value}[()])")
    with code.block(f"if {axis} < -{ndim} or {axis} >= {ndim}:"):
        code.line(code.fail("ValueError", f"{what}: the axis is out of range for {ndim}-d "
                                          f"inputs (it must be in [-{ndim}, {ndim - 1}])"))
    with code.block(f"if {axis} < 0:"):
        code.line(f"{axis} += {ndim}")
    return axis


@register(Join)
def numba_join(op, node, code):
    (out,) = code.outputs
    ndim = node.outputs[0].ndim
    tensors = code.inputs if op.axis is not None else code.inputs[1:]
    axis = _axis_line(op, code, code.inputs[0], ndim, "join")
    first, along = tensors[0], op.axis if op.axis is not None else "given"
    for k, value in enumerate(tensors[1:], 1):
        for d in range(ndim):
            if d == op.axis:
                continue
            test = f"{value}.shape[{d}] != {first}.shape[{d}]"
            if op.axis is None:
                test = f"{axis} != {d} and {test}"
            with code.block(f"if {test}:"):
                code.line(code.fail("ValueError", f"join along axis {along}: input {k} differs "
                                                  f"from input 0 in dimension {d}"))
    code.line(f"{out} = np.concatenate({tuple_of(tensors)}, axis={axis})")


@register(Split)
def numba_split(op, node, code):
    x, sizes = code.inputs[0], code.inputs[-1]
    axis = _axis_line(op, code, code.inputs[1], node.inputs[0].ndim, "split")
    total, start = code.name("total"), code.name("start")
    with code.block(f"if {sizes}.shape[0] != {op.n_splits}:"):
        code.line(code.fail("ValueError", f"split: expected {op.n_splits} sizes"))
    code.line(f"{total} = 0")
    for k in range(op.n_splits):
        with code.block(f"if {sizes}[{k}] < 0:"):
            code.line(code.fail("ValueError", "split: sizes must be non-negative"))
        code.line(f"{total} += {sizes}[{k}]")
    with code.block(f"if {total} != {x}.shape[{axis}]:"):
        code.line(code.fail("ValueError", "split: the sizes do not add up to the split "
                                          "dimension of the input"))
    if op.axis is None:
        # an axis known at run time: numpy's split (views) at the running sums of the sizes
        pieces = code.name("pieces")
        code.line(f"{pieces} = np.split({x}, np.cumsum({sizes})[:-1], axis={axis})")
        for k, out in enumerate(code.outputs):
            code.line(f"{out} = {pieces}[{k}]")
        return
    code.line(f"{start} = 0")
    lead = ":, " * op.axis
    for k, out in enumerate(code.outputs):
        code.line(f"{out} = {x}[{lead}{start}:{start} + {sizes}[{k}]]")
        code.line(f"{start} += {sizes}[{k}]")


@register(Alloc)
def numba_alloc(op, node, code):
    value, *sizes = code.inputs
    (out,) = code.outputs
    dtype = node.outputs[0].dtype
    check_dtypes([dtype])
    ndim = len(sizes)
    value_type = node.inputs[0].type
    offset = ndim - value_type.ndim
    shape = [f"{s}[()]" for s in sizes]
    for d in range(value_type.ndim):
        target = shape[d + offset]
        allowed = f"{value}.shape[{d}] != {target}"
        if value_type.shape[d] == 1:
            allowed += f" and {value}.shape[{d}] != 1"
        with code.block(f"if {allowed}:"):
            code.line(code.fail("ValueError", f"alloc: cannot fill the shape asked for with the "
                                              f"value: dimension {d} of the value has another "
                                              "size (only a dimension of static size 1 "
                                              "broadcasts)"))
    code.line(f"{out} = np.empty({tuple_of(shape)}, np.{dtype})")
    filler = f"{value}[()]" if value_type.ndim == 0 else value
    if ndim == 0:
        code.line(f"{out}[()] = {filler}")
    else:
        code.line(f"{out}[...] = {filler}")


@register(ARange)
def numba_arange(op, node, code):
    start, stop, step = (f"{v}[()]" for v in code.inputs)
    (out,) = code.outputs
    with code.block(f"if {step} == 0:"):
        code.line(code.fail("ValueError", "arange: step must not be zero"))
    code.line(f"{out} = np.arange({start}, {stop}, {step}).astype(np.{op.dtype})")


@register(Eye)
def numba_eye(op, node, code):
    n, m, k = (f"{v}[()]" for v in code.inputs)
    with code.block(f"if {n} < 0 or {m} < 0:"):
        code.line(code.fail("ValueError", "eye: negative size"))
    code.line(f"{code.outputs[0]} = np.eye({n}, {m}, {k}).astype(np.{op.dtype})")


@register(Tri)
def numba_tri(op, node, code):
    n, m, k = (f"{v}[()]" for v in code.inputs)
    with code.block(f"if {n} < 0 or {m} < 0:"):
        code.line(code.fail("ValueError", "tri: negative size"))
    code.line(f"{code.outputs[0]} = np.tri({n}, {m}, {k}).astype(np.{op.dtype})")


SLICE_RANGE = '''
def slice_range(n, has_start, start, has_stop, stop, has_step, step):
    """(first index, step, length) of slicing a dimension of length n, as slice.indices."""
    if not has_step:
        step = 1
    if step > 0:
        lower, upper = 0, n
    else:
        lower, upper = -1, n - 1
    if not has_start:
        start = upper if step < 0 else lower
    elif start < 0:
        start = max(start + n, lower)
    else:
        start = min(start, upper)
    if not has_stop:
        stop = lower if step < 0 else upper
    elif stop < 0:
        stop = max(stop + n, lower)
    else:
        stop = min(stop, upper)
    if step > 0:
        length = (stop - start + step - 1) // step if stop > start else 0
    else:
        length = (start - stop - step - 1) // (-step) if start > stop else 0
    return start, step, length
'''


def slice_parts(code, parts) -> str:
    """The argument list ``has_start, start, has_stop, stop, has_step, step`` of
    ``slice_range`` from the expressions (or None) of a slice's parts."""
    items = []
    for part in parts:
        items += ["False", "0"] if part is None else ["True", f"{part}"]
    return ", ".join(items)


@register(_SliceLength)
def numba_slice_length(op, node, code):
    size, *given = (f"{v}[()]" for v in code.inputs)
    given = iter(given)
    parts = [next(given) if present else None for present in op.parts]
    helper = code.helper("slice_range", SLICE_RANGE)
    step = parts[2]
    if step is not None:
        with code.block(f"if {step} == 0:"):
            code.line(code.fail("ValueError", "slice step cannot be zero"))
    result = code.name("r")
    code.line(f"{result} = {helper}({size}, {slice_parts(code, parts)})")
    scalar(code, code.outputs[0], "int64", f"{result}[2]")


@register(ExtractDiag)
def numba_extract_diag(op, node, code):
    """numpy's ``diagonal``: the two axes moved last, the batch flattened, one loop."""
    (x,), (out,) = code.inputs, code.outputs
    ndim = node.inputs[0].ndim
    axis1, axis2 = op.axes(ndim)
    rest = [d for d in range(ndim) if d not in (axis1, axis2)]
    k = op.offset
    moved = code.name("moved")
    code.line(f"{moved} = np.ascontiguousarray(np.transpose({x}, "
              f"{tuple_of(rest + [axis1, axis2])}))")
    n1, n2 = f"{moved}.shape[{ndim - 2}]", f"{moved}.shape[{ndim - 1}]"
    length = code.name("length")
    code.line(f"{length} = max(0, min({n1} + {min(k, 0)}, {n2} - {max(k, 0)}))")
    flat, b, i = code.name("flat"), code.name("b"), code.name("i")
    code.line(f"{flat} = {moved}.reshape((-1, {n1}, {n2}))")
    code.line(f"{out} = np.empty(({flat}.shape[0], {length}), {moved}.dtype)")
    with code.block(f"for {b} in range({flat}.shape[0]):"):
        with code.block(f"for {i} in range({length}):"):
            code.line(f"{out}[{b}, {i}] = {flat}[{b}, {i} + {max(-k, 0)}, {i} + {max(k, 0)}]")
    shape = [f"{moved}.shape[{d}]" for d in range(ndim - 2)] + [length]
    code.line(f"{out} = {out}.reshape({tuple_of(shape)})")
