"""Compilation modes: which rewrites a function gets and which linker runs it.

``Mode(linker, optimizer)`` pairs a linker name (see ``tensorgraph.link.registry``) with a
rewrite preset name. Named modes are kept in a registry so later parts (DebugMode,
NanGuardMode, MonitorMode) register themselves instead of being special-cased here:

* ``'FAST_COMPILE'``: the 'fast_compile' rewrites, the Python VM ('py').
* ``'FAST_RUN'``: the 'fast_run' rewrites, the C VM ('cvm') when the C backend has registered
  it, the Python VM ('vm') otherwise.
* ``'Mode'``: ``config.linker`` and ``config.optimizer``.
* ``'DebugMode'``, ``'NanGuardMode'``, ``'MonitorMode'``: the debugging modes of
  ``tensorgraph.compile.debugmode`` / ``nanguardmode`` / ``monitormode`` with their defaults
  (their modules are imported on first use); ``'DEBUG_MODE'``, Theano's old name, gives
  ``'DebugMode'`` with a DeprecationWarning.
* ``'JAX'``, ``'NUMBA'``, ``'PYTORCH'``: the 'fast_run' rewrites without the C-only and BLAS
  ones (and, for JAX, without fusion and inplace, which XLA does itself), the whole graph
  compiled into one function of that back end (linkers 'jax', 'numba' and 'pytorch',
  ``tensorgraph/link/jax``, ``numba``, ``pytorch``; docs/backends.md). The back end's
  library is an optional extra; without it the mode's error names the
  ``pip install tensorgraph[...]`` to run.

PyTensor's spellings work too: names are case-insensitive (``'fast_run'``, ``'cvm'``),
``'CVM'`` is FAST_RUN's rewrites and linker, ``'C'`` the same rewrites with the 'c' linker,
``get_default_mode()`` is ``get_mode(None)``; 'MLX' says it is not available
(``PLANNED_MODES``).

``config.mode`` (default 'Mode') is the mode of ``function(mode=None)``. The default
``config.linker`` ('cvm') falls back to the Python VM while no C backend is registered;
a linker named explicitly (``Mode(linker='c')`` or a ``config.linker`` you set) must exist.

Rewriting plugs in at one place, ``Mode.rewrite(fgraph)``: it calls
``tensorgraph.rewriting.presets.rewrite_for_mode(fgraph, mode)`` (or a rewriter installed with
``set_rewriter(callable)``), which queries the rewrite database with the mode's preset
(``mode.optimizer``, ``None`` meaning no rewrites) and its ``including``/``excluding``/
``requiring`` tags, and records every step in ``fgraph.rewrite_history``. The default mode
(``function(mode=None)``) also takes ``config.optimizer_including/excluding/requiring``.
"""

from __future__ import annotations

from tensorgraph.configdefaults import config
from tensorgraph.configparser import ModeParam
from tensorgraph.link import registry as linkers
from tensorgraph.link.optional import available
from tensorgraph.rewriting.basic import GraphRewriter
from tensorgraph.rewriting.db import RewriteDatabase, RewriteDatabaseQuery
from tensorgraph.rewriting.optdb import optdb
from tensorgraph.rewriting.presets import check_tags, query_for_mode, rewrite_for_mode

#: linkers of the C backend, and the Python linker standing in for each while it is absent
_PYTHON_FALLBACK = {"cvm": "vm", "cvm_nogc": "vm_nogc", "c|py": "vm", "c|py_nogc": "vm_nogc",
                    "c": "vm_nogc"}

_rewriter = None


def set_rewriter(rewriter) -> None:
    """Install ``rewriter(fgraph, mode)``, called by every ``Mode.rewrite`` (the rewriting
    package installs the default one)."""
    global _rewriter
    _rewriter = rewriter


class Mode:
    """A linker and a rewrite preset.

    Parameters
    ----------
    linker : str or linker object or None
        A registered linker name ('py', 'vm', 'vm_nogc', 'cvm', ...) or an object with
        ``make_vm``. ``None``: ``config.linker``.
    optimizer : str, RewriteDatabaseQuery, graph rewriter or None
        A rewrite preset name ('fast_run', 'fast_compile', 'o1', ..., 'None'); ``'default'``
        means ``config.optimizer``; ``None`` means no rewrites (as in PyTensor). A
        ``RewriteDatabaseQuery`` is run on ``db``; a graph rewriter (``db.query('+tag')``)
        is run as it is.
    db : RewriteDatabase or None
        The database a preset or query selects from (default ``optdb``).
    """

    def __init__(self, linker=None, optimizer="default", db=None, *, fallback: bool = False):
        if linker is None:
            linker = config.linker
            fallback = fallback or config.info("linker").is_default
        if optimizer == "default":
            optimizer = config.optimizer
        if optimizer == "None":
            optimizer = None
        if optimizer is not None and not isinstance(
                optimizer, (str, RewriteDatabaseQuery, GraphRewriter)):
            raise TypeError(f"Mode(optimizer=...) takes a preset name, a "
                            f"RewriteDatabaseQuery, a graph rewriter or None, got "
                            f"{type(optimizer).__name__}")
        if db is not None and not isinstance(db, RewriteDatabase):
            raise TypeError(f"Mode(db=...) takes a RewriteDatabase, got {type(db).__name__}")
        self.db = db
        self.provided_linker = linker
        self._fallback = fallback
        if isinstance(linker, str) and not fallback:
            linkers.get_linker(linker)  # fail now, listing the available names
        elif not isinstance(linker, str) and not hasattr(linker, "make_vm"):
            raise TypeError(f"Mode(linker=...) takes a linker name or an object with make_vm, "
                            f"got {type(linker).__name__}")
        self.optimizer = optimizer

    @property
    def linker_name(self) -> str:
        """The name of the linker actually used (after any fallback to the Python VM)."""
        name = self.provided_linker
        if not isinstance(name, str):
            return getattr(name, "name", type(name).__name__)
        if self._fallback and not linkers.is_registered(name):
            return _PYTHON_FALLBACK.get(name, "vm")
        return name

    @property
    def linker(self):
        """A fresh linker object for this mode."""
        if not isinstance(self.provided_linker, str):
            return self.provided_linker
        return linkers.get_linker(self.linker_name)

    #: tags added to / removed from / required of the preset's rewrites (see ``including``)
    rewrite_including: tuple = ()
    rewrite_excluding: tuple = ()
    rewrite_requiring: tuple = ()

    def rewrite(self, fgraph) -> None:
        """Apply this mode's rewrites to ``fgraph`` in place, recording them in
        ``fgraph.rewrite_history``."""
        (_rewriter or rewrite_for_mode)(fgraph, self)

    def including(self, *tags: str) -> Mode:
        """A new Mode that also runs the rewrites with any of these tags (or names)."""
        return self._with_tags("rewrite_including", tags)

    def excluding(self, *tags: str) -> Mode:
        """A new Mode that leaves out the rewrites with any of these tags (or names)."""
        return self._with_tags("rewrite_excluding", tags)

    def requiring(self, *tags: str) -> Mode:
        """A new Mode that keeps only the rewrites having all of these tags."""
        return self._with_tags("rewrite_requiring", tags)

    @property
    def optdb(self):
        """The rewrite database this mode's preset or query selects from."""
        if self.db is not None:
            return self.db
        return optdb

    def register(self, *rewrites) -> Mode:
        """A new Mode that also runs these ``(graph rewriter, position)`` pairs among the
        phases of its rewrite database (positions as in ``optdb``: 1 canonicalize, 1.5
        stabilize, 2 specialize, ..., 7 inplace)."""
        if not isinstance(self.optimizer, str) and self.optimizer is not None and not \
                hasattr(self.optimizer, "selects"):
            raise TypeError("Mode.register: this mode runs a rewriter object given as its "
                            "optimizer; give it a preset or a RewriteDatabaseQuery instead")
        query = query_for_mode(self).register(*rewrites)
        new = self.clone()
        new.optimizer = query
        new.rewrite_including = new.rewrite_excluding = new.rewrite_requiring = ()
        return new

    def _with_tags(self, attr, tags) -> Mode:
        if not isinstance(self.optimizer, str) and self.optimizer is not None and not \
                hasattr(self.optimizer, "selects"):
            raise TypeError(f"{attr.split('_')[1]}: this mode runs the rewriter object "
                            f"{self.optimizer} as it is, so tags do not apply; give "
                            "Mode(optimizer=...) a preset or a RewriteDatabaseQuery")
        for t in tags:
            if not isinstance(t, str) or not t:
                raise TypeError(f"{attr.split('_')[1]}: tags are non-empty strings, got {t!r}")
        excluding = attr == "rewrite_excluding"
        if self.db is not None:
            self.db.check_tags(tags, excluding=excluding)
        else:
            check_tags(tags, excluding=excluding)
        new = self.clone()
        setattr(new, attr, getattr(self, attr) + tuple(t for t in tags if t not in
                                                       getattr(self, attr)))
        return new

    def _tags(self) -> tuple:
        return (self.rewrite_including, self.rewrite_excluding, self.rewrite_requiring)

    def clone(self, **kwargs) -> Mode:
        """A copy with some of ``linker``, ``optimizer`` changed."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if "linker" in kwargs:
            Mode.__init__(new, kwargs.pop("linker"), new.optimizer, new.db)
        if "optimizer" in kwargs:
            new.optimizer = kwargs.pop("optimizer")
        if kwargs:
            raise TypeError(f"Mode.clone: unknown arguments {sorted(kwargs)}")
        return new

    def __eq__(self, other):
        return (type(self) is type(other) and self.linker_name == other.linker_name
                and self.optimizer == other.optimizer and self._tags() == other._tags())

    def __hash__(self):
        return hash((type(self), self.linker_name, self.optimizer, self._tags()))

    def __str__(self):
        """PyTensor's spelling: ``Mode(linker=py, optimizer=fast_run)``."""
        return f"Mode(linker={self.linker_name}, optimizer={self.optimizer})"

    def __repr__(self):
        tags = "".join(f".{kind}({', '.join(map(repr, t))})" for kind, t in
                       zip(("including", "excluding", "requiring"), self._tags()) if t)
        return (f"{type(self).__name__}(linker={self.linker_name!r}, "
                f"optimizer={self.optimizer!r}){tags}")


ModeParam.accept_instances_of(Mode)  # config.mode = Mode(...): configparser cannot import Mode

# ----------------------------------------------------------------------------------------------
# Named modes

# name -> zero-argument factory returning a Mode (evaluated at each lookup: config may change)
_MODES: dict = {}


def register_mode(name: str, factory) -> None:
    """Make ``get_mode(name)`` return ``factory()`` (a Mode instance may be given directly)."""
    _MODES[name] = factory if callable(factory) and not isinstance(factory, Mode) else (
        lambda: factory)


def get_mode(mode=None) -> Mode:
    """The Mode for a name, a Mode instance (returned as is) or None (``config.mode``, with
    ``config.optimizer_including/excluding/requiring`` applied)."""
    if mode is None:
        mode = get_mode(config.mode)
        for kind in ("including", "excluding", "requiring"):
            tags = [t for t in getattr(config, f"optimizer_{kind}").split(":") if t]
            if tags:
                mode = getattr(mode, kind)(*tags)
        return mode
    if isinstance(mode, Mode):
        return mode
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a mode name or a Mode instance, got "
                        f"{type(mode).__name__}")
    if mode in _MODES:
        return _MODES[mode]()
    spelled = [name for name in _MODES if name.upper() == mode.upper()]
    if spelled:          # PyTensor's names are case-insensitive: 'fast_run', 'cvm', 'debugmode'
        return _MODES[spelled[0]]()
    if mode.upper() in PLANNED_MODES:
        raise NotImplementedError(f"mode {mode!r} is not yet available in tensorgraph: "
                                  f"{PLANNED_MODES[mode.upper()]}")
    raise ValueError(f"unknown mode {mode!r}; available modes: {', '.join(sorted(_MODES))}")


def get_default_mode() -> Mode:
    """The mode ``function(mode=None)`` uses: ``config.mode`` with the
    ``config.optimizer_including/excluding/requiring`` tags (PyTensor's name for
    ``get_mode(None)``)."""
    return get_mode(None)


register_mode("Mode", Mode)
register_mode("FAST_COMPILE", lambda: Mode("py", "fast_compile"))
register_mode("FAST_RUN", lambda: Mode("cvm", "fast_run", fallback=True))
# PyTensor's names of the C modes: all rewrites with the whole-graph C VM ('CVM', FAST_RUN's
# own) or the whole-graph C program without garbage collection ('C')
register_mode("CVM", lambda: Mode("cvm", "fast_run", fallback=True))
register_mode("C", lambda: Mode("c", "fast_run", fallback=True))

#: modes PyTensor has and tensorgraph does not have yet: get_mode says so instead of
#: "unknown mode" (a back end registering one of these names takes precedence)
PLANNED_MODES = {
    "MLX": "there is no MLX back end; 'FAST_RUN' (C) or 'JAX' compile the whole graph",
}


def _debugging_mode(module: str, cls: str):
    """A factory importing its mode's module on first use (they import this one)."""
    def factory():
        import importlib

        return getattr(importlib.import_module(f"tensorgraph.compile.{module}"), cls)()
    return factory


register_mode("DebugMode", _debugging_mode("debugmode", "DebugMode"))
register_mode("NanGuardMode", _debugging_mode("nanguardmode", "NanGuardMode"))
register_mode("MonitorMode", _debugging_mode("monitormode", "MonitorMode"))


def _deprecated_debug_mode():
    """'DEBUG_MODE' is Theano's old name of 'DebugMode'."""
    import sys
    import warnings

    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tensorgraph"):
        frame, level = frame.f_back, level + 1
    warnings.warn("mode 'DEBUG_MODE' is deprecated: use 'DebugMode' (the same mode)",
                  DeprecationWarning, stacklevel=level)
    return _debugging_mode("debugmode", "DebugMode")()


register_mode("DEBUG_MODE", _deprecated_debug_mode)

#: the whole-graph back ends: (linker, the library it needs, the extra that installs it,
#: the rewrite tags left out). They do what the C-only and BLAS rewrites do themselves;
#: XLA also fuses and reuses buffers, so JAX leaves out fusion and inplace too.
BACKEND_MODES = {
    "JAX": ("jax", "jax", "jax", ("c_only", "blas", "fusion", "inplace")),
    "NUMBA": ("numba", "numba", "numba", ("c_only", "blas")),
    "PYTORCH": ("pytorch", "torch", "pytorch", ("c_only", "blas")),
}


def _backend_mode(name: str):
    linker, module, extra, excluded = BACKEND_MODES[name]

    def factory():
        if not available(module):
            raise ImportError(f"mode {name} needs {module}, which is not installed here; "
                              f"install it with: pip install tensorgraph[{extra}]")
        return Mode(linker, "fast_run").excluding(*excluded)

    return factory


for _name in BACKEND_MODES:
    register_mode(_name, _backend_mode(_name))

#: the named modes as instances, for ``function(..., mode=FAST_COMPILE)``
FAST_COMPILE = get_mode("FAST_COMPILE")
FAST_RUN = get_mode("FAST_RUN")


class AddFeatureOptimizer(GraphRewriter):
    """A graph rewriter that only attaches ``feature`` to the graph: PyTensor's way of adding
    a feature at a position among the phases (``mode.register((AddFeatureOptimizer(f), 1.9))``,
    e.g. ``NoOutputFromInplace`` before the inplace phase)."""

    def __init__(self, feature):
        self.feature = feature
        self.name = f"AddFeatureOptimizer({type(feature).__name__})"

    def add_requirements(self, fgraph):
        fgraph.attach_feature(self.feature)

    def apply(self, fgraph):
        return 0
