"""``scan``: a loop written as a step function, as Theano and PyTensor users write it.

::

    h, updates = scan(lambda x_t, h_prev, W: tt.tanh(tt.dot(h_prev, W) + x_t),
                      sequences=[X], outputs_info=[h0], non_sequences=[W])

The step function receives, in order: one argument per sequence tap (``x[t]``, or
``x[t + k]`` for each ``k`` of ``dict(input=x, taps=[...])``), one per past value of each
output fed back (``outputs_info``: an initial value for tap -1, or ``dict(initial=x0,
taps=[-2, -1])``; ``None`` for an output that is not fed back), then the non-sequences. It
returns its outputs (one or a list), optionally with a dict of shared-variable updates and an
``until(condition)`` to stop early, in any order.

Values the step reads without receiving them (variables of the enclosing code, shared
variables) become inputs of the loop computed once, outside it. Shared variables the step
updates (its returned updates, and default updates such as a ``RandomStream``'s generators)
become states of the loop: their final value is in the returned ``updates`` and becomes the
variable's ``default_update``, so the random state advances correctly from call to call
whether or not the caller passes ``updates`` to ``function``.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.graph.basic import (
    Constant,
    Variable,
    _variable_ids,
    ancestors,
    clone_replace,
    io_toposort,
)
from tensorgraph.graph.shared import SharedVariable
from tensorgraph.graph.utils import MissingInputError, TestValueError
from tensorgraph.scan.op import Scan, ScanInfo
from tensorgraph.scan.utils import label, plural, until
from tensorgraph.tensor.shape import as_int_scalar

__all__ = ["scan"]


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, profile=False,
         allow_gc=None, strict=False, return_list=False, return_updates=True):
    """Repeat ``fn`` over sequences and past outputs; return ``(outputs, updates)``.

    Parameters
    ----------
    fn : callable
        The step (see the module docstring for its arguments and what it returns).
    sequences : variable, dict(input=x, taps=[...]) or a list of them
        Iterated over their first axis (default tap 0).
    outputs_info : None, a value, dict(initial=x0, taps=[...]) or a list of them
        One entry per output of ``fn``: ``None`` (not fed back), an initial value (tap -1),
        or a dict with several negative taps (the initial value then has one row per step
        back, along a new first axis).
    non_sequences : variable or list
        Passed unchanged to every step.
    n_steps : int or integer scalar variable, optional
        The number of steps (the bound of a loop with ``until``). Without it, the sequences
        give it and must all give the same number.
    truncate_gradient : int
        Steps back-propagated through time by the gradient (-1: all).
    go_backwards : bool
        Iterate over the sequences from their end.
    mode : None or a mode for the step's graph (None: the mode of the function compiling it)
    name : str, shown in printing and errors
    profile : accepted for compatibility (the outer function's profile times the loop)
    allow_gc : None (``config.scan__allow_gc``) or whether the step frees its intermediate
        results after each iteration
    strict : bool
        Refuse values the step reads without receiving them (pass them as non_sequences).
    return_list : bool
        Return a list even for a single output.
    return_updates : bool
        Return ``(outputs, updates)`` (True, the default) or only ``outputs`` (PyTensor 3's
        new form: then the step may update shared variables only through their default
        updates, a ``RandomStream``'s draws; explicit updates raise a ValueError).

    Returns
    -------
    (outputs, updates)
        ``outputs``: per output of ``fn``, its value at every step (first axis: steps);
        ``updates``: an OrderedDict {shared variable: its value after the loop}.
    """
    if not callable(fn):
        raise TypeError(f"scan: fn must be callable, got {type(fn).__name__}")
    title = f"scan {name!r}" if name else "scan"
    seqs = _sequences(sequences, title)
    outs_info = _outputs_info(outputs_info, title)
    non_seqs = [_as_variable(v, f"{title}: non_sequences[{i}]")
                for i, v in enumerate(_as_list(non_sequences))]
    seq_labels = [label(x, "") for x, _ in seqs]
    if go_backwards:
        seqs = [(x[::-1], taps) for x, taps in seqs]
    if truncate_gradient != -1 and (not isinstance(truncate_gradient, (int, np.integer))
                                     or truncate_gradient <= 0):
        raise ValueError(f"{title}: truncate_gradient must be -1 (no truncation) or a "
                         f"positive number of steps, got {truncate_gradient!r}")

    # placeholders for what the step receives
    seq_args, seq_placeholders = [], []
    for j, (x, taps) in enumerate(seqs):
        per_tap = []
        for k in taps:
            ph = x.type.clone(shape=x.type.shape[1:])(_tap_name(seq_labels[j] or f"sequence {j}",
                                                                k))
            per_tap.append(ph)
        seq_placeholders.append(per_tap)
        seq_args.extend(per_tap)
    state_args, state_placeholders = [], []
    for k, entry in enumerate(outs_info):
        if entry is None:
            state_placeholders.append(None)
            continue
        init, taps = entry
        state_type = init.type.clone(shape=init.type.shape[1:]) if taps != (-1,) else init.type
        per_tap = [state_type(_tap_name(label(init, f"output {k}"), tap))
                   for tap in taps]
        state_placeholders.append(per_tap)
        state_args.extend(per_tap)
    shared_cls = SharedVariable
    _copy_test_values(seqs, seq_placeholders, outs_info, state_placeholders)

    # non-sequences are passed as themselves (as PyTensor does: the step may differentiate
    # an outer expression with respect to one) and replaced by placeholders afterwards
    created_before = _variable_count()
    with _test_values_if_available(seq_args + state_args, non_seqs):
        returned = fn(*seq_args, *state_args, *non_seqs)
    outputs, updates, condition = _parse_returned(returned, title)

    if outs_info and len(outs_info) != len(outputs):
        entries = "1 entry" if len(outs_info) == 1 else f"{len(outs_info)} entries"
        raise ValueError(
            f"{title}: the step function returned {plural(len(outputs), 'output')} but "
            f"outputs_info has {entries}; give one entry per output (None for an output "
            "that is not fed back)")
    if not outs_info:
        outs_info = [None] * len(outputs)
        state_placeholders = [None] * len(outputs)
    outputs = [_as_variable(o, f"{title}: output {i} of the step function")
               for i, o in enumerate(outputs)]
    for k, (entry, out) in enumerate(zip(outs_info, outputs)):
        if entry is not None:
            _check_state(title, k, entry[0], entry[1], out)

    # shared variables the loop updates: explicit updates, then the default updates of the
    # shared variables the step created (a RandomStream's generators of draws made in the
    # step; a draw made outside is a value of the loop's inputs, the same at every step)
    shared_updates = _shared_updates(updates, title)
    stop = [condition] if condition is not None else []
    reached = outputs + [u for _, u in shared_updates] + stop
    blockers = set(seq_args + state_args + non_seqs)
    explicit = {var for var, _ in shared_updates}
    defaults = []
    for var in _free_variables(reached, blockers):
        if (isinstance(var, shared_cls) and var not in explicit
                and var.default_update is not None and _created_after(var, created_before)):
            defaults.append((var, var.filter_update(var.default_update)))
    shared_updates += defaults
    shared_placeholders = [var.type(var.name) for var, _ in shared_updates]

    fed_back = [k for k, entry in enumerate(outs_info) if entry is not None]
    not_fed = [k for k, entry in enumerate(outs_info) if entry is None]
    inner_outputs = ([outputs[k] for k in fed_back] + [outputs[k] for k in not_fed]
                     + [u for _, u in shared_updates] + stop)
    replace = {var: ph for (var, _), ph in zip(shared_updates, shared_placeholders)}
    explicit_non_seq_placeholders, kept_non_seqs = [], []
    for v in non_seqs:
        if v in replace:  # updated by the loop (or given twice): not another non-sequence
            continue
        ph = replace[v] = v.type(v.name)
        if hasattr(v.tag, "test_value"):
            ph.tag.test_value = v.tag.test_value
        explicit_non_seq_placeholders.append(ph)
        kept_non_seqs.append(v)
    if replace:
        inner_outputs = clone_replace(inner_outputs, replace)

    placeholders = (seq_args + state_args + shared_placeholders + explicit_non_seq_placeholders)
    implicit = _implicit_inputs(inner_outputs, placeholders)
    if implicit and strict:
        raise MissingInputError(
            f"{title}: strict=True but the step function reads "
            f"{', '.join(str(v) for v in implicit[:5])} without receiving it; pass it in "
            "non_sequences")
    implicit_placeholders = [v.type(v.name) for v in implicit]
    if implicit:
        inner_outputs = clone_replace(inner_outputs, dict(zip(implicit, implicit_placeholders)))
    placeholders += implicit_placeholders
    outer_non_seqs = kept_non_seqs + implicit

    steps, lengths_must_match = _n_steps(n_steps, seqs, title, condition is not None)
    info = ScanInfo(seq_taps=[taps for _, taps in seqs],
                    state_taps=[outs_info[k][1] for k in fed_back],
                    n_nit_sot=len(not_fed), n_shared=len(shared_updates),
                    n_non_seqs=len(outer_non_seqs), as_while=condition is not None,
                    truncate_gradient=truncate_gradient,
                    lengths_must_match=lengths_must_match)
    labels = {"sequences": seq_labels,
              "states": [label(outputs[k], "") or label(outs_info[k][0], "") for k in fed_back],
              "nit_sot": [label(outputs[k], "") for k in not_fed],
              "shared": [label(var, "") for var, _ in shared_updates],
              "non_sequences": [label(v, "") for v in outer_non_seqs]}
    op = Scan(placeholders, inner_outputs, info, name=name, mode=mode, labels=labels,
              allow_gc=allow_gc)
    outer_inputs = ([x for x, _ in seqs] + [outs_info[k][0] for k in fed_back]
                    + [var for var, _ in shared_updates] + outer_non_seqs)
    results = op(steps, *outer_inputs)
    results = list(results) if isinstance(results, (list, tuple)) else [results]

    by_position = {}
    for slot, k in enumerate(fed_back + not_fed):
        by_position[k] = results[slot]
        if outputs[k].name:
            results[slot].name = outputs[k].name
    user_outputs = [by_position[k] for k in range(len(outputs))]
    finals = results[info.n_steps_outputs:]
    scan_updates = OrderedDict()
    for (var, _), final in zip(shared_updates, finals):
        scan_updates[var] = final
    for var, _ in defaults:  # the loop's final state replaces the step's own default update
        var.default_update = scan_updates[var]
    result = user_outputs if return_list or len(user_outputs) != 1 else user_outputs[0]
    if return_updates:
        return result, scan_updates
    explicit = [var for var in scan_updates if var not in dict(defaults)]
    if explicit:
        raise ValueError(f"{title}: return_updates=False but the step updates "
                         f"{', '.join(map(str, explicit))}; pass return_updates=True and give "
                         "the updates to function(), or carry the value with outputs_info")
    return result


# ----------------------------------------------------------------------------------------------
# Arguments


def _as_list(x) -> list:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _as_variable(value, what: str) -> Variable:
    if isinstance(value, Variable):
        return value
    try:
        return tt.as_tensor_variable(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be a symbolic variable or a value that becomes one, got "
                        f"{type(value).__name__}: {exc}") from None


def _sequences(sequences, title) -> list[tuple[Variable, tuple]]:
    result = []
    for j, entry in enumerate(_as_list(sequences)):
        taps = (0,)
        if isinstance(entry, dict):
            unknown = set(entry) - {"input", "taps"}
            if unknown or "input" not in entry:
                raise TypeError(f"{title}: sequences[{j}] must be a variable or "
                                f"dict(input=x, taps=[...]); got keys {sorted(entry)}")
            taps = entry.get("taps", [0])
            entry = entry["input"]
            if taps is None or (isinstance(taps, (list, tuple)) and not taps):
                raise ValueError(f"{title}: sequences[{j}] has no taps; give at least one "
                                 "(taps=[0] reads x[t])")
            taps = tuple(int(k) for k in _as_list(taps))
            if len(set(taps)) != len(taps):
                raise ValueError(f"{title}: sequences[{j}] has repeated taps {list(taps)}")
        x = _as_variable(entry, f"{title}: sequences[{j}]")
        if getattr(x.type, "ndim", 0) < 1:
            raise TypeError(f"{title}: sequences[{j}] ({x}) must have at least one dimension "
                            f"(scan iterates over its first axis), got {x.type}")
        result.append((x, taps))
    return result


def _outputs_info(outputs_info, title) -> list:
    """Per output: None, or (initial value, taps)."""
    result = []
    for k, entry in enumerate(_as_list(outputs_info)):
        taps = (-1,)
        if isinstance(entry, dict):
            unknown = set(entry) - {"initial", "taps"}
            if unknown:
                raise TypeError(f"{title}: outputs_info[{k}] has unknown keys "
                                f"{sorted(unknown)}; use dict(initial=x0, taps=[-2, -1])")
            if entry.get("initial") is None:
                result.append(None)
                continue
            taps = tuple(int(t) for t in _as_list(entry.get("taps", [-1])))
            entry = entry["initial"]
            if not taps or any(t >= 0 for t in taps) or len(set(taps)) != len(taps):
                raise ValueError(f"{title}: outputs_info[{k}] taps must be distinct negative "
                                 f"ints (-1 is the previous step), got {list(taps)}")
        if entry is None:
            result.append(None)
            continue
        init = _as_variable(entry, f"{title}: outputs_info[{k}]")
        if taps != (-1,) and getattr(init.type, "ndim", 0) < 1:
            raise TypeError(f"{title}: outputs_info[{k}] reads taps {list(taps)}, so its "
                            f"initial value needs a first axis of past steps; got {init.type}")
        result.append((init, taps))
    return result


def _tap_name(base: str, tap: int) -> str:
    if tap == 0:
        return f"{base}[t]"
    return f"{base}[t{tap:+d}]"


def _n_steps(n_steps, seqs, title, as_while) -> tuple:
    """(n_steps variable, whether the sequences must all give that many steps)."""
    if n_steps is not None:
        if isinstance(n_steps, Variable):
            return as_int_scalar(n_steps, f"{title}: n_steps"), False
        if not isinstance(n_steps, (int, np.integer)) or isinstance(n_steps, bool):
            raise TypeError(f"{title}: n_steps must be an int or an integer scalar variable, "
                            f"got {type(n_steps).__name__}: {n_steps!r}")
        if n_steps < 0:
            raise ValueError(f"{title}: n_steps is {n_steps}; the number of steps cannot be "
                             "negative")
        return tt.constant(int(n_steps), dtype="int64"), False
    if not seqs:
        what = "the bound of the while loop (until)" if as_while else "the number of steps"
        raise ValueError(f"{title}: give n_steps ({what}) or at least one sequence")
    x, taps = seqs[0]
    span = max(max(taps), 0) - min(min(taps), 0)
    if x.type.shape[0] is not None and x.type.shape[0] >= span:
        steps = tt.constant(x.type.shape[0] - span, dtype="int64")
    else:
        steps = x.shape[0] - span if span else x.shape[0]
    return steps, True


def _check_state(title, k, init, taps, out) -> None:
    """The initial value of output ``k`` and the step's result agree in dtype, ndim and the
    sizes both know."""
    state_type = init.type
    if taps != (-1,):
        state_type = init.type.clone(shape=init.type.shape[1:])
    out_type = out.type
    if not hasattr(out_type, "dtype") or not hasattr(state_type, "dtype"):
        if out_type != state_type:
            raise TypeError(f"{title}: output {k}: outputs_info gives {state_type} but the "
                            f"step function returns {out_type}")
        return
    what = (f"{title}: output {k}{' (' + out.name + ')' if out.name else ''}: "
            f"outputs_info gives {_describe(state_type)} but the step function returns "
            f"{_describe(out_type)}")
    if state_type.ndim != out_type.ndim:
        raise TypeError(f"{what}; the initial value must be what one step returns"
                        + (" (with a first axis of past steps for taps other than [-1])"
                           if taps != (-1,) else ""))
    if state_type.dtype != out_type.dtype:
        raise TypeError(f"{what}; make them agree, e.g. tt.cast(initial, "
                        f"{out_type.dtype!r}) or cast the step's result to "
                        f"{state_type.dtype!r}")
    for d, (a, b) in enumerate(zip(state_type.shape, out_type.shape)):
        if a is not None and b is not None and a != b:
            raise ValueError(f"{what}: the sizes differ along axis {d} ({a} != {b})")


def _describe(t) -> str:
    kind = {0: "a scalar", 1: "a vector", 2: "a matrix"}.get(t.ndim, f"a {t.ndim}-d tensor")
    dims = ", ".join("?" if s is None else str(s) for s in t.shape)
    return f"{kind} of {t.dtype} (shape ({dims}{',' if t.ndim == 1 else ''}))"


# ----------------------------------------------------------------------------------------------
# What the step returned, and what it reads


def _parse_returned(returned, title):
    """(outputs, updates, condition) from what the step function returned."""
    outputs, updates, condition = None, None, None

    def take(item):
        nonlocal outputs, updates, condition
        if isinstance(item, until):
            if condition is not None:
                raise ValueError(f"{title}: the step function returned until(...) twice")
            condition = item.condition
        elif _looks_like_updates(item):
            if updates is not None:
                raise ValueError(f"{title}: the step function returned two dicts of updates")
            updates = item
        else:
            if outputs is not None:
                raise ValueError(f"{title}: the step function returned its outputs twice; "
                                 "return (outputs, updates) or (outputs, until(cond))")
            outputs = item

    if (isinstance(returned, until) or _looks_like_updates(returned)
            or not isinstance(returned, (list, tuple))):
        take(returned)
    elif any(isinstance(r, until) or _looks_like_updates(r) for r in returned):
        for item in returned:
            take(item)
    else:
        take(list(returned))
    if outputs is None:
        outputs = []
    elif isinstance(outputs, (list, tuple)):
        outputs = list(outputs)
    else:
        outputs = [outputs]
    if any(o is None for o in outputs):
        raise TypeError(f"{title}: the step function returned None among its outputs")
    return outputs, updates or {}, condition


def _variable_count() -> int:
    """A number every variable created from now on exceeds in ``_created_after``."""
    return next(_variable_ids)


def _created_after(var, count: int) -> bool:
    return int(var.auto_name.rpartition("_")[2]) > count


def _looks_like_updates(item) -> bool:
    """A dict, or a non-empty list of (shared variable, new value) pairs."""
    if isinstance(item, dict):
        return True
    shared_cls = SharedVariable
    return (isinstance(item, (list, tuple)) and bool(item)
            and all(isinstance(p, (list, tuple)) and len(p) == 2
                    and isinstance(p[0], shared_cls) for p in item))


def _shared_updates(updates, title) -> list:
    shared_cls = SharedVariable
    items = list(updates.items()) if isinstance(updates, dict) else list(updates)
    pairs = []
    for var, value in items:
        if not isinstance(var, shared_cls):
            raise TypeError(f"{title}: the step function's updates may only update shared "
                            f"variables; {var!r} is not one")
        pairs.append((var, var.filter_update(value)))
    return pairs


def _free_variables(outputs, blockers) -> list:
    """Graph inputs ``outputs`` reach, stopping at ``blockers`` (constants left out)."""
    found = []
    for v in ancestors(outputs, blockers):
        if (v.owner is None or v in blockers) and not isinstance(v, Constant):
            found.append(v)
    return found


def _implicit_inputs(outputs, placeholders) -> list:
    """The values the inner graph reads besides its placeholders: the largest expressions
    that do not depend on any placeholder (computed once, outside the loop)."""
    placeholders = set(placeholders)
    roots = [v for v in ancestors(outputs, placeholders) if v.owner is None or v in placeholders]
    nodes = io_toposort(roots, outputs)
    varying = set(placeholders)
    constant = {v for v in roots if isinstance(v, Constant)}  # stays inside: folded there
    for node in nodes:
        if any(inp in varying for inp in node.inputs):
            varying.update(node.outputs)
        elif all(inp in constant for inp in node.inputs):
            constant.update(node.outputs)
    found, seen = [], set()

    def keep(var):
        if var not in varying and var not in constant and var not in seen:
            seen.add(var)
            found.append(var)

    for node in nodes:
        if any(out in varying for out in node.outputs):
            for inp in node.inputs:
                keep(inp)
    for out in outputs:
        keep(out)
    return found


# ----------------------------------------------------------------------------------------------
# Test values


def _copy_test_values(seqs, seq_placeholders, outs_info, state_placeholders) -> None:
    """Give the placeholders test values from the outer ones (x[t] <- x[0], ...) when test
    values are on and the outer variables have one."""
    if config.compute_test_value == "off":
        return
    try:
        for (x, taps), per_tap in zip(seqs, seq_placeholders):
            value = x.get_test_value()
            lo = min(min(taps), 0)
            for k, ph in zip(taps, per_tap):
                ph.tag.test_value = value[k - lo]
        for entry, per_tap in zip(outs_info, state_placeholders):
            if entry is None:
                continue
            init, taps = entry
            value = init.get_test_value()
            length = -min(taps)
            for tap, ph in zip(taps, per_tap):
                ph.tag.test_value = value if taps == (-1,) else value[length + tap]
    except (TestValueError, IndexError, TypeError, ValueError):
        pass


class _test_values_if_available:
    """Build the step with test values only when every argument has one."""

    def __init__(self, placeholders, outer):
        self.placeholders = placeholders
        self.outer = outer
        self.flags = None

    def __enter__(self):
        missing = any(not hasattr(ph.tag, "test_value") for ph in self.placeholders)
        for v in self.outer:
            try:
                v.get_test_value()
            except TestValueError:
                missing = True
        if config.compute_test_value != "off" and missing:
            self.flags = config.change_flags(compute_test_value="off")
            self.flags.__enter__()

    def __exit__(self, *exc):
        if self.flags is not None:
            self.flags.__exit__(*exc)
