"""``COp``: an op that carries its own C, written as PyTensor's ``COp`` methods.

A porting user's op with C code keeps its shape: subclass ``COp`` instead of ``Op`` and define
``c_code(node, name, inputs, outputs, sub)`` and, as needed, ``c_support_code(node)``,
``c_headers()``, ``c_libraries()``, ``c_lib_dirs()``, ``c_header_dirs()``,
``c_compile_args()`` and ``c_code_cache_version()``. Creating the class registers those
methods as its C implementation in ``tensorgraph.link.c.ops`` (the one table every op's C
comes from), so such an op runs exactly like tensorgraph's own.

``c_code_cache_version()`` returning ``()`` (the default) means the code depends on something
its text does not show: the module is compiled in each process and never kept on disk.
"""

from __future__ import annotations

import inspect

from tensorgraph.graph.op import Op
from tensorgraph.link.c.ops import CImplementation, register_instance

__all__ = ["COp"]


class COp(Op):
    """An ``Op`` whose C is given by its own ``c_code`` methods (see the module docstring)."""

    _c_from_methods = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "c_code" in cls.__dict__:
            register_instance(cls, _OpMethods())

    def c_code(self, node, name, inputs, outputs, sub) -> str:
        raise NotImplementedError(f"{type(self).__name__} defines no c_code")

    def c_code_cache_version(self) -> tuple:
        return ()


class _OpMethods(CImplementation):
    """The C implementation a ``COp`` class gives through its methods."""

    def code(self, op, node, name, inputs, outputs, sub):
        return op.c_code(node, name, inputs, outputs, sub)

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
