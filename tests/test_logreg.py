"""The seed exercise: Theano's logistic regression (400 x 784, float32), with tensorgraph names.

The program is the original one but for the imports; it runs in FAST_COMPILE with test values
computed while the graph is built. In float32, p_1 rounds to exactly 1 for about a third of the
samples, so the graph as written computes log(0) and 0/0 (the test values show it, with numpy
RuntimeWarnings); training works because FAST_COMPILE's stabilize rewrites turn
log(sigmoid) / log(1 - sigmoid) into softplus forms before the function runs.
"""

import numpy as np
import pytest

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
