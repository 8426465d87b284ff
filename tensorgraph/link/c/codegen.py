"""From a FunctionGraph to one C module: a function per node, tables, and the Python glue.

``CGraph(fgraph, whole_graph=...)`` asks every node for its C (``op.c_code``, see
docs/c_backend.md). The nodes that have C become functions
``static int tg_node_<k>(tg_ctx *tg_context, tg_array *tg_vars)`` reading and writing the
workspace's arrays ``tg_vars[slot]`` (one slot per variable). With
``whole_graph`` (every node has C, none is lazy) the module also gets the loop over all nodes and
the entry points that run a whole call in C (``glue.h``): a loop over the table of node
functions, or with ``straight=True`` (linker 'c') straight-line direct calls of every node in
one function, which the compiler may inline. The source pastes ``runtime.h``,
``tg_scalar.h`` and ``glue.h`` in, so a module's cache key covers them.

``CGraph.workspace(gc, report)`` makes the per-function state and returns its entry points.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

from tensorgraph.graph.basic import Constant
from tensorgraph.link.c import dtypes as cd

_HERE = os.path.dirname(__file__)
_FILES: dict[str, str] = {}

#: version of the generated glue; part of every module's key through the source text
CODEGEN_VERSION = 4
#: translation units of a big graph library, compiled at the same time (2 cores on the
#: reference machine), and the estimated size of a library's C worth splitting (see _split)
KERNEL_UNITS = 2
SPLIT_CHARS = 16000


def _read(name: str) -> str:
    text = _FILES.get(name)
    if text is None:
        with open(os.path.join(_HERE, name), encoding="utf-8") as f:
            text = _FILES[name] = f.read()
    return text


def _libmvec() -> bool:
    """Whether glibc's vector math library can be linked (x86-64 glibc only)."""
    if "mvec" not in _FILES:
        import platform

        ok = platform.machine() in ("x86_64", "AMD64") and bool(ctypes.util.find_library("mvec"))
        _FILES["mvec"] = "1" if ok else ""
    return bool(_FILES["mvec"])


def var_has_c(var) -> bool:
    """Whether a variable can live in a ``tg_array`` slot."""
    from tensorgraph.tensor.type import TensorType

    t = var.type
    return isinstance(t, TensorType) and cd.has_c(t.dtype) and t.ndim <= 16


def node_c_code(node, name: str, inputs, outputs, sub) -> str | None:
    """The node's C fragment, or None when its op gives none for it."""
    c_code = getattr(node.op, "c_code", None)
    if c_code is None or getattr(node.op, "lazy", False):
        return None
    if not all(var_has_c(v) for v in node.inputs + node.outputs):
        return None
    try:
        return c_code(node, name, inputs, outputs, sub)
    except NotImplementedError:
        return None


class CGraph:
    """The compiled C of a graph (see the module docstring).

    Attributes
    ----------
    nodes : the toposorted nodes of the fgraph
    c_nodes : the nodes that have C, in order; ``index[node]`` is ``k`` of ``tg_node_<k>``
    whole_graph : whether the module can run the whole graph
    module : the imported cffi module (``module.lib.tg_make``)
    found : where ``compile()`` found the module: "memory", "disk" or "compiled" (None before)
    """

    def __init__(self, fgraph, nodes=None, *, whole_graph: bool = True, straight: bool = False):
        from tensorgraph.configdefaults import config

        self.fgraph = fgraph
        self.nodes = list(nodes) if nodes is not None else fgraph.toposort()
        self.slot: dict = {}
        self.constants: list = []
        sub_base = {"ctx": "tg_context", "fail": "goto tg_fail;", "openmp": bool(config.openmp),
                    "openmp_minsize": int(config.openmp_elemwise_minsize)}
        self.c_nodes, self.index, bodies = [], {}, []
        for node in self.nodes:
            if not all(var_has_c(v) for v in node.inputs + node.outputs):
                continue
            k = len(self.c_nodes)
            slots = [self._slot(v) for v in node.inputs + node.outputs]
            ins = [f"(&tg_vars[{s}])" for s in slots[:len(node.inputs)]]
            outs = [f"(&tg_vars[{s}])" for s in slots[len(node.inputs):]]
            code = node_c_code(node, f"node{k}", ins, outs, dict(sub_base, id=str(k)))
            if code is None:
                continue
            self.c_nodes.append(node)
            self.index[node] = k
            bodies.append((node, code))
        self.whole_graph = (whole_graph and len(self.c_nodes) == len(self.nodes)
                            and all(var_has_c(v) for v in fgraph.inputs + fgraph.outputs))
        self.straight = straight and self.whole_graph
        if self.whole_graph:
            for v in fgraph.inputs + fgraph.outputs:
                self._slot(v)
        self.units, self.build = self._source(bodies)
        self.source = "\n".join(self.units)
        self.library = self.glue = self.graph = None
        self.found = None

    def _slot(self, var) -> int:
        s = self.slot.get(var)
        if s is None:
            s = self.slot[var] = len(self.slot)
            if isinstance(var, Constant):
                self.constants.append(var)
        return s

    # -- source ---------------------------------------------------------------------------

    def _source(self, bodies):
        """(the library's translation units, build arguments): see the module docstring."""
        build = {"libraries": [], "library_dirs": [], "include_dirs": [], "extra_compile_args": []}
        unversioned = []
        for node, _ in bodies:
            op = node.op
            for key, method in (("libraries", "c_libraries"), ("library_dirs", "c_lib_dirs"),
                                ("include_dirs", "c_header_dirs"),
                                ("extra_compile_args", "c_compile_args")):
                for item in _call(op, method):
                    if item not in build[key]:
                        build[key].append(item)
            version = _call(op, "c_code_cache_version", default=())
            if not version and str(op) not in unversioned:
                unversioned.append(str(op))
        import numpy

        build["include_dirs"].append(numpy.get_include())
        build["extra_compile_args"].append("-fwrapv")
        if _libmvec():
            build["libraries"].append("mvec")
        build["unversioned"] = unversioned
        groups = _split(bodies)
        units = [self._kernel_unit([(k, node, code) for k, (node, code) in enumerate(bodies)
                                    if k in group], self._tables(len(bodies)) if i == 0 else "")
                 for i, group in enumerate(groups)]
        return units, build

    def _kernel_unit(self, numbered, tables: str) -> str:
        """A translation unit defining the node functions ``numbered`` ((k, node, code)...):
        the runtime, the ops' headers and support code these nodes need, then ``tables``."""
        headers, support = [], []
        for _, node, _ in numbered:
            for h in _call(node.op, "c_headers"):
                line = f"#include {h}" if h.startswith(("<", '"')) else f'#include "{h}"'
                if line not in headers:
                    headers.append(line)
            text = _call(node.op, "c_support_code", node, default="")
            if text and text not in support:
                support.append(text)
        parts = [f"/* tensorgraph generated graph library (codegen {CODEGEN_VERSION}) */",
                 "#define TG_USE_LIBMVEC 1" if _libmvec() else "",
                 _read("runtime.h"), _read("tg_scalar.h"), *headers, *support]
        for k, node, code in numbered:
            parts.append(f"/* node {k}: {_comment(node)} */\n"
                         f"TG_KERNEL int tg_node_{k}(tg_ctx *tg_context, tg_array *tg_vars)\n{{\n"
                         f"    (void)tg_context; (void)tg_vars;\n    {{\n{code}\n    }}\n    return 0;\n"
                         f"tg_fail: __attribute__((unused));\n    return -1;\n}}\n")
        parts.append(tables)
        return "\n".join(p for p in parts if p)

    def _tables(self, nnodes: int) -> str:
        """The graph's ``tg_graph`` (runtime.h) and ``tg_graph_desc()``, which returns it: what
        the glue module needs to know of the graph."""
        nvars = len(self.slot)
        vars_by_slot = sorted(self.slot, key=self.slot.__getitem__)
        t = [f"TG_KERNEL int tg_node_{k}(tg_ctx *, tg_array *);" for k in range(nnodes)]
        t.append(_table("int", "tg_var_typenum", [cd.typenum(v.type.dtype) for v in vars_by_slot]))
        t.append(_table("int", "tg_var_ndim", [v.type.ndim for v in vars_by_slot]))
        t.append(_table("unsigned char", "tg_var_const",
                        [int(isinstance(v, Constant)) for v in vars_by_slot]))
        graph_io = set(self.fgraph.inputs) | set(self.fgraph.outputs)
        t.append(_table("unsigned char", "tg_var_graph_io",
                        [int(v in graph_io) for v in vars_by_slot]))
        static = ["{" + ", ".join(str(-1 if s is None else s) for s in v.type.shape) + "}"
                  if v.type.ndim else "{-1}" for v in vars_by_slot]
        t.append(f"static const int64_t tg_var_static[{nvars + 1}][TG_MAXDIM] = "
                 f"{{{', '.join(static + ['{-1}'])}}};")
        t.append(f"static int (*const tg_node_fn[{nnodes + 1}])(tg_ctx *, tg_array *) = "
                 f"{{{', '.join([f'tg_node_{k}' for k in range(nnodes)] + ['NULL'])}}};")
        for kind in ("in", "out"):
            offsets, idx = [0], []
            for node in self.c_nodes:
                idx += [self.slot[v] for v in (node.inputs if kind == "in" else node.outputs)]
                offsets.append(len(idx))
            t.append(_table("int", f"tg_node_{kind}_off", offsets))
            t.append(_table("int", f"tg_node_{kind}_idx", idx))
        t.append(_table("int", "tg_const_slot", [self.slot[c] for c in self.constants]))
        fg = self.fgraph
        whole = self.whole_graph
        t.append(_table("int", "tg_graph_in", [self.slot[v] for v in fg.inputs] if whole else []))
        t.append(_table("int", "tg_graph_out",
                        [self.slot[v] for v in fg.outputs] if whole else []))
        offsets, idx = [0], []
        for frees in (self._free_schedule() if whole else []):
            idx += frees
            offsets.append(len(idx))
        t.append(_table("int", "tg_free_off", offsets))
        t.append(_table("int", "tg_free_idx", idx))
        straight = "NULL"
        if self.straight:
            t.append("#define TG_STRAIGHT_NODES " +
                     " ".join(f"TG_STEP({k})" for k in range(nnodes)))
            t.append("/* linker 'c': the nodes as straight-line direct calls */\n"
                     "#define TG_STEP(k) ctx->errmsg[0] = 0; "
                     "if (tg_node_##k(ctx, vars) != 0) { *failed = k; return -1; }\n"
                     "static int tg_straight(tg_ctx *ctx, tg_array *vars, int *failed)\n"
                     "{\n    TG_STRAIGHT_NODES\n    return 0;\n}")
            straight = "tg_straight"
        counts = (f"{nvars}, {nnodes}, {len(self.constants)}, {int(whole)}, "
                  f"{len(fg.inputs) if whole else 0}, {len(fg.outputs) if whole else 0}")
        t.append(f"static const tg_graph tg_the_graph = {{TG_GRAPH_ABI, {counts},\n"
                 "    tg_var_typenum, tg_var_ndim, tg_var_const, tg_var_graph_io, tg_var_static,\n"
                 "    tg_node_fn, tg_node_in_off, tg_node_in_idx, tg_node_out_off, tg_node_out_idx,\n"
                 f"    tg_const_slot, tg_graph_in, tg_graph_out, tg_free_off, tg_free_idx, {straight}}};\n"
                 "const tg_graph *tg_graph_desc(void) { return &tg_the_graph; }")
        return "\n".join(t)

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

    def compile(self):
        """Compile (or fetch from the cache) the graph's library, and the glue module (the
        first time: in a second thread, so that its compiler runs next to the library's)."""
        from concurrent.futures import ThreadPoolExecutor

        from tensorgraph.link.c.cmodule import get_library

        build = dict(self.build)
        unversioned = build.pop("unversioned")
        with ThreadPoolExecutor(max_workers=1) as pool:
            glue = pool.submit(glue_module)
            self.library = get_library(
                self.units, name_hint="graph", unversioned=unversioned, origin=self.fgraph,
                runtime_version=f"codegen{CODEGEN_VERSION}", found=self._record_found, **build)
            self.glue = glue.result()
        desc = self.library.tg_graph_desc
        desc.restype = ctypes.c_void_p
        self.graph = desc()
        return self.library

    def _record_found(self, where: str) -> None:
        self.found = where

    def workspace(self, gc: bool, report) -> dict:
        """A fresh workspace (buffers of every variable) and its entry points: ``node_call``
        and, for whole graphs, ``run_all``, ``call``, ``call_trusted``, ``configure``.

        ``report(k, message, inputs, whole)`` is called when node ``k`` fails; it must raise.
        """
        if self.library is None:
            self.compile()
        spec = (tuple(c.data for c in self.constants), report, bool(gc), 0)
        out = []
        if self.glue.lib.tg_make(self.graph, id(spec), id(out)) != 0 or not out:
            raise RuntimeError("could not set up the C workspace of a compiled graph (see the "
                               "error printed above)")
        return out[0]


def glue_module():
    """The glue module (``glue.h``): the Python side of every graph, one per cache."""
    import numpy

    from tensorgraph.link.c.cmodule import get_module

    source = "\n".join([f"/* tensorgraph glue module (codegen {CODEGEN_VERSION}) */",
                        "#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION",
                        "#include <numpy/arrayobject.h>", _read("runtime.h"), _read("glue.h")])
    return get_module(
        source, "int tg_make(uintptr_t graph_addr, uintptr_t spec_addr, uintptr_t out_addr);",
        name_hint="glue", include_dirs=[numpy.get_include()],
        extra_compile_args=["-D_CFFI_NO_LIMITED_API", "-fwrapv"],
        runtime_version=f"codegen{CODEGEN_VERSION}")


def _call(op, method, *args, default=None):
    fn = getattr(op, method, None)
    if fn is None:
        return [] if default is None else default
    result = fn(*args)
    return result if result is not None else ([] if default is None else default)


def _split(bodies) -> list[set[int]]:
    """The node numbers of each kernel unit. The compile work of a node is estimated by the
    length of its code plus the support code it brings into its unit; a library with less
    than ``SPLIT_CHARS`` of it is one unit (another compiler process costs about 0.03 s of
    startup and header parsing), a bigger one ``KERNEL_UNITS`` units of about equal work, so
    their compilers finish at about the same time."""
    if not bodies:
        return []
    supports = [_call(node.op, "c_support_code", node, default="") for node, _ in bodies]
    total = sum(len(code) for _, code in bodies) + sum(len(s) for s in set(supports))
    groups = [[set(), set(), 0] for _ in range(KERNEL_UNITS if total >= SPLIT_CHARS else 1)]
    for k in sorted(range(len(bodies)), key=lambda k: -len(bodies[k][1]) - len(supports[k])):
        code, support = bodies[k][1], supports[k]

        def cost(group):
            return group[2] + len(code) + (len(support) if support not in group[1] else 0)

        best = min(groups, key=cost)
        best[2] = cost(best)
        best[0].add(k)
        best[1].add(support)
    return [g[0] for g in groups if g[0]]


def _table(ctype: str, name: str, values) -> str:
    values = list(values) + [0]  # never empty
    return f"static const {ctype} {name}[{len(values)}] = {{{', '.join(map(str, values))}}};"


def _comment(node) -> str:
    return str(node).replace("*/", "* /")[:200]
