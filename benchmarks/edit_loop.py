"""The notebook's edit-compile loop: how long from a changed cell to its first result.

The program: the tutorial MLP's SGD step (784-256-10, tanh, log-softmax cross-entropy,
float32, batch 128) and its prediction function, compiled and called once. Then, one at a
time, an edit a user makes between two runs of the cell:

* ``learning rate``: another number in the update (reaches the C kernels at run time);
* ``shape``: 300 hidden units instead of 256 (the same graph: shapes are not static);
* ``output``: the step also returns the batch accuracy (a new node, a new graph);
* ``layer``: a second hidden layer (new nodes of kinds already compiled).

Each edit is timed from graph to first result (``function(...)`` and the first call of each
function), *same process* (the original compiled before in this process, as when a cell is run
again) and *new process* (a fresh interpreter whose cache the original filled, as after a
kernel restart). With compile tiers on (the default) a first result may come from the quick
tier; ``optimized`` is when both functions run their optimized code.

    python benchmarks/edit_loop.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

EDITS = ["original", "learning rate", "shape", "output", "layer"]

PROGRAM = textwrap.dedent(r"""
    import json, sys, time
    import numpy as np
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.configdefaults import config
    from tensorgraph.tensor.special import log_softmax

    config.floatX = "float32"

    def build(edit):
        rng = np.random.default_rng(0)
        hidden = 300 if edit == "shape" else 256
        lr = 0.05 if edit == "learning rate" else 0.01
        x, t = tt.matrix("x"), tt.matrix("t")
        sizes = [784, hidden] + ([hidden] if edit == "layer" else []) + [10]
        params, h = [], x
        for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            w = tg.shared((rng.standard_normal((n_in, n_out)) * 0.05).astype("float32"),
                          name=f"w{k}")
            b = tg.shared(np.zeros(n_out, "float32"), name=f"b{k}")
            params += [w, b]
            z = tt.dot(h, w) + b
            h = tt.tanh(z) if k < len(sizes) - 2 else z
        logp = log_softmax(h, axis=1)
        cost = -(t * logp).sum(axis=1).mean()
        outputs = [cost]
        if edit == "output":
            outputs.append(tt.eq(tt.argmax(logp, axis=1), tt.argmax(t, axis=1)).mean())
        grads = tg.grad(cost, params)
        x_val = rng.standard_normal((128, 784)).astype("float32")
        t_val = np.eye(10, dtype="float32")[rng.integers(0, 10, 128)]
        started = time.perf_counter()
        step = tg.function([x, t], outputs,
                           updates=[(p, p - lr * g) for p, g in zip(params, grads)])
        predict = tg.function([x], tt.argmax(logp, axis=1))
        step(x_val, t_val)
        predict(x_val)
        first = time.perf_counter() - started
        step.wait_optimized()
        predict.wait_optimized()
        return {"first": first, "optimized": time.perf_counter() - started}

    results = {}
    for edit in sys.argv[1].split(","):
        results[edit] = build(edit)
    print(json.dumps(results))
""")


def _run(edits: list[str], env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", PROGRAM, ",".join(edits)], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(samples: int = 3) -> dict:
    """{edit: {"same": [seconds], "new": [seconds], "optimized": [seconds]}}."""
    table = {edit: {"same": [], "new": [], "optimized_new": []} for edit in EDITS[1:]}
    for k in range(samples):
        with tempfile.TemporaryDirectory(prefix="tg-edit-loop-") as base:
            env = dict(os.environ)
            env["TENSORGRAPH_FLAGS"] = ",".join(
                f for f in (env.get("TENSORGRAPH_FLAGS", ""), f"base_compiledir={base}") if f)
            _run(["original"], env)  # fills the cache (C modules and rewritten graphs)
            for edit in EDITS[1:]:
                new = _run([edit], env)[edit]  # a fresh process, the warm cache
                table[edit]["new"].append(new["first"])
                table[edit]["optimized_new"].append(new["optimized"])
            # one process: the original, then each edit after it (a cell run again)
            for edit in EDITS[1:]:
                same = _run(["original", edit], env)[edit]
                table[edit]["same"].append(same["first"])
    return table


def main() -> int:
    # the new processes it times load tensorgraph's modules from their .pyc, as an installed
    # wheel does: a shell's PYTHONDONTWRITEBYTECODE would add 20-170 ms of compiling Python
    # source to each of them
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    table = measure()
    print("edit-compile loop: graph -> first result of the MLP step and prediction "
          "(median of 3 samples; compile tiers on)")
    print(f"{'edit':16} {'same process':>14} {'new process':>13} {'optimized (new)':>17}")
    for edit, cells in table.items():
        print(f"{edit:16} {statistics.median(cells['same']) * 1e3:11.0f} ms "
              f"{statistics.median(cells['new']) * 1e3:10.0f} ms "
              f"{statistics.median(cells['optimized_new']) * 1e3:14.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
