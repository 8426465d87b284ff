"""The C of general advanced indexing: ``AdvancedSubtensor`` (``x[idx]``) and
``AdvancedIncSubtensor`` (``x`` with ``y`` set or added at ``idx``), numpy's semantics.

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
from tensorgraph.tensor import strided_c as sc

#: bump when the C below changes
ADVANCED_INDEX_VERSION = 2

ADVANCED_INDEX_SUPPORT = r"""
#ifndef TG_ADVANCED_INDEX_SUPPORT
#define TG_ADVANCED_INDEX_SUPPORT
/* Where advanced indices point: one byte offset into the target per element of their
 * broadcast shape (tensorgraph.tensor.advanced_index_c). */
typedef struct tg_adv_plan {
    int nb;                      /* ndim of the broadcast index shape */
    int64_t bshape[TG_MAXDIM];
    int64_t count;               /* elements of the broadcast shape */
    int64_t *offsets;            /* count byte offsets (malloc'd) */
} tg_adv_plan;

static inline int64_t tg_adv_read(const char *p, int typenum)
{
    switch (typenum) {
    case TG_INT8: return *(const int8_t *)p;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_UINT16: return *(const uint16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_UINT32: return *(const uint32_t *)p;
    default: return *(const int64_t *)p;      /* int64 (uint64 indices run perform) */
    }
}

static TG_COLD void tg_adv_plan_free(tg_adv_plan *p)
{
    free(p->offsets);
    p->offsets = NULL;
}

/* Advances the C-order counter ctr over shape (nd dims), moving each of the n pointers
 * ptr[i] by its strides st[i][d]. */
static inline void tg_adv_next(int nd, const int64_t *shape, int64_t *ctr, int n,
                               const char **ptr, int64_t (*st)[TG_MAXDIM])
{
    for (int d = nd - 1; d >= 0; d--) {
        for (int i = 0; i < n; i++) ptr[i] += st[i][d];
        if (++ctr[d] < shape[d]) return;
        for (int i = 0; i < n; i++) ptr[i] -= st[i][d] * shape[d];
        ctr[d] = 0;
    }
}

/* The plan of indexing `target` (whose advanced axes are whole) with the nent entries ent[e]
 * (a 0-d integer, an integer array or a boolean mask) at axes axis[e] (a mask covers
 * ent[e]->ndim axes). On error nothing stays allocated. */
static TG_NOINLINE int tg_adv_plan_build(tg_adv_plan *p, tg_ctx *ctx, const char *op,
                                         const tg_array *target, int nent,
                                         const tg_array *const *ent, const int *axis)
{
    tg_array idx[TG_MAXDIM];          /* one index array per indexed axis */
    int iaxis[TG_MAXDIM], n = 0;
    int64_t nonzero[TG_MAXDIM], total = 0;
    int64_t *positions = NULL;
    memset(p, 0, sizeof *p);
    for (int e = 0; e < nent; e++) {  /* masks: shapes, then their nonzero counts */
        const tg_array *m = ent[e];
        nonzero[e] = 0;
        if (m->typenum != TG_BOOL) continue;
        for (int k = 0; k < m->ndim; k++)
            if (m->shape[k] != target->shape[axis[e] + k])
                return tg_error(ctx, "IndexError: %s: boolean index did not match indexed array "
                                "along axis %d; size of axis is %lld but size of corresponding "
                                "boolean axis is %lld", op, axis[e] + k,
                                (long long)target->shape[axis[e] + k], (long long)m->shape[k]);
        const int64_t size = tg_size(m);
        if (tg_is_c_contiguous(m)) {
            const uint8_t *flat = (const uint8_t *)m->data;
            int64_t count = 0;
            for (int64_t j = 0; j < size; j++) count += flat[j] != 0;
            nonzero[e] = count;
        } else {
            int64_t ctr[TG_MAXDIM] = {0}, st[1][TG_MAXDIM];
            const char *ptr[1] = { m->data };
            for (int k = 0; k < m->ndim; k++) st[0][k] = m->strides[k];
            for (int64_t j = 0; j < size; j++) {
                nonzero[e] += *(const uint8_t *)ptr[0] != 0;
                tg_adv_next(m->ndim, m->shape, ctr, 1, ptr, st);
            }
        }
        total += nonzero[e] * m->ndim;
    }
    positions = (int64_t *)malloc((size_t)total * sizeof(int64_t) + 1);
    if (positions == NULL) return tg_error(ctx, "%s: out of memory for the mask indices", op);
    int64_t *fill = positions;
    for (int e = 0; e < nent; e++) {
        const tg_array *m = ent[e];
        if (m->typenum != TG_BOOL) {
            idx[n] = *m;
            iaxis[n++] = axis[e];
            continue;
        }
        /* row by row along the last axis, the outer axes' counter in ctr */
        const int last = m->ndim - 1;
        const int64_t nz = nonzero[e], width = m->shape[last], step = m->strides[last];
        const int64_t rows = width == 0 ? 0 : tg_size(m) / width;
        int64_t ctr[TG_MAXDIM] = {0}, st[1][TG_MAXDIM], at = 0;
        const char *ptr[1] = { m->data };
        for (int k = 0; k < last; k++) st[0][k] = m->strides[k];
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t c = 0; c < width; c++) {
                if (!*(const uint8_t *)(ptr[0] + c * step)) continue;
                for (int k = 0; k < last; k++) fill[k * nz + at] = ctr[k];
                fill[last * nz + at] = c;
                at++;
            }
            tg_adv_next(last, m->shape, ctr, 1, ptr, st);
        }
        for (int k = 0; k < m->ndim; k++) {
            tg_array *a = &idx[n];
            memset(a, 0, sizeof *a);
            a->data = (char *)(fill + k * nz);
            a->ndim = 1;
            a->typenum = TG_INT64;
            a->shape[0] = nz;
            a->strides[0] = sizeof(int64_t);
            iaxis[n++] = axis[e] + k;
        }
        fill += nz * m->ndim;
    }
    /* broadcast the index arrays together */
    int nb = 0;
    for (int i = 0; i < n; i++) if (idx[i].ndim > nb) nb = idx[i].ndim;
    for (int d = 0; d < nb; d++) p->bshape[d] = 1;
    for (int i = 0; i < n; i++)
        for (int d = 0; d < idx[i].ndim; d++) {
            const int64_t len = idx[i].shape[d], bd = nb - idx[i].ndim + d;
            if (len == 1 || len == p->bshape[bd]) continue;
            if (p->bshape[bd] == 1) { p->bshape[bd] = len; continue; }
            char msg[600], buf[96];
            size_t used = 0;
            msg[0] = 0;
            for (int j = 0; j < n && used < sizeof msg; j++)
                used += (size_t)snprintf(msg + used, sizeof msg - used, "%s ",
                                         tg_shape_str(&idx[j], buf, sizeof buf));
            free(positions);
            return tg_error(ctx, "IndexError: %s: shape mismatch: indexing arrays could not be "
                            "broadcast together with shapes %s", op, msg);
        }
    p->nb = nb;
    p->count = 1;
    for (int d = 0; d < nb; d++) p->count *= p->bshape[d];
    p->offsets = (int64_t *)malloc((size_t)p->count * sizeof(int64_t) + 1);
    if (p->offsets == NULL) {
        free(positions);
        return tg_error(ctx, "%s: out of memory for the index offsets", op);
    }
    /* every element's offset, every index checked */
    int64_t st[TG_MAXDIM][TG_MAXDIM], ctr[TG_MAXDIM] = {0};
    const char *ptr[TG_MAXDIM];
    for (int i = 0; i < n; i++) {
        ptr[i] = idx[i].data;
        for (int d = 0; d < nb; d++) {
            const int k = d - (nb - idx[i].ndim);
            st[i][d] = (k < 0 || idx[i].shape[k] == 1) ? 0 : idx[i].strides[k];
        }
    }
    int wide = nb == 1;   /* one broadcast axis and int64 indices: the common case */
    for (int i = 0; i < n; i++)
        wide &= tg_itemsize(idx[i].typenum) == 8 && idx[i].typenum != TG_UINT64 &&
                idx[i].typenum != TG_ULONG;
    if (wide && n <= 4) {
        const int64_t *where_[4];
        int64_t step_[4], len_[4], st_[4];
        for (int i = 0; i < n; i++) {
            where_[i] = (const int64_t *)ptr[i];
            step_[i] = st[i][0];
            len_[i] = target->shape[iaxis[i]];
            st_[i] = target->strides[iaxis[i]];
        }
        for (int64_t j = 0; j < p->count; j++) {
            int64_t off = 0;
            for (int i = 0; i < n; i++) {
                int64_t v = *(const int64_t *)((const char *)where_[i] + j * step_[i]);
                if (v < -len_[i] || v >= len_[i]) {
                    free(positions);
                    tg_adv_plan_free(p);
                    return tg_error(ctx, "IndexError: %s: index %lld is out of bounds for axis "
                                    "%d with size %lld", op, (long long)v, iaxis[i],
                                    (long long)len_[i]);
                }
                off += (v < 0 ? v + len_[i] : v) * st_[i];
            }
            p->offsets[j] = off;
        }
        free(positions);
        return 0;
    }
    for (int64_t j = 0; j < p->count; j++) {
        int64_t off = 0;
        for (int i = 0; i < n; i++) {
            int64_t v = tg_adv_read(ptr[i], idx[i].typenum);
            const int64_t len = target->shape[iaxis[i]];
            if (v < -len || v >= len) {
                free(positions);
                tg_adv_plan_free(p);
                return tg_error(ctx, "IndexError: %s: index %lld is out of bounds for axis %d "
                                "with size %lld", op, (long long)v, iaxis[i], (long long)len);
            }
            if (v < 0) v += len;
            off += v * target->strides[iaxis[i]];
        }
        p->offsets[j] = off;
        tg_adv_next(nb, p->bshape, ctr, n, ptr, st);
    }
    free(positions);
    return 0;
}

/* The shape of target[index]: the nsub subspace axes sub[] of target with the broadcast
 * shape inserted before subspace axis `where`. Returns its ndim. */
static TG_COLD int tg_adv_result_shape(const tg_adv_plan *p, const tg_array *target, int nsub,
                                       const int *sub, int where, int64_t *shape)
{
    int nd = 0;
    for (int k = 0; k < where; k++) shape[nd++] = target->shape[sub[k]];
    for (int d = 0; d < p->nb; d++) shape[nd++] = p->bshape[d];
    for (int k = where; k < nsub; k++) shape[nd++] = target->shape[sub[k]];
    return nd;
}

/* out's elements (contiguous, since one per index) read at the plan's offsets */
#define TG_ADV_GATHER(T) do {                                                              \
    T *o_ = (T *)out->data;                                                               \
    for (int64_t j = 0; j < p->count; j++) o_[j] = *(const T *)(src->data + offsets[j]);  \
} while (0)

/* out = src[index] (out allocated here, C-contiguous). */
static TG_NOINLINE int tg_adv_get(tg_ctx *ctx, const tg_adv_plan *p, const tg_array *src,
                                  int nsub, const int *sub, int where, tg_array *out)
{
    int64_t shape[TG_MAXDIM];
    const int nd = tg_adv_result_shape(p, src, nsub, sub, where, shape);
    if (tg_alloc(out, nd, shape, src->typenum, ctx)) return -1;
    const size_t item = tg_itemsize(src->typenum);
    tg_array d = *out, s = *src;   /* one subspace of each (descriptions) */
    d.ndim = s.ndim = nsub;
    int64_t block = (int64_t)item;  /* bytes between consecutive broadcast elements in out */
    for (int k = 0; k < nsub; k++) {
        const int od = k < where ? k : k + p->nb;
        d.shape[k] = s.shape[k] = shape[od];
        d.strides[k] = out->strides[od];
        s.strides[k] = src->strides[sub[k]];
        if (k >= where) block *= shape[od];
    }
    if (p->count == 0 || tg_size(&d) == 0) return 0;
    tg_pair pr;
    tg_pair_setup(&pr, &d, &s);
    const int64_t *offsets = p->offsets;
    if (pr.nd == 1 && pr.shape[0] == 1) {   /* one element per index: a gather */
        switch (item) {
        case 1: TG_ADV_GATHER(uint8_t); break;
        case 2: TG_ADV_GATHER(uint16_t); break;
        case 4: TG_ADV_GATHER(uint32_t); break;
        case 8: TG_ADV_GATHER(uint64_t); break;
        default:
            for (int64_t j = 0; j < p->count; j++)
                memcpy(out->data + j * block, src->data + offsets[j], item);
        }
        return 0;
    }
    if (pr.nd == 1 && pr.sd[0] == (int64_t)item && pr.ss[0] == (int64_t)item) {  /* rows */
        for (int64_t j = 0; j < p->count; j++)
            memcpy(out->data + j * block, src->data + offsets[j], (size_t)pr.shape[0] * item);
        return 0;
    }
    for (int64_t j = 0; j < p->count; j++) {
        char *dst = out->data + j * block;
        const char *from = src->data + offsets[j];
        switch (item) {
        case 1: TG_PAIR_FOR(&pr, dst, from, *(uint8_t *)pd = *(const uint8_t *)ps;); break;
        case 2: TG_PAIR_FOR(&pr, dst, from, *(uint16_t *)pd = *(const uint16_t *)ps;); break;
        case 4: TG_PAIR_FOR(&pr, dst, from, *(uint32_t *)pd = *(const uint32_t *)ps;); break;
        case 8: TG_PAIR_FOR(&pr, dst, from, *(uint64_t *)pd = *(const uint64_t *)ps;); break;
        default: TG_PAIR_FOR(&pr, dst, from, memcpy(pd, ps, item);); break;
        }
    }
    return 0;
}

/* The walk of one subspace of target (d) with the value y broadcast to it (s), and y's
 * strides along the broadcast axes (ys), for the updates below. y is right-aligned with
 * target[index], whose shape is `shape` (nd axes). */
static TG_COLD void tg_adv_update_setup(const tg_adv_plan *p, const tg_array *target,
                                        const tg_array *y, int nsub, const int *sub, int where,
                                        tg_pair *pr, int64_t *ys)
{
    int64_t shape[TG_MAXDIM], yst[TG_MAXDIM];
    const int nd = tg_adv_result_shape(p, target, nsub, sub, where, shape);
    const int off = nd - y->ndim;
    for (int t = 0; t < nd; t++)
        yst[t] = (t < off || y->shape[t - off] == 1) ? 0 : y->strides[t - off];
    tg_array d = *target, s = *y;
    d.ndim = s.ndim = nsub;
    for (int k = 0; k < nsub; k++) {
        const int od = k < where ? k : k + p->nb;
        d.shape[k] = s.shape[k] = shape[od];
        d.strides[k] = target->strides[sub[k]];
        s.strides[k] = yst[od];
    }
    for (int k = 0; k < p->nb; k++) ys[k] = yst[where + k];
    tg_pair_setup(pr, &d, &s);
}
#endif /* TG_ADVANCED_INDEX_SUPPORT */
"""

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


def version() -> tuple:
    return (ADVANCED_INDEX_VERSION, sc.STRIDED_VERSION)


def update_support(dtype: str, set_instead_of_inc: bool) -> str:
    """The update function of ``update_name(dtype, set_instead_of_inc)``."""
    t = cd.storage_type(dtype)
    stmt = (f"*({t} *)pd = *(const {t} *)ps;" if set_instead_of_inc else sc.add_into(dtype))
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
    values = " ".join(f"val[{slot}] = {sc.read_int(index[k], var.type.dtype)};"
                      for slot, k, var in sets)
    name = c_string(str(op), printf=False)
    entries = ", ".join(index[k] for k, _ in advanced)
    axes = sc.int_list(a for _, a in advanced)
    code = f"""
        {{
            static const unsigned char kind[] = {sc.int_list(kinds)}, has[] = {sc.int_list(has)};
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
        static const int sub_axes[] = {sc.int_list(sub_axes)};
        const int rc = tg_adv_get({sub["ctx"]}, &plan, &xv, {len(sub_axes)}, sub_axes, {where},
                                  {z});
        tg_adv_plan_free(&plan);
        if (rc) {{ {sub["fail"]} }}
    }}"""


def update_code(op, node, inputs, outputs, sub, where: int, copy_or_view: str) -> str:
    """The C of ``AdvancedIncSubtensor``: ``outputs[0]`` is ``x`` (inplace) or a copy of it,
    with ``y`` set or added at the index; ``copy_or_view`` makes ``z`` that array."""
    (x, y, *index), (z,) = inputs, outputs
    dtype = node.outputs[0].type.dtype
    cd.storage_type(dtype)  # NotImplementedError for dtypes without C
    plan, sub_axes = plan_code(op, node.inputs[0], op.idx_list, node.inputs[2:], index,
                               "(&zv)", sub)
    ctx = sub["ctx"]
    return f"""
    {{
        {copy_or_view}
        tg_array zv = *{z};   /* z with the slices applied (a description) */
        {plan}
        static const int sub_axes[] = {sc.int_list(sub_axes)};
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
