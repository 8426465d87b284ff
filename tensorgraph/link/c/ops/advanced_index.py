"""The C of general advanced indexing: ``AdvancedSubtensor`` (``x[idx]``) and
``AdvancedIncSubtensor`` (``x`` with ``y`` set or added at ``idx``), numpy's semantics;
the static C is ``advanced_index.h``.

How an index is applied, in the generated code:

1. The slices are applied to ``x`` as a view (``tg_index_basic``); the axes taken by integer
   arrays, integer scalars and boolean masks stay whole.
2. ``tg_adv_plan_build`` turns every advanced entry into index arrays, one per axis it
   indexes: an integer scalar is a 0-d array, a boolean mask of k dimensions becomes the k
   arrays of its nonzero positions (in C order, as ``np.nonzero``). It checks mask shapes,
   broadcasts the arrays together (numpy's rules, at run time: a run-time length 1 broadcasts,
   as in numpy), checks every index against its axis (negative ones count from the end) and
   stores the byte offset of each element of the broadcast index shape. Nothing is written
   before all of this succeeded, so a bad index leaves an inplace target untouched.
3. The remaining (sliced and trailing) axes form the *subspace*, copied (get) or updated
   (set/inc) for each offset in C order of the broadcast shape; the broadcast axes go where
   numpy puts them (in place of the advanced entries when they are adjacent, first
   otherwise). Repeated indices therefore accumulate in ``inc`` (``np.add.at``) and the last
   one wins in ``set``, as ``perform`` does.

Errors are numpy's ``IndexError`` messages, prefixed with the op; integer index arrays of any
dtype but ``uint64`` have C (``uint64`` indices run ``perform``).
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_string
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.strided import add_into, int_list, read_int, support
from tensorgraph.link.c.ops.subtensor import copy_or_view
from tensorgraph.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, _advanced_layout


# y written (set) or added (inc) at every offset of the plan, one function per dtype and mode
_UPDATE = r"""
#ifndef TG_ADV_UPDATE_GUARD
#define TG_ADV_UPDATE_GUARD
static TG_NOINLINE void TG_ADV_UPDATE_NAME(const tg_adv_plan *p, tg_array *target,
                                           const tg_array *y, int nsub, const int *sub,
                                           int where)
{
    tg_pair pr;
    int64_t ys[TG_MAXDIM], ctr[TG_MAXDIM] = {0}, yst[1][TG_MAXDIM];
    int64_t shape[TG_MAXDIM];
    if (p->count == 0) return;
    for (int k = 0; k < nsub; k++)
        if (target->shape[sub[k]] == 0) return;
    tg_adv_update_setup(p, target, y, nsub, sub, where, &pr, ys);
    for (int k = 0; k < p->nb; k++) { yst[0][k] = ys[k]; shape[k] = p->bshape[k]; }
    const char *from[1] = { y->data };
    if (pr.nd == 1 && pr.shape[0] == 1) {   /* one element per index */
        for (int64_t j = 0; j < p->count; j++) {
            char *pd = target->data + p->offsets[j];
            const char *ps = from[0];
            TG_ADV_UPDATE_STMT
            tg_adv_next(p->nb, shape, ctr, 1, from, yst);
        }
        return;
    }
    for (int64_t j = 0; j < p->count; j++) {
        TG_PAIR_FOR(&pr, target->data + p->offsets[j], from[0], TG_ADV_UPDATE_STMT);
        tg_adv_next(p->nb, shape, ctr, 1, from, yst);
    }
}
#endif
"""


def update_support(dtype: str, set_instead_of_inc: bool) -> str:
    """The update function of ``update_name(dtype, set_instead_of_inc)``."""
    t = cd.storage_type(dtype)
    stmt = (f"*({t} *)pd = *(const {t} *)ps;" if set_instead_of_inc else add_into(dtype))
    name = update_name(dtype, set_instead_of_inc)
    return (_UPDATE.replace("TG_ADV_UPDATE_GUARD", name.upper() + "_DEFINED")
            .replace("TG_ADV_UPDATE_NAME", name)
            .replace("TG_ADV_UPDATE_STMT", stmt))


def update_name(dtype: str, set_instead_of_inc: bool) -> str:
    return f"tg_adv_{'set' if set_instead_of_inc else 'inc'}_{dtype}"


def index_layout(idx_list, index_vars, ndim: int):
    """Where each part of the index acts on an ``ndim``-d tensor: (basic index on every axis
    as ``tg_index_basic``'s ``kind``/``has`` lists and the C statements setting ``val`` from
    the index inputs, advanced entries as (input position, first axis), subspace axes)."""
    kinds, has, sets, advanced, sub = [], [], [], [], []
    axis = 0
    for position, (entry, var) in enumerate(_entries_with_inputs(idx_list, index_vars)):
        if entry == "array" or entry == "int":
            width = var[0][1].ndim if entry == "array" and var[0][1].dtype == "bool" else 1
            advanced.append((var[0][0], axis))
            kinds += [1] * width
            has += [0, 0, 0] * width
            axis += width
            continue
        kinds.append(1)
        for p, part in enumerate(entry[1:]):
            has.append(int(part is not None))
            if part is not None:
                k, v = var.pop(0)
                sets.append((3 * axis + p, k, v))
        sub.append(axis)
        axis += 1
    sub += list(range(axis, ndim))
    return kinds, has, sets, advanced, sub


def _entries_with_inputs(idx_list, index_vars):
    """(entry, [(input position, variable), ...]) in index order."""
    inputs = iter(enumerate(index_vars))
    for entry in idx_list:
        if entry in ("int", "array"):
            yield entry, [next(inputs)]
        else:
            yield entry, [next(inputs) for p in entry[1:] if p is not None]


def plan_code(op, node_x, idx_list, index_vars, index, target: str, sub) -> tuple[str, list]:
    """C applying the slices to ``target`` (a ``tg_array`` description, changed in place) and
    building ``tg_adv_plan plan`` for the advanced entries; returns it and the subspace axes.
    The caller frees the plan (``tg_adv_plan_free``) on every path after this code."""
    for var in index_vars:
        if var.type.dtype == "uint64":
            raise NotImplementedError("uint64 indices run perform")
    ndim = node_x.type.ndim
    kinds, has, sets, advanced, sub_axes = index_layout(idx_list, index_vars, ndim)
    values = " ".join(f"val[{slot}] = {read_int(index[k], var.type.dtype)};"
                      for slot, k, var in sets)
    name = c_string(str(op), printf=False)
    entries = ", ".join(index[k] for k, _ in advanced)
    axes = int_list(a for _, a in advanced)
    code = f"""
        {{
            static const unsigned char kind[] = {int_list(kinds)}, has[] = {int_list(has)};
            int64_t val[{3 * max(len(kinds), 1)}] = {{0}};
            {values}
            if (tg_index_basic({target}, {len(kinds)}, kind, val, has, {sub["ctx"]},
                               "{name}")) {{ {sub["fail"]} }}
        }}
        const tg_array *const ents[] = {{ {entries} }};
        static const int ent_axis[] = {axes};
        tg_adv_plan plan;
        if (tg_adv_plan_build(&plan, {sub["ctx"]}, "{name}", {target}, {len(advanced)}, ents,
                              ent_axis)) {{ {sub["fail"]} }}"""
    return code, sub_axes


def get_code(op, node, inputs, outputs, sub, where: int) -> str:
    """The C of ``AdvancedSubtensor``: ``outputs[0] = x[index]``."""
    (x, *index), (z,) = inputs, outputs
    plan, sub_axes = plan_code(op, node.inputs[0], op.idx_list, node.inputs[1:], index,
                               "(&xv)", sub)
    return f"""
    {{
        tg_array xv = *{x};   /* x with the slices applied (a description) */
        {plan}
        static const int sub_axes[] = {int_list(sub_axes)};
        const int rc = tg_adv_get({sub["ctx"]}, &plan, &xv, {len(sub_axes)}, sub_axes, {where},
                                  {z});
        tg_adv_plan_free(&plan);
        if (rc) {{ {sub["fail"]} }}
    }}"""


def update_code(op, node, inputs, outputs, sub, where: int, make_z: str) -> str:
    """The C of ``AdvancedIncSubtensor``: ``outputs[0]`` is ``x`` (inplace) or a copy of it,
    with ``y`` set or added at the index; ``make_z`` (C) makes ``z`` that array."""
    (_, y, *index), (z,) = inputs, outputs
    dtype = node.outputs[0].type.dtype
    cd.storage_type(dtype)  # NotImplementedError for dtypes without C
    plan, sub_axes = plan_code(op, node.inputs[0], op.idx_list, node.inputs[2:], index,
                               "(&zv)", sub)
    ctx = sub["ctx"]
    return f"""
    {{
        {make_z}
        tg_array zv = *{z};   /* z with the slices applied (a description) */
        {plan}
        static const int sub_axes[] = {int_list(sub_axes)};
        int64_t shape[TG_MAXDIM];
        const int nd = tg_adv_result_shape(&plan, &zv, {len(sub_axes)}, sub_axes, {where}, shape);
        int rc = tg_check_fits({ctx}, "{c_string(str(op), printf=False)}", {y},
                               NULL, nd, shape, "indexed part");
        tg_array y_copy;   /* y, copied when it shares z's buffer (an inplace update) */
        memset(&y_copy, 0, sizeof y_copy);
        const tg_array *src = {y};
        if (rc == 0 && {y}->base != NULL && {y}->base == {z}->base) {{
            rc = tg_copy_contiguous(&y_copy, {y}, {ctx});
            src = &y_copy;
        }}
        if (rc == 0)
            {update_name(dtype, op.set_instead_of_inc)}(&plan, &zv, src, {len(sub_axes)},
                                                      sub_axes, {where});
        tg_release(&y_copy);
        tg_adv_plan_free(&plan);
        if (rc) {{ {sub["fail"]} }}
    }}"""


@register(AdvancedSubtensor)
class AdvancedSubtensorC(CImplementation):
    perform_exact = True  # a copy, selection or integer result

    def support_code(self, op, node):
        return support("strided.h", "advanced_index.h")

    def code(self, op, node, name, inputs, outputs, sub):
        x, *index = node.inputs
        _, where, _ = _advanced_layout(x, op.idx_list, index, op)
        return get_code(op, node, inputs, outputs, sub, where)


@register(AdvancedIncSubtensor)
class AdvancedIncSubtensorC(CImplementation):
    def support_code(self, op, node):
        return (support("strided.h", "advanced_index.h")
                + update_support(node.outputs[0].type.dtype, op.set_instead_of_inc))

    def code(self, op, node, name, inputs, outputs, sub):
        """Every index is checked before anything is written; repeated indices accumulate
        (inc) or the last one wins (set), as ``np.add.at`` and ``out[idx] = y``."""
        x, y, *index = node.inputs
        _, where, _ = _advanced_layout(x, op.idx_list, index, op)
        return update_code(op, node, inputs, outputs, sub, where,
                           copy_or_view(op, inputs[0], outputs[0], sub))
