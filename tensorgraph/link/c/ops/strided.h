/* -- strided helpers of the shape / creation / join / indexing ops
 * (tensorgraph/link/c/ops/strided.h); guarded because ops append their own helpers to it (so
 * the texts differ) */
#ifndef TG_STRIDED_SUPPORT
#define TG_STRIDED_SUPPORT
typedef struct tg_pair {
    int nd;                       /* >= 1 */
    int64_t shape[TG_MAXDIM];
    int64_t sd[TG_MAXDIM];        /* destination strides */
    int64_t ss[TG_MAXDIM];        /* source strides (0 where broadcast) */
} tg_pair;

/* The walk over dst with src broadcast to it; returns the number of elements. */
static TG_COLD int64_t tg_pair_setup(tg_pair *p, const tg_array *dst, const tg_array *src)
{
    int64_t n = 1;
    int nd = 0;
    const int off = dst->ndim - src->ndim;
    for (int d = 0; d < dst->ndim; d++) {
        const int64_t size = dst->shape[d];
        n *= size;
        if (size == 1) continue;  /* contributes nothing to the walk */
        const int64_t ss = (d < off || src->shape[d - off] == 1) ? 0 : src->strides[d - off];
        if (nd > 0 && p->sd[nd - 1] == dst->strides[d] * size && p->ss[nd - 1] == ss * size) {
            p->shape[nd - 1] *= size;   /* merge with the previous dimension */
            p->sd[nd - 1] = dst->strides[d];
            p->ss[nd - 1] = ss;
            continue;
        }
        p->shape[nd] = size;
        p->sd[nd] = dst->strides[d];
        p->ss[nd] = ss;
        nd++;
    }
    if (nd == 0) { p->shape[0] = 1; p->sd[0] = 0; p->ss[0] = 0; nd = 1; }
    p->nd = nd;
    return n;
}

/* Runs STMT for every element pair, with `char *pd` and `const char *ps` pointing at them. */
#define TG_PAIR_FOR(P, DBASE, SBASE, STMT) do {                                              \
    const tg_pair *tg_p_ = (P);                                                              \
    const int tg_nd_ = tg_p_->nd;                                                            \
    const int64_t tg_n_ = tg_p_->shape[tg_nd_ - 1];                                          \
    const int64_t tg_sdi_ = tg_p_->sd[tg_nd_ - 1], tg_ssi_ = tg_p_->ss[tg_nd_ - 1];          \
    int64_t tg_rows_ = 1, tg_idx_[TG_MAXDIM] = {0};                                          \
    for (int tg_d_ = 0; tg_d_ < tg_nd_ - 1; tg_d_++) tg_rows_ *= tg_p_->shape[tg_d_];        \
    char *tg_pd_ = (DBASE);                                                                  \
    const char *tg_ps_ = (SBASE);                                                            \
    for (int64_t tg_r_ = 0; tg_r_ < tg_rows_; tg_r_++) {                                     \
        for (int64_t tg_j_ = 0; tg_j_ < tg_n_; tg_j_++) {                                    \
            char *pd = tg_pd_ + tg_j_ * tg_sdi_;                                             \
            const char *ps = tg_ps_ + tg_j_ * tg_ssi_;                                       \
            STMT                                                                             \
        }                                                                                    \
        for (int tg_d_ = tg_nd_ - 2; tg_d_ >= 0; tg_d_--) {                                  \
            tg_pd_ += tg_p_->sd[tg_d_]; tg_ps_ += tg_p_->ss[tg_d_];                          \
            if (++tg_idx_[tg_d_] < tg_p_->shape[tg_d_]) break;                               \
            tg_pd_ -= tg_p_->sd[tg_d_] * tg_p_->shape[tg_d_];                                \
            tg_ps_ -= tg_p_->ss[tg_d_] * tg_p_->shape[tg_d_];                                \
            tg_idx_[tg_d_] = 0;                                                              \
        }                                                                                    \
    }                                                                                        \
} while (0)

/* dst[...] = src (one dtype; src broadcast to dst's shape). Cold (-O1, see runtime.h): the
 * element loops below are strided, which gcc does not vectorize anyway, and at -O3 this
 * function alone cost 0.2 s of compile time in every module (2026-11-25 at b36fe35); rows
 * contiguous on both sides are copied by memmove. */
static TG_COLD void tg_copy_into(tg_array *dst, const tg_array *src)
{
    const size_t item = tg_itemsize(dst->typenum);
    if (tg_is_c_contiguous(dst) && tg_is_c_contiguous(src) && tg_size(dst) == tg_size(src)
            && dst->ndim >= src->ndim) {
        if (tg_size(dst) > 0) memmove(dst->data, src->data, (size_t)tg_size(dst) * item);
        return;
    }
    tg_pair p;
    if (tg_pair_setup(&p, dst, src) == 0) return;
    const int last = p.nd - 1;
    if (p.sd[last] == (int64_t)item && p.ss[last] == (int64_t)item) {
        const size_t row = (size_t)p.shape[last] * item;
        tg_pair rows = p;
        rows.shape[last] = 1;   /* walk the rows; each one memmove */
        TG_PAIR_FOR(&rows, dst->data, src->data, memmove(pd, ps, row););
        return;
    }
    switch (item) {
    case 1: TG_PAIR_FOR(&p, dst->data, src->data, *(uint8_t *)pd = *(const uint8_t *)ps;); break;
    case 2: TG_PAIR_FOR(&p, dst->data, src->data, *(uint16_t *)pd = *(const uint16_t *)ps;); break;
    case 4: TG_PAIR_FOR(&p, dst->data, src->data, *(uint32_t *)pd = *(const uint32_t *)ps;); break;
    case 8: TG_PAIR_FOR(&p, dst->data, src->data, *(uint64_t *)pd = *(const uint64_t *)ps;); break;
    default: TG_PAIR_FOR(&p, dst->data, src->data, memcpy(pd, ps, item);); break;
    }
}

/* a's elements copied into a new C-contiguous buffer owned by out (out must not be a). */
static TG_COLD int tg_copy_contiguous(tg_array *out, const tg_array *a, tg_ctx *ctx)
{
    if (tg_alloc(out, a->ndim, a->shape, a->typenum, ctx)) return -1;
    tg_copy_into(out, a);
    return 0;
}

/* Whether value (right-aligned) can be broadcast into `target` (ndim entries): each dimension
 * equal, or of size 1 where the value's type declares it (static_one[d] for value dim d), or of
 * size 1 anywhere when static_one is NULL (numpy's rule for set/inc values). */
static TG_COLD int tg_check_fits(tg_ctx *ctx, const char *op, const tg_array *value,
                         const unsigned char *static_one, int ndim, const int64_t *target,
                         const char *what)
{
    char vbuf[200], tbuf[200];
    tg_array t;
    t.ndim = ndim;
    for (int d = 0; d < ndim; d++) t.shape[d] = target[d];
    const int off = ndim - value->ndim;
    if (off < 0)
        return tg_error(ctx, "%s: the value has shape %s, more dimensions than the %s of shape "
                        "%s", op, tg_shape_str(value, vbuf, sizeof vbuf), what,
                        tg_shape_str(&t, tbuf, sizeof tbuf));
    for (int d = 0; d < value->ndim; d++) {
        const int64_t size = value->shape[d], want = target[d + off];
        if (size != want && !(size == 1 && (static_one == NULL || static_one[d])))
            return tg_error(ctx, "%s: %scannot put a value of shape %s into the %s of shape "
                            "%s: dimension %d of the value has size %lld, the target %lld (%s)",
                            op, size == 1 ? "Runtime broadcasting not allowed: " : "",
                            tg_shape_str(value, vbuf, sizeof vbuf), what,
                            tg_shape_str(&t, tbuf, sizeof tbuf), d, (long long)size,
                            (long long)want, size == 1 ? "its type does not declare the "
                            "dimension broadcastable (size 1)" : "the sizes differ");
    }
    return 0;
}

/* Applies a basic index to a (in place: data, ndim, shape, strides). Entry e is an int
 * (kind[e] == 0, value val[3e]) or a slice (kind[e] == 1) whose start/stop/step are
 * val[3e..3e+2] where has[3e..3e+2] is set, Python's defaults elsewhere. */
static TG_COLD int tg_index_basic(tg_array *a, int nidx, const unsigned char *kind, const int64_t *val,
                          const unsigned char *has, tg_ctx *ctx, const char *op)
{
    int w = 0;
    char *data = a->data;
    for (int d = 0; d < a->ndim; d++) {
        const int64_t size = a->shape[d], stride = a->strides[d];
        if (d >= nidx) { a->shape[w] = size; a->strides[w] = stride; w++; continue; }
        if (kind[d] == 0) {
            int64_t i = val[3 * d];
            if (i < -size || i >= size)
                return tg_error(ctx, "IndexError: %s: index %lld is out of bounds for axis %d with size %lld",
                                op, (long long)i, d, (long long)size);
            if (i < 0) i += size;
            data += i * stride;
            continue;
        }
        const int64_t step = has[3 * d + 2] ? val[3 * d + 2] : 1;
        if (step == 0)
            return tg_error(ctx, "%s: slice step cannot be zero (axis %d)", op, d);
        int64_t start, stop;
        if (has[3 * d]) {
            start = val[3 * d];
            if (start < 0) { start += size; if (start < 0) start = step < 0 ? -1 : 0; }
            else if (start >= size) start = step < 0 ? size - 1 : size;
        } else start = step < 0 ? size - 1 : 0;
        if (has[3 * d + 1]) {
            stop = val[3 * d + 1];
            if (stop < 0) { stop += size; if (stop < 0) stop = step < 0 ? -1 : 0; }
            else if (stop >= size) stop = step < 0 ? size - 1 : size;
        } else stop = step < 0 ? -1 : size;
        int64_t len = 0;
        if (step < 0) { if (stop < start) len = (start - stop - 1) / (-step) + 1; }
        else if (start < stop) len = (stop - start - 1) / step + 1;
        if (len > 0) data += start * stride;
        a->shape[w] = len;
        a->strides[w] = stride * step;
        w++;
    }
    a->data = data;
    a->ndim = w;
    return 0;
}
#endif /* TG_STRIDED_SUPPORT */
