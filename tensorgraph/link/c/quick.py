"""The quick tier's thunks: the optimized C's bits without compiling the graph.

The quick VM (``CLinker.make_tiered``) runs at once the node functions already in the module
cache. A node whose function is not there cannot run numpy's ``perform`` instead: numpy's
exp, tanh, pow ... are other implementations than the ``tg_scalar.h`` functions the C calls
(1-3 ulp apart), and its pairwise sums another order than the C reductions, so a function's
result would change when it switches tiers. So the quick tier computes such a node with C
that gives the optimized node's bits and is *graph-independent*, hence cached once per machine:

* an ``Elemwise`` node is split into *pieces*, one per scalar op of its (fused) scalar
  graph: ``Elemwise(op)`` over contiguous 1-d operands (or static scalars: the Composite's
  constants and the node's static-size-1 inputs), each value kept in its dtype between
  pieces. A fused loop computes the same scalar expressions on the same values (float16
  rounded after each op in both), so the bits agree, and ``exp`` of float32 serves every
  graph that calls it;
* another node with C (reductions, the softmax family, products, ...) runs its own node
  function: its order of operations is the optimized one by construction, and that
  function is then found by the optimized tier instead of compiled again;
* a node whose C implementation declares its ``perform`` exact (``perform_exact``: copies,
  indexing, shapes, integer results) and a node without C keep ``perform``.

What is missing of those functions is compiled at once, before the quick VM exists
(``QuickCode``; the pieces and the own functions as two libraries side by side), at -O1
(``quick_flags``): once per machine for a piece, once per graph for an own function. The
optimization level changes no bit: the flags keep IEEE semantics (``-ffp-contract=off``, no
reassociation, so reductions keep their order), every lane calls the same math function
(``tg_scalar.h``), and the C has no undefined behaviour (integers wrap by ``-fwrapv``,
float -> integer conversions are defined: ``tg_f2i_*``). The -O1 functions are kept apart
from the optimized build's (``CGraph(extra_flags=...)``), which compiles its own at -O3 in
the background (the cost is measured in docs/architecture.md, "Compile tiers").
"""

from __future__ import annotations

import threading

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.op import node_thunk
from tensorgraph.link.c.codegen import CGraph, c_implementation, node_c_code
from tensorgraph.link.c.compiler import CompileError
from tensorgraph.link.c.direct import DirectCall
from tensorgraph.scalar.composite import Composite
from tensorgraph.tensor.elemwise import Elemwise, _runtime_shape
from tensorgraph.tensor.type import TensorType

__all__ = ["QuickCode", "quick_flags"]


def quick_flags() -> tuple[str, ...]:
    """The flags the quick tier compiles with after the usual ones: ``-O1``, which took 40%
    less of gcc's time than -O3 on the seed program's quick libraries and gives the same
    bits (module docstring). None when the configuration chooses the level itself
    (``cmodule__debug``, ``cmodule__remove_gxx_opt``, an ``-O`` in ``gcc__cxxflags``)."""
    if config.cmodule__debug or config.cmodule__remove_gxx_opt or any(
            flag.startswith("-O") for flag in config.gcc__cxxflags.split()):
        return ()
    return ("-O1",)


def _static_scalar(var) -> bool:
    return all(s == 1 for s in var.type.shape)


def _has_c(node) -> bool:
    return node_c_code(node, "node", [f"i{k}" for k in range(len(node.inputs))],
                       [f"o{k}" for k in range(len(node.outputs))],
                       {"ctx": "ctx", "fail": "", "define": lambda _text: None}) is not None


def _scalar_steps(scalar_op, inputs):
    """(steps, output values) of ``scalar_op``: its scalar nodes in order, as (op, input
    values, output values), where a value is one of ``inputs`` (one per input of
    ``scalar_op``), a Constant, or an output of an earlier step (Composites inside
    Composites are opened too)."""
    if not isinstance(scalar_op, Composite):
        outs = [object() for _ in range(scalar_op.nout)]
        return [(scalar_op, list(inputs), outs)], outs
    values = dict(zip(scalar_op.inputs, inputs))
    steps = []
    for node in scalar_op.nodes:
        args = [v if isinstance(v, Constant) else values[v] for v in node.inputs]
        inner, outs = _scalar_steps(node.op, args)
        steps += inner
        values.update(zip(node.outputs, outs))
    return steps, [v if isinstance(v, Constant) else values[v] for v in scalar_op.outputs]


class QuickCode:
    """The quick thunks of one graph's nodes (see the module docstring).

    ``QuickCode(nodes, skip)`` prepares every node not in ``skip`` (those run their cached
    C); ``thunk(node, storage_map, compute_map, call)`` is the node's quick thunk, or None
    when it keeps ``perform``; ``call`` comes from ``new_call()``, once per VM (a call's
    arrays are its own, so calls in spare VMs never meet: docs/architecture.md, "Threads
    and re-entry").
    """

    def __init__(self, nodes, skip=()):
        self._plans: dict = {}  # node -> ("pieces", steps, outputs) or ("own", clone)
        outputs = {"own": [], "pieces": []}
        for node in nodes:
            if node in skip or not _has_c(node):
                continue
            if getattr(c_implementation(node.op), "perform_exact", False):
                continue
            plan = self._pieces(node) if isinstance(node.op, Elemwise) else None
            if plan is None:  # its own node function, on fresh inputs of the same types
                clone = node.op.make_node(*[v.clone() if isinstance(v, Constant) else v.type()
                                            for v in node.inputs])
                plan = ("own", clone)
                outputs["own"] += clone.outputs
            else:
                outputs["pieces"] += [piece.outputs[0] for _, piece, _ in plan[1]]
            self._plans[node] = plan
        self._graphs = _link(outputs)
        # a library that does not compile (a node's own C is broken): the optimized tier
        # will not run either (its job reports the error), so perform cannot disagree
        self._plans = {n: p for n, p in self._plans.items() if self._graphs.get(p[0])}

    @property
    def compiled(self) -> bool:
        """Whether making this compiled some node function of the graph itself (its own
        node functions were in no cache; the optimized build finds them only when
        ``quick_flags()`` is empty: otherwise it compiles its own at its flags)."""
        own = self._graphs.get("own")
        return own is not None and own.found == "compiled"

    def new_call(self) -> dict:
        """{"own" / "pieces": ``call(k, *inputs)``} of the quick node functions, called
        without the glue library (link/c/direct.py: the first call does not wait for its
        compile); each call has storage of its own."""
        from tensorgraph.link.c.linkers import c_error

        return {kind: DirectCall(cgraph, c_error)
                for kind, cgraph in self._graphs.items() if cgraph is not None}

    def _pieces(self, node):
        """("pieces", [(values in, piece node, values out)], (input values, output values)) of
        an Elemwise node, or None when some scalar op cannot be a piece (then the node runs
        its own function)."""
        leaves = [object() for _ in node.inputs]
        steps, outs = _scalar_steps(node.op.scalar_op, leaves)
        scalar = {leaf: _static_scalar(v) for leaf, v in zip(leaves, node.inputs)}
        dtype = {leaf: v.type.dtype for leaf, v in zip(leaves, node.inputs)}
        pieces = []
        for op, args, results in steps:
            if len(results) != 1:
                return None
            flags, types = [], []
            for a in args:
                if isinstance(a, Constant):
                    flags.append(True)
                    types.append(a.type.dtype)
                else:
                    flags.append(scalar[a])
                    types.append(dtype[a])
            variables = [TensorType(d, shape=(1,) if s else (None,))()
                         for d, s in zip(types, flags)]
            try:
                piece = Elemwise(op).make_node(*variables)
            except (TypeError, ValueError, NotImplementedError):
                return None
            if not _has_c(piece):
                return None
            (out,) = results
            scalar[out] = all(flags)
            dtype[out] = piece.outputs[0].type.dtype
            pieces.append((args, piece, results))
        if [dtype.get(o) for o in outs if not isinstance(o, Constant)] != [
                v.type.dtype for o, v in zip(outs, node.outputs) if not isinstance(o, Constant)]:
            return None
        return "pieces", pieces, (leaves, outs)

    def thunk(self, node, storage_map, compute_map, call):
        plan = self._plans.get(node)
        if plan is None:
            return None
        input_cells = [storage_map[v] for v in node.inputs]
        output_cells = [storage_map[v] for v in node.outputs]
        output_flags = [compute_map[v] for v in node.outputs]
        call = call[plan[0]]
        if plan[0] == "own":
            k = self._graphs["own"].index[plan[1]]

            def compute(inputs):
                return call(k, *inputs)
        else:
            compute = self._elemwise(node, plan, call)

        def thunk():
            values = compute([cell[0] for cell in input_cells])
            for cell, value in zip(output_cells, values):
                cell[0] = value
            for flag in output_flags:
                flag[0] = True

        return node_thunk(thunk, node, input_cells, output_cells, "quick")

    def _elemwise(self, node, plan, call):
        """The computation of an Elemwise node by its pieces (see the module docstring)."""
        _, pieces, (leaves, outs) = plan
        steps = [(args, self._graphs["pieces"].index[piece], results)
                 for args, piece, results in pieces]
        scalar_in = [_static_scalar(v) for v in node.inputs]
        out_dtypes = [v.type.dtype for v in node.outputs]
        destroyed = dict(node.op.inplace_pattern)

        def compute(inputs):
            shape = _runtime_shape(node, inputs)  # perform's checks and errors
            values = {}
            for leaf, value, s in zip(leaves, inputs, scalar_in):
                value = np.asarray(value)
                values[leaf] = (value.reshape(1) if s else
                                np.ascontiguousarray(np.broadcast_to(value, shape)).reshape(-1))
            for args, k, (out,) in steps:
                operands = [np.asarray(a.data, dtype=a.type.dtype).reshape(1)
                            if isinstance(a, Constant) else values[a] for a in args]
                (values[out],) = call(k, *operands)
            results, fresh = [], {id(values[out]) for _, _, (out,) in steps}
            for o, (out, dtype) in enumerate(zip(outs, out_dtypes)):
                value = (np.asarray(out.data, dtype=dtype) if isinstance(out, Constant)
                         else values[out])
                if id(value) in fresh and value.size == int(np.prod(shape)):
                    fresh.discard(id(value))  # a piece's own result: no copy needed
                    value = value.reshape(shape)
                else:  # an input, a constant, a scalar, or an output given twice
                    value = np.array(np.broadcast_to(value.reshape(-1)[0] if value.size == 1
                                                     else value.reshape(shape), shape),
                                     dtype=dtype)
                if o in destroyed:
                    target = inputs[destroyed[o]]
                    np.copyto(target, value, casting="unsafe")
                    value = target
                results.append(value)
            return results

        return compute


def _link(outputs: dict) -> dict:
    """{kind: CGraph} of the node functions computing ``outputs[kind]``, found in memory or
    on disk, else compiled now, the two libraries side by side (None for a kind whose library
    does not compile)."""
    graphs, errors = {}, []

    def build(kind):
        try:
            cgraph = CGraph(FunctionGraph(outputs=outputs[kind], clone=False),
                            whole_graph=False, extra_flags=quick_flags(),
                            flat_only=kind == "pieces")  # their operands are contiguous
            cgraph.compile(wait_glue=False)
            graphs[kind] = cgraph
        except CompileError:
            graphs[kind] = None
        except BaseException as exc:  # noqa: BLE001 - raised below, in the caller's thread
            errors.append(exc)

    kinds = [kind for kind in ("own", "pieces") if outputs[kind]]
    helper = threading.Thread(target=build, args=(kinds[0],)) if len(kinds) == 2 else None
    if helper is not None:
        helper.start()
    for kind in kinds[1 if helper else 0:]:
        build(kind)
    if helper is not None:
        helper.join()
    if errors:
        raise errors[0]
    return graphs

