/* The glue library's loops (part of glue.h's library): run_steps, a scan's iterations run
 * without returning to Python in between, the whole graph once per iteration as
 * tg_scan_layout (graph_desc.h) says, reading and writing rows of the loop's buffers in place.
 */

/* Point a at a row of a loop's buffer: nothing is copied; `base` (the buffer's per-run
 * tg_buffer, which owns a reference to its ndarray) keeps the memory alive for any view or
 * ndarray made of the row, and tg_alloc never writes into it (it is foreign). */
static inline void tg_bind_row(tg_array *a, char *data, int ndim, const int64_t *shape,
                               const int64_t *strides, tg_buffer *base)
{
    tg_buffer_incref(base);
    tg_buffer_decref(a->base);
    a->base = base;
    a->data = data;
    a->ndim = ndim;
    for (int d = 0; d < ndim; d++) { a->shape[d] = shape[d]; a->strides[d] = strides[d]; }
}

/* Copy src's elements to dst, an array of src's shape with strides dst_strides (bytes). The
 * two must not overlap (run_steps stages a value that views a loop buffer first). */
static TG_NOINLINE void tg_copy_to(const tg_array *src, char *dst, const int64_t *dst_strides)
{
    const int nd = src->ndim;
    const int64_t item = (int64_t)tg_itemsize(src->typenum);
    const int64_t n = tg_size(src);
    if (n == 0) return;
    if (nd == 0) { memcpy(dst, src->data, (size_t)item); return; }
    int contiguous = tg_is_c_contiguous(src);
    int64_t expected = item;
    for (int d = nd - 1; d >= 0 && contiguous; d--) {
        if (src->shape[d] != 1 && dst_strides[d] != expected) contiguous = 0;
        expected *= src->shape[d];
    }
    if (contiguous) { memcpy(dst, src->data, (size_t)(n * item)); return; }
    const int last = nd - 1;
    const int64_t len = src->shape[last], ss = src->strides[last], ds = dst_strides[last];
    int64_t idx[TG_MAXDIM] = {0};
    for (;;) {
        const char *s = src->data;
        char *d = dst;
        for (int k = 0; k < last; k++) { s += idx[k] * src->strides[k]; d += idx[k] * dst_strides[k]; }
        if (ss == item && ds == item) memcpy(d, s, (size_t)(len * item));
        else for (int64_t i = 0; i < len; i++) memcpy(d + i * ds, s + i * ss, (size_t)item);
        int k = last - 1;
        while (k >= 0 && ++idx[k] == src->shape[k]) idx[k--] = 0;
        if (k < 0) break;
    }
}

/* Whether a scalar's value is true (nonzero, or nan), as Python's bool() of it. */
static int tg_truth(const tg_array *a)
{
    const char *p = a->data;
    switch (a->typenum) {
    case TG_BOOL: case TG_INT8: case TG_UINT8: return *(const int8_t *)p != 0;
    case TG_INT16: case TG_UINT16: return *(const int16_t *)p != 0;
    case TG_FLOAT16: return (*(const uint16_t *)p & 0x7fff) != 0;
    case TG_INT32: case TG_UINT32: return *(const int32_t *)p != 0;
    case TG_FLOAT32: return *(const float *)p != 0.0f;
    case TG_FLOAT64: return *(const double *)p != 0.0;
    case TG_COMPLEX64: return ((const float *)p)[0] != 0.0f || ((const float *)p)[1] != 0.0f;
    case TG_COMPLEX128: return ((const double *)p)[0] != 0.0 || ((const double *)p)[1] != 0.0;
    default: return *(const int64_t *)p != 0;
    }
}

/* The rows of a loop's array (a buffer along its first axis, or an initial value that is one
 * row itself), read from its ndarray for one run. */
typedef struct tg_rows {
    char *data;                     /* row 0 */
    int64_t stride0, nrows;
    int ndim;                       /* of a row */
    int64_t shape[TG_MAXDIM], strides[TG_MAXDIM];
} tg_rows;

/* r: the rows of o, an ndarray of `ndim`-d rows of type `typenum` (o itself when `whole`);
 * -1 when o cannot be used as it is (another type or ndim, unaligned, byte-swapped, or
 * read-only for a buffer that is written). */
static TG_COLD int tg_rows_of(PyObject *o, int whole, int ndim, int typenum, int writes,
                              tg_rows *r)
{
    if (!PyArray_Check(o)) return -1;
    PyArrayObject *a = (PyArrayObject *)o;
    const int lead = !whole;
    if (PyArray_NDIM(a) != ndim + lead || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a)
            || (writes && !PyArray_ISWRITEABLE(a))
            || (PyArray_TYPE(a) != typenum && !PyArray_EquivTypenums(PyArray_TYPE(a), typenum)))
        return -1;
    r->data = PyArray_BYTES(a);
    r->stride0 = whole ? 0 : (int64_t)PyArray_STRIDE(a, 0);
    r->nrows = whole ? 1 : (int64_t)PyArray_DIM(a, 0);
    r->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        r->shape[d] = (int64_t)PyArray_DIM(a, d + lead);
        r->strides[d] = (int64_t)PyArray_STRIDE(a, d + lead);
    }
    return 0;
}

static int tg_same_rows(const tg_rows *a, const tg_rows *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

/* The iterations L->t .. L->n_steps - 1 (see tg_scan_layout). rows: per binding, its buffer's
 * and its initial value's rows; outs: per output, its buffer's rows; bufs: the tg_buffers
 * owning the same (2 per binding); scratch: per output, an array for a value that views a
 * loop buffer (copied there before any row is written). Returns 0 when the iterations ran
 * (L->t the next one), -1 when a node failed (*failed; L->t the iteration, no row of it
 * written), 1 when iteration L->t gave outputs run_steps does not write (a shape or type
 * that differs from the rows', memory for a staged copy) or reads a row its buffer lacks:
 * nothing of it written, so the caller can run that iteration again its own way. No Python:
 * may run without the GIL. */
static int tg_steps(tg_ws *ws, tg_scan_layout *L, const tg_rows *rows, const tg_rows *outs,
                    tg_buffer *const *bufs, tg_array *scratch, int *failed)
{
    const tg_graph_desc *g = ws->g;
    for (; L->t < L->n_steps; ) {
        const int64_t t = L->t;
        for (int b = 0; b < L->nbind; b++) {
            int64_t r = t + L->bind_offset[b];
            const tg_rows *from = &rows[2 * b];
            tg_buffer *base = bufs[2 * b];
            if (r >= 0) {
                if (L->bind_ring[b] > 0) r %= L->bind_ring[b];
            } else {
                from = &rows[2 * b + 1];
                base = bufs[2 * b + 1];
                r = L->bind_init_rows[b] < 0 ? (r == -1 ? 0 : -1) : L->bind_init_rows[b] + r;
            }
            if (r < 0 || r >= from->nrows) return 1;
            tg_bind_row(&ws->v[g->graph_in[L->bind_input[b]]], from->data + r * from->stride0,
                        from->ndim, from->shape, from->strides, base);
        }
        const int k = tg_run_nodes(ws);
        if (k >= 0) { *failed = k; return -1; }
        for (int o = 0; o < L->nout; o++) {
            const tg_array *a = &ws->v[g->graph_out[L->out_output[o]]];
            if (a->ndim != outs[o].ndim) return 1;
            for (int d = 0; d < a->ndim; d++)
                if (a->shape[d] != outs[o].shape[d]) return 1;
        }
        for (int o = 0; o < L->nout; o++) {     /* values viewing a loop buffer: staged */
            const tg_array *a = &ws->v[g->graph_out[L->out_output[o]]];
            int views = 0;
            for (int b = 0; b < 2 * L->nbind && !views; b++) views = a->base == bufs[b];
            scratch[o].data = NULL;
            if (!views || L->out_ring[o] < 0) continue;
            if (tg_alloc(&scratch[o], a->ndim, a->shape, a->typenum, &ws->ctx) != 0) return 1;
            tg_copy_to(a, scratch[o].data, scratch[o].strides);
        }
        for (int o = 0; o < L->nout; o++) {
            const int64_t ring = L->out_ring[o];
            if (ring < 0) continue;
            const int64_t r = ring > 0 ? t % ring : t;
            if (r >= outs[o].nrows) return 1;   /* (a full buffer: before any row is written) */
        }
        for (int o = 0; o < L->nout; o++) {
            const int64_t ring = L->out_ring[o];
            if (ring < 0) continue;
            const tg_array *a = scratch[o].data != NULL ? &scratch[o]
                                                        : &ws->v[g->graph_out[L->out_output[o]]];
            tg_copy_to(a, outs[o].data + (ring > 0 ? t % ring : t) * outs[o].stride0,
                       outs[o].strides);
        }
        L->t = t + 1;
        if (L->cond >= 0 && tg_truth(&ws->v[g->graph_out[L->cond]])) {
            L->stopped = 1;
            return 0;
        }
    }
    return 0;
}

/* run_steps(layout, size, owners, outs, values): run a loop's iterations in this workspace.
 * layout: the address of a filled tg_scan_layout, size: its size as the caller laid it out;
 * owners: per binding, its buffer's ndarray and its initial value's (or None); outs: per
 * output, its buffer's ndarray; values: per graph input, its value at every iteration (the
 * loop's non-sequences), or None for an input bound to rows. Returns 0 when the iterations
 * ran (layout.t is then the next one, layout.stopped says whether the condition ended
 * them), 1 when iteration layout.t must be run by the caller (see tg_steps), 2 when the
 * arrays cannot be used as they are (the caller runs the iterations); raises a node's error
 * through `report`, with layout.t the iteration that failed. The GIL is released while the
 * iterations run unless they are small, profiled or tracked; node times add up over the
 * iterations. */
static TG_COLD PyObject *tg_run_steps_in(tg_ws *ws, PyObject *const *args, Py_ssize_t nargs)
{
    const tg_graph_desc *g = ws->g;
    if (nargs != 5 || !PyLong_Check(args[0]) || !PyLong_Check(args[1])
            || !PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) || !PyTuple_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "run_steps(layout, size, owners, outs, values)");
        return NULL;
    }
    tg_scan_layout *L = (tg_scan_layout *)PyLong_AsVoidPtr(args[0]);
    if (L == NULL || PyLong_AsSsize_t(args[1]) != (Py_ssize_t)sizeof(tg_scan_layout)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "run_steps: tg_scan_layout is %zu bytes in the glue "
                         "library but %zd in the caller's layout of graph_desc.h",
                         sizeof(tg_scan_layout), PyLong_AsSsize_t(args[1]));
        return NULL;
    }
    if (!g->whole || PyTuple_GET_SIZE(args[2]) != 2 * L->nbind
            || PyTuple_GET_SIZE(args[3]) != L->nout || PyTuple_GET_SIZE(args[4]) != g->ngin) {
        PyErr_SetString(PyExc_ValueError, "run_steps: counts do not match the graph");
        return NULL;
    }
    for (int b = 0; b < L->nbind; b++)
        if (L->bind_input[b] < 0 || L->bind_input[b] >= g->ngin
                || PyTuple_GET_ITEM(args[4], L->bind_input[b]) != Py_None) {
            PyErr_SetString(PyExc_ValueError, "run_steps: a bound input has a value");
            return NULL;
        }
    for (int o = 0; o < L->nout; o++)
        if (L->out_output[o] < 0 || L->out_output[o] >= g->ngout) {
            PyErr_SetString(PyExc_ValueError, "run_steps: no such graph output");
            return NULL;
        }
    if (L->cond >= g->ngout) {
        PyErr_SetString(PyExc_ValueError, "run_steps: no such graph output");
        return NULL;
    }
    tg_rows *rows = (tg_rows *)calloc(2 * (size_t)L->nbind + (size_t)L->nout + 1,
                                      sizeof(tg_rows));
    tg_buffer **bufs = (tg_buffer **)calloc(2 * (size_t)L->nbind + 1, sizeof(tg_buffer *));
    tg_array *scratch = (tg_array *)calloc((size_t)L->nout + 1, sizeof(tg_array));
    tg_rows *outs = rows + 2 * L->nbind;
    PyObject *result = NULL;
    int64_t elements = 0;
    if (rows == NULL || bufs == NULL || scratch == NULL) { PyErr_NoMemory(); goto done; }
    for (int b = 0; b < L->nbind; b++) {    /* the arrays, as they are, or the caller's loop */
        const int s = g->graph_in[L->bind_input[b]];
        PyObject *buffer = PyTuple_GET_ITEM(args[2], 2 * b);
        PyObject *init = PyTuple_GET_ITEM(args[2], 2 * b + 1);
        const int64_t init_rows = L->bind_init_rows[b];
        if (tg_rows_of(buffer, 0, g->var_ndim[s], g->var_typenum[s], 0, &rows[2 * b]) != 0
                || (init_rows != 0 && (init == Py_None
                    || tg_rows_of(init, init_rows < 0, g->var_ndim[s], g->var_typenum[s], 0,
                                  &rows[2 * b + 1]) != 0
                    || !tg_same_rows(&rows[2 * b], &rows[2 * b + 1])))) {
            result = PyLong_FromLong(2);
            goto done;
        }
        int64_t row = 1;
        for (int d = 0; d < rows[2 * b].ndim; d++) row *= rows[2 * b].shape[d];
        elements += row * (L->n_steps - L->t);
    }
    for (int o = 0; o < L->nout; o++) {
        const int s = g->graph_out[L->out_output[o]];
        if (tg_rows_of(PyTuple_GET_ITEM(args[3], o), 0, g->var_ndim[s], g->var_typenum[s], 1,
                       &outs[o]) != 0) {
            result = PyLong_FromLong(2);
            goto done;
        }
    }
    for (int i = 0; i < g->ngin; i++) {
        PyObject *v = PyTuple_GET_ITEM(args[4], i);
        if (v == Py_None) continue;
        PyObject *o = tg_coerce(g, g->graph_in[i], v);
        if (o == NULL || tg_set(ws, g->graph_in[i], o) != 0) {
            Py_XDECREF(o);
            goto done;
        }
        elements += (int64_t)PyArray_SIZE((PyArrayObject *)o);
        Py_DECREF(o);
    }
    for (int j = 0; j < 2 * L->nbind; j++) {
        PyObject *owner = PyTuple_GET_ITEM(args[2], j);
        if (owner == Py_None) continue;
        if ((bufs[j] = (tg_buffer *)malloc(sizeof(tg_buffer))) == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        bufs[j]->refcount = 1; bufs[j]->nbytes = 0; bufs[j]->release = tg_py_release;
        bufs[j]->owner = owner;
        Py_INCREF(owner);
    }
    for (int b = 0; b < L->nbind; b++) tg_release(&ws->v[g->graph_in[L->bind_input[b]]]);
    ws->whole_run = 1;
    int status, failed = -1;
    if (ws->ctx.node_seconds != NULL) {
        tg_profile_start(ws);
        status = tg_steps(ws, L, rows, outs, bufs, scratch, &failed);
        ws->loop_seconds[0] += tg_now() - ws->t0;
    } else if (ws->track || elements < TG_NOGIL_MIN_ELEMENTS) {
        status = tg_steps(ws, L, rows, outs, bufs, scratch, &failed);
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = tg_steps(ws, L, rows, outs, bufs, scratch, &failed);
        Py_END_ALLOW_THREADS
    }
    if (failed >= 0) tg_report(ws, failed);
    else result = PyLong_FromLong(status);
done:
    tg_release_foreign(ws, ws->gc);     /* the rows, the values, the views of them */
    for (int o = 0; scratch != NULL && o < L->nout; o++) tg_release(&scratch[o]);
    for (int j = 0; bufs != NULL && j < 2 * L->nbind; j++) tg_buffer_decref(bufs[j]);
    free(rows);
    free(bufs);
    free(scratch);
    return result;
}

static TG_COLD PyObject *tg_run_steps(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TG_IN_A_WORKSPACE(tg_run_steps_in(ws_, args, nargs));
}
