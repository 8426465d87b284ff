"""Linker classes by the names PyTensor code constructs them with.

tensorgraph's linkers are found by name (``Mode(linker='cvm')``,
``tensorgraph.link.registry``); code written for PyTensor builds linker objects instead:
``Mode(linker=PerformLinker())``, ``VMLinker(allow_gc=False, use_cloop=True)``, ``CLinker()``.
Each class here is such an object: its arguments pick the tensorgraph linker that does the
same, which links the graph (``make_vm``). ``linker.name`` says which one it is.

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

A linker object can also be used by hand, as PyTensor code does without ``function``:
``linker.accept(fgraph)`` ties it to a graph (no rewrites run: the graph is linked as it is),
``make_thunk()`` returns ``(thunk, input_containers, output_containers)`` (set
``container.data``, call ``thunk()``, read the outputs' ``.data``) and ``make_function()`` a
callable from input values to output values. Both run on one set of storage cells, so unlike a
``Function`` they are not meant to be called from several threads at once (neither are
PyTensor's); use ``tensorgraph.function`` for that.
"""

from __future__ import annotations

from tensorgraph.link.registry import get_linker
from tensorgraph.configdefaults import config
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.shared import Container
from tensorgraph.utils import to_return_values

__all__ = ["Linker", "PerformLinker", "VMLinker", "CLinker", "OpWiseCLinker"]


class Linker:
    """A linker object: ``make_vm(fgraph, input_storage=None, storage_map=None)`` links a
    graph (see ``tensorgraph.link.registry``). The subclasses below delegate to a named linker."""

    #: the tensorgraph linker this object stands for
    name: str = ""

    #: the graph given to ``accept`` (None until then)
    fgraph = None

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        return get_linker(self.name).make_vm(fgraph, input_storage, storage_map)

    # -- use by hand: accept a graph, then make a thunk or a function of it ----------------

    def accept(self, fgraph, no_recycling=None, profile=None):
        """Tie this linker to ``fgraph`` and return it (a new linker of the same arguments if
        this one is already tied to another graph). ``no_recycling`` and ``profile`` are
        accepted for PyTensor code and change nothing: outputs are never recycled here, and
        profiling is ``function(..., profile=True)``."""
        if not isinstance(fgraph, FunctionGraph):
            raise TypeError(f"{type(self).__name__}.accept expects a FunctionGraph, got "
                            f"{type(fgraph).__name__}; build one with "
                            "FunctionGraph(inputs, outputs)")
        if self.fgraph is not None and self.fgraph is not fgraph:
            return self.clone().accept(fgraph, no_recycling, profile)
        self.fgraph = fgraph
        return self

    def make_thunk(self, input_storage=None, output_storage=None, storage_map=None, **kwargs):
        """Link the accepted graph: ``(thunk, inputs, outputs)``, where ``inputs`` and
        ``outputs`` are one ``Container`` per graph input / output (``.data`` to set or read
        a value, ``.storage`` the cell) and ``thunk()`` computes the outputs from the inputs'
        current values. ``input_storage`` / ``output_storage`` give the cells to use (one
        one-element list per variable); ``storage_map`` cells for other variables."""
        fgraph = self.fgraph
        if fgraph is None:
            raise ValueError(f"{type(self).__name__}.make_thunk: no graph to link; call "
                             "accept(fgraph) first (it returns the linker)")
        cells = dict(storage_map or {})
        if output_storage is not None:
            if len(output_storage) != len(fgraph.outputs):
                raise ValueError(f"{len(fgraph.outputs)} graph outputs but "
                                 f"{len(output_storage)} output cells")
            for var, cell in zip(fgraph.outputs, output_storage):
                if var not in fgraph.inputs:
                    cells[var] = cell
        vm = self.make_vm(fgraph, input_storage, cells)
        inputs = [Container(v, vm.storage_map[v], name=v.name) for v in fgraph.inputs]
        outputs = [Container(v, vm.storage_map[v], name=v.name) for v in fgraph.outputs]
        return vm, inputs, outputs

    def make_function(self, unpack_single=True, **kwargs):
        """A callable ``f(*input_values)`` computing the accepted graph: the list of output
        values, or the single value of a one-output graph when ``unpack_single``. Each value
        is converted to its input's type (a TypeError when it cannot be without loss). The
        returned values live in the linker's cells (a later call may reuse them), and one
        callable must not be called from two threads at once."""
        thunk, inputs, outputs = self.make_thunk(**kwargs)

        def execute(*args):
            if len(args) != len(inputs):
                raise TypeError(f"this function takes {len(inputs)} arguments (the graph's "
                                f"inputs), got {len(args)}")
            for container, value in zip(inputs, args):
                container.data = value
            thunk()
            values = [container.storage[0] for container in outputs]
            return to_return_values(values) if unpack_single else values

        execute.thunk, execute.inputs, execute.outputs = thunk, inputs, outputs
        return execute

    def clone(self, **kwargs):
        """A copy with some constructor arguments changed (as PyTensor's ``clone``), tied to
        no graph."""
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
