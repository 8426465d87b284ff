/* Strides viewing a's elements (in C order) with `shape` without a copy, as numpy does when it
 * can: each group of old dimensions that merges into a group of new ones must be contiguous
 * within itself. Returns 0 when a copy is needed. */
static int tg_reshape_strides(const tg_array *a, int nd, const int64_t *shape, int64_t *strides)
{
    const int64_t item = (int64_t)tg_itemsize(a->typenum);
    int64_t osh[TG_MAXDIM], ost[TG_MAXDIM];
    int on = 0;
    if (tg_size(a) == 0) {
        int64_t s = item;
        for (int j = nd - 1; j >= 0; j--) { strides[j] = s; s *= shape[j] > 0 ? shape[j] : 1; }
        return 1;
    }
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != 1) { osh[on] = a->shape[d]; ost[on] = a->strides[d]; on++; }
    int i = 0, j = 0;
    while (i < on && j < nd) {
        int i2 = i + 1, j2 = j + 1;
        int64_t po = osh[i], pn = shape[j];
        while (po != pn) {
            if (pn < po) pn *= shape[j2++];
            else po *= osh[i2++];
        }
        for (int k = i; k < i2 - 1; k++)
            if (ost[k] != ost[k + 1] * osh[k + 1]) return 0;
        strides[j2 - 1] = ost[i2 - 1];
        for (int k = j2 - 2; k >= j; k--) strides[k] = strides[k + 1] * shape[k + 1];
        i = i2;
        j = j2;
    }
    for (; j < nd; j++) strides[j] = item;
    return 1;
}
