"""From a FunctionGraph to its C: a function per node, the graph's description, the glue.

``CGraph(fgraph, whole_graph=...)`` asks every node for its C (its op's implementation in
``tensorgraph.link.c.ops``, see docs/c_backend.md). The nodes that have C become functions
``int tg_n_<hash>(tg_ctx *tg_context, tg_array *const *tg_io)``, their operands passed as
pointers (inputs, then outputs), named by a hash of their text so that one compiled function
serves every graph with that node, in every process (``NodeFunction``). Functions this process
has not loaded yet are compiled into a library of plain C (no Python.h). With
``straight=True`` (linker 'c') the library also gets ``tg_straight``, every node as a direct
call in one function, which the compiler may inline.

The glue library (``glue.h``, once per cache) runs any graph from its description
(``tg_graph_desc``, graph_desc.h), filled here field by field: ``CGraph.workspace(gc, report)``
makes a workspace (the buffers of every variable) and returns its entry points.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import time

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant
from tensorgraph.link.c import codegen_cache
from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.codegen_version import codegen_version
from tensorgraph.link.c.cstring import c_comment
from tensorgraph.link.compile_events import emit

_HERE = os.path.dirname(__file__)
_FILES: dict[str, str] = {}

#: translation units of a big library of node functions, compiled at the same time (2 cores
#: on the reference machine, 2026-11-22 at 237050c), and the estimates that decide the split
#: (see _split)
KERNEL_UNITS = 2
SPLIT_CHARS = 8000
SUPPORT_CHARS = 9000
BUNDLE_CHARS = 2000


def _read(name: str) -> str:
    text = _FILES.get(name)
    if text is None:
        with open(os.path.join(_HERE, name), encoding="utf-8") as f:
            text = _FILES[name] = f.read()
    return text


def _libmvec() -> bool:
    """Whether glibc's vector math library can be linked (x86-64 glibc only). Asked of the
    dynamic loader (``libmvec.so.1``) rather than ``ctypes.util.find_library``, which runs
    ``ldconfig -p`` (7 ms of every process that compiles a graph; 2026-11-22 at 237050c)."""
    if "mvec" not in _FILES:
        import platform

        ok = platform.machine() in ("x86_64", "AMD64")
        if ok:
            try:
                ctypes.CDLL("libmvec.so.1")
            except OSError:
                ok = False
        _FILES["mvec"] = "1" if ok else ""
    return bool(_FILES["mvec"])


def var_has_c(var, complex_ok: bool = False) -> bool:
    """Whether a variable can live in a ``tg_array`` slot: a complex one only where
    ``complex_ok`` (its readers and writers are C that handles complex numbers)."""
    from tensorgraph.tensor.type import TensorType

    t = var.type
    return isinstance(t, TensorType) and t.ndim <= cd.MAXDIM and (
        cd.has_c(t.dtype) or complex_ok and t.dtype in cd.COMPLEX)


def node_vars_have_c(node) -> bool:
    """Whether the node's operands can live in ``tg_array`` slots for its op's C (complex
    ones when the C implementation says ``complex_operands(op)``)."""
    impl = c_implementation(node.op)
    ok = impl is not None and impl.complex_operands(node.op)
    return all(var_has_c(v, ok) for v in node.inputs + node.outputs)


def c_implementation(op):
    """The op's C implementation (``tensorgraph.link.c.ops``), or None."""
    from tensorgraph.link.c.ops import implementation

    return implementation(op)


def node_c_code(node, name: str, inputs, outputs, sub) -> str | None:
    """The node's C fragment, or None when its op gives none for it."""
    impl = c_implementation(node.op)
    if impl is None or getattr(node.op, "lazy", False):
        return None
    if not node_vars_have_c(node):
        return None
    try:
        return impl.code(node.op, node, name, inputs, outputs, sub)
    except NotImplementedError:
        return None


class CGraph:
    """The compiled C of a graph (see the module docstring).

    Attributes
    ----------
    nodes : the toposorted nodes of the fgraph
    c_nodes : the nodes that have C, in order; ``index[node]`` is ``k``, their position
    whole_graph : whether the C can run the whole graph
    library : the ``ctypes.CDLL`` compiled for the nodes this process had no function for
        (None when it had them all)
    found : where ``compile()`` found the node functions: "memory" (all of them in libraries
        this process loaded before), "disk" or "compiled" (the library); None before
    extra_flags : compiler flags after ``compile_flags()`` (the quick tier's ``-O1``); node
        functions built with them are found and recorded apart from the others (their own
        runtime version and in-memory context), so an -O1 function never serves a build
        without them
    flat_only : the Elemwise nodes' operands are always contiguous (the quick tier's pieces):
        their C has no strided loops (a strided operand is an error)
    """

    def __init__(self, fgraph, nodes=None, *, whole_graph: bool = True, straight: bool = False,
                 extra_flags=(), flat_only: bool = False):
        started = time.perf_counter()
        self.extra_flags = tuple(extra_flags)
        self._version = " ".join([codegen_version(), *self.extra_flags])
        emit("phase", phase="generating C", nodes=len(fgraph.apply_nodes))
        self.fgraph = fgraph
        self.nodes = list(nodes) if nodes is not None else fgraph.toposort()
        self.slot: dict = {}
        self.constants: list = []
        sub = {"ctx": "tg_context", "fail": "goto tg_fail;", "openmp": bool(config.openmp),
               "openmp_minsize": int(config.openmp_elemwise_minsize), "id": "0",
               "flat_only": flat_only}
        self.c_nodes, self.index, self.functions = [], {}, []
        self._glue = None
        #: where the node functions' C came from: None (written now), or "memory" / "disk"
        #: (kept for this rewritten graph before: link/c/codegen_cache.py)
        self.generated_from = None
        key = codegen_cache.key_of(fgraph, flat_only)
        kept = codegen_cache.lookup(key, self.nodes) if key is not None else None
        if kept is not None:
            self._restore(*kept)
        else:
            self._generate(sub)
            kept = self._kept() if key is not None else None
            if kept is not None:
                codegen_cache.store(key, self.nodes, *kept)
        # a complex variable is read and written by C that handles it, once every node is C
        self.whole_graph = (whole_graph and len(self.c_nodes) == len(self.nodes)
                            and all(var_has_c(v, complex_ok=True)
                                    for v in fgraph.inputs + fgraph.outputs))
        self.straight = straight and self.whole_graph
        if self.whole_graph:
            for v in fgraph.inputs + fgraph.outputs:
                self._slot(v)
        self.library = self.glue = self.addresses = None
        self._desc = None
        self.found = None
        #: seconds spent writing the C ("generate") and finding or compiling it ("compile")
        self.seconds = {"generate": time.perf_counter() - started, "compile": 0.0}
        self.units_compiled = 0

    def _generate(self, sub) -> None:
        """Ask every node for its C (see the module docstring)."""
        for node in self.nodes:
            if not node_vars_have_c(node):
                continue
            for v in node.inputs + node.outputs:
                self._slot(v)
            nin = len(node.inputs)
            defs: list[str] = []
            code = node_c_code(node, "node", [f"tg_io[{i}]" for i in range(nin)],
                               [f"tg_io[{nin + j}]" for j in range(len(node.outputs))],
                               dict(sub, define=defs.append))
            if code is None:
                continue
            self._add(node, NodeFunction(node, code, "\n".join(defs)))

    def _add(self, node, function) -> None:
        if self._glue is None:  # the glue compiles (if it must) while we write the C
            self._glue = _Glue()
        self.index[node] = len(self.c_nodes)
        self.c_nodes.append(node)
        self.functions.append(function)

    def _kept(self):
        """(marks, functions): what ``codegen_cache`` keeps of the C written for the nodes;
        None when some node's C may change under the same key (``codegen_cache.keepable``)."""
        marks, functions, position = [], [], {}
        for node in self.nodes:
            k = self.index.get(node)
            if not codegen_cache.keepable(node, c_implementation(node.op) if k is not None
                                          else None):
                return None
            if k is None:
                marks.append(codegen_cache.NO_OPERANDS if not node_vars_have_c(node)
                             else codegen_cache.NO_CODE)
                continue
            fn = self.functions[k]
            if fn.symbol not in position:
                position[fn.symbol] = len(functions)
                functions.append(fn.kept())
            marks.append(position[fn.symbol])
        return marks, functions

    def _restore(self, marks, functions, where) -> None:
        """The C kept for these nodes (``codegen_cache.lookup``), as ``_generate`` made it."""
        made: dict = {}
        for node, mark in zip(self.nodes, marks):
            if mark == codegen_cache.NO_OPERANDS:
                continue
            for v in node.inputs + node.outputs:
                self._slot(v)
            if mark == codegen_cache.NO_CODE:
                continue
            if mark not in made:
                made[mark] = functions[mark]
            self._add(node, NodeFunction.restored(node, made[mark]))
        self.generated_from = where

    @property
    def source(self) -> str:
        """The C of all the graph's node functions as one unit (to read; the library compiled
        holds only the functions this process did not have yet)."""
        return _unit(self.functions, self._straight_code() if self.straight else "")

    def _slot(self, var) -> int:
        s = self.slot.get(var)
        if s is None:
            s = self.slot[var] = len(self.slot)
            if isinstance(var, Constant):
                self.constants.append(var)
        return s

    def _straight_code(self) -> str:
        """Linker 'c': ``tg_straight``, every node as a direct call in one function."""
        lines, offset = [], 0
        for k, fn in enumerate(self.functions):
            lines.append(f"int {fn.symbol}(tg_ctx *, tg_array *const *);\n"
                         f"#define TG_FN{k} {fn.symbol}\n#define TG_AT{k} {offset}")
            offset += len(fn.node.inputs) + len(fn.node.outputs)
        steps = " ".join(f"TG_STEP({k})" for k in range(len(self.functions)))
        return "\n".join(lines) + (
            f"\n#define TG_STRAIGHT_NODES {steps}\n"
            "#define TG_STEP(k) ctx->errmsg[0] = 0; "
            "if (TG_FN##k(ctx, io + TG_AT##k) != 0) { *failed = k; return -1; }\n"
            "int tg_straight(tg_ctx *ctx, tg_array *const *io, int *failed)\n"
            "{\n    TG_STRAIGHT_NODES\n    return 0;\n}")

    # -- the description the glue runs the graph from --------------------------------------

    def _description(self):
        """(address of a filled ``tg_graph_desc``, what keeps it and its arrays alive): the
        graph as the glue runs it (graph_desc.h), made once per CGraph."""
        if self._desc is None:
            self._desc = self._fill_description(self.addresses, self.whole_graph)
        return self._desc

    def _fill_description(self, addresses, whole):
        """The description for node function ``addresses`` (0: a node that is not run in C),
        as a whole graph or node by node."""
        from tensorgraph.link.c.graph_desc import ELEMENT, GraphDesc

        desc = GraphDesc()
        keep = [desc]

        def field(name, values):
            element = ELEMENT[name]
            values = [int(v) for v in values] or [0]  # never a NULL pointer
            array = (element * len(values))(*values)
            keep.append(array)
            setattr(desc, name, ctypes.cast(array, ctypes.POINTER(element)))

        vars_by_slot = sorted(self.slot, key=self.slot.__getitem__)
        fg = self.fgraph
        io = set(fg.inputs) | set(fg.outputs)
        desc.nvars, desc.nnodes = len(vars_by_slot), len(self.c_nodes)
        desc.nconst, desc.whole = len(self.constants), int(whole)
        desc.ngin = len(fg.inputs) if whole else 0
        desc.ngout = len(fg.outputs) if whole else 0
        field("var_typenum", (cd.typenum(v.type.dtype) for v in vars_by_slot))
        field("var_ndim", (v.type.ndim for v in vars_by_slot))
        field("var_const", (isinstance(v, Constant) for v in vars_by_slot))
        field("var_graph_io", (v in io for v in vars_by_slot))
        static = []
        for v in vars_by_slot:
            shape = [-1 if s is None else s for s in v.type.shape]
            static += shape + [-1] * (cd.MAXDIM - len(shape))
        field("var_static", static)
        for kind in ("in", "out"):
            offsets, idx = [0], []
            for node in self.c_nodes:
                idx += [self.slot[v] for v in (node.inputs if kind == "in" else node.outputs)]
                offsets.append(len(idx))
            field(f"node_{kind}_off", offsets)
            field(f"node_{kind}_idx", idx)
        field("const_slot", (self.slot[c] for c in self.constants))
        field("graph_in", (self.slot[v] for v in fg.inputs) if whole else ())
        field("graph_out", (self.slot[v] for v in fg.outputs) if whole else ())
        offsets, idx = [0], []
        for frees in (self._free_schedule() if whole else []):
            idx += frees
            offsets.append(len(idx))
        field("free_off", offsets)
        field("free_idx", idx)
        field("node_fn", addresses[:-1])
        desc.straight = (addresses[-1] or None) if whole else None
        return ctypes.addressof(desc), keep

    def _free_schedule(self) -> list[list[int]]:
        """Per node, the slots of intermediates nobody reads after it."""
        fg = self.fgraph
        kept = set(fg.inputs) | set(fg.outputs)
        last = {}
        for k, node in enumerate(self.c_nodes):
            for v in node.outputs + node.inputs:
                last[v] = k
        frees = [[] for _ in self.c_nodes]
        for v, k in last.items():
            if v not in kept and not isinstance(v, Constant):
                frees[k].append(self.slot[v])
        return frees

    # -- compiling and running ------------------------------------------------------------

    def compile(self, wait_glue: bool = True):
        """Find every node function: in the libraries this process loaded, else in a library
        compiled (or found in the cache) for the missing ones; and the glue module (the first
        time in a second thread, so that its compiler runs next to the library's). With
        ``wait_glue=False`` the glue's compile is started but not waited for: the caller runs the
        node functions without it (link/c/direct.py)."""
        from tensorgraph.link.c.cmodule import find_exports, loaded_symbols

        started = time.perf_counter()
        known = loaded_symbols(_context(self.extra_flags))
        wanted = list({fn.symbol: fn for fn in self.functions
                       if self.straight or fn.symbol not in known}.values())
        glue = self._glue or _Glue()
        try:
            self.found = "memory"
            if wanted and not self.straight:  # compiled for other graphs, in other processes
                for symbol, library in find_exports([fn.symbol for fn in wanted],
                                                     runtime_version=self._version).items():
                    known.setdefault(symbol, _address(library, symbol))
                    self.found = "disk"
                wanted = [fn for fn in wanted if fn.symbol not in known]
            if wanted:
                self.library = self._build(wanted)
                for fn in wanted:
                    known.setdefault(fn.symbol, _address(self.library, fn.symbol))
        except BaseException:
            glue.wait()  # leave no compiler behind; the library's error is the one to show
            raise
        if wait_glue:
            self.glue = glue.result()
        self.seconds["compile"] = time.perf_counter() - started
        emit("phase", phase="loading")
        self.addresses = [known[fn.symbol] for fn in self.functions]
        self.addresses.append(_address(self.library, "tg_straight") if self.straight else 0)
        return self.library

    def _build(self, functions):
        from tensorgraph.link.c.cmodule import get_library

        build = {"libraries": [], "library_dirs": [], "include_dirs": [],
                 "extra_compile_args": ["-fwrapv", *self.extra_flags]}
        for fn in functions:
            for key, items in fn.build.items():
                build[key] += [item for item in items if item not in build[key]]
        if _libmvec():
            build["libraries"].append("mvec")
        unversioned = sorted({fn.unversioned for fn in functions if fn.unversioned})
        groups = _split(functions)
        self.units_compiled = len(groups)
        emit("phase", phase="compiling", units=len(groups), functions=len(functions))
        units = [_unit([functions[i] for i in group],
                       self._straight_code() if self.straight and u == 0 else "")
                 for u, group in enumerate(groups)]
        return get_library(units, name_hint="graph", unversioned=unversioned,
                           origin=self.fgraph, runtime_version=self._version,
                           found=self._record_found, exports=[fn.symbol for fn in functions],
                           **build)

    def _record_found(self, where: str) -> None:
        self.found = where

    def ready_now(self) -> dict | None:
        """{node position k: address} of the node functions that are ready without running the
        compiler (loaded by this process, or in the module cache), when the glue is ready too;
        None when it is not (nothing can run in C before compiling). Records the functions
        found on disk, so compiling later starts from them."""
        from tensorgraph.link.c.cmodule import find_exports, loaded_symbols

        if self.glue is None:
            self.glue = glue_module(cached_only=True)
            if self.glue is None:
                return None
        known = loaded_symbols(_context(self.extra_flags))
        if not self.straight:
            missing = [fn.symbol for fn in self.functions if fn.symbol not in known]
            if missing:
                for symbol, library in find_exports(missing,
                                                     runtime_version=self._version).items():
                    known.setdefault(symbol, _address(library, symbol))
        return {k: known[fn.symbol] for k, fn in enumerate(self.functions)
                if fn.symbol in known and not self.straight}

    def needs_compiler(self) -> bool:
        """Whether ``compile()`` would run the compiler (after ``ready_now``)."""
        ready = self.ready_now()
        return ready is None or len(ready) < len(self.functions) or self.straight

    def partial_workspace(self, ready: dict, gc: bool, report) -> dict:
        """A node-by-node workspace (``node_call`` only) in which the nodes of ``ready``
        (``ready_now()``) run their C; the others must not be called (their ``perform``
        runs instead)."""
        addresses = [ready.get(k, 0) for k in range(len(self.functions))] + [0]
        address, keep = self._fill_description(addresses, False)
        configure_pool(self.glue)
        return self.glue.tg_make_workspace(address, keep, tuple(c.data for c in self.constants),
                                           report, int(bool(gc)), int(config.pool__threads))

    def estimate_seconds(self, ready: dict | None) -> float:
        """About how long ``compile()`` will take the compiler on the functions not in
        ``ready`` (the model of ``_split``: ~66,000 characters of C a second per compiler
        process at -O3, the units side by side, ~0.04 s to start each; the glue ~0.3 s when
        it is not cached; measured 2026-11-25 at 73f2b9c)."""
        missing = [fn for k, fn in enumerate(self.functions) if k not in (ready or {})]
        if not missing:
            return 0.0
        per_unit = [sum(len(missing[i].text) + min(len(missing[i].support), SUPPORT_CHARS)
                        for i in group) for group in _split(missing)]
        seconds = 0.04 + max(per_unit) / 66000
        if self.glue is None:
            seconds = max(seconds, 0.3)
        return seconds

    def workspace(self, gc: bool, report) -> dict:
        """A fresh workspace (buffers of every variable) and its entry points: ``node_call``
        and, for whole graphs, ``run_all``, ``call``, ``call_trusted``, ``configure``.

        ``report(k, message, inputs, whole)`` is called when node ``k`` fails; it must raise.
        """
        if self.addresses is None:
            self.compile()
        address, keep = self._description()
        configure_pool(self.glue)
        return self.glue.tg_make_workspace(address, keep, tuple(c.data for c in self.constants),
                                           report, int(bool(gc)), int(config.pool__threads))


class NodeFunction:
    """One node's C function, named by a hash of everything its machine code depends on
    besides the flags (its text, the op's headers, support code and build arguments, and what
    every unit starts with: runtime.h, tg_scalar.h), so the function compiled for one graph
    serves every graph with the same node.

    ``defs``: C the node's code placed at file scope through ``sub["define"]`` (the block
    functions of its parallel loops, tensorgraph.link.c.parallel), written before the function;
    the names it gives as ``TG_LOCAL(name)`` are made unique to this function."""

    def __init__(self, node, code: str, defs: str = ""):
        op = node.op
        impl = c_implementation(op)
        self.node = node
        self.headers = []
        for h in impl.headers(op, node):
            line = f"#include {h}" if h.startswith(("<", '"')) else f'#include "{h}"'
            if line not in self.headers:
                self.headers.append(line)
        self.support = impl.support_code(op, node) or ""
        self.build = {"libraries": list(impl.libraries(op, node)),
                      "library_dirs": list(impl.library_dirs(op, node)),
                      "include_dirs": list(impl.include_dirs(op, node)),
                      "extra_compile_args": list(impl.compile_args(op, node))}
        version = impl.key(op)
        self.unversioned = "" if impl.cacheable(op) else str(op)
        body = (f"(tg_ctx *tg_context, tg_array *const *tg_io)\n{{\n"
                f"    (void)tg_context; (void)tg_io;\n    {{\n{code}\n    }}\n    return 0;\n"
                f"tg_fail: __attribute__((unused));\n    return -1;\n}}\n")
        digest = hashlib.sha256("\0".join(
            [_prelude_digest(), defs, body, self.support, *self.headers,
             repr(sorted(self.build.items())), repr(version)]).encode(
                 "utf-8", "surrogatepass")).hexdigest()
        self.symbol = f"tg_n_{digest[:24]}"
        self.text = f"/* {_comment(node)} */\nint {self.symbol}{body}"
        if defs:
            self.text = (f"/* {_comment(node)} */\n#define TG_LOCAL(name) {self.symbol}_##name\n"
                         f"{defs}\nint {self.symbol}{body}#undef TG_LOCAL\n")


    @classmethod
    def restored(cls, node, kept: dict) -> NodeFunction:
        """The function ``kept()`` described, for ``node`` (link/c/codegen_cache.py)."""
        fn = cls.__new__(cls)
        fn.node = node
        fn.symbol, fn.text, fn.support = kept["symbol"], kept["text"], kept["support"]
        fn.headers, fn.unversioned = list(kept["headers"]), kept["unversioned"]
        fn.build = {name: list(items) for name, items in kept["build"].items()}
        return fn

    def kept(self) -> dict:
        """What ``restored`` makes this function from again (plain strings and lists)."""
        return {"symbol": self.symbol, "text": self.text, "support": self.support,
                "headers": self.headers, "unversioned": self.unversioned,
                "build": self.build}


def _prelude() -> list[str]:
    """What every unit of node functions starts with."""
    return [f"/* tensorgraph generated node functions ({codegen_version()}) */",
            "#define TG_USE_LIBMVEC 1" if _libmvec() else "", _read("runtime.h"),
            _read("tg_scalar.h")]


def _prelude_digest() -> str:
    digest = _FILES.get("prelude digest")
    if digest is None:
        digest = _FILES["prelude digest"] = hashlib.sha256(
            "\0".join(_prelude()).encode()).hexdigest()
    return digest


def translation_unit(functions) -> str:
    """The whole C file that compiling ``functions`` (NodeFunction...) alone would build:
    what the compile report shows when asked for more than a node's own function."""
    return _unit(functions)


def _unit(functions, tail: str = "") -> str:
    """A translation unit defining ``functions`` (NodeFunction...): the runtime, the headers
    and support code they need, the functions, then ``tail``."""
    headers, support, seen = [], [], set()
    for fn in functions:
        headers += [h for h in fn.headers if h not in headers]
        if fn.support and fn.support not in support:
            support.append(fn.support)
    parts = [*_prelude(), *headers, *support]
    for fn in functions:
        if fn.symbol not in seen:
            seen.add(fn.symbol)
            parts.append(fn.text)
    parts.append(tail)
    return "\n".join(p for p in parts if p)


def _context(extra_flags=()) -> str:
    """What, besides a node function's text, its machine code depends on."""
    from tensorgraph.link.c.compiler import compile_flags

    return repr((compile_flags(extra_flags), config.c_key_hash()))


def _address(library, symbol: str) -> int:
    return ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value


# The glue library's source, split by job (glue.h says what each part holds), in the order
# they are joined: each part uses only what the parts before it define.
GLUE_PARTS = ("glue_workspace.h", "glue_profile.h", "glue_run.h", "glue_steps.h", "glue.h")


def glue_module(cached_only: bool = False):
    """The glue library (``glue.h``): the Python side of every graph, one per cache (None
    with ``cached_only`` if it would have to be compiled), its functions typed for ctypes."""
    import numpy

    from tensorgraph.link.c.cmodule import get_library

    source = "\n".join([f"/* tensorgraph glue library ({codegen_version()}) */",
                        "#define PY_SSIZE_T_CLEAN", "#include <Python.h>",
                        "#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION",
                        "#include <numpy/arrayobject.h>", _read("runtime.h"),
                        _read("graph_desc.h"), _read("pool.h"), *map(_read, GLUE_PARTS)])
    library = get_library([source], name_hint="glue", include_dirs=[numpy.get_include()],
                          extra_compile_args=["-fwrapv"], python_api=True,
                          runtime_version=codegen_version(), cached_only=cached_only)
    if library is not None and not getattr(library, "_tg_typed", False):
        from tensorgraph.link.c.malloc import tune_malloc

        _type_glue(library)
        tune_malloc()  # once per process, when the glue first loads
    return library


def _type_glue(library) -> None:
    """Declare the glue's C signatures to ctypes, and check that the compiler and ctypes lay
    ``tg_graph_desc`` out alike."""
    library.tg_make_workspace.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object,
                                          ctypes.py_object, ctypes.c_int, ctypes.c_int]
    library.tg_make_workspace.restype = ctypes.py_object
    library.tg_graph_desc_size.argtypes = []
    library.tg_graph_desc_size.restype = ctypes.c_size_t
    library.tg_pool_stats.argtypes = [ctypes.c_void_p]
    library.tg_pool_stats.restype = None
    library.tg_pool_configure.argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_int,
                                          ctypes.c_int, ctypes.c_int, ctypes.c_int]
    library.tg_pool_configure.restype = None
    from tensorgraph.link.c.graph_desc import GraphDesc

    compiled, parsed = library.tg_graph_desc_size(), ctypes.sizeof(GraphDesc)
    if compiled != parsed:
        raise RuntimeError(f"tg_graph_desc is {compiled} bytes in the glue library but {parsed} "
                           "in ctypes' layout of graph_desc.h: the two must agree")
    library._tg_typed = True


def pool_stats() -> dict:
    """Counters of the thread pool parallel regions run on (pool.h), for tests and benchmarks:
    ``workers`` started, ``jobs`` published to them, ``worker_blocks`` (blocks the workers ran,
    the rest ran on the calling thread) and ``alone`` (regions the caller ran by itself: the
    workers were absent lately, or another thread was using the pool)."""
    out = (ctypes.c_int64 * 4)()
    glue_module().tg_pool_stats(out)
    return dict(zip(("workers", "jobs", "worker_blocks", "alone"), out))


def configure_pool(glue) -> None:
    """Give the pool (pool.h) its tuning from the config (``pool__*`` flags)."""
    glue.tg_pool_configure(float(config.pool__spin_seconds), float(config.pool__late_seconds),
                           int(config.pool__absent_jobs), int(config.pool__pause_jobs),
                           int(config.pool__max_pause_jobs), int(bool(config.pool__move_cpus)))


class _Glue:
    """The glue module, for a caller about to build a library: taken from memory or the disk
    cache at once, or compiled in a thread meanwhile (the compilers run side by side)."""

    def __init__(self):
        from tensorgraph.link.c.compiler import in_the_background

        self.error = None
        self.module = glue_module(cached_only=True)
        self.thread = None
        # at the background's priority when its creator is there, or when compile tiers are
        # on: the quick tier's first results run without the glue (link/c/direct.py)
        self.background = in_the_background() or bool(config.compile__tiers)
        if self.module is None:
            import threading

            self.thread = threading.Thread(target=self._compile, name="tensorgraph-glue",
                                           daemon=True)
            self.thread.start()

    def _compile(self):
        from tensorgraph.link.c.compiler import in_background

        try:
            with in_background() if self.background else contextlib.nullcontext():
                self.module = glue_module()
        except BaseException as exc:  # noqa: BLE001 - raised again by result()
            self.error = exc

    def wait(self):
        if self.thread is not None:
            self.thread.join()

    def result(self):
        self.wait()
        if self.module is None and self.error is None:  # a forked child: the thread is gone
            self._compile()
        if self.error is not None:
            raise self.error
        return self.module


def _split(functions) -> list[list[int]]:
    """The positions of ``functions`` in each unit of a library.

    The compile work of a function is estimated by the length of its text, and of its support
    code up to ``SUPPORT_CHARS`` (a long support text is mostly helpers the node does not
    call; about 10000 characters of either took 0.15 s at -O3 on the reference machine,
    measured 2026-11-22 at 237050c).
    Functions sharing a support text longer than ``BUNDLE_CHARS`` stay in one unit (its
    helpers are compiled once); shorter support texts are repeated where needed. A library
    of less than ``SPLIT_CHARS`` of work is one unit (another compiler process costs about
    0.04 s of startup and header parsing, 2026-11-22 at 237050c);
    a bigger one is ``KERNEL_UNITS`` units of about
    equal work (largest bundles first, each to the unit with the least work so far)."""
    bundles: dict = {}
    for i, fn in enumerate(functions):
        shared = fn.support if len(fn.support) >= BUNDLE_CHARS else None
        bundles.setdefault(shared if shared is not None else ("own", i), []).append(i)

    def weight(members, supports=()):
        texts = sum(len(functions[i].text) for i in members)
        new = {functions[i].support for i in members} - set(supports)
        return texts + sum(min(len(text), SUPPORT_CHARS) for text in new)

    items = sorted(bundles.values(), key=lambda members: -weight(members))
    units = KERNEL_UNITS if weight(range(len(functions))) >= SPLIT_CHARS else 1
    groups = [([], set(), [0]) for _ in range(units)]
    for members in items:
        members_, supports, work = min(groups, key=lambda g: g[2][0] + weight(members, g[1]))
        work[0] += weight(members, supports)
        members_.extend(members)
        supports.update(functions[i].support for i in members)
    return [sorted(g[0]) for g in groups if g[0]]


def _comment(node) -> str:
    return c_comment(str(node)[:200])
