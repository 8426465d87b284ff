"""Batch prediction on Dask: the tutorial MLP (784-256-10, tanh, softmax, float32) over
``--rows`` x 784 float32 rows in blocks of ``--block`` rows, three ways, in one run:

* ``local``: one process, the whole array block after block in a Python loop (no Dask);
* ``threads``: ``tensorgraph.dask.map_blocks`` on Dask's threaded scheduler;
* ``cluster-1``, ``cluster-2``: the same graph on a ``distributed.LocalCluster`` of 1 and 2
  worker processes (one thread each).

The rows are generated inside each block's task from its block number (a seeded generator),
so no process ships the 1.5 GB of input: what is measured is compute, scheduling and the
shipping of the function. Printed per way: seconds, rows per second, scaling efficiency
against ``local`` (throughput / (workers x local throughput)), and for the clusters the
function's first call on a worker (unpickling + linking: the C from the worker's cache), the
bytes of the pickled function, and the cluster's start-up.

    python benchmarks/dask_predict.py               # 500,000 rows, blocks of 10,000
    python benchmarks/dask_predict.py --rows 50000  # a quick run
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

import numpy as np

FEATURES, HIDDEN, CLASSES = 784, 256, 10


def build_predict():
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.configdefaults import config
    from tensorgraph.tensor.special import softmax

    rng = np.random.default_rng(0)
    with config.change_flags(floatX="float32"):
        x = tt.matrix("x")
        w1 = tg.shared((rng.standard_normal((FEATURES, HIDDEN)) * 0.05).astype("float32"),
                       name="w1")
        b1 = tg.shared(np.zeros(HIDDEN, "float32"), name="b1")
        w2 = tg.shared((rng.standard_normal((HIDDEN, CLASSES)) * 0.05).astype("float32"),
                       name="w2")
        b2 = tg.shared(np.zeros(CLASSES, "float32"), name="b2")
        probs = softmax(tt.dot(tt.tanh(tt.dot(x, w1) + b1), w2) + b2, axis=1)
        return tg.function([x], tt.argmax(probs, axis=1), name="predict")


def block_rows(index: int, rows: int) -> np.ndarray:
    """The rows of block ``index``, made where the block is computed."""
    return np.random.default_rng(index).standard_normal((rows, FEATURES), dtype=np.float32)


def _predict_block(predict, index, rows):
    return predict(block_rows(index, rows))


def _sizes(total: int, block: int) -> list[int]:
    return [min(block, total - start) for start in range(0, total, block)]


def run_local(predict, sizes) -> float:
    started = time.perf_counter()
    for index, rows in enumerate(sizes):
        predict(block_rows(index, rows))
    return time.perf_counter() - started


def run_dask(predict, sizes, scheduler=None) -> float:
    import dask
    import dask.array as da

    blocks = [da.from_delayed(dask.delayed(_predict_block, pure=True)(predict, i, rows),
                              shape=(rows,), dtype=np.int64) for i, rows in enumerate(sizes)]
    labels = da.concatenate(blocks)
    started = time.perf_counter()
    if scheduler is None:
        labels.compute()
    else:
        labels.compute(scheduler=scheduler)
    return time.perf_counter() - started


def _first_call_seconds(blob: bytes) -> float:
    """On a worker: unpickle (link) the function and call it once on one row."""
    started = time.perf_counter()
    predict = pickle.loads(blob)
    predict(np.zeros((1, FEATURES), np.float32))
    return time.perf_counter() - started


def run_cluster(predict, sizes, workers: int) -> dict:
    import distributed

    started = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster)
    start_up = time.perf_counter() - started
    try:
        blob = pickle.dumps(predict)
        firsts = client.gather([client.submit(_first_call_seconds, blob, pure=False,
                                              workers=[addr])
                                for addr in client.scheduler_info()["workers"]])
        shipped = client.scatter(predict, broadcast=True, hash=False)
        import dask
        import dask.array as da

        blocks = [da.from_delayed(dask.delayed(_predict_block, pure=True)(shipped, i, rows),
                                  shape=(rows,), dtype=np.int64)
                  for i, rows in enumerate(sizes)]
        labels = da.concatenate(blocks)
        began = time.perf_counter()
        client.compute(labels, sync=True)
        seconds = time.perf_counter() - began
    finally:
        client.close()
        cluster.close()
    return {"seconds": seconds, "start_up": start_up, "first_call": max(firsts),
            "pickled_bytes": len(blob)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--block", type=int, default=10_000)
    args = parser.parse_args(argv)
    sizes = _sizes(args.rows, args.block)
    predict = build_predict()
    predict(block_rows(0, 8))  # compiled before timing
    print(f"batch prediction, MLP {FEATURES}-{HIDDEN}-{CLASSES} float32, {args.rows:,} rows in "
          f"{len(sizes)} blocks of {args.block:,}; {os.cpu_count()} cores, Python "
          f"{sys.version.split()[0]}")
    local = run_local(predict, sizes)
    rows = [("local (1 process, no Dask)", 1, local, None)]
    rows.append(("threads (map over blocks)", os.cpu_count(), run_dask(predict, sizes,
                                                                        "threads"), None))
    for workers in (1, 2):
        result = run_cluster(predict, sizes, workers)
        rows.append((f"LocalCluster, {workers} worker{'s' if workers > 1 else ''}", workers,
                     result["seconds"], result))
    base = args.rows / local
    print(f"{'way':32} {'seconds':>8} {'rows/s':>11} {'efficiency':>10}  notes")
    for label, workers, seconds, extra in rows:
        rate = args.rows / seconds
        note = ""
        if extra:
            note = (f"start-up {extra['start_up']:.2f} s, first call on a worker "
                    f"{extra['first_call'] * 1e3:.0f} ms, function pickled "
                    f"{extra['pickled_bytes'] / 1e3:.0f} kB")
        print(f"{label:32} {seconds:8.2f} {rate:11,.0f} {rate / (workers * base):10.2f}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
