"""The seed logistic regression as a small compiled ``train`` with data, shared by the tests of
the stepper (tests/compile/test_stepper.py) and of the views that show a stepped or profiled
call (tests/notebook/)."""

import numpy as np

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode


def seed(linker="cvm"):
    """``train`` (float32, 7 features, SGD updates of w and b) and a batch of 6 rows."""
    with tg.config.change_flags(floatX="float32"):
        x, y = tt.matrix("x"), tt.vector("y")
        w = tg.shared(np.linspace(-1, 1, 7).astype("float32"), name="w")
        b = tg.shared(np.float32(0.5), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = xent.mean() + 0.01 * (w ** 2).sum()
        gw, gb = tg.grad(cost, [w, b])
        train = tg.function([x, y], [p_1 > 0.5, xent], name="train",
                            updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)],
                            mode=Mode(linker, "fast_run"))
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((6, 7)).astype("float32"),
            rng.integers(0, 2, 6).astype("float32"))
    return train, data
