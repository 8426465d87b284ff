"""One SGD step of a two-layer perceptron: 128 x 784 inputs, 256 tanh units, 10-way softmax
cross-entropy against one-hot targets, four parameters updated."""

import numpy as np

from cases import _frameworks

NAME = "mlp"
TITLE = "MLP step {0}x{1}-{2}-{3} f32"
TARGET = ("numpy", 0.8)
LOADED_TARGET = ("numpy", 1.0)   # with --load: at most numpy's time under the same load
LR = 0.01


def size(tiny: bool):
    return (16, 78, 32, 10) if tiny else (128, 784, 256, 10)


def data(size):
    batch, n_in, n_hidden, n_out = size
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, n_in)).astype("float32")
    t = np.eye(n_out, dtype="float32")[rng.integers(0, n_out, batch)]
    params = [(rng.standard_normal((n_in, n_hidden)) * 0.05).astype("float32"),
              np.zeros(n_hidden, "float32"),
              (rng.standard_normal((n_hidden, n_out)) * 0.05).astype("float32"),
              np.zeros(n_out, "float32")]
    return x, t, params


def make_tensorgraph(size, mode="FAST_RUN"):
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.configdefaults import config
    from tensorgraph.tensor.special import log_softmax

    x_val, t_val, params = data(size)
    with config.change_flags(floatX="float32"):
        x, t = tt.matrix("x"), tt.matrix("t")
        w1, b1, w2, b2 = (tg.shared(p) for p in params)
        h = tt.tanh(tt.dot(x, w1) + b1)
        logp = log_softmax(tt.dot(h, w2) + b2, axis=1)
        cost = -(t * logp).sum(axis=1).mean()
        grads = tg.grad(cost, [w1, b1, w2, b2])
        step = tg.function([x, t], cost, mode=mode,
                           updates=[(p, p - LR * g) for p, g in zip((w1, b1, w2, b2), grads)])
    return lambda: step(x_val, t_val)


def make_numpy(size):
    x, t, params = data(size)
    state = [p.copy() for p in params]
    lr, batch = np.float32(LR), np.float32(x.shape[0])

    def step():
        w1, b1, w2, b2 = state
        h = np.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        cost = -(t * (shifted - np.log(s))).sum(axis=1).mean()
        g_logits = (e / s - t) / batch          # the one-hot rows sum to 1
        g_h = (g_logits @ w2.T) * (1 - h * h)
        state[:] = [w1 - lr * (x.T @ g_h), b1 - lr * g_h.sum(axis=0),
                    w2 - lr * (h.T @ g_logits), b2 - lr * g_logits.sum(axis=0)]
        return cost

    return step


def make_pytensor(size):
    pt, ptt, mode = _frameworks.pytensor()
    from pytensor.tensor.special import log_softmax

    x_val, t_val, params = data(size)
    x, t = ptt.matrix("x", dtype="float32"), ptt.matrix("t", dtype="float32")
    w1, b1, w2, b2 = (pt.shared(p) for p in params)
    h = ptt.tanh(ptt.dot(x, w1) + b1)
    logp = log_softmax(ptt.dot(h, w2) + b2, axis=1)
    cost = -(t * logp).sum(axis=1).mean()
    grads = pt.grad(cost, [w1, b1, w2, b2])
    lr = np.float32(LR)
    step = pt.function([x, t], cost, mode=mode,
                       updates=[(p, p - lr * g) for p, g in zip((w1, b1, w2, b2), grads)])
    return lambda: step(x_val, t_val)


def make_jax(size):
    jax, jnp = _frameworks.jax()
    x_val, t_val, params = data(size)
    x, t = jnp.asarray(x_val), jnp.asarray(t_val)
    state = [[jnp.asarray(p) for p in params]]

    def loss(params, x, t):
        w1, b1, w2, b2 = params
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - jnp.log(jnp.exp(shifted).sum(axis=1, keepdims=True))
        return -(t * logp).sum(axis=1).mean()

    @jax.jit
    def train(params, x, t):
        cost, grads = jax.value_and_grad(loss)(params, x, t)
        return cost, [p - LR * g for p, g in zip(params, grads)]

    def step():
        cost, state[0] = train(state[0], x, t)
        return jax.block_until_ready(cost)

    return step
