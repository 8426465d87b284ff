"""dtypes in generated C: element types, the types values are computed in, literals, casts.

A value of a dtype lives in memory as its *storage* type and is computed in its *compute*
type. They differ only for float16: stored as gcc's ``_Float16``, computed in ``float`` and
rounded back to half precision after every scalar op, as numpy does. ``bool`` is stored and
computed as ``uint8_t`` holding 0 or 1. Complex dtypes have no C here (nodes using them run
``perform``).

The C expressions of the scalar ops are built with these helpers (``cast``, ``math_call``,
``literal``); see ``tensorgraph.link.c.ops.scalar``.
"""

from __future__ import annotations

import math
import os

import re

import numpy as np

_STORAGE = {
    "bool": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float16": "_Float16", "float32": "float", "float64": "double",
}
FLOATS = ("float16", "float32", "float64")
#: dtypes only the C of ops that handle them reads (``CImplementation.complex_operands``):
#: pairs of floats in a tg_array, no C type of their own
COMPLEX = ("complex64", "complex128")
#: dimensions a tg_array holds (TG_MAXDIM in runtime.h)
MAXDIM = 16


def has_c(dtype: str) -> bool:
    """Whether values of ``dtype`` can be computed in generated C."""
    return dtype in _STORAGE


def storage_type(dtype: str) -> str:
    try:
        return _STORAGE[dtype]
    except KeyError:
        raise NotImplementedError(f"no C type for dtype {dtype}") from None


def compute_type(dtype: str) -> str:
    return "float" if dtype == "float16" else storage_type(dtype)


def typenum(dtype: str) -> int:
    """numpy's type number of ``dtype`` (int64 is NPY_LONG on Linux, NPY_LONGLONG elsewhere:
    arrays are checked with ``PyArray_EquivTypenums`` when the number differs)."""
    return np.dtype(dtype).num


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint") or dtype == "bool"


def cast(expr: str, src: str, dst: str) -> str:
    """``expr`` (a value of dtype ``src`` in its compute type) as a value of dtype ``dst``."""
    if src == dst:
        return expr
    if dst == "bool":
        return f"(({expr}) != 0)"
    if dst == "float16":
        return f"((float)(_Float16)({expr}))"
    if is_float(src) and not is_float(dst):  # defined for every value (tg_scalar.h)
        return f"tg_f2i_{_SUFFIX[dst]}({expr})"
    if compute_type(src) == compute_type(dst):
        return expr
    return f"(({compute_type(dst)})({expr}))"


def round_to(expr: str, dtype: str) -> str:
    """A computed value rounded to ``dtype``'s precision (only float16 needs it)."""
    return f"((float)(_Float16)({expr}))" if dtype == "float16" else expr


#: the math functions generated code calls as ``tg_<name>``: the ones libmvec vectorizes, whose
#: every call (vector body, scalar tail) goes through one implementation (``tg_scalar.h``)
VECTOR_MATH = frozenset(
    "exp log sin cos pow acos acosh asin asinh atan atanh cosh erf erfc exp2 expm1 log10 "
    "log1p log2 sinh tan tanh atan2".split())


#: libmvec before glibc 2.35 vectorizes only these (tg_scalar.h: TG_MV_NEW)
_VECTOR_MATH_OLD = frozenset(("exp", "log", "sin", "cos", "pow"))
_VECTOR_MATH_BINARY = frozenset(("pow", "atan2"))
#: the tg_scalar.h helpers that call math functions, and which
_HELPER_MATH = {"sigmoid": ("exp",), "softplus": ("exp", "log1p"),
                "log1mexp": ("exp", "log1p", "log", "expm1")}


def tg_vector_math(c_text: str) -> str:
    """Support code defining the ``tg_scalar.h`` math functions that ``c_text`` calls,
    directly (``tg_expf(``) or through a helper (``tg_sigmoid_f(``): a module defines only
    those its code needs (each costs ~15 ms of compiling, 2026-11-25 at bc008ae). Each
    definition is guarded, so a
    unit may receive it from several nodes. The pointers to scipy's special functions it
    calls (``scipy_pointer``) are defined too."""
    used = set()
    for name in VECTOR_MATH:
        for suffix, ctype in (("f", "FLOAT"), ("", "DOUBLE")):
            if f"tg_{name}{suffix}(" in c_text:
                used.add((name, ctype))
    for helper, names in _HELPER_MATH.items():
        for suffix, ctype in (("f", "FLOAT"), ("d", "DOUBLE")):
            if f"tg_{helper}_{suffix}(" in c_text:
                used.update((name, ctype) for name in names)
    blocks = []
    for name, ctype in sorted(used):
        symbol = f"tg_{name}{'f' if ctype == 'FLOAT' else ''}"
        arity = 2 if name in _VECTOR_MATH_BINARY else 1
        condition = "defined(TG_MV)" + ("" if name in _VECTOR_MATH_OLD else
                                        " && defined(TG_MV_NEW)")
        blocks.append(f"#if {condition} && !defined(TG_MV_HAVE_{symbol})\n"
                      f"#define TG_MV_HAVE_{symbol}\nTG_MV_{ctype}{arity}({name})\n#endif\n")
    return "".join(blocks) + _scipy_pointers(c_text)


def scipy_pointer(name: str, variant: str) -> str:
    """The C variable through which generated code calls scipy's compiled special function
    ``name`` (``variant`` 'd': double, 'f': float; ``tensorgraph.scalar.scipy_capi``). An
    address is valid in one process only, so it is not in the source (the cache key): the
    variable is defined weak (units of one library that each define it merge) and
    ``cmodule.load`` gives it its address whenever a library is loaded, before its code
    runs."""
    return f"tg_sf_{name}_{variant}"


_SCIPY_POINTER = re.compile(r"\btg_sf_([a-z0-9_]+)_([df])\b")


def _scipy_pointers(c_text: str) -> str:
    """The definitions of the ``scipy_pointer`` variables ``c_text`` calls through, and of
    the series of ``ops/special_derivatives.h`` (which call ``psi``) if it calls them."""
    derivatives = ""
    if "tg_sfd_" in c_text:
        with open(os.path.join(os.path.dirname(__file__), "ops", "special_derivatives.h"),
                  encoding="utf-8") as f:
            derivatives = f.read()
    blocks = []
    for name, variant in sorted(set(_SCIPY_POINTER.findall(c_text + derivatives))):
        symbol = scipy_pointer(name, variant)
        blocks.append(f"#ifndef TG_SF_HAVE_{symbol}\n#define TG_SF_HAVE_{symbol}\n"
                      f"__attribute__((weak)) void *{symbol};\n#endif\n")
    return "".join(blocks) + derivatives


def math_call(fname: str, dtype: str, *args: str) -> str:
    """``tg_expf(x)`` for float32/float16 computations, ``tg_exp(x)`` for float64 (the
    ``tg_scalar.h`` function of every name in ``VECTOR_MATH``, else libm's: ``sqrtf(x)``)."""
    suffix = "" if dtype == "float64" else "f"
    prefix = "tg_" if fname in VECTOR_MATH else ""
    return f"{prefix}{fname}{suffix}({', '.join(args)})"


def literal(value, dtype: str) -> str:
    """A C expression for the constant ``value`` of ``dtype`` (in its compute type)."""
    value = np.asarray(value, dtype=dtype)[()]
    if dtype == "bool":
        return "1" if value else "0"
    if is_float(dtype):
        v = float(value)
        ctype = compute_type(dtype)
        if math.isnan(v):
            return f"(({ctype})NAN)"
        if math.isinf(v):
            return f"(({ctype})INFINITY)" if v > 0 else f"(-({ctype})INFINITY)"
        text = repr(v) if dtype == "float64" else repr(float(np.float32(value)))
        return f"(({ctype}){text})" if dtype == "float64" else f"{text}f"
    v = int(value)
    ctype = storage_type(dtype)
    if dtype == "int64" and v == -(2**63):
        return "INT64_MIN"
    suffix = "ULL" if is_unsigned(dtype) else "LL"
    return f"(({ctype}){v}{suffix})"


_SUFFIX = {"bool": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
           "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
           "float16": "f", "float32": "f", "float64": "d"}


def helper(name: str, dtype: str, *args: str) -> str:
    """A call of a ``tg_scalar.h`` helper for ``dtype``: ``tg_mod_i32(a, b)``."""
    return f"tg_{name}_{_SUFFIX[dtype]}({', '.join(args)})"


def result(expr: str, dtype: str) -> str:
    """An arithmetic expression's value as ``dtype`` (integers wrap as in numpy: C computes
    small integers as int, so the result is cast back; float16 is rounded)."""
    if dtype == "bool":
        return f"(({expr}) != 0)"
    if dtype == "float16":
        return round_to(expr, dtype)
    if is_float(dtype):
        return f"({expr})"
    return f"(({storage_type(dtype)})({expr}))"


def args_as(args, in_dtypes, dtype: str) -> list[str]:
    """Each argument converted to ``dtype``."""
    return [cast(a, d, dtype) for a, d in zip(args, in_dtypes)]


def dtype_itemsize(dtype: str) -> int:
    return np.dtype(dtype).itemsize
