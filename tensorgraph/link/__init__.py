"""Linkers: turn a (rewritten) FunctionGraph into something that runs.

``tensorgraph.link.registry`` finds a linker by name (``get_linker('cvm')``) and lets a back
end add its names (``register_linker``); ``vm`` is the Python loop, ``c/`` the C back end,
``jax/``, ``numba/`` and ``pytorch/`` the whole-graph back ends. ``tensorgraph.link.basic`` has
the linker classes PyTensor code constructs (``PerformLinker``, ``VMLinker``, ``CLinker``,
``OpWiseCLinker``), each standing for one of the registered names.

This ``__init__`` imports nothing: it runs before every module of the link layer, so a table
of back ends here would put the whole layer in one import cycle (issue 32).
"""
