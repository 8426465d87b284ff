"""The PyTensor mode ``TENSORGRAPH``: PyTensor (and PyMC) functions that run on tensorgraph.

Why a linker: PyTensor hands a whole rewritten ``FunctionGraph`` to a ``JITLinker`` for its
JAX, Numba and PyTorch modes; ``TensorgraphLinker`` is one more. PyTensor keeps building and
rewriting the graph (its ``fast_run`` rewrites, less the C-only, BLAS, fusion and inplace ones,
which tensorgraph's own FAST_RUN does on the converted graph), checks the inputs, writes the
updates of shared variables and random generators; the linker converts the graph
(``from_pytensor``) and compiles it with tensorgraph's FAST_RUN (C kernels, tiers, the module
cache). The call then adds one tensorgraph ``Function`` call inside PyTensor's
``Function.__call__`` (its inputs are trusted: PyTensor has just filtered them), and as little
Python as possible around it: the thunk PyTensor's ``Function`` runs as its VM calls that
Function (whose call goes straight to its C entry point) on the input cells' values and
returns its outputs (PyTensor then reads no output storage).

Intermediates: a log-density and its gradient are dozens of small arrays, and allocating and
freeing them at every call is most of a call (eight schools: 3.3 us a call against 1.4 us
with the buffers kept, 2026-12-07 at f96b906). So the linker keeps the intermediates' buffers between calls (linker
``cvm_nogc``, what PyTensor's ``allow_gc=False`` means) when PyTensor's static shapes say they
hold at most ``KEEP_BYTES`` in all, and frees them after their last reader (``cvm``, as
PyTensor's C does by default) when they may hold more or their shapes are not known.
``TensorgraphLinker(allow_gc=True/False)``, or PyTensor's ``config.allow_gc = False``, decides
it instead.

``tensorgraph.pytensor.unwrap`` gives that tensorgraph ``Function`` back.
"""

from __future__ import annotations

import math
import re

import numpy as np
from pytensor.compile.mode import Mode, optdb, predefined_modes, register_mode
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.rewriting.basic import GraphRewriter
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.link.basic import JITLinker
from pytensor.link.utils import raise_with_op

from tensorgraph.compile.function import function
from tensorgraph.compile.mode import Mode as TgMode
from tensorgraph.graph.basic import Variable
from tensorgraph.pytensor.convert import from_pytensor
from tensorgraph.pytensor.unwrap import unwrap

__all__ = ["TENSORGRAPH", "TensorgraphLinker", "unwrap"]


class TensorgraphLinker(JITLinker):
    """A PyTensor linker compiling the whole graph with tensorgraph (see the module docstring)."""

    required_rewrites = ("minimum_compile",)
    incompatible_rewrites = ("cxx_only", "BlasOpt", "fusion", "inplace",
                             "local_careduce_fusion", "scan_save_mem_prealloc")

    #: the most bytes the intermediates may hold for their buffers to be kept between calls
    #: (``allow_gc=None``; see the module docstring)
    KEEP_BYTES = 8 << 20

    def __init__(self, allow_gc: bool | None = None, schedule=None):
        from pytensor import config as pt_config

        # None: by the intermediates' size (PyTensor's linker turns None into its flag's True)
        self.asked_gc = allow_gc if allow_gc is not None else (None if pt_config.allow_gc
                                                               else False)
        super().__init__(allow_gc=allow_gc, schedule=schedule)

    def fgraph_convert(self, fgraph, storage_map=None, **kwargs):
        """The converted graph: its inputs are the function's explicit ones; PyTensor's
        shared variables become tensorgraph shared variables holding their values in the very
        cells PyTensor's function keeps them in (``storage_map``), so the thunk passes only the
        explicit inputs, ``unwrap(fn)`` takes the arguments ``fn`` takes, and a value set on
        the PyTensor side (``pm.set_data``, ``model.set_dim``, an update) is read by both."""
        shared = {v: storage_map[v] for v in fgraph.inputs
                  if isinstance(v, SharedVariable) and storage_map is not None}
        inputs, outputs = from_pytensor(fgraph, storage=shared)
        # the outputs' names as the function was given them (PyMC's "mu_logprob"), which
        # PyTensor's rewrites may have replaced by a named intermediate ("sigma > 0")
        for var, name in zip(outputs, getattr(fgraph, OUTPUT_NAMES, None) or ()):
            if name and isinstance(var, Variable) and var.owner is not None:
                var.name = name
        return inputs, outputs

    def keeps_buffers(self) -> bool:
        """Whether the compiled graph keeps its intermediates' buffers between calls."""
        if self.asked_gc is not None:
            return not self.asked_gc
        return intermediate_bytes(self.fgraph) <= self.KEEP_BYTES

    def jit_compile(self, converted):
        inputs, outputs = converted
        linker = "cvm_nogc" if self.keeps_buffers() else "cvm"
        # PyTensor's Function has checked and converted the inputs before the thunk runs
        fn = function(inputs, list(outputs), mode=TgMode(linker, "fast_run", fallback=True),
                      trust_input=True, on_unused_input="ignore", name=given_name(self.fgraph))
        # tensorgraph's rewrites replace the outputs too: they keep the names given
        for var, given in zip(fn.maker.fgraph.outputs, outputs):
            if given.name and var.owner is not None and var.name != given.name:
                var.name = given.name
        return fn

    def create_thunk_inputs(self, storage_map):
        # the shared variables' cells are read by the converted graph's shared variables
        return [storage_map[v] for v in self.fgraph.inputs if not isinstance(v, SharedVariable)]

    def create_jitable_thunk(self, compute_map, order, input_storage, output_storage,
                             storage_map):
        """PyTensor's JITLinker thunk, less its Python: one call of the tensorgraph Function
        on the input cells' values, its outputs written to the output cells and returned
        (PyTensor's ``Function`` then uses them as they are)."""
        fgraph = self.fgraph
        output_nodes = [o.owner for o in fgraph.outputs if o.owner is not None][:1]
        converted = self.fgraph_convert(fgraph, order=order, input_storage=input_storage,
                                        output_storage=output_storage, storage_map=storage_map)
        cells = self.create_thunk_inputs(storage_map)
        out_cells = [storage_map[v] for v in fgraph.outputs]
        fn = self.jit_compile(converted)

        def fail(thunk):
            raise_with_op(fgraph, output_nodes[0] if output_nodes else None, thunk)

        if len(cells) == 1 and len(out_cells) == 2:  # PyMC's logp + dlogp of raveled inputs
            (in0,), (out0, out1) = cells, out_cells

            def thunk():
                try:
                    outputs = fn(in0[0])
                except Exception:
                    fail(thunk)
                out0[0], out1[0] = outputs
                return outputs
        else:
            def thunk():
                try:
                    outputs = fn(*[cell[0] for cell in cells])
                except Exception:
                    fail(thunk)
                for cell, value in zip(out_cells, outputs):
                    cell[0] = value
                return outputs

        thunk.inputs, thunk.outputs, thunk.lazy = cells, out_cells, False
        return [thunk], output_nodes, fn


def given_name(fgraph) -> str | None:
    """The name the PyTensor function was given (``pytensor.function(..., name="logp")``), or
    None for the ``file.py:line`` of its caller that PyTensor names it by otherwise (for a
    PyMC function, a line of PyMC's)."""
    name = getattr(fgraph, "name", None)
    return None if name is None or re.fullmatch(r".*\.py:\d+", name) else name


def intermediate_bytes(fgraph) -> float:
    """The bytes of the arrays the nodes of PyTensor's ``fgraph`` compute, by their static
    shapes (inf when a shape is not known; random generators and other non-arrays count 0)."""
    total = 0
    for node in fgraph.apply_nodes:
        for var in node.outputs:
            dtype = getattr(var.type, "dtype", None)
            if dtype is None:
                continue
            shape = getattr(var.type, "shape", ())
            if shape is None or None in shape:
                return math.inf
            try:
                total += math.prod(shape) * np.dtype(dtype).itemsize
            except TypeError:  # a dtype numpy does not know
                return math.inf
    return total


#: the attribute of PyTensor's FunctionGraph holding its outputs' names before rewriting
OUTPUT_NAMES = "tensorgraph_output_names"


class RecordOutputNames(GraphRewriter):
    """The first of mode TENSORGRAPH's rewrites (tag ``tensorgraph``): it writes the names of
    the function's outputs, as given, on the FunctionGraph, for the converted graph to keep
    (PyTensor keeps a replaced variable's name only when the replacement has none, and PyMC's
    parameter checks become ``switch`` nodes named "sigma > 0")."""

    def apply(self, fgraph):
        if getattr(fgraph, OUTPUT_NAMES, None) is None:
            setattr(fgraph, OUTPUT_NAMES, [o.name for o in fgraph.outputs])


try:
    optdb.register("tensorgraph_output_names", RecordOutputNames(), "tensorgraph", position=-2)
except ValueError:  # registered already (the module loaded again)
    pass

#: the mode, also registered by name: ``pytensor.function(..., mode="TENSORGRAPH")``
TENSORGRAPH = Mode(TensorgraphLinker(),
                   RewriteDatabaseQuery(include=["fast_run", "tensorgraph"]))
if "TENSORGRAPH" not in predefined_modes:
    register_mode("TENSORGRAPH", TENSORGRAPH)
