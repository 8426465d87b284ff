"""The fused form of ``Gemv``, ``Gemv(pair=f)``: ``X @ w``, an elementwise function of it, and
``X.T @`` that function, in one pass over ``X``.

The gradient of a linear model has this shape: ``z = X @ w``, ``d = f(z, ...)`` row by row,
``g = X.T @ d``. As two ``Gemv`` nodes, ``X`` is read twice; a 400 x 784 float32 ``X`` (1.25
MB) no longer fits one core's L2 cache, so the second read comes from L3 again. The pair walks
``X`` in blocks of 8 rows: the 8 dot products give 8 values of ``z``, ``f`` turns them into 8
values of ``d``, and those 8 rows of ``X``, still in L1, are added into ``g``. Each thread
(``config.openmp``) takes a block of rows and its own partial ``g``; the partial sums are added
in thread order. (The seed logistic-regression step: 37 us on one thread against 48 us for the
two products apart.)

It stays a ``Gemv`` (the class, with the ``pair`` property set): it is two matrix-vector
products, and programs that look for a ``Gemv`` in the compiled graph to tell that the BLAS
path is used (Theano's logistic-regression example does) still find one.

Inputs ``(y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra)``; outputs

* ``z = beta1 * y1 + alpha1 * X @ w`` (``beta1 == 0``: ``y1`` not read), as ``Gemv``;
* ``d = f(z, *extra)``, ``f`` a scalar ``Composite`` whose first input is ``z``'s element and
  the others the ``extra`` vectors' (length ``X.shape[0]``, or static length 1: broadcast);
* ``g = beta2 * y2 + alpha2 * X.T @ d``.

The ``gemv_pair`` rewrite (``tensorgraph.tensor.rewriting.gemv_pair``) builds it from two
``Gemv`` nodes and the fused elementwise nodes between them; users do not.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.blas_c import blas_letter, c_type
from tensorgraph.tensor.dot import added_mismatch, dot_mismatch, product_name
from tensorgraph.tensor.type import TensorType

#: rows of X per block: 8 rows of 784 float32 are 25 KB, in L1 with room to spare
ROWS = 8


def make_node(op, y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra) -> Apply:
    """The node of ``Gemv(pair=f)`` (see the module docstring)."""
    f = op.pair
    y1, alpha1, X, w, beta1, y2, alpha2, beta2 = map(
        as_tensor_variable, (y1, alpha1, X, w, beta1, y2, alpha2, beta2))
    extra = [as_tensor_variable(e) for e in extra]
    dtype = X.dtype
    if dtype not in ("float32", "float64"):
        raise TypeError(f"{op}: X must be float32 or float64, got {X.type}")
    for name, var, ndim in (("y1", y1, 1), ("alpha1", alpha1, 0), ("X", X, 2), ("w", w, 1),
                            ("beta1", beta1, 0), ("y2", y2, 1), ("alpha2", alpha2, 0),
                            ("beta2", beta2, 0)):
        if var.ndim != ndim or var.dtype != dtype:
            raise TypeError(f"{op}: {name} must be a {ndim}-d {dtype} tensor, got {var.type}")
    if len(extra) + 1 != f.nin or f.nout != 1:
        raise TypeError(f"{op}: the scalar op takes {f.nin} inputs and gives {f.nout} "
                        f"outputs; expected 1 + {len(extra)} inputs and 1 output")
    for k, e in enumerate(extra):
        if e.ndim != 1:
            raise TypeError(f"{op}: extra input {k} must be a vector, got {e.type}")
    d_dtype = f.output_dtypes(dtype, *[e.dtype for e in extra])[0]
    if d_dtype != dtype:
        raise TypeError(f"{op}: the scalar op gives {d_dtype}, X.T @ d needs {dtype}")
    rows, cols = X.type.shape
    outputs = [TensorType(dtype, (rows,))(), TensorType(dtype, (rows,))(),
               TensorType(dtype, (cols,))()]
    return Apply(op, [y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra], outputs)


def perform(op, node, inputs, output_storage) -> None:
    """The numpy reference: two ``np.dot`` and the scalar op on whole vectors."""
    y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra = inputs
    n, m = X.shape
    if w.shape[0] != m or (beta1 != 0 and y1.shape[0] != n) or \
            (beta2 != 0 and y2.shape[0] != m):
        raise ValueError(f"{op}: shapes do not match: y1 {y1.shape}, X {X.shape}, "
                         f"w {w.shape}, y2 {y2.shape}")
    for k, (e, var) in enumerate(zip(extra, node.inputs[8:])):
        if e.shape[0] != n and var.type.shape[0] != 1:
            raise ValueError(f"{op}: extra input {k} has {e.shape[0]} elements, X has "
                             f"{n} rows")
    dtype = node.outputs[0].type.dtype
    z = alpha1 * np.dot(X, w)
    if beta1 != 0:
        z = z + beta1 * y1
    z = np.asarray(z, dtype=dtype)
    d = np.asarray(op.pair.impl(z, *extra), dtype=dtype)
    if d.shape != (n,):
        d = np.broadcast_to(d, (n,)).copy()
    g = alpha2 * np.dot(X.T, d)
    if beta2 != 0:
        g = g + beta2 * y2
    for cell, value in zip(output_storage, (z, d, np.asarray(g, dtype=dtype))):
        cell[0] = value


def error_headline(node, input_values) -> str | None:
    """A shape error of the pair in the user's names (see ``Op.error_headline``): the first
    product ``dot(X, w)``, the value added to it, the fused function's vectors, or the value
    added to ``dot(X.T, ...)``."""
    y1_var, _, X_var, w_var, _, y2_var, _, _, *extra_vars = node.inputs
    y1, _, X, w, beta1, y2, _, beta2, *extra = input_values
    n, m = np.shape(X)
    found = dot_mismatch(X_var, w_var, X, w) or (
        added_mismatch(product_name(X_var, w_var), (n,), y1_var, y1) if beta1 != 0 else None)
    for k, (e, var) in enumerate(zip(extra, extra_vars)):
        if found is None and np.shape(e)[0] != n and var.type.shape[0] != 1:
            found = (f"{var.name or f'vector {k} of the fused function'} has "
                     f"{np.shape(e)[0]} elements but {X_var.name or 'the matrix'} has {n} rows")
    if found is None and beta2 != 0:
        product = f"dot({X_var.name}.T, ...)" if X_var.name else "the second product"
        found = added_mismatch(product, (m,), y2_var, y2)
    return found


def support_code() -> str:
    return "".join(_ROW_KERNELS.replace("TGT", c).replace("TGS", s).replace("TGFMA", fma)
                   for c, s, fma in (("float", "s", "fmaf"), ("double", "d", "fma")))


# Row-block kernels: the 8 dot products share each load of w, the update of g reads each of
# its elements once for 8 rows. Multiply-adds are explicit fma() (one rounding, as BLAS kernels
# do; the elementwise code keeps numpy's two roundings with -ffp-contract=off).
_ROW_KERNELS = r"""
/* out[r] = sum_j X[r * ld + j] w[j] for r < rows (rows <= 8) */
static inline void tg_TGSrows_dot(const TGT *X, int64_t ld, int64_t rows, const TGT *w,
                                  int64_t m, TGT *out)
{
    if (rows == 8) {
        const TGT *x0 = X, *x1 = x0 + ld, *x2 = x1 + ld, *x3 = x2 + ld, *x4 = x3 + ld,
                  *x5 = x4 + ld, *x6 = x5 + ld, *x7 = x6 + ld;
        TGT s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        #pragma omp simd reduction(+:s0, s1, s2, s3, s4, s5, s6, s7)
        for (int64_t j = 0; j < m; j++) {
            const TGT v = w[j];
            s0 = TGFMA(x0[j], v, s0); s1 = TGFMA(x1[j], v, s1); s2 = TGFMA(x2[j], v, s2);
            s3 = TGFMA(x3[j], v, s3); s4 = TGFMA(x4[j], v, s4); s5 = TGFMA(x5[j], v, s5);
            s6 = TGFMA(x6[j], v, s6); s7 = TGFMA(x7[j], v, s7);
        }
        out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3;
        out[4] = s4; out[5] = s5; out[6] = s6; out[7] = s7;
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        const TGT *x = X + r * ld;
        TGT s = 0;
        #pragma omp simd reduction(+:s)
        for (int64_t j = 0; j < m; j++) s = TGFMA(x[j], w[j], s);
        out[r] = s;
    }
}

/* acc[j] += sum_r X[r * ld + j] d[r] for r < rows (rows <= 8) */
static inline void tg_TGSrows_axpy(const TGT *X, int64_t ld, int64_t rows, const TGT *d,
                                   int64_t m, TGT *restrict acc)
{
    if (rows == 8) {
        const TGT *x0 = X, *x1 = x0 + ld, *x2 = x1 + ld, *x3 = x2 + ld, *x4 = x3 + ld,
                  *x5 = x4 + ld, *x6 = x5 + ld, *x7 = x6 + ld;
        const TGT d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3], d4 = d[4], d5 = d[5],
                  d6 = d[6], d7 = d[7];
        #pragma omp simd
        for (int64_t j = 0; j < m; j++) {
            const TGT lo = TGFMA(x3[j], d3, TGFMA(x2[j], d2, TGFMA(x1[j], d1, x0[j] * d0)));
            const TGT hi = TGFMA(x7[j], d7, TGFMA(x6[j], d6, TGFMA(x5[j], d5, x4[j] * d4)));
            acc[j] += lo + hi;
        }
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        const TGT *x = X + r * ld;
        const TGT dr = d[r];
        #pragma omp simd
        for (int64_t j = 0; j < m; j++) acc[j] = TGFMA(x[j], dr, acc[j]);
    }
}
"""


def c_code(op, node, inputs, outputs, sub) -> str:
    """The C of ``Gemv(pair=f)``: blocks of rows, split across threads like a Gemv."""
    from tensorgraph.link.c import dtypes as cd
    from tensorgraph.link.c.elemwise_code import scalar_body

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
    for k, (e, var, dt) in enumerate(zip(extra, extra_vars, extra_dtypes)):
        if var.type.shape[0] == 1:
            loads.append(f"const {cd.compute_type(dt)} e{k} = *(const {cd.storage_type(dt)} *)"
                         f"{e}->data;")
            args.append(f"e{k}")
        else:
            args.append(f"(*(const {cd.storage_type(dt)} *)({e}->data + i * {e}->strides[0]))")
    lines, (result,) = scalar_body(op.pair, args, [dtype] + extra_dtypes, [dtype])
    body = "\n".join(lines)
    load_code = "\n".join(loads)
    checks = " || ".join([f"{w}->shape[0] != m", f"(beta1 != 0 && {y1}->shape[0] != n)",
                          f"(beta2 != 0 && {y2}->shape[0] != m)"] +
                         [f"{e}->shape[0] != n" for e, v in zip(extra, extra_vars)
                          if v.type.shape[0] != 1])

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
    /* one copy of the loop (also for one thread: a serial copy would double its compile
     * time, and entering the OpenMP runtime costs well under a microsecond here) */
    #pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++) {{
        int64_t lo, hi;
        tg_split_block((n + {ROWS} - 1) / {ROWS}, t, nt, &lo, &hi);
        lo *= {ROWS};
        hi = hi * {ROWS} < n ? hi * {ROWS} : n;
        for (int64_t i0 = lo; i0 < hi; i0 += {ROWS}) {{
            const int64_t rows = hi - i0 < {ROWS} ? hi - i0 : {ROWS};
            {ct} sums[{ROWS}], dd[{ROWS}];
            tg_{s}rows_dot(xp + i0 * m, m, rows, wp, m, sums);
            for (int64_t r = 0; r < rows; r++) {{
                const int64_t i = i0 + r;
                const {ct} zi = alpha1 * sums[r] +
                    (beta1 != 0 ? beta1 * *(const {ct} *)({y1}->data + i * {y1}->strides[0]) : 0);
                zp[i] = zi;
                {body}
                dp[i] = {result};
                dd[r] = dp[i];
            }}
            tg_{s}rows_axpy(xp + i0 * m, m, rows, dd, m, part + t * m);
        }}
    }}
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
