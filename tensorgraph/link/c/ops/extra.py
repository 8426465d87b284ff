"""C of ``CumOp`` (``tensorgraph.tensor.extra_ops``: ``cumsum`` / ``cumprod``) for float32 and
float64: the input copied into a C-contiguous output, then accumulated along the axis in place,
one element after the other as numpy's ``add.accumulate`` / ``multiply.accumulate`` do (the
same bits). Other dtypes (whose result dtype differs from the input's) run ``perform``.

Why it matters: a node without C keeps its whole graph out of the whole-graph C run (the
Python loop over the nodes then runs it): PyMC's ``LKJCholeskyCov`` puts a ``cumsum`` into
every log-density that uses it."""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.strided import support
from tensorgraph.tensor.extra_ops import CumOp


@register(CumOp)
class CumOpC(CImplementation):
    def support_code(self, op, node):
        return support("strided.h")

    def code(self, op, node, name, inputs, outputs, sub):
        dtype = node.inputs[0].type.dtype
        if dtype not in ("float32", "float64") or node.outputs[0].type.dtype != dtype:
            raise NotImplementedError(f"{op} of {dtype} runs perform")
        (x,), (z,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        store = cd.storage_type(dtype)
        combine = "+=" if op.mode == "add" else "*="
        axis = op.axis
        return f"""
        {{
            if (tg_alloc({z}, {x}->ndim, {x}->shape, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
            if (tg_size({z}) > 0) {{
                tg_copy_into({z}, {x});
                int64_t outer = 1, inner = 1;
                const int64_t n = {z}->shape[{axis}];
                for (int d = 0; d < {axis}; d++) outer *= {z}->shape[d];
                for (int d = {axis} + 1; d < {z}->ndim; d++) inner *= {z}->shape[d];
                {store} *out = ({store} *){z}->data;
                for (int64_t o = 0; o < outer; o++) {{
                    {store} *block = out + o * n * inner;
                    for (int64_t k = 1; k < n; k++) {{
                        {store} *row = block + k * inner;
                        const {store} *prev = row - inner;
                        for (int64_t i = 0; i < inner; i++) row[i] {combine} prev[i];
                    }}
                }}
            }}
        }}
        """
