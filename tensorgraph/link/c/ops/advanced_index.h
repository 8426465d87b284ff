#ifndef TG_ADVANCED_INDEX_SUPPORT
#define TG_ADVANCED_INDEX_SUPPORT
/* Where advanced indices point: one byte offset into the target per element of their
 * broadcast shape (tensorgraph/link/c/ops/advanced_index.h). Needs strided.h. */
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
