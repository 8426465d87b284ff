"""The nodes of a symbolic graph: ``Variable``, ``Constant`` and ``Apply``.

A graph is bipartite: a ``Variable`` is a typed value (an input, a constant, or the output of an
``Apply``); an ``Apply`` is one application of an ``Op`` to input variables producing output
variables. ``var.owner`` is the Apply that computes ``var`` (``None`` for graph inputs and
constants) and ``var.index`` its position among that Apply's outputs.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.utils import TestValueError, ValidatingScratchpad, Scratchpad, record_trace

if TYPE_CHECKING:  # pragma: no cover
    from tensorgraph.graph.op import Op
    from tensorgraph.graph.type import Type

_variable_ids = itertools.count()


class Variable:
    """A symbolic value of a given ``Type``.

    Attributes
    ----------
    type : Type
        What values this variable can hold (e.g. a float32 matrix).
    owner : Apply or None
        The node computing this variable, ``None`` for inputs and constants.
    index : int or None
        Which output of ``owner`` this is.
    name : str or None
        A user-facing name used by printing, errors and keyword arguments of compiled functions.
    tag : Scratchpad
        Free annotations; ``tag.test_value`` is validated by ``type.filter``.
    """

    def __init__(self, type: Type, owner: Apply | None = None, index: int | None = None,
                 name: str | None = None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = ValidatingScratchpad("test_value", type.filter)
        self.auto_name = f"auto_{next(_variable_ids)}"

    def clone(self, name: str | None = None) -> Variable:
        """A new ownerless variable of the same type, name and tag (tag copied, not shared)."""
        cp = self.__class__(self.type, None, None, self.name if name is None else name)
        cp.tag = self.tag.copy()
        return cp

    def get_test_value(self):
        """The value attached with ``tag.test_value`` (constants and shared variables have one
        implicitly); raises ``TestValueError`` naming the variable when there is none."""
        if not hasattr(self.tag, "test_value"):
            raise TestValueError(f"{self} has no test value; set it with `{self}.tag.test_value = ...`")
        return self.tag.test_value

    def get_parents(self):
        return [self.owner] if self.owner is not None else []

    def eval(self, inputs_to_values=None, **kwargs):
        """Compile (once per set of inputs and options, then cached) and run a function
        computing this variable.

        ``inputs_to_values`` maps input variables, or their names, to values; other keyword
        arguments go to ``function`` (``mode=``, as in PyTensor).
        """
        from tensorgraph import hooks

        inputs, values, named = [], [], None
        for key, value in (inputs_to_values or {}).items():
            if isinstance(key, str):
                if named is None:
                    named = {v.name: v for v in graph_inputs([self]) if v.name is not None}
                if key not in named:
                    raise TypeError(f"eval: {self} has no input named {key!r}; known: {sorted(named)}")
                key = named[key]
            inputs.append(key)
            values.append(value)
        cache = self.__dict__.setdefault("_eval_cache", {})
        kwargs.setdefault("on_unused_input", "ignore")
        try:
            signature = (tuple(inputs), tuple(sorted(kwargs.items())))
            hash(signature)
        except TypeError:           # an unhashable option (a Mode object): compile each time
            return hooks.compile_function(inputs, self, **kwargs)(*values)
        if signature not in cache:
            cache[signature] = hooks.compile_function(inputs, self, **kwargs)
        return cache[signature](*values)

    def dprint(self, **kwargs):
        """``debugprint(self, **kwargs)``: the graph computing this variable, as text (PyTensor's
        method; ``file="str"`` returns the text)."""
        from tensorgraph.printing import debugprint

        return debugprint(self, **kwargs)

    def __str__(self):
        text = self._label()
        if hasattr(self.tag, "test_value"):
            if config.print_test_value:
                return f"{text}\n{self.tag.test_value!r}"
        return text

    def _label(self) -> str:
        """The variable's name, else where it comes from (``Elemwise{add}.out``)."""
        if self.name is not None:
            return self.name
        if self.owner is not None:
            if len(self.owner.outputs) == 1:
                return f"{self.owner.op}.out"
            return f"{self.owner.op}.{self.index}"
        return f"<{self.type}>"

    __repr__ = __str__


class NominalVariable(Variable):
    """An input variable identified by ``(id, type)`` alone: ``NominalVariable(1, t)`` twice is
    the same object. Inner graphs written with nominal inputs (numbered 0, 1, ...) compare and
    hash equal when they compute the same thing, whatever variables they were built from, which
    is what makes two ops holding such graphs interchangeable (as in PyTensor)."""

    _instances: dict = {}
    _classes: dict = {}

    def __new__(cls, id, typ, name: str | None = None):
        key = (id, typ)
        existing = NominalVariable._instances.get(key)
        if existing is not None:
            return existing
        # the variable class of the type (TensorVariable for a TensorType: operators, dtype)
        base = type(typ.make_variable())
        if base is Variable or issubclass(base, NominalVariable):
            kind = NominalVariable
        else:
            kind = NominalVariable._classes.get(base)
            if kind is None:
                kind = type(f"Nominal{base.__name__}", (NominalVariable, base), {})
                NominalVariable._classes[base] = kind
        obj = Variable.__new__(kind)
        NominalVariable._instances[key] = obj
        return obj

    def __init__(self, id, typ, name: str | None = None):
        if getattr(self, "_nominal_ready", False):
            return
        super().__init__(typ, None, None, name if name is not None else f"*{id}-{typ}")
        self.id = id
        self._nominal_ready = True

    def clone(self, name: str | None = None) -> NominalVariable:
        return self                       # one object per (id, type): a clone is itself

    def __reduce__(self):
        return (NominalVariable, (self.id, self.type, self.name))


class Constant(Variable):
    """A variable with a fixed value, stored in ``data`` (already filtered by the type)."""

    def __init__(self, type: Type, data, name: str | None = None):
        super().__init__(type, None, None, name)
        self.data = type.filter(data)

    def get_test_value(self):
        return self.data

    def clone(self, name: str | None = None) -> Constant:
        cp = self.__class__(self.type, self.data, self.name if name is None else name)
        cp.tag = self.tag.copy()
        return cp

    def signature(self):
        """What makes two constants interchangeable: their type and value (used by merging)."""
        return (self.type, self.type.value_signature(self.data))

    def _label(self) -> str:
        if self.name is not None:
            return self.name
        text = str(self.data).replace("\n", "")
        return text if len(text) <= 20 else text[:10] + "..." + text[-7:]


class Apply:
    """One application of ``op`` to ``inputs``, producing ``outputs``.

    Creating an Apply sets each output's ``owner``/``index`` and records, in ``tag.trace``, the
    user's source frames (``config.traceback__limit`` of them) for error messages and widgets.
    """

    def __init__(self, op: Op, inputs, outputs):
        self.op = op
        self.inputs = []
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Variable):
                raise TypeError(f"{op}: input {i} must be a Variable, got {type(inp).__name__}: {inp!r}")
            self.inputs.append(inp)
        self.outputs = []
        for i, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise TypeError(f"{op}: output {i} must be a Variable, got {type(out).__name__}")
            if out.owner is None:
                out.owner, out.index = self, i
            elif out.owner is not self or out.index != i:
                raise ValueError(f"{op}: output {i} ({out}) already belongs to another node")
            self.outputs.append(out)
        self.tag = Scratchpad()
        record_trace(self.tag)

    def __reduce_ex__(self, protocol):
        _check_op_pickles(self, protocol)
        return super().__reduce_ex__(protocol)

    @property
    def out(self) -> Variable:
        """The single output (or the op's ``default_output``)."""
        do = getattr(self.op, "default_output", None)
        if do is not None:
            return self.outputs[do]
        if len(self.outputs) != 1:
            raise ValueError(f"{self.op} has {len(self.outputs)} outputs; pick one of node.outputs")
        return self.outputs[0]

    default_output = out

    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    def get_parents(self):
        return list(self.inputs)

    def clone(self) -> Apply:
        """A copy with the same inputs and fresh outputs (tags copied)."""
        cp = self.__class__(self.op, self.inputs, [o.clone() for o in self.outputs])
        cp.tag = self.tag.copy()
        return cp

    def clone_with_new_inputs(self, inputs, strict: bool = True,
                              remake_value_typed: bool | None = None) -> Apply:
        """A copy of this node reading ``inputs`` instead.

        With ``strict`` each new input must have exactly the old input's type; otherwise the op
        is asked to build a new node (its output types may then differ) where an input type
        changed, or always where the op's ``_output_type_depends_on_input_value``
        (``remake_value_typed``, default ``not strict``; copies of a whole graph pass False:
        their inputs carry the same values, and remaking would cost time at every compile).
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(f"{self.op}: expected {len(self.inputs)} inputs, got {len(inputs)}")
        # an op whose output type reads its inputs' known values is remade in any case
        if remake_value_typed is None:
            remake_value_typed = not strict
        remake = (not strict and remake_value_typed
                  and getattr(self.op, "_output_type_depends_on_input_value", False))
        for i, (old, new) in enumerate(zip(self.inputs, inputs)):
            if old.type != new.type:
                if strict:
                    converted = old.type.convert_variable(new)
                    if converted is None:
                        raise TypeError(
                            f"{self.op}: input {i} must have type {old.type}, got {new.type} ({new})")
                    inputs = list(inputs)
                    inputs[i] = converted
                else:
                    remake = True
        if remake:
            new_node = self.op.make_node(*inputs)
            new_node.tag = self.tag.copy()
            return new_node
        cp = self.__class__(self.op, inputs, [o.clone() for o in self.outputs])
        cp.tag = self.tag.copy()
        return cp

    def __str__(self):
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    __repr__ = __str__


# ----------------------------------------------------------------------------------------------
# Traversal


def ancestors(variables, blockers=None):
    """All variables that ``variables`` depend on (themselves included), stopping at ``blockers``."""
    blockers = set(blockers or ())
    seen, order, stack = set(), [], list(reversed(list(variables)))
    while stack:
        var = stack.pop()
        if var in seen:
            continue
        seen.add(var)
        order.append(var)
        if var.owner is not None and var not in blockers:
            stack.extend(reversed(var.owner.inputs))
    return order


def graph_inputs(variables, blockers=None):
    """The variables without an owner (or in ``blockers``) that ``variables`` depend on."""
    blockers = set(blockers or ())
    return [v for v in ancestors(variables, blockers) if v.owner is None or v in blockers]


def io_toposort(inputs, outputs, orderings=None):
    """Apply nodes between ``inputs`` and ``outputs`` in an order where each node follows the
    nodes computing its inputs (and, with ``orderings`` {node: [nodes before it]}, those too).

    Deterministic: ties are broken by the order in which outputs and inputs are listed, so the
    same graph always gives the same order (rewrites and DebugMode rely on that).
    """
    inputs = set(inputs)
    orderings = orderings or {}

    def predecessors(node):
        preds = [i.owner for i in node.inputs if i.owner is not None and i not in inputs]
        preds.extend(orderings.get(node, ()))
        return iter(preds)

    order, state = [], {}  # state: 1 while on the DFS path, 2 once placed in the order
    for root in outputs:
        start = root.owner if root not in inputs else None
        if start is None or start in state:
            continue
        state[start] = 1
        stack = [(start, predecessors(start))]
        while stack:
            node, preds = stack[-1]
            for pred in preds:
                seen = state.get(pred)
                if seen is None:
                    state[pred] = 1
                    stack.append((pred, predecessors(pred)))
                    break
                if seen == 1:
                    raise ValueError(f"the graph contains a cycle through {pred}")
            else:
                stack.pop()
                state[node] = 2
                order.append(node)
    return order


def apply_ancestors(variables, blockers=None):
    """The Apply nodes computing ``variables`` and everything they depend on (each once),
    stopping at ``blockers``."""
    seen, blockers = set(), set(blockers or ())
    for var in ancestors(variables, blockers):
        node = var.owner
        if node is not None and node not in seen and var not in blockers:
            seen.add(node)
            yield node


def equal_computations(xs, ys, in_xs=None, in_ys=None, strict_dtype=True) -> bool:
    """Whether each ``xs[k]`` computes the same thing as ``ys[k]``: the same ops (by op
    equality) applied in the same way to equal constants and to the same free variables.

    ``in_xs[i]`` and ``in_ys[i]`` are taken as equal to each other (and to nothing else), which
    compares graphs built on different inputs. ``strict_dtype=False`` lets variables of
    different dtypes match when everything else does.
    """
    xs, ys = list(xs), list(ys)
    in_xs, in_ys = list(in_xs or ()), list(in_ys or ())
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations: {len(xs)} xs but {len(ys)} ys")
    if len(in_xs) != len(in_ys):
        raise ValueError(f"equal_computations: {len(in_xs)} in_xs but {len(in_ys)} in_ys")
    given = {id(x): y for x, y in zip(in_xs, in_ys)}
    given_y = {id(y) for y in in_ys}
    keep = []      # the compared variables stay alive while their ids are memo keys
    memo: dict[tuple[int, int], bool] = {}

    def same_type(x, y):
        tx, ty = getattr(x, "type", None), getattr(y, "type", None)
        if strict_dtype or not hasattr(tx, "dtype") or not hasattr(ty, "dtype"):
            return tx == ty
        return getattr(tx, "shape", None) == getattr(ty, "shape", None)

    def shallow(x, y):
        """True / False when decided without looking at inputs, None otherwise."""
        if id(x) in given:
            return given[id(x)] is y and same_type(x, y)
        if id(y) in given_y:
            return False
        if x is y and not given:
            return True
        if not same_type(x, y):
            return False
        if isinstance(x, Constant) or isinstance(y, Constant):
            return (isinstance(x, Constant) and isinstance(y, Constant)
                    and x.signature() == y.signature())
        if x.owner is None or y.owner is None:
            return x is y
        nx, ny = x.owner, y.owner
        if (x.index != y.index or len(nx.inputs) != len(ny.inputs)
                or len(nx.outputs) != len(ny.outputs) or nx.op != ny.op):
            return False
        return None

    for x0, y0 in zip(xs, ys):
        if not isinstance(x0, Variable) or not isinstance(y0, Variable):
            # a literal (an int, an array) equals a constant of that value, or another literal
            vx = x0.data if isinstance(x0, Constant) else x0
            vy = y0.data if isinstance(y0, Constant) else y0
            if isinstance(vx, Variable) or isinstance(vy, Variable) or not _literal_equal(vx, vy):
                return False
            continue
        stack = [(x0, y0)]
        while stack:
            x, y = stack[-1]
            key = (id(x), id(y))
            if key in memo:
                stack.pop()
                continue
            verdict = shallow(x, y)
            if verdict is None:
                pairs = list(zip(x.owner.inputs, y.owner.inputs))
                pending = [(a, b) for a, b in pairs if (id(a), id(b)) not in memo]
                if pending:
                    stack.extend(reversed(pending))
                    continue
                verdict = all(memo[(id(a), id(b))] for a, b in pairs)
            memo[key] = verdict
            keep.append((x, y))
            stack.pop()
        if not memo[(id(x0), id(y0))]:
            return False
    return True


def _literal_equal(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except TypeError:      # equal_nan on non-numeric data
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def applys_between(inputs, outputs):
    """The Apply nodes on paths from ``inputs`` to ``outputs``, in topological order."""
    return io_toposort(inputs, outputs)


def clone_get_equiv(inputs, outputs, copy_inputs: bool = True, memo=None,
                    rebuild_strict: bool = False, remake_value_typed: bool = False):
    """Copy the graph between ``inputs`` and ``outputs``; return the {old: new} map.

    Constants are kept (they are immutable); graph inputs are cloned when ``copy_inputs``.
    Entries already in ``memo`` are used as they are, which is how replacements are made.
    A node whose new inputs have other types is rebuilt by its op (``make_node``), unless
    ``rebuild_strict``: then each new input is converted to the old input's type (a
    TypeError when it cannot be) and the node keeps its output types.
    """
    memo = {} if memo is None else memo
    for inp in inputs:
        if inp not in memo:
            memo[inp] = inp.clone() if copy_inputs else inp
    for node in io_toposort(inputs, outputs):
        if node in memo:
            continue
        for v in node.inputs:
            if v not in memo:
                if isinstance(v, Constant) or not copy_inputs:
                    memo[v] = v
                else:
                    memo[v] = v.clone()
        new_node = node.clone_with_new_inputs([memo[v] for v in node.inputs],
                                              strict=rebuild_strict,
                                              remake_value_typed=remake_value_typed)
        memo[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            memo.setdefault(old, new)
    for out in outputs:
        if out not in memo:
            memo[out] = out if isinstance(out, Constant) or not copy_inputs else out.clone()
    return memo


def clone(inputs, outputs, copy_inputs: bool = True):
    """Copy the graph from ``inputs`` to ``outputs``; return (new_inputs, new_outputs)."""
    equiv = clone_get_equiv(inputs, outputs, copy_inputs)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]


def clone_replace(outputs, replace=None, rebuild_strict: bool = False):
    """Copy the graph computing ``outputs`` with some variables swapped for others.

    ``replace`` maps old variables to their replacements (dict or list of pairs); the rest of the
    graph above the replaced variables is rebuilt, the part below is shared.
    A replacement may have another type (another static shape or dtype): the nodes above it
    are rebuilt with ``make_node``, so their outputs take the types that follow from the new
    inputs, and so are the nodes of ops whose output type reads known input values
    (``Reshape``, ``Alloc``, ``SpecifyShape``: ``reshape(x, (100 // n, n))`` with ``n``
    replaced by another constant). ``rebuild_strict=True`` (PyTensor's default) instead converts each replacement to
    the type it replaces and keeps every node's output types; a replacement that cannot be
    converted is a TypeError.
    """
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace or ())
    memo = {}
    for old, new in pairs:
        if not isinstance(old, Variable):
            raise TypeError(f"clone_replace: keys must be Variables, got {old!r}")
        if not isinstance(new, Variable):
            new = old.type.make_constant(new) if hasattr(old.type, "make_constant") else new
        memo[old] = new
    blockers = [old for old, _ in pairs]
    inputs = graph_inputs(outs, blockers)
    for v in inputs:
        memo.setdefault(v, v)
    equiv = clone_get_equiv(inputs, outs, copy_inputs=False, memo=memo,
                            rebuild_strict=rebuild_strict,
                            remake_value_typed=not rebuild_strict)
    result = [equiv[o] for o in outs]
    return result[0] if single else result


def _check_op_pickles(node, protocol) -> None:
    """A PicklingError naming the op, its node and the user's line when the op cannot be
    pickled (an op holding an open file, a lock, a lambda...): pickle's own error names only
    the type of the object it choked on, somewhere deep in a graph."""
    import pickle

    try:
        pickle.dumps(node.op, protocol)
    except Exception as exc:  # noqa: BLE001 - any failure is reported the same way
        from tensorgraph.graph.utils import format_user_line

        where = format_user_line(node)
        raise pickle.PicklingError(
            f"cannot pickle the op {node.op!r} ({type(node.op).__name__}) of the node {node}"
            f"{', created at ' + where if where else ''}: {type(exc).__name__}: {exc}. Everything"
            " an op keeps must pickle for a graph or a compiled function to pickle (open "
            "files, locks and sockets cannot; keep a path or a seed instead)") from exc
