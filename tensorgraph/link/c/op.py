"""``COp``: an op that carries its own C, written as PyTensor's ``COp`` methods.

A porting user's op with C code keeps its shape: subclass ``COp`` instead of ``Op`` and define
``c_code(node, name, inputs, outputs, sub)`` and, as needed, ``c_support_code(node)``,
``c_headers()``, ``c_libraries()``, ``c_lib_dirs()``, ``c_header_dirs()``,
``c_compile_args()`` and ``c_code_cache_version()``. Creating the class registers those
methods as its C implementation in ``tensorgraph.link.c.ops`` (the one table every op's C
comes from), so such an op runs exactly like tensorgraph's own.

``c_code_cache_version()`` returning ``()`` (the default) means the code depends on something
its text does not show: the module is compiled in each process and never kept on disk.

The fragment follows tensorgraph's C conventions (``tg_array *`` operands, ``tg_alloc``,
``tg_error``; docs/c_backend.md), not PyTensor's, whose C works on ``PyArrayObject *`` through
the CPython and NumPy C APIs. A ``c_code`` (or ``c_support_code``) written for PyTensor, which
names those APIs, would only fail to compile: such a node runs its ``perform`` instead, with a
``PyTensorCCodeWarning`` (once per op class) saying why and how to port the C.
"""

from __future__ import annotations

import inspect
import re
import warnings

from tensorgraph.graph.op import Op
from tensorgraph.link.c.ops import TABLE, CImplementation

__all__ = ["COp", "PyTensorCCodeWarning"]


class PyTensorCCodeWarning(UserWarning):
    """A ``COp``'s C is written for PyTensor's C conventions; its ``perform`` runs instead."""


#: names of the CPython / NumPy C APIs that PyTensor's C fragments use and tensorgraph's never
#: see (their operands are ``tg_array *``): such C cannot compile here
_PYTENSOR_C_API = re.compile(r"\b(PyArrayObject|PyArray_\w+|npy_\w+|NPY_\w+|Py_X?(?:INC|DEC)REF"
                             r"|PyErr_\w+|PyObject)\b")
_warned: set = set()


class COp(Op):
    """An ``Op`` whose C is given by its own ``c_code`` methods (see the module docstring)."""

    _c_from_methods = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "c_code" in cls.__dict__:
            TABLE.add(cls, _OpMethods())

    def c_code(self, node, name, inputs, outputs, sub) -> str:
        raise NotImplementedError(f"{type(self).__name__} defines no c_code")

    def c_code_cache_version(self) -> tuple:
        return ()


class _OpMethods(CImplementation):
    """The C implementation a ``COp`` class gives through its methods."""

    def code(self, op, node, name, inputs, outputs, sub):
        text = op.c_code(node, name, inputs, outputs, sub)
        if text:
            found = _PYTENSOR_C_API.search(text + "\n" + self.support_code(op, node))
            if found:
                _decline_pytensor_c(op, found.group(0))
        return text

    def support_code(self, op, node):
        method = getattr(op, "c_support_code", None)
        if method is None:
            return ""
        takes_node = len(inspect.signature(method).parameters) > 0
        return (method(node) if takes_node else method()) or ""

    def headers(self, op, node):
        return _listed(op, "c_headers")

    def libraries(self, op, node):
        return _listed(op, "c_libraries")

    def library_dirs(self, op, node):
        return _listed(op, "c_lib_dirs")

    def include_dirs(self, op, node):
        return _listed(op, "c_header_dirs")

    def compile_args(self, op, node):
        return _listed(op, "c_compile_args")

    def cacheable(self, op):
        return bool(_version(op))

    def key(self, op):
        return repr(_version(op))


def _version(op) -> tuple:
    method = getattr(op, "c_code_cache_version", None)
    return tuple(method() or ()) if method is not None else ()


def _listed(op, method) -> list:
    fn = getattr(op, method, None)
    return list(fn() or []) if fn is not None else []


def _decline_pytensor_c(op, name: str):
    """Warn (once per op class) and decline the node: its ``perform`` runs."""
    cls = type(op)
    if cls not in _warned:
        _warned.add(cls)
        warnings.warn(
            f"{cls.__qualname__}.c_code is written for PyTensor's C (it uses {name}, of the "
            "CPython/NumPy C API); tensorgraph's C fragments get tg_array * operands instead "
            f"(docs/c_backend.md), so its nodes run {cls.__qualname__}.perform. Port the C to "
            "tg_alloc / tg_error and the tg_array fields to run it in C, or remove c_code.",
            PyTensorCCodeWarning, stacklevel=2)
    raise NotImplementedError(f"{cls.__qualname__}.c_code uses PyTensor's C API ({name})")
