"""The C backend: generated C kernels compiled through cffi, cached on disk.

``cmodule.get_module`` is the one way any part of tensorgraph turns C source into an imported
module (see ``docs/c_cache.md``). This package imports nothing heavy itself: cffi, numpy and the
compiler are only touched when a module is first asked for.
"""
