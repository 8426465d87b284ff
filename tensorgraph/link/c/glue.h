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
 *
 * The library is split by job into headers that codegen.py (GLUE_PARTS) joins in this order:
 *   glue_workspace.h  the workspace, values in and out of its slots, clones
 *   glue_profile.h    the per-node timeline, profile() and debug_state()
 *   glue_run.h        running one node or the whole graph; run_all, call, configure, node_call
 *   glue_steps.h      run_steps: a loop's iterations in C
 *   glue.h            (this file) the table of entry points and the exported functions
 */

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
