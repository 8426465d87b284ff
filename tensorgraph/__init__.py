"""tensorgraph: a symbolic tensor graph compiler for Python, made to live inside Jupyter.

``import tensorgraph`` stays fast (well under 0.2 s, measured 2026-11-22 at ddbf53e) and never
imports IPython: heavy parts of the public API are
imported on first use (see ``_LAZY`` below), and the
notebook layer loads only through ``%load_ext tensorgraph``.
"""

from tensorgraph import hooks as _hooks
from tensorgraph.configdefaults import config
from tensorgraph.configparser import ConfigError

__version__ = "0.1.0"

# Public names imported on first attribute access: name -> module that defines it.
# Add an entry here instead of a top-level import when the module is costly to import.
_LAZY: dict[str, str] = {}
_LAZY.update({  # compiling and printing
    "function": "tensorgraph.compile.function", "shared": "tensorgraph.compile.sharedvalue",
    "In": "tensorgraph.compile.io", "Out": "tensorgraph.compile.io",
    "Mode": "tensorgraph.compile.mode", "get_mode": "tensorgraph.compile.mode",
    "printing": "tensorgraph.printing", "debugprint": "tensorgraph.printing",
    "dprint": "tensorgraph.printing", "pp": "tensorgraph.printing",
})
_LAZY.update({  # autodiff
    "grad": "tensorgraph.gradient", "gradient": "tensorgraph.gradient",
    "Lop": "tensorgraph.gradient", "Rop": "tensorgraph.gradient",
    "pullback": "tensorgraph.gradient", "pushforward": "tensorgraph.gradient",
})
_LAZY.update({  # PyTensor's other top-level names
    "OpFromGraph": "tensorgraph.compile.builders", "wrap_py": "tensorgraph.compile.ops",
    "as_op": "tensorgraph.compile.ops",
})
_LAZY.update({  # loops: tensorgraph.scan is a callable module (scan(fn, ...)), as pytensor.scan
    "scan": "tensorgraph.scan", "map": "tensorgraph.scan", "reduce": "tensorgraph.scan",
    "foldl": "tensorgraph.scan", "foldr": "tensorgraph.scan",
})


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tensorgraph' has no attribute {name!r}")
    import importlib

    imported = importlib.import_module(module)
    value = imported if module == f"{__name__}.{name}" else getattr(imported, name)
    globals()[name] = value
    return value


def _compile_function(*args, **kwargs):
    from tensorgraph.compile.function import function

    return function(*args, **kwargs)


def _function_maker(*args, **kwargs):
    from tensorgraph.compile.maker import FunctionMaker

    return FunctionMaker(*args, **kwargs)


def _perform_mode():
    from tensorgraph.compile.mode import Mode

    return Mode("py", None)


def _as_variable(value):
    from tensorgraph.tensor.basic import as_tensor_variable

    return as_tensor_variable(value)


def _grad(cost, wrt, **kwargs):
    from tensorgraph.gradient import grad

    return grad(cost, wrt, **kwargs)


def _rop(f, wrt, eval_points, **kwargs):
    from tensorgraph.gradient import Rop

    return Rop(f, wrt, eval_points, **kwargs)


#: the modules that register rewrites into optdb (imported before the first rewrite query)
_REWRITE_MODULES = ("tensorgraph.tensor.rewriting", "tensorgraph.scan.rewriting",
                    "tensorgraph.scan.hoist_matmul")


def _load_rewrites():
    import importlib

    for name in _REWRITE_MODULES:
        importlib.import_module(name)


def _scan_c_loop(runner):
    import importlib

    return importlib.import_module("tensorgraph.link.c.scan_loop").CLoop(runner)


def _load_vectorize_rules():
    import tensorgraph.tensor.vectorize_rules  # noqa: F401  (registers into graph.replace.RULES)


# Lower layers reach higher ones through tensorgraph.hooks (they may not import them).
_hooks.compile_function = _compile_function
_hooks.function_maker = _function_maker
_hooks.perform_mode = _perform_mode
_hooks.as_variable = _as_variable
_hooks.grad = _grad
_hooks.Rop = _rop
_hooks.scan_c_loop = _scan_c_loop
_hooks.load_rewrites = _load_rewrites
_hooks.load_vectorize_rules = _load_vectorize_rules


def __dir__():
    """Lazy names too, so tab completion in a notebook shows the whole public API."""
    return sorted(set(globals()) | set(_LAZY))


def load_ipython_extension(ipython):
    """``%load_ext tensorgraph``: register the magics (%tg_config, ...)."""
    from tensorgraph.notebook.extension import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext tensorgraph``."""
    from tensorgraph.notebook.extension import unload_ipython_extension as _unload

    _unload(ipython)
