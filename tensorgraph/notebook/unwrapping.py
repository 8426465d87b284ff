"""Every notebook entry point takes PyTensor's and PyMC's compiled functions too.

``tgn.show``, ``tgn.report``, ``tgn.Stepper`` / ``tgn.step``, ``%tg_show``, ``%tg_step`` and
``%tg_profile`` pass what they are given through ``as_tensorgraph``: a PyTensor ``Function``
compiled in mode TENSORGRAPH, or a PyMC wrapper of one (``compile_fn``, ``compile_logp`` and
``compile_dlogp``'s ``PointFunc``, ``logp_dlogp_function``'s ``ValueGradFunction``), becomes
the tensorgraph ``Function`` behind it (``tensorgraph.pytensor.unwrap``), which takes the same
arguments, positionally and by name. Anything else is returned as it is.

The object is recognised by its class's module (``pytensor.*``, ``pymc.*``), so the notebook
layer never imports PyTensor itself: ``tensorgraph.pytensor`` is imported only when such an
object is given, and PyTensor is then loaded already.
"""

from __future__ import annotations

__all__ = ["as_tensorgraph", "as_tensorgraph_call", "is_pytensor_object"]

#: the top-level packages whose compiled functions are unwrapped
PACKAGES = ("pytensor", "pymc")


def is_pytensor_object(obj) -> bool:
    """Whether ``obj``'s class (or a base class) comes from PyTensor or PyMC."""
    return any((getattr(cls, "__module__", None) or "").split(".")[0] in PACKAGES
               for cls in type(obj).__mro__)


def as_tensorgraph(obj):
    """``obj``, or the tensorgraph ``Function`` behind it when it is a PyTensor function
    compiled in mode TENSORGRAPH or a PyMC wrapper of one (see the module docstring). A
    PyTensor function compiled in another mode, or another PyTensor or PyMC object, is a
    one-line TypeError saying what to pass."""
    if not is_pytensor_object(obj):
        return obj
    from tensorgraph.pytensor.unwrap import unwrap

    try:
        return unwrap(obj)
    except TypeError as exc:
        message = str(exc)
    kind = type(obj).__name__
    if "not in mode TENSORGRAPH" in message:
        raise TypeError(f"this {kind} was compiled by PyTensor in another mode: compile it with "
                        f"mode=\"TENSORGRAPH\" (e.g. model.compile_logp(mode=\"TENSORGRAPH\"), "
                        f"pytensor.function(..., mode=\"TENSORGRAPH\"))") from None
    raise TypeError(f"a {type(obj).__module__}.{kind} is not a function tensorgraph compiled: give "
                    "a PyTensor function compiled with mode=\"TENSORGRAPH\", PyMC's compiled "
                    "function wrapping one, or a PyTensor graph converted by "
                    "tensorgraph.pytensor.from_pytensor") from None


def as_tensorgraph_call(fn, args, kwargs) -> tuple:
    """``(function, args, kwargs)`` of a call of ``fn`` (``%tg_step``, ``Stepper``):
    ``as_tensorgraph(fn)``, and a PyMC point given alone (``logp(point)``, as PyMC's
    ``PointFunc`` is called) as keyword arguments: the values by the inputs' names."""
    function = as_tensorgraph(fn)
    if (function is not fn and len(args) == 1 and not kwargs and isinstance(args[0], dict)
            and all(isinstance(k, str) for k in args[0])):
        return function, (), dict(args[0])
    return function, tuple(args), dict(kwargs)
