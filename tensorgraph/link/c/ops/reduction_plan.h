#ifndef TG_RPLAN_DEFINED  /* pasted with every reduction kernel, compiled once */
#define TG_RPLAN_DEFINED
/* ---- reduction plans (tensorgraph/link/c/ops/reduction_plan.h) ---- */
typedef struct {
    int nd, empty;
    const char *base;                         /* first element to read */
    int64_t shape[TG_MAXDIM], ist[TG_MAXDIM]; /* input strides, bytes */
    int64_t ost[TG_MAXDIM];                   /* accumulator strides, elements (0: reduced) */
    unsigned char red[TG_MAXDIM];
} tg_rplan;

static inline int64_t tg_abs64(int64_t v) { return v < 0 ? -v : v; }

static TG_COLD void tg_rplan_make(tg_rplan *pl, const tg_array *x, const unsigned char *red)
{
    int64_t ost[TG_MAXDIM], s = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
        if (red[d]) ost[d] = 0;
        else { ost[d] = s; s *= x->shape[d]; }
    }
    pl->nd = 0; pl->empty = 0; pl->base = x->data;
    for (int d = 0; d < x->ndim; d++) {
        if (x->shape[d] == 0) pl->empty = 1;
        if (x->shape[d] == 1) continue;
        int64_t st = x->strides[d];
        if (red[d] && st < 0) { pl->base += (x->shape[d] - 1) * st; st = -st; }
        /* insertion by decreasing |stride| (stable) */
        int k = pl->nd++;
        while (k > 0 && tg_abs64(pl->ist[k - 1]) < tg_abs64(st)) {
            pl->shape[k] = pl->shape[k - 1]; pl->ist[k] = pl->ist[k - 1];
            pl->ost[k] = pl->ost[k - 1]; pl->red[k] = pl->red[k - 1];
            k--;
        }
        pl->shape[k] = x->shape[d]; pl->ist[k] = st; pl->ost[k] = ost[d]; pl->red[k] = red[d];
    }
    int w = 0;
    for (int d = 0; d < pl->nd; d++) {
        if (w > 0 && pl->red[w - 1] == pl->red[d] &&
            pl->ist[w - 1] == pl->ist[d] * pl->shape[d] &&
            pl->ost[w - 1] == pl->ost[d] * pl->shape[d]) {
            pl->shape[w - 1] *= pl->shape[d];
            pl->ist[w - 1] = pl->ist[d];
            pl->ost[w - 1] = pl->ost[d];
        } else {
            pl->shape[w] = pl->shape[d]; pl->ist[w] = pl->ist[d];
            pl->ost[w] = pl->ost[d]; pl->red[w] = pl->red[d];
            w++;
        }
    }
    pl->nd = w;
}

/* Offsets (input bytes, accumulator elements) of outer position `it` of the first nd dims. */
static inline void tg_rplan_at(const tg_rplan *pl, int nd, int64_t it, int64_t *ioff,
                               int64_t *ooff)
{
    int64_t i = 0, o = 0;
    for (int d = nd - 1; d >= 0; d--) {
        const int64_t k = it % pl->shape[d];
        it /= pl->shape[d];
        i += k * pl->ist[d];
        o += k * pl->ost[d];
    }
    *ioff = i; *ooff = o;
}
#endif
