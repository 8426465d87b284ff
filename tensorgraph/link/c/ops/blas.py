"""The C of ``Gemv``, ``Gemm`` and ``Dot22``, and the BLAS glue of every matrix product: which
library generated modules link, and the helpers that these ops, ``Dot`` and ``MatMul``
(``ops/dot.py``) call.

``config.blas__ldflags`` decides the library:

* ``''`` (default): the OpenBLAS of the ``scipy-openblas32`` wheel (a dependency; its CBLAS
  symbols are prefixed ``scipy_cblas_``). If the wheel is missing, tensorgraph's own kernels are
  used and one short line says so, once per process.
* ``'none'``: tensorgraph's own kernels (no BLAS library at all).
* anything else: linker flags of a library exporting the standard CBLAS interface
  (``cblas_sgemv``, ...), e.g. ``'-lopenblas'`` or ``'-L/opt/blas/lib -lblis'``.

The wheel's OpenBLAS always runs on one thread (two OpenBLAS thread pools in one process,
numpy's and this one, fight over the cores). With ``config.openmp`` tensorgraph splits large
products across OpenMP threads itself (with the wheel or the own kernels; a library given in
``blas__ldflags`` keeps its own threading and is called from one thread).

The helpers (``blas.h``) work on ``tg_mat`` / ``tg_vec`` (a pointer, sizes and byte strides), so
any strides are accepted: operands whose layout BLAS takes (unit stride along one axis, the
other a multiple of it; any non-zero vector increment) are passed as they are, with BLAS's
transpose flag for column-major matrices; others are copied to a contiguous buffer first. Every
product *adds* ``alpha * op(A) op(B)`` into an output that the caller has already filled with
``beta * y`` (or zeros), which keeps BLAS's quick returns (empty inner dimension, ``alpha ==
0``) from changing the result: with ``alpha == 0`` the product is still computed and multiplied
by 0, so a nan or inf in it shows, as in numpy's ``alpha * dot(A, x)``.

The kernels are templates written once for both float types (``blas_cblas.h`` calling the
library, ``blas_own.h`` without one, ``blas_split.h`` splitting either across threads): they
are pasted once per type with the placeholder names ``TGT`` (the C type), ``TGS`` (BLAS's
letter, ``s`` or ``d``) and ``CBLAS_`` (the library's symbol prefix) replaced.
"""

from __future__ import annotations

import shlex
import warnings

from tensorgraph.configdefaults import config
from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import CImplementation, read_c, register
from tensorgraph.tensor.blas import Dot22, Gemm, Gemv

_warned_missing: list[bool] = []


def blas_setup() -> dict:
    """What modules using BLAS need, from ``config.blas__ldflags``: ``prefix`` of the CBLAS
    symbols (None: own kernels), ``libraries``, ``library_dirs``, ``extra_compile_args``."""
    flags = config.blas__ldflags.strip()
    empty = {"prefix": None, "libraries": [], "library_dirs": [], "extra_compile_args": []}
    if flags.lower() == "none":
        return empty
    if not flags:
        found = _scipy_openblas32()
        if found is None:
            if not _warned_missing:
                _warned_missing.append(True)
                warnings.warn("tensorgraph: scipy-openblas32 is not installed; matrix products "
                              "use tensorgraph's own (slower) C kernels", stacklevel=2)
            return empty
        library, lib_dir = found
        return {"prefix": "scipy_cblas_", "libraries": [library], "library_dirs": [lib_dir],
                "extra_compile_args": []}
    setup = dict(empty, prefix="cblas_", libraries=[], library_dirs=[], extra_compile_args=[])
    for item in shlex.split(flags):
        if item.startswith("-l") and len(item) > 2:
            setup["libraries"].append(item[2:])
        elif item.startswith("-L") and len(item) > 2:
            setup["library_dirs"].append(item[2:])
        else:  # one command compiles and links, so linker flags (-Wl,...) may go here
            setup["extra_compile_args"].append(item)
    return setup


_OPENBLAS: list = []


def _scipy_openblas32():
    """(link name, directory) of scipy-openblas32's library, or None when it is not installed.
    Found from the package's files without importing it: its __init__ reads its version through
    importlib.metadata, tens of milliseconds of every process's first compile."""
    if not _OPENBLAS:
        import importlib.util
        import os

        spec = importlib.util.find_spec("scipy_openblas32")
        found = None
        if spec is not None and spec.submodule_search_locations:
            lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
            names = sorted(n for n in os.listdir(lib_dir) if n.startswith("libscipy_openblas")
                           and ".so" in n) if os.path.isdir(lib_dir) else []
            if names:
                found = (names[0][3:].split(".so")[0], lib_dir)
        _OPENBLAS.append(found)
    return _OPENBLAS[0]


# CBLAS through a library: its integer type (the prototypes are in blas_cblas.h).
_CBLAS_INT = r"""
typedef int tg_blasint;  /* scipy-openblas32 and standard CBLAS take 32-bit ints */
#define TG_BLAS_MAXINT 2147483647LL
"""

# The wheel's OpenBLAS runs on one thread (with config.openmp, tensorgraph splits products
# across threads itself, see blas_split.h): its own thread pool and numpy's OpenBLAS pool in
# the same process compete for the cores (measured on 2 cores: a 128x784 @ 784x256 sgemm next
# to numpy's took 1-17 ms with both pools, 0.57 ms with one; the MLP step 6.7 ms with the
# wheel's threads against 1.4 ms on one thread; 2026-11-25 at ce26e23).
_ONE_THREAD = r"""
void scipy_openblas_set_num_threads(int num_threads);
static TG_COLD void tg_blas_threads(void)
{
    static int done = 0;
    if (!done) { scipy_openblas_set_num_threads(1); done = 1; }
}
"""


def support_code() -> str:
    """The C helpers (identical text in every op that uses them, so emitted once per unit;
    guarded, because a Gemv pair's support code holds them too)."""
    setup = blas_setup()
    prefix = setup["prefix"]
    # Products are split across threads only where tensorgraph decides the library's own
    # threading (the wheel's OpenBLAS is kept on one thread; the own kernels have none).
    split = _openmp() and prefix in (None, "scipy_cblas_")
    parts = ["#ifndef TG_BLAS_DEFINED", "#define TG_BLAS_DEFINED",
             f"#define TG_SPLIT {int(split)}", read_c("blas.h")]
    if prefix:
        parts.append(_CBLAS_INT)
    parts.append(_ONE_THREAD if prefix == "scipy_cblas_" else
                 "#define tg_blas_threads() ((void)0)")
    kernels = read_c("blas_cblas.h" if prefix else "blas_own.h")
    for ctype, s in (("float", "s"), ("double", "d")):
        for text in (kernels, read_c("blas_split.h")):
            parts.append(text.replace("TGT", ctype).replace("TGS", s)
                         .replace("CBLAS_", prefix or ""))
    parts.append("#endif  /* TG_BLAS_DEFINED */")
    return "\n".join(parts)


def _openmp() -> bool:
    return bool(config.openmp)


def c_type(dtype: str) -> str | None:
    """The C type of a BLAS dtype, None for dtypes BLAS does not do."""
    return {"float32": "float", "float64": "double"}.get(dtype)


def blas_letter(dtype: str) -> str:
    return {"float32": "s", "float64": "d"}[dtype]


class BlasC(CImplementation):
    """What every op calling the BLAS helpers shares: their support code and the library."""

    def support_code(self, op, node):
        return support_code()

    def libraries(self, op, node):
        return blas_setup()["libraries"]

    def library_dirs(self, op, node):
        return blas_setup()["library_dirs"]

    def compile_args(self, op, node):
        return blas_setup()["extra_compile_args"]


# ----------------------------------------------------------------------------------------------
# The ops' C fragments


def _shape_error(ctx: str, fail: str, fmt: str, arrays) -> str:
    """A statement block failing with ``fmt`` where each ``%s`` is one array's shape."""
    bufs = " ".join(f"char sb{k}[96];" for k in range(len(arrays)))
    shapes = ", ".join(f"tg_shape_str({a}, sb{k}, 96)" for k, a in enumerate(arrays))
    return f"{{ {bufs} tg_error({ctx}, \"{fmt}\", {shapes}); {fail} }}"


def _fill(out_ptr: str, n: str, ctype: str, beta: str, src: str, src_index: str) -> str:
    """``out_ptr[0:n] = beta * src[...]``, or zeros when beta is 0 (src is then not read)."""
    return (f"if ({beta} == 0) memset({out_ptr}, 0, (size_t)({n}) * sizeof({ctype}));\n"
            f"else for (int64_t i = 0; i < {n}; i++) "
            f"{out_ptr}[i] = {beta} * *(const {ctype} *)({src} + {src_index});")


def gemv_code(node, inputs, outputs, sub) -> str:
    """``out = beta * y + alpha * dot(A, x)`` (``beta == 0``: y not read)."""
    dtype = node.outputs[0].type.dtype
    ctype = c_type(dtype)
    if ctype is None:
        raise NotImplementedError(f"Gemv has C for float32 and float64, not {dtype}")
    y, alpha, A, x, beta = inputs
    (out,), ctx, fail, s = outputs, sub["ctx"], sub["fail"], blas_letter(dtype)
    check = _shape_error(ctx, fail, "Gemv: shapes do not match: y %s, A %s, x %s", [y, A, x])
    return f"""
    const {ctype} alpha = *(const {ctype} *){alpha}->data, beta = *(const {ctype} *){beta}->data;
    if ({A}->shape[1] != {x}->shape[0] || (beta != 0 && {A}->shape[0] != {y}->shape[0])) {check}
    if (tg_alloc({out}, 1, {A}->shape, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
    {ctype} *o = ({ctype} *){out}->data;
    {_fill("o", f"{A}->shape[0]", ctype, "beta", f"{y}->data", f"i * {y}->strides[0]")}
    if (tg_{s}gemv({ctx}, alpha, tg_mat_of({A}), tg_vec_of({x}), o)) {{ {fail} }}
    """


def gemm_code(node, inputs, outputs, sub, op_name="Gemm") -> str:
    """``out = beta * z + alpha * dot(a, b)`` (``beta == 0``: z not read); ``Dot22`` passes
    ``(None, 1, a, b, 0)``."""
    dtype = node.outputs[0].type.dtype
    ctype = c_type(dtype)
    if ctype is None:
        raise NotImplementedError(f"{op_name} has C for float32 and float64, not {dtype}")
    z, alpha, a, b, beta = inputs
    (out,), ctx, fail, s = outputs, sub["ctx"], sub["fail"], blas_letter(dtype)
    if z is None:  # Dot22
        scalars = f"const {ctype} alpha = 1, beta = 0;"
        check = _shape_error(ctx, fail, "Dot22: inner dimensions differ: %s and %s", [a, b])
        cond = f"{a}->shape[1] != {b}->shape[0]"
        fill, accumulate = "(void)beta;", 0
    else:
        scalars = (f"const {ctype} alpha = *(const {ctype} *){alpha}->data, "
                   f"beta = *(const {ctype} *){beta}->data;")
        check = _shape_error(ctx, fail, "Gemm: shapes do not match: z %s, a %s, b %s",
                             [z, a, b])
        cond = (f"{a}->shape[1] != {b}->shape[0] || (beta != 0 && ({a}->shape[0] != "
                f"{z}->shape[0] || {b}->shape[1] != {z}->shape[1]))")
        fill = _fill("o", "m * n", ctype, "beta", f"{z}->data",
                     f"(i / n) * {z}->strides[0] + (i % n) * {z}->strides[1]")
        accumulate = 1
    return f"""
    {scalars}
    if ({cond}) {check}
    const int64_t m = {a}->shape[0], n = {b}->shape[1];
    const int64_t shp[2] = {{m, n}};
    if (tg_alloc({out}, 2, shp, {cd.typenum(dtype)}, {ctx})) {{ {fail} }}
    {ctype} *o = ({ctype} *){out}->data;
    {fill}
    if (tg_{s}gemm({ctx}, alpha, tg_mat_of({a}), tg_mat_of({b}), o, {accumulate})) {{ {fail} }}
    """


@register(Gemv)
class GemvC(BlasC):
    """``Gemv``, and ``Gemv(pair=f)`` (``ops/gemv_pair.py``)."""

    def code(self, op, node, name, inputs, outputs, sub):
        if op.pair is not None:
            from tensorgraph.link.c.ops import gemv_pair

            return gemv_pair.pair_code(op, node, inputs, outputs, sub)
        return gemv_code(node, inputs, outputs, sub)

    def support_code(self, op, node):
        if op.pair is None:
            return support_code()
        from tensorgraph.link.c.ops import gemv_pair

        return (support_code() + "\n" + gemv_pair.support_code() +
                gemv_pair.math_support(op, node))


@register(Gemm)
class GemmC(BlasC):
    def code(self, op, node, name, inputs, outputs, sub):
        return gemm_code(node, inputs, outputs, sub)


@register(Dot22)
class Dot22C(BlasC):
    def code(self, op, node, name, inputs, outputs, sub):
        a, b = inputs
        return gemm_code(node, [None, None, a, b, None], outputs, sub, op_name="Dot22")
