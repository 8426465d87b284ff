"""C of joining and splitting (``tensorgraph.tensor.join``): ``MakeVector``, ``Join``
(``join.h``'s ``tg_join``) and ``Split`` (views of the input)."""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.strided import read_int_at, support
from tensorgraph.tensor.join import Join, MakeVector, Split


@register(MakeVector)
class MakeVectorC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (z,) = outputs
        t = cd.storage_type(op.dtype)
        lines = [f"const int64_t n = {len(inputs)};",
                 f"if (tg_alloc({z}, 1, &n, {cd.typenum(op.dtype)}, {sub['ctx']})) "
                 f"{{ {sub['fail']} }}"]
        lines += [f"(({t} *){z}->data)[{i}] = *(const {t} *){v}->data;"
                  for i, v in enumerate(inputs)]
        return "{\n" + "\n".join(lines) + "\n}"


def _runtime_axis(op, node, inputs, sub, what: str) -> str:
    """C declaring ``int axis``: the op's fixed axis, or the value of its axis input (the first
    input of a Join, the second of a Split) checked against the ndim and made non-negative."""
    if op.axis is not None:
        return f"const int axis = {op.axis};"
    at = 0 if what == "join" else 1
    ndim = node.inputs[at + 1].type.ndim if what == "join" else node.inputs[0].type.ndim
    t = cd.storage_type(node.inputs[at].type.dtype)
    return f"""
            const int64_t axis_in = (int64_t)*(const {t} *){inputs[at]}->data;
            if (axis_in < -{ndim} || axis_in >= {ndim}) {{
                tg_error({sub['ctx']}, "{what}: axis %lld is out of range for {ndim}-d inputs "
                         "(it must be in [-{ndim}, {ndim - 1}])", (long long)axis_in);
                {sub['fail']}
            }}
            const int axis = (int)(axis_in < 0 ? axis_in + {ndim} : axis_in);"""


@register(Join)
class JoinC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def support_code(self, op, node):
        return support("strided.h", "join.h")

    def code(self, op, node, name, inputs, outputs, sub):
        (z,) = outputs
        ctx, fail = sub["ctx"], sub["fail"]
        typenum = cd.typenum(node.outputs[0].type.dtype)
        axis = _runtime_axis(op, node, inputs, sub, "join")
        tensors = inputs if op.axis is not None else inputs[1:]
        return f"""
        {{
            {axis}
            const tg_array *ins[{len(tensors)}] = {{{", ".join(tensors)}}};
            if (tg_join({z}, {len(tensors)}, ins, axis, {typenum}, {ctx})) {{ {fail} }}
        }}
        """


@register(Split)
class SplitC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        x, sizes = inputs[0], inputs[-1]
        ctx, fail = sub["ctx"], sub["fail"]
        n_splits = op.n_splits
        axis = _runtime_axis(op, node, inputs, sub, "split")
        entry = read_int_at(sizes, node.inputs[-1].type.dtype, "k")
        views = "\n".join(
            f"tg_view({z}, {x}); {z}->data += offset * {x}->strides[axis]; "
            f"{z}->shape[axis] = part[{k}]; offset += part[{k}];"
            for k, z in enumerate(outputs))
        return f"""
        {{
            {axis}
            if ({sizes}->shape[0] != {n_splits}) {{
                tg_error({ctx}, "split: expected {n_splits} sizes, got %lld",
                         (long long){sizes}->shape[0]);
                {fail}
            }}
            int64_t part[{n_splits}], total = 0;
            int negative = 0;
            char listed[400] = "[", buf[200];
            size_t used = 1;
            for (int64_t k = 0; k < {n_splits}; k++) {{
                part[k] = {entry};
                negative |= part[k] < 0;
                total += part[k];
                if (used < sizeof listed)
                    used += (size_t)snprintf(listed + used, sizeof listed - used,
                                             k ? ", %lld" : "%lld", (long long)part[k]);
            }}
            if (used < sizeof listed) snprintf(listed + used, sizeof listed - used, "]");
            if (negative || total != {x}->shape[axis]) {{
                tg_error({ctx}, "split: sizes %s (sum %lld) do not divide dimension %d "
                         "of size %lld (input shape %s)", listed, (long long)total, axis,
                         (long long){x}->shape[axis], tg_shape_str({x}, buf, sizeof buf));
                {fail}
            }}
            int64_t offset = 0;
            {views}
        }}
        """
