"""Reductions, BLAS products and softmax: numpy vs tensorgraph's generated C.

    python benchmarks/c_kernels.py

Each tensorgraph function holds one node (``trust_input``, so the time is the kernel plus
the ~0.5 us of a call). Prints medians of interleaved runs and the ratio to numpy's own call.
The BLAS rows also show tensorgraph's own kernels (``blas__ldflags='none'``).
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
from tensorgraph.compile.mode import Mode
from tensorgraph.tensor.blas import dot22, gemv
from tensorgraph.tensor.special import log_softmax, softmax

C = Mode("cvm", None)


def per_call(fn, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def interleaved(cases: dict, number: int, rounds: int = 9) -> dict:
    samples = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            samples[name].append(per_call(fn, number))
    return {name: statistics.median(v) for name, v in samples.items()}


def compiled(inputs, output, **flags):
    with config.change_flags(**flags):
        f = tensorgraph.function(inputs, output, mode=C)
    f.trust_input = True
    return f


def reductions():
    rng = np.random.default_rng(0)
    v = rng.normal(size=1_000_000).astype("float32")
    m = v.reshape(1000, 1000)
    x, a = tt.fvector(), tt.fmatrix()
    f_sum = compiled([x], tt.sum(x))                        # float64 accumulator (default)
    f_sum32 = compiled([x], tt.sum(x, acc_dtype="float32"))
    f_omp = compiled([x], tt.sum(x), openmp=True, openmp_elemwise_minsize=100_000)
    f_max = compiled([x], tt.max(x))
    f_rows, f_cols = compiled([a], tt.sum(a, axis=1)), compiled([a], tt.sum(a, axis=0))
    f_argmax = compiled([a], tt.argmax(a, axis=1))
    return [
        ("sum of 1e6 float32", {"numpy np.sum(x)": lambda: np.sum(v),
                                "tensorgraph (float64 acc)": lambda: f_sum(v),
                                "tensorgraph (float32 acc)": lambda: f_sum32(v),
                                f"tensorgraph openmp ({os.cpu_count()} thr)": lambda: f_omp(v)},
         200),
        ("max of 1e6 float32", {"numpy np.max(x)": lambda: np.max(v),
                                "tensorgraph": lambda: f_max(v)}, 200),
        ("sum(axis=1) of 1000x1000 float32", {"numpy": lambda: m.sum(axis=1),
                                              "tensorgraph": lambda: f_rows(m)}, 200),
        ("sum(axis=0) of 1000x1000 float32", {"numpy": lambda: m.sum(axis=0),
                                              "tensorgraph": lambda: f_cols(m)}, 200),
        ("argmax(axis=1) of 1000x1000 float32", {"numpy": lambda: m.argmax(axis=1),
                                                 "tensorgraph": lambda: f_argmax(m)}, 100),
    ]


def products():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(400, 784)).astype("float32")
    xv = rng.normal(size=784).astype("float32")
    X = rng.normal(size=(128, 784)).astype("float32")
    W = rng.normal(size=(784, 256)).astype("float32")
    y, a, x = tt.fvector(), tt.fmatrix(), tt.fvector()
    b = tt.fmatrix()
    one, zero = tt.constant(np.float32(1)), tt.constant(np.float32(0))
    fv = compiled([y, a, x], gemv(y, one, a, x, zero))
    fv_own = compiled([y, a, x], gemv(y, one, a, x, zero), blas__ldflags="none")
    fm = compiled([a, b], dot22(a, b))
    fm_own = compiled([a, b], dot22(a, b), blas__ldflags="none")
    y0 = np.zeros(400, "float32")
    return [
        ("sgemv 400x784", {"numpy A @ x": lambda: A @ xv,
                           "tensorgraph Gemv (OpenBLAS)": lambda: fv(y0, A, xv),
                           "tensorgraph Gemv (own kernel)": lambda: fv_own(y0, A, xv)}, 500),
        ("sgemm 128x784 @ 784x256", {"numpy X @ W": lambda: X @ W,
                                     "tensorgraph Dot22 (OpenBLAS)": lambda: fm(X, W),
                                     "tensorgraph Dot22 (own kernel)": lambda: fm_own(X, W)},
         20),
    ]


def softmaxes():
    rng = np.random.default_rng(2)
    v = rng.normal(size=(128, 10)).astype("float32")
    x = tt.fmatrix()
    fs, fl = compiled([x], softmax(x)), compiled([x], log_softmax(x))

    def np_softmax():
        e = np.exp(v - v.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def np_log_softmax():
        s = v - v.max(axis=1, keepdims=True)
        return s - np.log(np.exp(s).sum(axis=1, keepdims=True))

    return [("softmax of 128x10 float32", {"numpy (stable, by hand)": np_softmax,
                                           "tensorgraph Softmax": lambda: fs(v)}, 5000),
            ("log_softmax of 128x10 float32", {"numpy (stable, by hand)": np_log_softmax,
                                               "tensorgraph LogSoftmax": lambda: fl(v)}, 5000)]


def main():
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    for title, cases, number in reductions() + products() + softmaxes():
        results = interleaved(cases, number)
        base = next(iter(results.values()))
        print(f"\n{title}")
        for name, t in results.items():
            print(f"  {name:<36} {t * 1e6:10.1f} us   {t / base:5.2f}x numpy")


if __name__ == "__main__":
    main()
