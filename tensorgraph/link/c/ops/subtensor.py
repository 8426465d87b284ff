"""C of indexing (``tensorgraph.tensor.subtensor``): basic indexing (``Subtensor``, a view;
``IncSubtensor``), indexing with one integer vector (``AdvancedSubtensor1``,
``AdvancedIncSubtensor1``) and the slice lengths of ``infer_shape`` (``_SliceLength``). The
general advanced indexing is in ``advanced_index.py``. Only ``uint64`` index values run
``perform``. ``ExtractDiag`` (``diagonal``), a strided selection too, is here.
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_string
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.strided import add_into, int_list, read_int, read_int_at, support
from tensorgraph.tensor.diagonal import ExtractDiag
from tensorgraph.tensor.subtensor import (
    AdvancedIncSubtensor1,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    _SliceLength,
)


def basic_index(op, idx_list, arr: str, index, index_vars, sub) -> str:
    """C applying the basic index ``idx_list`` to the ``tg_array`` ``arr`` in place, with the
    values of the index inputs ``index`` (C expressions), failing with a message on a bad one."""
    n = len(idx_list)
    kinds, has, sets = [], [], []
    values = iter(zip(index, index_vars))
    for e, entry in enumerate(idx_list):
        if entry == "int":
            kinds.append(0)
            has += [1, 0, 0]
            expr, var = next(values)
            sets.append(f"val[{3 * e}] = {read_int(expr, var.type.dtype)};")
            continue
        kinds.append(1)
        for p, part in enumerate(entry[1:]):
            has.append(int(part is not None))
            if part is not None:
                expr, var = next(values)
                sets.append(f"val[{3 * e + p}] = {read_int(expr, var.type.dtype)};")
    return f"""
        {{
            static const unsigned char kind[] = {int_list(kinds)}, has[] = {int_list(has)};
            int64_t val[{3 * max(n, 1)}] = {{0}};
            {" ".join(sets)}
            if (tg_index_basic({arr}, {n}, kind, val, has, {sub["ctx"]},
                               "{c_string(str(op), printf=False)}")) {{ {sub["fail"]} }}
        }}"""


def copy_or_view(op, x: str, z: str, sub) -> str:
    """C making ``z`` the array the inc/set ops write into: ``x`` itself when the op is inplace
    (it is in ``destroy_map``), else a C-contiguous copy of it."""
    if op.inplace:
        return f"tg_view({z}, {x});"
    return f"if (tg_copy_contiguous({z}, {x}, {sub['ctx']})) {{ {sub['fail']} }}"


def _unaliased(y: str, z: str, sub) -> str:
    """C declaring ``const tg_array *src``: ``y``, or a copy of it when it shares ``z``'s buffer
    (an inplace update reading the array it writes), released by ``_UNALIASED_END``."""
    return f"""
        tg_array y_copy;
        memset(&y_copy, 0, sizeof y_copy);
        const tg_array *src = {y};
        if ({y}->base != NULL && {y}->base == {z}->base) {{
            if (tg_copy_contiguous(&y_copy, {y}, {sub['ctx']})) {{ {sub['fail']} }}
            src = &y_copy;
        }}"""


_UNALIASED_END = "tg_release(&y_copy);"


def _update(op, dtype: str, dst: str) -> str:
    """C writing (set) or adding (inc) ``src`` into the array described by ``dst``."""
    if op.set_instead_of_inc:
        return f"tg_copy_into({dst}, src);"
    return f"""{{
            tg_pair pr;
            if (tg_pair_setup(&pr, {dst}, src) > 0)
                TG_PAIR_FOR(&pr, ({dst})->data, src->data, {add_into(dtype)});
        }}"""


@register(_SliceLength)
class SliceLengthC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        """Python's slice rules, as ``tg_index_basic`` applies them to an axis."""
        size, *given = inputs
        values = iter(zip(given, node.inputs[1:]))
        parts = []
        for present in op.parts:
            if present:
                expr, var = next(values)
                parts.append(read_int(expr, var.type.dtype))
            else:
                parts.append(None)
        start, stop, step = parts
        ctx, fail = sub["ctx"], sub["fail"]

        def clamp(var, value):
            return (f"int64_t {var} = {value};\n"
                    f"if ({var} < 0) {{ {var} += n; if ({var} < 0) {var} = step < 0 ? -1 : 0; }}\n"
                    f"else if ({var} >= n) {var} = step < 0 ? n - 1 : n;")

        return f"""
        {{
            const int64_t n = {read_int(size, node.inputs[0].type.dtype)};
            const int64_t step = {step or 1};
            if (step == 0) {{ tg_error({ctx}, "slice step cannot be zero"); {fail} }}
            {clamp("start", start) if start else "const int64_t start = step < 0 ? n - 1 : 0;"}
            {clamp("stop", stop) if stop else "const int64_t stop = step < 0 ? -1 : n;"}
            int64_t len = 0;
            if (step < 0) {{ if (stop < start) len = (start - stop - 1) / (-step) + 1; }}
            else if (start < stop) len = (stop - start - 1) / step + 1;
            const int64_t no_dims[1] = {{0}};
            if (tg_alloc({outputs[0]}, 0, no_dims, {cd.typenum("int64")}, {ctx})) {{ {fail} }}
            *(int64_t *){outputs[0]}->data = len;
        }}"""


class _StridedC(CImplementation):
    """The indexing ops whose support code is ``strided.h``."""

    def support_code(self, op, node):
        return support("strided.h")


@register(Subtensor)
class SubtensorC(_StridedC):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x, *index), (z,) = inputs, outputs
        return (f"tg_view({z}, {x});"
                + basic_index(op, op.idx_list, z, index, node.inputs[1:], sub))


@register(IncSubtensor)
class IncSubtensorC(_StridedC):
    def code(self, op, node, name, inputs, outputs, sub):
        (x, y, *index), (z,) = inputs, outputs
        return f"""
        {{
            {copy_or_view(op, x, z, sub)}
            tg_array target = *{z};  /* the indexed part of z (a description, no reference) */
            {basic_index(op, op.idx_list, "(&target)", index, node.inputs[2:], sub)}
            if (tg_check_fits({sub["ctx"]}, "{c_string(str(op), printf=False)}", {y},
                              NULL, target.ndim, target.shape,
                              "indexed part")) {{ {sub["fail"]} }}
            {_unaliased(y, z, sub)}
            {_update(op, node.outputs[0].type.dtype, "(&target)")}
            {_UNALIASED_END}
        }}
        """


@register(AdvancedSubtensor1)
class AdvancedSubtensor1C(_StridedC):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x, ilist), (z,) = inputs, outputs
        if node.inputs[1].type.dtype == "uint64":
            raise NotImplementedError("uint64 indices run perform")
        ctx, fail = sub["ctx"], sub["fail"]
        entry = read_int_at(ilist, node.inputs[1].type.dtype, "i")
        return f"""
        {{
            const int64_t n = {ilist}->shape[0], rows = {x}->shape[0];
            int64_t shp[TG_MAXDIM];
            shp[0] = n;
            for (int d = 1; d < {x}->ndim; d++) shp[d] = {x}->shape[d];
            if (tg_alloc({z}, {x}->ndim, shp, {x}->typenum, {ctx})) {{ {fail} }}
            tg_array src = *{x}, dst = *{z};   /* one row of each (descriptions) */
            src.ndim = dst.ndim = {x}->ndim - 1;
            for (int d = 1; d < {x}->ndim; d++) {{
                src.shape[d - 1] = dst.shape[d - 1] = {x}->shape[d];
                src.strides[d - 1] = {x}->strides[d];
                dst.strides[d - 1] = {z}->strides[d];
            }}
            const int fast = tg_is_c_contiguous(&src);
            const size_t row_bytes = (size_t)tg_size(&src) * tg_itemsize({x}->typenum);
            for (int64_t i = 0; i < n; i++) {{
                int64_t r = {entry};
                if (r < -rows || r >= rows) {{
                    tg_error({ctx}, "IndexError: {c_string(str(op))}: index %lld (at position %lld of the "
                             "index vector) is out of bounds for axis 0 with size %lld",
                             (long long)r, (long long)i, (long long)rows);
                    {fail}
                }}
                if (r < 0) r += rows;
                src.data = {x}->data + r * {x}->strides[0];
                dst.data = {z}->data + i * {z}->strides[0];
                if (fast) memcpy(dst.data, src.data, row_bytes);
                else tg_copy_into(&dst, &src);
            }}
        }}
        """


@register(AdvancedIncSubtensor1)
class AdvancedIncSubtensor1C(_StridedC):
    def code(self, op, node, name, inputs, outputs, sub):
        """Rows updated one after the other: repeated indices accumulate (inc) or the last
        one wins (set), as numpy's ``add.at`` and ``out[ilist] = y``. Every index and the
        value's shape are checked before anything is written."""
        (x, y, ilist), (z,) = inputs, outputs
        if node.inputs[2].type.dtype == "uint64":
            raise NotImplementedError("uint64 indices run perform")
        ctx, fail = sub["ctx"], sub["fail"]
        y_type = node.inputs[1].type
        nd = node.inputs[0].type.ndim
        entry = read_int_at(ilist, node.inputs[2].type.dtype, "i")
        # y with every dimension has one row per index (or one row for all, when its type
        # declares the first dimension broadcastable); a y with fewer goes whole into each row
        if y_type.ndim == nd:
            src_rows = (f"src_all.ndim = {nd - 1};\n"
                        f"for (int d = 1; d < {nd}; d++) {{ src_all.shape[d - 1] = "
                        "src->shape[d]; src_all.strides[d - 1] = src->strides[d]; }")
            src_row = "src_all.data = src->data + (src->shape[0] == 1 ? 0 : i * src->strides[0]);"
        else:
            src_rows = src_row = ""
        return f"""
        {{
            const int64_t n = {ilist}->shape[0], rows = {x}->shape[0];
            for (int64_t i = 0; i < n; i++) {{
                const int64_t r = {entry};
                if (r < -rows || r >= rows) {{
                    tg_error({ctx}, "IndexError: {c_string(str(op))}: index %lld (at position %lld of "
                             "the index vector) is out of bounds for axis 0 with size %lld",
                             (long long)r, (long long)i, (long long)rows);
                    {fail}
                }}
            }}
            int64_t shp[TG_MAXDIM];
            shp[0] = n;
            for (int d = 1; d < {nd}; d++) shp[d] = {x}->shape[d];
            if (tg_check_fits({ctx}, "{c_string(str(op), printf=False)}", {y},
                              NULL, {nd}, shp, "indexed part")) {{ {fail} }}
            {copy_or_view(op, x, z, sub)}
            {_unaliased(y, z, sub)}
            tg_array row = *{z}, src_all = *src;  /* descriptions, no references */
            row.ndim = {nd - 1};
            for (int d = 1; d < {nd}; d++) {{
                row.shape[d - 1] = {z}->shape[d];
                row.strides[d - 1] = {z}->strides[d];
            }}
            {src_rows}
            for (int64_t i = 0; i < n; i++) {{
                int64_t r = {entry};
                if (r < 0) r += rows;
                row.data = {z}->data + r * {z}->strides[0];
                {src_row}
                {{
                    const tg_array *src = &src_all;
                    {_update(op, node.outputs[0].type.dtype, "(&row)")}
                }}
            }}
            {_UNALIASED_END}
        }}
        """


@register(ExtractDiag)
class ExtractDiagC(_StridedC):
    """``np.diagonal`` copied out: a strided description of the diagonal inside ``x`` (the two
    axes replaced by one whose stride is the sum of theirs), then one contiguous copy."""

    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        ndim = node.inputs[0].type.ndim
        axis1, axis2 = op.axes(ndim)
        k = op.offset
        rest = [d for d in range(ndim) if d not in (axis1, axis2)]
        dims = "\n".join(f"diag.shape[{i}] = {x}->shape[{d}]; "
                         f"diag.strides[{i}] = {x}->strides[{d}];" for i, d in enumerate(rest))
        return f"""
        {{
            tg_array diag = *{x};   /* a description of the diagonal inside x, no reference */
            const int64_t n1 = {x}->shape[{axis1}] + ({min(k, 0)}),
                          n2 = {x}->shape[{axis2}] - ({max(k, 0)});
            const int64_t length = n1 < n2 ? (n1 > 0 ? n1 : 0) : (n2 > 0 ? n2 : 0);
            diag.ndim = {ndim - 1};
            diag.base = NULL;
            {dims}
            diag.shape[{ndim - 2}] = length;
            diag.strides[{ndim - 2}] = {x}->strides[{axis1}] + {x}->strides[{axis2}];
            if (length > 0)
                diag.data = {x}->data + (int64_t){max(-k, 0)} * {x}->strides[{axis1}]
                            + (int64_t){max(k, 0)} * {x}->strides[{axis2}];
            if (tg_copy_contiguous({z}, &diag, {sub["ctx"]})) {{ {sub["fail"]} }}
        }}
        """
