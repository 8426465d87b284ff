"""tensorgraph.dask: compiled functions over Dask arrays, on threads and on a real
``distributed.LocalCluster`` (worker processes), and data-parallel training."""

from __future__ import annotations

import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import tensorgraph as tg  # noqa: E402
import tensorgraph.tensor as tt  # noqa: E402
from tensorgraph import dask as tgd  # noqa: E402
from tensorgraph.graph import Apply, Op  # noqa: E402

pytestmark = pytest.mark.xdist_group("dask")  # the clusters of this file, one worker process


def _predict_fn():
    rng = np.random.default_rng(0)
    x = tt.matrix("x")
    w = tg.shared(rng.standard_normal((6, 3)), name="w")
    scores = tt.tanh(tt.dot(x, w))
    return tg.function([x], [scores, tt.argmax(scores, axis=1)], name="predict")


def test_map_blocks_plans_output_blocks_from_the_graph_and_matches_numpy():
    f = _predict_fn()
    x = da.random.default_rng(1).standard_normal((1000, 6), chunks=(128, 6))
    scores, labels = tgd.map_blocks(f, x)
    assert scores.chunks == ((128,) * 7 + (104,), (3,)) and labels.chunks == (x.chunks[0],)
    assert scores.dtype == np.float64 and labels.dtype == np.int64
    with dask.config.set(scheduler="threads", num_workers=4):
        got_scores, got_labels = dask.compute(scores, labels)
    want_scores, want_labels = f(x.compute())
    np.testing.assert_allclose(got_scores, want_scores)
    np.testing.assert_array_equal(got_labels, want_labels)


def test_map_blocks_joins_an_axis_an_output_drops_and_refuses_value_dependent_shapes():
    m = tt.matrix("m")
    f = tg.function([m], tt.sum(m ** 2, axis=1))
    x = da.random.default_rng(2).random((300, 10), chunks=(100, 3))
    np.testing.assert_allclose(tgd.map_blocks(f, x).compute(), (x.compute() ** 2).sum(1))
    v = tt.vector("v")
    positive = tg.function([v], v[v > 0])
    with pytest.raises(ValueError, match="depends on the values of input 0"):
        tgd.map_blocks(positive, da.ones(10, chunks=5))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        tgd.map_blocks(f, x, x)
    with pytest.raises(ValueError, match="is 2-d, but array 0 is 1-d"):
        tgd.map_blocks(f, da.ones(10, chunks=5))


def _data(rng, n=600, features=4):
    x = rng.standard_normal((n, features))
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 > 0).astype("float64")
    return x, y


def _logreg(rng):
    x, y = tt.matrix("x"), tt.vector("y")
    w = tg.shared(rng.standard_normal(4) * 0.1, name="w")
    b = tg.shared(np.asarray(0.0), name="b")
    p = tt.sigmoid(tt.dot(x, w) + b)
    cost = tt.mean(-y * tt.log(p) - (1 - y) * tt.log(1 - p)) + 0.01 * (w ** 2).sum()
    return x, y, w, b, cost


def _sgd(params, grads):
    return [(p, p - 0.5 * g) for p, g in zip(params, grads)]


def _reference_training(x_val, y_val, steps):
    x, y, w, b, cost = _logreg(np.random.default_rng(3))
    grads = tg.grad(cost, [w, b])
    train = tg.function([x, y], cost, updates=_sgd([w, b], grads))
    costs = [float(train(x_val, y_val)) for _ in range(steps)]
    return costs, w.get_value(), b.get_value()


def test_data_parallel_training_on_threads_equals_training_on_the_whole_data():
    x_val, y_val = _data(np.random.default_rng(4))
    want_costs, want_w, want_b = _reference_training(x_val, y_val, steps=5)
    x, y, w, b, cost = _logreg(np.random.default_rng(3))
    step = tgd.DataParallel([x, y], cost, [w, b], _sgd)
    xs, ys = da.from_array(x_val, chunks=(150, 4)), da.from_array(y_val, chunks=150)
    with dask.config.set(scheduler="threads"):
        costs = [step.step(xs, ys) for _ in range(5)]
    np.testing.assert_allclose(costs, want_costs, rtol=1e-10)
    np.testing.assert_allclose(w.get_value(), want_w, rtol=1e-10)
    np.testing.assert_allclose(b.get_value(), want_b, rtol=1e-10)
    with pytest.raises(ValueError, match="split alike"):
        step.step(xs, da.from_array(y_val, chunks=100))


# -- a real cluster ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_map_blocks_on_a_cluster_equals_a_local_run(client):
    f = _predict_fn()
    x = da.random.default_rng(5).standard_normal((2000, 6), chunks=(250, 6))
    scores, labels = tgd.map_blocks(f, x)
    got_scores, got_labels = client.compute([scores, labels], sync=True)
    want_scores, want_labels = f(x.compute())
    np.testing.assert_allclose(got_scores, want_scores)
    np.testing.assert_array_equal(got_labels, want_labels)


def test_data_parallel_training_on_a_cluster_keeps_the_clients_parameters(client):
    x_val, y_val = _data(np.random.default_rng(6))
    want_costs, want_w, want_b = _reference_training(x_val, y_val, steps=4)
    x, y, w, b, cost = _logreg(np.random.default_rng(3))
    step = tgd.DataParallel([x, y], cost, [w, b], _sgd)
    xs, ys = da.from_array(x_val, chunks=(100, 4)), da.from_array(y_val, chunks=100)
    costs = [step.step(xs, ys) for _ in range(4)]
    np.testing.assert_allclose(costs, want_costs, rtol=1e-10)
    np.testing.assert_allclose(w.get_value(), want_w, rtol=1e-10)
    np.testing.assert_allclose(b.get_value(), want_b, rtol=1e-10)


class _DiesOnce(Op):
    """Kills the process running it the first time (a marker file remembers), then doubles:
    a worker lost in the middle of a map."""

    __props__ = ("marker",)

    def __init__(self, marker):
        self.marker = marker

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(1)
        output_storage[0][0] = inputs[0] * 2

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes


def test_a_worker_killed_in_the_middle_of_a_map_loses_nothing(client, tmp_path):
    m = tt.matrix("m")
    f = tg.function([m], _DiesOnce(str(tmp_path / "died"))(m) + 1, mode="FAST_COMPILE")
    x = da.random.default_rng(7).random((400, 3), chunks=(50, 3))
    got = client.compute(tgd.map_blocks(f, x), retries=2).result(timeout=180)
    np.testing.assert_allclose(got, x.compute() * 2 + 1)
    assert (tmp_path / "died").exists()  # a worker did die on the way
    client.wait_for_workers(2, timeout=60)


def _report(gradient):
    gradient.wait_optimized()
    gradient(np.ones((2, 4)), np.ones(2), np.ones(4), np.asarray(0.0))
    vm = gradient.vm
    return type(vm).__name__, getattr(getattr(vm, "cgraph", None), "found", None)


def test_workers_with_an_empty_cache_at_once_compile_each_module_once(tmp_path):
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'fresh'}"}
    x, y, w, b, cost = _logreg(np.random.default_rng(3))
    step = tgd.DataParallel([x, y], cost, [w, b], _sgd)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40, env=env) as cluster, \
            distributed.Client(cluster) as c:
        shipped = c.scatter(step.gradient, broadcast=True, hash=False)
        workers = list(c.scheduler_info()["workers"])
        reports = c.gather([c.submit(_report, shipped, workers=[addr], pure=False)
                            for addr in workers], asynchronous=False)
    kinds = sorted(found for _, found in reports)
    assert [kind for kind, _ in reports] == ["CVM", "CVM"]
    assert kinds == ["compiled", "disk"], kinds  # one compiled it, the other waited and loaded


def test_a_worker_without_a_c_compiler_runs_python_as_documented(tmp_path):
    env = {"TENSORGRAPH_FLAGS": f"cxx=,base_compiledir={tmp_path / 'none'}"}
    f = _predict_fn()
    x = da.random.default_rng(8).standard_normal((300, 6), chunks=(100, 6))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40, env=env) as cluster, \
            distributed.Client(cluster) as c:
        scores, _ = tgd.map_blocks(f, x)
        np.testing.assert_allclose(c.compute(scores, sync=True), f(x.compute())[0])

        def linked_as():
            import pickle

            return type(pickle.loads(pickle.dumps(f)).vm).__name__

        kind = c.submit(linked_as, pure=False).result()
    assert kind == "VM"  # every node in Python (numpy), the documented rule
