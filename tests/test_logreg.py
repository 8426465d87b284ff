"""The seed exercise: Theano's logistic regression (400 x 784, float32), with tensorgraph names.

The program is the original one but for the imports; it runs in FAST_COMPILE with test values
computed while the graph is built. In float32, p_1 rounds to exactly 1 for about a third of the
samples, so the graph as written computes log(0) and 0/0 (the test values show -inf and nan);
training works because FAST_COMPILE's stabilize rewrites turn
log(sigmoid) / log(1 - sigmoid) into softplus forms before the function runs.
"""

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config

N, FEATS = 400, 784


def build(seed=42):
    """The exercise's graph and functions (floatX=float32, test values on)."""
    rng = np.random.RandomState(seed)
    floatX = config.floatX
    D = (rng.randn(N, FEATS).astype(floatX), rng.randint(size=N, low=0, high=2).astype(floatX))
    x = tt.matrix("x")
    y = tt.vector("y")
    w = tg.shared(rng.randn(FEATS).astype(floatX), name="w")
    b = tg.shared(np.asarray(0., dtype=floatX), name="b")
    x.tag.test_value = D[0]
    y.tag.test_value = D[1]
    p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = tg.grad(cost, [w, b])
    train = tg.function(inputs=[x, y], outputs=[prediction, xent],
                        updates=[(w, w - 0.01 * gw), (b, b - 0.01 * gb)], name="train")
    predict = tg.function(inputs=[x], outputs=prediction, name="predict")
    return locals()


FLAGS = dict(floatX="float32", compute_test_value="raise", mode="FAST_COMPILE")


def test_graph_stays_float32_and_test_values_are_computed():
    with config.change_flags(**FLAGS):
        g = build()
    for name in ("p_1", "xent", "cost", "gw", "gb"):
        assert g[name].dtype == "float32", name
    assert g["xent"].tag.test_value.shape == (N,)
    assert g["cost"].tag.test_value.dtype == "float32"
    assert g["prediction"].dtype == "bool"
    with config.change_flags(**FLAGS):
        prediction, xent = g["train"](*g["D"])
    assert prediction.shape == (N,) and xent.dtype == "float32"
    assert g["w"].get_value().dtype == "float32" and g["b"].get_value().dtype == "float32"
    assert all(node.outputs[0].dtype != "float64" for node in g["train"].maker.fgraph.toposort()
               if hasattr(node.outputs[0].type, "dtype"))


def test_training_reaches_full_accuracy_and_w_stays_float32():
    with config.change_flags(**FLAGS):
        g = build()
        train, predict, D = g["train"], g["predict"], g["D"]
        for _ in range(10000):
            train(D[0], D[1])
        accuracy = (predict(D[0]) == D[1]).mean()
    assert accuracy == 1.0
    assert g["w"].get_value().dtype == "float32"
    assert g["b"].get_value().dtype == "float32"


def test_a_new_learning_rate_or_weight_decay_compiles_no_c():
    """The edit-compile loop of a notebook: numbers that are not 0, 1, 2, -1 or 1/2 reach the
    fused kernels at run time, so a new learning rate finds every kernel already compiled (and
    the new value is the one used)."""
    def train_step(lr, decay):
        x, y = tt.matrix("x"), tt.vector("y")
        w = tg.shared(np.ones(3, config.floatX), name="w")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w)))
        cost = (-y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)).mean() + decay * (w ** 2).sum()
        f = tg.function([x, y], cost, updates=[(w, w - lr * tg.grad(cost, w))],
                        mode=tg.Mode(linker="cvm", optimizer="fast_run"))
        return f, w

    first, _ = train_step(0.0123, 0.0071)
    assert first.maker.compile_record.c_nodes > 0
    f, w = train_step(0.0456, 0.0089)
    assert f.maker.compile_record.modules == "memory"
    assert f.maker.compile_record.units == 0
    xv = np.arange(6, dtype=config.floatX).reshape(2, 3) / 6
    yv = np.asarray([0, 1], config.floatX)
    f(xv, yv)
    p = 1 / (1 + np.exp(-xv @ np.ones(3)))
    grad = xv.T @ (p - yv) / 2 + 2 * 0.0089 * np.ones(3)
    np.testing.assert_allclose(w.get_value(), 1 - 0.0456 * grad, rtol=1e-5)


def test_new_static_batch_size_compiles_no_c():
    """Static shapes other than 1 do not reach the generated C (only size-1 dimensions
    broadcast), so a graph rebuilt for another batch size reuses every kernel."""
    def predict(n):
        x = tt.tensor(config.floatX, shape=(n, 5), name="x")
        w = tg.shared(np.ones(5, config.floatX), name="w")
        return tg.function([x], tt.tanh(tt.dot(x, w)) * 3.5 > 0.25,
                           mode=tg.Mode(linker="cvm", optimizer="fast_run"))

    predict(40)
    f = predict(50)
    assert (f.maker.compile_record.modules, f.maker.compile_record.units) == ("memory", 0)
    assert f(np.ones((50, 5), config.floatX)).shape == (50,)
