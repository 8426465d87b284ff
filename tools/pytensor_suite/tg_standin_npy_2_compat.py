"""Stand-in for ``pytensor.npy_2_compat`` (see ``STANDINS`` in ``tg_pytensor_map``).

PyTensor's module is a numpy 1/2 compatibility shim, not API of PyTensor's users: its tests
import ``old_np_unique`` from it to compute *expected* values (``np.unique`` as numpy < 2
returned them). This is the tool's own version, so that those test modules import; it gives
tensorgraph nothing and is counted as nothing of tensorgraph's.
"""

import numpy as np


def old_np_unique(arr, return_index=False, return_inverse=False, return_counts=False,
                  axis=None):
    """``np.unique`` with the inverse indices shaped as numpy 1.x gave them: flat when
    ``axis`` is None, one entry per slice along ``axis`` otherwise."""
    results = np.unique(arr, return_index=return_index, return_inverse=return_inverse,
                        return_counts=return_counts, axis=axis)
    if not return_inverse:
        return results
    results = list(results)
    where = 2 if return_index else 1
    size = np.size(arr) if axis is None else np.shape(arr)[axis]
    results[where] = np.reshape(results[where], (size,))
    return tuple(results)
