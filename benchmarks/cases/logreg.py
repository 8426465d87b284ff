"""The seed exercise: one training step of Theano's logistic regression (400 x 784 float32),
returning the predictions and the cross-entropy, updating ``w`` and ``b`` by SGD."""

import numpy as np

from cases import _frameworks

NAME = "logreg"
TITLE = "logreg train step {0}x{1} f32"
TARGET = ("numpy", 0.35)
LOADED_TARGET = ("numpy", 1.0)   # with --load: at most numpy's time under the same load
LR, L2 = 0.01, 0.01


def size(tiny: bool):
    return (40, 78) if tiny else (400, 784)


def data(size):
    n, feats = size
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, feats)).astype("float32")
    y = (rng.random(n) > 0.5).astype("float32")
    w = (rng.standard_normal(feats) * 0.01).astype("float32")
    return x, y, w


def make_tensorgraph(size, mode="FAST_RUN"):
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.configdefaults import config

    x_val, y_val, w_val = data(size)
    with config.change_flags(floatX="float32"):
        x, y = tt.matrix("x"), tt.vector("y")
        w = tg.shared(w_val, name="w")
        b = tg.shared(np.asarray(0.0, dtype="float32"), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        prediction = p_1 > 0.5
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = xent.mean() + L2 * (w ** 2).sum()
        gw, gb = tg.grad(cost, [w, b])
        train = tg.function([x, y], [prediction, xent],
                            updates=[(w, w - LR * gw), (b, b - LR * gb)], mode=mode)
    return lambda: train(x_val, y_val)


def make_numpy(size):
    x, y, w0 = data(size)
    state = {"w": w0.copy(), "b": np.float32(0.0)}
    n = np.float32(x.shape[0])

    def step():
        w, b = state["w"], state["b"]
        p_1 = 1 / (1 + np.exp(-(x @ w) - b))
        prediction = p_1 > 0.5
        xent = -y * np.log(p_1) - (1 - y) * np.log(1 - p_1)
        gz = (p_1 - y) / n                      # d mean(xent) / d (x @ w + b)
        gw = x.T @ gz + np.float32(2 * L2) * w
        state["w"] = w - np.float32(LR) * gw
        state["b"] = b - np.float32(LR) * gz.sum()
        return prediction, xent

    return step


def make_pytensor(size):
    pt, ptt, mode = _frameworks.pytensor()
    x_val, y_val, w_val = data(size)
    x, y = ptt.matrix("x", dtype="float32"), ptt.vector("y", dtype="float32")
    w = pt.shared(w_val, name="w")
    b = pt.shared(np.asarray(0.0, dtype="float32"), name="b")
    p_1 = 1 / (1 + ptt.exp(-ptt.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * ptt.log(p_1) - (1 - y) * ptt.log(1 - p_1)
    cost = xent.mean() + np.float32(L2) * (w ** 2).sum()
    gw, gb = pt.grad(cost, [w, b])
    train = pt.function([x, y], [prediction, xent],
                        updates=[(w, w - np.float32(LR) * gw), (b, b - np.float32(LR) * gb)],
                        mode=mode)
    return lambda: train(x_val, y_val)


def make_jax(size):
    jax, jnp = _frameworks.jax()
    x_val, y_val, w_val = data(size)
    x, y = jnp.asarray(x_val), jnp.asarray(y_val)
    state = [jnp.asarray(w_val), jnp.asarray(np.float32(0.0))]

    def loss(w, b, x, y):
        p_1 = 1 / (1 + jnp.exp(-(x @ w) - b))
        xent = -y * jnp.log(p_1) - (1 - y) * jnp.log(1 - p_1)
        return xent.mean() + L2 * (w ** 2).sum(), (p_1 > 0.5, xent)

    @jax.jit
    def train(w, b, x, y):
        (_, (prediction, xent)), (gw, gb) = jax.value_and_grad(
            loss, argnums=(0, 1), has_aux=True)(w, b, x, y)
        return prediction, xent, w - LR * gw, b - LR * gb

    def step():
        prediction, xent, state[0], state[1] = train(*state, x, y)
        return jax.block_until_ready((prediction, xent))

    return step
