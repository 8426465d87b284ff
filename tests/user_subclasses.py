"""Op subclasses as a user writes them, outside tensorgraph: what is registered for their
parent class (C, a back end's code, a rewrite, a batching rule) serves them only when they
compute as the parent does (``tensorgraph.graph.lookup``)."""

import numpy as np

from tensorgraph.scalar.math import Exp
from tensorgraph.tensor.special import Softmax


class Hotter(Softmax):
    """Softmax of x / 2: what the op computes changed, its parent's code does not apply."""

    def perform(self, node, inputs, output_storage):
        super().perform(node, [inputs[0] / 2], output_storage)


class ExpPlusOne(Exp):
    """exp(x) + 1 as a scalar op: its own ``impl``."""

    def impl(self, x):
        return np.exp(x) + 1


class SameSoftmax(Softmax):
    """Only renamed: it computes what Softmax does, so Softmax's code serves it."""


def hotter(value):
    """What ``Hotter(-1)`` computes, in numpy."""
    e = np.exp(np.asarray(value) / 2)
    return e / e.sum(axis=-1, keepdims=True)
