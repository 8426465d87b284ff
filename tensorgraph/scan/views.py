"""``map``, ``reduce``, ``foldl``, ``foldr`` and ``filter``: common loops written with ``scan``.

Each returns ``(result, updates)`` like ``scan`` (only ``result`` with ``return_updates=False``,
PyTensor 3's form; ``filter`` returns only its result). ``reduce`` keeps only the last step of
each output, so the memory rewrite (``scan_save_mem``) lets the compiled loop hold just that.
"""

from __future__ import annotations

from tensorgraph.scan.basic import scan

__all__ = ["map", "reduce", "foldl", "foldr", "filter"]


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False,
        mode=None, name=None, return_updates=True):
    """``fn`` applied to each entry of the sequences: ``[fn(x[0]), fn(x[1]), ...]``."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name, return_updates=return_updates)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None,
           name=None, return_updates=True):
    """The last value of a loop carrying ``outputs_info`` over the sequences:
    ``fn(x[n-1], fn(x[n-2], ... fn(x[0], init)))``."""
    result = scan(fn, sequences=sequences, outputs_info=outputs_info,
                  non_sequences=non_sequences, go_backwards=go_backwards, mode=mode, name=name,
                  return_updates=return_updates)
    outputs, updates = result if return_updates else (result, None)
    last = ([out[-1] for out in outputs] if isinstance(outputs, (list, tuple))
            else outputs[-1])
    return (last, updates) if return_updates else last


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None,
          return_updates=True):
    """``reduce`` from the first entry to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode,
                  name=name, return_updates=return_updates)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None,
          return_updates=True):
    """``reduce`` from the last entry to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode,
                  name=name, return_updates=return_updates)


def filter(fn, sequences, non_sequences=None, go_backwards=False, mode=None, name=None):
    """The entries of the sequences where ``fn`` (a boolean per step) is true: one mask for
    every sequence, or one mask per sequence when ``fn`` returns several. With
    ``go_backwards`` the entries come last first."""
    single = not isinstance(sequences, (list, tuple))
    seqs = [sequences] if single else list(sequences)
    masks = scan(fn, sequences=seqs, non_sequences=non_sequences, go_backwards=go_backwards,
                 mode=mode, name=name, return_updates=False, return_list=True)
    if len(masks) not in (1, len(seqs)):
        raise ValueError(f"filter: fn returned {len(masks)} masks for {len(seqs)} sequences; "
                         "return one mask, or one per sequence")
    ordered = [s[::-1] for s in seqs] if go_backwards else seqs
    kept = [s[masks[0] if len(masks) == 1 else m] for s, m in zip(ordered, masks * len(seqs))]
    return kept[0] if single else kept
