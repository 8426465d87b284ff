"""Compile time of the seed logistic regression with and without the rewrite history.

Run: ``python benchmarks/rewrite_history_overhead.py``. Prints, for ``train`` and ``predict``:
nodes before/after rewriting, compile time with no rewrites, with FAST_RUN rewrites, and the
share of the FAST_RUN compile time due to recording the history (which is always on; it must
stay under 10%).
"""

import statistics
import time

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.configdefaults import config
from tensorgraph.graph.fg import Feature
from tensorgraph.rewriting import presets


class _NoHistory(Feature):
    """Stands in for RewriteHistory: records nothing (the machinery then skips all recording)."""


def seed_graph():
    rng = np.random.RandomState(0)
    x, y = tt.matrix("x"), tt.vector("y")
    w = tg.shared(rng.randn(784).astype(config.floatX), name="w")
    b = tg.shared(np.asarray(0., dtype=config.floatX), name="b")
    p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = tg.grad(cost, [w, b])
    return {"train": ([x, y], [prediction, xent], [(w, w - 0.01 * gw), (b, b - 0.01 * gb)]),
            "predict": ([x], [prediction], None)}


def _compile(args, mode):
    inputs, outputs, updates = args
    started = time.perf_counter()
    f = tg.function(inputs, outputs, updates=updates, mode=mode)
    return time.perf_counter() - started, f


def compile_time(args, mode, repeat=30):
    times = [_compile(args, mode)[0] for _ in range(repeat)]
    return statistics.median(times), _compile(args, mode)[1]


def history_overhead(args, repeat=60):
    """Median compile times with and without the history, runs interleaved (less drift)."""
    with_history, without = [], []
    mode = Mode("py", "fast_run")
    original = presets.RewriteHistory
    for _ in range(repeat):
        with_history.append(_compile(args, mode)[0])
        presets.RewriteHistory = _NoHistory
        try:
            without.append(_compile(args, mode)[0])
        finally:
            presets.RewriteHistory = original
    return statistics.median(with_history), statistics.median(without)


def main():
    with config.change_flags(floatX="float32"):
        graphs = seed_graph()
        for name, args in graphs.items():
            compile_time(args, Mode("py", "fast_run"), repeat=3)  # warm caches and imports
            t_none, f_none = compile_time(args, Mode("py", None))
            _, f_run = compile_time(args, Mode("py", "fast_run"), repeat=1)
            t_run, t_bare = history_overhead(args)
            print(f"{name}: nodes {len(f_none.maker.fgraph.apply_nodes)} -> "
                  f"{len(f_run.maker.fgraph.apply_nodes)} "
                  f"({len(f_run.maker.fgraph.rewrite_history)} steps); compile "
                  f"{t_none * 1e3:.1f} ms without rewrites, {t_run * 1e3:.1f} ms with FAST_RUN "
                  f"rewrites ({t_bare * 1e3:.1f} ms of it without history: overhead "
                  f"{(t_run - t_bare) / t_bare * 100:+.1f}%)")


if __name__ == "__main__":
    main()
