"""``Op``: the public extension point for new operations.

An Op says how to build a node (``make_node``), how to compute it with numpy (``perform``, the
reference every other backend is checked against), how to differentiate it (``grad`` or
``L_op``), how to infer its output shapes (``infer_shape``), and which inputs it overwrites or
aliases (``destroy_map`` / ``view_map``). Ops are compared by their ``__props__``.

A minimal Op, as one could write in a notebook cell::

    import numpy as np
    import tensorgraph.tensor as tt
    from tensorgraph.graph import Apply, Op

    class Double(Op):
        __props__ = ()

        def make_node(self, x):
            x = tt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            (x,) = inputs
            output_storage[0][0] = x * 2

        def grad(self, inputs, output_grads):
            return [output_grads[0] * 2]

        def infer_shape(self, fgraph, node, input_shapes):
            return input_shapes

    double = Double()
    y = double(tt.vector("x"))

The C backend adds optional hooks on top of these (see ``tensorgraph.link``); an Op without C
code still runs through ``perform``.
"""

from __future__ import annotations

import pdb
import warnings

from tensorgraph import hooks
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.errors import reraise_with_node
from tensorgraph.graph.utils import TestValueError


def node_thunk(fn, node, input_cells, output_cells, kind: str, lazy: bool = False):
    """``fn`` made the thunk of ``node``: the attributes every VM, monitor, profiler and
    stepper reads (its storage cells, its node, whether it is lazy, and ``kind``: 'py',
    'c' or 'quick', what computes it)."""
    fn.inputs = input_cells
    fn.outputs = output_cells
    fn.node = node
    fn.lazy = lazy
    fn.kind = kind
    return fn

class Op:
    """Base class of all operations.

    Class attributes
    ----------------
    __props__ : tuple of str or None
        Names of the attributes that define the op. Two ops of the same class with equal props
        are equal and hash alike (so identical computations can be merged). ``None`` (the
        default) compares by identity.
    destroy_map : dict {output index: [input index]}
        Inputs the op overwrites (inplace ops).
    view_map : dict {output index: [input index]}
        Outputs that may alias (be views of) inputs.
    default_output : int or None
        Which output ``op(...)`` returns for multi-output ops.
    _output_type_depends_on_input_value : bool
        True for ops whose output type follows from the *values* of inputs known at build
        time, not only their types (``reshape(x, (100 // n, n))`` with ``n`` a constant has a
        static shape): ``clone_replace(..., rebuild_strict=False)`` then remakes the node even
        where the new inputs have the old types (PyTensor's name, so ported ops keep it).
    """

    __props__: tuple[str, ...] | None = None
    destroy_map: dict = {}
    view_map: dict = {}
    default_output: int | None = None
    _output_type_depends_on_input_value = False
    #: True where ``c_code`` methods are the op's C (``tensorgraph.link.c.op.COp``)
    _c_from_methods = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "c_code" in cls.__dict__ and not cls._c_from_methods:
            # an op's C comes from tensorgraph.link.c.ops' table, never from a plain Op's
            # methods: say so at once instead of silently running perform (code ported from
            # Theano, whose Op had c_code)
            warnings.warn(f"{cls.__qualname__} defines c_code but is a plain Op, so its C is "
                          "never used (perform runs): subclass tensorgraph.link.c.op.COp, or "
                          "register a CImplementation for it (docs/extending.md)", stacklevel=2)

    # -- identity --------------------------------------------------------------------------

    def _props(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__props__)

    def _props_dict(self) -> dict:
        """The props by name (PyTensor's name): ``type(op)(**{**op._props_dict(), "k": v})``
        rebuilds the op with one prop changed, as code written for PyTensor does."""
        if self.__props__ is None:
            raise ValueError(f"{type(self).__name__} has no __props__: it is compared by "
                             "identity and has no props to list")
        return dict(zip(self.__props__, self._props()))

    def __eq__(self, other):
        if self.__props__ is None:
            return self is other
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        if self.__props__ is None:
            return id(self)
        return hash((type(self), self._props()))

    def __str__(self):
        if self.__props__:
            args = ", ".join(str(v) for v in self._props())
            return f"{type(self).__name__}{{{args}}}"
        return type(self).__name__

    __repr__ = __str__

    # -- building nodes --------------------------------------------------------------------

    def make_node(self, *inputs) -> Apply:
        """Check and convert ``inputs``, and return an Apply with fresh output variables."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_node")

    def __call__(self, *inputs, **kwargs):
        """Build a node and return its output(s); computes test values when they are on."""
        node = self.make_node(*inputs, **kwargs)
        if config.compute_test_value != "off":
            compute_test_values(node, config.compute_test_value)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return node.outputs

    # -- computing -------------------------------------------------------------------------

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        """Compute the outputs with numpy: ``output_storage[i][0] = value_of_output_i``.

        ``output_storage[i][0]`` may hold the previous call's value, which the op may reuse as
        a buffer if it has the right shape and dtype (or it must be replaced).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement perform")

    def error_headline(self, node: Apply, input_values: list) -> str | None:
        """The first line of an error raised while running ``node`` on ``input_values``, in
        the names the user wrote, or None to keep the error's own message. Ops that rewrites
        put in place of the user's (``Gemv`` for ``tt.dot(W, x) + b``) say it so: their own
        parameter names (y, A, x) mean nothing to the user (``graph/errors.py`` asks)."""
        return None

    def make_py_thunk(self, node: Apply, storage_map: dict, compute_map: dict):
        """A no-argument callable running ``perform`` on the node's storage cells.

        Storage cells are one-element lists shared with the linker; ``thunk.inputs`` and
        ``thunk.outputs`` expose them so monitors can read values (as in Theano).
        """
        input_cells = [storage_map[v] for v in node.inputs]
        output_cells = [storage_map[v] for v in node.outputs]
        output_flags = [compute_map[v] for v in node.outputs]
        perform = self.perform

        def thunk():
            perform(node, [cell[0] for cell in input_cells], output_cells)
            for flag in output_flags:
                flag[0] = True

        return node_thunk(thunk, node, input_cells, output_cells, "py")

    def do_constant_folding(self, fgraph, node) -> bool:
        """Whether a node of this op with all-constant inputs may be replaced by its value."""
        return True

    # -- differentiation -------------------------------------------------------------------

    def grad(self, inputs: list[Variable], output_grads: list[Variable]) -> list[Variable]:
        """Symbolic gradients of a scalar cost w.r.t. each input, given those of each output."""
        raise NotImplementedError(f"{self} has no gradient defined")

    def L_op(self, inputs, outputs, output_grads):
        """Like ``grad`` but also receives the node's outputs (to reuse, e.g. exp's output).

        An op written for PyTensor 3 defines ``pullback(inputs, outputs, output_grads)``
        instead (the same thing under its new name); it is used when present."""
        if defines_pullback(self):
            return self.pullback(inputs, outputs, output_grads)
        return self.grad(inputs, output_grads)

    def pullback(self, inputs, outputs, output_grads):
        """PyTensor 3's name of ``L_op``: every op answers to both, whichever one it defines
        (code written for PyTensor 3 calls ``op.pullback(...)`` directly)."""
        return self.L_op(inputs, outputs, output_grads)

    def R_op(self, inputs, eval_points):
        """Forward-mode: the directional derivative of each output along ``eval_points``."""
        raise NotImplementedError(f"{self} has no R_op (forward-mode derivative) defined")

    def connection_pattern(self, node) -> list[list[bool]]:
        """[input][output]: whether output depends on input (differentiably or not)."""
        return [[True] * len(node.outputs) for _ in node.inputs]


class ValueIdentityOp(Op):
    """An op whose output has its input's value (a copy, a print, ...): the same type and
    shape, gradients passed through, and never folded into a constant (it exists for what it
    does when it runs)."""

    def make_node(self, x):
        if not isinstance(x, Variable):
            x = hooks.as_variable(x)
        return Apply(self, [x], [x.type()])

    def infer_shape(self, fgraph, node, input_shapes):
        return list(input_shapes)

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)

    def R_op(self, inputs, eval_points):
        return list(eval_points)

    def do_constant_folding(self, fgraph, node) -> bool:
        return False


def defines_pullback(op) -> bool:
    """Whether ``op``'s class (or the op itself) defines its own ``pullback`` rather than
    inheriting ``Op.pullback``, which only forwards to ``L_op``."""
    own = getattr(op, "pullback", None)
    return own is not None and getattr(own, "__func__", None) is not Op.pullback


class HasInnerGraph:
    """Mixin of ops that hold an inner graph as ``self.fgraph`` (OpFromGraph, jacobian's
    IndexLoop): ``inner_inputs`` and ``inner_outputs`` are its inputs and outputs. Printing
    and the graph view look inside any op with an ``fgraph``; this class is what PyTensor code
    tests ``isinstance`` against."""

    @property
    def inner_inputs(self):
        return self.fgraph.inputs

    @property
    def inner_outputs(self):
        return self.fgraph.outputs


# ----------------------------------------------------------------------------------------------
# Test values


def _input_test_value(var: Variable, mode: str):
    try:
        return var.get_test_value()
    except TestValueError as exc:
        if mode == "raise":
            raise TestValueError(f"{exc} (config.compute_test_value='raise')") from None
        if mode == "warn":
            warnings.warn(f"{exc}; test values of the nodes using it are skipped", stacklevel=5)
        elif mode == "pdb":
            pdb.set_trace()
        return _MISSING


_MISSING = object()


def compute_test_values(node: Apply, mode: str) -> None:
    """Run ``node.op.perform`` on the inputs' test values and attach the outputs' test values.

    A missing input test value is ignored, warned about or raised as ``mode`` says; an error in
    ``perform`` is raised at once, with the input shapes, so the user sees the bad expression.
    """
    values = [_input_test_value(v, mode) for v in node.inputs]
    if any(v is _MISSING for v in values):
        return
    storage = [[None] for _ in node.outputs]
    try:
        node.op.perform(node, values, storage)
        for out, cell in zip(node.outputs, storage):
            out.tag.test_value = cell[0]
    except Exception as exc:
        reraise_with_node(exc, node, values)
