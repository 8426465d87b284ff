"""``NanGuardMode``: stop at the first node that produces nan, inf or huge values.

After every node of every call the node's outputs are checked; the graph inputs are checked
before the first node reading them runs. The report names the *first* node that produced a bad
value (so it is the culprit, not a victim downstream): its user source line, which output, how
many elements are nan / inf / big (|x| > 1e10), and a short summary of the node's inputs::

    f = tensorgraph.function([x], tt.log(x), mode="NanGuardMode")
    f([0.0, 1.0])   # NanGuardError: NanGuardMode: output 0 of Elemwise{log} has 1 inf ...

What counts as an error follows the constructor arguments, or, when left as None, the
``NanGuardMode__nan_is_error`` / ``__inf_is_error`` / ``__big_is_error`` flags;
``NanGuardMode__action`` says whether to raise, warn or drop into pdb. Only float and complex
values are checked (integers cannot be nan or inf).
"""

from __future__ import annotations

import pdb
import warnings

import numpy as np

from tensorgraph.compile.monitormode import HookMode, add_hooks
from tensorgraph.configdefaults import config
from tensorgraph.graph.errors import node_report

#: |x| above this counts as "big"
BIG = 1e10


class NanGuardError(AssertionError):
    """A node produced (or the function was given) a nan, inf or big value."""


def count_bad(value, nan: bool, inf: bool, big: bool) -> dict:
    """{'nan': n, 'inf': n, 'big': n} for the kinds asked for and present in ``value``."""
    if not isinstance(value, (np.ndarray, np.generic, float, complex)):
        return {}
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc":
        return {}
    found = {}
    finite = None
    if nan:
        n = int(np.count_nonzero(np.isnan(arr)))
        if n:
            found["nan"] = n
    if inf:
        n = int(np.count_nonzero(np.isinf(arr)))
        if n:
            found["inf"] = n
    if big:
        finite = np.isfinite(arr)
        n = int(np.count_nonzero(np.abs(arr[finite]) > BIG)) if finite.any() else 0
        if n:
            found["big"] = n
    return found


def summarize_value(value) -> str:
    """``float64 (3,) min=-1 max=2.5 nan=1`` style one-liner for error reports."""
    if value is None:
        return "not computed"
    if not isinstance(value, (np.ndarray, np.generic)):
        return f"{type(value).__name__} {repr(value)[:40]}"
    arr = np.asarray(value)
    text = f"{arr.dtype} {tuple(arr.shape)}"
    if arr.size == 0 or arr.dtype.kind not in "biufc":
        return text
    if arr.dtype.kind in "fc":
        finite = arr[np.isfinite(arr)]
        n_nan = int(np.count_nonzero(np.isnan(arr)))
        n_inf = int(np.count_nonzero(np.isinf(arr)))
        if finite.size:
            text += f" min={finite.real.min():.4g} max={finite.real.max():.4g}"
        if n_nan:
            text += f" nan={n_nan}"
        if n_inf:
            text += f" inf={n_inf}"
        return text
    return text + f" min={arr.min()} max={arr.max()}"


def _counts_text(found: dict, size: int) -> str:
    parts = [f"{n} {kind}" for kind, n in found.items()]
    return ", ".join(parts) + f" (of {size} element{'s' if size != 1 else ''})"


class NanGuardMode(HookMode):
    """Check every node's inputs and outputs for nan, inf and |x| > 1e10.

    Parameters
    ----------
    nan_is_error, inf_is_error, big_is_error : bool or None
        None: the ``NanGuardMode__*_is_error`` flags (read when the function is compiled).
    action : 'raise', 'warn', 'pdb' or None (``NanGuardMode__action``)
    optimizer : rewrite preset ('default': ``config.optimizer``)
    linker : linker name (None: ``config.linker``, the Python VM while no C linker exists)
    """

    def __init__(self, nan_is_error=None, inf_is_error=None, big_is_error=None,
                 optimizer="default", linker=None, action=None):
        super().__init__(linker, optimizer)
        self.nan_is_error = nan_is_error
        self.inf_is_error = inf_is_error
        self.big_is_error = big_is_error
        if action not in (None, "raise", "warn", "pdb"):
            raise ValueError(f"NanGuardMode(action=...) must be 'raise', 'warn' or 'pdb', got "
                             f"{action!r}")
        self.action = action

    def settings(self) -> tuple[bool, bool, bool, str]:
        """(nan, inf, big, action) with the flags filled in for the arguments left as None."""
        def pick(value, flag):
            return bool(getattr(config, flag)) if value is None else bool(value)

        return (pick(self.nan_is_error, "NanGuardMode__nan_is_error"),
                pick(self.inf_is_error, "NanGuardMode__inf_is_error"),
                pick(self.big_is_error, "NanGuardMode__big_is_error"),
                self.action or config.NanGuardMode__action)

    def install_hooks(self, vm) -> None:
        nan, inf, big, action = self.settings()
        if not (nan or inf or big):
            return
        graph_inputs = set(vm.fgraph.inputs)

        def report(message):
            if action == "raise":
                raise NanGuardError(message)
            if action == "warn":
                warnings.warn(message, RuntimeWarning, stacklevel=2)
            else:
                print(message)
                pdb.set_trace()

        def pre(i, node, thunk):
            __tracebackhide__ = True  # noqa: F841 - IPython: the user's frame first
            # graph inputs are nobody's output: check them before a node reads them
            for k, (var, cell) in enumerate(zip(node.inputs, thunk.inputs)):
                if var in graph_inputs:
                    found = count_bad(cell[0], nan, inf, big)
                    if found:
                        report(node_report(
                            f"NanGuardMode: graph input {var} has "
                            f"{_counts_text(found, np.size(cell[0]))}; it is input {k} of "
                            f"the node below", node, [c[0] for c in thunk.inputs], i,
                            describe=summarize_value, fgraph=vm.fgraph))

        def post(i, node, thunk):
            __tracebackhide__ = True  # noqa: F841 - IPython: the user's frame first
            for k, cell in enumerate(thunk.outputs):
                found = count_bad(cell[0], nan, inf, big)
                if found and not any(count_bad(c[0], nan, inf, big) for c in thunk.inputs):
                    # (with 'warn', nodes reading a reported value are its victims: skipped)
                    out = node.outputs[k]
                    label = f" ({out.name})" if out.name else ""
                    report(node_report(
                        f"NanGuardMode: output {k}{label} of {node.op} has "
                        f"{_counts_text(found, np.size(cell[0]))}; this is the first node "
                        "that produced such a value", node, [c[0] for c in thunk.inputs], i,
                        describe=summarize_value, fgraph=vm.fgraph))

        add_hooks(vm, pre, post)

    def __repr__(self):
        return (f"NanGuardMode(nan_is_error={self.nan_is_error}, inf_is_error="
                f"{self.inf_is_error}, big_is_error={self.big_is_error}, linker="
                f"{self.linker_name!r}, optimizer={self.optimizer!r})")
