"""Call overhead and a fused elementwise chain: numpy vs tensorgraph FAST_RUN (C).

    python benchmarks/c_elemwise.py

Prints medians (interleaved runs) and ratios to numpy. Targets (issue 5): call overhead of
``x + 1`` on 10 float32 <= 1.0 us; ``tanh(x*y + exp(-x))*0.5 + log1p(y*y)`` on 1e6 float32
<= 0.4x numpy.
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import config


def per_call(fn, number: int, repeat: int = 15) -> float:
    """Median seconds per call over ``repeat`` batches of ``number`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def interleaved(cases: dict, number: int, rounds: int = 5) -> dict:
    """Median per-call time of each case, the cases measured in turn ``rounds`` times."""
    samples = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            samples[name].append(per_call(fn, number, repeat=3))
    return {name: statistics.median(v) for name, v in samples.items()}


def call_overhead():
    x = tt.fvector("x")
    f = tensorgraph.function([x], x + np.float32(1), mode="FAST_RUN")
    g = tensorgraph.function([x], x + np.float32(1), mode="FAST_RUN")
    g.trust_input = True
    a = np.ones(10, dtype="float32")
    one = np.float32(1)
    return interleaved({"numpy x + 1": lambda: a + one,
                        "tensorgraph FAST_RUN": lambda: f(a),
                        "tensorgraph trust_input": lambda: g(a)}, number=20000)


def chain(n: int = 1_000_000):
    rng = np.random.default_rng(0)
    a = rng.normal(size=n).astype("float32")
    b = rng.normal(size=n).astype("float32")
    x, y = tt.fvector("x"), tt.fvector("y")
    out = tt.tanh(x * y + tt.exp(-x)) * np.float32(0.5) + tt.log1p(y * y)
    f1 = tensorgraph.function([x, y], out, mode="FAST_RUN")
    with config.change_flags(openmp=True, openmp_elemwise_minsize=100_000):
        f2 = tensorgraph.function([x, y], out, mode="FAST_RUN")
    half = np.float32(0.5)

    def numpy_chain():
        return np.tanh(a * b + np.exp(-a)) * half + np.log1p(b * b)

    expected = numpy_chain()
    for f in (f1, f2):
        np.testing.assert_allclose(f(a, b), expected, rtol=1e-5, atol=1e-6)
    return interleaved({"numpy": numpy_chain, "tensorgraph 1 thread": lambda: f1(a, b),
                        f"tensorgraph openmp ({os.cpu_count()} threads)": lambda: f2(a, b)},
                       number=20)


def table(title, results, base, unit, scale):
    print(f"\n{title}")
    for name, t in results.items():
        print(f"  {name:<34} {t * scale:9.3f} {unit}   {t / results[base]:5.2f}x numpy")


def main():
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    table("call overhead, f(x) = x + 1 on 10 float32", call_overhead(), "numpy x + 1",
          "us", 1e6)
    table("tanh(x*y + exp(-x))*0.5 + log1p(y*y) on 1e6 float32", chain(), "numpy", "ms", 1e3)


if __name__ == "__main__":
    main()
