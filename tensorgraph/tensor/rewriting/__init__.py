"""The tensor rewrites, registered into ``tensorgraph.rewriting.optdb`` on import.

Modes import this package on the first compile. One module per family: ``basic`` (constant
folding, useless ops), ``math`` (canonical add/mul chains), ``stabilize``, ``specialize``,
``shape``, ``blas``, ``fusion`` and ``inplace``.
"""

from tensorgraph.tensor.rewriting import basic  # noqa: F401
