"""``pm.sample`` wall time in PyTensor mode TENSORGRAPH against PyTensor's C (FAST_RUN), and
whether both give the same posterior (issue 34).

For each gallery model of the bridge tests (``pymc_logp.gallery``): NUTS, 2 chains, with
``cores=1`` and ``cores=2`` (PyMC's default start method for its worker processes), every
function compiled in the mode (``compile_kwargs={"mode": ...}``). The wall time is what a user
waits for: ``pm.sample`` from the call to the returned trace, so it includes compiling the
functions (from warm caches: each mode has compiled the model once before the timed runs).

The posterior check: for every scalar of every free variable, the two modes' posterior means
(chains of ``cores=1``, different seeds for the two modes, so the chains are independent)
differ by at most ``Z_MAX`` times the Monte Carlo standard error of their difference
(``sqrt(mcse_tg**2 + mcse_c**2)``, ArviZ's ``mcse`` of the mean). The largest such z per model
is printed. The model with ``scan`` has its Scan run by PyTensor's ``perform`` in mode
TENSORGRAPH (no conversion yet), so its calls are slower than C's.

    .venv-pymc/bin/python benchmarks/run.py --cases pymc_sample [--quick]
"""

from __future__ import annotations

import math
import sys
import time

from cases import pymc_logp

NAME = "pymc_sample"
#: a posterior mean may differ from the other mode's by this many Monte Carlo standard errors
Z_MAX = 4.0
MODES = {"TENSORGRAPH": "TENSORGRAPH", "PyTensor C": "FAST_RUN"}
QUICK_MODELS = ("eight_noncentered", "radon", "linreg")
SEEDS = {"TENSORGRAPH": [11, 12], "PyTensor C": [21, 22]}


def settings(quick: bool, tiny: bool) -> dict:
    if tiny:
        return {"models": ("eight_noncentered",), "tune": 50, "draws": 50, "cores": (1,)}
    if quick:
        return {"models": QUICK_MODELS, "tune": 300, "draws": 300, "cores": (1, 2)}
    return {"models": None, "tune": 500, "draws": 500, "cores": (1, 2)}


def sample(model, mode: str, cores: int, seeds, tune: int, draws: int):
    """(seconds, InferenceData) of one ``pm.sample``."""
    import pymc as pm

    started = time.perf_counter()
    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=2, cores=cores, random_seed=seeds,
                          progressbar=False, compute_convergence_checks=False,
                          compile_kwargs={"mode": mode})
    return time.perf_counter() - started, idata


def posterior_z(a, b) -> tuple[float, str]:
    """The largest |mean_a - mean_b| / sqrt(mcse_a**2 + mcse_b**2) over the scalars of the
    free variables, and which scalar."""
    import arviz as az
    import numpy as np

    worst, where = 0.0, ""
    mcse_a, mcse_b = az.mcse(a, method="mean"), az.mcse(b, method="mean")
    for name in a.posterior.data_vars:
        ma = a.posterior[name].mean(("chain", "draw")).values
        mb = b.posterior[name].mean(("chain", "draw")).values
        se = np.sqrt(mcse_a[name].values ** 2 + mcse_b[name].values ** 2)
        z = np.abs(ma - mb) / np.where(se > 0, se, np.inf)
        if z.size and np.nanmax(z) > worst:
            worst = float(np.nanmax(z))
            k = int(np.nanargmax(z))
            index = ",".join(str(int(i)) for i in np.unravel_index(k, z.shape))
            where = f"{name}[{index}]" if z.ndim else name
    return worst, where


def measure(quick: bool, tiny: bool, notes: list) -> list[dict]:
    """One row per model: wall seconds per (mode, cores), the posterior check."""
    pymc_logp.quiet()
    import logging

    import tensorgraph.pytensor  # noqa: F401 - registers the mode

    logging.getLogger("pymc").setLevel(logging.ERROR)
    s = settings(quick, tiny)
    models = pymc_logp.gallery()
    rows = []
    for name in s["models"] or models:
        row = {"model": name}
        traces = {}
        for column, mode in MODES.items():
            try:  # compile once untimed: the timed runs start from warm caches, as a re-run
                sample(models[name](), mode, 1, SEEDS[column], 5, 5)
            except Exception as exc:  # noqa: BLE001 - a failing mode is a cell
                row[column] = f"n/a ({type(exc).__name__})"
                notes.append(f"{NAME} {name}/{column}: {type(exc).__name__}: "
                             + " / ".join(str(exc).strip().splitlines()[:1]))
                continue
            for cores in s["cores"]:
                seconds, idata = sample(models[name](), mode, cores, SEEDS[column],
                                        s["tune"], s["draws"])
                row[(column, cores)] = seconds
                traces.setdefault(column, idata)
        if len(traces) == 2:
            z, where = posterior_z(traces["TENSORGRAPH"], traces["PyTensor C"])
            row["z"], row["where"] = z, where
        rows.append(row)
        print(f"  measured {NAME} {name}", file=sys.stderr, flush=True)
    rows.append({"settings": s})
    return rows


def report(rows: list[dict], fmt_time, out=sys.stdout) -> list[str]:
    """Prints the wall times and the posterior check; returns the checks that failed."""
    s = rows[-1]["settings"]
    rows = rows[:-1]
    cores = s["cores"]
    header = ["model"] + [f"{c} cores={k}" for k in cores for c in ("TG", "C")] \
        + [f"TG/C cores={k}" for k in cores] + ["max z (where)", "same posterior"]
    body, failed = [], []
    for r in rows:
        cells = [r["model"]]
        for k in cores:
            for column in MODES:
                value = r.get((column, k), r.get(column))
                cells.append(fmt_time(value) if value is not None else "-")
        for k in cores:
            tg, c = r.get(("TENSORGRAPH", k)), r.get(("PyTensor C", k))
            cells.append(f"{tg / c:.2f}x" if tg and c else "-")
        z = r.get("z")
        if z is None:
            cells += ["-", "-"]
            failed.append(f"{r['model']}: no posterior check")
        else:
            ok = math.isfinite(z) and z <= Z_MAX
            cells += [f"{z:.2f} ({r['where']})", "yes" if ok else "NO"]
            if not ok:
                failed.append(f"{r['model']}: posterior means differ (z {z:.2f})")
        body.append(cells)
    widths = [max(len(line[k]) for line in [header] + body) for k in range(len(header))]
    print(f"\npm.sample wall time, NUTS, 2 chains, tune={s['tune']} draws={s['draws']}, "
          "compiling included (warm caches); posterior means of the two modes compared "
          f"(z: difference over its Monte Carlo standard error, <= {Z_MAX:g}):", file=out)
    for line in [header, ["-" * w for w in widths]] + body:
        print("  ".join(c.ljust(w) if k == 0 else c.rjust(w)
                        for k, (c, w) in enumerate(zip(line, widths))), file=out)
    for problem in failed:
        print(f"  posterior check: {problem}", file=out)
    return failed
