"""The module mapping: ``import pytensor...`` resolves to tensorgraph, so that PyTensor's own
tests can run against tensorgraph unchanged (issue 21's measuring instrument).

Every ``pytensor.X`` module becomes a *proxy* module whose attributes are looked up, in order,
in a list of tensorgraph modules (its *sources*):

1. ``MODULES`` below, when the layout differs on purpose (``pytensor.compile.maker`` holds
   ``function`` and ``FunctionMaker``; tensorgraph keeps them in two files);
2. otherwise the tensorgraph module of the same name (``RENAMES`` applied first:
   ``pytensor.graph.rewriting`` is ``tensorgraph.rewriting``), followed by
3. the modules of its *family* (``FAMILIES``, longest prefix wins): PyTensor and tensorgraph
   spread the same package over different files (``Sum`` is in ``pytensor.tensor.math`` and in
   ``tensorgraph.tensor.reduction``), so a name counts as present when tensorgraph defines it
   anywhere in the corresponding package. Families never cross packages (``tensor.special.beta``
   is not looked up in ``tensor.random``).

``pytensor.tensor`` itself is ``tensorgraph.tensor`` with no family: it is the namespace users
type ``pt.`` against, measured as it is.  ``NAMES`` relocates a few single names that live in
another package in tensorgraph.  A value found in a source is ignored when it is a function,
class or module of another library (``np``, ``warnings``, ``math.prod``...).

Only modules that exist in the pinned PyTensor release are resolved (the runner passes their
list); a module with no tensorgraph counterpart and no family is missing.

Two modes (environment variable ``TG_PYTENSOR_SUITE_MODE``):

* ``strict`` (the figure): a missing module raises ``ModuleNotFoundError``, a missing name
  ``AttributeError`` / ``ImportError``, exactly what a user who changed the imports would see.
* ``probe`` (the ranking): a missing module or name becomes a *placeholder* that raises
  :class:`MissingName` when a test uses it, so that a test module with missing imports still
  runs, and each failing test names the missing name it needed first.  During imports
  (outside a test) placeholders stay lazy: a call returns another placeholder, iteration gives
  one placeholder, a decorator returns a function that raises when called.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import importlib.abc
import importlib.machinery
import inspect
import os
import pkgutil
import sys
import tomllib
import types

PREFIX = "pytensor"
# tensorgraph's package layout, by PyTensor package: where PyTensor's names of that package are
# looked for when the module of the same name does not define them.  Each family is a
# tensorgraph package: its modules (found when first needed, so new files count at once),
# minus the subpackages listed (they are families of their own), plus a few extra modules.
FAMILIES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # PyTensor prefix: (tensorgraph package, subpackages left out, extra modules)
    "pytensor.tensor": ("tensorgraph.tensor", ("random", "rewriting", "linalg"), ()),
    "pytensor.tensor.linalg": ("tensorgraph.tensor.linalg", (), ("tensorgraph.tensor.linalg",)),
    "pytensor.tensor.random": ("tensorgraph.tensor.random", (), ("tensorgraph.tensor.random",)),
    "pytensor.tensor.rewriting": ("tensorgraph.tensor.rewriting", (), ()),
    "pytensor.scalar": ("tensorgraph.scalar", (), ()),
    "pytensor.graph": ("tensorgraph.graph", (), ("tensorgraph.rewriting.destroyhandler",)),
    "pytensor.graph.rewriting": ("tensorgraph.rewriting", (), ()),
    "pytensor.compile": ("tensorgraph.compile", (), ()),
    "pytensor.link": ("tensorgraph.link", ("c", "jax", "numba", "pytorch"), ("tensorgraph.link",)),
    "pytensor.link.c": ("tensorgraph.link.c", ("ops",), ()),
    "pytensor.link.jax": ("tensorgraph.link.jax", (), ("tensorgraph.link.jax",)),
    "pytensor.link.numba": ("tensorgraph.link.numba", (), ("tensorgraph.link.numba",)),
    "pytensor.scan": ("tensorgraph.scan", (), ("tensorgraph.scan",)),
}

# Modules whose tensorgraph counterpart has another name (prefix renames, longest first).
RENAMES: dict[str, str] = {
    "pytensor.graph.rewriting": "tensorgraph.rewriting",
    "pytensor.compile.debug": "tensorgraph.compile",
    "pytensor.tensor.var": "tensorgraph.tensor.variable",
}

# Modules whose sources are given explicitly (no family added).
MODULES: dict[str, tuple[str, ...]] = {
    "pytensor": ("tensorgraph",),
    "pytensor.tensor": ("tensorgraph.tensor",),
    "pytensor.compile.maker": ("tensorgraph.compile.maker", "tensorgraph.compile.function"),
    "pytensor.compile.executor": ("tensorgraph.compile.compiled",),
    "pytensor.graph.traversal": ("tensorgraph.graph.basic",),
    "pytensor.graph.replace": ("tensorgraph.graph.basic", "tensorgraph.graph.replace"),
    "pytensor.graph.features": ("tensorgraph.graph.fg", "tensorgraph.rewriting.destroyhandler"),
    "pytensor.graph.destroyhandler": ("tensorgraph.rewriting.destroyhandler",),
}

# Single names that tensorgraph keeps in another package: "pytensor.mod.name" -> "tg.mod:name".
NAMES: dict[str, str] = {
    "pytensor.graph.features.BadOptimization": "tensorgraph.compile.debugmode:BadOptimization",
    "pytensor.graph.null_type.NullType": "tensorgraph.gradient:NullType",
    "pytensor.link.basic.Container": "tensorgraph.compile.sharedvalue:Container",
    # the linker classes users construct are in tensorgraph.link.basic (link/c holds the C
    # backend's own linker implementation, whose CLinker takes other arguments)
    "pytensor.link.c.basic.CLinker": "tensorgraph.link.basic:CLinker",
    "pytensor.link.c.basic.OpWiseCLinker": "tensorgraph.link.basic:OpWiseCLinker",
    # the type of arbitrary Python objects is a graph type here, not a C one
    "pytensor.link.c.type.generic": "tensorgraph.graph.type:generic",
    "pytensor.link.c.type.Generic": "tensorgraph.graph.type:Generic",
}

# PyTensor modules that are no API of PyTensor's users but tools of its tests (a numpy
# compatibility shim the tests compute expected values with): each is answered by a small
# module of this tool (tools/pytensor_suite), in both modes, so that the test modules import.
# A stand-in gives tensorgraph nothing: its names are the tool's, never counted as present in
# tensorgraph, and the tests that use them still measure tensorgraph's own functions.
STANDINS: dict[str, str] = {
    "pytensor.npy_2_compat": "tg_standin_npy_2_compat",
}

# PyTensor modules of features tensorgraph does not provide, on purpose or not yet, with the
# reason.  In both modes such a module imports and each of its names is a placeholder that
# raises MissingName when a test uses it (the test fails, charged as a missing name): a test
# module that imports one for a few tests (test_ifelse imports pytensor.sparse for one test)
# still measures the rest.  README.md lists them.
NOT_PROVIDED: dict[str, str] = {
    "pytensor.sparse": "sparse tensors (scipy.sparse values, their types and ops): not in "
                       "tensorgraph",
    "pytensor.assumptions": "PyTensor 3's matrix assumptions (assume, SpecifyAssumptions): "
                            "not in tensorgraph",
    "pytensor.typed_list": "typed lists of tensors: not in tensorgraph (Python lists are "
                           "refused as graph values, a documented difference)",
}

# Probe mode only: data names tensorgraph lacks that test modules compute with while they are
# imported (``dtype in discrete_dtypes`` in a parametrization).  A placeholder there would
# derail the module's import, so probe mode gives numpy's dtype groups instead; the name
# still counts as missing (strict mode has no stand-ins).
_INTS = ("int8", "int16", "int32", "int64")
_UINTS = ("uint8", "uint16", "uint32", "uint64")
_FLOATS = ("float16", "float32", "float64")
_COMPLEX = ("complex64", "complex128")
PROBE_VALUES: dict[str, tuple[str, ...]] = {
    "int_dtypes": _INTS, "uint_dtypes": _UINTS, "integer_dtypes": _INTS + _UINTS,
    "discrete_dtypes": ("bool",) + _INTS + _UINTS, "float_dtypes": _FLOATS,
    "complex_dtypes": _COMPLEX, "continuous_dtypes": _FLOATS + _COMPLEX,
    "all_dtypes": ("bool",) + _INTS + _UINTS + _FLOATS + _COMPLEX,
}


# -- what the runner and the pytest plugin read --------------------------------------------

MODE = os.environ.get("TG_PYTENSOR_SUITE_MODE", "strict")
IN_TEST = False           # set by the plugin while a test runs (probe placeholders then raise)
TOUCHED: list[str] = []   # missing names used since the plugin last cleared the list
MISSING_MODULES: set[str] = set()
NOT_PROVIDED_USED: set[str] = set()   # placeholders handed out in strict mode (see below)


def known_modules() -> set[str] | None:
    """PyTensor's module names at the pinned release (None: accept any ``pytensor.*``)."""
    path = os.environ.get("TG_PYTENSOR_SUITE_MODULES")
    if not path:
        return None
    with open(path) as f:
        return {line.strip() for line in f if line.strip()}


_KNOWN = known_modules()


class MissingName(Exception):
    """A test used a PyTensor name tensorgraph has no counterpart for (probe mode only)."""

    def __init__(self, name: str):
        super().__init__(f"tensorgraph has no counterpart of {name}")
        self.name = name


def _touch(name: str) -> None:
    TOUCHED.append(name)


def not_provided_module(name: str) -> str | None:
    """The reason when ``name`` is (in) a module listed in NOT_PROVIDED, else None."""
    for prefix, reason in NOT_PROVIDED.items():
        if name == prefix or name.startswith(prefix + "."):
            return reason
    return None


_INTERNAL_NAMES: dict[str, str] | None = None


def internal_name(name: str) -> str | None:
    """The reason when ``name`` is listed in internals.toml [names] (PyTensor internals)."""
    global _INTERNAL_NAMES
    if _INTERNAL_NAMES is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "internals.toml")
        try:
            with open(path, "rb") as f:
                _INTERNAL_NAMES = dict(tomllib.load(f).get("names", {}))
        except FileNotFoundError:
            _INTERNAL_NAMES = {}
    return next((r for p, r in _INTERNAL_NAMES.items() if fnmatch.fnmatchcase(name, p)), None)


def strict_placeholder_reason(name: str) -> str | None:
    """Why strict mode answers the missing name ``name`` with a placeholder (None: it raises).

    Two kinds of missing names do not stop a test module's import in strict mode: those of
    NOT_PROVIDED modules and those internals.toml lists as PyTensor internals (a linker class
    a few tests build thunks with, a private helper).  A user porting code does not type them;
    the tests that use them still fail (charged to the missing name or to internals), and the
    report lists, per module, the names its import needed this way.
    """
    return not_provided_module(name) or internal_name(name)


# -- resolution ------------------------------------------------------------------------------

_FAMILY_MODULES: dict[str, tuple[str, ...]] = {}


def _family(name: str) -> tuple[str, ...]:
    """The importable tensorgraph modules of ``name``'s family, in name order."""
    best = max((p for p in FAMILIES if name == p or name.startswith(p + ".")), key=len,
               default=None)
    if best is None:
        return ()
    if best not in _FAMILY_MODULES:
        package, left_out, extra = FAMILIES[best]
        found = []
        try:
            pkg = importlib.import_module(package)
        except ImportError:
            pkg = None
        if pkg is not None:
            for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
                if info.name in left_out or info.name.startswith("_"):
                    continue
                try:
                    importlib.import_module(f"{package}.{info.name}")
                except Exception:   # noqa: BLE001  (a module that cannot load has no names)
                    continue
                found.append(f"{package}.{info.name}")
        for mod in extra:
            if mod not in found and _importable(mod) is not None:
                found.append(mod)
        _FAMILY_MODULES[best] = tuple(found)
    return _FAMILY_MODULES[best]


def _counterpart(name: str) -> str:
    for old in sorted(RENAMES, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return RENAMES[old] + name[len(old):]
    return "tensorgraph" + name[len(PREFIX):]


def _importable(modname: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name and modname.startswith(exc.name):
            return None
        raise


def sources_of(name: str) -> list[str] | None:
    """The tensorgraph modules searched for ``name``'s attributes; None: the module is missing."""
    if _KNOWN is not None and name not in _KNOWN:
        return None
    if name in MODULES:
        return list(MODULES[name])
    found = []
    counterpart = _counterpart(name)
    if _importable(counterpart) is not None:
        found.append(counterpart)
    if found or _KNOWN is not None:   # without the module list, families would make any
        found += [m for m in _family(name) if m not in found]   # misspelt name a module
    return found or None


def _foreign(value) -> bool:
    """A function, class or module of another library, imported by a tensorgraph module."""
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith("tensorgraph")
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return not str(getattr(value, "__module__", "tensorgraph")).startswith("tensorgraph")
    return type(value).__module__ == "__future__"


_NOT_FOUND = object()


class PyTensorProxy(types.ModuleType):
    """``pytensor.X``: attributes come from the tensorgraph sources (see the module docstring)."""

    def __init__(self, name: str, sources: list[str]):
        super().__init__(name)
        object.__setattr__(self, "_tg_sources", sources)
        object.__setattr__(self, "_tg_submodules", {})
        object.__setattr__(self, "__path__", [])
        first = importlib.import_module(sources[0]) if sources else None
        if first is not None and getattr(first, "__file__", None):
            object.__setattr__(self, "__file__", first.__file__)
        if first is not None and hasattr(first, "__all__"):
            object.__setattr__(self, "__all__", list(first.__all__))

    def _tg_lookup(self, attr: str):
        target = NAMES.get(f"{self.__name__}.{attr}")
        if target:
            mod, _, obj = target.partition(":")
            return getattr(importlib.import_module(mod), obj, _NOT_FOUND)
        for src in self._tg_sources:
            value = getattr(importlib.import_module(src), attr, _NOT_FOUND)
            if value is _NOT_FOUND or _foreign(value):
                continue
            if isinstance(value, types.ModuleType):
                sub = f"{self.__name__}.{attr}"
                if _KNOWN is None or sub in _KNOWN:
                    return importlib.import_module(sub)
            return value
        return _NOT_FOUND

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = self._tg_lookup(attr)
        if value is not _NOT_FOUND:
            return value
        if attr in self._tg_submodules:
            return self._tg_submodules[attr]
        sub = f"{self.__name__}.{attr}"
        if _KNOWN is not None and sub in _KNOWN:
            try:
                return importlib.import_module(sub)
            except ImportError:
                pass
        if MODE != "probe" and strict_placeholder_reason(sub):
            _touch(sub)
            NOT_PROVIDED_USED.add(sub)
            return placeholder(sub)
        if MODE == "probe":
            _touch(sub)
            if attr in PROBE_VALUES and self.__name__.startswith(("pytensor.tensor",
                                                                  "pytensor.scalar")):
                return PROBE_VALUES[attr]
            return placeholder(sub)
        raise AttributeError(
            f"module {self.__name__!r} has no attribute {attr!r} (not in "
            f"{', '.join(self._tg_sources) or 'tensorgraph'})", name=attr, obj=self)

    def __setattr__(self, attr: str, value) -> None:
        # The import system binds each imported submodule on its parent; keep those here, so
        # that ``pytensor.tensor.shape`` stays the function when tensorgraph has one.
        if isinstance(value, PyTensorProxy) and value.__name__ == f"{self.__name__}.{attr}":
            self._tg_submodules[attr] = value
            return
        if not attr.startswith("__"):
            for src in self._tg_sources:
                mod = importlib.import_module(src)
                if hasattr(mod, attr):       # monkeypatching reaches tensorgraph
                    setattr(mod, attr, value)
                    return
        object.__setattr__(self, attr, value)

    def __delattr__(self, attr: str) -> None:
        if attr in self.__dict__:
            object.__delattr__(self, attr)
            return
        for src in self._tg_sources:
            mod = importlib.import_module(src)
            if hasattr(mod, attr):
                delattr(mod, attr)
                return
        raise AttributeError(attr)

    def __dir__(self):
        names = set(self.__dict__) | set(self._tg_submodules)
        for src in self._tg_sources:
            names |= {n for n in dir(importlib.import_module(src)) if not n.startswith("__")}
        return sorted(names)

    def __repr__(self):
        return f"<module {self.__name__!r} (tensorgraph: {', '.join(self._tg_sources)})>"


class CallablePyTensorProxy(PyTensorProxy):
    """A proxy for a module that is also a function (``pytensor.scan`` is both the
    package and the ``scan`` function; tensorgraph's ``scan`` package is callable too)."""

    def __call__(self, *args, **kwargs):
        return importlib.import_module(self._tg_sources[0])(*args, **kwargs)


class _PyTensorFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers every ``pytensor`` / ``pytensor.*`` import with a :class:`PyTensorProxy`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != PREFIX and not fullname.startswith(PREFIX + "."):
            return None
        if fullname in STANDINS:
            return importlib.machinery.ModuleSpec(fullname, self)
        sources = sources_of(fullname)
        if sources is None:
            MISSING_MODULES.add(fullname)
            if MODE != "probe" and not_provided_module(fullname):
                _touch(fullname)
                NOT_PROVIDED_USED.add(fullname)
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            if MODE != "probe":
                raise ModuleNotFoundError(
                    f"No module named {fullname!r} (tensorgraph has no counterpart)",
                    name=fullname)
            _touch(fullname)
            sources = []
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        if spec.name in STANDINS:
            source = importlib.import_module(STANDINS[spec.name])
            module = types.ModuleType(spec.name, source.__doc__)
            module.__dict__.update({k: v for k, v in vars(source).items()
                                    if not k.startswith("__")})
            module.__file__ = source.__file__
            return module
        sources = sources_of(spec.name) or []
        if sources and callable(importlib.import_module(sources[0])):
            return CallablePyTensorProxy(spec.name, sources)
        return PyTensorProxy(spec.name, sources)

    def exec_module(self, module):
        pass


# -- probe placeholders ------------------------------------------------------------------------

class _MissingMeta(type):
    """Metaclass of placeholders: every use records the name; in a test, a use raises.

    ``_missing_name`` is the PyTensor name the placeholder stands for (what tensorgraph lacks);
    placeholders derived from it (``X.attr``, ``X()``) keep it, so every use is charged to
    the name that is missing.  Each placeholder has its own metaclass named ``missing <name>``
    so that an error message quoting ``type(x).__name__`` still names it.
    """

    def __repr__(cls):
        return f"<missing {cls._missing_name}>"

    def __getattr__(cls, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        _touch(cls._missing_name)
        return placeholder(cls._missing_name)

    def __call__(cls, *args, **kwargs):
        _touch(cls._missing_name)
        if IN_TEST:
            raise MissingName(cls._missing_name)
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0])
                                               or inspect.isclass(args[0])):
            return _raising_decorated(cls._missing_name, args[0])
        return placeholder(cls._missing_name)

    def __instancecheck__(cls, obj):
        _touch(cls._missing_name)
        return False

    def _use(cls):
        _touch(cls._missing_name)
        if IN_TEST:
            raise MissingName(cls._missing_name)

    def __iter__(cls):
        cls._use()
        return iter([placeholder(cls._missing_name)])

    def __bool__(cls):
        cls._use()
        return False

    def __getitem__(cls, key):
        cls._use()
        return placeholder(cls._missing_name)

    def __len__(cls):
        _touch(cls._missing_name)
        raise MissingName(cls._missing_name)

    __hash__ = type.__hash__


def _raising_decorated(name, obj):
    if inspect.isclass(obj):
        return obj

    @functools.wraps(obj)
    def raising(*args, **kwargs):
        _touch(name)
        raise MissingName(name)

    return raising


def placeholder(name: str) -> type:
    """A stand-in for the missing PyTensor name ``name`` (a class, so tests can subclass it)."""
    meta = type(f"missing {name}", (_MissingMeta,), {})
    # an Exception subclass, so that ``pytest.raises(MissingError)`` and ``except`` accept it
    # (pytest then checks the raised error with isinstance, which records the use)
    return meta(name.rsplit(".", 1)[-1], (Exception,), {
        "_missing_name": name, "__test__": False, "__module__": "pytensor(missing)"})


def missing_name_of(value) -> str | None:
    """The PyTensor name a placeholder stands for (None for anything else)."""
    return value._missing_name if isinstance(value, _MissingMeta) else None


_FINDER = _PyTensorFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
