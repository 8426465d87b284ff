"""Benchmark cases of ``benchmarks/run.py``.

A throughput case is a module with ``NAME``, ``TITLE`` (formatted with the size),
``TARGET = (baseline, ratio)`` (the tensorgraph time must be at most ``ratio`` times the
baseline's; a case with several targets also lists them all in ``TARGETS``), ``size(tiny)``
and one
``make_<framework>(size)`` per framework it supports, returning a zero-argument callable that
runs one step on inputs prepared once (passed as arguments or held in shared storage, never
baked into the compiled graph as constants). ``make_*`` raises ``Unavailable`` when the
framework cannot run the case here.
"""

CASES = ["logreg", "mlp", "overhead", "overhead_trusted", "chain", "rnn_forward", "rnn_train", "gp",
         "spd_batch"]


class Unavailable(Exception):
    """The framework is not installed or cannot run this case."""
