/* tg_graph_desc: a compiled graph as the glue library runs it.
 *
 * One declaration read by two parsers: the glue (glue.h) includes this file, and
 * graph_desc.py reads the same text into a ctypes.Structure, laid out by the same C rules, so
 * Python fills it field by field (a misspelled field is an AttributeError; the struct's size
 * is compared with tg_graph_desc_size() when the glue loads). So no list of tables has to be
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
