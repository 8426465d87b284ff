"""Side-by-side benchmarks: tensorgraph (FAST_RUN) against numpy written by hand, PyTensor's
C backend (linker 'cvm'; installed by the ``bench`` extra) and JAX written by hand (``jax``:
``jax.jit`` of the same numpy-style code, ``jax.lax.scan`` for the loop), with the targets of
the project; and tensorgraph's whole-graph modes beside FAST_RUN (columns ``tg:JAX``,
``tg:NUMBA``, ``tg:PYTORCH``: the same graph compiled with ``mode="JAX"`` etc.).

    python benchmarks/run.py            # full sizes, more rounds (a few minutes)
    python benchmarks/run.py --quick    # fewer rounds (under a minute)
    python benchmarks/run.py --quick --tiny --frameworks tensorgraph,numpy   # smoke run
    python benchmarks/run.py --load 2   # with 2 CPU-bound processes beside it (a busy machine)
    python benchmarks/run.py --frameworks tensorgraph,numpy   # FAST_RUN and numpy alone
    .venv-pymc/bin/python benchmarks/run.py --cases pymc_logp,pymc_sample   # PyMC (issue 34)

A framework or mode that cannot run a case (not installed, or an op its back end refuses)
shows ``n/a (reason)`` in its cell, with the whole
message in the notes. Each framework's first result is compared with FAST_RUN's (each starts
from the same parameters), and a note names any that differs beyond float32 tolerance. A second
table gives every framework's time over tensorgraph FAST_RUN's (below 1: faster than FAST_RUN).

Throughput cases (``benchmarks/cases/*.py``) are built once per framework in this process, then
timed *interleaved*: each round times one batch of calls of every framework, in a rotating
order, so that drift of the machine (frequency, other load) hits them alike; the table shows
the median time per call over the rounds. Between two batches the runner waits
``SETTLE_SECONDS``: thread pools keep their idle workers spinning for a while after a call
(OpenBLAS's, numpy's BLAS, for about 2**28 cycles, ~0.1 s; OpenMP's for a few ms), and a batch
started meanwhile would share the cores with another framework's idle spinners (measured on
2 cores: the MLP step 1.06 ms right after numpy's batch, 0.75 ms after the pause; numpy's
gets the same treatment). Compile times are measured in new processes (the
seed ``train`` + ``predict``: cold with an empty module cache in a temporary
``base_compiledir``, warm with the cache it filled).

``--load N`` starts N CPU-bound processes (plain Python loops) before timing and stops them
after: the machine users have while a notebook compiles or a data loader runs. Under load the
spread matters as much as the median, so the notes then give each framework's worst batch over
its median batch per case, and the targets are the busy machine's: the cases with a
``LOADED_TARGET`` (the seed step and the MLP step: at most numpy's time, a spread no wider than
numpy's); the other cases show their ratios without a target.

The PyMC cases (``pymc_logp``: logp + dlogp per call of the bridge tests' gallery models in
PyTensor mode TENSORGRAPH, PyTensor's C and its NUMBA mode; ``pymc_sample``: ``pm.sample``'s wall
time in TENSORGRAPH and C, and whether their posteriors agree) print tables of their own; they
need PyMC, which lives in the bridge's venv (``.venv-pymc``), and say so and are skipped where
it is missing.

The ratio column is tensorgraph (FAST_RUN)'s time over the target's baseline; a target is met when the
ratio is at most the target's. ``--check`` makes the exit code 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)                           # the ``cases`` package
sys.path.insert(1, os.path.dirname(HERE))          # tensorgraph from this checkout

from cases import CASES, Unavailable  # noqa: E402
from cases import compile_scaling, compile_time, pymc_logp, pymc_sample, rnn_compile  # noqa: E402
from cases._frameworks import MODE_COLUMNS  # noqa: E402

FRAMEWORKS = ["tensorgraph", "numpy", "pytensor", "jax", *MODE_COLUMNS]
#: cases measured in new processes (compile times), after the throughput cases
COMPILE_CASES = ["compile", "scaling", "rnn_compile"]
#: cases with tables of their own, in PyTensor modes (need PyMC: the bridge's venv)
PYMC_CASES = ["pymc_logp", "pymc_sample"]


# ----------------------------------------------------------------------------------------------
# timing


def _calibrate(fn, batch_seconds: float) -> int:
    """Calls per batch so that a batch lasts about ``batch_seconds``."""
    fn()
    n = 1
    while True:
        started = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - started
        if elapsed >= batch_seconds / 4 or n >= 1 << 20:
            return max(1, int(n * batch_seconds / max(elapsed, 1e-9)))
        n *= 4


#: pause between two batches (see the module docstring)
SETTLE_SECONDS = 0.15


def interleaved(fns: dict, rounds: int, batch_seconds: float, spreads: dict | None = None) -> dict:
    """Median seconds per call of each callable, batches interleaved round by round;
    ``spreads`` (when given) receives each callable's worst batch over its median batch."""
    names = list(fns)
    batch = {name: _calibrate(fns[name], batch_seconds) for name in names}
    samples = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn, n = fns[name], batch[name]
            time.sleep(SETTLE_SECONDS)
            gc.collect()
            gc.disable()
            try:
                started = time.perf_counter()
                for _ in range(n):
                    fn()
                samples[name].append((time.perf_counter() - started) / n)
            finally:
                gc.enable()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    if spreads is not None:
        spreads.update({name: max(samples[name]) / medians[name] for name in names})
    return medians


def _load_average() -> str:
    """The system's 1-minute load average (other work on the machine), or '?' where the
    platform has none."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):
        return "?"


def _burn() -> None:
    """A CPU-bound process for ``--load``: spins until terminated."""
    while True:
        pass


def start_load(n: int) -> list:
    """``n`` CPU-bound processes (``--load``); stop them with ``stop_load``."""
    import multiprocessing

    procs = [multiprocessing.get_context("spawn").Process(target=_burn, daemon=True)
             for _ in range(n)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let them get going
    return procs


def stop_load(procs: list) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.join(timeout=10)


# ----------------------------------------------------------------------------------------------
# the table


def fmt_time(seconds) -> str:
    if seconds is None:
        return "-"
    if isinstance(seconds, str):
        return seconds
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


class Row:
    """One case: ``target`` is a ratio to ``baseline``'s time, seconds (``absolute``), or
    seconds *more* than ``baseline``'s time (``additive``)."""

    def __init__(self, title, times, baseline, target, absolute=False, additive=False,
                 also=()):
        self.title = title
        self.times = times            # framework -> seconds, None (not run) or "error"
        self.baseline = baseline      # framework name, or None for an absolute target
        self.target = target
        self.absolute = absolute
        self.additive = additive
        self.also = [Row(title, times, b, t) for b, t in also]  # more ratio targets, all held

    def ratio(self):
        tg = self.times.get("tensorgraph")
        if not isinstance(tg, float):
            return None
        if self.absolute:
            return tg
        base = self.times.get(self.baseline)
        if not isinstance(base, float) or base <= 0:
            return None
        return tg - base if self.additive else tg / base

    def verdict(self) -> str:
        ratio = self.ratio()
        if ratio is None or self.target is None:
            own = "n/a"
        else:
            own = "ok" if ratio <= self.target else "MISSED"
        verdicts = [own] + [row.verdict() for row in self.also]
        if "MISSED" in verdicts:
            return "MISSED"
        return "ok" if "ok" in verdicts else "n/a"

    def cells(self, frameworks):
        ratio = self.ratio()
        if self.target is None:
            ratio_text = "-" if ratio is None else f"{ratio:.2f}x {self.baseline}"
            target_text = "-"
        elif self.absolute:
            ratio_text = "-" if ratio is None else fmt_time(ratio)
            target_text = f"<= {fmt_time(self.target)}"
        elif self.additive:
            sign = "+" if ratio is None or ratio >= 0 else "-"
            ratio_text = "-" if ratio is None else f"{self.baseline} {sign} {fmt_time(abs(ratio))}"
            target_text = f"<= {self.baseline} + {fmt_time(self.target)}"
        else:
            ratio_text = "-" if ratio is None else f"{ratio:.2f}x {self.baseline}"
            target_text = f"<= {self.target:g}x {self.baseline}"
        for row in self.also:
            if isinstance(self.times.get(row.baseline), float):
                _, more_ratio, more_target, _ = row.cells([])
                ratio_text, target_text = (f"{ratio_text}, {more_ratio}",
                                           f"{target_text}, {more_target}")
        return ([self.title] + [fmt_time(self.times.get(f)) for f in frameworks]
                + [ratio_text, target_text, self.verdict()])


def not_available(exc) -> str:
    """The table cell of a framework or mode that cannot run a case: ``n/a (reason)``, short
    (the notes have the whole message)."""
    problems = getattr(exc, "problems", None)      # UnsupportedOpsError: the ops it lacks
    if problems:
        ops = sorted({type(node.op).__name__ for node, _ in problems})
        return f"n/a (no {', '.join(ops)})"
    if isinstance(exc, (Unavailable, ImportError)):
        return "n/a (not installed)"
    return f"n/a ({type(exc).__name__})"


def _values(result) -> list:
    """A step's result as a list of numpy arrays (JAX arrays, tuples of them, lists)."""
    import numpy as np

    items = result if isinstance(result, (list, tuple)) else [result]
    return [np.asarray(item) for item in items]


def differs(result, reference) -> str | None:
    """How ``result`` differs from ``reference`` beyond float32 tolerance, or None."""
    import numpy as np

    got, want = _values(result), _values(reference)
    if len(got) != len(want):
        return f"{len(got)} outputs, FAST_RUN has {len(want)}"
    for k, (a, b) in enumerate(zip(got, want)):
        if a.shape != b.shape:
            return f"output {k}: shape {a.shape}, FAST_RUN's {b.shape}"
        a, b = a.astype("float64"), b.astype("float64")
        if not np.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True):
            return f"output {k}: max |difference| {np.nanmax(np.abs(a - b)):.3g}"
    return None


def print_relative(rows, frameworks, out=sys.stdout):
    """Each framework's time over tensorgraph FAST_RUN's, per case (below 1: faster)."""
    others = [fw for fw in frameworks if fw != "tensorgraph"]
    if "tensorgraph" not in frameworks or not others:
        return
    header = ["case"] + others
    body = []
    for r in rows:
        tg = r.times.get("tensorgraph")
        cells = [r.title]
        for fw in others:
            value = r.times.get(fw)
            if isinstance(tg, float) and isinstance(value, float) and tg > 0:
                cells.append(f"{value / tg:.2f}x")
            else:
                cells.append(value.split(" (")[0] if isinstance(value, str) else "-")
        body.append(cells)
    widths = [max(len(line[k]) for line in [header] + body) for k in range(len(header))]
    print("\ntime over tensorgraph FAST_RUN's (below 1: faster than FAST_RUN):", file=out)
    for line in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.ljust(w) if k == 0 else c.rjust(w)
                        for k, (c, w) in enumerate(zip(line, widths))), file=out)


def print_table(rows, frameworks, out=sys.stdout):
    header = ["case"] + frameworks + ["tensorgraph ratio", "target", "met"]
    body = [r.cells(frameworks) for r in rows]
    widths = [max(len(str(line[k])) for line in [header] + body) for k in range(len(header))]

    def line(cells):
        return "  ".join(str(c).ljust(w) if k == 0 else str(c).rjust(w)
                         for k, (c, w) in enumerate(zip(cells, widths)))

    print(line(header), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for cells in body:
        print(line(cells), file=out)


# ----------------------------------------------------------------------------------------------
# running the cases


def throughput_rows(case_names, frameworks, tiny, rounds, batch_seconds, notes, load=0):
    rows = []
    for case_name in case_names:
        case = importlib.import_module(f"cases.{case_name}")
        size = case.size(tiny)
        fns, times, firsts = {}, {}, {}
        for fw in frameworks:
            if fw in MODE_COLUMNS:
                make = functools.partial(case.make_tensorgraph, mode=MODE_COLUMNS[fw])
            else:
                make = getattr(case, f"make_{fw}", None)
            if make is None:
                continue
            try:
                fns[fw] = make(size)
                firsts[fw] = fns[fw]()          # first call: lazy set-up out of the timing
            except Unavailable as exc:
                fns.pop(fw, None)
                if fw == "jax":
                    times[fw] = not_available(exc)
                notes.append(f"{case.NAME}/{fw}: skipped ({exc})")
            except Exception as exc:  # a framework failing must not hide the others
                fns.pop(fw, None)
                # a mode or JAX lacking what the case needs is a fact of the table; tensorgraph
                # FAST_RUN, numpy or PyTensor failing is a bug to see
                times[fw] = not_available(exc) if fw in MODE_COLUMNS or fw == "jax" else "error"
                first_lines = " / ".join(str(exc).strip().splitlines()[:2])
                notes.append(f"{case.NAME}/{fw}: {times[fw]}: {type(exc).__name__}: "
                             f"{first_lines}")
        if "tensorgraph" in firsts:
            for fw, first in firsts.items():
                problem = None if fw == "tensorgraph" else differs(first, firsts["tensorgraph"])
                if problem:
                    notes.append(f"{case.NAME}/{fw}: first result differs from FAST_RUN's: "
                                 f"{problem}")
        spreads: dict = {}
        times.update(interleaved(fns, rounds, batch_seconds, spreads) if fns else {})
        if load:
            notes.append(f"{case.NAME} under load {load}: worst batch / median batch: "
                         + ", ".join(f"{fw} {spread:.2f}x" for fw, spread in spreads.items()))
        if load:
            # a busy machine has its own targets (LOADED_TARGET); the others are quiet-only
            baseline, target, *kind = getattr(case, "LOADED_TARGET", None) or (
                case.TARGET[0], None)
            spread = spreads.get("tensorgraph")
            if hasattr(case, "LOADED_TARGET") and spread is not None and baseline in spreads:
                met = spread <= spreads[baseline]
                notes.append(f"{case.NAME} under load {load}: tensorgraph's spread "
                             f"{'within' if met else 'WIDER than'} {baseline}'s")
        else:
            baseline, target, *kind = case.TARGET
        title = case.TITLE.format(*size) if isinstance(size, tuple) else case.TITLE.format(size)
        # TARGETS: every ratio target of a case that has several (the first is TARGET)
        also = [] if load else getattr(case, "TARGETS", [])[1:]
        rows.append(Row(title, times, baseline, target, additive=kind == ["plus"], also=also))
        print(f"  measured {case.NAME}", file=sys.stderr, flush=True)
    return rows


def compile_rows(frameworks, quick, notes):
    cold_n, warm_n = (1, 2) if quick else (3, 5)
    times_cold, times_warm, times_edit = {}, {}, {}
    for fw in (f for f in frameworks if f in MODE_COLUMNS):
        mode = MODE_COLUMNS[fw]
        try:
            cold, warm = compile_time.tensorgraph_times(cold_n, warm_n, mode=mode)
            times_cold[fw] = statistics.median(s["first"] for s in cold)
            times_warm[fw] = statistics.median(s["first"] for s in warm)
            notes.append(f"tensorgraph mode {mode} graph -> first results: cold "
                         + ", ".join(fmt_time(s["first"]) for s in cold) + "; warm "
                         + ", ".join(fmt_time(s["first"]) for s in warm) + "; of which "
                         "function(): " + ", ".join(fmt_time(s["compile"]) for s in cold + warm))
        except Exception as exc:
            times_cold[fw] = times_warm[fw] = f"n/a ({type(exc).__name__})"
            notes.append(f"compile/{fw}: {exc}")
        print(f"  measured compile {fw}", file=sys.stderr, flush=True)
    if "tensorgraph" in frameworks:
        try:
            cold, warm = compile_time.tensorgraph_times(cold_n, warm_n)
            times_cold["tensorgraph"] = statistics.median(s["first"] for s in cold)
            times_warm["tensorgraph"] = statistics.median(s["first"] for s in warm)
            notes.append("tensorgraph graph -> first results of train and predict: cold "
                         + ", ".join(fmt_time(s["first"]) for s in cold) + "; warm "
                         + ", ".join(fmt_time(s["first"]) for s in warm) + "; of which "
                         "function(): " + ", ".join(fmt_time(s["compile"]) for s in cold + warm)
                         + "; optimized code ready after (cold): "
                         + ", ".join(fmt_time(s["optimized"]) for s in cold) + "; import "
                         + fmt_time(statistics.median(s["import"] for s in warm))
                         + " in a new process (not in these times)")
        except Exception as exc:
            times_cold["tensorgraph"] = times_warm["tensorgraph"] = "error"
            notes.append(f"compile/tensorgraph: error: {exc}")
    if "jax" in frameworks:
        try:
            importlib.import_module("jax")
            cold, warm = compile_time.jax_times(cold_n, warm_n)
            times_cold["jax"] = statistics.median(s["first"] for s in cold)
            times_warm["jax"] = statistics.median(s["first"] for s in warm)
            notes.append("jax (jax.jit of the same program, its persistent compilation cache "
                         "in a new directory for cold, filled for warm): cold "
                         + ", ".join(fmt_time(s["first"]) for s in cold) + "; warm "
                         + ", ".join(fmt_time(s["first"]) for s in warm))
        except ImportError as exc:
            notes.append(f"compile/jax: skipped ({exc})")
        except Exception as exc:
            times_cold["jax"] = times_warm["jax"] = "error"
            notes.append(f"compile/jax: error: {exc}")
        try:
            edits = compile_scaling.edit_times(warm_n)
            times_edit["tensorgraph"] = statistics.median(edits)
            notes.append("tensorgraph compile after a new learning rate and weight decay: "
                         + ", ".join(fmt_time(s) for s in edits))
        except Exception as exc:
            times_edit["tensorgraph"] = "error"
            notes.append(f"compile edit/tensorgraph: error: {exc}")
    if "pytensor" in frameworks:
        try:
            importlib.import_module("pytensor")
            warm = compile_time.pytensor_warm_times(warm_n)
            times_warm["pytensor"] = statistics.median(s["first"] for s in warm)
            notes.append("pytensor compile: warm only (its cold compile takes far longer)")
        except ImportError as exc:
            notes.append(f"compile/pytensor: skipped ({exc})")
        except Exception as exc:
            times_warm["pytensor"] = "error"
            notes.append(f"compile/pytensor: error: {exc}")
        print("  measured compile", file=sys.stderr, flush=True)
    cold_row = (Row("seed train+predict, graph -> first result, cold", times_cold, "jax",
                    compile_time.COLD_TARGET_JAX)
                if isinstance(times_cold.get("jax"), float) else
                Row("seed train+predict, graph -> first result, cold", times_cold, None,
                    compile_time.COLD_TARGET, absolute=True))
    return [cold_row,
            Row("seed train+predict, graph -> first result, warm", times_warm, None,
                compile_time.WARM_TARGET, absolute=True),
            Row("compile seed, new learning rate, warm", times_edit, None,
                compile_scaling.EDIT_TARGET, absolute=True)]


def print_scaling(frameworks, tiny: bool, out=sys.stdout) -> list[str]:
    """The compile-scaling table (compile_scaling.py); returns the targets it missed."""
    frameworks = [f for f in frameworks if f in ("tensorgraph", "pytensor")]
    rows = compile_scaling.scaling(frameworks, tiny)

    def cell(pair, k):
        if pair is None:
            return "-"
        value = pair[k]
        return f"> {compile_scaling.TIMEOUT:.0f} s" if value is None else fmt_time(value)

    header = ["layers", "nodes"] + [f"{fw} {kind}" for fw in frameworks
                                     for kind in ("cold", "warm")]
    body = [[str(r["layers"]), str(r.get("nodes") or r.get("pytensor_nodes") or "-")]
            + [cell(r.get(fw), k) for fw in frameworks for k in (0, 1)] for r in rows]
    widths = [max(len(line[k]) for line in [header] + body) for k in range(len(header))]
    print("\ncompile time against graph size: MLP training step, 32 units per layer, new "
          "process each", file=out)
    for line in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.rjust(w) for c, w in zip(line, widths)), file=out)
    missed = []
    big = [r for r in rows if r["layers"] == 64 and r.get("tensorgraph")]
    if big:
        cold, warm = big[0]["tensorgraph"]
        for what, value, target in (("cold", cold, compile_scaling.COLD_TARGET_64),
                                    ("warm", warm, compile_scaling.WARM_TARGET_64)):
            met = value is not None and value <= target
            print(f"  64 layers {what}: {cell(big[0]['tensorgraph'], what == 'warm')} "
                  f"(target <= {fmt_time(target)}): {'ok' if met else 'MISSED'}", file=out)
            if not met:
                missed.append(f"64-layer compile {what}")
    return missed


def print_rnn_compile(quick: bool, out=sys.stdout) -> list[str]:
    """The cold compile of the RNN training step with scan against the network unrolled for
    one step (rnn_compile.py); returns the targets it missed."""
    samples = rnn_compile.cold_times(1 if quick else 3)
    med = {kind: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
           for kind, runs in samples.items()}
    ratio = med["scan"]["compile"] / med["unrolled"]["compile"]
    met = ratio <= rnn_compile.TARGET_RATIO
    print("\ncompile of the RNN training step, cold (new process, empty cache), until optimized "
          "code runs (function() alone in brackets):", file=out)
    for kind, label in (("scan", "with scan (100 steps)"), ("unrolled", "unrolled, 1 step")):
        print(f"  {label}: {fmt_time(med[kind]['compile'])} ({fmt_time(med[kind]['function'])})"
              f"; samples " + ", ".join(fmt_time(s["compile"]) for s in samples[kind]), file=out)
    print(f"  ratio {ratio:.2f} (target <= {rnn_compile.TARGET_RATIO:g}): "
          f"{'ok' if met else 'MISSED'}", file=out)
    return [] if met else ["RNN compile ratio"]


def main(argv=None) -> int:
    # the new processes it times load tensorgraph's modules from their .pyc, as an installed
    # wheel does: a shell's PYTHONDONTWRITEBYTECODE would add 20-170 ms of compiling Python
    # source to each of them
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (under a minute)")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--cases", default=",".join(CASES + COMPILE_CASES + PYMC_CASES),
                        help=f"comma-separated, from {CASES + COMPILE_CASES + PYMC_CASES}")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                        help=f"comma-separated, from {FRAMEWORKS}")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="run N CPU-bound processes beside the benchmark (a busy machine)")
    args = parser.parse_args(argv)
    if args.load < 0:
        parser.error(f"--load must be 0 or more, got {args.load}")

    cases = [c for c in args.cases.split(",") if c]
    frameworks = [f for f in args.frameworks.split(",") if f]
    unknown = [c for c in cases if c not in CASES + COMPILE_CASES + PYMC_CASES] + \
              [f for f in frameworks if f not in FRAMEWORKS]
    if unknown:
        parser.error(f"unknown case or framework: {', '.join(unknown)}")
    if "pytensor" in frameworks and importlib.util.find_spec("pytensor") is None:
        frameworks.remove("pytensor")
        print("pytensor is not installed (pip install tensorgraph[bench]): skipped",
              file=sys.stderr)
    rounds, batch_seconds = (5, 0.02) if args.quick else (15, 0.1)
    notes = []
    pymc_cases = [c for c in cases if c in PYMC_CASES]
    why_not = pymc_logp.unavailable() if pymc_cases else None
    if why_not:
        print(f"{', '.join(pymc_cases)}: skipped ({why_not})", file=sys.stderr)
        notes.append(f"{', '.join(pymc_cases)}: skipped ({why_not})")
        pymc_cases = []

    import numpy as np

    from tensorgraph.configdefaults import config

    # steps are timed on the optimized code (a function would otherwise run its first calls on
    # the quick tier and switch during the timing); the compile rows measure the tiers, in
    # new processes with the default flags
    config.compile__tiers = False
    load_before = _load_average()
    started = time.perf_counter()
    load = start_load(args.load) if args.load else []
    try:
        rows = throughput_rows([c for c in cases if c not in COMPILE_CASES + PYMC_CASES],
                               frameworks, args.tiny, rounds, batch_seconds, notes, args.load)
        if "compile" in cases:
            rows += compile_rows(frameworks, args.quick, notes)
        pymc_rows = {}
        if "pymc_logp" in pymc_cases:
            pymc_rows["pymc_logp"] = pymc_logp.measure(interleaved, args.tiny, rounds,
                                                       batch_seconds, notes)
        if "pymc_sample" in pymc_cases:
            pymc_rows["pymc_sample"] = pymc_sample.measure(args.quick, args.tiny, notes)
    finally:
        stop_load(load)

    print(f"\ntensorgraph benchmarks ({'quick' if args.quick else 'full'}"
          f"{', tiny sizes' if args.tiny else ''}): median time per call, {rounds} interleaved "
          f"rounds{f', {args.load} CPU-bound processes beside it' if args.load else ''}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, openmp={config.openmp}; "
          f"load average (1 min) {load_before} before the run, {_load_average()} after "
          "(the work of other processes; the run adds about 1)")
    versions = [f"{name} {sys.modules[name].__version__}" for name in ("pytensor", "pymc", "jax",
                                                                       "numba", "torch")
                if name in sys.modules and hasattr(sys.modules[name], "__version__")]
    if versions:
        print("frameworks: " + ", ".join(versions))
    missed = []
    if rows:
        print()
        print_table(rows, frameworks)
        print_relative(rows, frameworks)
        missed = [r.title for r in rows if r.verdict() == "MISSED"]
    if "pymc_logp" in pymc_rows:
        missed += pymc_logp.report(pymc_rows["pymc_logp"], fmt_time)
    if "pymc_sample" in pymc_rows:
        missed += pymc_sample.report(pymc_rows["pymc_sample"], fmt_time)
    for note in notes:
        print(f"  note: {note}")
    if "scaling" in cases:
        missed += print_scaling(frameworks, args.tiny)
    if "rnn_compile" in cases and "tensorgraph" in frameworks:
        missed += print_rnn_compile(args.quick)
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
