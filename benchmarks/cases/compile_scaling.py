"""How compile time grows with the graph: the SGD step of an MLP with 1 to 64 tanh layers (32
units each, softmax cross-entropy), compiled in a new process, *cold* (empty module cache) and
*warm* (the cache the cold run filled), for tensorgraph (FAST_RUN, from graph to first result:
compile tiers let the first call run before the optimized code is built; the time to the
optimized code goes in the notes) and PyTensor (linker 'cvm', its own cache in a temporary
``compiledir``, ``function()`` alone). Each compile has ``TIMEOUT`` seconds; a
framework that needs longer is shown as over the limit. Also the edit-compile loop: the seed
program with another learning rate and weight decay, in a new process with the warm cache."""

import json
import os
import subprocess
import sys
import tempfile

from cases import compile_time

NAME = "scaling"
LAYERS = (1, 8, 16, 32, 64)
TINY_LAYERS = (1, 2)
TIMEOUT = 60.0
COLD_TARGET_64 = 0.5   # seconds from graph to first result, 64 layers (compile tiers on)
WARM_TARGET_64 = 0.2
EDIT_TARGET = 0.15

_TENSORGRAPH = r"""
import json, sys, time
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.tensor.special import log_softmax
config.floatX = "float32"
layers = int(sys.argv[1])
rng = np.random.default_rng(0)
x, t = tt.matrix("x"), tt.matrix("t")
params, h = [], x
for k in range(layers):
    w = tg.shared((rng.standard_normal((32, 32)) * 0.1).astype("float32"), name=f"w{k}")
    b = tg.shared(np.zeros(32, "float32"), name=f"b{k}")
    params += [w, b]
    h = tt.tanh(tt.dot(h, w) + b)
cost = -(t * log_softmax(h)).sum(axis=1).mean()
grads = tg.grad(cost, params)
x_val = rng.standard_normal((128, 32)).astype("float32")
t_val = np.eye(32, dtype="float32")[rng.integers(0, 32, 128)]
started = time.perf_counter()
f = tg.function([x, t], cost, updates=[(p, p - 0.01 * g) for p, g in zip(params, grads)])
f(x_val, t_val)
seconds = time.perf_counter() - started
f.wait_optimized()
optimized = time.perf_counter() - started
print(json.dumps({"compile": seconds, "optimized": optimized,
                  "nodes": len(f.maker.fgraph.apply_nodes)}))
"""

_PYTENSOR = r"""
import json, sys, time
import numpy as np
import pytensor as pt
import pytensor.tensor as ptt
from pytensor.compile.mode import Mode
from pytensor.tensor.special import log_softmax
layers = int(sys.argv[1])
rng = np.random.default_rng(0)
x, t = ptt.matrix("x", dtype="float32"), ptt.matrix("t", dtype="float32")
params, h = [], x
for k in range(layers):
    w = pt.shared((rng.standard_normal((32, 32)) * 0.1).astype("float32"), name=f"w{k}")
    b = pt.shared(np.zeros(32, "float32"), name=f"b{k}")
    params += [w, b]
    h = ptt.tanh(ptt.dot(h, w) + b)
cost = -(t * log_softmax(h)).sum(axis=1).mean()
grads = pt.grad(cost, params)
lr = np.float32(0.01)
started = time.perf_counter()
f = pt.function([x, t], cost, updates=[(p, p - lr * g) for p, g in zip(params, grads)],
                mode=Mode(linker="cvm", optimizer="fast_run"))
seconds = time.perf_counter() - started
print(json.dumps({"compile": seconds, "nodes": len(f.maker.fgraph.apply_nodes)}))
"""


def _run(script: str, layers: int, env: dict):
    """{"compile": seconds, "nodes": n}, or None past TIMEOUT."""
    try:
        done = subprocess.run([sys.executable, "-c", script, str(layers)], env=env,
                              capture_output=True, text=True, timeout=TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip()
                           else f"exit code {done.returncode}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return None if result["compile"] > TIMEOUT else result


def _pytensor_env(compiledir: str) -> dict:
    env = dict(os.environ)
    flags = env.get("PYTENSOR_FLAGS", "")
    env["PYTENSOR_FLAGS"] = ",".join(f for f in (flags, f"compiledir={compiledir}") if f)
    return env


def scaling(frameworks, tiny: bool) -> list[dict]:
    """Per layer count: nodes after rewriting and (cold, warm) seconds per framework (None:
    over TIMEOUT, or not measured)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="tg-bench-scaling-") as base:
        for layers in (TINY_LAYERS if tiny else LAYERS):
            row = {"layers": layers}
            if "tensorgraph" in frameworks:
                env = compile_time._env(os.path.join(base, f"tg{layers}"))
                cold = _run(_TENSORGRAPH, layers, env)
                warm = _run(_TENSORGRAPH, layers, env) if cold else None
                row["nodes"] = cold["nodes"] if cold else None
                row["tensorgraph"] = (cold and cold["compile"], warm and warm["compile"])
            if "pytensor" in frameworks:
                env = _pytensor_env(os.path.join(base, f"pt{layers}"))
                cold = _run(_PYTENSOR, layers, env)
                warm = _run(_PYTENSOR, layers, env) if cold else None
                row["pytensor_nodes"] = cold["nodes"] if cold else None
                row["pytensor"] = (cold and cold["compile"], warm and warm["compile"])
            print(f"  measured compile scaling, {layers} layers", file=sys.stderr, flush=True)
            rows.append(row)
    return rows


def edit_times(samples: int) -> list[float]:
    """Seconds of the seed's ``function(...)`` calls in new processes whose cache was filled
    by the program with learning rate 0.01 and weight decay 0.01, now with other values."""
    original = compile_time._TENSORGRAPH
    with tempfile.TemporaryDirectory(prefix="tg-bench-edit-") as base:
        env = compile_time._env(os.path.join(base, "cache"))
        compile_time._run(original, env)
        times = []
        for k in range(samples):
            lr, decay = 0.02 + 0.01 * k, 0.003 * (k + 1)
            edited = (original.replace("0.01 * gw", f"{lr} * gw")
                      .replace("0.01 * gb", f"{lr} * gb").replace("0.01 * (w", f"{decay} * (w"))
            assert edited != original
            times.append(compile_time._run(edited, env)["compile"])
    return times
