"""``Argmax`` and ``Argmin`` for an array library (JAX, PyTorch), once.

Both libraries find the index of an extremum over one axis only; over several axes the
reduced axes are moved last and flattened into one, as perform does. The library's names come
from the ``ArrayLibrary`` adapter of ``tensorgraph.link.array_elemwise``; each back end's
``reduction`` module registers the implementation in its own table. This module imports
neither library.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link.traced_shape import shape_of


def arg_extremum(lib, op, dtype=None):
    """A function of one array: the int64 index of its max (``Argmax``) or min over
    ``op.axis``, computed in ``dtype`` (None: the input's). A zero-size axis fails as numpy's
    does."""
    find = lib.xp.argmax if type(op)._nfunc is np.argmax else lib.xp.argmin

    def compute(x):
        x = lib.array(x, dtype)
        shape = shape_of(x)
        kept = [d for d in range(len(shape)) if d not in op.axis]
        length = int(np.prod([shape[a] for a in op.axis], dtype=np.int64))
        if length == 0:
            name = type(op).__name__.lower()
            raise ValueError(f"{name} over axes {op.axis} of an array of shape {shape}: a "
                             f"zero-size axis has no {name} (numpy raises too)")
        moved = lib.transpose(x, kept + list(op.axis))
        flat = lib.xp.reshape(moved, tuple(moved.shape[:len(kept)]) + (length,))
        return lib.array(find(flat, -1), "int64")

    return compute
