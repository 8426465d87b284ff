"""The C of ``Dot`` and ``MatMul`` (``tensorgraph.tensor.dot``): products through the BLAS
helpers of ``ops/blas.py`` when both operands have the output's float32/float64 dtype, a plain
loop accumulating in a wide type for other dtypes and mixed ones.

``MatMul`` is one matrix product per batch element, broadcasting the batch axes (each product
a call of ``tg_sgemm`` / ``tg_dgemm``, which take any strides). When the second operand is one
matrix for the whole batch and the first one's batch and row axes lie at one stride (a
C-contiguous stack, say), the whole batch is a single product of a (batch * rows) x inner
matrix, which BLAS runs much faster than many small ones. Its run-time checks are
``MatMul.perform``'s: inner lengths, batch lengths, and a batch length of 1 is only broadcast
where the operand's type declares it.
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_string
from tensorgraph.link.c.ops import register
from tensorgraph.link.c.ops.blas import BlasC, blas_letter, c_type
from tensorgraph.link.c.ops.strided import int_list
from tensorgraph.tensor.dot import Dot, MatMul


def loop_accumulator(dtype: str) -> tuple[str, str]:
    """(C type of the sum, C expression storing the sum ``acc`` as ``dtype``) of a plain
    product loop for the dtypes BLAS does not do: a wide integer, or the float itself."""
    if cd.is_float(dtype):
        return cd.compute_type(dtype), f"({cd.storage_type(dtype)})acc"
    acc = "uint64_t" if cd.is_unsigned(dtype) and dtype != "bool" else "int64_t"
    return acc, "(acc != 0)" if dtype == "bool" else f"({cd.storage_type(dtype)})acc"


def dot_code(node, inputs, outputs, sub) -> str:
    """``np.dot`` of vectors/matrices: BLAS when both inputs have the output's float32/float64
    dtype, a plain loop in a wide accumulator for the other dtypes."""
    (a, b), (out,) = inputs, outputs
    va, vb = node.inputs
    dtype = node.outputs[0].type.dtype
    ctx, fail = sub["ctx"], sub["fail"]
    la, lb = va.ndim - 1, 0
    check = (f"if ({a}->shape[{la}] != {b}->shape[{lb}]) {{ char sb0[96], sb1[96]; "
             f"tg_error({ctx}, \"dot: inner dimensions differ: shapes %s and %s (%lld != %lld)\","
             f" tg_shape_str({a}, sb0, 96), tg_shape_str({b}, sb1, 96), "
             f"(long long){a}->shape[{la}], (long long){b}->shape[{lb}]); {fail} }}")
    out_dims = ([f"{a}->shape[0]"] if va.ndim == 2 else []) + \
               ([f"{b}->shape[1]"] if vb.ndim == 2 else [])
    alloc = (f"const int64_t shp[{max(len(out_dims), 1)}] = {{{', '.join(out_dims) or '0'}}};\n"
             f"if (tg_alloc({out}, {len(out_dims)}, shp, {cd.typenum(dtype)}, {ctx})) "
             f"{{ {fail} }}")
    ctype = c_type(dtype)
    if ctype is not None and va.dtype == vb.dtype == dtype:
        s = blas_letter(dtype)
        if va.ndim == 1 and vb.ndim == 1:
            work = (f"int err; const {ctype} r = tg_{s}dot({ctx}, tg_vec_of({a}), "
                    f"tg_vec_of({b}), &err);\nif (err) {{ {fail} }}\n"
                    f"*({ctype} *){out}->data = r;")
        else:
            size = " * ".join(f"shp[{d}]" for d in range(len(out_dims)))
            call = {(2, 1): f"tg_{s}gemv({ctx}, 1, tg_mat_of({a}), tg_vec_of({b}), o)",
                    (1, 2): f"tg_{s}gemv({ctx}, 1, tg_mat_t({b}), tg_vec_of({a}), o)",
                    (2, 2): f"tg_{s}gemm({ctx}, 1, tg_mat_of({a}), tg_mat_of({b}), o, 0)"}[
                (va.ndim, vb.ndim)]
            zero = ("" if va.ndim == vb.ndim == 2 else
                    f"memset(o, 0, (size_t)({size}) * sizeof({ctype}));\n")
            work = f"{ctype} *o = ({ctype} *){out}->data;\n{zero}if ({call}) {{ {fail} }}"
        return f"{check}\n{alloc}\n{work}"
    # any other dtypes: a plain triple loop
    for d in (va.dtype, vb.dtype, dtype):
        if not cd.has_c(d):
            raise NotImplementedError(f"dot has no C for dtype {d}")
    acc, store = loop_accumulator(dtype)
    ta, tb = cd.storage_type(va.dtype), cd.storage_type(vb.dtype)
    rows = f"{a}->shape[0]" if va.ndim == 2 else "1"
    cols = f"{b}->shape[1]" if vb.ndim == 2 else "1"
    sa0 = f"{a}->strides[0]" if va.ndim == 2 else "0"
    sb1 = f"{b}->strides[1]" if vb.ndim == 2 else "0"
    return f"""
    {check}
    {alloc}
    const int64_t M = {rows}, N = {cols}, K = {a}->shape[{la}];
    const int64_t sa0 = {sa0}, sa1 = {a}->strides[{la}], sb0 = {b}->strides[0], sb1 = {sb1};
    {cd.storage_type(dtype)} *o = ({cd.storage_type(dtype)} *){out}->data;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {{
            {acc} acc = 0;
            const char *pa = {a}->data + i * sa0, *pb = {b}->data + j * sb1;
            for (int64_t p = 0; p < K; p++)
                acc += ({acc})*(const {ta} *)(pa + p * sa1) * ({acc})*(const {tb} *)(pb + p * sb0);
            o[i * N + j] = {store};
        }}
    """


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
    acc, store = loop_accumulator(dtype)
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
    ctype = c_type(dtype)
    use_blas = ctype is not None and va.type.dtype == vb.type.dtype == dtype
    otype = cd.storage_type(dtype)
    if use_blas:
        product = _blas_product(blas_letter(dtype), ctx, fail)
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
        if (tg_{blas_letter(dtype)}gemm(ctx_, 1, A, B, ({otype} *){out}->data, 1)) {{ {fail} }}
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


@register(Dot)
class DotC(BlasC):
    def code(self, op, node, name, inputs, outputs, sub):
        return dot_code(node, inputs, outputs, sub)


@register(MatMul)
class MatMulC(BlasC):
    def code(self, op, node, name, inputs, outputs, sub):
        return matmul_code(node, inputs, outputs, sub)
