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
routines and the copies between strided item views and column-major scratch, after
``lapack_common.h`` (the library's thread count, each type's math; ``lapack_template.h`` gives
the placeholders one meaning so that the templates compile alone, in the header tests). An ``ItemC``
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
    return ("#ifndef TG_LAPACK_DEFINED\n#define TG_LAPACK_DEFINED\n" + read_c("lapack_common.h") +
            lapack_template("lapack.h") + "\n#endif  /* TG_LAPACK_DEFINED */\n")


def letter(dtype: str, core_node=None) -> str:
    """LAPACK's letter for ``dtype`` (``s`` or ``d``); ``NotImplementedError`` for a dtype
    these kernels do not compute in (the node runs ``perform``), or without LAPACK. With
    ``core_node``, also for a float16 input: ``lapack.h``'s copies read every real and integer
    dtype but float16 (``_Float16``, which some targets' compilers lack, stays out of the
    static C that every linalg unit compiles)."""
    if dtype not in TYPES or lapack_prefix() is None:
        raise NotImplementedError(f"no LAPACK kernel for {dtype}")
    if core_node is not None and any(v.type.dtype == "float16" for v in core_node.inputs):
        raise NotImplementedError("float16 inputs run perform")
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
