"""Lazy conditional: ``ifelse(condition, then_branch, else_branch)``.

Unlike ``tt.switch`` (elementwise, both sides always computed), ``ifelse`` picks a whole branch
from a scalar condition and, under the Python VM, computes *only* that branch: its thunk is
lazy (``thunk.lazy = True``). Called first, it asks for the condition; called again, it asks
for the taken branch's values; called a last time, it copies them to its outputs. The branch
not taken is never run.

Several values can share one condition: ``ifelse(c, [a, b], [x, y])`` returns ``[a|x, b|y]``
from a single ``IfElse`` node with two outputs.
"""

from __future__ import annotations

import numpy as np

import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.op import Op, node_thunk
from tensorgraph.rewriting.basic import NodeRewriter
from tensorgraph.rewriting.db import WalkerDB
from tensorgraph.rewriting.destroyhandler import DestroyHandler
from tensorgraph.rewriting.optdb import optdb
from tensorgraph.tensor.type import TensorType

__all__ = ["IfElse", "ifelse"]


class IfElse(Op):
    """``n_outs`` outputs chosen by a scalar condition between two lists of inputs.

    Node inputs: ``[condition, *then_values, *else_values]``. With ``as_view`` the outputs are
    the chosen inputs themselves (declared in ``view_map``); otherwise they are copies, so an
    output never aliases a value the caller might change.
    """

    __props__ = ("n_outs", "as_view", "name")

    def __init__(self, n_outs: int, as_view: bool = False, name: str | None = None):
        if n_outs < 1:
            raise ValueError(f"IfElse needs at least one output, got n_outs={n_outs}")
        self.n_outs = n_outs
        self.as_view = as_view
        self.name = name
        if as_view:
            self.view_map = {k: [1 + k, 1 + n_outs + k] for k in range(n_outs)}

    def __str__(self):
        # PyTensor's spelling: if{}, if{name}, if{name,inplace}
        parts = [self.name] if self.name else []
        if self.as_view:
            parts.append("inplace")
        return f"if{{{','.join(parts)}}}"

    def branch_inputs(self, node):
        """``(then inputs, else inputs)`` of one of this op's nodes (how printing finds the
        two sides of a conditional without importing this module)."""
        n = self.n_outs
        return node.inputs[1:1 + n], node.inputs[1 + n:]

    def make_node(self, condition, *branches):
        if len(branches) != 2 * self.n_outs:
            raise TypeError(f"{self}: expected a condition and {2 * self.n_outs} branch values, "
                            f"got {len(branches)}")
        condition = _as_condition(condition)
        branches = [b if isinstance(b, Variable) else tt.as_tensor_variable(b) for b in branches]
        then_vals, else_vals = branches[:self.n_outs], branches[self.n_outs:]
        outputs = [_output_type(t, e, k)() for k, (t, e) in enumerate(zip(then_vals, else_vals))]
        return Apply(self, [condition, *then_vals, *else_vals], outputs)

    def perform(self, node, inputs, output_storage):
        chosen = inputs[1:1 + self.n_outs] if inputs[0] else inputs[1 + self.n_outs:]
        for cell, value in zip(output_storage, chosen):
            cell[0] = value if self.as_view else _copy(value)

    def make_py_thunk(self, node, storage_map, compute_map):
        """A lazy thunk: returns the input indices it still needs, or ``None`` once done."""
        n = self.n_outs
        input_cells = [storage_map[v] for v in node.inputs]
        input_flags = [compute_map[v] for v in node.inputs]
        output_cells = [storage_map[v] for v in node.outputs]
        output_flags = [compute_map[v] for v in node.outputs]
        as_view = self.as_view

        def thunk():
            if not input_flags[0][0]:
                return [0]
            first = 1 if input_cells[0][0] else 1 + n
            missing = [first + k for k in range(n) if not input_flags[first + k][0]]
            if missing:
                return missing
            for k in range(n):
                value = input_cells[first + k][0]
                output_cells[k][0] = value if as_view else _copy(value)
                output_flags[k][0] = True
            return None

        return node_thunk(thunk, node, input_cells, output_cells, "py", lazy=True)

    def infer_shape(self, fgraph, node, input_shapes):
        n = self.n_outs
        condition = node.inputs[0]
        shapes = []
        for then_shape, else_shape in zip(input_shapes[1:1 + n], input_shapes[1 + n:]):
            dims = []
            for t, e in zip(then_shape, else_shape):
                dims.append(t if _same_dim(t, e) else ifelse(condition, t, e))
            shapes.append(tuple(dims))
        return shapes

    def connection_pattern(self, node):
        n = self.n_outs
        pattern = [[True] * n]
        for k in range(2 * n):
            pattern.append([j == k % n for j in range(n)])
        return pattern

    def L_op(self, inputs, outputs, output_grads):
        """The gradient flows into the branch taken: ``ifelse(c, g, 0)`` / ``ifelse(c, 0, g)``."""
        condition = inputs[0]
        n = self.n_outs
        then_inputs, else_inputs = inputs[1:1 + n], inputs[1 + n:]
        grads = [g if _is_tensor_grad(g) else tt.zeros_like(out)
                 for g, out in zip(output_grads, outputs)]
        # the branch not taken gets zeros shaped like its own inputs (the branches may differ
        # in shape: only the taken one has the outputs' shape)
        then_zeros = [tt.zeros_like(v, dtype=g.dtype) for v, g in zip(then_inputs, grads)]
        else_zeros = [tt.zeros_like(v, dtype=g.dtype) for v, g in zip(else_inputs, grads)]
        chooser = IfElse(n, name=f"grad_{self.name}" if self.name else None)
        then_grads = _as_list(chooser(condition, *grads, *then_zeros))
        else_grads = _as_list(chooser(condition, *else_zeros, *grads))
        condition_grad = tt.zeros_like(condition, dtype=config.floatX)
        return [condition_grad, *then_grads, *else_grads]

    def R_op(self, inputs, eval_points):
        """The taken branch's tangent (the condition only picks a branch: it has none)."""
        if all(p is None for p in eval_points[1:]):
            return [None] * self.n_outs
        points = [p if p is not None else tt.zeros_like(v)
                  for v, p in zip(inputs[1:], eval_points[1:])]
        return _as_list(IfElse(self.n_outs)(inputs[0], *points))


def _is_tensor_grad(g) -> bool:
    return hasattr(g.type, "dtype")


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _same_dim(a, b) -> bool:
    """Whether two symbolic (or constant) sizes are known to be equal."""
    if a is b:
        return True
    a_data, b_data = getattr(a, "data", a), getattr(b, "data", b)
    if isinstance(a_data, (int, np.integer, np.ndarray)) and isinstance(b_data, (int, np.integer, np.ndarray)):
        return np.ndim(a_data) == 0 and np.ndim(b_data) == 0 and int(a_data) == int(b_data)
    return False


def _as_condition(condition) -> Variable:
    condition = tt.as_tensor_variable(condition)
    if condition.type.ndim != 0:
        raise TypeError(f"ifelse: The condition argument must be a scalar, got {condition} of "
                        f"type {condition.type}; use tt.switch for an elementwise choice")
    if condition.type.dtype.startswith("complex"):
        raise TypeError(f"ifelse: the condition must be a real or boolean scalar, got "
                        f"{condition.type}")
    return condition


def _output_type(then_value, else_value, k: int):
    """The type of output ``k``: the branches' type, with static sizes where they agree."""
    t, e = then_value.type, else_value.type
    if t == e:
        return t
    if (isinstance(t, TensorType) and isinstance(e, TensorType) and t.dtype == e.dtype
            and t.ndim == e.ndim):
        return TensorType(t.dtype, tuple(a if a == b else None for a, b in zip(t.shape, e.shape)))
    raise TypeError(f"IfElse: output {k} has a then branch of type {t} but an else branch of "
                    f"type {e}; the branches must have the same dtype and ndim")


def _unify_dtypes(then_value, else_value, k: int):
    """Cast one branch value of output ``k`` when the other's dtype holds it safely (int32 and
    float64 give float64), as PyTensor does; refuse other mixes with a clear error."""
    t, e = then_value.type, else_value.type
    if not (isinstance(t, TensorType) and isinstance(e, TensorType)):
        return then_value, else_value
    if t.ndim != e.ndim:
        raise TypeError(f"ifelse: output {k}: the then branch is {t.ndim}-d ({t}) but the else "
                        f"branch is {e.ndim}-d ({e}); both branches must have the same ndim")
    if t.dtype == e.dtype:
        return then_value, else_value
    if np.can_cast(e.dtype, t.dtype, "safe"):
        return then_value, tt.cast(else_value, t.dtype)
    if np.can_cast(t.dtype, e.dtype, "safe"):
        return tt.cast(then_value, e.dtype), else_value
    raise TypeError(f"ifelse: output {k}: the then branch is {t.dtype} and the else branch "
                    f"{e.dtype}; neither casts safely to the other, cast one explicitly")


def ifelse(condition, then_branch, else_branch, name: str | None = None):
    """``then_branch`` if the scalar ``condition`` is true, else ``else_branch``; lazily.

    ``then_branch`` and ``else_branch`` are a value each or lists of the same length (the
    result is then a list). Only the taken branch is computed by the Python VM.
    """
    single = not isinstance(then_branch, (list, tuple))
    if single != (not isinstance(else_branch, (list, tuple))):
        raise TypeError("ifelse: then_branch and else_branch must both be single values or both "
                        "lists")
    then_list = [then_branch] if single else list(then_branch)
    else_list = [else_branch] if single else list(else_branch)
    if len(then_list) != len(else_list):
        raise ValueError(f"ifelse: the then branch has {len(then_list)} values but the else "
                         f"branch has {len(else_list)}")
    if not then_list:
        raise ValueError("ifelse: the branches are empty")
    pairs = []
    for k, (t, e) in enumerate(zip(then_list, else_list)):
        t = t if isinstance(t, Variable) else tt.as_tensor_variable(t)
        e = e if isinstance(e, Variable) else tt.as_tensor_variable(e)
        pairs.append(_unify_dtypes(t, e, k))
    op = IfElse(len(pairs), name=name)
    outs = _as_list(op(condition, *[t for t, _ in pairs], *[e for _, e in pairs]))
    return outs[0] if single else outs


def _register_view_rewrite():
    """FAST_RUN makes each ``IfElse`` hand out the chosen input itself (``as_view``) instead of
    a copy, as PyTensor does. It runs after the inplace phase, so it never takes an inplace
    opportunity from the nodes reading the ``ifelse`` (their destroy handler vetoes a view
    of a value they overwrite: that ``IfElse`` keeps copying)."""
    class IfElseAsView(NodeRewriter):
        name = "ifelse_as_view"

        def tracks(self):
            return [IfElse]

        def add_requirements(self, fgraph):
            DestroyHandler.attach_to(fgraph)

        def transform(self, fgraph, node):
            op = node.op
            if op.as_view:
                return None
            return _as_list(IfElse(op.n_outs, as_view=True, name=op.name)(*node.inputs))

    phase = WalkerDB(order="in_to_out")
    optdb.register("ifelse_view", phase, "fast_run", "inplace", position=7.5)
    phase.register("ifelse_as_view", IfElseAsView(), "fast_run", "inplace")


_register_view_rewrite()
