"""How long ``%tg_compare`` makes a user wait: the seed's training step and the tutorial MLP's
(784-256-10, batch 128), in the four default modes (FAST_RUN, JAX, NUMBA, PYTORCH).

Each graph is compared in a new process that has compiled the step once in FAST_RUN (as the
notebook did before the user asks for a comparison), with an empty compile directory of its
own (nothing of JAX's, Numba's or Inductor's caches from earlier runs). Two times per graph:

* ``table``: from the call to the per-call table (``compare(..., wait=False)`` returns: every
  mode compiled here and its calls timed; what the widget shows first);
* ``all``: until the last compile column is in (the fresh processes measuring cold and warm
  compiles, side by side).

Targets (issue 35): the table within 15 s, everything within 60 s.

    python benchmarks/compare_time.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"table": 15.0, "all": 60.0}

PROGRAM = textwrap.dedent(r"""
    import json, sys, time
    sys.path.insert(0, sys.argv[2])
    import numpy as np
    from cases import logreg, mlp
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.configdefaults import config
    from tensorgraph.notebook.compare import compare
    from tensorgraph.tensor.special import log_softmax

    def seed():
        x_val, y_val, w_val = logreg.data(logreg.size(False))
        x, y = tt.matrix("x"), tt.vector("y")
        w = tg.shared(w_val, name="w")
        b = tg.shared(np.asarray(0.0, dtype="float32"), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        gw, gb = tg.grad(xent.mean() + 0.01 * (w ** 2).sum(), [w, b])
        return ([p_1 > 0.5, xent], [x, y], [(w, w - 0.01 * gw), (b, b - 0.01 * gb)],
                (x_val, y_val))

    def tutorial_mlp():
        x_val, t_val, params = mlp.data(mlp.size(False))
        x, t = tt.matrix("x"), tt.matrix("t")
        shared = [tg.shared(p) for p in params]
        w1, b1, w2, b2 = shared
        h = tt.tanh(tt.dot(x, w1) + b1)
        cost = -(t * log_softmax(tt.dot(h, w2) + b2, axis=1)).sum(axis=1).mean()
        grads = tg.grad(cost, shared)
        return cost, [x, t], [(p, p - 0.01 * g) for p, g in zip(shared, grads)], (x_val, t_val)

    with config.change_flags(floatX="float32"):
        outputs, inputs, updates, args = {"seed": seed, "mlp": tutorial_mlp}[sys.argv[1]]()
        tg.function(inputs, outputs, updates=updates)(*args)   # the notebook's own compile
    started = time.perf_counter()
    cmp = compare(outputs, inputs, updates=updates, args=args, wait=False)
    table = time.perf_counter() - started
    cmp.wait()
    done = time.perf_counter() - started
    rows = {r["mode"]: {k: r[k] for k in ("compile_here", "compile_cold", "compile_warm",
                                          "call_median", "error", "compile_note")}
            for r in cmp.rows}
    print("TG_COMPARE_TIME " + json.dumps({"table": table, "all": done, "rows": rows}))
""")


def measure(graph: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="tg-compare-time-") as base:
        env = {k: v for k, v in os.environ.items()
               if k not in ("JAX_COMPILATION_CACHE_DIR", "NUMBA_CACHE_DIR",
                            "TORCHINDUCTOR_CACHE_DIR")}
        env["TENSORGRAPH_FLAGS"] = f"base_compiledir={base}"
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), env.get("PYTHONPATH", "")])
        done = subprocess.run([sys.executable, "-c", PROGRAM, graph, HERE], env=env,
                              capture_output=True, text=True, check=False, timeout=900)
    for line in done.stdout.splitlines():
        if line.startswith("TG_COMPARE_TIME "):
            return json.loads(line.split(" ", 1)[1])
    raise RuntimeError(f"{graph}: {done.stderr[-2000:]}")


def main() -> int:
    missed = False
    print(f"{'graph':6}  {'table':>8}  {'all':>8}   (targets: table <= {TARGETS['table']:.0f} s, "
          f"all <= {TARGETS['all']:.0f} s)")
    for graph in ("seed", "mlp"):
        got = measure(graph)
        ok = all(got[k] <= TARGETS[k] for k in TARGETS)
        missed |= not ok
        print(f"{graph:6}  {got['table']:7.1f}s  {got['all']:7.1f}s   {'ok' if ok else 'missed'}")
        for mode, row in got["rows"].items():
            parts = [f"{k.replace('compile_', '')} {row[k]:.2f} s" for k in
                     ("compile_here", "compile_cold", "compile_warm") if row[k] is not None]
            why = row["error"] or row["compile_note"] or ""
            print(f"    {mode:9} {', '.join(parts)}  {why}")
    return 1 if missed and "--check" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
