"""``map``, ``reduce``, ``foldl`` and ``foldr``: common loops written with ``scan``.

Each returns ``(result, updates)`` like ``scan``. ``reduce`` keeps only the last step of each
output, so the memory rewrite (``scan_save_mem``) lets the compiled loop hold just that.
"""

from __future__ import annotations

from tensorgraph.scan.basic import scan

__all__ = ["map", "reduce", "foldl", "foldr"]


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False,
        mode=None, name=None):
    """``fn`` applied to each entry of the sequences: ``[fn(x[0]), fn(x[1]), ...]``."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None,
           name=None):
    """The last value of a loop carrying ``outputs_info`` over the sequences:
    ``fn(x[n-1], fn(x[n-2], ... fn(x[0], init)))``."""
    outputs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                            non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                            name=name)
    if isinstance(outputs, (list, tuple)):
        return [out[-1] for out in outputs], updates
    return outputs[-1], updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``reduce`` from the first entry to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode,
                  name=name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``reduce`` from the last entry to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode,
                  name=name)
