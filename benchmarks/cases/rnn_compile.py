"""Compile time of the RNN training step (``_rnn.py``) written with ``scan``, against the same
network unrolled for one step (no loop), each in a new process with an empty module cache
(cold): the loop should cost at most twice the step it repeats (issue 22). ``compile`` is
until both functions, and the loops' steps, run their optimized code (compile tiers waited
for); ``function`` the ``function(...)`` call alone."""

import json
import os
import subprocess
import sys
import tempfile

NAME = "rnn_compile"
TARGET_RATIO = 2.0

_SCRIPT = r"""
import json, sys, time
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.scan import scan
from tensorgraph.scan.op import Scan
config.floatX = "float32"
unrolled = sys.argv[1] == "unrolled"
rng = np.random.default_rng(0)
n_in = n_hidden = 256
w_x = tg.shared(rng.standard_normal((n_in, n_hidden)).astype("float32"), name="W_x")
w_h = tg.shared(rng.standard_normal((n_hidden, n_hidden)).astype("float32"), name="W_h")
b = tg.shared(np.zeros(n_hidden, "float32"), name="b")
y = tt.matrix("y")
step = lambda x_t, h: tt.tanh(tt.dot(x_t, w_x) + tt.dot(h, w_h) + b)
if unrolled:
    x = tt.matrix("x")
    last = step(x, tt.zeros((x.shape[0], n_hidden), dtype="float32"))
else:
    x = tt.tensor3("x")
    h, _ = scan(step, sequences=x, outputs_info=tt.zeros((x.shape[1], n_hidden),
                                                          dtype="float32"))
    last = h[-1]
cost = ((last - y) ** 2).mean()
grads = tg.grad(cost, [w_x, w_h, b])
t0 = time.perf_counter()
f = tg.function([x, y], cost, updates=[(p, p - 0.01 * g) for p, g in zip((w_x, w_h, b), grads)])
t1 = time.perf_counter()
f.wait_optimized()
for node in f.maker.fgraph.apply_nodes:
    if isinstance(node.op, Scan):
        Scan.runner_of(node).function.wait_optimized()
t2 = time.perf_counter()
print(json.dumps({"function": t1 - t0, "compile": t2 - t0}))
"""


def cold_times(samples: int) -> dict:
    """{"scan": [...], "unrolled": [...]}: dicts of seconds per sample, each in a new process
    with its own empty cache."""
    out = {"scan": [], "unrolled": []}
    with tempfile.TemporaryDirectory(prefix="tg-bench-rnn-") as base:
        for k in range(samples):
            for kind in out:   # interleaved: drift of the machine hits both alike
                env = dict(os.environ)
                flags = env.get("TENSORGRAPH_FLAGS", "")
                env["TENSORGRAPH_FLAGS"] = ",".join(
                    f for f in (flags, f"base_compiledir={os.path.join(base, kind + str(k))}")
                    if f)
                done = subprocess.run([sys.executable, "-c", _SCRIPT, kind], env=env,
                                      capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr.strip().splitlines()[-1])
                out[kind].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out
