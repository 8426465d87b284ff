"""Linker classes by the names PyTensor code constructs them with.

tensorgraph's linkers are found by name (``Mode(linker='cvm')``, ``tensorgraph.link``); code
written for PyTensor builds linker objects instead: ``Mode(linker=PerformLinker())``,
``VMLinker(allow_gc=False, use_cloop=True)``, ``CLinker()``. Each class here is such an
object: its arguments pick the tensorgraph linker that does the same, which links the graph
(``make_vm``). ``linker.name`` says which one it is.

===================================================  ===========================
PyTensor                                             tensorgraph linker
===================================================  ===========================
``PerformLinker()``                                  'py'
``VMLinker()`` / ``VMLinker(c_thunks=False)``       'vm' (C thunks: 'c|py')
``VMLinker(use_cloop=True)``                         'cvm'
``VMLinker(allow_gc=False, ...)``                    the '_nogc' variant
``CLinker()``                                        'c' (the whole graph in C)
``OpWiseCLinker()``                                  'c|py' (C per node)
===================================================  ===========================
"""

from __future__ import annotations

from tensorgraph import link
from tensorgraph.configdefaults import config

__all__ = ["Linker", "PerformLinker", "VMLinker", "CLinker", "OpWiseCLinker"]


class Linker:
    """A linker object: ``make_vm(fgraph, input_storage=None, storage_map=None)`` links a
    graph (see ``tensorgraph.link``). The subclasses below delegate to a named linker."""

    #: the tensorgraph linker this object stands for
    name: str = ""

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        return link.get_linker(self.name).make_vm(fgraph, input_storage, storage_map)

    def clone(self, **kwargs):
        """A copy with some constructor arguments changed (as PyTensor's ``clone``)."""
        args = dict(self._args)
        args.update(kwargs)
        return type(self)(**args)

    _args: dict = {}

    def __eq__(self, other):
        return type(self) is type(other) and self.name == other.name

    def __hash__(self):
        return hash((type(self), self.name))

    def __repr__(self):
        return f"{type(self).__name__}(tensorgraph linker {self.name!r})"


def _gc_suffix(allow_gc) -> str:
    return "_nogc" if allow_gc is False else ""


class PerformLinker(Linker):
    """Every node's numpy ``perform``, in a Python loop: the 'py' linker."""

    def __init__(self, allow_gc=None, schedule=None):
        self._args = {"allow_gc": allow_gc}
        self.name = "py" if allow_gc is not False else "vm_nogc"


class VMLinker(Linker):
    """PyTensor's VM linker: ``use_cloop`` runs the loop in C ('cvm'), ``c_thunks`` (default:
    when a C compiler is configured) runs each node's C ('c|py'), otherwise each node's
    ``perform`` ('vm'); ``allow_gc=False`` keeps intermediate results between calls. A
    ``callback`` per node is what ``MonitorMode`` does here."""

    def __init__(self, allow_gc=None, use_cloop=False, callback=None, callback_input=None,
                 lazy=None, schedule=None, c_thunks=None, allow_partial_eval=None):
        if callback is not None or callback_input is not None:
            raise NotImplementedError("VMLinker(callback=...): use MonitorMode(pre_func=..., "
                                      "post_func=...), which calls a function around each node")
        self._args = {"allow_gc": allow_gc, "use_cloop": use_cloop, "c_thunks": c_thunks}
        if c_thunks is None:
            c_thunks = bool(config.cxx)
        if use_cloop:
            self.name = "cvm" + _gc_suffix(allow_gc)
        elif c_thunks:
            self.name = "c|py" + _gc_suffix(allow_gc)
        else:
            self.name = "vm" + _gc_suffix(allow_gc)


class CLinker(Linker):
    """The whole graph as one generated C program, without garbage collection: 'c'."""

    def __init__(self, schedule=None):
        self._args = {}
        self.name = "c"


class OpWiseCLinker(Linker):
    """Each node's generated C (``perform`` where an op has none), a Python loop: 'c|py'."""

    def __init__(self, schedule=None, allow_gc=None):
        self._args = {"allow_gc": allow_gc}
        self.name = "c|py" + _gc_suffix(allow_gc)
