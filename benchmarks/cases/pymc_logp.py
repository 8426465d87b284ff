"""PyMC's log-density and its gradient per call (issue 34): the function ``pm.sample``'s NUTS
calls at every leapfrog step, compiled in PyTensor mode TENSORGRAPH (the bridge,
``tensorgraph.pytensor``), in PyTensor's C (FAST_RUN, its default) and in PyTensor's NUMBA mode,
for each of the bridge tests' gallery models (``tests/pytensor_bridge/pymc_models.py``).

The function is what NUTS builds: ``model.logp_dlogp_function(ravel_inputs=True, mode=...)``,
and the call is its PyTensor function on the raveled initial point (``_pytensor_function(q)``,
as PyMC's leapfrog integrator calls it, through PyTensor's ``Function.__call__``). The three
modes of a model are timed interleaved (``run.interleaved``); each mode's first result is
compared with C's (logp and gradient, rtol 1e-7). Target: the median over the models of
TENSORGRAPH's time over C's at most ``TARGET``.

On a busy machine, run it with ``OPENBLAS_NUM_THREADS=1``: PyTensor's C and NUMBA call LAPACK
(the Cholesky and triangular solves of ``mvnormal_lkj`` and ``marginal_gp``) through scipy's
OpenBLAS, whose threads, waiting for cores other processes hold, made a 3x3 Cholesky take
milliseconds (PyTensor C's ``mvnormal_lkj`` call: 80 ms at a load average of 8, 95 us with one
thread). The report prints the setting.

Run it in the bridge's environment (``.venv-pymc/bin/python benchmarks/run.py --cases
pymc_logp``); where PyMC is missing it says so and is skipped.

Why the models are imported by path from the tests: they are the bridge tests' fixtures (the
tests compare every one of them with PyTensor's C), the benchmark times the same ones, and
``tests/`` is no package; loading the file by its path keeps one copy without putting the tests
on ``sys.path`` or the models in the installed package (``import tensorgraph`` never imports
PyMC).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import warnings

NAME = "pymc_logp"
TARGET = 0.6
#: column -> PyTensor mode name
MODES = {"TENSORGRAPH": "TENSORGRAPH", "PyTensor C": "FAST_RUN", "PyTensor NUMBA": "NUMBA"}
#: the models of ``--tiny`` (a smoke run)
TINY_MODELS = ("eight_noncentered", "linreg")
MODELS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests", "pytensor_bridge", "pymc_models.py")


def unavailable() -> str | None:
    """Why the PyMC cases cannot run here (None when they can)."""
    for name in ("pymc", "pytensor"):
        if importlib.util.find_spec(name) is None:
            return (f"{name} is not installed here (the bridge has a venv of its own: "
                    ".venv-pymc/bin/python benchmarks/run.py --cases pymc_logp,pymc_sample)")
    return None


def gallery() -> dict:
    """{name: model builder} of the bridge tests' gallery models (loaded by path)."""
    module = sys.modules.get("_tg_pymc_models")
    if module is None:
        spec = importlib.util.spec_from_file_location("_tg_pymc_models", MODELS_FILE)
        module = importlib.util.module_from_spec(spec)
        sys.modules["_tg_pymc_models"] = module
        spec.loader.exec_module(module)
    return dict(module.MODELS)


def quiet():
    """PyTensor's warnings about its BLAS and PyMC's deprecations, off for the benchmark."""
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)


def make(model, mode: str):
    """(call, first result): the logp + dlogp call NUTS makes, compiled in PyTensor ``mode``."""
    import tensorgraph.pytensor as tgp  # registers the mode
    from pymc.blocking import DictToArrayBijection

    fn = model.logp_dlogp_function(ravel_inputs=True, mode=mode)
    # pm.sample sets fn.trust_input = True, which PyMC keeps on its wrapper: the PyTensor
    # function NUTS calls still checks its inputs (Function.__call__), here too
    fn.trust_input = True
    point = model.initial_point()
    q = DictToArrayBijection.map({v.name: point[v.name] for v in fn._grad_vars}).data
    pt_fn = fn._pytensor_function
    if mode == "TENSORGRAPH":
        tgp.unwrap(pt_fn).wait_optimized()  # time the optimized code, not the quick tier

    def call():
        return pt_fn(q)

    return call, [v.copy() for v in call()]


def differs(got, want) -> str | None:
    import numpy as np

    for label, a, b in zip(("logp", "dlogp"), got, want):
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-7, atol=1e-12):
            return f"{label} differs (max |diff| {np.max(np.abs(a - b)):.3g})"
    return None


def measure(timer, tiny: bool, rounds: int, batch_seconds: float, notes: list,
            modes=None, names=None) -> list[dict]:
    """One row per model: {"model", mode column: seconds or "n/a (...)", "ratio"}.
    ``timer``: ``run.interleaved``."""
    quiet()
    import tensorgraph.pytensor  # noqa: F401 - registers the mode

    models = gallery()
    names = list(names or (TINY_MODELS if tiny else models))
    modes = dict(MODES if modes is None else {k: MODES[k] for k in modes})
    rows = []
    for name in names:
        model = models[name]()
        fns, firsts, row = {}, {}, {"model": name}
        for column, mode in modes.items():
            try:
                fns[column], firsts[column] = make(model, mode)
            except Exception as exc:  # a mode that cannot compile the model is a cell
                row[column] = f"n/a ({type(exc).__name__})"
                first = " / ".join(str(exc).strip().splitlines()[:1])
                notes.append(f"{name}/{column}: {type(exc).__name__}: {first}")
        ref = firsts.get("PyTensor C")
        for column, first in firsts.items():
            problem = None if ref is None or column == "PyTensor C" else differs(first, ref)
            if problem:
                notes.append(f"{name}/{column}: first result against PyTensor C's: {problem}")
        row.update(timer(fns, rounds, batch_seconds) if fns else {})
        tg, c = row.get("TENSORGRAPH"), row.get("PyTensor C")
        row["ratio"] = tg / c if isinstance(tg, float) and isinstance(c, float) else None
        rows.append(row)
        print(f"  measured {NAME} {name}", file=sys.stderr, flush=True)
    return rows


def report(rows: list[dict], fmt_time, out=sys.stdout) -> list[str]:
    """Prints the table, the median ratio and its target; returns the targets missed."""
    columns = [c for c in MODES if any(c in r for r in rows)]
    header = ["model"] + columns + ["TG / C"] + (["NUMBA / C"] if "PyTensor NUMBA" in columns
                                                 else [])
    body = []
    for r in rows:
        cells = [r["model"]] + [fmt_time(r.get(c)) for c in columns]
        cells.append("-" if r["ratio"] is None else f"{r['ratio']:.2f}x")
        if "PyTensor NUMBA" in columns:
            nb, c = r.get("PyTensor NUMBA"), r.get("PyTensor C")
            cells.append(f"{nb / c:.2f}x" if isinstance(nb, float) and isinstance(c, float)
                         else "-")
        body.append(cells)
    widths = [max(len(line[k]) for line in [header] + body) for k in range(len(header))]
    print("\nPyMC logp + dlogp per call (the function NUTS calls, on the initial point), "
          "PyTensor modes:", file=out)
    for line in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.ljust(w) if k == 0 else c.rjust(w)
                        for k, (c, w) in enumerate(zip(line, widths))), file=out)
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    if not ratios:
        print("  no ratio (TENSORGRAPH or C did not run)", file=out)
        return ["PyMC logp median ratio"]
    median = statistics.median(ratios)
    met = median <= TARGET
    numba = [r["PyTensor NUMBA"] / r["PyTensor C"] for r in rows
             if isinstance(r.get("PyTensor NUMBA"), float) and isinstance(r.get("PyTensor C"),
                                                                           float)]
    threads = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
               if k in os.environ}
    print("  OpenBLAS threads (PyTensor's C and NUMBA call LAPACK through it): "
          + (", ".join(f"{k}={v}" for k, v in threads.items()) or "its default (one per core)"),
          file=out)
    print(f"  median TENSORGRAPH / PyTensor C over {len(ratios)} models: {median:.2f}x "
          f"(target <= {TARGET:g}x): {'ok' if met else 'MISSED'}"
          + (f"; median NUMBA / C {statistics.median(numba):.2f}x" if numba else ""), file=out)
    return [] if met else ["PyMC logp median ratio"]
