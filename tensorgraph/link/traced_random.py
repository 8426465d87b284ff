"""The sizes of random draws the traced back ends (JAX, PyTorch) share: a draw's shape, and
a ``ChoiceRV``'s number of choices, which must be known while the library traces the graph.

Split from ``traced_shape`` so each module has one job; each back end's ``random`` module
passes its own ``static_ints`` (which raises ``StaticShapeError`` for a size known only when
running).
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_shape", "choice_sizes"]


def draw_shape(op, sized: bool, size, params, static_ints) -> tuple:
    """The shape of a random draw: its ``size`` when the node has one (``sized``), else the
    batch shape the parameters broadcast to (their core dimensions left out)."""
    if sized:
        return static_ints(size, "the size of a random draw")
    shapes = [np.shape(p)[:np.ndim(p) - core] for p, core in zip(params, op.ndims_params)]
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def choice_sizes(node, size, a, static_ints) -> tuple:
    """A ``ChoiceRV`` node's draw shape and, when it picks from ``range(a)`` (a scalar ``a``),
    that number (else None): both must be known while tracing."""
    sized = bool(node.inputs[1].type.shape[0])
    shape = static_ints(size, "the size of a random draw") if sized else ()
    n = static_ints(a, "the number of choices")[0] if node.op.a_ndim == 0 else None
    return shape, n
