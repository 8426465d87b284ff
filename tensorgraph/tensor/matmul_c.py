"""The C of ``MatMul``: one matrix product per batch element, broadcasting the batch axes.

For float32/float64 operands of the output's dtype each product is a call of the BLAS helpers
of ``tensorgraph.tensor.blas_c`` (``tg_sgemm`` / ``tg_dgemm``, which take any strides); other
dtypes, and mixed ones, run a plain triple loop accumulating in a wide type, as ``Dot``'s C.
When the second operand is one matrix for the whole batch and the first one's batch and row
axes lie at one stride (a C-contiguous stack, say), the whole batch is a single product of a
(batch * rows) x inner matrix, which BLAS runs much faster than many small ones.

The run-time checks are ``MatMul.perform``'s: inner lengths, batch lengths, and a batch length
of 1 is only broadcast where the operand's type declares it.
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.tensor import blas_c
from tensorgraph.link.c.cstring import c_string
from tensorgraph.link.c.ops.strided import int_list

#: bump when the C below changes
MATMUL_C_VERSION = 1


def version() -> tuple:
    return (MATMUL_C_VERSION,) + blas_c.version()


def _checks(node, a: str, b: str, ctx: str, fail: str) -> str:
    """C failing as ``MatMul.perform`` does on shapes it refuses."""
    va, vb = node.inputs
    nd = va.type.ndim
    declared = [int_list(s == 1 for s in v.type.shape[:-2]) for v in (va, vb)]
    names = [c_string(f"{v} has size 1 in batch dimension ") + "%d" + c_string(
        f" at run time but its type {v.type} does not declare it broadcastable")
        for v in (va, vb)]
    return f"""
    char sa_[120], sb_[120];
    if ({a}->shape[{nd - 1}] != {b}->shape[{nd - 2}]) {{
        tg_error({ctx}, "matmul: inner dimensions differ: shapes %s and %s (%lld != %lld)",
                 tg_shape_str({a}, sa_, 120), tg_shape_str({b}, sb_, 120),
                 (long long){a}->shape[{nd - 1}], (long long){b}->shape[{nd - 2}]);
        {fail}
    }}
    {{
        static const unsigned char one_a[] = {declared[0]}, one_b[] = {declared[1]};
        for (int d = 0; d < {nd - 2}; d++) {{
            const int64_t la = {a}->shape[d], lb = {b}->shape[d];
            if (la == lb) continue;
            if ((la == 1 && !one_a[d]) || (lb == 1 && !one_b[d])) {{
                tg_error({ctx}, la == 1 && !one_a[d] ? "matmul: {names[0]}; shapes %s and %s. "
                         "Declare it (shape=(1, ...)) or dimshuffle it in" : "matmul: {names[1]}; "
                         "shapes %s and %s. Declare it (shape=(1, ...)) or dimshuffle it in", d,
                         tg_shape_str({a}, sa_, 120), tg_shape_str({b}, sb_, 120));
                {fail}
            }}
            if (la != 1 && lb != 1) {{
                tg_error({ctx}, "matmul: batch dimension %d differs: shapes %s and %s", d,
                         tg_shape_str({a}, sa_, 120), tg_shape_str({b}, sb_, 120));
                {fail}
            }}
        }}
    }}"""


def _blas_product(s: str, ctx: str, fail: str) -> str:
    """C adding the product of the batch element's matrices at pa, pb into o (zeroed)."""
    return f"""
            tg_mat A = {{ (char *)pa, M, K, ars, acs }}, B = {{ (char *)pb, K, N, brs, bcs }};
            if (tg_{s}gemm(ctx_, 1, A, B, o, 1)) {{ {fail} }}"""


def _loop_product(node) -> str:
    """C writing the product of the batch element's matrices at pa, pb into o, any dtypes."""
    va, vb = node.inputs
    dtype = node.outputs[0].type.dtype
    acc, store = blas_c.loop_accumulator(dtype)
    ta, tb = cd.storage_type(va.type.dtype), cd.storage_type(vb.type.dtype)
    return f"""
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {{
                    {acc} acc = 0;
                    const char *ra = pa + i * ars, *cb = pb + j * bcs;
                    for (int64_t p = 0; p < K; p++)
                        acc += ({acc})*(const {ta} *)(ra + p * acs)
                               * ({acc})*(const {tb} *)(cb + p * brs);
                    o[i * N + j] = {store};
                }}"""


def matmul_code(node, inputs, outputs, sub) -> str:
    """The C fragment of a ``MatMul`` node."""
    va, vb = node.inputs
    dtype = node.outputs[0].type.dtype
    for d in (va.type.dtype, vb.type.dtype, dtype):
        if not cd.has_c(d):
            raise NotImplementedError(f"MatMul has no C for dtype {d}")
    (a, b), (out,) = inputs, outputs
    ctx, fail = sub["ctx"], sub["fail"]
    nd, nb = va.type.ndim, va.type.ndim - 2
    ctype = blas_c.c_type(dtype)
    use_blas = ctype is not None and va.type.dtype == vb.type.dtype == dtype
    otype = cd.storage_type(dtype)
    if use_blas:
        product = _blas_product(blas_c.blas_letter(dtype), ctx, fail)
        zero = f"memset({out}->data, 0, (size_t)tg_size({out}) * sizeof({otype}));"
        # the whole batch as one (batch * M) x K product when b is one matrix for all of it
        # and a's batch and row axes step at one stride
        merged = f"""
    int merge = 1;
    int64_t step = M > 1 ? ars : 0, expect = ars * M;
    for (int d = {nb - 1}; d >= 0 && merge; d--) {{
        merge &= {b}->shape[d] == 1;
        if ({a}->shape[d] == 1) continue;
        if (step == 0) step = {a}->strides[d], expect = step;
        merge &= {a}->strides[d] == expect;
        expect *= {a}->shape[d];
    }}
    if (merge && nbatch > 0) {{
        tg_mat A = {{ {a}->data, nbatch * M, K, step ? step : ars, acs }};
        tg_mat B = {{ {b}->data, K, N, brs, bcs }};
        if (tg_{blas_c.blas_letter(dtype)}gemm(ctx_, 1, A, B, ({otype} *){out}->data, 1)) {{ {fail} }}
        nbatch = 0;
    }}"""
    else:
        product = _loop_product(node)
        zero = merged = ""
    return f"""
    {{
    tg_ctx *ctx_ = {ctx};
    {_checks(node, a, b, ctx, fail)}
    int64_t shp[{nd}];
    for (int d = 0; d < {nb}; d++) shp[d] = {a}->shape[d] == 1 ? {b}->shape[d] : {a}->shape[d];
    const int64_t M = {a}->shape[{nd - 2}], K = {a}->shape[{nd - 1}], N = {b}->shape[{nd - 1}];
    shp[{nd - 2}] = M; shp[{nd - 1}] = N;
    if (tg_alloc({out}, {nd}, shp, {cd.typenum(dtype)}, ctx_)) {{ {fail} }}
    {zero}
    const int64_t ars = {a}->strides[{nd - 2}], acs = {a}->strides[{nd - 1}];
    const int64_t brs = {b}->strides[{nd - 2}], bcs = {b}->strides[{nd - 1}];
    int64_t nbatch = 1, sta[{nb}], stb[{nb}], ctr[{nb}];
    for (int d = 0; d < {nb}; d++) {{
        nbatch *= shp[d];
        sta[d] = {a}->shape[d] == 1 ? 0 : {a}->strides[d];
        stb[d] = {b}->shape[d] == 1 ? 0 : {b}->strides[d];
        ctr[d] = 0;
    }}
    if (M == 0 || N == 0) nbatch = 0;
    {merged}
    const char *pa = {a}->data, *pb = {b}->data;
    for (int64_t t = 0; t < nbatch; t++) {{
        {otype} *o = ({otype} *){out}->data + t * M * N;
        {{ {product}
        }}
        for (int d = {nb - 1}; d >= 0; d--) {{   /* next batch element */
            pa += sta[d]; pb += stb[d];
            if (++ctr[d] < shp[d]) break;
            pa -= sta[d] * shp[d]; pb -= stb[d] * shp[d];
            ctr[d] = 0;
        }}
    }}
    }}"""
