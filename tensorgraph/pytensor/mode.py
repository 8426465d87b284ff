"""The PyTensor mode ``TENSORGRAPH``: PyTensor (and PyMC) functions that run on tensorgraph.

Why a linker: PyTensor hands a whole rewritten ``FunctionGraph`` to a ``JITLinker`` for its
JAX, Numba and PyTorch modes; ``TensorgraphLinker`` is one more. PyTensor keeps building and
rewriting the graph (its ``fast_run`` rewrites, less the C-only, BLAS, fusion and inplace ones,
which tensorgraph's own FAST_RUN does on the converted graph), checks the inputs, writes the
updates of shared variables and random generators; the linker converts the graph
(``from_pytensor``) and compiles it with tensorgraph's FAST_RUN (C kernels, tiers, the module
cache). The call then adds one tensorgraph ``Function`` call inside PyTensor's
``Function.__call__`` (its inputs are trusted: PyTensor has just filtered them).

``tensorgraph.pytensor.unwrap`` gives that tensorgraph ``Function`` back.
"""

from __future__ import annotations

from pytensor.compile.mode import Mode, predefined_modes, register_mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.link.basic import JITLinker

from tensorgraph.compile.function import function
from tensorgraph.pytensor.convert import from_pytensor
from tensorgraph.pytensor.unwrap import unwrap

__all__ = ["TENSORGRAPH", "TensorgraphLinker", "unwrap"]


class TensorgraphLinker(JITLinker):
    """A PyTensor linker compiling the whole graph with tensorgraph (see the module docstring)."""

    required_rewrites = ("minimum_compile",)
    incompatible_rewrites = ("cxx_only", "BlasOpt", "fusion", "inplace",
                             "local_careduce_fusion", "scan_save_mem_prealloc")

    def fgraph_convert(self, fgraph, **kwargs):
        return from_pytensor(fgraph)

    def jit_compile(self, converted):
        inputs, outputs = converted
        # PyTensor's Function has checked and converted the inputs before the thunk runs
        return function(inputs, list(outputs), mode="FAST_RUN", trust_input=True,
                        on_unused_input="ignore")

    def create_thunk_inputs(self, storage_map):
        return [storage_map[v] for v in self.fgraph.inputs]


#: the mode, also registered by name: ``pytensor.function(..., mode="TENSORGRAPH")``
TENSORGRAPH = Mode(TensorgraphLinker(), RewriteDatabaseQuery(include=["fast_run"]))
if "TENSORGRAPH" not in predefined_modes:
    register_mode("TENSORGRAPH", TENSORGRAPH)
