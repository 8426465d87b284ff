"""LAPACK in generated C: which library, its declarations, and what an ``ItemC`` calling it
shares (``LapackItem``).

LAPACK comes from the library the BLAS calls use (``blas.py``): the OpenBLAS of the
``scipy-openblas32`` wheel, whose LAPACK symbols are prefixed like its CBLAS ones
(``scipy_dpotrf_``), called through LAPACK's Fortran interface (``lapack.h``: arguments by
address, column-major matrices, 32-bit integers). Its thread count is set to one as for the
BLAS calls: a batch is split across tensorgraph's pool, one matrix per task
(``batched.h``). With ``blas__ldflags`` set to anything else (``none``, or another library,
which may have no LAPACK) linear algebra nodes run their ``perform``.

``lapack.h`` is a template pasted once per float type (``TGT`` the C type, ``TGS`` LAPACK's
letter, ``LAPACK_`` the symbol prefix), as ``blas.py`` pastes its kernels; it declares the
routines and the copies between strided item views and column-major scratch. An ``ItemC``
whose kernels call LAPACK derives from ``LapackItem`` and adds its own template through
``lapack_template``.
"""

from __future__ import annotations

from tensorgraph.link.c.ops import read_c
from tensorgraph.link.c.ops.batched import ItemC
from tensorgraph.link.c.ops.blas import blas_setup

__all__ = ["lapack_prefix", "lapack_support", "lapack_template", "letter", "LapackItem"]

#: the float types LAPACK kernels are pasted for: dtype -> (C type, LAPACK's letter)
TYPES = {"float32": ("float", "s"), "float64": ("double", "d")}

# What lapack.h's kernels need once per unit, whatever the type: the library's thread count
# (one, as for BLAS: blas.py's _ONE_THREAD says why) and the math of each type.
_COMMON = r"""
#include <float.h>
#include <math.h>
void scipy_openblas_set_num_threads(int num_threads);
static void tg_lapack_threads(void)
{
    static int done = 0;
    if (!__atomic_load_n(&done, __ATOMIC_RELAXED)) {
        scipy_openblas_set_num_threads(1);
        __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
    }
}
/* rows and columns of an item view (a vector is one column, a scalar 1 x 1) */
static inline int64_t tg_la_rows(const tg_array *a) { return a->ndim >= 1 ? a->shape[0] : 1; }
static inline int64_t tg_la_cols(const tg_array *a) { return a->ndim == 2 ? a->shape[1] : 1; }
#define TG_LA_s_LOG(x) logf(x)
#define TG_LA_s_EXP(x) expf(x)
#define TG_LA_s_EPS FLT_EPSILON
#define TG_LA_d_LOG(x) log(x)
#define TG_LA_d_EXP(x) exp(x)
#define TG_LA_d_EPS DBL_EPSILON
"""


def lapack_prefix() -> str | None:
    """The prefix of the LAPACK symbols (``scipy_``), or None when the configured library
    gives no LAPACK tensorgraph links (its nodes then run ``perform``)."""
    return "scipy_" if blas_setup()["prefix"] == "scipy_cblas_" else None


def lapack_template(name: str) -> str:
    """The C template ``ops/<name>`` pasted for float32 and float64 (placeholders replaced)."""
    prefix = lapack_prefix() or ""
    text = read_c(name)
    return "\n".join(text.replace("TGT", ctype).replace("TGS", s).replace("LAPACK_", prefix)
                     for ctype, s in TYPES.values())


def lapack_support() -> str:
    """The declarations and copies (once per unit)."""
    return ("#ifndef TG_LAPACK_DEFINED\n#define TG_LAPACK_DEFINED\n" + _COMMON +
            lapack_template("lapack.h") + "\n#endif  /* TG_LAPACK_DEFINED */\n")


def letter(dtype: str) -> str:
    """LAPACK's letter for ``dtype`` (``s`` or ``d``); ``NotImplementedError`` for a dtype
    these kernels do not compute in (the node runs ``perform``), or without LAPACK."""
    if dtype not in TYPES or lapack_prefix() is None:
        raise NotImplementedError(f"no LAPACK kernel for {dtype}")
    return TYPES[dtype][1]


class LapackItem(ItemC):
    """An ``ItemC`` calling LAPACK: the library, the declarations."""

    def support_code(self, op, core_node):
        from tensorgraph.link.c.ops.batched import items_support

        return items_support() + lapack_support()

    def headers(self, op, core_node):
        return ["<math.h>", "<float.h>"]

    def libraries(self, op, core_node):
        return blas_setup()["libraries"]

    def library_dirs(self, op, core_node):
        return blas_setup()["library_dirs"]

    def compile_args(self, op, core_node):
        return blas_setup()["extra_compile_args"]
