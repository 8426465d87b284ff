"""The C of ``Gemv(pair=f)`` (``tensorgraph.tensor.gemv_pair`` says what it computes): ``X``
walked once in blocks of ``ROWS`` rows, each block's dot products, ``f`` of them and the block's
update of ``X.T @ d`` done while the rows are in L1; threads (``config.openmp``) take blocks of
rows and their own partial ``g``, added in thread order. The row kernels are the template
``gemv_pair.h``; the BLAS helpers (``blas.h``) come with ``Gemv``'s support code."""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import read_c
from tensorgraph.link.c.ops.blas import blas_letter, c_type
from tensorgraph.link.c.ops.scalar import scalar_body
from tensorgraph.link.c.parallel import parallel_run

#: rows of X per block: 8 rows of 784 float32 are 25 KB, in L1 with room to spare
ROWS = 8


def support_code() -> str:
    """The row kernels for float and double."""
    return "".join(read_c("gemv_pair.h").replace("TGT", c).replace("TGS", s)
                   .replace("TGFMA", fma)
                   for c, s, fma in (("float", "s", "fmaf"), ("double", "d", "fma")))


def math_support(op, node) -> str:
    """The definitions of the math functions ``f`` calls (``dtypes.tg_vector_math``)."""
    dtype = node.outputs[0].type.dtype
    extra_dtypes = [v.type.dtype for v in node.inputs[8:]]
    try:
        lines, _ = scalar_body(op.pair, ["zi"] + [f"e{k}" for k in range(len(extra_dtypes))],
                               [dtype] + extra_dtypes, [dtype])
    except NotImplementedError:  # no C: the node runs perform
        return ""
    return cd.tg_vector_math("\n".join(lines))


def pair_code(op, node, inputs, outputs, sub) -> str:
    """The C of ``Gemv(pair=f)``: blocks of rows, split across threads like a Gemv."""
    dtype = node.outputs[0].type.dtype
    ct, s = c_type(dtype), blas_letter(dtype)
    y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra = inputs
    extra_vars = node.inputs[8:]
    extra_dtypes = [v.type.dtype for v in extra_vars]
    for dt in extra_dtypes:
        if not cd.has_c(dt) or cd.storage_type(dt) != cd.compute_type(dt):
            raise NotImplementedError(f"{op} has no C for extra inputs of dtype {dt}")
    (z, d, g), ctx, fail = outputs, sub["ctx"], sub["fail"]
    args = ["zi"]
    loads = []
    # what the blocks read: (C type, name in the block, value in the node's function)
    captures = [(f"const {ct} *", "xp", "xp"), (f"const {ct} *", "wp", "wp"),
                (f"{ct} *", "zp", "zp"), (f"{ct} *", "dp", "dp"), (f"{ct} *", "part", "part"),
                ("int64_t", "n", "n"), ("int64_t", "m", "m"), (ct, "alpha1", "alpha1"),
                (ct, "beta1", "beta1"), ("const char *", "y1d", f"{y1}->data"),
                ("int64_t", "y1s", f"{y1}->strides[0]")]
    for k, (e, var, dt) in enumerate(zip(extra, extra_vars, extra_dtypes)):
        if var.type.shape[0] == 1:
            loads.append(f"const {cd.compute_type(dt)} e{k} = *(const {cd.storage_type(dt)} *)"
                         f"{e}->data;")
            captures.append((cd.compute_type(dt), f"e{k}", f"e{k}"))
            args.append(f"e{k}")
        else:
            captures += [("const char *", f"ed{k}", f"{e}->data"),
                         ("int64_t", f"es{k}", f"{e}->strides[0]")]
            args.append(f"(*(const {cd.storage_type(dt)} *)(ed{k} + i * es{k}))")
    lines, (result,) = scalar_body(op.pair, args, [dtype] + extra_dtypes, [dtype])
    body = "\n".join(lines)
    load_code = "\n".join(loads)
    checks = " || ".join([f"{w}->shape[0] != m", f"(beta1 != 0 && {y1}->shape[0] != n)",
                          f"(beta2 != 0 && {y2}->shape[0] != m)"] +
                         [f"{e}->shape[0] != n" for e, v in zip(extra, extra_vars)
                          if v.type.shape[0] != 1])

    # blocks of rows of X, each adding into its own partial g (part + tg_k * m); one block
    # is a plain call, so the loop is compiled once for any thread count
    run = parallel_run(sub, "rows", captures, f"""
    int64_t lo, hi;
    tg_split_block((n + {ROWS} - 1) / {ROWS}, tg_k, tg_nb, &lo, &hi);
    lo *= {ROWS};
    hi = hi * {ROWS} < n ? hi * {ROWS} : n;
    for (int64_t i0 = lo; i0 < hi; i0 += {ROWS}) {{
        const int64_t rows = hi - i0 < {ROWS} ? hi - i0 : {ROWS};
        {ct} sums[{ROWS}], dd[{ROWS}];
        tg_{s}rows_dot(xp + i0 * m, m, rows, wp, m, sums);
        for (int64_t r = 0; r < rows; r++) {{
            const int64_t i = i0 + r;
            const {ct} zi = alpha1 * sums[r] +
                (beta1 != 0 ? beta1 * *(const {ct} *)(y1d + i * y1s) : 0);
            zp[i] = zi;
            {body}
            dp[i] = {result};
            dd[r] = dp[i];
        }}
        tg_{s}rows_axpy(xp + i0 * m, m, rows, dd, m, part + tg_k * m);
    }}""", "nt")

    return f"""
    const {ct} alpha1 = *(const {ct} *){alpha1}->data, beta1 = *(const {ct} *){beta1}->data;
    const {ct} alpha2 = *(const {ct} *){alpha2}->data, beta2 = *(const {ct} *){beta2}->data;
    const int64_t n = {X}->shape[0], m = {X}->shape[1];
    if ({checks}) {{
        char sb0[96], sb1[96], sb2[96], sb3[96];
        tg_error({ctx}, "Gemv pair: shapes do not match: y1 %s, X %s, w %s, y2 %s",
                 tg_shape_str({y1}, sb0, 96), tg_shape_str({X}, sb1, 96),
                 tg_shape_str({w}, sb2, 96), tg_shape_str({y2}, sb3, 96));
        {fail}
    }}
    const int64_t shz[1] = {{n}}, shg[1] = {{m}};
    if (tg_alloc({z}, 1, shz, {cd.typenum(dtype)}, {ctx}) ||
        tg_alloc({d}, 1, shz, {cd.typenum(dtype)}, {ctx}) ||
        tg_alloc({g}, 1, shg, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
    {ct} *zp = ({ct} *){z}->data, *dp = ({ct} *){d}->data, *gp = ({ct} *){g}->data;
    {load_code}
    tg_mat xm = tg_mat_of({X});
    tg_vec wv = tg_vec_of({w});
    char *ox = NULL, *ow = NULL;
    if (tg_mat_contiguous({ctx}, &xm, sizeof({ct}), &ox)) {{ {fail} }}
    if (tg_vec_contiguous({ctx}, &wv, sizeof({ct}), &ow)) {{ free(ox); {fail} }}
    const {ct} *xp = (const {ct} *)xm.data, *wp = (const {ct} *)wv.data;  /* rows of m */
    const int nt = tg_split_threads({ctx}, 2 * n * m, (n + {ROWS} - 1) / {ROWS});
    {ct} *part = ({ct} *)calloc((size_t)(nt * m + 1), sizeof({ct}));
    if (part == NULL) {{
        free(ox); free(ow);
        tg_error({ctx}, "out of memory in a Gemv pair");
        {fail}
    }}
    {run}
    for (int t = 1; t < nt; t++) {{
        const {ct} *pt = part + t * m;
        #pragma omp simd
        for (int64_t j = 0; j < m; j++) part[j] += pt[j];
    }}
    #pragma omp simd
    for (int64_t j = 0; j < m; j++) gp[j] = alpha2 * part[j];
    if (beta2 != 0) {{
        const char *yb = {y2}->data;
        const int64_t ys = {y2}->strides[0];
        for (int64_t j = 0; j < m; j++) gp[j] += beta2 * *(const {ct} *)(yb + j * ys);
    }}
    free(part); free(ox); free(ow);
    """
