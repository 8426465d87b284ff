/* The Python side of every graph: ndarray <-> tg_array, and the entry points.
 *
 * Compiled once per cache into the glue library (codegen.py), a plain shared library loaded
 * with ctypes.PyDLL like the node libraries are loaded with ctypes.CDLL. It runs any graph
 * from its description (tg_graph_desc, graph_desc.h, filled by field name in Python) and the
 * addresses of its node functions: the libraries of node functions hold no Python, so
 * compiling them parses neither Python.h nor numpy's headers. Exports: tg_make_workspace,
 * tg_graph_desc_size, tg_pool_stats, tg_pool_configure.
 * A *workspace* (tg_ws) holds one tg_array per variable of the graph; it lives in a capsule
 * that is the `self` of every entry point, so each linked function has its own buffers.
 *
 * Threads and re-entry: an entry point that finds its workspace busy (another thread's call
 * is in it, or a call re-enters the function from Python code it ran: an argument's
 * __array__, the convert callback) runs on a *clone*: the same graph with its own buffers,
 * kept on the workspace's list of idle clones for the next time. The GIL is released while
 * the nodes of a whole-graph run compute (kernels never touch Python), unless the inputs are
 * too small for that to pay or the run is profiled; buffers a kernel drops may then be
 * ndarrays' memory, so their counts are atomic and a foreign release takes the GIL.
 *
 * Entry points (METH_FASTCALL, called with the GIL held; kernels never touch Python):
 *   run_all(*graph_inputs)  -> tuple of graph outputs        (the VM's whole-graph run)
 *   node_call(k, *inputs)   -> tuple of node k's outputs       (per-node thunks)
 *   configure(...)          store what `call` needs (Function semantics)
 *   profile(times, calls, starts, loop) / profile(None): time every node run in C into
 *       these numpy arrays (float64 / int64 / float64 per node, float64[1] for the whole
 *       loop), or stop timing. Only then does the loop read the clock.
 *   debug_state(track)      buffer counters (allocations, buffers held by intermediates, the
 *       most held at once during runs while `track` is on) for the linker tests
 *   call(*args), call_trusted(*args): a whole Function call: input checks (conversions go
 *       through the Python `convert` callback, which raises the user-facing TypeError), shared
 *       values, run, outputs copied when they alias memory the caller does not own, updates
 *       committed to the shared cells only after everything succeeded. NotImplemented when
 *       the arguments need Python's binding (count differs).
 *   run_steps(layout, size, owners, outs, values): a loop's iterations (tensorgraph/scan): the
 *       graph run once per iteration as tg_scan_layout (graph_desc.h) says, without returning
 *       to Python in between (see tg_run_steps_in).
 */

/* A node function, and linker 'c''s straight-line run of every node (on failure *failed is
 * the node). */
typedef int (*tg_node_fn)(tg_ctx *ctx, tg_array *const *io);
typedef int (*tg_straight_fn)(tg_ctx *ctx, tg_array *const *io, int *failed);

static TG_COLD void tg_py_release(tg_buffer *b)
{
    PyObject *owner = (PyObject *)b->owner;
    free(b);
    if (owner == NULL) return;
    if (PyGILState_Check()) { Py_DECREF(owner); return; }
    PyGILState_STATE gil = PyGILState_Ensure();   /* dropped by a run without the GIL */
    Py_DECREF(owner);
    PyGILState_Release(gil);
}

/* Whole-graph runs whose inputs hold fewer elements than this keep the GIL: releasing and
 * taking it back (about 0.1 us, more when other threads wait for it) would cost more than
 * the other threads gain. */
#define TG_NOGIL_MIN_ELEMENTS 4096
/* Idle clones a workspace keeps for later calls (more are freed when their call ends). */
#define TG_MAX_IDLE_CLONES 8

typedef struct tg_ws {
    tg_ctx ctx;
    tg_graph_desc graph;    /* a copy of the description codegen.py filled */
    const tg_graph_desc *g; /* &graph */
    PyObject *tables;       /* what the arrays of `graph` point into (kept alive) */
    tg_array *v;            /* g->nvars + 1 arrays */
    tg_array **io;          /* per node, pointers to its inputs then outputs in v */
    int gc;
    int failed_node;
    PyObject *report;       /* report(k, message, inputs): raises the node error */
    PyObject *consts;       /* tuple of constant ndarrays (kept alive) */
    PyObject *convert;      /* convert(pos, value) -> ndarray or raises */
    PyObject *shared_cells; /* tuple of one-element lists, graph inputs after the explicit */
    PyObject *update_cells; /* tuple of one-element lists, targets of the trailing outputs */
    PyObject *borrow;       /* bytes: 1 per graph output that may be handed out uncopied */
    int n_explicit, n_returned, unpack_single, configured;
    int whole_run;          /* 1 while running the whole graph, 0 for one node */
    /* profiling (ctx.node_seconds != NULL): the arrays of profile(), kept alive by `prof` */
    PyObject *prof;
    int64_t *node_calls;
    double *node_starts;    /* start of each node in the last run, from t0; -1: did not run */
    double *loop_seconds;
    double t0;
    int track;              /* debug_state(1): count held buffers after every node */
    int64_t peak_held;
    int busy;               /* a call is running in this workspace */
    struct tg_ws *parent;   /* clones: the workspace they copy (it outlives them) */
    struct tg_ws *idle;     /* the idle clones of this workspace, linked by `next` */
    struct tg_ws *next;
    int nidle;
    int nclones_busy;       /* clones of this workspace running a call now */
} tg_ws;

static TG_COLD void tg_release_foreign(tg_ws *ws, int also_owned)
{
    for (int s = 0; s < ws->g->nvars; s++) {
        if (ws->g->var_const[s] || ws->v[s].base == NULL) continue;
        if (also_owned || ws->v[s].base->release != NULL) tg_release(&ws->v[s]);
    }
}

static TG_COLD void tg_ws_destroy(tg_ws *ws)
{
    while (ws->idle != NULL) {
        tg_ws *c = ws->idle;
        ws->idle = c->next;
        tg_ws_destroy(c);
    }
    if (ws->v != NULL)
        for (int s = 0; s < ws->g->nvars; s++) tg_release(&ws->v[s]);
    free(ws->v);
    free(ws->io);
    Py_XDECREF(ws->tables);
    Py_XDECREF(ws->report); Py_XDECREF(ws->consts); Py_XDECREF(ws->convert);
    Py_XDECREF(ws->shared_cells); Py_XDECREF(ws->update_cells); Py_XDECREF(ws->borrow);
    if (ws->parent == NULL) Py_XDECREF(ws->prof);   /* a clone borrows its parent's */
    free(ws);
}

static TG_COLD void tg_ws_free(PyObject *cap)
{
    tg_ws *ws = (tg_ws *)PyCapsule_GetPointer(cap, "tg_ws");
    if (ws != NULL) tg_ws_destroy(ws);
}

/* Whether o can be used as the value of slot s as it is. */
static TG_COLD int tg_fits(const tg_graph_desc *g, int s, PyObject *o, int check_shape)
{
    if (!PyArray_Check(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    int t = PyArray_TYPE(a);
    if (t != g->var_typenum[s] && !PyArray_EquivTypenums(t, g->var_typenum[s])) return 0;
    if (PyArray_NDIM(a) != g->var_ndim[s]) return 0;
    if (!PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a)) return 0;
    if (check_shape) {
        const npy_intp *sh = PyArray_SHAPE(a);
        for (int d = 0; d < g->var_ndim[s]; d++)
            if (g->var_static[s * TG_MAXDIM + d] >= 0
                    && sh[d] != g->var_static[s * TG_MAXDIM + d])
                return 0;
    }
    return 1;
}

static TG_COLD int tg_set(tg_ws *ws, int s, PyObject *o)
{
    PyArrayObject *arr = (PyArrayObject *)o;
    tg_array *a = &ws->v[s];
    const int nd = PyArray_NDIM(arr);
    const npy_intp *sh = PyArray_SHAPE(arr), *st = PyArray_STRIDES(arr);
    if (a->base != NULL && a->data == PyArray_BYTES(arr) && a->ndim == nd) {
        int same = 1;  /* the ndarray we handed out for this very slot: keep our buffer */
        for (int d = 0; d < nd; d++) same &= a->shape[d] == sh[d] && a->strides[d] == st[d];
        if (same) return 0;
    }
    tg_buffer *b = (tg_buffer *)malloc(sizeof(tg_buffer));
    if (b == NULL) { PyErr_NoMemory(); return -1; }
    b->refcount = 1; b->nbytes = 0; b->release = tg_py_release; b->owner = o;
    Py_INCREF(o);
    tg_buffer_decref(a->base);
    a->base = b;
    a->data = PyArray_BYTES(arr);
    a->ndim = nd;
    a->typenum = ws->g->var_typenum[s];
    for (int d = 0; d < nd; d++) { a->shape[d] = sh[d]; a->strides[d] = st[d]; }
    return 0;
}

/* A value from a storage cell (perform's result, a numpy scalar...) as slot s's array. */
static TG_COLD PyObject *tg_coerce(const tg_graph_desc *g, int s, PyObject *o)
{
    if (tg_fits(g, s, o, 0)) { Py_INCREF(o); return o; }
    PyArray_Descr *d = PyArray_DescrFromType(g->var_typenum[s]);
    PyObject *r = PyArray_FromAny(o, d, 0, 0, NPY_ARRAY_ALIGNED, NULL);
    if (r == NULL) return NULL;
    if (PyArray_NDIM((PyArrayObject *)r) != g->var_ndim[s]) {
        PyErr_Format(PyExc_TypeError, "expected a %d-d array, got %d dimensions",
                     g->var_ndim[s], PyArray_NDIM((PyArrayObject *)r));
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

static TG_COLD void tg_capsule_free(PyObject *cap)
{
    tg_buffer_decref((tg_buffer *)PyCapsule_GetPointer(cap, "tg_buffer"));
}

/* A new ndarray over a's elements, keeping a's buffer alive. */
static TG_COLD PyObject *tg_wrap(tg_array *a)
{
    npy_intp sh[TG_MAXDIM], st[TG_MAXDIM];
    for (int d = 0; d < a->ndim; d++) { sh[d] = (npy_intp)a->shape[d]; st[d] = (npy_intp)a->strides[d]; }
    PyArray_Descr *descr = PyArray_DescrFromType(a->typenum);
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, a->ndim, sh, st, a->data,
                                         NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) return NULL;
    if (a->base != NULL) {
        PyObject *cap = PyCapsule_New(a->base, "tg_buffer", tg_capsule_free);
        if (cap == NULL) { Py_DECREF(arr); return NULL; }
        tg_buffer_incref(a->base);
        if (PyArray_SetBaseObject((PyArrayObject *)arr, cap) < 0) { Py_DECREF(arr); return NULL; }
    }
    return arr;
}

/* The buffers of a new workspace whose graph, constants and settings are set: one array per
 * variable, the per-node operand pointers, the constants' arrays. */
static TG_COLD int tg_ws_buffers(tg_ws *ws)
{
    const tg_graph_desc *g = ws->g;
    const int nio = g->node_in_off[g->nnodes] + g->node_out_off[g->nnodes];
    ws->v = (tg_array *)calloc((size_t)g->nvars + 1, sizeof(tg_array));
    ws->io = (tg_array **)calloc((size_t)nio + 1, sizeof(tg_array *));
    if (ws->v == NULL || ws->io == NULL) { PyErr_NoMemory(); return -1; }
    for (int k = 0, at = 0; k < g->nnodes; k++) {
        for (int j = g->node_in_off[k]; j < g->node_in_off[k + 1]; j++)
            ws->io[at++] = &ws->v[g->node_in_idx[j]];
        for (int j = g->node_out_off[k]; j < g->node_out_off[k + 1]; j++)
            ws->io[at++] = &ws->v[g->node_out_idx[j]];
    }
    for (int s = 0; s < g->nvars; s++) ws->v[s].typenum = g->var_typenum[s];
    for (int c = 0; c < g->nconst; c++) {
        PyObject *value = tg_coerce(g, g->const_slot[c], PyTuple_GetItem(ws->consts, c));
        if (value == NULL || tg_set(ws, g->const_slot[c], value) != 0) {
            Py_XDECREF(value);
            return -1;
        }
        Py_DECREF(value);
    }
    return 0;
}

/* A workspace running p's graph with buffers of its own (for a call that finds p busy). */
static TG_COLD tg_ws *tg_clone(tg_ws *p)
{
    tg_ws *c = (tg_ws *)calloc(1, sizeof(tg_ws));
    if (c == NULL) { PyErr_NoMemory(); return NULL; }
    c->parent = p;
    c->graph = p->graph;
    c->g = &c->graph;
    c->ctx.nthreads = p->ctx.nthreads;
    c->ctx.pool_run = p->ctx.pool_run;
    c->gc = p->gc;
    c->n_explicit = p->n_explicit;
    c->n_returned = p->n_returned;
    c->unpack_single = p->unpack_single;
    c->configured = p->configured;
    PyObject **refs[] = {&c->tables, &c->report, &c->consts, &c->convert, &c->shared_cells,
                         &c->update_cells, &c->borrow};
    PyObject *const from[] = {p->tables, p->report, p->consts, p->convert, p->shared_cells,
                              p->update_cells, p->borrow};
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        *refs[i] = from[i];
        Py_XINCREF(from[i]);
    }
    if (tg_ws_buffers(c) != 0) { tg_ws_destroy(c); return NULL; }
    return c;
}

/* A clone of ws for a call that finds ws busy: an idle one, or a new one. NULL with an
 * exception when memory runs out. */
static TG_COLD tg_ws *tg_claim_clone(tg_ws *ws)
{
    tg_ws *c = ws->idle;
    if (c != NULL) {
        ws->idle = c->next;
        ws->nidle--;
    } else if ((c = tg_clone(ws)) == NULL) {
        return NULL;
    }
    ws->nclones_busy++;
    c->busy = 1;
    c->ctx.node_seconds = ws->ctx.node_seconds;     /* profiled into the parent's arrays */
    c->node_calls = ws->node_calls;
    c->node_starts = ws->node_starts;
    c->loop_seconds = ws->loop_seconds;
    return c;
}

/* The workspace a call runs in: ws itself when it is free, else a clone of it. */
static inline tg_ws *tg_claim(tg_ws *ws)
{
    if (!ws->busy) {
        ws->busy = 1;
        return ws;
    }
    return tg_claim_clone(ws);
}

/* The call in w is over: w is free again (a clone goes back to its parent's idle list). */
static inline void tg_unclaim(tg_ws *w)
{
    w->busy = 0;
    tg_ws *p = w->parent;
    if (p == NULL) return;
    p->nclones_busy--;
    if (p->nidle < TG_MAX_IDLE_CLONES) {
        w->next = p->idle;
        p->idle = w;
        p->nidle++;
    } else {
        tg_ws_destroy(w);
    }
}

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

/* A new timeline: the next node starts are measured from now. */
static TG_COLD void tg_profile_start(tg_ws *ws)
{
    for (int k = 0; k < ws->g->nnodes; k++) ws->node_starts[k] = -1.0;
    ws->t0 = tg_now();
}

/* Distinct buffers tg_alloc made that the intermediates' slots hold. */
static TG_COLD int64_t tg_held_buffers(tg_ws *ws)
{
    const tg_graph_desc *g = ws->g;
    int64_t n = 0;
    for (int s = 0; s < g->nvars; s++) {
        tg_buffer *b = ws->v[s].base;
        if (g->var_const[s] || g->var_graph_io[s] || b == NULL || b->release != NULL) continue;
        int seen = 0;
        for (int r = 0; r < s && !seen; r++)
            seen = ws->v[r].base == b && !g->var_const[r] && !g->var_graph_io[r];
        n += !seen;
    }
    return n;
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

/* An error for a call that would change what a running call reads (profiling, settings). */
static TG_COLD int tg_refuse_if_running(const tg_ws *ws, const char *what)
{
    if (!ws->busy && ws->nclones_busy == 0) return 0;
    PyErr_Format(PyExc_RuntimeError, "cannot %s while a call of this function is running "
                 "(in another thread, or the caller's own)", what);
    return -1;
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

/* The numpy array o if it is a 1-d C-contiguous array of n elements of type t, else NULL
 * with a ValueError naming `what`. */
static TG_COLD PyArrayObject *tg_profile_array(PyObject *o, int t, npy_intp n, const char *what)
{
    if (!PyArray_Check(o) || PyArray_TYPE((PyArrayObject *)o) != t
            || PyArray_NDIM((PyArrayObject *)o) != 1 || PyArray_DIM((PyArrayObject *)o, 0) != n
            || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o)
            || !PyArray_ISWRITEABLE((PyArrayObject *)o)) {
        PyErr_Format(PyExc_ValueError, "profile: %s must be a writeable contiguous 1-d %s "
                     "array of %zd elements", what, t == NPY_INT64 ? "int64" : "float64",
                     (Py_ssize_t)n);
        return NULL;
    }
    return (PyArrayObject *)o;
}

static TG_COLD PyObject *tg_profile(PyObject *self, PyObject *args)
{
    tg_ws *ws = (tg_ws *)PyCapsule_GetPointer(self, "tg_ws");
    if (tg_refuse_if_running(ws, "start or stop profiling")) return NULL;
    PyObject *times = Py_None, *calls = Py_None, *starts = Py_None, *loop = Py_None;
    if (!PyArg_ParseTuple(args, "O|OOO", &times, &calls, &starts, &loop)) return NULL;
    if (times == Py_None) {
        ws->ctx.node_seconds = NULL;
        ws->node_calls = NULL; ws->node_starts = NULL; ws->loop_seconds = NULL;
        Py_CLEAR(ws->prof);
        Py_RETURN_NONE;
    }
    const npy_intp n = ws->g->nnodes;
    PyArrayObject *t = tg_profile_array(times, NPY_FLOAT64, n, "times");
    PyArrayObject *c = t ? tg_profile_array(calls, NPY_INT64, n, "calls") : NULL;
    PyArrayObject *s = c ? tg_profile_array(starts, NPY_FLOAT64, n, "starts") : NULL;
    PyArrayObject *l = s ? tg_profile_array(loop, NPY_FLOAT64, 1, "loop") : NULL;
    if (l == NULL) return NULL;
    PyObject *keep = PyTuple_Pack(4, times, calls, starts, loop);
    if (keep == NULL) return NULL;
    Py_XSETREF(ws->prof, keep);
    ws->ctx.node_seconds = (double *)PyArray_DATA(t);
    ws->node_calls = (int64_t *)PyArray_DATA(c);
    ws->node_starts = (double *)PyArray_DATA(s);
    ws->loop_seconds = (double *)PyArray_DATA(l);
    Py_RETURN_NONE;
}

static TG_COLD PyObject *tg_debug_state(PyObject *self, PyObject *args)
{
    tg_ws *ws = (tg_ws *)PyCapsule_GetPointer(self, "tg_ws");
    if (tg_refuse_if_running(ws, "read the buffer counters")) return NULL;
    int track = 0;
    if (!PyArg_ParseTuple(args, "p", &track)) return NULL;
    PyObject *state = Py_BuildValue("{s:L,s:L,s:L}", "allocations", (long long)ws->ctx.nallocs,
                                    "held", (long long)tg_held_buffers(ws),
                                    "peak_held", (long long)ws->peak_held);
    ws->track = track;
    ws->peak_held = 0;
    return state;
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

/* ---- loops: the whole graph run once per iteration (run_steps, tg_scan_layout) ---------- */

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

static PyMethodDef tg_methods[] = {
    {"node_call", (PyCFunction)(void (*)(void))tg_node_call, METH_FASTCALL, NULL},
    {"run_all", (PyCFunction)(void (*)(void))tg_run_all, METH_FASTCALL, NULL},
    {"call", (PyCFunction)(void (*)(void))tg_call, METH_FASTCALL, NULL},
    {"call_trusted", (PyCFunction)(void (*)(void))tg_call_trusted, METH_FASTCALL, NULL},
    {"configure", (PyCFunction)tg_configure, METH_VARARGS, NULL},
    {"profile", (PyCFunction)tg_profile, METH_VARARGS, NULL},
    {"debug_state", (PyCFunction)tg_debug_state, METH_VARARGS, NULL},
    {"run_steps", (PyCFunction)(void (*)(void))tg_run_steps, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}
};

/* sizeof(tg_graph_desc) as this compiler lays it out: codegen.py compares it with cffi's
 * layout of the same declaration when the glue loads. */
TG_COLD size_t tg_graph_desc_size(void)
{
    return sizeof(tg_graph_desc);
}

/* A new workspace for the graph `desc` (copied; its arrays live in `keep`, which the workspace
 * keeps alive) and a dict of its entry points (only node_call unless the graph runs as a
 * whole). consts: the constants' values in const_slot order; report(k, message, inputs,
 * whole) raises a node's error. Called through ctypes.PyDLL (the GIL held); NULL with an
 * exception set on failure. The libraries of the node functions are never unloaded. */
TG_COLD PyObject *tg_make_workspace(const tg_graph_desc *desc, PyObject *keep, PyObject *consts,
                                    PyObject *report, int gc, int nthreads)
{
    if (PyArray_API == NULL && _import_array() < 0) return NULL;
    if (!PyTuple_Check(consts) || PyTuple_GET_SIZE(consts) != desc->nconst) {
        PyErr_Format(PyExc_ValueError, "tg_make_workspace: expected a tuple of %d constants",
                     desc->nconst);
        return NULL;
    }
    tg_ws *ws = (tg_ws *)calloc(1, sizeof(tg_ws));
    if (ws == NULL) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(ws, "tg_ws", tg_ws_free);
    if (cap == NULL) { free(ws); return NULL; }
    ws->graph = *desc;
    ws->g = &ws->graph;
    ws->tables = keep; Py_INCREF(keep);
    ws->consts = consts; Py_INCREF(consts);
    ws->report = report; Py_INCREF(report);
    ws->gc = gc;
    ws->ctx.nthreads = nthreads;
    ws->ctx.pool_run = tg_pool_run;
    PyObject *d = NULL;
    if (tg_ws_buffers(ws) != 0 || (d = PyDict_New()) == NULL) goto fail;
    for (PyMethodDef *m = tg_methods; m->ml_name != NULL && (desc->whole || m == tg_methods);
         m++) {
        PyObject *fn = PyCFunction_New(m, cap);
        if (fn == NULL || PyDict_SetItemString(d, m->ml_name, fn) < 0) {
            Py_XDECREF(fn);
            goto fail;
        }
        Py_DECREF(fn);
    }
    Py_DECREF(cap);
    return d;
fail:
    Py_XDECREF(d);
    Py_DECREF(cap);
    return NULL;
}
