"""``unwrap(fn)``: the tensorgraph ``Function`` behind a PyTensor function compiled in mode
TENSORGRAPH, or behind PyMC's wrappers of one.

Why: the notebook layer, the profiler and the stepper read tensorgraph Functions; a PyMC user
holds PyTensor functions (``model.compile_logp(mode="TENSORGRAPH")``). The linker keeps the
Function it compiled as the thunk's ``jit_fn`` (PyTensor's ``JITLinker`` convention), so one
attribute walk finds it.
"""

from __future__ import annotations

from tensorgraph.compile.compiled import Function as TgFunction

__all__ = ["unwrap"]


def unwrap(fn):
    """The tensorgraph ``Function`` behind ``fn``: a PyTensor function compiled in mode
    TENSORGRAPH, or a PyMC wrapper of one (the ``.f`` of the ``PointFunc`` that
    ``compile_fn``, ``compile_logp`` and ``compile_dlogp`` return, a ``ValueGradFunction``'s
    ``_pytensor_function``). A tensorgraph ``Function`` is returned as it is. It takes exactly
    the arguments ``fn``'s PyTensor function takes, positionally and by name (PyTensor's shared
    variables, ``pm.Data`` and the lengths of dims, are read from PyTensor's own cells), and
    returns the list of its outputs."""
    seen = fn
    for _ in range(4):  # wrappers of wrappers: PointFunc -> Function
        if isinstance(fn, TgFunction):
            return fn
        vm = getattr(fn, "vm", None)
        if vm is not None and hasattr(fn, "maker"):
            jit_fn = getattr(vm, "jit_fn", None)
            if isinstance(jit_fn, TgFunction):
                return jit_fn
            raise TypeError(f"unwrap: {fn} was compiled in PyTensor mode "
                            f"{type(fn.maker.mode.linker).__name__}, not in mode TENSORGRAPH "
                            "(pass mode='TENSORGRAPH' when compiling it)")
        inner = getattr(fn, "f", None) or getattr(fn, "_pytensor_function", None)
        if inner is None:
            break
        fn = inner
    raise TypeError(f"unwrap expects a PyTensor function compiled in mode TENSORGRAPH or a PyMC "
                    f"compiled function wrapping one, got {seen!r} ({type(seen).__name__})")
