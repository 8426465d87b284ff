/* The glue library's runs and calls (part of glue.h's library): one node, the whole graph
 * (with the GIL released when that pays), and the entry points run_all, call, call_trusted,
 * configure and node_call, each run in its workspace or a clone of it.
 */

/* Raise the error of module node k through the Python report callback. */
static TG_COLD void tg_report(tg_ws *ws, int k)
{
    const tg_graph_desc *g = ws->g;
    int nin = g->node_in_off[k + 1] - g->node_in_off[k];
    PyObject *ins = PyTuple_New(nin);
    if (ins == NULL) return;
    for (int j = 0; j < nin; j++) {
        tg_array *a = &ws->v[g->node_in_idx[g->node_in_off[k] + j]];
        PyObject *w = a->data != NULL ? tg_wrap(a) : NULL;
        if (w == NULL) { PyErr_Clear(); w = Py_None; Py_INCREF(w); }
        PyTuple_SET_ITEM(ins, j, w);
    }
    PyObject *r = PyObject_CallFunction(ws->report, "isOi", k, ws->ctx.errmsg, ins, ws->whole_run);
    Py_DECREF(ins);
    Py_XDECREF(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, ws->ctx.errmsg);
}

/* Run module node k; nonzero when it failed (its message in ctx.errmsg). No Python. */
static inline __attribute__((always_inline)) int tg_run_node(tg_ws *ws, int k)
{
    ws->ctx.errmsg[0] = 0;
    int rc;
    tg_array *const *io = ws->io + ws->g->node_in_off[k] + ws->g->node_out_off[k];
    if (ws->ctx.node_seconds == NULL) {
        rc = ((tg_node_fn)ws->g->node_fn[k])(&ws->ctx, io);
    } else {
        const double start = tg_now();
        rc = ((tg_node_fn)ws->g->node_fn[k])(&ws->ctx, io);
        ws->ctx.node_seconds[k] += tg_now() - start;
        ws->node_calls[k]++;
        ws->node_starts[k] = start - ws->t0;
    }
    return rc;
}

/* Node k of a whole-graph run; with gc, the intermediates it read last are released. */
static inline __attribute__((always_inline)) int tg_step(tg_ws *ws, int k)
{
    if (tg_run_node(ws, k) != 0) return -1;
    if (ws->gc)
        for (int j = ws->g->free_off[k]; j < ws->g->free_off[k + 1]; j++)
            tg_release(&ws->v[ws->g->free_idx[j]]);
    if (ws->track) {
        int64_t held = tg_held_buffers(ws);
        if (held > ws->peak_held) ws->peak_held = held;
    }
    return 0;
}

/* Linkers 'cvm' / 'cvm_nogc': the loop over the table of node functions. Linker 'c' (no gc):
 * the library's straight-line run of the nodes (direct calls) unless profiling or tracking,
 * which need the loop's per-node work. Returns the failed node, or -1. No Python: it may run
 * without the GIL. */
static int tg_run_nodes(tg_ws *ws)
{
    if (ws->g->straight != NULL && !ws->gc && !ws->track && ws->ctx.node_seconds == NULL) {
        int failed = -1;
        return ((tg_straight_fn)ws->g->straight)(&ws->ctx, ws->io, &failed) == 0 ? -1
                                                                                : failed;
    }
    for (int k = 0; k < ws->g->nnodes; k++)
        if (tg_step(ws, k) != 0) return k;
    return -1;
}

/* Whether the graph inputs hold enough elements for a run without the GIL to pay. */
static TG_COLD int tg_worth_releasing(const tg_ws *ws)
{
    int64_t n = 0;
    for (int i = 0; i < ws->g->ngin; i++) {
        const tg_array *a = &ws->v[ws->g->graph_in[i]];
        int64_t size = 1;
        for (int d = 0; d < a->ndim; d++) size *= a->shape[d];
        n += size;
        if (n >= TG_NOGIL_MIN_ELEMENTS) return 1;
    }
    return 0;
}

/* A whole-graph run (with the GIL released when the work is big enough and nobody watches
 * the nodes), timed when profiling; on failure the node's error is raised and, with gc, the
 * buffers of the run released. At -O3 (not TG_COLD): the nodes inline here. */
static int tg_run_graph(tg_ws *ws)
{
    ws->whole_run = 1;
    int failed;
    if (ws->ctx.node_seconds != NULL) {
        tg_profile_start(ws);
        failed = tg_run_nodes(ws);
        ws->loop_seconds[0] += tg_now() - ws->t0;
    } else if (ws->track || !tg_worth_releasing(ws)) {
        failed = tg_run_nodes(ws);
    } else {
        Py_BEGIN_ALLOW_THREADS
        failed = tg_run_nodes(ws);
        Py_END_ALLOW_THREADS
    }
    if (failed < 0) return 0;
    tg_report(ws, failed);
    if (ws->gc) tg_release_foreign(ws, 1);
    return -1;
}

static TG_COLD PyObject *tg_run_all_in(tg_ws *ws, PyObject *const *args, Py_ssize_t nargs)
{
    const tg_graph_desc *g = ws->g;
    if (nargs != g->ngin) {
        PyErr_Format(PyExc_TypeError, "run_all takes %d values, got %zd", g->ngin, nargs);
        return NULL;
    }
    for (int i = 0; i < g->ngin; i++) {
        PyObject *o = tg_coerce(g, g->graph_in[i], args[i]);
        if (o == NULL || tg_set(ws, g->graph_in[i], o) != 0) {
            Py_XDECREF(o);
            tg_release_foreign(ws, 0);
            return NULL;
        }
        Py_DECREF(o);
    }
    PyObject *result = NULL;
    if (tg_run_graph(ws) == 0) {
        result = PyTuple_New(g->ngout);
        for (int k = 0; result != NULL && k < g->ngout; k++) {
            PyObject *w = tg_wrap(&ws->v[g->graph_out[k]]);
            if (w == NULL) { Py_CLEAR(result); break; }
            PyTuple_SET_ITEM(result, k, w);
        }
    }
    tg_release_foreign(ws, ws->gc);
    return result;
}

static TG_COLD PyObject *tg_configure(PyObject *self, PyObject *args)
{
    tg_ws *ws = (tg_ws *)PyCapsule_GetPointer(self, "tg_ws");
    if (tg_refuse_if_running(ws, "configure the workspace")) return NULL;
    PyObject *convert, *shared, *updates, *borrow;
    int n_explicit, n_returned, unpack;
    if (!PyArg_ParseTuple(args, "OO!O!O!iip", &convert, &PyTuple_Type, &shared, &PyTuple_Type,
                          &updates, &PyBytes_Type, &borrow, &n_explicit, &n_returned, &unpack))
        return NULL;
    if (n_explicit + PyTuple_GET_SIZE(shared) != ws->g->ngin
            || n_returned + PyTuple_GET_SIZE(updates) != ws->g->ngout
            || PyBytes_GET_SIZE(borrow) != ws->g->ngout) {
        PyErr_SetString(PyExc_ValueError, "configure: counts do not match the graph");
        return NULL;
    }
    Py_INCREF(convert); Py_XSETREF(ws->convert, convert);
    Py_INCREF(shared); Py_XSETREF(ws->shared_cells, shared);
    Py_INCREF(updates); Py_XSETREF(ws->update_cells, updates);
    Py_INCREF(borrow); Py_XSETREF(ws->borrow, borrow);
    ws->n_explicit = n_explicit;
    ws->n_returned = n_returned;
    ws->unpack_single = unpack;
    ws->configured = 1;
    Py_RETURN_NONE;
}

static TG_COLD int tg_bind(tg_ws *ws, int i, PyObject *o, int trusted)
{
    const int s = ws->g->graph_in[i];
    if (tg_fits(ws->g, s, o, !trusted)) return tg_set(ws, s, o);
    PyObject *c = PyObject_CallFunction(ws->convert, "iO", i, o);
    if (c == NULL) return -1;
    if (!tg_fits(ws->g, s, c, 1)) {
        PyObject *fixed = tg_coerce(ws->g, s, c);
        Py_DECREF(c);
        if (fixed == NULL) return -1;
        c = fixed;
    }
    int rc = tg_set(ws, s, c);
    Py_DECREF(c);
    return rc;
}

static TG_COLD PyObject *tg_call_in(tg_ws *ws, PyObject *const *args, Py_ssize_t nargs,
                                    int trusted)
{
    const tg_graph_desc *g = ws->g;
    PyObject *outs[g->ngout + 1];   /* before the first goto: a jump may not enter its scope */
    if (!ws->configured || nargs != ws->n_explicit) Py_RETURN_NOTIMPLEMENTED;
    for (int i = 0; i < ws->n_explicit; i++)
        if (tg_bind(ws, i, args[i], trusted) != 0) goto fail;
    for (int j = 0; j < g->ngin - ws->n_explicit; j++) {
        PyObject *cell = PyTuple_GET_ITEM(ws->shared_cells, j);
        if (tg_bind(ws, ws->n_explicit + j, PyList_GET_ITEM(cell, 0), 0) != 0) goto fail;
    }
    if (tg_run_graph(ws) != 0) goto fail;
    const char *borrow = PyBytes_AS_STRING(ws->borrow);
    for (int k = 0; k < g->ngout; k++) {
        tg_array *a = &ws->v[g->graph_out[k]];
        int copy = a->base == NULL || (a->base->release != NULL && !borrow[k]);
        for (int p = 0; p < k && !copy; p++)
            copy = ws->v[g->graph_out[p]].base == a->base;
        PyObject *w = tg_wrap(a);
        if (w != NULL && copy) {
            PyObject *c = PyArray_NewCopy((PyArrayObject *)w, NPY_CORDER);
            Py_DECREF(w);
            w = c;
        }
        if (w == NULL) {
            for (int p = 0; p < k; p++) Py_DECREF(outs[p]);
            goto fail;
        }
        outs[k] = w;
    }
    tg_release_foreign(ws, ws->gc);
    /* success: commit the updates, then return the outputs */
    for (int u = ws->n_returned; u < g->ngout; u++) {
        PyObject *cell = PyTuple_GET_ITEM(ws->update_cells, u - ws->n_returned);
        PyList_SetItem(cell, 0, outs[u]);  /* steals */
    }
    if (ws->unpack_single) return outs[0];
    PyObject *list = PyList_New(ws->n_returned);
    if (list == NULL) {
        for (int k = 0; k < ws->n_returned; k++) Py_DECREF(outs[k]);
        return NULL;
    }
    for (int k = 0; k < ws->n_returned; k++) PyList_SET_ITEM(list, k, outs[k]);
    return list;
fail:
    tg_release_foreign(ws, ws->gc);
    return NULL;
}

/* An entry point's body run in the workspace of `self` or, when a call is already running
 * there, in a clone of it. */
#define TG_IN_A_WORKSPACE(call) do { \
        tg_ws *ws_ = tg_claim((tg_ws *)PyCapsule_GetPointer(self, "tg_ws")); \
        if (ws_ == NULL) return NULL; \
        PyObject *result_ = call; \
        tg_unclaim(ws_); \
        return result_; \
    } while (0)

static TG_COLD PyObject *tg_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TG_IN_A_WORKSPACE(tg_call_in(ws_, args, nargs, 0));
}

static TG_COLD PyObject *tg_call_trusted(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TG_IN_A_WORKSPACE(tg_call_in(ws_, args, nargs, 1));
}

static TG_COLD PyObject *tg_run_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TG_IN_A_WORKSPACE(tg_run_all_in(ws_, args, nargs));
}

static TG_COLD PyObject *tg_node_call_in(tg_ws *ws, PyObject *const *args, Py_ssize_t nargs)
{
    const tg_graph_desc *g = ws->g;
    if (nargs < 1) { PyErr_SetString(PyExc_TypeError, "node_call(k, *inputs)"); return NULL; }
    long k = PyLong_AsLong(args[0]);
    if (k < 0 || k >= g->nnodes) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "no node %ld in this module", k);
        return NULL;
    }
    const int in0 = g->node_in_off[k], nin = g->node_in_off[k + 1] - in0;
    if (nargs != 1 + nin) {
        PyErr_Format(PyExc_TypeError, "node %ld takes %d inputs, got %zd", k, nin, nargs - 1);
        return NULL;
    }
    for (int j = 0; j < nin; j++) {
        const int s = g->node_in_idx[in0 + j];
        if (g->var_const[s]) continue;
        PyObject *o = tg_coerce(g, s, args[1 + j]);
        if (o == NULL || tg_set(ws, s, o) != 0) {
            if (o == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                PyErr_Format(PyExc_TypeError, "input %d of the node: %S", j, value);
                Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
            }
            Py_XDECREF(o);
            tg_release_foreign(ws, 0);
            return NULL;
        }
        Py_DECREF(o);
    }
    PyObject *result = NULL;
    ws->whole_run = 0;
    if (k == 0 && ws->ctx.node_seconds != NULL) tg_profile_start(ws);
    if (tg_run_node(ws, (int)k) != 0) {
        tg_report(ws, (int)k);
    } else {
        const int out0 = g->node_out_off[k], nout = g->node_out_off[k + 1] - out0;
        result = PyTuple_New(nout);
        for (int j = 0; result != NULL && j < nout; j++) {
            tg_array *a = &ws->v[g->node_out_idx[out0 + j]];
            PyObject *w = tg_wrap(a);
            if (w == NULL) { Py_CLEAR(result); break; }
            PyTuple_SET_ITEM(result, j, w);
            if (ws->gc) tg_release(a);
        }
    }
    tg_release_foreign(ws, 0);
    return result;
}

static TG_COLD PyObject *tg_node_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    TG_IN_A_WORKSPACE(tg_node_call_in(ws_, args, nargs));
}
