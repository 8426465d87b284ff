"""``compare``: compile one graph in several modes and measure them side by side.

    cmp = tgn.compare([prediction, xent], [x, y], updates=updates, args=D,
                      modes=["FAST_RUN", "JAX", "NUMBA", "PYTORCH"])
    cmp.rows          # one dict per mode: compile times, call times, agreement, nodes, error
    cmp.function("JAX")   # that mode's compiled function
    cmp                   # (with the extension loaded) the comparison widget

It answers "which back end is fastest for *my* graph?" with numbers measured here, on the
user's arguments. What each number means (the docs say the same, docs/backends.md):

* ``compile_cold``: seconds from ``function()`` to the first call's result in a new Python
  process whose compile directory is empty, so nothing of this graph is cached (not the C
  modules, not the rewritten graph, not XLA's or Numba's cache). Before the clock starts the
  process has imported tensorgraph and compiled a tiny unrelated graph in the mode, so the
  number leaves out importing the back end's library and starting its compiler (one-time
  costs of a process, not of a graph). The first call is inside the number because JAX
  compiles at the first call when input shapes are open, and FAST_RUN's optimized C may still
  be compiling in the background (``compile__tiers``): it is waited for.
* ``compile_warm``: the same, in a new process with this process's compile directory, which
  compiling the mode here has just filled: what a restarted kernel pays for a graph compiled
  before (C modules and rewritten graph from the cache, XLA's persistent cache, Numba's cache).
  The fresh processes run side by side, one per core (``compare_compiles``).
* ``call_median`` and the spread ``call_p25``/``call_p75`` (``call_min``/``call_max``): seconds
  per call in this process, each call timed alone, after one call that is not counted, at most
  ``repeat`` calls and no more than ``budget`` seconds (at least 3 calls).
* ``outputs``: per output (and per updated shared variable, after one call from the same
  state), its dtype, shape, the largest absolute difference from the reference (the first mode
  that ran) and whether it agrees: same dtype and shape, values within the dtype's tolerance.

``compare`` returns once the per-call part is measured when ``wait=False`` (what
``%tg_compare`` does): the compile columns then fill in the background, the widget shows them
as they come with a progress line and a cancel button, and ``cmp.wait()`` / ``cmp.cancel()`` /
``cmp.done`` / ``cmp.progress`` are the same from a script.

A PyTensor function (or a PyMC compiled function: ``compile_logp``'s, a ``ValueGradFunction``)
compares too: its row ``TENSORGRAPH`` (the function in PyTensor mode TENSORGRAPH), the
tensorgraph modes on the graph that mode converted, and rows ``PyTensor C`` and ``PyTensor
NUMBA`` (``pytensor_modes``): the same PyTensor graph compiled by PyTensor in its own modes
(``compare_pytensor``; PyTensor is imported only then). ``args`` may then be a PyMC point (a
dict by the inputs' names).

A mode whose library is missing or which fails to compile or run the graph is a row with
``error`` (the error's first line); the comparison goes on. Shared variables are put back to
their values before the comparison after each mode's calls, so every mode starts from the same
state and the comparison changes nothing. The two fresh processes per mode need the graph and
the arguments to pickle; when they do not, the compile times are None with a ``compile_note``.
"""

from __future__ import annotations

import copy
import pickle
import threading
import time

import numpy as np

from tensorgraph.notebook.compare_compiles import MEASURING, CompileTimes
from tensorgraph.notebook.compare_pytensor import (
    PyTensorRows,
    graph_text,
    pytensor_function_of,
)
from tensorgraph.notebook.compare_pytensor import results as pytensor_results
from tensorgraph.notebook.compare_worker import first_line

__all__ = ["compare", "Comparison", "DEFAULT_MODES"]

DEFAULT_MODES = ("FAST_RUN", "JAX", "NUMBA", "PYTORCH")
#: tolerance (relative and absolute) of a float comparison, by the coarser dtype of the two
TOLERANCE = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-7, "complex64": 1e-4,
             "complex128": 1e-7}


def compare(outputs, inputs=None, modes=DEFAULT_MODES, args=(), *, updates=None, givens=None,
            repeat: int = 50, budget: float = 1.0, compile_times: bool | list = True,
            timeout: float = 300.0, name: str | None = None, wait: bool = True,
            pytensor_modes=("C", "NUMBA")) -> Comparison:
    """Compile ``outputs`` of ``inputs`` (with ``updates``, ``givens``) in each of ``modes``,
    call each compiled function with ``args`` and measure (see the module docstring).

    ``outputs`` may also be a compiled Function: its graph as it was given (inputs, outputs,
    updates) is compiled again in each mode. ``compile_times``: True measures the cold and
    warm compile times of every mode (two fresh processes per mode: a few seconds each, more
    for PYTORCH, whose processes import torch and start Inductor), a list of modes measures
    those only, False none (the times are then None, with a ``compile_note``). Every row has
    ``compile_here`` anyway: the seconds this process took to compile the mode, with whatever
    its caches held. ``timeout``: seconds each fresh process may take. ``wait=False``: return
    once the calls are measured and measure the compile times in the background.

    ``outputs`` may be a PyTensor function or a PyMC compiled function (see the module
    docstring): ``pytensor_modes`` are then PyTensor's modes compared beside TENSORGRAPH
    (``"C"``: PyTensor's FAST_RUN, ``"NUMBA"``, or any PyTensor mode name).

    >>> cmp = compare(y, [x], ["FAST_RUN", "JAX"], args=(data,))   # doctest: +SKIP
    >>> cmp.fastest(), cmp.row("JAX")["agrees"]                     # doctest: +SKIP
    ('FAST_RUN', True)
    """
    if isinstance(modes, str):
        modes = [m.strip() for m in modes.split(",") if m.strip()]
    modes = list(dict.fromkeys(modes))
    if not modes:
        raise ValueError("compare: give at least one mode, e.g. modes=['FAST_RUN', 'JAX']")
    if not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"compare: repeat must be an integer >= 1, got {repeat!r}")
    if not budget > 0:
        raise ValueError(f"compare: budget must be > 0 seconds, got {budget!r}")
    pt_fn, pt_rows = pytensor_function_of(outputs), None
    if (pt_fn is not None or hasattr(outputs, "maker")) and (
            inputs is not None or updates is not None or givens is not None):
        raise TypeError("compare(f, ...): a compiled function brings its inputs, updates "
                        "and givens; give args=... only")
    if pt_fn is not None:
        pt_rows = PyTensorRows(pt_fn, list(pytensor_modes))
        name = name or pt_fn.name
        args = pt_rows.arguments(args)
        inputs, outputs, updates = (_given_graph(pt_rows.tg_function)
                                    if pt_rows.tg_function is not None else ([], [], None))
    elif hasattr(outputs, "maker"):
        name = name or outputs.name
        inputs, outputs, updates = _given_graph(outputs)
    elif inputs is None:
        raise TypeError("compare(outputs, inputs, ...): inputs is missing (a list of symbolic "
                        "inputs), or pass a compiled function as the first argument")
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    graph = {"inputs": list(inputs), "outputs": outputs,
             "updates": _pairs(updates), "givens": givens}
    cmp = Comparison(modes, graph, args, repeat=repeat, budget=budget,
                     compile_times=compile_times, timeout=timeout, name=name, pytensor=pt_rows)
    if wait:
        cmp.wait()
    return cmp


class Comparison:
    """The measurements of ``compare`` (see the module docstring): ``rows`` (plain data),
    ``table()`` (the rows as text), ``function(mode)``, ``graph_text(mode)``, ``fastest()``.
    With the extension loaded it displays as the comparison widget (``view()``).

    >>> cmp = tgn.compare(train, args=D)                             # doctest: +SKIP
    >>> [(r["mode"], r["call_median"]) for r in cmp.rows]             # doctest: +SKIP
    [('FAST_RUN', 3.3e-05), ('JAX', 0.00051), ('NUMBA', 4.9e-05), ('PYTORCH', 0.00016)]
    """

    def __init__(self, modes, graph, args, *, repeat, budget, compile_times, timeout, name,
                 pytensor=None):
        self.args = args
        self._pt = pytensor
        self.name = name or "compare"
        self.repeat, self.budget = repeat, budget
        self._timeout = timeout
        self._functions: dict = {}
        self._errors: dict = {}
        self._compiles: CompileTimes | None = None
        self._listeners: list = []
        self._listeners_lock = threading.Lock()
        self._tg_args = args
        tg_modes = list(modes)
        if pytensor is not None:
            self._tg_args = pytensor.tg_arguments(args)
            names = pytensor.names
            self.rows: list[dict] = [self._pytensor_row(names[0])]
            self.rows += [self._compile(mode, graph) if pytensor.tg_function is not None else
                          self._failed(_blank_row(mode), RuntimeError(
                              "the function did not compile in PyTensor mode TENSORGRAPH"))
                          for mode in tg_modes]
            self.rows += [self._pytensor_row(n) for n in names[1:]]
        else:
            self.rows = [self._compile(mode, graph) for mode in tg_modes]
        self.modes = [r["mode"] for r in self.rows]
        self._measure_calls()
        measured = (tg_modes if compile_times is True
                    else [] if not compile_times else list(compile_times))
        for row in self.rows:
            if row["mode"] not in tg_modes:
                continue  # PyTensor's rows say why they have no compile times
            if row["mode"] not in measured:
                row["compile_note"] = ("not measured (compile_times=False; %tg_compare "
                                       "--no-compile-times)")
        if measured:
            self._measure_compiles(graph, measured)

    # -- what scripts use ---------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether the compile times are all measured (or cancelled, or none were asked)."""
        return self._compiles is None or self._compiles.done

    @property
    def progress(self) -> tuple[int, int]:
        """(compile measurements finished, in all): two fresh processes per measured mode."""
        return (0, 0) if self._compiles is None else self._compiles.progress

    def wait(self, timeout: float | None = None) -> Comparison:
        """Block until the compile times are measured (at most ``timeout`` seconds); the
        comparison."""
        if self._compiles is not None:
            self._compiles.wait(timeout)
        return self

    def cancel(self) -> Comparison:
        """Stop measuring compile times: the running processes are killed, the rows not yet
        measured say "cancelled"; the comparison."""
        if self._compiles is not None:
            self._compiles.cancel()
        return self

    def on_change(self, callback) -> None:
        """Call ``callback()`` (from a background thread) whenever a compile time comes in."""
        with self._listeners_lock:
            self._listeners.append(callback)

    @property
    def reference(self) -> str | None:
        """The mode the others are compared with: the first mode that ran."""
        return next((r["mode"] for r in self.rows if r["error"] is None), None)

    def row(self, mode: str) -> dict:
        """The row of ``mode``."""
        for r in self.rows:
            if r["mode"] == mode:
                return r
        raise KeyError(f"{mode!r} was not compared; the modes are {', '.join(self.modes)}")

    def function(self, mode: str):
        """The function compiled in ``mode`` (the one whose calls were timed); a mode that
        failed raises its error again, as a RuntimeError naming the mode."""
        self.row(mode)
        if mode not in self._functions:
            raise RuntimeError(f"mode {mode} did not compile or run this graph: "
                               f"{self._errors[mode]}") from self._errors[mode]
        return self._functions[mode]

    def graph_function(self, mode: str):
        """The tensorgraph Function whose graph ``mode`` runs (the graph view shows it): the
        compiled function of a tensorgraph mode, the one behind row TENSORGRAPH, or None for
        PyTensor's own modes (their graph is PyTensor's: ``graph_text``)."""
        fn = self.function(mode)
        if self._pt is None or mode not in self._pt.rows:
            return fn
        if mode == self._pt.names[0]:
            from tensorgraph.pytensor import unwrap

            return unwrap(fn)
        return None

    def graph_text(self, mode: str) -> str:
        """``mode``'s graph after rewriting, as ``dprint`` prints it (its node ids are the ones
        the graph view and errors use); PyTensor's ``debugprint`` for PyTensor's modes."""
        from tensorgraph.printing import debugprint

        fn = self.graph_function(mode)
        if fn is None:
            return graph_text(self.function(mode))
        return debugprint(fn, file="str")

    def fastest(self) -> str | None:
        """The mode with the smallest median time per call among those that ran and agree
        with the reference (None when none did)."""
        timed = [r for r in self.rows if r["call_median"] is not None and r["agrees"] is not False]
        return min(timed, key=lambda r: r["call_median"])["mode"] if timed else None

    def table(self) -> str:
        """The rows as a plain text table (what ``print(cmp)`` shows)."""
        head = ["mode", "compile cold", "compile warm", "call median", "p25-p75", "agrees",
                "max |diff|", "nodes"]
        lines = []
        for r in self.rows:
            if r["error"] is not None:
                lines.append([r["mode"], f"error: {r['error']}"])
                continue
            pending = "..." if r["compile_note"] == MEASURING else "-"
            lines.append([r["mode"], _seconds(r["compile_cold"], pending),
                          _seconds(r["compile_warm"], pending),
                          _seconds(r["call_median"]),
                          f"{_seconds(r['call_p25'])}-{_seconds(r['call_p75'])}",
                          "reference" if r["agrees"] is None else ("yes" if r["agrees"] else "NO"),
                          _diff(r["max_abs_diff"]), str(r["nodes"])])
        widths = [max([len(h), *(len(line[k]) for line in lines if len(line) > 2)])
                  for k, h in enumerate(head)]  # every mode may have failed (no full line)
        text = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
        for line in lines:
            if len(line) == 2:
                text.append(f"{line[0].ljust(widths[0])}  {line[1]}")
            else:
                text.append("  ".join(c.ljust(w) for c, w in zip(line, widths)))
        notes: dict = {}  # note -> the modes it is about (a note alone read as if for all)
        for r in self.rows:
            if r["error"] is None and r["compile_note"]:
                notes.setdefault(r["compile_note"], []).append(r["mode"])
        return "\n".join(text + [f"compile times of {', '.join(modes)}: {n}"
                                 for n, modes in sorted(notes.items())])

    def view(self):
        """The comparison widget (``compare_view.CompareView``)."""
        from tensorgraph.notebook.compare_view import CompareView

        return CompareView(self)

    def __repr__(self) -> str:
        return f"<Comparison {self.name}: {', '.join(self.modes)}>\n{self.table()}"

    # -- measuring ----------------------------------------------------------------------------

    def _pytensor_row(self, name: str) -> dict:
        row, fn, error = self._pt.row(name, _blank_row(name))
        if error is not None:
            self._errors[name] = error
        else:
            self._functions[name] = fn
        return row

    def _compile(self, mode: str, graph: dict) -> dict:
        from tensorgraph.compile.function import function

        row = _blank_row(mode)
        started = time.perf_counter()
        try:
            fn = function(graph["inputs"], graph["outputs"], updates=graph["updates"],
                          givens=graph["givens"], mode=mode, on_unused_input="ignore",
                          name=f"{self.name}[{mode}]")
            if getattr(fn, "wait_optimized", None) is not None:
                fn.wait_optimized()
        except Exception as exc:  # noqa: BLE001 - a mode that fails is a row, not the end
            return self._failed(row, exc)
        row["compile_here"] = time.perf_counter() - started
        row["nodes"] = len(fn.maker.fgraph.apply_nodes)
        record = getattr(fn.maker, "compile_record", None)
        row["summary"] = record.summary() if record is not None else ""
        self._functions[mode] = fn
        return row

    def _failed(self, row: dict, exc: BaseException) -> dict:
        self._errors[row["mode"]] = exc
        self._functions.pop(row["mode"], None)
        row["error"] = first_line(exc)
        return row

    def _measure_calls(self) -> None:
        shared = _shared_of(self._functions.values())
        if self._pt is not None:
            shared += [s for s in self._pt.shared() if all(s is not t for t in shared)]
        saved = [(s, copy.deepcopy(s.get_value(borrow=False))) for s in shared]
        reference = None
        try:
            for row in self.rows:
                fn = self._functions.get(row["mode"])
                if fn is None:
                    continue
                _restore(saved)
                pytensor_row = self._pt is not None and row["mode"] in self._pt.rows
                args = self.args if pytensor_row else self._tg_args
                try:
                    if pytensor_row:
                        results = pytensor_results(fn, args)
                    else:
                        results = _results(fn, args)
                    times = _timed_calls(fn, args, self.repeat, self.budget)
                except Exception as exc:  # noqa: BLE001 - see _compile
                    self._failed(row, exc)
                    continue
                row.update(_spread(times))
                if reference is None:
                    reference = results
                    row["outputs"] = [_described(n, v) for n, v in results]
                    continue
                row["outputs"] = [_agreement(n, v, ref) for (n, v), (_, ref)
                                  in zip(results, reference)]
                row["agrees"] = all(o["agrees"] for o in row["outputs"])
                diffs = [o["max_abs_diff"] for o in row["outputs"] if o["max_abs_diff"] is not None]
                row["max_abs_diff"] = max(diffs) if diffs else None
        finally:
            _restore(saved)

    def _measure_compiles(self, graph: dict, measured: list) -> None:
        from tensorgraph.configdefaults import config

        flags = {}
        for name in config:
            info = config.info(name)
            if info.mutable and not info.is_default:
                flags[name] = info.value
        try:
            job = pickle.dumps({"graph": graph, "args": self._tg_args,
                                "flags": _picklable(flags)}, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - a graph or argument that does not pickle
            for row in self.rows:
                if self._pt is None or row["mode"] not in self._pt.rows:
                    row["compile_note"] = (f"not measured: the graph or the arguments do not "
                                           f"pickle ({first_line(exc)})")
            return
        modes = [r["mode"] for r in self.rows if r["error"] is None and r["mode"] in measured
                 and (self._pt is None or r["mode"] not in self._pt.rows)]
        if modes:
            self._compiles = CompileTimes(self.rows, modes, job, timeout=self._timeout,
                                          on_change=self._changed)

    def _changed(self) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for callback in listeners:
            callback()


def _blank_row(mode: str) -> dict:
    return {"mode": mode, "error": None, "compile_here": None, "compile_cold": None,
            "compile_warm": None, "compile_note": None, "call_median": None, "call_p25": None,
            "call_p75": None, "call_min": None, "call_max": None, "calls": 0, "outputs": [],
            "agrees": None, "max_abs_diff": None, "nodes": None, "summary": ""}


def _given_graph(fn):
    """(inputs, outputs, updates) of a compiled function's graph as it was given."""
    maker = fn.maker
    n_out = len(maker.outputs)
    inputs = maker.inputs
    computed = maker.original_graph[1]
    outputs = computed[:n_out]
    if maker.unpack_single and n_out == 1:
        outputs = outputs[0]
    updates = list(zip(maker.update_targets, computed[n_out:]))
    return inputs, outputs, updates


def _pairs(updates):
    if updates is None:
        return None
    return list(updates.items()) if isinstance(updates, dict) else list(updates)


def _shared_of(functions) -> list:
    seen, shared = set(), []
    for fn in functions:
        for s in getattr(fn.maker, "shared_inputs", ()):  # PyTensor's: compare_pytensor
            if id(s) not in seen:
                seen.add(id(s))
                shared.append(s)
    return shared


def _restore(saved) -> None:
    for s, value in saved:
        s.set_value(copy.deepcopy(value))


def _results(fn, args) -> list[tuple[str, object]]:
    """(name, value) of every output of one call, then of every updated shared variable."""
    out = fn(*args)
    values = [out] if fn.maker.unpack_single else list(out)
    named = []
    for k, (o, v) in enumerate(zip(fn.maker.outputs, values)):
        label = getattr(o.variable, "name", None) or f"output {k}"
        named.append((label, np.array(v, copy=True)))
    for k, s in enumerate(fn.maker.update_targets):
        value = s.get_value(borrow=False)
        if isinstance(value, np.ndarray) or np.isscalar(value):
            named.append((f"{s.name or f'shared {k}'} (updated)", np.array(value, copy=True)))
    return named


def _timed_calls(fn, args, repeat: int, budget: float) -> list[float]:
    """Seconds of each call, after one uncounted call (``_results`` made it)."""
    times: list[float] = []
    clock = time.perf_counter
    started = clock()
    while len(times) < repeat:
        t = clock()
        fn(*args)
        times.append(clock() - t)
        if len(times) >= 3 and clock() - started > budget:
            break
    return times


def _spread(times: list[float]) -> dict:
    p25, median, p75 = (float(v) for v in np.percentile(times, [25, 50, 75]))
    return {"call_median": median, "call_p25": p25, "call_p75": p75,
            "call_min": float(min(times)), "call_max": float(max(times)), "calls": len(times)}


def _described(name: str, value) -> dict:
    return {"name": name, "dtype": str(value.dtype), "shape": list(value.shape),
            "max_abs_diff": None, "agrees": None}


def _agreement(name: str, value, reference) -> dict:
    """One output against the reference's: dtype, shape, largest difference, agreement."""
    out = _described(name, value)
    same_dtype = value.dtype == reference.dtype
    if value.shape != reference.shape:
        out["agrees"] = False
        out["note"] = f"shape {value.shape} where the reference has {reference.shape}"
        return out
    if value.dtype.kind in "fciub" and reference.dtype.kind in "fciub":
        a, b = value.astype(np.complex128 if "c" in value.dtype.kind + reference.dtype.kind
                            else np.float64), reference
        diff = np.abs(a - b)
        both_nan = np.isnan(a) & np.isnan(b) if diff.size else diff.astype(bool)
        diff = np.where(both_nan, 0.0, diff)
        out["max_abs_diff"] = float(np.nanmax(diff)) if diff.size else 0.0
        if np.isnan(out["max_abs_diff"]):
            out["max_abs_diff"] = float("inf")
        tol = max(TOLERANCE.get(str(value.dtype), 0.0), TOLERANCE.get(str(reference.dtype), 0.0))
        close = bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)) if diff.size else True
    else:
        close = bool(np.array_equal(value, reference))
    out["agrees"] = bool(same_dtype and close)
    if not same_dtype:
        out["note"] = f"dtype {value.dtype} where the reference has {reference.dtype}"
    return out


def _picklable(flags: dict) -> dict:
    kept = {}
    for k, v in flags.items():
        try:
            pickle.dumps(v)
        except Exception:  # noqa: BLE001 - a flag that cannot travel stays behind
            continue
        kept[k] = v
    return kept


def _seconds(value, missing: str = "-") -> str:
    if value is None:
        return missing
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} us"


def _diff(value) -> str:
    return "-" if value is None else f"{value:.2g}"
