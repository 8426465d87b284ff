/* The glue library's measurements (part of glue.h's library): the per-node timeline a profiled
 * run fills, profile() which hands the loop the numpy arrays it times into, and debug_state()'s
 * buffer counters for the linker tests. The loop reads the clock only while profiling.
 */

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
