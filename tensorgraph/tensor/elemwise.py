"""``Elemwise`` (a scalar op applied over broadcast arrays) and ``DimShuffle``.

Broadcasting follows numpy, with one rule made explicit by the types: only dimensions whose
static size is 1 (``tt.row``, ``tt.col``, constants, ``x.dimshuffle('x', 0)``) are broadcast.
A dimension of unknown size that turns out to be 1 at run time while the others are larger is
an error naming the input, because its gradient would otherwise have the wrong shape. Inputs
with fewer dimensions are padded on the left, as numpy does.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.scalar.basic import DISCRETE, ScalarOp, ScalarType
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.type import TensorType


class DimShuffle(Op):
    """Reorder dimensions, add size-1 dimensions ('x') and drop size-1 dimensions.

    ``DimShuffle(2, (1, 'x', 0))`` turns an (a, b) matrix into an (b, 1, a) tensor. A dropped
    dimension must have size 1: a static size other than 1 is a TypeError when the node is
    built; an unknown static size is checked when the node runs (a ValueError naming the
    dimension and its size), as PyTensor does. The output is a view of the input.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order):
        if not isinstance(input_ndim, (int, np.integer)) or isinstance(input_ndim, bool):
            raise TypeError(f"DimShuffle: input_ndim must be an integer, got "
                            f"{type(input_ndim).__name__}: {input_ndim!r}")
        new_order = tuple(new_order)
        kept = [d for d in new_order if d != "x"]
        for d in kept:
            if not isinstance(d, (int, np.integer)) or not 0 <= d < input_ndim:
                raise ValueError(f"dimshuffle: {d!r} is not a dimension of a {input_ndim}-d input "
                                 "(use 0..ndim-1 or 'x')")
        if len(set(kept)) != len(kept):
            raise ValueError(f"dimshuffle: pattern {new_order} repeats a dimension; a dimension "
                             "may not appear twice")
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(d if d == "x" else int(d) for d in new_order)
        self.dropped = tuple(d for d in range(input_ndim) if d not in kept)
        self.kept = tuple(kept)

    def __str__(self):
        return f"DimShuffle{{{','.join(str(d) for d in self.new_order)}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(f"{self} expects a {self.input_ndim}-d input, got {x} with ndim {x.ndim}")
        for d in self.dropped:
            if x.type.shape[d] not in (1, None):
                raise TypeError(
                    f"{self}: dimension {d} of {x} ({x.type}) is dropped but has static size "
                    f"{x.type.shape[d]}; only size-1 dimensions can be dropped")
        shape = tuple(1 if d == "x" else x.type.shape[d] for d in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        for d in self.dropped:
            if x.shape[d] != 1:
                raise ValueError(self.dropped_size_message(d, x.shape[d]))
        res = x.transpose(self.kept + self.dropped)
        res = res.reshape(res.shape[:len(self.kept)])
        out_shape = tuple(1 if d == "x" else res.shape[self.kept.index(d)] for d in self.new_order)
        output_storage[0][0] = res.reshape(out_shape)

    def dropped_size_message(self, d: int, size=None) -> str:
        """The run-time error of a dropped dimension whose size is not 1 (the back ends say
        the same; ``size`` may be a printf format)."""
        got = "" if size is None else f", but it has size {size}"
        return f"{self}: dimension {d} of the input is dropped, so it must have size 1{got}"

    def infer_shape(self, fgraph, node, input_shapes):
        (ishape,) = input_shapes
        return [tuple(1 if d == "x" else ishape[d] for d in self.new_order)]

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        (gz,) = output_grads
        gz = as_tensor_variable(gz)
        # drop the added dimensions, undo the permutation, then put back the dropped ones
        no_x = [i for i, d in enumerate(self.new_order) if d != "x"]
        g = gz.dimshuffle(*no_x) if len(no_x) != gz.ndim else gz
        inverse = []
        for d in range(self.input_ndim):
            inverse.append("x" if d in self.dropped else self.kept.index(d))
        if x.dtype in DISCRETE:
            from tensorgraph.tensor.creation import zeros_like

            return [zeros_like(x, dtype=config.floatX)]
        return [g.dimshuffle(*inverse)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0])]


def outer_operands(x, y):
    """``x`` and ``y`` with dimensions added so that a binary elementwise op of them is their
    outer operation (``ufunc.outer``): ``x`` gets ``y.ndim`` trailing size-1 dimensions, ``y``
    ``x.ndim`` leading ones."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    nx, ny = x.ndim, y.ndim
    return (x.dimshuffle(*range(nx), *("x",) * ny) if ny else x,
            y.dimshuffle(*("x",) * nx, *range(ny)) if nx else y)


def _broadcast_static(op, inputs):
    """Static output shape of broadcasting ``inputs`` (same ndim), or an error naming them."""
    shape = []
    for d in range(inputs[0].ndim):
        sizes = [i.type.shape[d] for i in inputs]
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            shapes = ", ".join(f"{i} {i.type.shape}" for i in inputs)
            static = ", ".join(str(i.type.shape) for i in inputs)
            raise ValueError(f"{op}: Incompatible Elemwise input shapes [{static}]: the inputs "
                             f"cannot be broadcast together, dimension {d} has sizes "
                             f"{sorted(known)} ({shapes})")
        if known:
            shape.append(known.pop())
        elif all(s == 1 for s in sizes):
            shape.append(1)
        else:
            shape.append(None)
    return tuple(shape)


class Elemwise(Op):
    """Apply ``scalar_op`` elementwise over inputs broadcast to a common shape.

    ``inplace_pattern`` ({output: input}) lets an output overwrite an input of its shape and
    dtype (set by the inplace rewrites, never by users). ``name``, when given, is how the op
    prints (it is not a prop: two ops differing only by name are equal).
    """

    __props__ = ("scalar_op", "inplace_pattern")
    name = None

    def __init__(self, scalar_op: ScalarOp, inplace_pattern=None, name: str | None = None):
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(sorted((inplace_pattern or {}).items()))
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern}
        if name is not None:
            self.name = str(name)

    def __eq__(self, other):
        if not isinstance(other, Op):
            # a tensor function applying one Elemwise op (tt.add, tt.exp: ``elemwise_op``)
            # equals that op, as PyTensor's functions are the ops: node.op == tt.exp
            other = getattr(other, "elemwise_op", None)
            if other is None:
                return NotImplemented
        return super().__eq__(other)

    __hash__ = Op.__hash__

    def outer(self, x, y):
        """numpy's ``ufunc.outer`` for a binary op: ``op(x[..., None...], y[None..., ...])``,
        the op of every pair of an element of ``x`` and one of ``y``; the result has the
        dimensions of ``x`` followed by those of ``y``."""
        if self.scalar_op.nin not in (-1, 2):
            raise TypeError(f"{self}.outer needs a binary op; {self.scalar_op} takes "
                            f"{self.scalar_op.nin} inputs")
        return self(*outer_operands(x, y))

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.inplace_pattern:
            return f"Elemwise{{{self.scalar_op},inplace}}"
        return f"Elemwise{{{self.scalar_op}}}"

    def make_node(self, *inputs):
        inputs = [as_tensor_variable(i) for i in inputs]
        if not inputs:
            raise TypeError(f"{self} needs at least one input")
        dtypes = output_dtypes(self.scalar_op, inputs)
        ndim = max(i.ndim for i in inputs)
        inputs = [i if i.ndim == ndim else
                  DimShuffle(i.ndim, ("x",) * (ndim - i.ndim) + tuple(range(i.ndim)))(i)
                  for i in inputs]
        shape = _broadcast_static(self, inputs)
        for o, i in self.inplace_pattern:
            if inputs[i].type.shape != shape or inputs[i].dtype != dtypes[o]:
                raise TypeError(f"{self}: output {o} cannot overwrite input {i} ({inputs[i].type})")
        return Apply(self, inputs, [TensorType(d, shape)() for d in dtypes])

    def perform(self, node, inputs, output_storage):
        out_shape = _runtime_shape(node, inputs)
        # IEEE results without numpy's RuntimeWarnings (log(0) is -inf, 0/0 nan), as the C
        # kernels give them: the py and C linkers behave alike, and NanGuardMode is the tool
        # that finds and names where a nan or inf appears
        with np.errstate(all="ignore"):
            results = self.scalar_op.impl(*inputs)
        if len(node.outputs) == 1:
            results = (results,)
        destroyed = dict(self.inplace_pattern)
        for o, (cell, out, value) in enumerate(zip(output_storage, node.outputs, results)):
            if o in destroyed:
                target = inputs[destroyed[o]]
                np.copyto(target, value, casting="unsafe")
                cell[0] = target
                continue
            value = np.asarray(value, dtype=out.type.dtype)
            if value.shape != out_shape:  # an op ignoring one of its inputs (e.g. second(a, b))
                value = np.broadcast_to(value, out_shape).copy()
            elif any(isinstance(i, np.ndarray) and np.may_share_memory(value, i) for i in inputs):
                # an op returning an input as it is (second(a, b) where b has a's shape): the
                # output would alias an input the node does not declare as viewed
                value = value.copy()
            cell[0] = value

    def infer_shape(self, fgraph, node, input_shapes):
        """One int64 scalar variable per dimension (static sizes as constants, as PyTensor's
        callers expect variables), the same for every output."""
        out = []
        for d, static in enumerate(node.outputs[0].type.shape):
            if static is not None:
                out.append(constant(static, dtype="int64"))
                continue
            candidates = [s[d] for i, s in zip(node.inputs, input_shapes) if i.type.shape[d] != 1]
            # every input broadcast (static 1) there: 1, whatever static size an output type
            # built by a subclass's make_node leaves unknown
            out.append(candidates[0] if candidates else constant(1, dtype="int64"))
        return [tuple(out)] * len(node.outputs)

    def L_op(self, inputs, outputs, output_grads):
        from tensorgraph.gradient import DisconnectedType, NullType, disconnected_type
        from tensorgraph.tensor.creation import zeros_like
        from tensorgraph.tensor.math import cast

        grads = self.scalar_op.L_op(inputs, outputs, output_grads)
        result = []
        for x, g in zip(inputs, grads):
            if x.dtype in DISCRETE:
                result.append(zeros_like(x, dtype=config.floatX))
                continue
            if g is None:  # the scalar op says: no gradient path through this input
                result.append(disconnected_type())
                continue
            if isinstance(getattr(g, "type", None), (NullType, DisconnectedType)):
                result.append(g)  # grad_not_implemented / grad_undefined: grad() says so
                continue
            g = as_tensor_variable(g)
            g = _sum_to_input(g, x)
            if g.dtype != x.dtype:
                g = cast(g, x.dtype)
            result.append(g)
        return result


def output_dtypes(scalar_op, inputs) -> tuple[str, ...]:
    """The output dtypes of ``scalar_op`` on tensors of these dtypes: its dtype rule, or, for
    a scalar op written for PyTensor with its own ``make_node``, the outputs of the scalar
    node that ``make_node`` builds from scalars of these dtypes (as PyTensor's Elemwise asks)."""
    if type(scalar_op).make_node is ScalarOp.make_node:
        return scalar_op.output_dtypes(*[i.dtype for i in inputs])
    node = scalar_op.make_node(*[ScalarType(i.dtype)() for i in inputs])
    return tuple(out.type.dtype for out in node.outputs)


def _runtime_shape(node, inputs):
    """The broadcast shape of this call's inputs; refuses to broadcast non-static-1 dims.
    The messages are those of the C kernels (``link/c/ops/elemwise.py``), with the pair of
    sizes in PyTensor's form ``(input[0].shape[1] = 4, input[1].shape[1] = 3)``."""
    shapes = [np.shape(v) for v in inputs]
    try:
        out_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{node.op}: inputs of shapes [{', '.join(map(str, shapes))}] cannot "
                         "be broadcast together; only dimensions of static size 1 broadcast. "
                         f"Input dimension mismatch: {_mismatch(shapes)}") from None
    for k, (var, shape) in enumerate(zip(node.inputs, shapes)):
        for d, size in enumerate(shape):
            if size == 1 and out_shape[d] != 1 and var.type.shape[d] != 1:
                j = next(j for j, other in enumerate(shapes) if other[d] != 1)
                raise ValueError(
                    f"Runtime broadcasting not allowed: input {var} has size 1 in dimension "
                    f"{d} at run time but its "
                    f"type {var.type} does not declare that dimension broadcastable (size 1) "
                    f"{_size_pair(shapes, d, j, k)}; "
                    f"input shapes: {shapes}. Declare it, e.g. with tt.row/tt.col, "
                    "shape=(1, None), or x.dimshuffle('x', 0)")
    return out_shape


def _size_pair(shapes, d, j, k) -> str:
    """``(input[j].shape[d] = a, input[k].shape[d] = b)``, the lower index first."""
    j, k = sorted((j, k))
    return f"(input[{j}].shape[{d}] = {shapes[j][d]}, input[{k}].shape[{d}] = {shapes[k][d]})"


def _mismatch(shapes) -> str:
    """The first pair of sizes (other than 1) that differ in a dimension, as ``_size_pair``."""
    for d in range(max(len(s) for s in shapes)):
        sized = [(k, s[d]) for k, s in enumerate(shapes) if len(s) > d and s[d] != 1]
        for k, size in sized[1:]:
            if size != sized[0][1]:
                return _size_pair(shapes, d, sized[0][0], k)
    return "(no pair of sizes found)"


def _sum_to_input(g, x):
    """Sum ``g`` over the dimensions where ``x`` was broadcast, so it has ``x``'s shape."""
    axes = [d for d in range(x.ndim)
            if x.type.shape[d] == 1 and g.type.shape[d] != 1]
    if not axes:
        return g
    from tensorgraph.tensor.reduction import sum as tsum

    return tsum(g, axis=axes, keepdims=True)
