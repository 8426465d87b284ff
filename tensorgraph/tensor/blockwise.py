"""Batching: ``Blockwise`` and the rules ``vectorize_graph`` uses for the tensor ops.

``Blockwise(core_op, core_ndims)`` applies ``core_op`` to every item of a batch: each input
has ``core_ndims[i]`` core dimensions (what ``core_op`` takes) after any number of leading
batch dimensions, which broadcast against each other (static size 1 only, as elsewhere).
It is the batching rule of ops with no better one; its ``perform`` loops over the batch in
Python, calling the core op's ``perform`` (no C; an item that fails raises the same error
naming its batch index), its output shapes are the broadcast batch sizes followed by the core
op's ``infer_shape``, and its gradient is the core op's gradient graph, vectorized.

The rules registered here rebuild a node batched without a loop where the op allows it:
elementwise ops broadcast, ``DimShuffle``, reductions, arg-extrema and softmaxes shift their
axes past the batch dimensions, ``Dot`` becomes a batched ``matmul``; the shape, creation,
join, diagonal and indexing ops have theirs in ``tensorgraph.tensor.vectorize_rules``. Importing
``tensorgraph.tensor`` registers the rules here; ``vectorize_node`` loads the others before it
rebuilds a node (``tensorgraph.hooks.load_vectorize_rules``).
"""

from __future__ import annotations

import re

import numpy as np

from tensorgraph.gradient import DisconnectedType, NullType
from tensorgraph.graph.basic import Apply, Variable, graph_inputs
from tensorgraph.graph.op import Op
from tensorgraph.graph.replace import register_vectorize, vectorize_graph
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.dot import Dot, matmul
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.math import maximum
from tensorgraph.tensor.reduction import CAReduce, _ArgExtremum
from tensorgraph.tensor.reduction import sum as tsum
from tensorgraph.tensor.shape import with_props
from tensorgraph.tensor.special import _SoftmaxBase
from tensorgraph.tensor.type import TensorType

__all__ = ["Blockwise"]


def _signature_ndims(signature: str) -> tuple[int, ...]:
    """Input core ndims of a gufunc signature: ``'(m,n),(n)->(m)'`` gives (2, 1)."""
    inputs = signature.split("->")[0]
    return tuple(0 if not g.strip() else len(g.split(","))
                 for g in re.findall(r"\(([^)]*)\)", inputs))


def _batch_ndim(var, core_ndim) -> int:
    return 0 if core_ndim is None else var.type.ndim - core_ndim


class Blockwise(Op):
    """``core_op`` applied item by item over leading batch dimensions (see the module
    docstring). ``core_ndims`` gives each input's core ndim (``None`` for an input that is
    not a tensor, passed as it is); PyTensor's gufunc ``signature`` may be given instead."""

    __props__ = ("core_op", "core_ndims")

    def __init__(self, core_op, core_ndims=None, signature=None):
        if core_ndims is None:
            if signature is None:
                raise TypeError("Blockwise needs core_ndims (or a gufunc signature)")
            core_ndims = _signature_ndims(signature)
        if getattr(core_op, "destroy_map", None):
            raise ValueError(f"Blockwise: {core_op} overwrites its inputs; batch the version "
                             "that does not")
        self.core_op = core_op
        self.core_ndims = tuple(None if n is None else int(n) for n in core_ndims)

    def __str__(self):
        return f"Blockwise{{{self.core_op}}}"

    def _core_node(self, inputs) -> Apply:
        """The core op's node on one item: unbatched inputs as they are (constants stay
        constants), batched ones as placeholders of their core type."""
        core_inputs = []
        for var, nd in zip(inputs, self.core_ndims):
            b = _batch_ndim(var, nd)
            core_inputs.append(var if b == 0 else
                               TensorType(var.type.dtype, var.type.shape[b:])())
        return self.core_op.make_node(*core_inputs)

    def make_node(self, *inputs):
        if len(inputs) != len(self.core_ndims):
            raise TypeError(f"{self}: expected {len(self.core_ndims)} inputs, got {len(inputs)}")
        inputs = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in inputs]
        batch = []
        for k, (var, nd) in enumerate(zip(inputs, self.core_ndims)):
            if nd is None:
                continue
            if not isinstance(var.type, TensorType) or var.type.ndim < nd:
                raise TypeError(f"{self}: input {k} must be a tensor of at least {nd} "
                                f"dimensions, got {var} ({var.type})")
            batch.append(var.type.shape[:var.type.ndim - nd])
        core = self._core_node(inputs)
        for out in core.outputs:
            if not isinstance(out.type, TensorType):
                raise NotImplementedError(f"{self}: the core op's output {out} ({out.type}) is "
                                          "not a tensor; it cannot be batched")
        batch_shape = _broadcast_static(batch, str(self))
        return Apply(self, inputs, [TensorType(o.type.dtype, batch_shape + o.type.shape)()
                                    for o in core.outputs])

    def perform(self, node, inputs, output_storage):
        core = self._core_node(node.inputs)
        nb = len(node.outputs[0].type.shape) - core.outputs[0].type.ndim
        shapes = []
        for var, value, nd in zip(node.inputs, inputs, self.core_ndims):
            b = _batch_ndim(var, nd)
            shapes.append((var, (1,) * (nb - b) + np.shape(value)[:b], b))
        batch_shape = _broadcast_runtime(shapes, nb, str(self))
        results = [None] * len(core.outputs)
        for index in np.ndindex(*batch_shape):
            items = []
            for (var, padded, b), value in zip(shapes, inputs):
                if b == 0:
                    items.append(value)
                    continue
                pick = tuple(0 if s == 1 else i for i, s in zip(index[nb - b:], padded[nb - b:]))
                items.append(value[pick])
            cells = [[None] for _ in core.outputs]
            try:
                self.core_op.perform(core, items, cells)
            except Exception as exc:  # noqa: BLE001 - re-raised, same type, naming the item
                _reraise_at(exc, index)
            for k, (cell, out) in enumerate(zip(cells, core.outputs)):
                item = np.asarray(cell[0], dtype=out.type.dtype)
                if results[k] is None:
                    results[k] = np.empty(batch_shape + item.shape, dtype=item.dtype)
                elif results[k].shape[nb:] != item.shape:
                    raise ValueError(f"{self}: the core op gave outputs of different shapes "
                                     f"across the batch ({results[k].shape[nb:]} and "
                                     f"{item.shape} at batch index {index})")
                results[k][index] = item
        for k, (cell, out) in enumerate(zip(output_storage, node.outputs)):
            if results[k] is None:     # an empty batch: the core shape from the type
                core_shape = tuple(0 if s is None else s for s in core.outputs[k].type.shape)
                results[k] = np.zeros(batch_shape + core_shape, dtype=out.type.dtype)
            cell[0] = results[k]

    def connection_pattern(self, node):
        return self.core_op.connection_pattern(self._core_node(node.inputs))

    def infer_shape(self, fgraph, node, input_shapes):
        """The batch sizes broadcast from the inputs' leading sizes, then the core op's
        output shapes computed from the inputs' core sizes. A core op whose sizes depend on
        the values of a batched input (``Eye`` of a batch of sizes) has no such shape: the
        caller falls back to reading the computed output's shape."""
        core = self._core_node(node.inputs)
        core_shapes = [None if nd is None else tuple(s[len(s) - nd:])
                       for s, nd in zip(input_shapes, self.core_ndims)]
        out_core = self.core_op.infer_shape(fgraph, core, core_shapes)
        placeholders = {c for c, v in zip(core.inputs, node.inputs) if c is not v}
        sizes = [e for shape in out_core for e in shape if isinstance(e, Variable)]
        if placeholders and placeholders & set(graph_inputs(sizes)):
            raise NotImplementedError(f"{self}: the core op's output sizes depend on the values "
                                      "of a batched input")
        nb = node.outputs[0].type.ndim - core.outputs[0].type.ndim
        batch = []
        for d in range(nb):
            sizes = []
            for s, nd, var in zip(input_shapes, self.core_ndims, node.inputs):
                b = _batch_ndim(var, nd)
                dim = d - (nb - b)
                if nd is not None and dim >= 0 and var.type.shape[dim] != 1:
                    sizes.append(s[dim])
            static = node.outputs[0].type.shape[d]
            if static is not None:
                batch.append(static)
            else:
                size = sizes[0]
                for other in sizes[1:]:
                    size = maximum(size, other)   # each is 1 or the common size
                batch.append(size)
        return [tuple(batch) + tuple(shape) for shape in out_core]

    def L_op(self, inputs, outputs, output_grads):
        """The core op's gradient graph on one item, vectorized over the batch; inputs the
        batch broadcast get their gradient summed over the batch dimensions they lacked."""
        core = self._core_node(inputs)
        core_ograds = [o.type() for o in core.outputs]
        core_grads = self.core_op.L_op(list(core.inputs), list(core.outputs), core_ograds)
        replace = {c: b for c, b in zip(core.inputs, inputs) if c is not b}
        for c, b, g in zip(core.outputs, outputs, output_grads):
            replace[c] = b
        for c, g, out in zip(core_ograds, output_grads, outputs):
            # an integer output (pivots, indices) has no gradient: zeros of its own dtype
            special = isinstance(g.type, (DisconnectedType, NullType)) or \
                not out.type.dtype.startswith(("float", "complex"))
            replace[c] = out.zeros_like() if special else g
        grads = []
        for k, (g, var) in enumerate(zip(core_grads, inputs)):
            if isinstance(g.type, (DisconnectedType, NullType)):
                grads.append(g)
                continue
            batched = vectorize_graph(g, replace)
            extra = batched.type.ndim - var.type.ndim
            if extra > 0:
                batched = tsum(batched, axis=tuple(range(extra)))
            b = _batch_ndim(var, self.core_ndims[k])
            ones = [d for d in range(b) if var.type.shape[d] == 1 and batched.type.shape[d] != 1]
            if ones:
                batched = tsum(batched, axis=tuple(ones), keepdims=True)
            grads.append(batched)
        return grads


def _reraise_at(exc: Exception, index: tuple) -> None:
    """Raise ``exc`` again, same type, its message ending with the batch index of the item
    that failed ("... (at batch index 3)"), so that one bad matrix in a stack of a thousand
    is found; an item of no batch, or an exception that cannot be rebuilt from a message,
    is raised as it is."""
    if not index:
        raise exc
    where = index[0] if len(index) == 1 else index
    message = f"{exc} (at batch index {where})"
    try:
        new = type(exc)(message)
    except Exception:  # noqa: BLE001 - an unusual constructor keeps the original error
        new = None
    if new is None or str(new) != message:
        raise exc
    raise new from exc


def _broadcast_static(shapes, what: str) -> tuple:
    nb = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (nb - len(s)) + tuple(s) for s in shapes]
    result = []
    for d in range(nb):
        known = {s[d] for s in padded if s[d] is not None and s[d] != 1}
        if len(known) > 1:
            raise ValueError(f"{what}: batch dimension {d} has sizes {sorted(known)}; they "
                             "cannot be broadcast together")
        result.append(known.pop() if known else 1 if all(s[d] == 1 for s in padded) else None)
    return tuple(result)


def _broadcast_runtime(shapes, nb: int, what: str) -> tuple:
    result = []
    for d in range(nb):
        sizes = {padded[d] for _, padded, _ in shapes}
        big = sizes - {1}
        if len(big) > 1:
            raise ValueError(f"{what}: batch dimension {d} has sizes {sorted(big)} at run time")
        size = big.pop() if big else 1
        for var, padded, b in shapes:
            dim = d - (nb - b)
            if padded[d] == 1 and size != 1 and dim >= 0 and var.type.shape[dim] != 1:
                raise ValueError(f"{what}: {var} has size 1 in batch dimension {d} at run time "
                                 f"but its type {var.type} does not declare it broadcastable")
        result.append(size)
    return tuple(result)


# ----------------------------------------------------------------------------------------------
# Batching rules


def _batch_dims(node, inputs) -> list[int]:
    return [new.type.ndim - old.type.ndim if isinstance(old.type, TensorType) else 0
            for old, new in zip(node.inputs, inputs)]


@register_vectorize(None)
def _vectorize_with_blockwise(op, node, *inputs):
    """Any op: a Blockwise of it (non-tensor inputs must stay as they are)."""
    core_ndims = []
    for old, new in zip(node.inputs, inputs):
        if isinstance(old.type, TensorType):
            core_ndims.append(old.type.ndim)
        elif new is not old:
            raise NotImplementedError(f"vectorize_graph: cannot batch the input {old} "
                                      f"({old.type}) of {op}: it is not a tensor")
        else:
            core_ndims.append(None)
    return Blockwise(op, core_ndims).make_node(*inputs)


@register_vectorize(Blockwise)
def _vectorize_blockwise(op, node, *inputs):
    return op.make_node(*inputs)


@register_vectorize(Elemwise)
def _vectorize_elemwise(op, node, *inputs):
    """Elemwise broadcasts: inputs with fewer batch dimensions get size-1 ones in front."""
    if op.inplace_pattern:
        op = Elemwise(op.scalar_op)
    return op.make_node(*inputs)


@register_vectorize(DimShuffle)
def _vectorize_dimshuffle(op, node, x):
    (b,) = _batch_dims(node, [x])
    order = tuple(range(b)) + tuple(d if d == "x" else d + b for d in op.new_order)
    return DimShuffle(x.type.ndim, order).make_node(x)


@register_vectorize(CAReduce)
@register_vectorize(_ArgExtremum)
def _vectorize_reduction(op, node, x):
    (b,) = _batch_dims(node, [x])
    return with_props(op, axis=tuple(a + b for a in op.axis)).make_node(x)


@register_vectorize(_SoftmaxBase)
def _vectorize_softmax(op, node, x):
    """The axes shifted past the batch dimensions; a softmax over every element
    (``axis=None``) becomes one over all the core axes."""
    (b,) = _batch_dims(node, [x])
    if b == 0:
        return op.make_node(x)
    core = range(node.inputs[0].type.ndim) if op.axis is None else op.axis
    return with_props(op, axis=tuple(a + b for a in core)).make_node(x)


@register_vectorize(Dot)
def _vectorize_dot(op, node, a, b):
    """A batched matmul: vectors become rows (first operand) or columns (second), batch
    dimensions are aligned, and the added axes are dropped again."""
    (old_a, old_b), (ba, bb) = node.inputs, _batch_dims(node, [a, b])
    if ba == bb == 0:
        return op.make_node(a, b)
    if old_a.type.ndim == 0 or old_b.type.ndim == 0:
        return _vectorize_with_blockwise(op, node, a, b)
    nb = max(ba, bb)
    a = a if old_a.type.ndim == 2 else a.dimshuffle(*range(ba), "x", ba)
    b = b if old_b.type.ndim == 2 else b.dimshuffle(*range(bb + 1), "x")
    a = a.dimshuffle(*["x"] * (nb - ba), *range(a.type.ndim))
    b = b.dimshuffle(*["x"] * (nb - bb), *range(b.type.ndim))
    out = matmul(a, b)
    drop = [nb] if old_a.type.ndim == 1 else []
    drop += [nb + 1] if old_b.type.ndim == 1 else []
    if drop:
        out = out.dimshuffle(*[d for d in range(out.type.ndim) if d not in drop])
    return [out]

