"""The C of ``Elemwise`` and ``DimShuffle``.

An Elemwise node becomes one loop whose body is its scalar op's C expression (``scalar.py``; a
``Composite`` becomes a sequence of local values, one per inner node). The loop has three
shapes:

* flat: every operand is C-contiguous with the output's shape, or is a *static scalar* (static
  size 1 in every dimension, read once before the loop). One ``for`` over all elements with
  ``#pragma omp simd``: gcc vectorizes it, math functions through libmvec (see below);
* rows with a contiguous last dimension: the outer dimensions are walked row by row, the last
  one indexed directly (vectorizable too);
* general: byte strides per operand and dimension (0 where the operand is broadcast; negative
  strides work the same way); vectorized too when the loop calls a math function (exp of a
  transposed 1000 x 1000 float32 matrix: 3.1 ms -> 0.6 ms,
  2026-11-25 at fc5396a; arithmetic alone gains nothing).

Under ``config.openmp`` a loop of at least ``openmp_elemwise_minsize`` elements divided by its
weight (``loop_weight``) is split across threads: the flat loop by blocks of its range, the
others by blocks of rows (``tensorgraph.link.c.parallel``: a block function run by
``tg_run``). A smaller loop runs as one block, a plain call, so the loop is compiled once.

Math functions are called through ``tg_scalar.h``'s ``tg_expf``, ``tg_log`` ...: every element
gets the same implementation whichever part of a vectorized loop (body, tail) or which path
computes it, so equal inputs give bitwise equal outputs (``argmax`` of them picks the first, as
numpy does). The node's support code defines the ones it calls (``dtypes.tg_vector_math``).

Broadcasting follows the types, as ``Elemwise.perform`` does: only dimensions of static size 1
broadcast; other sizes must agree at run time, else the node fails with the shapes.
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_comment, c_string
from tensorgraph.link.c.ops import CImplementation, register
from tensorgraph.link.c.ops.scalar import scalar_body
from tensorgraph.link.c.parallel import parallel_run
from tensorgraph.scalar.composite import Composite
from tensorgraph.scalar.math import FloatOp
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise


@register(Elemwise)
class ElemwiseC(CImplementation):
    """One loop per node (see the module docstring); declines (``NotImplementedError``) a
    node whose dtypes or scalar op have no C."""

    def code(self, op, node, name, inputs, outputs, sub):
        return _loops(op, node, inputs, outputs, sub)

    def support_code(self, op, node):
        """The helpers every node calls, and the definitions of the math functions its
        scalar op calls (``tg_vector_math``)."""
        support = ELEMWISE_SUPPORT
        try:
            lines, _ = scalar_body(op.scalar_op, [f"a{k}" for k in range(len(node.inputs))],
                                   [v.type.dtype for v in node.inputs],
                                   [v.type.dtype for v in node.outputs])
        except NotImplementedError:  # no C: the node runs perform
            return support
        return support + cd.tg_vector_math("\n".join(lines))


@register(DimShuffle)
class DimShuffleC(CImplementation):
    """A DimShuffle is a view: same buffer, permuted shape and strides, 'x' dims of size 1."""

    perform_exact = True  # a copy, selection or integer result

    def code(self, op, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        lines = [f"/* {c_comment(str(op))} */", "{"]
        for d in op.dropped:  # a dropped dimension of unknown static size: size 1 at run time
            if node.inputs[0].type.shape[d] != 1:
                message = c_string(op.dropped_size_message(d, "%lld"), printf=False)
                lines.append(f"if ({x}->shape[{d}] != 1) {{ tg_error({sub['ctx']}, "
                             f"\"{message}\", (long long){x}->shape[{d}]); {sub['fail']} }}")
        lines += [
                 f"int64_t sh[{max(op.input_ndim, 1)}], st[{max(op.input_ndim, 1)}];",
                 f"for (int d = 0; d < {op.input_ndim}; d++) {{ sh[d] = {x}->shape[d]; "
                 f"st[d] = {x}->strides[d]; }}",
                 f"tg_view({z}, {x});",
                 f"{z}->ndim = {len(op.new_order)};"]
        for j, d in enumerate(op.new_order):
            if d == "x":
                lines.append(f"{z}->shape[{j}] = 1; {z}->strides[{j}] = 0;")
            else:
                lines.append(f"{z}->shape[{j}] = sh[{d}]; {z}->strides[{j}] = st[{d}];")
        lines.append("}")
        return "\n".join(lines)


def _is_static_scalar(var) -> bool:
    return all(s == 1 for s in var.type.shape)


def _loops(op, node, inputs, outputs, sub) -> str:
    """The C fragment of an Elemwise node (see the module docstring)."""
    in_vars, out_vars = node.inputs, node.outputs
    in_dtypes = [v.type.dtype for v in in_vars]
    out_dtypes = [v.type.dtype for v in out_vars]
    ndim = out_vars[0].type.ndim
    ctx, fail = sub["ctx"], sub["fail"]
    openmp = sub.get("openmp", False)
    minsize = -(-int(sub.get("openmp_minsize", 200000)) // loop_weight(op.scalar_op))
    destroyed = dict(op.inplace_pattern)
    scalars = [k for k, v in enumerate(in_vars) if _is_static_scalar(v)]
    loaded = [k for k in range(len(in_vars)) if k not in scalars]
    code = [f"/* {c_comment(str(op))} */", f"int64_t shp[{max(ndim, 1)}];"]

    # -- output shape and the broadcast check (the inputs' names are not pasted into the C:
    # the error report made in Python names them, and renaming a variable recompiles nothing)
    for d in range(ndim):
        sources = [k for k, v in enumerate(in_vars) if v.type.shape[d] != 1]
        if not sources:
            code.append(f"shp[{d}] = 1;")
            continue
        first = sources[0]
        code.append(f"shp[{d}] = {inputs[first]}->shape[{d}];")
        for k in sources[1:]:
            code.append(f"if ({inputs[k]}->shape[{d}] != shp[{d}]) {{ "
                        f"tg_elemwise_shape_error({ctx}, \"{c_string(str(op), printf=False)}\", "
                        f"{len(inputs)}, "
                        f"(const tg_array *[]){{{', '.join(inputs)}}}, {d}, {first}, {k}); "
                        f"{fail} }}")
    # -- outputs
    for o, out in enumerate(outputs):
        if o in destroyed:
            code.append(f"tg_view({out}, {inputs[destroyed[o]]});")
        else:
            code.append(f"if (tg_alloc({out}, {ndim}, shp, {cd.typenum(out_dtypes[o])}, "
                        f"{ctx})) {{ {fail} }}")
    code.append("int64_t n = 1;")
    code.append(f"for (int d = 0; d < {ndim}; d++) n *= shp[d];")
    code.append("if (n > 0) {")
    # static scalars: read once
    for k in scalars:
        code.append(f"const {cd.compute_type(in_dtypes[k])} s{k} = "
                    f"*(const {cd.storage_type(in_dtypes[k])} *){inputs[k]}->data;")
    scalar_captures = [(cd.compute_type(in_dtypes[k]), f"s{k}", f"s{k}") for k in scalars]
    threads = f"n >= {minsize} ? tg_threads({ctx}) : 1"

    def body(load, store):
        args = [f"s{k}" if k in scalars else load(k) for k in range(len(in_vars))]
        lines, results = scalar_body(op.scalar_op, args, in_dtypes, out_dtypes)
        lines += [store(o, r) for o, r in enumerate(results)]
        return "\n".join(lines)

    # the vector math functions the loop calls, if any (tg_scalar.h)
    calls_math = bool(cd.tg_vector_math(body(lambda k: f"p{k}[i]", lambda o, r: "")))

    # -- flat path
    operands = [inputs[k] for k in loaded] + list(outputs)
    flat_cond = " && ".join([f"tg_ew_flat({a}, n)" for a in operands]) or "1"
    code.append(f"if ({flat_cond}) {{")
    for k in loaded:
        code.append(f"const {cd.storage_type(in_dtypes[k])} *p{k} = "
                    f"(const {cd.storage_type(in_dtypes[k])} *){inputs[k]}->data;")
    for o, out in enumerate(outputs):
        code.append(f"{cd.storage_type(out_dtypes[o])} *q{o} = "
                    f"({cd.storage_type(out_dtypes[o])} *){out}->data;")
    flat_body = body(lambda k: f"p{k}[i]", lambda o, r: f"q{o}[i] = {r};")
    if openmp:  # blocks of the range, on the pool's threads (one block below minsize)
        captures = scalar_captures + [
            (f"const {cd.storage_type(in_dtypes[k])} *", f"p{k}", f"p{k}") for k in loaded] + [
            (f"{cd.storage_type(out_dtypes[o])} *", f"q{o}", f"q{o}")
            for o in range(len(outputs))] + [("int64_t", "n", "n")]
        code.append(parallel_run(sub, "flat", captures, "\n".join([
            "int64_t lo, hi;", "tg_split_block(n, tg_k, tg_nb, &lo, &hi);", "#pragma omp simd",
            "for (int64_t i = lo; i < hi; i++) {", flat_body, "}"]), threads))
    else:
        code.append("\n".join(["#pragma omp simd", "for (int64_t i = 0; i < n; i++) {",
                                flat_body, "}"]))
    code.append("} else {")

    if sub.get("flat_only"):  # operands always contiguous (the quick tier's pieces): no
        # strided loops to compile
        code.append(f'tg_error({ctx}, "{c_string(str(op), printf=True)}: an operand is not '
                    f'contiguous"); {fail}')
        code.append("}")
        code.append("}")
        return "\n".join(code)

    # -- strided paths (ndim >= 1 here: a 0-d array is always flat)
    if ndim >= 1:
        last = ndim - 1
        code.append(f"const int64_t inner = shp[{last}];")
        code.append("const int64_t rows = n / inner;")
        strided = [(f"p{k}", inputs[k], in_vars[k], in_dtypes[k]) for k in loaded] + \
                  [(f"q{o}", outputs[o], out_vars[o], out_dtypes[o]) for o in range(len(outputs))]
        for pname, arr, var, _ in strided:
            strides = ", ".join("0" if var.type.shape[d] == 1 else f"{arr}->strides[{d}]"
                                for d in range(ndim))
            code.append(f"const int64_t st_{pname}[{ndim}] = {{{strides}}};")
        # rows with a contiguous last dimension; in 1-d they are flat, so only strided remains
        contig_rows = ndim >= 2
        if contig_rows:
            inner_contig = " && ".join(
                f"st_{p}[{last}] == {cd.dtype_itemsize(dt)}" for p, _, _, dt in strided) or "1"
            code.append(f"const int contig = {inner_contig};")
        rows_start = len(code)
        code.append("for (int64_t r = lo; r < hi; r++) {" if openmp else
                    "for (int64_t r = 0; r < rows; r++) {")
        for pname, arr, _, _ in strided:
            code.append(f"char *b_{pname} = {f'd_{pname}' if openmp else f'{arr}->data'};")
        code.append("int64_t rest = r;")
        code.append(f"for (int d = {last - 1}; d >= 0; d--) {{")
        code.append("const int64_t i_d = rest % shp[d]; rest /= shp[d];")
        for pname, _, _, _ in strided:
            code.append(f"b_{pname} += i_d * st_{pname}[d];")
        code.append("}")

        def typed(pname, dt, const):
            qual = "const " if const else ""
            return f"(({qual}{cd.storage_type(dt)} *)b_{pname})"

        in_dt = {f"p{k}": in_dtypes[k] for k in loaded}
        out_dt = {f"q{o}": out_dtypes[o] for o in range(len(outputs))}
        if contig_rows:
            code.append("if (contig) {")
            code.append("#pragma omp simd")
            code.append("for (int64_t j = 0; j < inner; j++) {")
            code.append(body(lambda k: f"{typed(f'p{k}', in_dt[f'p{k}'], True)}[j]",
                             lambda o, r: f"{typed(f'q{o}', out_dt[f'q{o}'], False)}[j] = {r};"))
            code.append("}")
            code.append("} else {")
        if calls_math:  # gathered operands: worth it only where the vector math is
            code.append("#pragma omp simd")
        code.append("for (int64_t j = 0; j < inner; j++) {")

        def at(pname, dt, const):
            qual = "const " if const else ""
            return (f"*({qual}{cd.storage_type(dt)} *)(b_{pname} + j * st_{pname}[{last}])")

        code.append(body(lambda k: at(f"p{k}", in_dt[f"p{k}"], True),
                         lambda o, r: f"{at(f'q{o}', out_dt[f'q{o}'], False)} = {r};"))
        code.append("}")
        if contig_rows:
            code.append("}")
        code.append("}")
        if openmp:  # blocks of rows, on the pool's threads (one block below minsize)
            rows_loop = "\n".join(["int64_t lo, hi;",
                                   "tg_split_block(rows, tg_k, tg_nb, &lo, &hi);",
                                   *code[rows_start:]])
            captures = scalar_captures + [
                ("char *", f"d_{pname}", f"{arr}->data") for pname, arr, _, _ in strided] + [
                ("const int64_t *", f"st_{pname}", f"st_{pname}") for pname, _, _, _ in strided] + [
                ("const int64_t *", "shp", "shp"), ("int64_t", "inner", "inner"),
                ("int64_t", "rows", "rows")]
            if contig_rows:
                captures.append(("int", "contig", "contig"))
            code[rows_start:] = [parallel_run(sub, "rows", captures, rows_loop, threads)]
    code.append("}")
    code.append("}")
    return "\n".join(code)


#: How many cheap operations (add, mul, compare) one call of a math function (exp, tanh, ...)
#: counts as when deciding whether a loop is long enough to split across threads: tanh over
#: 32768 floats takes ~33 us, add ~3 us (2026-11-25 at fc5396a).
MATH_FUNCTION_WEIGHT = 8


def loop_weight(scalar_op) -> int:
    """The work of one element of ``scalar_op``'s loop, in cheap operations: a loop of weight
    ``w`` splits across threads from ``openmp_elemwise_minsize / w`` elements."""
    if isinstance(scalar_op, Composite):
        return max(1, sum(loop_weight(node.op) for node in scalar_op.nodes))
    return MATH_FUNCTION_WEIGHT if isinstance(scalar_op, FloatOp) else 1


#: support code of every module with an Elemwise node (guarded: the support texts of nodes
#: calling different math functions differ, and a unit may hold several). The helpers every
#: node calls outside its loops are cold (``TG_COLD``, runtime.h): out of line and at -O1, so
#: gcc does not optimise their loops over the dimensions again in every node at -O3 (compile
#: time, no run time).
ELEMWISE_SUPPORT = r"""
#ifndef TG_ELEMWISE_SUPPORT
#define TG_ELEMWISE_SUPPORT
static TG_COLD int tg_ew_flat(const tg_array *a, int64_t n)
{
    return tg_is_c_contiguous(a) && tg_size(a) == n;
}

/* Inputs j < k (neither of static size 1 in dimension d) differ in size there: a size 1 is
   a broadcast the types do not declare, other sizes a mismatch. The words are perform's
   (tensor/elemwise.py: _runtime_shape); the Python error report names the inputs. */
static TG_COLD int tg_elemwise_shape_error(tg_ctx *ctx, const char *op, int nin,
                                   const tg_array *const *ins, int d, int j, int k)
{
    char shapes[512] = "", buf[160];
    size_t used = 0;
    long long sj = (long long)ins[j]->shape[d], sk = (long long)ins[k]->shape[d];
    for (int i = 0; i < nin && used < sizeof(shapes); i++)
        used += (size_t)snprintf(shapes + used, sizeof(shapes) - used, i ? ", %s" : "%s",
                                 tg_shape_str(ins[i], buf, sizeof(buf)));
    if (sj == 1 || sk == 1)
        return tg_error(ctx, "%s: Runtime broadcasting not allowed: input %d has size 1 in "
                        "dimension %d at run time but its type does not declare that dimension "
                        "broadcastable (size 1) (input[%d].shape[%d] = %lld, input[%d].shape[%d] "
                        "= %lld); input shapes: [%s]. Declare it, e.g. with tt.row/tt.col, "
                        "shape=(1, None), or x.dimshuffle('x', 0)", op, sj == 1 ? j : k, d,
                        j, d, sj, k, d, sk, shapes);
    return tg_error(ctx, "%s: inputs of shapes [%s] cannot be broadcast together; only "
                    "dimensions of static size 1 broadcast. Input dimension mismatch: "
                    "(input[%d].shape[%d] = %lld, input[%d].shape[%d] = %lld)", op, shapes,
                    j, d, sj, k, d, sk);
}
#endif
"""
