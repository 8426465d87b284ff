/* out = the concatenation of ins[0..n-1] along axis (same ndim and dtype, checked sizes).
 * Join's C (tensorgraph/link/c/ops/join.h). Needs strided.h. */
static int tg_join(tg_array *out, int n, const tg_array *const *ins, int axis, int typenum,
                   tg_ctx *ctx)
{
    const int nd = ins[0]->ndim;
    int64_t shp[TG_MAXDIM];
    for (int d = 0; d < nd; d++) shp[d] = ins[0]->shape[d];
    shp[axis] = 0;
    for (int k = 0; k < n; k++) {
        for (int d = 0; d < nd; d++) {
            if (d != axis && ins[k]->shape[d] != shp[d]) {
                char shapes[600] = "", buf[160];
                size_t used = 0;
                for (int q = 0; q < n && used < sizeof shapes; q++)
                    used += (size_t)snprintf(shapes + used, sizeof shapes - used,
                                             q ? ", %s" : "%s",
                                             tg_shape_str(ins[q], buf, sizeof buf));
                return tg_error(ctx, "join along axis %d: inputs of shapes %s do not fit "
                                "(dimension %d: input %d has size %lld, input 0 has %lld)",
                                axis, shapes, d, k, (long long)ins[k]->shape[d],
                                (long long)shp[d]);
            }
        }
        shp[axis] += ins[k]->shape[axis];
    }
    if (tg_alloc(out, nd, shp, typenum, ctx)) return -1;
    tg_array part = *out;  /* a description of out's block for one input (no reference) */
    for (int k = 0; k < n; k++) {
        part.shape[axis] = ins[k]->shape[axis];
        if (part.shape[axis] > 0) tg_copy_into(&part, ins[k]);
        part.data += part.shape[axis] * out->strides[axis];
    }
    return 0;
}
