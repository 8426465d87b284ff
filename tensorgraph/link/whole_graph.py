"""What ``Function`` calls for a whole-graph back end: ``Program`` (one compiled function of the
back end for one FunctionGraph), ``WholeGraphVM`` and ``WholeGraphLinker``, and
``registered_linker``, the decorator a back end's linker module registers its linker with.

The VM has the attributes ``Function`` and the tools read (``input_storage``,
``output_storage``, ``storage_map``, ``fgraph``) but no per-node thunks (``nodes`` and
``thunks`` are empty): nothing runs node by node, so per-node hooks, per-node profile times
and stepping do not exist for these back ends. A ``Program`` is shared by every VM linked from
the same graph (spare VMs of concurrent calls, see ``compile/compiled.py``) and so must be
safe to call from several threads at once.
"""

from __future__ import annotations

import threading
import weakref

from tensorgraph.link.registry import register_linker
from tensorgraph.link.vm import input_cells

__all__ = ["Program", "WholeGraphVM", "WholeGraphLinker", "registered_linker"]


class Program:
    """One compiled function of a back end for one FunctionGraph (see the module docstring).

    Subclasses set ``backend`` ('JAX'), ``description`` ('one jax.jit'), ``seconds``
    (``{"generate": s, "compile": s}``: writing the back end's program, compiling it) and
    define ``run(values) -> list`` (one value per fgraph output) and ``source()`` (the back
    end's own code, as text, for the compile report).
    """

    backend = ""
    description = ""
    readonly_outputs = False

    def __init__(self):
        self.seconds = {"generate": 0.0, "compile": 0.0}
        self.compiled_from = None  # "compiled", "disk" (the back end's cache) or None

    def run(self, values: list) -> list:
        raise NotImplementedError

    def source(self) -> str:
        raise NotImplementedError


class WholeGraphVM:
    """What ``Function`` calls for a whole-graph back end: reads the input cells, runs the
    program, fills the output cells (see the module docstring for what it lacks)."""

    lazy = False
    allow_gc = True  # nothing is kept between calls: every output is a new array
    supports_node_times = False

    @property
    def readonly_outputs(self) -> bool:
        """Whether the outputs are read-only buffers (``Function`` copies the user's)."""
        return self.program.readonly_outputs

    def __init__(self, program, fgraph, input_storage=None, storage_map=None):
        self.program = program
        self.fgraph = fgraph
        self.backend = program.backend
        input_storage, storage_map = input_cells(fgraph, input_storage, storage_map)
        for var in fgraph.outputs:
            storage_map.setdefault(var, [None])
        self.storage_map = storage_map
        self.input_storage = list(input_storage)
        self.output_storage = [storage_map[v] for v in fgraph.outputs]
        self.nodes: list = []
        self.thunks: list = []
        self.pre_hook = None
        self.post_hook = None

    @property
    def seconds(self) -> dict:
        return self.program.seconds

    def source(self) -> str:
        """The back end's own code for this graph (jaxpr / StableHLO, generated Python)."""
        return self.program.source()

    def __call__(self):
        __tracebackhide__ = True  # noqa: F841 - IPython shows the user's frame first
        values = self.program.run([cell[0] for cell in self.input_storage])
        for cell, value in zip(self.output_storage, values):
            cell[0] = value

    def __repr__(self):
        return (f"<{self.backend} VM: {len(self.fgraph.apply_nodes)} nodes as "
                f"{self.program.description}>")


class WholeGraphLinker:
    """Links a FunctionGraph into a ``WholeGraphVM``: ``build(fgraph)`` once per graph (the
    program is kept for the spare VMs of concurrent calls, which link the same graph again).
    Subclasses set ``name`` and ``program`` (the back end's ``Program`` class)."""

    name = ""
    program: type = Program
    #: ops holding an inner graph (Scan) run inside the program: ``prepare_for_mode`` only
    #: rewrites their inner graph for the mode, it does not compile it on its own
    traces_inner_graphs = True

    def __init__(self):
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def make_vm(self, fgraph, input_storage=None, storage_map=None) -> WholeGraphVM:
        with self._lock:
            program = self._programs.get(fgraph)
            if program is None:
                program = self._programs[fgraph] = self.build(fgraph)
        return WholeGraphVM(program, fgraph, input_storage, storage_map)

    def build(self, fgraph) -> Program:
        return self.program(fgraph)

    def __repr__(self):
        return f"{type(self).__name__}()"


def registered_linker(cls: type) -> type:
    """Class decorator: make a ``WholeGraphLinker`` subclass the linker ``cls.name``
    (``tensorgraph.link.registry.register_linker``), as each back end's linker module does on
    import."""
    register_linker(cls.name, cls)
    return cls
