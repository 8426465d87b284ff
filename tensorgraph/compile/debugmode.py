"""``DebugMode``: run a function slowly, checking everything that could silently go wrong.

``function(..., mode='DebugMode')`` (or ``mode=DebugMode(...)``) rewrites and runs the graph as
usual, with these checks, each raising a subclass of ``DebugModeError`` that names the node,
the user's source line and the values involved:

``BadThunkOutput``
    Each node runs its numpy ``perform`` (the reference) and, when a C linker is available, its
    C thunk on copies of the same inputs; the outputs must agree within dtype-aware tolerances.
    Also raised when an implementation gives a different result for a preallocated output
    buffer (``check_preallocated_output``).
``BadOptimization``
    After each call, every rewrite step of ``fgraph.rewrite_history`` is verified on the call's
    inputs: the replaced and the replacing variable are both computed (with ``perform``, through
    the graph as it was when each node was made) and must agree. Where the replaced value's
    computation went past the float range (an intermediate is nan/inf there) or cancelled most
    of its digits (``1 - sigmoid(16)`` in float32), stabilizing rewrites change values on
    purpose: there anything goes; everywhere else values must agree and a finite value never
    becomes nan/inf.
``BadDestroyMap`` / ``BadViewMap``
    A node changed an input it did not declare in ``destroy_map``, or returned an output
    sharing memory with an input it did not declare in ``view_map`` (or ``destroy_map``).
    Both the reference and the C thunk are checked (the C one runs on copies of the inputs).
``InvalidValueError``
    An output is not a valid value of its variable's type (dtype, ndim, static shape), or, with
    ``check_isfinite``, contains nan or inf.
``StochasticOrder``
    Rewriting the original graph again (``patience`` times in all) gives a different graph.

Constructor arguments override the ``DebugMode__*`` flags: ``check_py``, ``check_c``,
``check_isfinite`` (``DebugMode__check_finite``), ``patience``, ``check_preallocated_output``
('initial', 'previous', 'c_contiguous', 'f_contiguous', 'strided', 'wrong_size', 'ALL', as a
colon-separated string or a list), ``check_preallocated_output_ndim``,
``warn_input_not_reused`` and ``require_matching_strides`` (``DebugMode__check_strides``: 0 no,
1 warn, 2 raise).

Everything runs through the per-node thunks of the linkers (``thunk.inputs`` /
``thunk.outputs`` storage cells, ``vm.post_hook``): the reference is the Python VM, the other
implementation the C linker ``c|py_nogc`` whenever it is registered (``c_linker=`` picks
another one; only its thunks of ``kind`` 'c' are compared). Without a C linker the C side of
the checks is skipped.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from tensorgraph.compile.monitormode import HookMode, add_hooks
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import Constant
from tensorgraph.graph.errors import describe_value, node_report
from tensorgraph.graph.utils import format_user_line
from tensorgraph.link import registry as linkers
from tensorgraph.printing import debugprint
from tensorgraph.rewriting.history import graph_signature
from tensorgraph.scalar import basic as ps
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.reduction import Sum

PREALLOCATED_KINDS = ("initial", "previous", "c_contiguous", "f_contiguous", "strided",
                      "wrong_size")

#: (rtol, atol) per dtype for comparing two implementations or a rewrite's before/after
TOLERANCES = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-6, 1e-8),
              "complex64": (1e-4, 1e-5), "complex128": (1e-6, 1e-8)}


class DebugModeError(Exception):
    """Base class of every error DebugMode raises."""


class BadThunkOutput(DebugModeError):
    """Two implementations of a node (or one with a preallocated output) disagree.

    Attributes: ``node``, ``output_index``, ``kinds`` (e.g. ('py', 'c')), ``values`` (the two
    outputs), ``largest_difference``; ``r``, the output variable (PyTensor's name).
    """

    def __init__(self, message, node=None, output_index=None, kinds=(), values=(),
                 largest_difference=None):
        super().__init__(message)
        self.node = node
        self.output_index = output_index
        self.kinds = kinds
        self.values = values
        self.largest_difference = largest_difference

    @property
    def r(self):
        if self.node is None or self.output_index is None:
            return None
        return self.node.outputs[self.output_index]


class BadOptimization(DebugModeError):
    """A rewrite replaced a variable with one computing a different value.

    Attributes: ``step`` (the ``RewriteStep``), ``reason`` (the rewrite's name, PyTensor's
    attribute), ``old``, ``new`` (variables), ``old_value``, ``new_value``,
    ``largest_difference``.
    """

    def __init__(self, message, step=None, old=None, new=None, old_value=None, new_value=None,
                 largest_difference=None):
        super().__init__(message)
        self.step = step
        self.old, self.new = old, new
        self.old_value, self.new_value = old_value, new_value
        self.largest_difference = largest_difference

    @property
    def reason(self):
        return getattr(self.step, "name", None)


class BadDestroyMap(DebugModeError):
    """A node overwrote an input it did not declare in ``destroy_map``."""

    def __init__(self, message, node=None, input_index=None):
        super().__init__(message)
        self.node = node
        self.input_index = input_index


class BadViewMap(DebugModeError):
    """A node's output aliases an input without a ``view_map``/``destroy_map`` entry."""

    def __init__(self, message, node=None, output_index=None, input_index=None):
        super().__init__(message)
        self.node = node
        self.output_index = output_index
        self.input_index = input_index


class InvalidValueError(DebugModeError):
    """A node output is not a valid value of its type (or is not finite)."""

    def __init__(self, message, node=None, output_index=None, value=None):
        super().__init__(message)
        self.node = node
        self.output_index = output_index
        self.value = value


class StochasticOrder(DebugModeError):
    """Rewriting the same graph twice gave different graphs."""


# ----------------------------------------------------------------------------------------------
# Comparing values


def copy_value(value):
    """An independent copy (arrays keep their memory layout; generators their state)."""
    if isinstance(value, np.ndarray):
        return value.copy(order="K")
    if value is None or isinstance(value, (np.generic, int, float, complex, bool, str)):
        return value
    return copy.deepcopy(value)


def same_value(a, b) -> bool:
    """Exact equality (nan equal to nan), for the destroy-map check."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator):
        return _generator_state(a) == _generator_state(b)
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _generator_state(g):
    return repr(g.bit_generator.state)


def compare(a, b, dtype=None):
    """None when ``a`` and ``b`` agree (dtype tolerances), else a description of the largest
    difference: dict(text, diff, index, a, b)."""
    if not isinstance(a, (np.ndarray, np.generic)) or not isinstance(b, (np.ndarray, np.generic)):
        return None if same_value(a, b) else {"text": f"{_short(a)} vs {_short(b)}",
                                              "diff": None, "index": None, "a": a, "b": b}
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return {"text": f"shapes differ: {a.shape} vs {b.shape}", "diff": None, "index": None,
                "a": a, "b": b}
    if a.dtype != b.dtype:
        return {"text": f"dtypes differ: {a.dtype} vs {b.dtype}", "diff": None, "index": None,
                "a": a, "b": b}
    if a.size == 0:
        return None
    if a.dtype.kind not in "fc":
        bad = a != b
        if not bad.any():
            return None
        index = np.unravel_index(int(np.argmax(bad)), a.shape)
        return {"text": f"{int(bad.sum())} elements differ, first at {index}: {a[index]!r} vs "
                        f"{b[index]!r}", "diff": None, "index": index, "a": a, "b": b}
    rtol, atol = TOLERANCES.get((dtype or a.dtype.name), (1e-6, 1e-8))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) - b)
    diff = np.where(close, 0.0, np.nan_to_num(diff, nan=np.inf, posinf=np.inf))
    index = np.unravel_index(int(np.argmax(diff)), a.shape)
    return {"text": f"largest difference {float(diff[index]):.6g} at index {index}: "
                    f"{a[index]!r} vs {b[index]!r} ({int((~close).sum())} of {a.size} "
                    f"elements differ beyond rtol={rtol}, atol={atol})",
            "diff": float(diff[index]), "index": index, "a": a, "b": b}


def str_diagnostic(expected, value, rtol, atol) -> str:
    """A few lines describing how ``value`` differs from ``expected``: shapes and dtypes,
    then (for numbers of the same shape) the largest absolute and relative differences,
    where they are, and how many elements are outside ``rtol`` / ``atol``. For messages of
    failed comparisons."""
    exp, val = np.asarray(expected), np.asarray(value)
    lines = [f"expected: shape {exp.shape}, dtype {exp.dtype}; "
             f"got: shape {val.shape}, dtype {val.dtype}"]
    if exp.shape != val.shape or exp.dtype.kind not in "biufc" or val.dtype.kind not in "biufc":
        lines.append(f"expected {_short(expected)}, got {_short(value)}")
        return "\n".join(lines)
    if exp.size == 0:
        return lines[0]
    wide = np.complex128 if "c" in (exp.dtype.kind, val.dtype.kind) else np.float64
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        e, v = exp.astype(wide), val.astype(wide)
        abs_err = np.abs(e - v)
        rel_err = abs_err / np.maximum(np.abs(e), np.abs(v))
    bad = ~np.isclose(v, e, rtol=rtol, atol=atol, equal_nan=True)
    finite = np.where(np.isnan(abs_err), -1.0, abs_err)
    worst = np.unravel_index(int(np.argmax(finite)), exp.shape) if exp.shape else ()
    lines.append(f"largest absolute difference {float(abs_err[worst]):.6g} at index "
                 f"{tuple(int(i) for i in worst)}: expected {exp[worst]!r}, got {val[worst]!r}")
    rel = np.where(np.isnan(rel_err), -1.0, rel_err)
    lines.append(f"largest relative difference {float(np.max(rel)):.6g}")
    lines.append(f"{int(bad.sum())} of {exp.size} elements differ beyond rtol={rtol}, "
                 f"atol={atol}; nan: expected {int(np.isnan(e).sum())}, got "
                 f"{int(np.isnan(v).sum())}")
    return "\n".join(lines)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _nonfinite_count(value) -> int:
    if isinstance(value, (np.ndarray, np.generic)) and np.asarray(value).dtype.kind in "fc":
        return int(np.count_nonzero(~np.isfinite(value)))
    return 0


# ----------------------------------------------------------------------------------------------
# Preallocated output buffers


def _garbage(shape, dtype, order="C"):
    arr = np.empty(shape, dtype=dtype, order=order)
    if arr.dtype.kind in "fc":
        arr.fill(np.nan)
    elif arr.dtype.kind == "b":
        arr.fill(True)
    elif arr.dtype.kind in "iu":
        arr.fill(np.iinfo(arr.dtype).max)
    return arr


def preallocated_buffers(kind: str, reference, max_ndim: int):
    """The buffer to leave in an output cell before running a thunk, for one check kind
    (None: this kind does not apply to this value)."""
    if kind == "initial":
        return [None]
    if not isinstance(reference, np.ndarray):
        return None
    shape, dtype = reference.shape, reference.dtype
    if kind == "previous":
        return [reference.copy()]
    if kind == "c_contiguous":
        return [_garbage(shape, dtype, "C")]
    if kind == "f_contiguous":
        return [_garbage(shape, dtype, "F")] if reference.ndim > 1 else None
    if reference.ndim > max_ndim:
        return None
    if kind == "strided":
        big = _garbage(tuple(2 * n for n in shape), dtype)
        return [big[tuple(slice(None, None, 2) for _ in shape)]] if shape else None
    if kind == "wrong_size":
        if not shape:
            return None
        return [_garbage(tuple(n + 1 for n in shape), dtype),
                _garbage(tuple(max(n - 1, 0) for n in shape), dtype)]
    raise ValueError(f"unknown preallocated output kind {kind!r}; known: "
                     f"{', '.join(PREALLOCATED_KINDS)}, ALL")


def _parse_kinds(value) -> tuple[str, ...]:
    if isinstance(value, str):
        items = [k for k in value.split(":") if k]
    else:
        items = list(value or ())
    if "ALL" in items:
        return PREALLOCATED_KINDS
    for k in items:
        if k not in PREALLOCATED_KINDS:
            raise ValueError(f"check_preallocated_output: unknown kind {k!r}; known: "
                             f"{', '.join(PREALLOCATED_KINDS)}, ALL")
    return tuple(items)


# ----------------------------------------------------------------------------------------------
# The mode


class DebugMode(HookMode):
    """Check implementations, rewrites, inplace and view declarations and output types.

    Parameters (None: the ``DebugMode__*`` flag)
    ----------
    optimizer : rewrite preset ('default': ``config.optimizer``)
    check_py, check_c : run the numpy ``perform`` / the C thunks (both: compare them)
    check_isfinite : nan and inf in a node output raise ``InvalidValueError``
    patience : how many times the graph is rewritten in all to check rewriting is
        deterministic (1: no check)
    check_preallocated_output : kinds of output buffers each node must handle
    check_preallocated_output_ndim : largest ndim for 'strided' / 'wrong_size' buffers
    warn_input_not_reused : warn when a declared view/inplace output does not share memory
        with its input
    require_matching_strides : 0, 1 (warn) or 2 (raise) when py and C outputs have different
        strides
    check_optimizations : verify every rewrite step on each call's inputs
    c_linker : the linker whose 'c' thunks are compared with perform (default 'c|py_nogc')

    PyTensor's names are accepted too: ``check_py_code``, ``check_c_code`` and
    ``stability_patience`` (for ``check_py``, ``check_c``, ``patience``).
    """

    def __init__(self, optimizer="default", check_py=None, check_c=None, check_isfinite=None,
                 patience=None, check_preallocated_output=None,
                 check_preallocated_output_ndim=None, warn_input_not_reused=None,
                 require_matching_strides=None, check_optimizations=True,
                 c_linker="c|py_nogc", *, check_py_code=None, check_c_code=None,
                 stability_patience=None):
        check_py = check_py_code if check_py is None else check_py
        check_c = check_c_code if check_c is None else check_c
        patience = stability_patience if patience is None else patience

        def pick(value, flag):
            return getattr(config, f"DebugMode__{flag}") if value is None else value

        super().__init__("vm_nogc", optimizer)
        self.check_py = bool(pick(check_py, "check_py"))
        self.check_c = bool(pick(check_c, "check_c"))
        if not (self.check_py or self.check_c):
            raise ValueError("DebugMode: check_py and check_c cannot both be False")
        self.check_isfinite = bool(pick(check_isfinite, "check_finite"))
        self.patience = int(pick(patience, "patience"))
        if self.patience < 1:
            raise ValueError(f"DebugMode(patience=...) must be at least 1, got {self.patience}")
        self.check_preallocated_output = _parse_kinds(
            pick(check_preallocated_output, "check_preallocated_output"))
        self.check_preallocated_output_ndim = int(pick(check_preallocated_output_ndim,
                                                       "check_preallocated_output_ndim"))
        self.warn_input_not_reused = bool(pick(warn_input_not_reused, "warn_input_not_reused"))
        self.require_matching_strides = int(pick(require_matching_strides, "check_strides"))
        self.check_optimizations = bool(check_optimizations)
        self.c_linker = c_linker

    # -- rewriting: determinism ------------------------------------------------------------

    def rewrite(self, fgraph) -> None:
        super().rewrite(fgraph)
        history = getattr(fgraph, "rewrite_history", None)
        if self.patience < 2 or history is None:
            return
        expected = graph_signature(fgraph)
        for attempt in range(1, self.patience):
            again = history.rebuild(0)
            super().rewrite(again)
            if graph_signature(again) != expected:
                raise StochasticOrder(
                    f"DebugMode: rewriting the same graph again (attempt {attempt + 1} of "
                    f"{self.patience}) gave a different graph; a rewrite depends on something "
                    "other than the graph (iteration order of a set or dict, ids, randomness)."
                    "\nfirst result:\n" + debugprint(fgraph, file="str") +
                    "\nnew result:\n" + debugprint(again, file="str"))

    # -- linking ---------------------------------------------------------------------------

    def c_available(self) -> bool:
        return bool(self.c_linker) and linkers.is_registered(self.c_linker)

    @property
    def linker(self):
        return _DebugLinker(self)

    def install_hooks(self, vm) -> None:  # the hooks are installed by _DebugLinker
        raise AssertionError("DebugMode links through _DebugLinker")

    def __repr__(self):
        c = self.c_linker if self.c_available() else "no C linker"
        return (f"DebugMode(optimizer={self.optimizer!r}, check_py={self.check_py}, "
                f"check_c={self.check_c} ({c}), patience={self.patience})")


class _DebugLinker:
    """Links the reference VM (Python, or C when check_py is off), the C thunks to compare
    with, and installs the per-node checks."""

    def __init__(self, mode: DebugMode):
        self.mode = mode
        self.name = "DebugMode"

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        mode = self.mode
        use_c = mode.check_c and mode.c_available()
        main_name = "vm_nogc" if mode.check_py or not use_c else mode.c_linker
        vm = linkers.get_linker(main_name).make_vm(fgraph, input_storage, storage_map)
        alternatives = {}
        if use_c and mode.check_py:
            other = linkers.get_linker(mode.c_linker).make_vm(fgraph)
            alternatives = {i: t for i, t in enumerate(other.thunks)
                            if str(getattr(t, "kind", "py")).lower().startswith("c")}
        checker = _NodeChecker(mode, vm, alternatives)
        add_hooks(vm, checker.pre, checker.post)
        return _DebugVM(vm, mode, checker)


class _DebugVM:
    """The VM a DebugMode function calls: runs the checked node loop, then verifies the
    rewrites on the call's inputs. Every other attribute is the wrapped VM's."""

    __slots__ = ("_vm", "_mode", "_checker")

    def __init__(self, vm, mode, checker):
        object.__setattr__(self, "_vm", vm)
        object.__setattr__(self, "_mode", mode)
        object.__setattr__(self, "_checker", checker)

    def __call__(self):
        __tracebackhide__ = True  # noqa: F841 - IPython: the user's frame comes first
        vm = self._vm
        verify = self._mode.check_optimizations and getattr(vm.fgraph, "rewrite_history",
                                                            None) is not None
        inputs = [copy_value(cell[0]) for cell in vm.input_storage] if verify else None
        vm()
        if verify:
            verify_rewrites(vm.fgraph, inputs)

    def __getattr__(self, name):
        return getattr(self._vm, name)

    def __setattr__(self, name, value):
        setattr(self._vm, name, value)

    def __repr__(self):
        return f"<DebugMode {self._vm!r}>"


class _NodeChecker:
    """The pre/post hooks doing the per-node checks."""

    def __init__(self, mode: DebugMode, vm, alternatives: dict):
        self.mode = mode
        self.vm = vm
        self.alternatives = alternatives
        self._before: list = []

    def pre(self, i, node, thunk):
        # snapshot the inputs: to detect undeclared overwrites and to rerun implementations
        self._before = [copy_value(cell[0]) for cell in thunk.inputs]

    def post(self, i, node, thunk):
        mode = self.mode
        before = self._before
        outputs = [cell[0] for cell in thunk.outputs]
        if getattr(thunk, "lazy", False) and not all(
                self.vm.compute_map[o][0] for o in node.outputs if o in self.vm.compute_map):
            return  # a lazy node asking for more inputs: checked when it completes
        self._check_types(i, node, before, outputs)
        kind = str(getattr(thunk, "kind", "py")).lower()
        reference_kind = "c" if kind.startswith("c") else "py"
        inputs_now = [cell[0] for cell in thunk.inputs]
        self._check_destroy(i, node, inputs_now, before, reference_kind)
        self._check_views(i, node, before, outputs, inputs_now, reference_kind)
        other = self.alternatives.get(i)
        if other is not None:
            # the C thunk runs on copies of the inputs: they must come back unchanged where
            # destroy_map does not allow a change, and its outputs must not view them
            # undeclared, exactly as for the reference
            values, copies = self._run(other, before, [None] * len(node.outputs))
            self._check_destroy(i, node, copies, before, "c")
            self._check_views(i, node, before, values, copies, "c")
            self._compare(i, node, before, outputs, values, (reference_kind, "c"), "")
            self._check_strides(i, node, outputs, values)
        for kind_name in mode.check_preallocated_output:
            for impl_kind, impl in ((reference_kind, thunk), ("c", other)):
                if impl is None:
                    continue
                self._check_preallocated(i, node, impl, impl_kind, before, outputs, kind_name)

    # -- individual checks -----------------------------------------------------------------

    def _report(self, headline, i, node, inputs):
        return node_report(headline, node, inputs, i, fgraph=self.vm.fgraph)

    def _check_types(self, i, node, before, outputs):
        for k, (var, value) in enumerate(zip(node.outputs, outputs)):
            try:
                var.type.filter(value, strict=True)
            except (TypeError, ValueError) as exc:
                raise InvalidValueError(self._report(
                    f"DebugMode: output {k} of {node.op} is not a valid {var.type}: {exc} "
                    f"(got {describe_value(value)})", i, node, before),
                    node=node, output_index=k, value=value) from None
            if self.mode.check_isfinite:
                bad = _nonfinite_count(value)
                if bad:
                    raise InvalidValueError(self._report(
                        f"DebugMode: output {k} of {node.op} has {bad} nan/inf value"
                        f"{'s' if bad != 1 else ''} (check_isfinite; pass "
                        "DebugMode(check_isfinite=False) if they are expected)", i, node,
                        before), node=node, output_index=k, value=value)

    def _check_destroy(self, i, node, inputs_after, before, impl_kind):
        """``inputs_after``: the input values after the ``impl_kind`` implementation ran on
        inputs equal to ``before``."""
        destroyed = {j for ins in node.op.destroy_map.values() for j in ins}
        for j, (after, old) in enumerate(zip(inputs_after, before)):
            if j in destroyed:
                continue
            if not same_value(old, after):
                raise BadDestroyMap(self._report(
                    f"DebugMode: the {impl_kind} implementation of {node.op} changed its input "
                    f"{j} ({node.inputs[j]}) but the op does not declare it in destroy_map "
                    f"({node.op.destroy_map or '{}'}); declare it, or compute into a new array",
                    i, node, before), node=node, input_index=j)

    def _check_views(self, i, node, before, outputs, inputs, impl_kind):
        op = node.op
        self._check_aliased_outputs(i, node, before, outputs, impl_kind)
        for k, value in enumerate(outputs):
            if not isinstance(value, np.ndarray):
                continue
            allowed = set(op.view_map.get(k, ())) | set(op.destroy_map.get(k, ()))
            for j, inp in enumerate(inputs):
                if not isinstance(inp, np.ndarray) or not np.may_share_memory(value, inp):
                    continue
                if j not in allowed and np.shares_memory(value, inp, max_work=10 ** 6):
                    raise BadViewMap(self._report(
                        f"DebugMode: output {k} of the {impl_kind} implementation of {op} "
                        f"shares memory with input {j} ({node.inputs[j]}) but view_map is "
                        f"{op.view_map or '{}'} and destroy_map {op.destroy_map or '{}'}; "
                        "declare the view or return a copy", i, node, before),
                        node=node, output_index=k, input_index=j)
            if self.mode.warn_input_not_reused and value.size:  # nothing to share if empty
                for j in allowed:
                    inp = inputs[j]
                    if impl_kind == "c" and isinstance(node.inputs[j], Constant):
                        continue  # C reads a constant from its own copy, not from the cell
                    if isinstance(inp, np.ndarray) and inp.size and not np.may_share_memory(
                            value, inp):
                        what = "destroy_map" if j in op.destroy_map.get(k, ()) else "view_map"
                        warnings.warn(f"DebugMode: {op} declares output {k} in {what} of "
                                      f"input {j} but returned new memory (node {node})",
                                      stacklevel=2)

    def _check_aliased_outputs(self, i, node, before, outputs, impl_kind):
        """Two outputs of one node sharing memory, both read by later nodes: writing into
        one (an inplace node) would change the other, which no declaration can say, unless
        both are declared views of the same input (its declarations then protect them).
        Outputs only returned by the function, or not read at all, may share memory."""
        op = node.op
        clients = self.vm.fgraph.clients
        arrays = [(k, v) for k, v in enumerate(outputs)
                  if isinstance(v, np.ndarray) and v.size
                  and any(c != "output" for c, _ in clients.get(node.outputs[k], ()))]
        for a, (k, value) in enumerate(arrays):
            for m, other in arrays[a + 1:]:
                if not np.may_share_memory(value, other):
                    continue
                declared_k = set(op.view_map.get(k, ())) | set(op.destroy_map.get(k, ()))
                declared_m = set(op.view_map.get(m, ())) | set(op.destroy_map.get(m, ()))
                if declared_k & declared_m or not np.shares_memory(value, other,
                                                                    max_work=10 ** 6):
                    continue
                raise BadViewMap(self._report(
                    f"DebugMode: outputs {k} and {m} of the {impl_kind} implementation of {op} "
                    "share memory, so overwriting one (an inplace op) changes the other; "
                    "return separate arrays (outputs may share memory only as declared views "
                    "of the same input)", i, node, before), node=node, output_index=m)

    @staticmethod
    def _run(thunk, inputs, output_buffers):
        """Run ``thunk`` on copies of ``inputs`` with ``output_buffers`` in its output cells;
        its cells are restored afterwards. Returns the outputs and the input copies (as the
        thunk left them)."""
        saved_in = [cell[0] for cell in thunk.inputs]
        saved_out = [cell[0] for cell in thunk.outputs]
        try:
            for cell, value in zip(thunk.inputs, inputs):
                cell[0] = copy_value(value)
            for cell, value in zip(thunk.outputs, output_buffers):
                cell[0] = value
            thunk()
            return [cell[0] for cell in thunk.outputs], [cell[0] for cell in thunk.inputs]
        finally:
            for cell, value in zip(thunk.inputs, saved_in):
                cell[0] = value
            for cell, value in zip(thunk.outputs, saved_out):
                cell[0] = value

    def _compare(self, i, node, before, reference, values, kinds, context):
        for k, (a, b) in enumerate(zip(reference, values)):
            dtype = getattr(node.outputs[k].type, "dtype", None)
            difference = compare(a, b, dtype)
            if difference is not None:
                raise BadThunkOutput(self._report(
                    f"DebugMode: the {kinds[0]} and {kinds[1]} implementations of {node.op} "
                    f"disagree on output {k}{context}: {difference['text']}\n"
                    f"  {kinds[0]}: {_short(a)}\n  {kinds[1]}: {_short(b)}", i, node, before),
                    node=node, output_index=k, kinds=kinds, values=(a, b),
                    largest_difference=difference["diff"])

    def _check_strides(self, i, node, reference, values):
        level = self.mode.require_matching_strides
        if not level:
            return
        for k, (a, b) in enumerate(zip(reference, values)):
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.strides != b.strides:
                message = (f"DebugMode: the py and c outputs {k} of {node} have strides "
                           f"{a.strides} and {b.strides}")
                if level >= 2:
                    raise BadThunkOutput(message, node=node, output_index=k, kinds=("py", "c"),
                                         values=(a, b))
                warnings.warn(message, stacklevel=2)

    def _check_preallocated(self, i, node, thunk, impl_kind, before, reference, kind_name):
        ndim = self.mode.check_preallocated_output_ndim
        options = [preallocated_buffers(kind_name, ref, ndim) for ref in reference]
        n_variants = max((len(o) for o in options if o is not None), default=0)
        for variant in range(n_variants):
            buffers = [o[min(variant, len(o) - 1)] if o is not None else None for o in options]
            try:
                values, _ = self._run(thunk, before, buffers)
            except Exception as exc:
                raise BadThunkOutput(self._report(
                    f"DebugMode: {impl_kind} implementation of {node.op} failed when its "
                    f"output cells held a preallocated '{kind_name}' buffer: "
                    f"{type(exc).__name__}: {exc}", i, node, before), node=node,
                    kinds=(impl_kind, f"{impl_kind} with '{kind_name}' output")) from exc
            self._compare(i, node, before, reference, values,
                          (impl_kind, f"{impl_kind} with '{kind_name}' output"),
                          f" (preallocated '{kind_name}' output buffer)")


# ----------------------------------------------------------------------------------------------
# Verifying rewrites


def _definitions(history) -> dict:
    """node -> its inputs when it entered the graph (the original graph or a rewrite)."""
    defs = {record.node: record.inputs for record in getattr(history, "_original_nodes", ())}
    for step in history.steps:
        for record in step.added:
            defs.setdefault(record.node, record.inputs)
    return defs


def _evaluate(var, memo: dict, defs: dict):
    """The value of ``var`` computed with ``perform`` through each node's recorded inputs."""
    stack = [var]
    while stack:
        current = stack[-1]
        if current in memo:
            stack.pop()
            continue
        if isinstance(current, Constant):
            memo[current] = current.data
            stack.pop()
            continue
        node = current.owner
        if node is None:
            raise KeyError(f"DebugMode: no value for {current}")
        inputs = defs.get(node, node.inputs)
        missing = [v for v in inputs if v not in memo]
        if missing:
            stack.extend(missing)
            continue
        destroyed = {j for ins in node.op.destroy_map.values() for j in ins}
        values = [copy_value(memo[v]) if j in destroyed else memo[v]
                  for j, v in enumerate(inputs)]
        storage = [[None] for _ in node.outputs]
        node.op.perform(node, values, storage)
        for out, cell in zip(node.outputs, storage):
            memo[out] = cell[0]
        stack.pop()
    return memo[var]


def verify_rewrites(fgraph, input_values) -> None:
    """Check each step of ``fgraph.rewrite_history`` on these values of ``fgraph.inputs``;
    raise ``BadOptimization`` at the first replacement that changed a value."""
    history = fgraph.rewrite_history
    defs = _definitions(history)
    inputs = getattr(history, "_original_inputs", None) or fgraph.inputs
    memo = dict(zip(inputs, input_values))
    for step in history.steps:
        for old, new in step.replaced:
            try:
                old_value = _evaluate(old, memo, defs)
                new_value = _evaluate(new, memo, defs)
            except Exception as exc:  # a failing subgraph is the node checks' business
                warnings.warn(f"DebugMode: could not verify rewrite {step.name}: "
                              f"{type(exc).__name__}: {exc}", stacklevel=3)
                continue
            dtype = getattr(old.type, "dtype", None)
            old_value = np.asarray(old_value) if np.isscalar(old_value) else old_value
            new_value = np.asarray(new_value) if np.isscalar(new_value) else new_value
            unreliable = _unreliable_positions(old, memo, defs)
            if unreliable is not None and _same_layout(old_value, new_value):
                difference = _compare_past_overflow(old_value, new_value, dtype, unreliable)
            else:
                difference = compare(old_value, new_value, dtype)
            if difference is None:
                continue
            where = f" (defined at {step.location})" if step.location else ""
            raise BadOptimization(
                f"DebugMode: rewrite {step.name}{where} changed a value: it replaced {old} by "
                f"{new}, which compute different values on this call's inputs: "
                f"{difference['text']}\n  before: {_short(old_value)}\n  after:  "
                f"{_short(new_value)}\n" + _indent(str(step)) +
                (f"\n  the replaced node was created at {_user_line(old)}" if _user_line(old)
                 else ""),
                step=step, old=old, new=new, old_value=old_value, new_value=new_value,
                largest_difference=difference["diff"])


def _unreliable_positions(var, memo: dict, defs: dict):
    """Where the value of ``var`` tells little: a boolean array of its shape, True where it or
    an intermediate of its subgraph (broadcast to its shape) went past the float range
    (nan/inf; everywhere when that intermediate has another shape, before a reduction or a
    product), or where a sum or difference cancelled so many digits that fewer than the
    comparison's tolerance are left (``1 - sigmoid(16)`` in float32). Stabilizing rewrites
    change exactly such values, on purpose. None when there is no such position."""
    value = memo.get(var)
    if not isinstance(value, (np.ndarray, np.generic)):
        return None
    shape = np.shape(value)
    marked = np.zeros(shape, dtype=bool)

    def mark(bad):
        nonlocal marked
        try:
            marked |= np.broadcast_to(bad, shape)
        except ValueError:
            marked[...] = True

    seen, stack = set(), [var]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        v = memo.get(current)
        if _nonfinite_count(v):
            mark(~np.isfinite(np.asarray(v)))
        node = current.owner
        if node is None or isinstance(current, Constant):
            continue
        inputs = defs.get(node, node.inputs)
        cancelled = _cancelled(node, current, v, [memo.get(i) for i in inputs])
        if cancelled is not None:
            mark(cancelled)
        stack.extend(inputs)
    return marked if marked.any() else None


def _cancelled(node, out, value, input_values):
    """Where a float sum or difference lost digits to cancellation: |result| below eps/rtol
    of the magnitudes it summed. Those are the inputs' for an elementwise add/sub (broadcast
    to the result), the input's summed over the reduced axes for a ``Sum``. None for any other
    node. (A ``Sum``'s scalar op is an add too, but its input has another shape than its
    result: treated as elementwise it could not be broadcast.)"""
    dtype = getattr(out.type, "dtype", "")
    if not dtype.startswith("float"):
        return None
    if any(not isinstance(v, (np.ndarray, np.generic, float, int)) for v in input_values):
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, (ps.Add, ps.Sub)):
            magnitude = sum(np.abs(np.asarray(v, dtype=np.float64)) for v in input_values)
        elif isinstance(node.op, Sum):
            (x,) = input_values
            magnitude = np.sum(np.abs(np.asarray(x, dtype=np.float64)), axis=node.op.axis)
        else:
            return None
        rtol = TOLERANCES.get(dtype, (1e-6, 1e-8))[0]
        threshold = np.finfo(dtype).eps / rtol
        return np.abs(np.asarray(value, dtype=np.float64)) < threshold * magnitude


def _compare_past_overflow(old_value, new_value, dtype, unreliable):
    """For a replaced value whose computation overflowed or cancelled at the ``unreliable``
    positions, where stabilizing rewrites change values on purpose (and reassociating ones move
    the overflow): there a value may change, or a nan/inf become finite. Elsewhere values must
    agree as usual, and a finite value never becomes nan/inf."""
    old, new = np.asarray(old_value), np.asarray(new_value)
    worse = ~unreliable & np.isfinite(old) & ~np.isfinite(new)
    if worse.any():
        index = np.unravel_index(int(np.argmax(worse)), old.shape)
        return {"text": f"{int(worse.sum())} finite value(s) became nan/inf, first at {index}: "
                        f"{old[index]!r} became {new[index]!r}",
                "diff": float("inf"), "index": index, "a": old, "b": new}
    kept = ~unreliable
    return compare(np.where(kept, old, 0), np.where(kept, new, 0), dtype)


def _same_layout(old_value, new_value) -> bool:
    """Same shape and dtype (all that is compared when the replaced value overflowed)."""
    old, new = np.asarray(old_value), np.asarray(new_value)
    return old.shape == new.shape and old.dtype == new.dtype


def _user_line(var) -> str:
    return format_user_line(var.owner) if var.owner is not None else ""


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
