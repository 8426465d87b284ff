"""The 'numba' linker: a FunctionGraph as one Python module compiled by ``numba.njit``.

Linking writes the module (``tensorgraph.link.numba.codegen``; one ``UnsupportedOpsError``
lists every op without a Numba implementation), saves it as ``<compiledir>/numba/<key>.py``
(the key hashes the code, comments left out, and the versions of Numba, numpy and Python:
the same graph built on other lines, a notebook cell run again, finds it) and compiles its
``graph`` function for the input types (C-contiguous arrays of the graph's dtypes and
ndims, read-only, which writable arrays also fit). Numba's own cache (``cache=True``) sits
next to the file, in ``__pycache__``: a new process with the same graph loads the machine
code instead of compiling it (``program.compiled_from == "disk"``).

Calls: inputs that are not C-contiguous are copied into contiguous arrays (the one compiled
signature takes them so); the function runs without the GIL (``nogil``), so threads compute
side by side. Random generators: each draw's chain gets a copy of its input generator (so a
call never changes the input, and a failed call leaves it as it was), which Numba advances
in place; a generator output (a shared generator's update) is that advanced copy. Numba's
generators reproduce numpy's streams, so draws match FAST_RUN where the same numpy method
draws them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings
from time import perf_counter

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.link.optional import require
from tensorgraph.link.output_plan import OutputPlan
from tensorgraph.link.random_plan import RandomPlan, copy_generator
from tensorgraph.link.unsupported import UnsupportedOpsError
from tensorgraph.link.whole_graph import Program, WholeGraphLinker, registered_linker

__all__ = ["NumbaLinker", "NumbaProgram"]

#: modules loaded by this process, by key (a graph linked again reuses its compiled code)
_MODULES: dict = {}
_LOAD_LOCK = threading.Lock()


def _cache_dir() -> str:
    from tensorgraph.link.c import cachedir

    path = os.path.join(config.compiledir, "numba")
    cachedir.prepare(path)
    return path


def _load(key: str, source: str):
    """The module of ``source``, written under the cache directory (once) and imported."""
    with _LOAD_LOCK:
        module = _MODULES.get(key)
        if module is not None:
            return module
        from tensorgraph.link.c import cachedir

        directory = _cache_dir()
        path = os.path.join(directory, f"tg_{key}.py")
        if not os.path.exists(path):
            temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(source)
            os.replace(temporary, path)
        cachedir.check_trusted(path, config.compiledir)
        name = f"tensorgraph_numba_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's cache finds functions through their module
        spec.loader.exec_module(module)
        _MODULES[key] = module
        return module


def _argument_type(var, value=None, writable: bool = False):
    """The numba type of an argument: read-only arrays, except an input the function may
    overwrite (``In(x, mutable=True)``, written into by an inplace node)."""
    import numba
    from numba import types

    from tensorgraph.tensor.random.type import RandomGeneratorType

    if value is not None:
        return numba.typeof(value)
    if isinstance(var.type, RandomGeneratorType):
        return numba.typeof(np.random.default_rng(0))
    dtype = numba.from_dtype(np.dtype(var.type.dtype))
    return types.Array(dtype, var.type.ndim, "C", readonly=not writable)


class NumbaProgram(Program):
    """The graph as one compiled Numba function (see the module docstring)."""

    backend = "Numba"
    description = "one numba.njit"

    def __init__(self, fgraph):
        super().__init__()
        started = perf_counter()
        numba = require("numba", "numba", "NUMBA")
        from tensorgraph.link.numba.codegen import GraphSource
        from tensorgraph.tensor.random.type import RandomGeneratorType
        from tensorgraph.tensor.type import TensorType

        self.fgraph = fgraph
        self.plan = RandomPlan(fgraph)
        source = GraphSource(fgraph, self.plan)
        for node in source.nodes:
            for var in node.inputs:
                if var.owner is None and not isinstance(var.type, (TensorType,
                                                                   RandomGeneratorType)):
                    source.problems.append((node, f"Numba takes no input of type {var.type}"))
        written = source.write()
        if written is None or source.problems:
            raise UnsupportedOpsError("Numba", source.problems, fgraph)
        self.key, code, self.text = written
        self.position = source.position
        self.nodes = source.nodes
        # how each argument of the compiled function is filled at a call
        self._inputs, self._constants, types = [], {}, []
        for j, (kind, what) in enumerate(source.argument_values):
            if kind == "input":
                self._inputs.append((j, what))
                var = fgraph.inputs[what]
                types.append(_argument_type(
                    var, writable=var in getattr(fgraph, "destroyable_inputs", ())))
            elif kind == "constant":
                value = np.array(what, order="C")  # ascontiguousarray would make 0-d 1-d
                self._constants[j] = value
                types.append(_argument_type(None, value))
            else:
                types.append(_argument_type(fgraph.inputs[self.plan.chains[what][0]]))
        self._chains = [(j, what) for j, (kind, what) in enumerate(source.argument_values)
                        if kind == "rng"]
        self._n_arguments = len(source.argument_values)
        self.output_plan = OutputPlan(fgraph, self.plan, lambda chain: chain,
                                      returned=source.returned)
        module = _load(self.key, code)
        self.seconds["generate"] = perf_counter() - started
        compiling = perf_counter()
        dispatcher = module.graph
        with _LOAD_LOCK:
            hits = sum(dispatcher.stats.cache_hits.values())
            # compiling stays off between links: calls then convert writable arrays to the
            # read-only signature instead of compiling one for them
            dispatcher.disable_compile(False)
            with warnings.catch_warnings():
                # about the generated code's array layouts, nothing a user can act on
                warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
                dispatcher.compile(tuple(types))
            dispatcher.disable_compile()
            self.compiled_from = ("disk" if sum(dispatcher.stats.cache_hits.values()) > hits
                                  else "compiled")
        self.seconds["compile"] = perf_counter() - compiling
        self.path = module.__file__
        self._function = dispatcher

    def run(self, values: list) -> list:
        __tracebackhide__ = True  # noqa: F841
        args = [None] * self._n_arguments
        for j, pos in self._inputs:
            value = values[pos]
            args[j] = value if value.flags.c_contiguous else np.ascontiguousarray(value)
        for j, value in self._constants.items():
            args[j] = value
        copies = []
        for j, chain in self._chains:
            copy = copy_generator(values[self.plan.chains[chain][0]])
            copies.append(copy)
            args[j] = copy
        try:
            outputs = self._function(*args)
        except Exception as exc:  # noqa: BLE001 - an error of a node names the node
            self._fail(exc)
        return self.output_plan.gather(outputs, values, copies)

    def _fail(self, exc):
        __tracebackhide__ = True  # noqa: F841
        from tensorgraph.graph.errors import reraise_with_node
        from tensorgraph.link.numba.codegen import NODE_PREFIX

        template, *values = exc.args or ("",)
        message = template if values and isinstance(template, str) else str(exc)
        found = NODE_PREFIX.match(message)
        if found is None:
            raise exc
        if values:  # raised as a template and its run-time values (NodeCode.fail)
            message = message.format(*values)
        node = self.nodes[int(found.group(1))]
        reraise_with_node(type(exc)(message[found.end():]), node, None, int(found.group(1)),
                          fgraph=self.fgraph)

    def source(self) -> str:
        """The Python module Numba compiled (``self.path``), with a comment naming each node
        and the line that built it."""
        return self.text


@registered_linker
class NumbaLinker(WholeGraphLinker):
    """Registered as the linker 'numba' (mode 'NUMBA')."""

    name = "numba"
    program = NumbaProgram
