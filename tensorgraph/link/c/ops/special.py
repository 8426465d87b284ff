"""The C of ``Softmax`` and ``LogSoftmax`` (same formulas as their numpy ``perform``), and of
``TakeAlongLastAxis`` / ``PutAlongLastAxis`` (one entry per last-axis row, by integer label).

The output is allocated C-contiguous. The kernels read the input directly when it already
has the output's dtype and is C-contiguous; otherwise it is first converted into the output
buffer, and the kernels work in place there. Along the axis each slice is then a *row*
(contiguous, when the axis is the last one or ``axis=None``) or a block of columns (a later
dimension varies fastest); either way the loops are vectorized, ``exp``/``log`` through
libmvec. Neighbouring axes (``axis=(1, 2)``) are one axis of their sizes' product in that
buffer; a softmax over axes that are not neighbours has no C (its ``perform`` runs):

1. the shift: the maximum along the axis, or 0 where that maximum is nan or infinite;
2. softmax: ``e = exp(x - shift)`` written out while summed, then divided by the sum;
   log-softmax: the sum of ``exp(x - shift)``, then ``(x - shift) - log(sum)``.
"""

from __future__ import annotations

import string

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_comment
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.tensor.special import (LogSoftmax, PutAlongLastAxis, Softmax,
                                        TakeAlongLastAxis)

_TEMPLATE = r"""
#ifndef TG_SHORT_ROW
#define TG_SHORT_ROW 16     /* rows shorter than this take the short-row path */
#endif

/* $what over a contiguous row of n elements: o may be s */
static void tg_${name}_row(const $ST *s, $ST *o, int64_t n)
{
    $CT m = ($CT)-INFINITY;
    int nanf = 0;
    #pragma omp simd reduction(max:m) reduction(|:nanf)
    for (int64_t j = 0; j < n; j++) {
        const $CT v = s[j];
        m = v > m ? v : m;
        nanf |= (v != v);
    }
    if (nanf || !isfinite(m)) m = 0;
    $CT sum = 0;
$ROW_BODY
}

/* `rows` contiguous rows of n elements each, n shorter than a vector register: a loop over
 * one row would call exp once per element in its scalar remainder (128 rows of 10 floats took
 * 8 us, 2026-11-25 at ff8fd63), so the rows are shifted by their maxima first and every
 * exp runs in one flat, vectorized loop over the block (work: rows * n values of $CT). */
static void tg_${name}_short(const $ST *s, $ST *o, int64_t rows, int64_t n, $CT *work)
{
    $CT *shift = work + rows * n, *sum = shift + rows;
    for (int64_t r = 0; r < rows; r++) {
        const $ST *row = s + r * n;
        /* the row path's max, as a plain loop: its simd reduction costs more than it saves on
         * rows this short (128 rows of 10: 3.4 us instead of 1.8 us for the whole op,
         * 2026-11-25 at ff8fd63) */
        $CT m = ($CT)-INFINITY;
        int nanf = 0;
        for (int64_t j = 0; j < n; j++) {
            const $CT v = row[j];
            m = v > m ? v : m;
            nanf |= (v != v);
        }
        shift[r] = (nanf || !isfinite(m)) ? 0 : m;
        sum[r] = 0;
        for (int64_t j = 0; j < n; j++) work[r * n + j] = ($CT)row[j] - shift[r];
    }
    const int64_t total = rows * n;
$SHORT_BODY
}

/* the same along the first axis of an (n, inner) block, vectorized over inner */
static int tg_${name}_cols(tg_ctx *ctx, const $ST *s, $ST *o, int64_t n, int64_t inner)
{
    $CT *m = ($CT *)malloc(2 * (size_t)inner * sizeof($CT));
    if (m == NULL) return tg_error(ctx, "out of memory in $what");
    $CT *sum = m + inner;
    for (int64_t j = 0; j < inner; j++) { m[j] = ($CT)-INFINITY; sum[j] = 0; }
    for (int64_t l = 0; l < n; l++) {
        const $ST *r = s + l * inner;
        #pragma omp simd
        for (int64_t j = 0; j < inner; j++) {
            const $CT v = r[j];
            m[j] = (v > m[j] || v != v) ? v : m[j];
        }
    }
    for (int64_t j = 0; j < inner; j++) if (!isfinite(m[j])) m[j] = 0;
$COLS_BODY
    free(m);
    return 0;
}
"""

_SOFTMAX_ROW = r"""
    #pragma omp simd reduction(+:sum)
    for (int64_t j = 0; j < n; j++) {
        const $CT e = $EXP(s[j] - m);
        o[j] = e;
        sum += e;
    }
    #pragma omp simd
    for (int64_t j = 0; j < n; j++) o[j] = ($CT)o[j] / sum;"""

_SOFTMAX_COLS = r"""
    for (int64_t l = 0; l < n; l++) {
        const $ST *r = s + l * inner;
        $ST *w = o + l * inner;
        #pragma omp simd
        for (int64_t j = 0; j < inner; j++) {
            const $CT e = $EXP(r[j] - m[j]);
            w[j] = e;
            sum[j] += e;
        }
    }
    for (int64_t l = 0; l < n; l++) {
        $ST *w = o + l * inner;
        #pragma omp simd
        for (int64_t j = 0; j < inner; j++) w[j] = ($CT)w[j] / sum[j];
    }"""

#: the short-row bodies: ``work`` holds ``s - max`` per element on entry
_SOFTMAX_SHORT = r"""
    #pragma omp simd
    for (int64_t i = 0; i < total; i++) work[i] = $EXP(work[i]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) sum[r] += work[r * n + j];
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++)  /* the exp rounded to $ST first, as the row path */
            o[r * n + j] = ($ST)(($CT)($ST)work[r * n + j] / sum[r]);"""

_LOGSOFTMAX_SHORT = r"""
    for (int64_t i = 0; i < total; i++) o[i] = ($ST)work[i];
    #pragma omp simd
    for (int64_t i = 0; i < total; i++) work[i] = $EXP(work[i]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) sum[r] += work[r * n + j];
    #pragma omp simd
    for (int64_t r = 0; r < rows; r++) sum[r] = $LOG(sum[r]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) o[r * n + j] = ($ST)(($CT)o[r * n + j] - sum[r]);"""

_LOGSOFTMAX_ROW = r"""
    #pragma omp simd reduction(+:sum)
    for (int64_t j = 0; j < n; j++) sum += $EXP(s[j] - m);
    const $CT ls = $LOG(sum);
    #pragma omp simd
    for (int64_t j = 0; j < n; j++) o[j] = (s[j] - m) - ls;"""

_LOGSOFTMAX_COLS = r"""
    for (int64_t l = 0; l < n; l++) {
        const $ST *r = s + l * inner;
        #pragma omp simd
        for (int64_t j = 0; j < inner; j++) sum[j] += $EXP(r[j] - m[j]);
    }
    for (int64_t j = 0; j < inner; j++) sum[j] = $LOG(sum[j]);
    for (int64_t l = 0; l < n; l++) {
        const $ST *r = s + l * inner;
        $ST *w = o + l * inner;
        #pragma omp simd
        for (int64_t j = 0; j < inner; j++) w[j] = (r[j] - m[j]) - sum[j];
    }"""


def _names(op, node):
    kind = "logsoftmax" if isinstance(op, LogSoftmax) else "softmax"
    dtype = node.outputs[0].type.dtype
    if dtype not in cd.FLOATS:
        raise NotImplementedError(f"no C {kind} for dtype {dtype}")
    return kind, dtype, f"{kind}_{dtype}"


@register(LogSoftmax)
@register(Softmax)
class SoftmaxC(CImplementation):
    """Softmax and LogSoftmax over one axis or over every element (see the module
    docstring)."""

    def support_code(self, op, node):
        kind, dtype, name = _names(op, node)
        row, cols, short = ((_LOGSOFTMAX_ROW, _LOGSOFTMAX_COLS, _LOGSOFTMAX_SHORT)
                            if kind == "logsoftmax"
                            else (_SOFTMAX_ROW, _SOFTMAX_COLS, _SOFTMAX_SHORT))
        text = (_TEMPLATE.replace("$ROW_BODY", row).replace("$COLS_BODY", cols)
                .replace("$SHORT_BODY", short))
        compute = cd.compute_type(dtype)
        code = string.Template(text).substitute(
            name=name, what=kind, ST=cd.storage_type(dtype), CT=compute,
            EXP="tg_exp" if compute == "double" else "tg_expf",  # tg_scalar.h: the same exp
            LOG="tg_log" if compute == "double" else "tg_logf")  # for every element
        return cd.tg_vector_math(code) + code

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (out,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        kind, dtype, fname = _names(op, node)
        in_dtype = node.inputs[0].type.dtype
        if not cd.has_c(in_dtype):
            raise NotImplementedError(f"no C {kind} for input dtype {in_dtype}")
        ndim = node.inputs[0].type.ndim
        st, it = cd.storage_type(dtype), cd.storage_type(in_dtype)
        convert = f"({st}){cd.cast(f'*(const {it} *)p', in_dtype, dtype)}"
        if op.axis is None:
            geometry = "const int64_t outer = 1, len = n, inner = 1;"
        else:
            # the buffer is C-contiguous, so neighbouring axes are one axis of their sizes'
            # product; other sets of axes are left to perform
            first, last = (op.axis[0], op.axis[-1]) if op.axis else (0, -1)
            if not op.axis or op.axis != tuple(range(first, last + 1)):
                raise NotImplementedError(f"no C {kind} over the axes {op.axis}: only "
                                          "neighbouring ones")
            before = " * ".join(f"{x}->shape[{d}]" for d in range(first)) or "1"
            length = " * ".join(f"{x}->shape[{d}]" for d in op.axis)
            after = " * ".join(f"{x}->shape[{d}]" for d in range(last + 1, ndim)) or "1"
            geometry = (f"const int64_t outer = {before}, len = {length}, "
                        f"inner = {after};")
        same = "1" if in_dtype == dtype else "0"
        return f"""
    /* {c_comment(str(op))} */
    if (tg_alloc({out}, {ndim}, {x}->shape, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
    const int64_t n = tg_size({out});
    if (n > 0) {{
        {st} *o = ({st} *){out}->data;
        const {st} *s = (const {st} *){x}->data;
        if (!({same} && tg_is_c_contiguous({x}))) {{  /* convert into the output first */
            int64_t idx[{max(ndim, 1)}] = {{0}};
            const char *p = {x}->data;
            for (int64_t i = 0; i < n; i++) {{
                o[i] = {convert};
                for (int d = {ndim - 1}; d >= 0; d--) {{
                    if (++idx[d] < {x}->shape[d]) {{ p += {x}->strides[d]; break; }}
                    p -= {x}->strides[d] * ({x}->shape[d] - 1);
                    idx[d] = 0;
                }}
            }}
            s = o;
        }}
        {geometry}
        if (inner == 1 && len < TG_SHORT_ROW && outer > 1) {{
            {cd.compute_type(dtype)} *work = ({cd.compute_type(dtype)} *)malloc(
                (size_t)(n + 2 * outer) * sizeof({cd.compute_type(dtype)}));
            if (work == NULL) {{ tg_error({ctx}, "out of memory in {kind}"); {fail} }}
            tg_{fname}_short(s, o, outer, len, work);
            free(work);
        }}
        else for (int64_t b = 0; b < outer; b++) {{
            if (inner == 1) tg_{fname}_row(s + b * len, o + b * len, len);
            else if (tg_{fname}_cols({ctx}, s + b * len * inner, o + b * len * inner, len, inner))
                {{ {fail} }}
        }}
    }}
    """


# ----------------------------------------------------------------------------------------------
# TakeAlongLastAxis / PutAlongLastAxis: one entry per last-axis row, by integer label


def _walk(arrays, ndim: int) -> str:
    """Advance the byte pointers ``p_<k>`` of ``arrays`` (name, C array) over the first
    ``ndim`` dims in C order (an odometer on ``idx``, sizes from the first array)."""
    first = arrays[0][1]
    steps = " ".join(f"p_{k} += {a}->strides[d];" for k, a in arrays)
    backs = " ".join(f"p_{k} -= {a}->strides[d] * ({first}->shape[d] - 1);" for k, a in arrays)
    return (f"for (int d = {ndim - 1}; d >= 0; d--) {{\n"
            f"    if (++idx[d] < {first}->shape[d]) {{ {steps} break; }}\n"
            f"    {backs} idx[d] = 0;\n}}")


def _label_checks(what, labels_dtype, lab, rows_like, ctx, fail, ndim) -> tuple[str, str]:
    """(shape check of the labels against ``rows_like``'s leading dims, statement reading
    label ``lv`` from ``p_l`` and checking its range against ``K``)."""
    shape_check = " || ".join(f"{lab}->shape[{d}] != {rows_like}->shape[{d}]"
                              for d in range(ndim)) or "0"
    shapes = (f"{{ char sb0[160], sb1[160]; tg_error({ctx}, \"{what}: labels of shape %s do not "
              f"match the leading dimensions of values of shape %s\", "
              f"tg_shape_str({lab}, sb0, 160), tg_shape_str({rows_like}, sb1, 160)); {fail} }}")
    lt = cd.storage_type(labels_dtype)
    unsigned = cd.is_unsigned(labels_dtype)
    value = "(unsigned long long)raw" if unsigned else "(long long)raw"
    fmt = "%llu" if unsigned else "%lld"
    read = (f"const {lt} raw = *(const {lt} *)p_l;\n"
            f"const int64_t lv = (int64_t)raw;\n"
            f"if ({'raw > (' + lt + ')INT64_MAX || ' if unsigned else ''}lv < 0 || lv >= K) "
            f"{{ tg_error({ctx}, \"IndexError: {what}: label {fmt} is out of range for %lld classes "
            f"(labels must be in 0..%lld)\", {value}, (long long)K, (long long)K - 1); {fail} }}")
    return f"if ({shape_check}) {shapes}", read


@register(TakeAlongLastAxis)
class TakeAlongLastAxisC(CImplementation):
    """``out[i...] = x[i..., labels[i...]]``, labels checked as ``perform`` checks them."""

    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x, lab), (out,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        xv, lv = node.inputs
        n = xv.type.ndim - 1
        check, read = _label_checks("TakeAlongLastAxis", lv.type.dtype, lab, x, ctx, fail, n)
        return f"""
    {check}
    if (tg_alloc({out}, {n}, {x}->shape, {cd.typenum(xv.type.dtype)}, {ctx})) {{ {fail} }}
    const int64_t rows = tg_size({out}), K = {x}->shape[{n}];
    const size_t item = tg_itemsize({out}->typenum);
    const char *p_x = {x}->data, *p_l = {lab}->data;
    int64_t idx[{max(n, 1)}] = {{0}};
    for (int64_t i = 0; i < rows; i++) {{
        {read}
        memcpy({out}->data + (size_t)i * item, p_x + lv * {x}->strides[{n}], item);
        {_walk([("x", x), ("l", lab)], n)}
    }}
    """


@register(PutAlongLastAxis)
class PutAlongLastAxisC(CImplementation):
    """Zeros shaped like ``like`` with ``values`` at the labels, checked as ``perform``
    does."""

    def code(self, op, node, name, inputs, outputs, sub):
        (vals, lab, like), (out,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        vv, lv, likev = node.inputs
        n = likev.type.ndim - 1
        check, read = _label_checks("PutAlongLastAxis", lv.type.dtype, lab, like, ctx, fail, n)
        vals_check = " || ".join(f"({vals}->shape[{d}] != {lab}->shape[{d}] && "
                                 f"{vals}->shape[{d}] != 1)" for d in range(n)) or "0"
        vst = ", ".join(f"{vals}->shape[{d}] == 1 ? 0 : {vals}->strides[{d}]"
                        for d in range(n)) or "0"
        return f"""
    {check}
    if ({vals_check}) {{ char sb0[160], sb1[160]; tg_error({ctx}, "PutAlongLastAxis: values of shape %s do not match labels of shape %s", tg_shape_str({vals}, sb0, 160), tg_shape_str({lab}, sb1, 160)); {fail} }}
    if (tg_alloc({out}, {n + 1}, {like}->shape, {cd.typenum(likev.type.dtype)}, {ctx})) {{ {fail} }}
    const int64_t K = {like}->shape[{n}], rows = tg_size({out}) / (K > 0 ? K : 1);
    const size_t item = tg_itemsize({out}->typenum);
    memset({out}->data, 0, (size_t)tg_size({out}) * item);
    if (K > 0) {{
        tg_array vw = *{vals};  /* values with broadcast dims at stride 0 */
        const int64_t vst[{max(n, 1)}] = {{{vst}}};
        for (int d = 0; d < {n}; d++) {{ vw.strides[d] = vst[d]; vw.shape[d] = {lab}->shape[d]; }}
        const tg_array *vp = &vw;
        const char *p_l = {lab}->data, *p_v = vw.data;
        int64_t idx[{max(n, 1)}] = {{0}};
        for (int64_t i = 0; i < rows; i++) {{
            {read}
            memcpy({out}->data + ((size_t)i * (size_t)K + (size_t)lv) * item, p_v, item);
            {_walk([("l", lab), ("v", "vp")], n)}
        }}
    }} else {{
        /* no classes: any label is out of range */
        const char *p_l = {lab}->data;
        if (tg_size({lab}) > 0) {{ {read} (void)lv; }}
    }}
    """
