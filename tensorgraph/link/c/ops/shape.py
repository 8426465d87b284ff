"""C of the shape ops (``tensorgraph.tensor.shape``): ``Shape``, ``Shape_i``, ``SpecifyShape``
and ``Reshape`` (a view when numpy would make one, ``reshape.h``)."""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.strided import read_int, read_int_at, support
from tensorgraph.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape

_INT64 = cd.typenum("int64")


@register(Shape)
class ShapeC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return f"""
        {{
            const int64_t n = {x}->ndim;
            if (tg_alloc({z}, 1, &n, {_INT64}, {sub['ctx']})) {{ {sub['fail']} }}
            for (int d = 0; d < {x}->ndim; d++) ((int64_t *){z}->data)[d] = {x}->shape[d];
        }}
        """


@register(Shape_i)
class Shape_iC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return f"""
        if (tg_alloc({z}, 0, NULL, {_INT64}, {sub['ctx']})) {{ {sub['fail']} }}
        *(int64_t *){z}->data = {x}->shape[{op.i}];
        """


@register(SpecifyShape)
class SpecifyShapeC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        """A size that differs fails with an ``AssertionError``, as ``perform`` (and PyTensor's
        SpecifyShape) raise: the message prefix names the exception (link/c/linkers.py)."""
        x, sizes, (z,) = inputs[0], inputs[1:], outputs
        ctx, fail = sub["ctx"], sub["fail"]
        ndim = node.inputs[0].type.ndim
        lines = [f"int64_t want[{max(ndim, 1)}];",
                 f"for (int d = 0; d < {ndim}; d++) want[d] = -1;"]
        for d, size, var in zip(op.checked, sizes, node.inputs[1:]):
            lines.append(f"want[{d}] = {read_int(size, var.type.dtype)};")
        lines.append(f"""
        for (int d = 0; d < {ndim}; d++) {{
            if (want[d] >= 0 && {x}->shape[d] != want[d]) {{
                char got[200], exp[200] = "(";
                size_t used = 1;
                for (int e = 0; e < {ndim} && used < sizeof exp; e++) {{
                    const char *sep = e ? ", " : "";
                    if (want[e] >= 0) used += (size_t)snprintf(exp + used, sizeof exp - used,
                                                               "%s%lld", sep, (long long)want[e]);
                    else used += (size_t)snprintf(exp + used, sizeof exp - used, "%s?", sep);
                }}
                if (used < sizeof exp)
                    snprintf(exp + used, sizeof exp - used, "{',' if ndim == 1 else ''})");
                tg_error({ctx}, "AssertionError: SpecifyShape: dimension %d has size %lld, "
                         "expected %lld "
                         "(expected shape %s, got %s)", d, (long long){x}->shape[d],
                         (long long)want[d], exp, tg_shape_str({x}, got, sizeof got));
                {fail}
            }}
        }}
        tg_view({z}, {x});""")
        return "{\n" + "\n".join(lines) + "\n}"


@register(Reshape)
class ReshapeC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def support_code(self, op, node):
        return support("strided.h", "reshape.h")

    def code(self, op, node, name, inputs, outputs, sub):
        (x, shp), (z,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        nd = op.ndim
        entry = read_int_at(shp, node.inputs[1].type.dtype, "i")
        typenum = cd.typenum(node.outputs[0].type.dtype)
        return f"""
        {{
            if ({shp}->shape[0] != {nd}) {{
                tg_error({ctx}, "reshape: got a shape with %lld entries, expected {nd}",
                         (long long){shp}->shape[0]);
                {fail}
            }}
            tg_array req;
            req.ndim = {nd};
            int64_t known = 1;
            int missing = -1, bad = 0;
            for (int64_t i = 0; i < {nd}; i++) {{
                const int64_t s = {entry};
                req.shape[i] = s;
                if (s == -1) {{ bad |= missing >= 0; missing = (int)i; }}
                else if (s < 0) bad = 1;
                else known *= s;
            }}
            char rbuf[300], xbuf[300];
            if (bad) {{
                tg_error({ctx}, "reshape: invalid shape %s: sizes must be >= 0, with at most one "
                         "-1", tg_shape_str(&req, rbuf, sizeof rbuf));
                {fail}
            }}
            const int64_t size = tg_size({x});
            if (missing >= 0 ? (known == 0 || size % known != 0) : known != size) {{
                tg_error({ctx}, "reshape: cannot reshape an array of shape %s (size %lld) into "
                         "shape %s", tg_shape_str({x}, xbuf, sizeof xbuf), (long long)size,
                         tg_shape_str(&req, rbuf, sizeof rbuf));
                {fail}
            }}
            if (missing >= 0) req.shape[missing] = size / known;
            int64_t st[TG_MAXDIM];
            if (tg_reshape_strides({x}, {nd}, req.shape, st)) {{
                tg_view({z}, {x});
                {z}->ndim = {nd};
                for (int d = 0; d < {nd}; d++) {{
                    {z}->shape[d] = req.shape[d];
                    {z}->strides[d] = st[d];
                }}
            }} else {{
                if (tg_alloc({z}, {nd}, req.shape, {typenum}, {ctx})) {{ {fail} }}
                tg_array dst = *{z};  /* z's elements described with x's shape */
                dst.ndim = {x}->ndim;
                int64_t stride = (int64_t)tg_itemsize({x}->typenum);
                for (int d = {x}->ndim - 1; d >= 0; d--) {{
                    dst.shape[d] = {x}->shape[d];
                    dst.strides[d] = stride;
                    stride *= {x}->shape[d];
                }}
                tg_copy_into(&dst, {x});
            }}
        }}
        """
