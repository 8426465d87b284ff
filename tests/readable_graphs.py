"""The graphs issue 36 counted (constants and shape plumbing among the boxes the graph view
draws), built in one place for the payload tests (test_graph_folding.py) and the
measurement script (tools/graph_readability.py): the seed logistic regression's compiled
``train`` and symbolic gradient, the tutorial MLP's (notebook 10) compiled step and symbolic
gradients, a Normal log-density's gradient, a scan's inner gradient graph and a PyMC-style
model's log-density and gradient written with tensorgraph's own ops."""

from __future__ import annotations

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt


def seed_program(features=784):
    """The seed logistic regression: its cost, the compiled ``train`` and the gradients."""
    with tg.config.change_flags(floatX="float32"):
        x, y = tt.matrix("x"), tt.vector("y")
        w = tg.shared(np.zeros(features, dtype="float32"), name="w")
        b = tg.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        prediction = p_1 > 0.5
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tg.grad(cost, [w, b])
        train = tg.function([x, y], [prediction, xent],
                            updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)], name="train")
    return cost, train, [gw, gb]


def seed_graphs(features=784):
    """The seed's compiled ``train`` and its gradient as written (symbolic)."""
    _, train, grads = seed_program(features)
    return {"seed train (compiled)": train, "seed gradient (symbolic)": grads}


def mlp_graphs():
    """Notebook 10's two-layer MLP: its SGD step compiled and its gradients as written."""
    from tensorgraph.tensor.special import log_softmax

    rng = np.random.default_rng(0)
    with tg.config.change_flags(floatX="float32"):
        x, t = tt.matrix("x"), tt.matrix("t")
        w1 = tg.shared((rng.standard_normal((784, 16)) * 0.05).astype("float32"), name="w1")
        b1 = tg.shared(np.zeros(16, "float32"), name="b1")
        w2 = tg.shared((rng.standard_normal((16, 10)) * 0.05).astype("float32"), name="w2")
        b2 = tg.shared(np.zeros(10, "float32"), name="b2")
        logits = tt.dot(tt.tanh(tt.dot(x, w1) + b1), w2) + b2
        cost = -(t * log_softmax(logits, axis=1)).sum(axis=1).mean()
        params = [w1, b1, w2, b2]
        grads = tg.grad(cost, params)
        step = tg.function([x, t], cost, name="step",
                           updates=[(p, p - np.float32(0.5) * g) for p, g in zip(params, grads)])
    return {"MLP step (compiled)": step, "MLP gradients (symbolic)": grads}


def normal_logp_graph():
    """The gradient of a Normal log-density with a switch on sigma > 0 and a prior on mu."""
    data, mu, sigma = tt.dvector("data"), tt.dscalar("mu"), tt.dscalar("sigma")
    logp = -0.5 * ((data - mu) / sigma) ** 2 - tt.log(sigma) - 0.5 * np.log(2 * np.pi)
    logp = tt.switch(sigma > 0, logp, -np.inf).sum()
    prior = -0.5 * (mu / 10.0) ** 2
    total = logp + prior
    return {"Normal log-density gradient": tg.grad(total, [mu, sigma])}


def pymc_style_graph():
    """A PyMC-style hierarchical model's log-density and gradient (value variables, log
    transforms, Normal and HalfNormal terms, a check on sigma), in tensorgraph's own ops."""
    y = tt.dvector("y")
    mu = tt.dscalar("mu")
    log_tau = tt.dscalar("log_tau")
    theta = tt.dvector("theta")
    tau = tt.exp(log_tau)

    def normal_logp(value, m, s):
        term = -0.5 * ((value - m) / s) ** 2 - tt.log(s) - 0.5 * np.log(2 * np.pi)
        return tt.switch(tt.gt(s, 0), term, -np.inf)

    terms = [normal_logp(mu, 0.0, 5.0),
             normal_logp(log_tau, 0.0, 1.0),  # a HalfNormal on tau: log-transformed value
             normal_logp(theta, mu, tau).sum(),
             normal_logp(y, theta, 1.0).sum()]
    logp = tt.add(*terms) + log_tau  # the log transform's Jacobian
    return {"PyMC-style log-density gradient": tg.grad(logp, [mu, log_tau, theta])}


def scan_graphs():
    """Notebook 08's ReLU RNN whose gradient overflows: ``relu_grad``, shown as the stepper
    shows it (``opened``: its gradient loop open, the inner step drawn)."""
    from tensorgraph.scan import scan

    H = 16
    x32 = tt.tensor3("x32", dtype="float32")
    W_big = tg.shared(np.eye(H, dtype="float32") * 2.0, name="W_big")

    def relu_step(x_t, h_prev):
        return tt.maximum(tt.dot(h_prev, W_big) + x_t, 0)

    h_relu, _ = scan(relu_step, sequences=x32, name="relu_rnn",
                     outputs_info=tt.zeros((x32.shape[1], H), dtype="float32"))
    relu_loss = h_relu[-1].mean()
    relu_grad = tg.function([x32], [relu_loss, tg.grad(relu_loss, W_big)], name="relu_grad")
    return {"scan gradient, its loop open": relu_grad}


def opened(payload: dict) -> list[str]:
    """The groups the counted view has open: a gradient loop's (what the stepper opens
    when it steps into it), none elsewhere."""
    return [g["id"] for g in payload["groups"] if g.get("k") == "loop" and "grad" in g["label"]]


def all_graphs() -> dict:
    """{title: graph object} of every graph counted."""
    return {**seed_graphs(), **mlp_graphs(), **normal_logp_graph(), **scan_graphs(),
            **pymc_style_graph()}
