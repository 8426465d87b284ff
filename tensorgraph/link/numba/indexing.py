"""Numba for indexing: ``Subtensor`` (a view, as numpy's basic indexing), ``IncSubtensor``,
``AdvancedSubtensor1`` / ``AdvancedIncSubtensor1`` (one index vector: a loop over it) and the
general ``AdvancedSubtensor`` / ``AdvancedIncSubtensor`` (integer arrays broadcast together,
boolean masks, ints and slices in any mix, numpy's rule for where the broadcast dimensions
go: explicit loops over the result), ``TakeAlongLastAxis`` and ``PutAlongLastAxis``.

Every index is checked (Numba itself does not check bounds): out of range is the node's
IndexError. Adding at repeated indices accumulates in index order (``np.add.at``); setting
keeps the last value.
"""

from __future__ import annotations

from tensorgraph.link.numba import register
from tensorgraph.link.numba.elemwise import check_dtypes, index, loops
from tensorgraph.link.numba.shape import SLICE_RANGE, scalar, slice_parts, tuple_of
from tensorgraph.tensor.special import PutAlongLastAxis, TakeAlongLastAxis
from tensorgraph.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    _entry_inputs,
)


def checked_position(code, value: str, size: str, axis) -> str:
    """A local holding the index ``value`` made non-negative, after the bounds check."""
    name = code.name("j")
    code.line(f"{name} = {value}")
    with code.block(f"if {name} < -{size} or {name} >= {size}:"):
        code.line(code.fail("IndexError", f"index out of bounds for axis {axis}"))
    with code.block(f"if {name} < 0:"):
        code.line(f"{name} += {size}")
    return name


def basic_index(code, op, x: str, index_names) -> str:
    """The index text of basic indexing (ints checked, slices as written)."""
    parts = []
    for d, (entry, names) in enumerate(_entry_inputs(op.idx_list, index_names)):
        if entry == "int":
            parts.append(checked_position(code, f"{names[0]}[()]", f"{x}.shape[{d}]", d))
            continue
        values = [None if n is None else f"{n}[()]" for n in names]
        if values[2] is not None:
            with code.block(f"if {values[2]} == 0:"):
                code.line(code.fail("ValueError", "slice step cannot be zero"))
        parts.append(":".join("" if v is None else v for v in values))
    return ", ".join(parts)


@register(Subtensor)
def numba_subtensor(op, node, code):
    x, *index_names = code.inputs
    (out,) = code.outputs
    where = basic_index(code, op, x, index_names)
    expr = f"{x}[{where}]" if where else x
    if node.outputs[0].ndim == 0 and where:
        scalar(code, out, node.outputs[0].dtype, expr)
    else:
        code.line(f"{out} = {expr}")


def check_fits(code, y: str, y_ndim: int, target_sizes, what: str) -> None:
    """The value ``y`` broadcasts to ``target_sizes`` (expressions) by numpy's rule."""
    offset = len(target_sizes) - y_ndim
    for d in range(y_ndim):
        target = target_sizes[d + offset]
        with code.block(f"if {y}.shape[{d}] != {target} and {y}.shape[{d}] != 1:"):
            code.line(code.fail("ValueError", f"{what}: the value does not fit the indexed "
                                              f"part in dimension {d} (the sizes differ)"))


@register(IncSubtensor)
def numba_inc_subtensor(op, node, code):
    x, y, *index_names = code.inputs
    (out,) = code.outputs
    y_ndim = node.inputs[1].ndim
    code.line(f"{out} = {x}" if op.inplace else f"{out} = {x}.copy()")
    where = basic_index(code, op, out, index_names)
    value = f"{y}[()]" if y_ndim == 0 else y
    assign = "=" if op.set_instead_of_inc else "+="
    read_ndim = sum(entry != "int" for entry in op.idx_list) + node.inputs[0].ndim - len(
        op.idx_list)
    if read_ndim == 0:
        code.line(f"{out}[{where}] {assign} {value}")
        return
    view = code.name("view")
    code.line(f"{view} = {out}[{where}]" if where else f"{view} = {out}")
    check_fits(code, y, y_ndim, [f"{view}.shape[{d}]" for d in range(read_ndim)], str(op))
    code.line(f"{view}[...] = {value}" if op.set_instead_of_inc else f"{view} += {value}")


@register(AdvancedSubtensor1)
def numba_take(op, node, code):
    x, ilist = code.inputs
    (out,) = code.outputs
    check_dtypes([node.outputs[0].dtype])
    code.line(f"{out} = np.empty(({ilist}.shape[0],) + {x}.shape[1:], np.{node.outputs[0].dtype})")
    with loops(code, [f"{ilist}.shape[0]"]) as (k,):
        j = checked_position(code, f"{ilist}[{k}]", f"{x}.shape[0]", 0)
        code.line(f"{out}[{k}] = {x}[{j}]")


@register(AdvancedIncSubtensor1)
def numba_inc_take(op, node, code):
    x, y, ilist = code.inputs
    (out,) = code.outputs
    y_ndim, x_ndim = node.inputs[1].ndim, node.inputs[0].ndim
    code.line(f"{out} = {x}" if op.inplace else f"{out} = {x}.copy()")
    sizes = [f"{ilist}.shape[0]"] + [f"{x}.shape[{d}]" for d in range(1, x_ndim)]
    check_fits(code, y, y_ndim, sizes, str(op))
    assign = "=" if op.set_instead_of_inc else "+="
    if y_ndim == 0:
        value = f"{y}[()]"
    else:
        value = code.name("y")
        code.line(f"{value} = np.broadcast_to({y}, {tuple_of(sizes)})")
    with loops(code, [f"{ilist}.shape[0]"]) as (k,):
        j = checked_position(code, f"{ilist}[{k}]", f"{x}.shape[0]", 0)
        code.line(f"{out}[{j}] {assign} {value if y_ndim == 0 else f'{value}[{k}]'}")


class _Advanced:
    """The index of an ``AdvancedSubtensor`` / ``AdvancedIncSubtensor`` node, written out:
    index arrays (ints as 0-d arrays, masks as their nonzero positions), their broadcast
    shape, the slices' ranges, and where each dimension of the result comes from."""

    def __init__(self, code, op, node, x: str, index_names):
        self.code = code
        self.x = x
        x_ndim = node.inputs[0].ndim
        arrays, dims, entry_is_advanced = [], [], []
        d = 0
        index_vars = node.inputs[2:] if isinstance(op, AdvancedIncSubtensor) else node.inputs[1:]
        variables = iter(index_vars)
        for entry, names in _entry_inputs(op.idx_list, index_names):
            if entry == "int":
                next(variables)
                arrays.append((f"{names[0]}", 0))
                dims.append(("adv", d))
                entry_is_advanced.append(True)
                d += 1
            elif entry == "array":
                var = next(variables)
                if var.dtype == "bool":
                    for j in range(var.ndim):
                        with code.block(f"if {names[0]}.shape[{j}] != {x}.shape[{d + j}]:"):
                            code.line(code.fail("IndexError", f"boolean index did not match the "
                                                              f"indexed array along axis {d + j}"))
                    nonzero = code.name("nz")
                    code.line(f"{nonzero} = np.nonzero({names[0]})")
                    for j in range(var.ndim):
                        arrays.append((f"{nonzero}[{j}]", 1))
                        dims.append(("adv", d + j))
                    d += var.ndim
                else:
                    arrays.append((names[0], var.ndim))
                    dims.append(("adv", d))
                    d += 1
                entry_is_advanced.append(True)
            else:
                for p in names:
                    if p is not None:
                        next(variables)
                helper = code.helper("slice_range", SLICE_RANGE)
                values = [None if n is None else f"{n}[()]" for n in names]
                if values[2] is not None:
                    with code.block(f"if {values[2]} == 0:"):
                        code.line(code.fail("ValueError", "slice step cannot be zero"))
                r = code.name("r")
                code.line(f"{r} = {helper}({x}.shape[{d}], {slice_parts(code, values)})")
                dims.append(("slice", r, d))
                entry_is_advanced.append(False)
                d += 1
        positions = [k for k, adv in enumerate(entry_is_advanced) if adv]
        self.adjacent = positions == list(range(positions[0], positions[-1] + 1))
        self.arrays, self.dims = arrays, dims
        self.trailing = list(range(d, x_ndim))
        self.nb = max(ndim for _, ndim in arrays)
        self._broadcast()

    def _broadcast(self):
        code = self.code
        self.sizes = []
        self.steps = {}  # (array, dim) -> 0/1 multiplier of the broadcast index
        for j in range(self.nb):
            size = code.name("b")
            code.line(f"{size} = 1")
            for k, (name, ndim) in enumerate(self.arrays):
                jj = j - (self.nb - ndim)
                if jj < 0:
                    continue
                with code.block(f"if {name}.shape[{jj}] != 1:"):
                    with code.block(f"if {size} != 1 and {size} != {name}.shape[{jj}]:"):
                        code.line(code.fail("IndexError", "shape mismatch: indexing arrays could "
                                                          "not be broadcast together"))
                    code.line(f"{size} = {name}.shape[{jj}]")
            self.sizes.append(size)
        for k, (name, ndim) in enumerate(self.arrays):
            for jj in range(ndim):
                unit = code.name("u")
                code.line(f"{unit} = 0 if {name}.shape[{jj}] == 1 else 1")
                self.steps[(k, jj)] = unit

    def result_layout(self):
        """The result's dimensions, in order: ``("b", j)`` broadcast, ``("s", dim)`` slice,
        ``("t", x_dim)`` trailing; and their sizes."""
        slices = [dim for dim in self.dims if dim[0] == "slice"]
        first_adv = next(k for k, dim in enumerate(self.dims) if dim[0] == "adv")
        before = [s for s in slices if self.dims.index(s) < first_adv] if self.adjacent else []
        after = [s for s in slices if s not in before]
        layout = ([("s", s) for s in before] + [("b", j) for j in range(self.nb)]
                  + [("s", s) for s in after] + [("t", t) for t in self.trailing])
        sizes = []
        for kind, what in layout:
            if kind == "b":
                sizes.append(self.sizes[what])
            elif kind == "s":
                sizes.append(f"{what[1]}[2]")
            else:
                sizes.append(f"{self.x}.shape[{what}]")
        return layout, sizes

    def loop_body(self, layout, idx) -> tuple[str, str]:
        """Inside the loops (``idx``: one name per looped result dimension): the index of
        the result element (or row) and of the source element, as text."""
        code = self.code
        loop_of = dict(zip([tuple(item) if item[0] == "b" else (item[0], item[1][2])
                            for item in layout if item[0] != "t"], idx))
        b_index = {j: loop_of[("b", j)] for j in range(self.nb)}
        source, k_adv = [], 0
        values = []
        for k, (name, ndim) in enumerate(self.arrays):
            if ndim == 0:
                values.append(f"{name}[()]")
                continue
            parts = [f"{b_index[self.nb - ndim + jj]} * {self.steps[(k, jj)]}"
                     for jj in range(ndim)]
            values.append(f"{name}[{', '.join(parts)}]")
        for dim in self.dims:
            if dim[0] == "adv":
                d = dim[1]
                source.append(checked_position(code, values[k_adv], f"{self.x}.shape[{d}]", d))
                k_adv += 1
            else:
                _, r, d = dim
                source.append(f"{r}[0] + {loop_of[('s', d)]} * {r}[1]")
        return ", ".join(idx), ", ".join(source)


@register(AdvancedSubtensor)
def numba_advanced_subtensor(op, node, code):
    x, *index_names = code.inputs
    (out,) = code.outputs
    check_dtypes([node.outputs[0].dtype])
    plan = _Advanced(code, op, node, x, index_names)
    layout, sizes = plan.result_layout()
    code.line(f"{out} = np.empty({tuple_of(sizes)}, np.{node.outputs[0].dtype})")
    looped = [size for (kind, _), size in zip(layout, sizes) if kind != "t"]
    with loops(code, looped) as idx:
        where, source = plan.loop_body(layout, idx)
        code.line(f"{out}[{where}] = {x}[{source}]")


@register(AdvancedIncSubtensor)
def numba_advanced_inc_subtensor(op, node, code):
    x, y, *index_names = code.inputs
    (out,) = code.outputs
    y_ndim = node.inputs[1].ndim
    code.line(f"{out} = {x}" if op.inplace else f"{out} = {x}.copy()")
    plan = _Advanced(code, op, node, out, index_names)
    layout, sizes = plan.result_layout()
    check_fits(code, y, y_ndim, sizes, str(op))
    if y_ndim == 0:
        value = f"{y}[()]"
    else:
        value = code.name("y")
        code.line(f"{value} = np.broadcast_to({y}, {tuple_of(sizes)})")
    assign = "=" if op.set_instead_of_inc else "+="
    looped = [size for (kind, _), size in zip(layout, sizes) if kind != "t"]
    with loops(code, looped) as idx:
        where, source = plan.loop_body(layout, idx)
        taken = value if y_ndim == 0 else f"{value}[{where}]"
        code.line(f"{out}[{source}] {assign} {taken}")


def _check_labels(code, x: str, labels: str, ndim: int, what: str) -> None:
    for d in range(ndim - 1):
        with code.block(f"if {labels}.shape[{d}] != {x}.shape[{d}]:"):
            code.line(code.fail("ValueError", f"{what}: the labels do not match the leading "
                                              "dimensions of the values"))


@register(TakeAlongLastAxis)
def numba_take_along(op, node, code):
    x, labels = code.inputs
    (out,) = code.outputs
    ndim = node.inputs[0].ndim
    _check_labels(code, x, labels, ndim, str(op))
    dtype = node.outputs[0].dtype
    code.line(f"{out} = np.empty({x}.shape[:-1], np.{dtype})")
    with loops(code, [f"{x}.shape[{d}]" for d in range(ndim - 1)]) as idx:
        label = code.name("label")
        code.line(f"{label} = {index(labels, idx)}")
        with code.block(f"if {label} < 0 or {label} >= {x}.shape[{ndim - 1}]:"):
            code.line(code.fail("IndexError", f"{op}: a label is out of range for the number "
                                              "of classes"))
        code.line(f"{index(out, idx)} = {x}[{', '.join(list(idx) + [label])}]")


@register(PutAlongLastAxis)
def numba_put_along(op, node, code):
    values, labels, like = code.inputs
    (out,) = code.outputs
    ndim = node.inputs[2].ndim
    _check_labels(code, like, labels, ndim, str(op))
    code.line(f"{out} = np.zeros({like}.shape, np.{node.outputs[0].dtype})")
    with loops(code, [f"{like}.shape[{d}]" for d in range(ndim - 1)]) as idx:
        label = code.name("label")
        code.line(f"{label} = {index(labels, idx)}")
        with code.block(f"if {label} < 0 or {label} >= {like}.shape[{ndim - 1}]:"):
            code.line(code.fail("IndexError", f"{op}: a label is out of range for the number "
                                              "of classes"))
        code.line(f"{out}[{', '.join(list(idx) + [label])}] = {index(values, idx)}")
