"""A tanh RNN over a sequence, h[t] = tanh(x[t] W_x + h[t-1] W_h + b), h[-1] = 0, written with
each framework's loop (tensorgraph's and PyTensor's scan, a numpy for loop, JAX's
lax.scan); the loss is the
mean squared error of the last hidden state against a target. ``rnn_forward`` times the last
hidden state, ``rnn_train`` one SGD step with back-propagation through time."""

import numpy as np

from cases import _frameworks

LR = 0.01


def size(tiny: bool):
    """(steps, batch, inputs, hidden)"""
    return (10, 4, 8, 16) if tiny else (100, 32, 256, 256)


def data(size):
    steps, batch, n_in, n_hidden = size
    rng = np.random.default_rng(2)
    x = rng.standard_normal((steps, batch, n_in)).astype("float32")
    y = rng.uniform(-0.5, 0.5, (batch, n_hidden)).astype("float32")
    params = [(rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)).astype("float32"),
              (rng.standard_normal((n_hidden, n_hidden)) / np.sqrt(n_hidden)).astype("float32"),
              np.zeros(n_hidden, "float32")]
    return x, y, params


def tensorgraph_functions(size, train: bool, mode="FAST_RUN"):
    """The compiled function (forward or training step) in ``mode`` and its arguments, waiting
    for the optimized code of the function and of its loops' steps (compile tiers)."""
    import tensorgraph as tg
    import tensorgraph.tensor as tt
    from tensorgraph.configdefaults import config
    from tensorgraph.scan import scan
    from tensorgraph.scan.op import Scan

    x_val, y_val, params = data(size)
    with config.change_flags(floatX="float32"):
        x, y = tt.tensor3("x"), tt.matrix("y")
        w_x, w_h, b = (tg.shared(p, name=n) for p, n in zip(params, ("W_x", "W_h", "b")))
        h0 = tt.zeros((x.shape[1], size[3]), dtype="float32")
        h, _ = scan(lambda x_t, h: tt.tanh(tt.dot(x_t, w_x) + tt.dot(h, w_h) + b),
                    sequences=x, outputs_info=h0, name="rnn")
        if train:
            cost = ((h[-1] - y) ** 2).mean()
            grads = tg.grad(cost, [w_x, w_h, b])
            f = tg.function([x, y], cost, mode=mode,
                            updates=[(p, p - LR * g) for p, g in zip((w_x, w_h, b), grads)])
            args = (x_val, y_val)
        else:
            f = tg.function([x], h[-1], mode=mode)
            args = (x_val,)
    f.wait_optimized()
    for node in f.maker.fgraph.apply_nodes:
        if isinstance(node.op, Scan):
            Scan.runner_of(node).function.wait_optimized()
    return f, args


def numpy_forward(size):
    x, _, (w_x, w_h, b) = data(size)

    def forward():
        h = np.zeros((x.shape[1], w_h.shape[0]), "float32")
        for x_t in x:
            h = np.tanh(x_t @ w_x + h @ w_h + b)
        return h

    return forward


def numpy_train(size):
    x, y, params = data(size)
    state = [p.copy() for p in params]
    steps, batch, _, n_hidden = size
    lr = np.float32(LR)

    def step():
        w_x, w_h, b = state
        hs = np.empty((steps + 1, batch, n_hidden), "float32")
        hs[0] = 0
        for t in range(steps):
            hs[t + 1] = np.tanh(x[t] @ w_x + hs[t] @ w_h + b)
        diff = hs[-1] - y
        cost = (diff * diff).mean()
        dh = diff * np.float32(2 / diff.size)
        g_x, g_h, g_b = np.zeros_like(w_x), np.zeros_like(w_h), np.zeros_like(b)
        for t in range(steps - 1, -1, -1):
            da = dh * (1 - hs[t + 1] * hs[t + 1])
            g_x += x[t].T @ da
            g_h += hs[t].T @ da
            g_b += da.sum(axis=0)
            dh = da @ w_h.T
        state[:] = [w_x - lr * g_x, w_h - lr * g_h, b - lr * g_b]
        return cost

    return step


def pytensor_function(size, train: bool):
    pt, ptt, mode = _frameworks.pytensor()

    x_val, y_val, params = data(size)
    x, y = ptt.tensor3("x", dtype="float32"), ptt.matrix("y", dtype="float32")
    w_x, w_h, b = (pt.shared(p) for p in params)
    h0 = ptt.zeros((x.shape[1], size[3]), dtype="float32")
    h = pt.scan(lambda x_t, h: ptt.tanh(ptt.dot(x_t, w_x) + ptt.dot(h, w_h) + b),
                sequences=x, outputs_info=h0, return_updates=False)
    if train:
        cost = ((h[-1] - y) ** 2).mean()
        grads = pt.grad(cost, [w_x, w_h, b])
        lr = np.float32(LR)
        f = pt.function([x, y], cost, mode=mode,
                        updates=[(p, p - lr * g) for p, g in zip((w_x, w_h, b), grads)])
        return lambda: f(x_val, y_val)
    f = pt.function([x], h[-1], mode=mode)
    return lambda: f(x_val)


def jax_function(size, train: bool):
    """JAX by hand: the loop as ``jax.lax.scan`` (the hidden state its carry), the training
    step's gradient by ``jax.grad`` through the scan, one ``jax.jit`` around it all."""
    jax, jnp = _frameworks.jax()
    x_val, y_val, params = data(size)
    x, y = jnp.asarray(x_val), jnp.asarray(y_val)

    def last_hidden(params, x):
        w_x, w_h, b = params
        h0 = jnp.zeros((x.shape[1], w_h.shape[0]), jnp.float32)
        h, _ = jax.lax.scan(lambda h, x_t: (jnp.tanh(x_t @ w_x + h @ w_h + b), None), h0, x)
        return h

    if not train:
        forward = jax.jit(last_hidden)
        state = [jnp.asarray(p) for p in params]
        return lambda: jax.block_until_ready(forward(state, x))

    def loss(params, x, y):
        return ((last_hidden(params, x) - y) ** 2).mean()

    @jax.jit
    def train_step(params, x, y):
        cost, grads = jax.value_and_grad(loss)(params, x, y)
        return cost, [p - LR * g for p, g in zip(params, grads)]

    state = [[jnp.asarray(p) for p in params]]

    def step():
        cost, state[0] = train_step(state[0], x, y)
        return jax.block_until_ready(cost)

    return step
