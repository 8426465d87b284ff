"""The addresses of scipy's compiled special functions, for back ends that call them from
compiled code (generated C, Numba).

``scipy.special.cython_special`` exports its functions' machine code to other extension
modules as capsules (``__pyx_capi__``): a C function pointer each, per fused type, taking the
real arguments and Cython's ``skip_dispatch`` flag (0). Calling them computes exactly what the
numpy reference (``scipy.special``) computes, without a Python call per element. An address
is valid in this process only: compiled code must receive it when it is loaded, never have
it written into its source.
"""

from __future__ import annotations

import ctypes
import re
import threading

__all__ = ["SCIPY_FUNCTIONS", "VARIANTS", "has_float_variant", "address"]

#: scipy function: its number of (real) arguments
SCIPY_FUNCTIONS = {
    "gammainc": 2, "gammaincc": 2, "gammaincinv": 2, "gammainccinv": 2, "betainc": 3,
    "betaincinv": 3, "i0": 1, "i1": 1, "i0e": 1, "i1e": 1, "ive": 2, "kve": 2, "ndtr": 1,
    "log_ndtr": 1, "owens_t": 2, "hyp2f1": 4, "erfcx": 1, "erfinv": 1, "erfcinv": 1, "psi": 1,
    "j0": 1, "j1": 1, "jv": 2, "gamma": 1,
}
#: variant: the C type of its arguments and result
VARIANTS = {"d": "double", "f": "float"}
_lock = threading.Lock()
_addresses: dict[tuple[str, str], int] = {}


def has_float_variant(name: str) -> bool:
    """Whether scipy compiles ``name`` for float itself (betainc: Boost's float code, what
    scipy runs on float32 arrays); the other functions compute float arguments in double."""
    return "f" in _capsules(name)


def address(name: str, variant: str) -> int:
    """The address of scipy's ``name`` for ``variant`` ('d' or 'f'); RuntimeError if this
    scipy has no such function."""
    key = (name, variant)
    found = _addresses.get(key)
    if found is None:
        capsule = _capsules(name).get(variant)
        if capsule is None:
            raise RuntimeError(f"scipy.special.cython_special has no {VARIANTS[variant]} "
                               f"{name}: compiled code calling it cannot run")
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype = ctypes.c_void_p
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        with _lock:
            found = _addresses[key] = get_pointer(capsule, _capsule_name(capsule).encode())
    return found


def _capsules(name: str) -> dict:
    """{variant: capsule} of scipy's real function ``name``: fused variants are told apart by
    their signature (their numbering changes between scipy versions)."""
    from scipy.special import cython_special

    arity = SCIPY_FUNCTIONS[name]
    signatures = {f"{ctype} ({', '.join([ctype] * arity)}, int __pyx_skip_dispatch)": variant
                  for variant, ctype in VARIANTS.items()}
    found = {}
    for key, capsule in cython_special.__pyx_capi__.items():
        if key == name or re.fullmatch(rf"__pyx_fuse_\d+{name}", key):
            variant = signatures.get(_capsule_name(capsule))
            if variant is not None:
                found[variant] = capsule
    return found


def _capsule_name(capsule) -> str:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get_name(capsule).decode()
