"""Time from graph to first results of the seed program (logistic regression ``train`` and
``predict`` on 400 x 784 float32), each sample in a new Python process: *cold* with an empty
module cache, *warm* with the cache the cold run filled. ``first``: the ``function(...)`` calls
and the first call of each (the number a notebook user waits for); ``compile``: the
``function(...)`` calls alone; ``optimized``: until both run their optimized code (compile
tiers, ``wait_optimized()``). Graph building and imports are reported apart. The same
program compiles in tensorgraph's JAX, NUMBA and PYTORCH modes too (the mode as the script's
argument), each back end's own disk cache under the temporary ``base_compiledir``. JAX beside it:
``jax.jit`` of the same program written with jax.numpy, its persistent compilation cache empty
(cold) or filled (warm)."""

import json
import os
import subprocess
import sys
import tempfile

NAME = "compile"
COLD_TARGET = 0.17   # seconds (JAX's cold time on the reference machine, when JAX is absent)
COLD_TARGET_JAX = 1.0  # at most JAX's cold time in the same run
WARM_TARGET = 0.04

_TENSORGRAPH = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
t1 = time.perf_counter()
config.floatX = "float32"
rng = np.random.default_rng(0)
x, y = tt.matrix("x"), tt.vector("y")
w = tg.shared(rng.standard_normal(784).astype("float32"), name="w")
b = tg.shared(np.asarray(0.0, dtype="float32"), name="b")
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
prediction = p_1 > 0.5
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
cost = xent.mean() + 0.01 * (w ** 2).sum()
gw, gb = tg.grad(cost, [w, b])
X = rng.standard_normal((400, 784)).astype("float32")
Y = (rng.random(400) > 0.5).astype("float32")
t2 = time.perf_counter()
mode = sys.argv[1] if len(sys.argv) > 1 else None
train = tg.function([x, y], [prediction, xent], updates=[(w, w - 0.01 * gw), (b, b - 0.01 * gb)],
                    mode=mode)
predict = tg.function([x], prediction, mode=mode)
t3 = time.perf_counter()
train(X, Y)
predict(X)
t4 = time.perf_counter()
train.wait_optimized()
predict.wait_optimized()
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "graph": t2 - t1, "compile": t3 - t2, "first": t4 - t2,
                  "optimized": t5 - t2}))
"""

_JAX = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import jax
import jax.numpy as jnp
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
t1 = time.perf_counter()
rng = np.random.default_rng(0)
w = jnp.asarray(rng.standard_normal(784).astype("float32"))
b = jnp.asarray(np.float32(0.0))
X = jnp.asarray(rng.standard_normal((400, 784)).astype("float32"))
Y = jnp.asarray((rng.random(400) > 0.5).astype("float32"))

def probabilities(w, b, x):
    return 1 / (1 + jnp.exp(-(x @ w) - b))

def cost(w, b, x, y):
    p_1 = probabilities(w, b, x)
    xent = -y * jnp.log(p_1) - (1 - y) * jnp.log(1 - p_1)
    return xent.mean() + 0.01 * (w ** 2).sum(), xent

def train_step(w, b, x, y):
    (_, xent), (gw, gb) = jax.value_and_grad(cost, argnums=(0, 1), has_aux=True)(w, b, x, y)
    return probabilities(w, b, x) > 0.5, xent, w - 0.01 * gw, b - 0.01 * gb

t2 = time.perf_counter()
train = jax.jit(train_step)
predict = jax.jit(lambda w, b, x: probabilities(w, b, x) > 0.5)
jax.block_until_ready(train(w, b, X, Y))
jax.block_until_ready(predict(w, b, X))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t3 - t2}))
"""

_PYTENSOR = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
import pytensor as pt
import pytensor.tensor as ptt
from pytensor.compile.mode import Mode
t1 = time.perf_counter()
mode = Mode(linker="cvm", optimizer="fast_run")
rng = np.random.default_rng(0)
x, y = ptt.matrix("x", dtype="float32"), ptt.vector("y", dtype="float32")
w = pt.shared(rng.standard_normal(784).astype("float32"), name="w")
b = pt.shared(np.asarray(0.0, dtype="float32"), name="b")
p_1 = 1 / (1 + ptt.exp(-ptt.dot(x, w) - b))
prediction = p_1 > 0.5
xent = -y * ptt.log(p_1) - (1 - y) * ptt.log(1 - p_1)
cost = xent.mean() + np.float32(0.01) * (w ** 2).sum()
gw, gb = pt.grad(cost, [w, b])
t2 = time.perf_counter()
lr = np.float32(0.01)
train = pt.function([x, y], [prediction, xent], updates=[(w, w - lr * gw), (b, b - lr * gb)],
                    mode=mode)
predict = pt.function([x], prediction, mode=mode)
t3 = time.perf_counter()
X = rng.standard_normal((400, 784)).astype("float32")
train(X, (rng.random(400) > 0.5).astype("float32"))
predict(X)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "graph": t2 - t1, "compile": t3 - t2, "first": t4 - t2}))
"""


def _run(script: str, env: dict, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip()
                           else f"exit code {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def tensorgraph_times(cold_samples: int, warm_samples: int, mode: str | None = None):
    """(cold samples, warm samples): dicts of import / graph / compile seconds; ``mode``
    (``"JAX"`` ...) compiles in that mode instead of the default (its back end's disk cache
    goes under the same ``base_compiledir``)."""
    args = (mode,) if mode else ()
    cold, warm = [], []
    with tempfile.TemporaryDirectory(prefix="tg-bench-cache-") as base:
        for k in range(cold_samples):
            env = _env(os.path.join(base, f"cold{k}"))
            cold.append(_run(_TENSORGRAPH, env, *args))
        env = _env(os.path.join(base, "cold0"))
        warm = [_run(_TENSORGRAPH, env, *args) for _ in range(warm_samples)]
    return cold, warm


def jax_times(cold_samples: int, warm_samples: int):
    """(cold samples, warm samples) of JAX: its persistent cache empty, then filled."""
    cold, warm = [], []
    with tempfile.TemporaryDirectory(prefix="tg-bench-jax-") as base:
        for k in range(cold_samples):
            cold.append(_run(_JAX, dict(os.environ), os.path.join(base, f"cold{k}")))
        warm = [_run(_JAX, dict(os.environ), os.path.join(base, "cold0"))
                for _ in range(warm_samples)]
    return cold, warm


def pytensor_warm_times(samples: int):
    """Warm samples of PyTensor (its own cache, filled by a first untimed run)."""
    env = dict(os.environ)
    _run(_PYTENSOR, env)
    return [_run(_PYTENSOR, env) for _ in range(samples)]


def _env(base_compiledir: str) -> dict:
    env = dict(os.environ)
    flags = env.get("TENSORGRAPH_FLAGS", "")
    env["TENSORGRAPH_FLAGS"] = ",".join(
        f for f in (flags, f"base_compiledir={base_compiledir}") if f)
    return env
