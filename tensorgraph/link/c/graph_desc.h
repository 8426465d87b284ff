/* tg_graph_desc: a compiled graph as the glue library runs it (and tg_scan_layout, below: a
 * loop running it once per iteration).
 *
 * Declarations read by two parsers: the glue (glue.h) includes this file, and
 * graph_desc.py reads the same text into ctypes.Structures, laid out by the same C rules, so
 * Python fills them field by field (a misspelled field is an AttributeError; the struct's size
 * is compared with tg_graph_desc_size() when the glue loads, tg_scan_layout's by the entry
 * point that reads it). So no list of tables has to be
 * kept in the same order on both sides. Plain C only here, one field per line, of type int,
 * unsigned char, int64_t or void, plain or pointer (graph_desc.py reads nothing else).
 *
 * Slots are the graph's variables (0 .. nvars-1). Node k reads the slots
 * node_in_idx[node_in_off[k] .. node_in_off[k + 1]) and writes node_out_idx[...] alike; its
 * function receives pointers to its operands, inputs then outputs, so one compiled node
 * function serves every graph with that node. Arrays are owned by Python (kept alive with
 * the workspace).
 */
typedef struct tg_graph_desc {
    int nvars;                      /* variables (slots) */
    int nnodes;                     /* nodes with C, in run order */
    int nconst;                     /* slots holding constants */
    int whole;                      /* 1: the graph runs as a whole in C (every node has C) */
    int ngin;                       /* graph inputs (whole graphs; 0 otherwise) */
    int ngout;                      /* graph outputs (whole graphs; 0 otherwise) */
    const int *var_typenum;         /* per slot: its numpy type number */
    const int *var_ndim;            /* per slot: its number of dimensions */
    const unsigned char *var_const; /* per slot: 1 for a constant */
    const unsigned char *var_graph_io;      /* per slot: 1 for a graph input or output */
    const int64_t *var_static;      /* per slot, 16 (TG_MAXDIM) static sizes, -1 unknown */
    const int *node_in_off;         /* nnodes + 1 offsets into node_in_idx */
    const int *node_in_idx;
    const int *node_out_off;        /* nnodes + 1 offsets into node_out_idx */
    const int *node_out_idx;
    const int *const_slot;          /* nconst slots, in the order of the constants' values */
    const int *graph_in;            /* ngin slots */
    const int *graph_out;           /* ngout slots */
    const int *free_off;            /* whole graphs: nnodes + 1 offsets into free_idx */
    const int *free_idx;            /* the slots gc releases after each node */
    void *const *node_fn;           /* nnodes addresses of the node functions */
    void *straight;                 /* linker 'c': the straight-line run of all nodes, or NULL */
} tg_graph_desc;

/* tg_scan_layout: how a loop (tensorgraph/scan) runs a whole graph once per iteration in C
 * (glue_steps.h: the run_steps entry point), filled in Python like tg_graph_desc (graph_desc.py:
 * ScanLayout) once per loop; the arrays themselves are given to each run (their data, shapes
 * and strides are read there).
 *
 * At iteration t, binding b points graph input bind_input[b] at row r = t + bind_offset[b]
 * of its buffer (row r % bind_ring[b] when bind_ring[b] > 0, a ring of the last steps) or,
 * when r < 0, at the state's past before the loop: row bind_init_rows[b] + r of its initial
 * value, or the initial value itself when bind_init_rows[b] is -1 (one past value). The rows
 * are borrowed: nothing is copied in. Then every node runs, and output o's value (graph
 * output out_output[o], which must have the shape of the buffer's rows) is copied into row t
 * of its buffer (row t % out_ring[o] for a ring; nowhere when out_ring[o] is -1). The loop
 * stops after the iteration whose graph output `cond` (a scalar) is nonzero, when cond >= 0. */
typedef struct tg_scan_layout {
    int nbind;                      /* graph inputs bound to a row at every iteration */
    int nout;                       /* graph outputs copied into a row at every iteration */
    int cond;                       /* the graph output that stops the loop, or -1 */
    int64_t t;                      /* in: the first iteration to run; out: the next one */
    int64_t n_steps;                /* the loop ends before iteration n_steps */
    int64_t stopped;                /* out: 1 when the condition ended the loop */
    const int *bind_input;          /* per binding: the graph input (index into graph_in) */
    const int64_t *bind_offset;
    const int64_t *bind_ring;       /* per binding: 0, or the rows of a ring buffer */
    const int64_t *bind_init_rows;  /* per binding: 0 (no initial value), -1, or its rows */
    const int *out_output;          /* per output: the graph output (index into graph_out) */
    const int64_t *out_ring;        /* per output: 0 (row t), the rows of a ring, or -1 */
} tg_scan_layout;
