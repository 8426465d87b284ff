"""The C of the reductions: ``CAReduce`` (sum, prod, max, min, all, any, and the bitwise
and/or of integers) and ``Argmax`` / ``Argmin``.

A CAReduce node accumulates into a C-contiguous buffer over the kept dimensions, in the op's
accumulator dtype (the output itself when the two dtypes agree), then converts to the output
dtype. The loops come from a *plan* made at run time from the input's shape and strides:
dimensions of size 1 are dropped, reduced dimensions with negative strides are walked forward,
the dimensions are ordered by decreasing stride so the innermost loop runs over the closest
elements, and neighbours of the same kind that are contiguous in memory are merged. The
innermost loop is then either

* a reduced dimension: a reduction into one value; when its elements are contiguous, per
  block of 4096 elements into 32 independent accumulators (a vectorized loop with no latency
  chain, no -ffast-math needed), the blocks' results then combined, so long float sums keep
  their precision; or
* a kept dimension: an update of a row of accumulators, vectorized over the row (four input
  rows per pass when the dimension above is reduced).

nan follows numpy: max and min propagate it (nan flags next to the vectorized max/min).
With ``config.openmp`` and at least ``openmp_elemwise_minsize`` elements, a whole-array
reduction is split into blocks reduced by different threads (and combined in block order, so
the result does not depend on the thread count), and independent rows or columns of outputs
are shared out between threads.

The plan's type and the code that makes it are static C, ``reduction_plan.h``; the loops
are generated per reduction and dtype from the templates below.

Argmax/Argmin walk the reduced dimensions in C order (they count as one flattened axis) and
return the first extreme, or the first nan, as numpy does. When those elements are contiguous,
a vectorized pass finds the extreme (and whether there is a nan) and a second pass its first
position.
"""

from __future__ import annotations

import string

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_comment
from tensorgraph.link.c.ops import CImplementation, read_c, register
from tensorgraph.tensor.reduction import Argmax, Argmin, CAReduce

_KINDS = {np.add: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min",
          np.bitwise_and: "and", np.bitwise_or: "or"}


def _kind(scalar_op) -> str:
    kind = _KINDS.get(getattr(scalar_op, "nfunc", None))
    if kind is None:
        raise NotImplementedError(f"no C for a reduction with {scalar_op}")
    return kind


def acc_dtype(op, in_dtype: str) -> str:
    """The dtype values are accumulated in: the op's ``acc_dtype``, else numpy's default for
    ``ufunc.reduce`` (64-bit integers for sums and products of smaller integers and bools)."""
    if op.acc_dtype is not None:
        return op.acc_dtype
    if _kind(op.scalar_op) in ("add", "mul") and (
            in_dtype == "bool" or (in_dtype not in cd.FLOATS and np.dtype(in_dtype).itemsize < 8)):
        return "uint64" if in_dtype.startswith("uint") else "int64"
    return in_dtype


def _identity(kind: str, acc: str) -> str:
    ctype = cd.compute_type(acc)
    if kind == "add" or kind == "or":
        return f"(({ctype})0)"
    if kind == "mul":
        return f"(({ctype})1)"
    if kind == "and":
        return "((uint8_t)1)" if acc == "bool" else f"(({ctype})~({ctype})0)"
    if cd.is_float(acc):
        return f"(({ctype})-INFINITY)" if kind == "max" else f"(({ctype})INFINITY)"
    info = np.iinfo(acc) if acc != "bool" else None
    if kind == "max":
        return "((uint8_t)0)" if info is None else cd.literal(info.min, acc)
    return "((uint8_t)1)" if info is None else cd.literal(info.max, acc)


def _combine(kind: str, acc: str, a: str, b: str) -> str:
    """``a`` combined with ``b`` (nan in either wins for float max/min)."""
    ctype = cd.compute_type(acc)
    if kind == "add":
        return f"({ctype})({a} + {b})"
    if kind == "mul":
        return f"({ctype})({a} * {b})"
    if kind == "and":
        return f"({ctype})({a} & {b})"
    if kind == "or":
        return f"({ctype})({a} | {b})"
    cmp = ">" if kind == "max" else "<"
    if cd.is_float(acc):
        return f"(({b} {cmp} {a} || {b} != {b}) ? {b} : {a})"
    return f"(({b} {cmp} {a}) ? {b} : {a})"


# Placeholders: K (name), ACC (accumulator C type), IN (input storage type), IDENT, LOAD(v),
# COMB(a, b), and the BLOCK and PARALLEL code, substituted in `_reduce_support`.
# q[b:e] into total: 32 independent accumulators (several vector registers, no latency chain)
_LANES_BLOCK = r"""
            $ACC lane[32];
            for (int l = 0; l < 32; l++) lane[l] = $IDENT;
            int64_t i = b;
            for (; i + 32 <= e; i += 32) {
                #pragma omp simd
                for (int l = 0; l < 32; l++) {
                    const $ACC v = LOAD(q[i + l]);
                    lane[l] = COMB(lane[l], v);
                }
            }
            for (; i < e; i++) { const $ACC v = LOAD(q[i]); lane[0] = COMB(lane[0], v); }
            for (int l = 0; l < 32; l++) total = COMB(total, lane[l]);"""

# float max/min: 32 plain max/min accumulators and 32 nan flags (cheaper than nan-aware lanes)
_EXTREMUM_BLOCK = r"""
            $ACC lane[32], s = $IDENT;
            int nanl[32], nanf = 0;
            for (int l = 0; l < 32; l++) { lane[l] = $IDENT; nanl[l] = 0; }
            int64_t i = b;
            for (; i + 32 <= e; i += 32) {
                #pragma omp simd
                for (int l = 0; l < 32; l++) {
                    const $ACC v = LOAD(q[i + l]);
                    lane[l] = (v $CMP lane[l]) ? v : lane[l];
                    nanl[l] |= (v != v);
                }
            }
            for (; i < e; i++) {
                const $ACC v = LOAD(q[i]);
                s = (v $CMP s) ? v : s;
                nanf |= (v != v);
            }
            for (int l = 0; l < 32; l++) { s = (lane[l] $CMP s) ? lane[l] : s; nanf |= nanl[l]; }
            if (nanf) s = ($ACC)NAN;
            total = COMB(total, s);"""

_RUN_TEMPLATE = r"""
/* one contiguous or strided run of n elements reduced to one value */
static inline $ACC tg_red_${K}_run(const char *p, int64_t n, int64_t st)
{
    $ACC total = $IDENT;
    if (st == (int64_t)sizeof($IN)) {
        const $IN *q = (const $IN *)p;
        for (int64_t b = 0; b < n; b += 4096) {
            const int64_t e = b + 4096 < n ? b + 4096 : n;
            $BLOCK
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const $ACC v = LOAD(*(const $IN *)(p + i * st));
            total = COMB(total, v);
        }
    }
    return total;
}

"""

_REDUCE_TEMPLATE = _RUN_TEMPLATE + r"""
/* a[j * ast] = COMB(a[j * ast], p[j]) for a row of n accumulators */
static inline void tg_red_${K}_row($ACC *a, int64_t ast, const char *p, int64_t n, int64_t st)
{
    if (ast == 1 && st == (int64_t)sizeof($IN)) {
        const $IN *q = (const $IN *)p;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) { const $ACC v = LOAD(q[j]); a[j] = COMB(a[j], v); }
    } else {
        for (int64_t j = 0; j < n; j++) {
            const $ACC v = LOAD(*(const $IN *)(p + j * st));
            a[j * ast] = COMB(a[j * ast], v);
        }
    }
}

/* four contiguous input rows (rs bytes apart) into a contiguous row of accumulators, in
 * row order (the same result as four row updates, a quarter of the accumulator traffic) */
static inline void tg_red_${K}_row4($ACC *a, const char *p, int64_t rs, int64_t n)
{
    const $IN *q0 = (const $IN *)p, *q1 = (const $IN *)(p + rs), *q2 = (const $IN *)(p + 2 * rs),
              *q3 = (const $IN *)(p + 3 * rs);
    #pragma omp simd
    for (int64_t j = 0; j < n; j++) {
        $ACC t = COMB(a[j], LOAD(q0[j]));
        t = COMB(t, LOAD(q1[j]));
        t = COMB(t, LOAD(q2[j]));
        a[j] = COMB(t, LOAD(q3[j]));
    }
}

/* the outer dims' odometer over [j0, j1) of the innermost one */
static void tg_red_${K}_walk(const tg_rplan *pl, $ACC *acc, int64_t j0, int64_t j1)
{
    const int L = pl->nd - 1;
    if (L >= 1 && !pl->red[L] && pl->red[L - 1] && pl->ost[L] == 1 &&
        pl->ist[L] == (int64_t)sizeof($IN)) {
        /* a kept contiguous row under a reduced dim: rows four at a time */
        const int R = L - 1;
        const int64_t nr = pl->shape[R], rs = pl->ist[R];
        int64_t n_outer = 1, idx[TG_MAXDIM] = {0};
        for (int d = 0; d < R; d++) n_outer *= pl->shape[d];
        const char *ip = pl->base + j0 * pl->ist[L];
        int64_t op = j0;
        for (int64_t it = 0; it < n_outer; it++) {
            int64_t r = 0;
            for (; r + 4 <= nr; r += 4) tg_red_${K}_row4(acc + op, ip + r * rs, rs, j1 - j0);
            for (; r < nr; r++) tg_red_${K}_row(acc + op, 1, ip + r * rs, j1 - j0, pl->ist[L]);
            for (int d = R - 1; d >= 0; d--) {
                if (++idx[d] < pl->shape[d]) { ip += pl->ist[d]; op += pl->ost[d]; break; }
                ip -= pl->ist[d] * (pl->shape[d] - 1);
                op -= pl->ost[d] * (pl->shape[d] - 1);
                idx[d] = 0;
            }
        }
        return;
    }
    int64_t n_outer = 1, idx[TG_MAXDIM] = {0};
    for (int d = 0; d < L; d++) n_outer *= pl->shape[d];
    const char *ip = pl->base + j0 * pl->ist[L];
    int64_t op = j0 * pl->ost[L];
    for (int64_t it = 0; it < n_outer; it++) {
        if (pl->red[L]) {
            const $ACC r = tg_red_${K}_run(ip, j1 - j0, pl->ist[L]);
            acc[op] = COMB(acc[op], r);
        } else {
            tg_red_${K}_row(acc + op, pl->ost[L], ip, j1 - j0, pl->ist[L]);
        }
        for (int d = L - 1; d >= 0; d--) {
            if (++idx[d] < pl->shape[d]) { ip += pl->ist[d]; op += pl->ost[d]; break; }
            ip -= pl->ist[d] * (pl->shape[d] - 1);
            op -= pl->ost[d] * (pl->shape[d] - 1);
            idx[d] = 0;
        }
    }
}

$BLOCKS/* acc (n_out accumulators, C order of the kept dims) = the reduction of x over red */
static int tg_red_${K}(tg_ctx *ctx, const tg_array *x, const unsigned char *red, $ACC *acc,
                    int64_t n_out)
{
    for (int64_t i = 0; i < n_out; i++) acc[i] = $IDENT;
    tg_rplan pl;
    tg_rplan_make(&pl, x, red);
    if (pl.empty) return 0;
    if (pl.nd == 0) {
        const $ACC v = LOAD(*(const $IN *)pl.base);
        acc[0] = COMB(acc[0], v);
        return 0;
    }
    const int L = pl.nd - 1;
    $PARALLEL
    tg_red_${K}_walk(&pl, acc, 0, pl.shape[L]);
    (void)ctx;
    return 0;
}
"""

# Parallel cases (config.openmp), each a block function run by tg_run (runtime.h): one long
# run split in stretches of 32768 elements, reduced into one partial result per stretch and
# combined in stretch order (the sum does not depend on the thread count); independent
# outputs of a reduced innermost dim (all outer dims kept); column blocks of a kept innermost
# dim. Block k of n takes its share of the stretches, outputs or column blocks
# (tg_split_block).
_PARALLEL_BLOCKS = r"""
/* what the blocks of a parallel reduction share: the plan, the accumulators, the partial
 * results of the stretches, and how many stretches' elements, outputs or columns there are */
typedef struct { const tg_rplan *pl; $ACC *acc, *part; int64_t n; } tg_red_${K}_par;

static void tg_red_${K}_stretches(void *arg, int k, int nk)
{
    const tg_red_${K}_par *a = (const tg_red_${K}_par *)arg;
    const int L = a->pl->nd - 1;
    const int64_t B = 32768, n = a->n, nb = (n + B - 1) / B, st = a->pl->ist[L];
    int64_t lo, hi;
    tg_split_block(nb, k, nk, &lo, &hi);
    for (int64_t b = lo; b < hi; b++)
        a->part[b] = tg_red_${K}_run(a->pl->base + b * B * st, (b + 1) * B < n ? B : n - b * B, st);
}

static void tg_red_${K}_outputs(void *arg, int k, int nk)
{
    const tg_red_${K}_par *a = (const tg_red_${K}_par *)arg;
    const tg_rplan *pl = a->pl;
    const int L = pl->nd - 1;
    int64_t lo, hi;
    tg_split_block(a->n, k, nk, &lo, &hi);
    for (int64_t it = lo; it < hi; it++) {
        int64_t io, oo;
        tg_rplan_at(pl, L, it, &io, &oo);
        const $ACC r = tg_red_${K}_run(pl->base + io, pl->shape[L], pl->ist[L]);
        a->acc[oo] = COMB(a->acc[oo], r);
    }
}

static void tg_red_${K}_columns(void *arg, int k, int nk)
{
    const tg_red_${K}_par *a = (const tg_red_${K}_par *)arg;
    const int64_t B = 128, n = a->n, nb = (n + B - 1) / B;
    int64_t lo, hi;
    tg_split_block(nb, k, nk, &lo, &hi);
    for (int64_t b = lo; b < hi; b++)
        tg_red_${K}_walk(a->pl, a->acc, b * B, (b + 1) * B < n ? (b + 1) * B : n);
}

"""

_PARALLEL = r"""
    {
        int64_t n_outer = 1, all_kept = 1;
        for (int d = 0; d < L; d++) { n_outer *= pl.shape[d]; all_kept &= !pl.red[d]; }
        const int64_t n = pl.shape[L], total_n = n_outer * n;
        if (total_n >= $MINSIZE) {
            tg_red_${K}_par par = {&pl, acc, NULL, n};
            if (pl.red[L] && n_outer == 1) {
                const int64_t nb = (n + 32767) / 32768;
                par.part = ($ACC *)malloc((size_t)nb * sizeof($ACC));
                if (par.part == NULL) return tg_error(ctx, "out of memory in a reduction");
                tg_run(ctx, tg_red_${K}_stretches, &par, tg_threads(ctx));
                for (int64_t b = 0; b < nb; b++) acc[0] = COMB(acc[0], par.part[b]);
                free(par.part);
                return 0;
            }
            if (pl.red[L] && all_kept) {
                par.n = n_outer;
                tg_run(ctx, tg_red_${K}_outputs, &par, tg_threads(ctx));
                return 0;
            }
            if (!pl.red[L] && n >= 256) {
                tg_run(ctx, tg_red_${K}_columns, &par, tg_threads(ctx));
                return 0;
            }
        }
    }
"""


# A 1-d input reduced whole (``sum(v)`` of a vector): one run, no plan over dimensions, so the
# module compiles a fraction of the general code (the general Sum node cost 0.29 s of gcc,
# 2026-11-25 at ff8fd63).
# With config.openmp a long vector is reduced in the blocks of the general code's parallel
# case, combined in the same order, so the two give the same sums.
_VECTOR_TEMPLATE = _RUN_TEMPLATE + r"""$BLOCKS
static int tg_red_${K}(tg_ctx *ctx, const tg_array *x, $ACC *acc)
{
    const int64_t n = x->shape[0], st = x->strides[0];
    $PARALLEL
    acc[0] = COMB($IDENT, tg_red_${K}_run(x->data, n, st));
    (void)ctx;
    return 0;
}
"""

_VECTOR_BLOCKS = r"""
/* what the blocks of a parallel whole-vector reduction share */
typedef struct { const char *data; int64_t n, st; $ACC *part; } tg_red_${K}_par;

static void tg_red_${K}_stretches(void *arg, int k, int nk)
{
    const tg_red_${K}_par *a = (const tg_red_${K}_par *)arg;
    const int64_t B = 32768, n = a->n, nb = (n + B - 1) / B;
    int64_t lo, hi;
    tg_split_block(nb, k, nk, &lo, &hi);
    for (int64_t b = lo; b < hi; b++)
        a->part[b] = tg_red_${K}_run(a->data + b * B * a->st, (b + 1) * B < n ? B : n - b * B,
                                     a->st);
}
"""

_VECTOR_PARALLEL = r"""
    if (n >= $MINSIZE) {
        const int64_t nb = (n + 32767) / 32768;
        tg_red_${K}_par par = {x->data, n, st, ($ACC *)malloc((size_t)nb * sizeof($ACC))};
        if (par.part == NULL) return tg_error(ctx, "out of memory in a reduction");
        tg_run(ctx, tg_red_${K}_stretches, &par, tg_threads(ctx));
        $ACC r = $IDENT;
        for (int64_t b = 0; b < nb; b++) r = COMB(r, par.part[b]);
        acc[0] = r;
        free(par.part);
        return 0;
    }
"""


def _reduce_support(kind: str, in_dtype: str, acc: str, vector: bool = False) -> tuple[str, str]:
    """(support code, function name) of the reduction ``kind`` of ``in_dtype`` in ``acc``;
    ``vector``: the whole-vector form ``fn(ctx, x, acc)`` instead of the general
    ``fn(ctx, x, red, acc, n_out)``."""
    name = f"{kind}_{in_dtype}_{acc}" + ("_vec" if vector else "")
    ctype = cd.compute_type(acc)
    template, blocks, parallel = ((_VECTOR_TEMPLATE, _VECTOR_BLOCKS, _VECTOR_PARALLEL) if vector
                                  else (_REDUCE_TEMPLATE, _PARALLEL_BLOCKS, _PARALLEL))
    if not config.openmp:
        blocks = parallel = ""
    extremum = kind in ("max", "min") and cd.is_float(acc)
    text = template.replace("$PARALLEL", parallel).replace("$BLOCKS", blocks).replace(
        "$BLOCK", _EXTREMUM_BLOCK if extremum else _LANES_BLOCK)
    text = _replace_calls(text, "LOAD", lambda v: f"(({ctype}){v})")
    text = _replace_calls(text, "COMB", lambda a, b: _combine(kind, acc, a, b))
    text = string.Template(text).substitute(
        MINSIZE=str(int(config.openmp_elemwise_minsize)),
        IDENT=_identity(kind, acc), K=name, ACC=ctype,
        CMP=">" if kind == "max" else "<",
        IN=cd.storage_type(in_dtype))
    return text, f"tg_red_{name}"


def _replace_calls(text: str, macro: str, fn) -> str:
    """Expand ``macro(args)`` (balanced parentheses, comma-separated args) with ``fn``."""
    out, i = [], 0
    while True:
        j = text.find(macro + "(", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k, depth, args, start = j + len(macro) + 1, 1, [], j + len(macro) + 1
        while depth:
            c = text[k]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "," and depth == 1:
                args.append(text[start:k].strip())
                start = k + 1
            k += 1
        args.append(text[start:k - 1].strip())
        out.append(fn(*args))
        i = k


def _whole_vector(op, node) -> bool:
    return node.inputs[0].type.ndim == 1 and tuple(op.axis) == (0,)


@register(CAReduce)
class CAReduceC(CImplementation):
    """Sum, Prod, Max, Min, All, Any and the bitwise and/or of integers (see the module
    docstring)."""

    def support_code(self, op, node):
        in_dtype = node.inputs[0].type.dtype
        acc = acc_dtype(op, in_dtype)
        if _whole_vector(op, node):
            return _reduce_support(_kind(op.scalar_op), in_dtype, acc, True)[0]
        return read_c("reduction_plan.h") + _reduce_support(
            _kind(op.scalar_op), in_dtype, acc)[0]

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (out,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        kind = _kind(op.scalar_op)
        in_dtype, out_dtype = node.inputs[0].type.dtype, node.outputs[0].type.dtype
        acc = acc_dtype(op, in_dtype)
        for d in (in_dtype, out_dtype, acc):
            if not cd.has_c(d):
                raise NotImplementedError(f"no C reduction for dtype {d}")
        vector = _whole_vector(op, node)
        fn = _reduce_support(kind, in_dtype, acc, vector)[1]
        ndim = node.inputs[0].type.ndim
        kept = [d for d in range(ndim) if d not in op.axis]
        red = ", ".join("1" if d in op.axis else "0" for d in range(ndim)) or "0"
        oshape = ", ".join(f"{x}->shape[{d}]" for d in kept) or "0"
        lines = [f"/* {c_comment(str(op))} */",
                 f"const unsigned char red[{max(ndim, 1)}] = {{{red}}};",
                 f"const int64_t oshp[{max(len(kept), 1)}] = {{{oshape}}};"]
        if kind in ("max", "min") and op.axis:
            what = type(op).__name__.lower()
            empty = " || ".join(f"{x}->shape[{a}] == 0" for a in op.axis)
            message = (f"{what} over axes {op.axis} of an array of shape %s: a zero-size axis has "
                       f"no {what} (numpy raises too); reduce a non-empty axis or use sum/prod")
            lines.append(f"if ({empty}) {{ char sb[160]; tg_error({ctx}, \"{message}\", "
                         f"tg_shape_str({x}, sb, sizeof(sb))); {fail} }}")
        lines.append(f"if (tg_alloc({out}, {len(kept)}, oshp, {cd.typenum(out_dtype)}, {ctx})) "
                     f"{{ {fail} }}")
        ctype, otype = cd.compute_type(acc), cd.storage_type(out_dtype)
        lines.append(f"const int64_t n_out = tg_size({out});")
        lines.append("if (n_out > 0) {")
        args = f"{ctx}, {x}, " + ("" if vector else "red, ")
        count = "" if vector else ", n_out"
        if vector:
            lines.append("(void)red;")
        if acc == out_dtype and out_dtype != "float16":
            lines.append(f"if ({fn}({args}({ctype} *){out}->data{count})) {{ {fail} }}")
        else:
            lines += [
                f"{ctype} *acc = ({ctype} *)malloc((size_t)n_out * sizeof({ctype}));",
                f"if (acc == NULL) {{ tg_error({ctx}, \"out of memory in a reduction\"); {fail} }}",
                f"if ({fn}({args}acc{count})) {{ free(acc); {fail} }}",
                f"{otype} *o = ({otype} *){out}->data;",
                "for (int64_t i = 0; i < n_out; i++) "
                f"o[i] = ({otype}){cd.cast('acc[i]', acc, out_dtype)};",
                "free(acc);"]
        lines.append("}")
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Argmax / Argmin

_ARG_TEMPLATE = r"""
/* index (C order over the nr reduced dims) of the first extreme element, or the first nan */
static int64_t ${name}(const char *p, int nr, const int64_t *shape, const int64_t *st)
{
    int64_t n = 1, idx[TG_MAXDIM] = {0};
    for (int d = 0; d < nr; d++) n *= shape[d];
    int flat = st[nr - 1] == (int64_t)sizeof($IN);
    for (int d = 0; d + 1 < nr; d++) flat &= st[d] == st[d + 1] * shape[d + 1];
    if (flat) {  /* contiguous: a vectorized pass for the extreme, then find its first place */
        const $IN *q = (const $IN *)p;
        $CT lane[32], best = $IDENT;
        int nanl[32], nanf = 0;
        for (int l = 0; l < 32; l++) { lane[l] = $IDENT; nanl[l] = 0; }
        int64_t i = 0;
        for (; i + 32 <= n; i += 32) {
            #pragma omp simd
            for (int l = 0; l < 32; l++) {
                const $CT v = ($CT)q[i + l];
                lane[l] = (v $CMP lane[l]) ? v : lane[l];
                nanl[l] |= ISNAN(v);
            }
        }
        for (; i < n; i++) {
            const $CT v = ($CT)q[i];
            best = (v $CMP best) ? v : best;
            nanf |= ISNAN(v);
        }
        for (int l = 0; l < 32; l++) { best = (lane[l] $CMP best) ? lane[l] : best; nanf |= nanl[l]; }
        /* skip 32 at a time to the block holding the first nan (if any) or extreme */
        if (nanf) {
            for (i = 0; i + 32 <= n; i += 32) {
                int hit = 0;
                #pragma omp simd reduction(|:hit)
                for (int l = 0; l < 32; l++) { const $CT v = ($CT)q[i + l]; hit |= ISNAN(v); }
                if (hit) break;
            }
            for (; i < n; i++) { const $CT v = ($CT)q[i]; if (ISNAN(v)) return i; }
        } else {
            for (i = 0; i + 32 <= n; i += 32) {
                int hit = 0;
                #pragma omp simd reduction(|:hit)
                for (int l = 0; l < 32; l++) hit |= (($CT)q[i + l] == best);
                if (hit) break;
            }
            for (; i < n; i++) if (($CT)q[i] == best) return i;
        }
        return 0;
    }
    $CT best = ($CT)*(const $IN *)p;
    int64_t at = 0;
    if (ISNAN(best)) return 0;
    if (nr == 1) {
        for (int64_t i = 1; i < n; i++) {
            const $CT v = ($CT)*(const $IN *)(p + i * st[0]);
            if (ISNAN(v)) return i;
            if (v $CMP best) { best = v; at = i; }
        }
        return at;
    }
    const char *q = p;
    for (int64_t i = 0; i < n; i++) {
        const $CT v = ($CT)*(const $IN *)q;
        if (ISNAN(v)) return i;
        if (v $CMP best) { best = v; at = i; }
        for (int d = nr - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) { q += st[d]; break; }
            q -= st[d] * (shape[d] - 1);
            idx[d] = 0;
        }
    }
    return at;
}
"""


def _arg_support(kind: str, dtype: str) -> tuple[str, str]:
    name = f"tg_arg{kind}_{dtype}"
    isnan = "(v != v)" if cd.is_float(dtype) else "0"
    text = _replace_calls(_ARG_TEMPLATE, "ISNAN", lambda v: isnan.replace("v", v))
    text = string.Template(text).substitute(
        name=name, CT=cd.compute_type(dtype), IN=cd.storage_type(dtype),
        CMP=">" if kind == "max" else "<", IDENT=_identity(kind, dtype))
    return text, name


def _arg_kind(op) -> str:
    """Which extreme the node looks for (the ``tg_arg<kind>_<dtype>`` helper it calls)."""
    return "max" if isinstance(op, Argmax) else "min"


@register(Argmin)
@register(Argmax)
class ArgExtremumC(CImplementation):
    """Output over the kept dims (C order); each element from ``tg_arg*`` over the reduced
    dims; a zero-size reduction fails as ``perform`` does."""

    perform_exact = True  # a copy, selection or integer result

    def support_code(self, op, node):
        return _arg_support(_arg_kind(op), node.inputs[0].type.dtype)[0]

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (out,) = inputs, outputs
        ctx, fail = sub["ctx"], sub["fail"]
        dtype = node.inputs[0].type.dtype
        if not cd.has_c(dtype):
            raise NotImplementedError(f"no C argmax for dtype {dtype}")
        fn = _arg_support(_arg_kind(op), dtype)[1]
        ndim = node.inputs[0].type.ndim
        kept = [d for d in range(ndim) if d not in op.axis]
        what = type(op).__name__.lower()
        message = (f"{what} over axes {op.axis} of an array of shape %s: a zero-size axis has no "
                   f"{what} (numpy raises too)")
        empty = " || ".join(f"{x}->shape[{a}] == 0" for a in op.axis) or "0"
        rshape = ", ".join(f"{x}->shape[{a}]" for a in op.axis) or "1"
        rst = ", ".join(f"{x}->strides[{a}]" for a in op.axis) or "0"
        kshape = ", ".join(f"{x}->shape[{d}]" for d in kept) or "0"
        kst = ", ".join(f"{x}->strides[{d}]" for d in kept) or "0"
        nk = len(kept)
        return f"""
    /* {c_comment(str(op))} */
    if ({empty}) {{ char sb[160]; tg_error({ctx}, "{message}", tg_shape_str({x}, sb, 160)); {fail} }}
    const int64_t rshape[{max(len(op.axis), 1)}] = {{{rshape}}}, rst[{max(len(op.axis), 1)}] = {{{rst}}};
    const int64_t kshape[{max(nk, 1)}] = {{{kshape}}}, kst[{max(nk, 1)}] = {{{kst}}};
    if (tg_alloc({out}, {nk}, kshape, {cd.typenum("int64")}, {ctx})) {{ {fail} }}
    int64_t *o = (int64_t *){out}->data;
    const int64_t n_out = tg_size({out});
    int64_t idx[{max(nk, 1)}] = {{0}};
    const char *p = {x}->data;
    for (int64_t i = 0; i < n_out; i++) {{
        o[i] = {fn}(p, {len(op.axis)}, rshape, rst);
        for (int d = {nk - 1}; d >= 0; d--) {{
            if (++idx[d] < kshape[d]) {{ p += kst[d]; break; }}
            p -= kst[d] * (kshape[d] - 1);
            idx[d] = 0;
        }}
    }}
    """

