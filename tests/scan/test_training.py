"""A tanh RNN trained with back-propagation through time and SGD, against a numpy loop with a
hand-written BPTT, in every linker and mode."""

import numpy as np

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.scan import scan


def _init(seed=0, n_in=2, n_hidden=3):
    rng = np.random.default_rng(seed)
    return {"w_in": rng.normal(size=(n_in, n_hidden)) * 0.5,
            "w_rec": rng.normal(size=(n_hidden, n_hidden)) * 0.5,
            "b": rng.normal(size=n_hidden) * 0.1, "v": rng.normal(size=n_hidden)}


def _numpy_step(p, x, y, lr):
    """One SGD step; returns the loss before it."""
    hs, h = [], np.zeros((x.shape[1], p["w_rec"].shape[0]))
    for x_t in x:
        h = np.tanh(x_t @ p["w_in"] + h @ p["w_rec"] + p["b"])
        hs.append(h)
    out = hs[-1] @ p["v"]
    loss = np.mean((out - y) ** 2)
    dout = 2 * (out - y) / len(y)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    grads["v"] = hs[-1].T @ dout
    dh = np.outer(dout, p["v"])
    for t in range(len(x) - 1, -1, -1):
        da = dh * (1 - hs[t] ** 2)
        prev = hs[t - 1] if t > 0 else np.zeros_like(hs[0])
        grads["w_in"] += x[t].T @ da
        grads["w_rec"] += prev.T @ da
        grads["b"] += da.sum(axis=0)
        dh = da @ p["w_rec"].T
    for k in p:
        p[k] = p[k] - lr * grads[k]
    return loss


def test_rnn_training_steps_match_numpy(mode):
    params = {k: tensorgraph.shared(v, name=k) for k, v in _init().items()}
    x = tt.dtensor3("x")
    y = tt.dvector("y")
    h0 = tt.zeros((x.shape[1], 3), dtype="float64")
    h, _ = scan(lambda x_t, h: tt.tanh(tt.dot(x_t, params["w_in"]) + tt.dot(h, params["w_rec"])
                                       + params["b"]),
                sequences=x, outputs_info=h0, name="rnn")
    loss = tt.mean((tt.dot(h[-1], params["v"]) - y) ** 2)
    grads = tensorgraph.grad(loss, list(params.values()))
    train = tensorgraph.function([x, y], loss, mode=mode,
                                 updates=[(p, p - 0.1 * g) for p, g in zip(params.values(),
                                                                            grads)])
    reference = _init()
    rng = np.random.default_rng(1)
    for _ in range(3):
        xv, yv = rng.normal(size=(4, 2, 2)), rng.normal(size=2)
        got = train(xv, yv)
        np.testing.assert_allclose(got, _numpy_step(reference, xv, yv, 0.1), rtol=1e-10)
    for name, var in params.items():
        np.testing.assert_allclose(var.get_value(), reference[name], rtol=1e-9, atol=1e-12)
