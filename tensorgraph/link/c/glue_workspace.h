/* The glue library's workspaces (part of glue.h's library; codegen.py joins the parts in the
 * order glue.h lists): one tg_array per variable of a graph in a capsule, how Python values
 * enter its slots and leave them as ndarrays, and the clones a busy workspace hands a second
 * caller (threads, re-entry).
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
 * taking it back (about 0.1 us, more when other threads wait for it; 2026-11-25 at b820ab8)
 * would cost more than the other threads gain. */
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

/* An error for a call that would change what a running call reads (profiling, settings). */
static TG_COLD int tg_refuse_if_running(const tg_ws *ws, const char *what)
{
    if (!ws->busy && ws->nclones_busy == 0) return 0;
    PyErr_Format(PyExc_RuntimeError, "cannot %s while a call of this function is running "
                 "(in another thread, or the caller's own)", what);
    return -1;
}
