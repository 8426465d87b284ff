"""C of the creation ops (``tensorgraph.tensor.creation``): ``Alloc``, ``ARange``, ``Eye`` and
``Tri``."""

from __future__ import annotations

import numpy as np

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.strided import int_list, read_int, support
from tensorgraph.tensor.creation import ARange, Alloc, Eye, Tri


@register(Alloc)
class AllocC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def support_code(self, op, node):
        return support("strided.h")

    def code(self, op, node, name, inputs, outputs, sub):
        value, sizes, (z,) = inputs[0], inputs[1:], outputs
        ctx, fail = sub["ctx"], sub["fail"]
        nd = len(sizes)
        value_type = node.inputs[0].type
        lines = [f"int64_t shp[{max(nd, 1)}];"]
        for d, (size, var) in enumerate(zip(sizes, node.inputs[1:])):
            lines.append(f"""shp[{d}] = {read_int(size, var.type.dtype)};
            if (shp[{d}] < 0) {{
                tg_error({ctx}, "alloc: size %lld of dimension {d} is negative",
                         (long long)shp[{d}]);
                {fail}
            }}""")
        static_one = int_list(s == 1 for s in value_type.shape)
        lines.append(f"""
        if (tg_check_fits({ctx}, "alloc", {value}, (const unsigned char[]){static_one}, {nd}, shp,
                          "requested array")) {{ {fail} }}
        if (tg_alloc({z}, {nd}, shp, {cd.typenum(node.outputs[0].type.dtype)}, {ctx})) {{ {fail} }}
        const size_t item = tg_itemsize({z}->typenum);
        int zero = tg_size({value}) == 1;
        for (size_t b = 0; zero && b < item; b++) zero = {value}->data[b] == 0;
        if (zero) memset({z}->data, 0, (size_t)tg_size({z}) * item);
        else tg_copy_into({z}, {value});""")
        return "{\n" + "\n".join(lines) + "\n}"


@register(ARange)
class ARangeC(CImplementation):
    def code(self, op, node, name, inputs, outputs, sub):
        """numpy's way: the length from the bounds, then ``a0 + i * (a1 - a0)`` with ``a0``
        and ``a1`` the first two values rounded to the output dtype (its ``fill``). Floats may
        differ from numpy by an ulp where the compiler fuses the multiply-add."""
        dtype = op.dtype
        if dtype == "bool":
            raise NotImplementedError("arange of booleans runs perform")
        (start, stop, step), (z,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        in_dtypes = [v.type.dtype for v in node.inputs]
        floats = any(cd.is_float(d) for d in in_dtypes)
        if not floats and "uint64" in in_dtypes:
            raise NotImplementedError("arange with uint64 bounds runs perform")
        num = "double" if floats else "int64_t"
        read = [f"(({num})*(const {cd.storage_type(d)} *)({v})->data)"
                for v, d in zip((start, stop, step), in_dtypes)]
        store = cd.storage_type(dtype)
        calc = "float" if dtype in ("float16", "float32") else (
            "double" if dtype == "float64" else store)
        if floats:
            length = "{ const double q = ceil((b - a) / s); n = q > 0 ? (int64_t)q : 0; }"
        else:
            length = ("if (s > 0) n = b > a ? (b - a + s - 1) / s : 0; "
                      "else n = a > b ? (a - b - s - 1) / (-s) : 0;")
        range_check = ""
        if not floats and dtype != "int64" and not cd.is_float(dtype):
            # numpy stores the first two values as Python ints, refusing those out of range
            info = np.iinfo(dtype)
            range_check = f"""
            for (int64_t q = 0; q < (n < 2 ? n : 2); q++) {{
                const int64_t value = a + q * s;
                if (value < {int(info.min)}LL || value > {int(info.max)}LL) {{
                    tg_error({ctx}, "arange: value %lld is out of bounds for {dtype}",
                             (long long)value);
                    {fail}
                }}
            }}"""
        fmt = "%g" if floats else "%lld"
        cast = "" if floats else "(long long)"
        return f"""
        {{
            const {num} a = {read[0]}, b = {read[1]}, s = {read[2]};
            if (s == 0) {{
                tg_error({ctx}, "arange: step must not be zero (start={fmt}, stop={fmt})",
                         {cast}a, {cast}b);
                {fail}
            }}
            int64_t n = 0;
            {length}
            {range_check}
            if (tg_alloc({z}, 1, &n, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
            {store} *out = ({store} *){z}->data;
            const {calc} a0 = ({calc})({store})a, a1 = ({calc})({store})(a + s);
            const {calc} delta = a1 - a0;
            if (n > 0) out[0] = ({store})a0;
            if (n > 1) out[1] = ({store})a1;
            for (int64_t i = 2; i < n; i++) out[i] = ({store})(a0 + i * delta);
        }}
        """


class _MatrixC(CImplementation):
    """The (n, m, k) matrix constructors: zeros, then ones where ``condition`` holds."""

    perform_exact = True  # a copy, selection or integer result

    #: C condition on the row ``i``, column ``j`` and ``k`` for an element to be one
    condition = None

    def code(self, op, node, name, inputs, outputs, sub):
        (z,) = outputs
        ctx, fail = sub["ctx"], sub["fail"]
        n_, m_, k_ = (read_int(v, var.type.dtype) for v, var in zip(inputs, node.inputs))
        store = cd.storage_type(op.dtype)
        one = "1" if op.dtype == "bool" else f"({store})1"
        label = type(op).__name__.lower()
        return f"""
        {{
            const int64_t shp[2] = {{{n_}, {m_}}}, k = {k_};
            if (shp[0] < 0 || shp[1] < 0) {{
                tg_error({ctx}, "{label}: negative size (%lld, %lld)", (long long)shp[0],
                         (long long)shp[1]);
                {fail}
            }}
            if (tg_alloc({z}, 2, shp, {cd.typenum(op.dtype)}, {ctx})) {{ {fail} }}
            {store} *out = ({store} *){z}->data;
            memset(out, 0, (size_t)(shp[0] * shp[1]) * sizeof({store}));
            for (int64_t i = 0; i < shp[0]; i++)
                for (int64_t j = 0; j < shp[1]; j++)
                    if ({self.condition}) out[i * shp[1] + j] = {one};
        }}
        """


@register(Eye)
class EyeC(_MatrixC):
    condition = "j - i == k"


@register(Tri)
class TriC(_MatrixC):
    condition = "j - i <= k"
