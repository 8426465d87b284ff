"""``f(x, y=...)`` in a line magic: the compiled function and its arguments, evaluated in the
notebook's namespace and checked as the call would check them, without making the call
(``%tg_step``, ``%tg_profile``)."""

from __future__ import annotations

import ast

from tensorgraph.notebook.magic_args import excerpt, usage_error
from tensorgraph.notebook.unwrapping import as_tensorgraph_call, is_pytensor_object

__all__ = ["parse_call"]


def parse_call(magic: str, source: str, namespace: dict, keep_pytensor: bool = False):
    """``(function, args, kwargs)`` of the call written in ``source``; a one-line UsageError
    when it is not a call of a compiled function, its parts do not evaluate, or the function
    would refuse the arguments (their number, names, types or shapes). ``keep_pytensor``: a
    PyTensor or PyMC function comes back as it is, in whatever mode it was compiled, with its
    arguments (``%tg_compare`` compiles it again in PyTensor's modes and in TENSORGRAPH)."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        tree = None
    if tree is None or not isinstance(tree.body, ast.Call):
        raise usage_error(magic, f"expected a call such as train(X, Y), got {excerpt(source)}")
    call = tree.body

    def value(node):
        return eval(compile(ast.Expression(node), f"<{magic}>", "eval"), namespace)  # noqa: S307

    try:
        fn = value(call.func)
        args, kwargs = [], {}
        for a in call.args:  # f(x, *rest)
            if isinstance(a, ast.Starred):
                args.extend(value(a.value))
            else:
                args.append(value(a))
        for k in call.keywords:  # f(y=..., **more)
            if k.arg is None:
                kwargs.update(value(k.value))
            else:
                kwargs[k.arg] = value(k.value)
    except Exception as exc:  # noqa: BLE001 - the user's expression
        raise usage_error(magic, f"cannot evaluate {excerpt(source)}: "
                                 f"{type(exc).__name__}: {exc}") from None
    if keep_pytensor and is_pytensor_object(fn):
        return fn, args, kwargs
    try:
        # a PyTensor / PyMC function: the tensorgraph one behind it (a PyMC point: by name)
        fn, args, kwargs = as_tensorgraph_call(fn, args, kwargs)
    except TypeError as exc:
        raise usage_error(magic, f"{excerpt(ast.unparse(call.func))}: {exc}") from None
    if not hasattr(fn, "stepper"):
        raise usage_error(magic, f"{excerpt(ast.unparse(call.func))} is a "
                                 f"{type(fn).__name__}, not a compiled function")
    from tensorgraph.compile.stepper import call_arguments

    try:
        call_arguments(fn, args, kwargs)
    except TypeError as exc:
        raise usage_error(magic, str(exc)) from None
    return fn, args, kwargs
