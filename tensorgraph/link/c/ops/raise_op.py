"""C of ``Assert`` (``tensorgraph.raise_op``): the conditions checked in order, then ``x``
passed on as a view. The message reaches the C through ``cstring.c_string`` only."""

from __future__ import annotations

from tensorgraph.link.c.cstring import c_string
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.raise_op import Assert


@register(Assert)
class AssertC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        """A false condition fails with ``"<error>: <msg> (condition k is false)"``: the
        prefix names the exception the linkers raise (link/c/linkers.py)."""
        (x, *conds), (z,) = inputs, outputs
        checks = "\n".join(
            f"if (!*(const uint8_t *)({c})->data) {{ tg_error({sub['ctx']}, "
            f"\"{op.error}: {c_string(op.msg)} (condition {k} is false)\"); {sub['fail']} }}"
            for k, c in enumerate(conds))
        return f"{{\n{checks}\ntg_view({z}, {x});\n}}"
