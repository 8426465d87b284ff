"""Inputs and references shared by the linalg tests (tests/tensor/linalg and the linalg
rewrites' tests): well-conditioned matrices, their stacks, and numpy / scipy applied item by
item over a stack."""

from __future__ import annotations

import numpy as np

N = 3            # matrices are 3 x 3: cheap, and enough to tell rows from columns
BATCH = (2,)     # a stack of two


def per_item(fn):
    """``fn`` of one matrix (or of several) applied over the leading axes of a stack."""

    def apply(*arrays, nb):
        if nb == 0:
            return fn(*arrays)
        batch = arrays[0].shape[:nb]
        items = [fn(*(a[i] for a in arrays)) for i in np.ndindex(*batch)]
        if isinstance(items[0], tuple):
            return tuple(np.stack(parts).reshape(batch + parts[0].shape)
                         for parts in zip(*items))
        return np.stack(items).reshape(batch + np.shape(items[0]))

    return apply


def values(dtype, batch=BATCH, seed=0):
    """A general matrix ``a``, a symmetric positive definite ``spd``, a lower triangular
    ``low`` with a strong diagonal, right-hand sides ``b`` (matrix, 2 columns) and ``v``."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (N, N)) + 2 * np.eye(N)
    spd = a @ np.swapaxes(a, -1, -2) + N * np.eye(N)
    low = np.tril(rng.standard_normal(batch + (N, N))) + 3 * np.eye(N)
    b = rng.standard_normal(batch + (N, 2))
    v = rng.standard_normal(batch + (N,))
    return {k: x.astype(dtype) for k, x in dict(a=a, spd=spd, low=low, b=b, v=v).items()}
