"""THE compiled-module cache: C source in, imported cffi extension module out.

Every C linker goes through :func:`get_module`. A module is compiled once per *key* and then
reused: from memory within a process, from ``config.compiledir`` across processes (a later
process imports it without running the compiler at all). The key is a hash over everything that
changes the compiled code or its ABI (:func:`key_parts`). Concurrent processes share the cache
safely: one per-key lock (``locking.py``) keeps two processes from compiling the same key, and
entries are published by an atomic rename (``cache.py``), so no process ever sees half a module.
A cached module that fails its checksum or its import is removed and rebuilt, with one warning.

See docs/c_cache.md for the user-facing side (location, flags, the ``cache`` command).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
import warnings

from tensorgraph.configdefaults import config
from tensorgraph.link.c import cache, cachedir
from tensorgraph.link.c.dtypes import scipy_pointer
from tensorgraph.scalar.scipy_capi import SCIPY_FUNCTIONS, VARIANTS
from tensorgraph.scalar.scipy_capi import address as scipy_address
from tensorgraph.link.c.locking import write_owner
from tensorgraph.link.c.compiler import (
    CompilationUnavailable,
    CompileError,
    compile_flags,
    compiler_path,
    compiler_version,
    cpu_identity,
    describe_origin,
)

__all__ = ["get_module", "get_library", "find_exports", "CompileError",
           "CompilationUnavailable", "ModuleCacheWarning", "key_parts", "ModuleCache"]

# Bump when the cache layout, the manifest or the way modules are built changes.
CACHE_FORMAT = "2"
# What an entry holds: a cffi extension module (imported), a plain shared library (dlopen'd
# with ctypes.CDLL), or one that calls Python's C API (ctypes.PyDLL: called with the GIL held)
MODULE, LIBRARY, PYLIBRARY = "module", "library", "pylibrary"
CLEANUP_INTERVAL = 24 * 3600  # seconds between two automatic ``cache.clear``


class ModuleCacheWarning(UserWarning):
    """Something about the module cache the user should know (a corrupt entry was rebuilt,
    a module cannot be cached, the compiler printed warnings)."""


def get_module(source: str, cdef: str, *, name_hint: str, libraries=(), library_dirs=(),
               include_dirs=(), extra_compile_args=(), extra_link_args=(),
               runtime_version: str = "", unversioned=(), origin=None, found=None,
               cached_only: bool = False):
    """The imported cffi API-mode module built from ``source`` (C) exposing ``cdef``.

    ``name_hint`` becomes part of the module's name (letters, digits and '_' are kept).
    ``libraries`` ... ``extra_link_args`` go to the compiler as usual (library directories also
    become the module's run path). ``runtime_version`` names the version of headers the source
    includes from ``include_dirs`` (their text is not hashed). ``unversioned`` lists the parts
    of the source (e.g. ops) that have no C code version: such a module is compiled for this
    process only and never stored on disk (with ``config.cmodule__warn_no_version``, a warning
    names them). ``origin`` (an Apply node, a FunctionGraph, ...) is recorded in the manifest
    and named by compile errors. ``found``, if given, is called with where the module came
    from: ``"memory"`` (loaded before by this process), ``"disk"`` (the cache directory) or
    ``"compiled"`` (the profiler's cache hits and misses). With ``cached_only``, a module
    that is neither in memory nor on disk is not compiled: the answer is None.

    Raises :class:`CompilationUnavailable` when ``config.cxx`` is empty or not a compiler, and
    :class:`CompileError` when the compiler rejects the source.
    """
    if not isinstance(source, str):
        raise TypeError(f"get_module: source must be a str, got {type(source).__name__}")
    return _get("get_module", MODULE, source, (), cdef, name_hint=name_hint,
                libraries=libraries, library_dirs=library_dirs, include_dirs=include_dirs,
                extra_compile_args=extra_compile_args, extra_link_args=extra_link_args,
                runtime_version=runtime_version, unversioned=unversioned, origin=origin,
                found=found, cached_only=cached_only)


def get_library(units, *, name_hint: str, libraries=(), library_dirs=(), include_dirs=(),
                extra_compile_args=(), extra_link_args=(), runtime_version: str = "",
                unversioned=(), origin=None, found=None, exports=(), python_api: bool = False,
                cached_only: bool = False):
    """A plain shared library (no Python in it) built from the C translation ``units`` (their
    non-static symbols link together), loaded with ``ctypes.CDLL``; cached like a module.

    Each unit is compiled by its own compiler process, all at once, so a big library uses
    every core; a library needs no Python.h and no cffi wrapper, which is most of a small
    module's compile time. ``exports`` names symbols whose code depends only on their name
    and the build context (flags, compiler, config): a library built with them is recorded
    as theirs, so :func:`find_exports` finds them in later processes. The other arguments
    are those of :func:`get_module`. ``python_api``: the library calls Python's C API (Python.h
    is on the include path either way); it is loaded with ``ctypes.PyDLL``, whose calls keep
    the GIL and raise the Python exception a function set.
    """
    kind = PYLIBRARY if python_api else LIBRARY
    library = _get("get_library", kind, "", units, "", name_hint=name_hint,
                   libraries=libraries, library_dirs=library_dirs, include_dirs=include_dirs,
                   extra_compile_args=extra_compile_args, extra_link_args=extra_link_args,
                   runtime_version=runtime_version, unversioned=unversioned, origin=origin,
                   found=found, cached_only=cached_only)
    if library is not None and exports and not unversioned:
        key = _cache_for(config.compiledir).key_of(library)
        if key is not None:
            try:
                for symbol_id in _symbol_ids(exports, runtime_version):
                    cache.write_symbol(config.compiledir, symbol_id, key)
            except OSError as exc:  # the index only saves later compiles: go on without it
                if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                    raise
    return library


def find_exports(symbols, *, runtime_version: str = "") -> dict:
    """{symbol: library} for the ``symbols`` a cached library built with the current build
    context exports (see :func:`get_library`); symbols without one, or whose library is gone
    or corrupt, are left out (they will be compiled again)."""
    return _cache_for(config.compiledir).find_exports(symbols, runtime_version)


def library_of(symbol: str, *, runtime_version: str = "") -> tuple[str, str] | None:
    """``(key, directory)`` of the cached library that exports ``symbol`` (built with the
    current build context), or None: what the compile report names as a node's module."""
    [symbol_id] = _symbol_ids([symbol], runtime_version)
    key = cache.read_symbol(config.compiledir, symbol_id)
    if key is None:
        return None
    return key, os.path.join(config.compiledir, cache.MODULES, key)


def _symbol_ids(symbols, runtime_version: str) -> list[str]:
    context = json.dumps(_build_context(runtime_version), sort_keys=True)
    return [_sha(f"{symbol}\n{context}")[:40] for symbol in symbols]


def _build_context(runtime_version: str) -> dict:
    """What a library's code depends on besides its sources and libraries: the key parts
    other than the sources."""
    parts = key_parts("", "", cxx=compiler_path(), build={}, runtime_version=runtime_version,
                      compilers_dir=os.path.join(config.compiledir, cache.COMPILERS),
                      kind=LIBRARY)
    for name in ("source", "units", "cdef", "build"):
        parts.pop(name)
    return parts


def _get(caller, kind, source, units, cdef, *, name_hint, runtime_version, origin, found,
         cached_only=False, **sequences):
    for arg, value in (("cdef", cdef), ("name_hint", name_hint),
                       ("runtime_version", runtime_version)):
        if not isinstance(value, str):
            raise TypeError(f"{caller}: {arg} must be a str, got {type(value).__name__}")
    lists = {}
    for arg, value in (*sequences.items(), ("units", units)):
        items = () if isinstance(value, str) else tuple(value)
        if isinstance(value, str) or not all(isinstance(v, (str, os.PathLike)) for v in items):
            raise TypeError(f"{caller}: {arg} must be a sequence of strings, got {value!r}")
        lists[arg] = tuple(os.fspath(v) for v in items)
    if kind in (LIBRARY, PYLIBRARY) and not lists["units"]:
        raise ValueError("get_library: units is empty; expected at least one C source")
    module, where = _cache_for(config.compiledir).get(
        kind, source, cdef, name_hint=name_hint, runtime_version=runtime_version,
        origin=origin, cached_only=cached_only, **lists)
    if found is not None and module is not None:
        found(where)
    return module


_caches: dict[str, ModuleCache] = {}
_caches_lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked. A lock another thread held then (a
    background build holds its key's lock for the whole compile) would never be released
    here, so the child starts with new ones; the key's file lock (``locking.py``) is the
    parent's to release when its compile ends, and the child waits for it as for any
    other process."""
    global _caches_lock
    _caches_lock = threading.Lock()
    for module_cache in _caches.values():
        module_cache._key_locks = {}
        module_cache._guard = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def loaded_symbols(context: str) -> dict:
    """A dict the caller fills with the addresses of symbols of libraries it loaded from the
    current cache, for ``context`` (what the symbols' code depends on besides their names):
    kept as long as the cache's memory of loaded modules (a new process starts empty)."""
    return _cache_for(config.compiledir).symbols.setdefault(context, {})


def _cache_for(root: str) -> ModuleCache:
    found = _caches.get(root)
    if found is None:
        cachedir.prepare(root)  # CompiledirError / UntrustedCacheError before anything loads
        with _caches_lock:
            found = _caches.setdefault(root, ModuleCache(root))
    return found


def key_parts(source: str, cdef: str, *, cxx: str, compilers_dir: str, build: dict,
              runtime_version: str, kind: str = MODULE, units=()) -> dict:
    """Everything a module's key is a hash of (also written to its manifest)."""
    import numpy

    return {
        "format": CACHE_FORMAT,
        "kind": kind,
        "source": _sha(source),
        "units": [_sha(unit) for unit in units],
        "cdef": _sha(cdef),
        "build": build,
        "flags": compile_flags(),
        "compiler": cxx,
        "compiler_version": compiler_version(cxx, compilers_dir),
        "cpu": cpu_identity(),
        "config": config.c_key_hash(),
        "numpy": f"{numpy.__version__} C-API {_numpy_c_api_version()}",
        "python": f"{sys.version.split()[0]}{sys.abiflags} {sys.implementation.cache_tag} "
                  f"{importlib.machinery.EXTENSION_SUFFIXES[0]}",
        "runtime": runtime_version,
    }


class ModuleCache:
    """The modules of one compile directory: an in-memory map in front of the disk cache."""

    def __init__(self, root: str):
        self.root = root
        self._memo: dict[tuple, object] = {}
        self._keys: dict[int, str] = {}  # id(loaded library) -> its entry key
        self._by_key: dict[str, object] = {}  # libraries loaded through find_exports
        self.symbols: dict[str, dict] = {}
        self._key_locks: dict[tuple, threading.Lock] = {}
        self._guard = threading.Lock()
        self._index: dict[str, dict] | None = None
        self._cleanup_checked = False

    def get(self, kind, source, cdef, *, name_hint, units, libraries, library_dirs,
            include_dirs, extra_compile_args, extra_link_args, runtime_version, unversioned,
            origin, cached_only=False):
        """(module or library, where it came from: "memory", "disk" or "compiled"); (None,
        "missing") with ``cached_only`` when it would have to be compiled."""
        memo_key = (kind, source, cdef, units, libraries, library_dirs, include_dirs,
                    extra_compile_args, extra_link_args, runtime_version, bool(unversioned),
                    config.c_key_hash())
        module = self._memo.get(memo_key)
        if module is not None:
            return module, "memory"
        where = "memory"
        with self._guard:
            key_lock = self._key_locks.setdefault(memo_key, threading.Lock())
        if not key_lock.acquire(blocking=not cached_only):
            return None, "missing"  # being compiled by another thread: not cached yet
        with contextlib.ExitStack() as held:
            held.callback(key_lock.release)
            module = self._memo.get(memo_key)
            if module is None:
                try:
                    module, where = self._find_or_build(
                        kind, source, cdef, units, name_hint, runtime_version, unversioned,
                        origin, {"libraries": libraries, "library_dirs": library_dirs,
                                 "include_dirs": include_dirs,
                                 "extra_compile_args": extra_compile_args,
                                 "extra_link_args": extra_link_args}, cached_only)
                except OSError as exc:  # a full disk, wherever the write was
                    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                        raise cachedir.disk_full(exc.filename or self.root) from None
                    raise
                if module is not None:
                    self._memo[memo_key] = module
        return module, where

    def key_of(self, library) -> str | None:
        """The entry key of a library this cache loaded or built (None: not stored)."""
        return self._keys.get(id(library))

    def find_exports(self, symbols, runtime_version: str) -> dict:
        found = {}
        for symbol, symbol_id in zip(symbols, _symbol_ids(symbols, runtime_version)):
            key = cache.read_symbol(self.root, symbol_id)
            if key is None:
                continue
            library = self._by_key.get(key)
            if library is None:
                try:
                    library = self._load(os.path.join(self.root, cache.MODULES, key), key)
                except cache.CorruptEntry:
                    library = None
                if library is None:
                    continue
                self._by_key[key] = library
                self._keys[id(library)] = key
            if hasattr(library, symbol):
                found[symbol] = library
        return found

    # -- finding -----------------------------------------------------------------------------

    def _find_or_build(self, kind, source, cdef, units, name_hint, runtime_version,
                       unversioned, origin, build, cached_only):
        cxx = compiler_path()
        parts = key_parts(source, cdef, cxx=cxx, build=build, runtime_version=runtime_version,
                          compilers_dir=os.path.join(self.root, cache.COMPILERS), kind=kind,
                          units=units)
        key = _sha(json.dumps(parts, sort_keys=True))[:40]
        name = module_name(name_hint, key)
        job = _Build(self.root, key, parts, name, kind, source, cdef, units, build, origin)
        if unversioned:
            if config.cmodule__warn_no_version:
                warnings.warn(
                    f"tensorgraph: C module {name} is compiled again in every process because "
                    f"these parts have no c_code_cache_version(): {', '.join(unversioned)}",
                    ModuleCacheWarning, stacklevel=4)
            return job.run(lock=None, publish=False), "compiled"

        from tensorgraph.link.c.locking import KeyLock

        entry = os.path.join(self.root, cache.MODULES, key)
        try:
            module = self._load(entry, key)
        except cache.CorruptEntry:
            module = None  # look again under the lock: it may be being replaced right now
        if module is not None:
            self._keys[id(module)] = key
            return module, "disk"
        if cached_only:
            return None, "missing"
        self._daily_cleanup()
        with KeyLock(os.path.join(self.root, cache.LOCKS), key, f"module {name}") as lock:
            try:
                module = self._load(entry, key)
            except cache.CorruptEntry as exc:
                warnings.warn(f"tensorgraph: the cached C module in {entry} is corrupt ({exc}); "
                              "removed it, compiling it again", ModuleCacheWarning, stacklevel=4)
                cache.remove_entry(self.root, entry)
                module = None
            if module is None:
                module = job.run(lock=lock, publish=True)
                self._keys[id(module)] = key
                return module, "compiled"
        self._keys[id(module)] = key
        return module, "disk"

    def _load(self, entry: str, key: str):
        """The module stored in ``entry``, None if there is none; CorruptEntry if bad."""
        manifest = self._preloaded(key) or cache.read_manifest(entry)
        if manifest is None:
            return None
        path = cache.checked_library(entry, manifest)
        cachedir.check_trusted(path, self.root)
        try:
            module = load(manifest.get("kind", MODULE), manifest["module"], path)
        except Exception as exc:  # noqa: BLE001 - any import failure means a bad entry
            raise cache.CorruptEntry(f"importing it failed: {exc}") from None
        cache.touch(entry)
        return module

    def _daily_cleanup(self) -> None:
        """Before the first compilation of a process: remove what killed compiles left behind
        (``cache.sweep_dead``); and ``cache.clear`` at most once a day per cache, so an
        unattended cache does not grow without bound."""
        if self._cleanup_checked:
            return
        self._cleanup_checked = True
        cache.sweep_dead(self.root)
        stamp = os.path.join(self.root, cache.CLEANUP_STAMP)
        try:
            if time.time() - os.stat(stamp).st_mtime < CLEANUP_INTERVAL:
                return
        except FileNotFoundError:
            pass
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        with open(stamp, "w", encoding="utf-8"):
            pass
        cache.clear(self.root, config.cmodule__age_thresh_use)

    def _preloaded(self, key: str) -> dict | None:
        if not config.cmodule__preload_cache:
            return None
        if self._index is None:
            self._index = {e.key: e.manifest for e in cache.entries(self.root) if e.manifest}
        return self._index.pop(key, None)


class _Build:
    """Compiling one module: cffi writes the C file (of a module; a library has only its
    units), the compiler builds the .so in tmp/, it is loaded there (the check that it works),
    then published into modules/.

    Several translation units are compiled one process per unit, all at once, then linked;
    one unit is compiled and linked by one command."""

    def __init__(self, root, key, parts, name, kind, source, cdef, units, build, origin):
        self.root, self.key, self.parts, self.name = root, key, parts, name
        self.kind, self.source, self.cdef, self.units = kind, source, cdef, units
        self.build, self.origin = build, origin

    def run(self, lock, publish: bool):
        tmp_root = os.path.join(self.root, cache.TMP)
        os.makedirs(tmp_root, mode=0o700, exist_ok=True)
        workdir = tempfile.mkdtemp(prefix=f"{self.name}-", dir=tmp_root)
        keep = config.nocleanup
        try:
            write_owner(os.path.join(workdir, cache.OWNER), f"building module {self.name}")
            files = []
            if self.kind == MODULE:
                files.append((os.path.join(workdir, self.name + ".c"), self.source))
                self._write_c(files[0][0])
            for i, unit in enumerate(self.units):
                files.append((os.path.join(workdir, f"{self.name}_unit{i}.c"), unit))
                with open(files[-1][0], "w", encoding="utf-8") as f:
                    f.write(unit)
            built = os.path.join(workdir, "entry")
            os.mkdir(built, mode=0o700)
            so_name = f"{self.name}-{secrets.token_hex(4)}.so"
            so_path = os.path.join(built, so_name)
            started = time.perf_counter()
            cmd = self._compile(workdir, files, so_path, lock)
            if not os.path.isfile(so_path):
                raise CompileError(
                    f"C compilation of module {self.name!r}: the compiler "
                    f"({self.parts['compiler']}) exited with status 0 but wrote no library "
                    f"{so_name}")
            seconds = time.perf_counter() - started
            origin_text = describe_origin(self.origin)
            cache.write_manifest(built, {
                "format": CACHE_FORMAT, "key": self.key, "module": self.name, "kind": self.kind,
                "file": so_name, "size": os.path.getsize(so_path),
                "sha256": cache.sha256_file(so_path), "created": time.time(),
                "compile_seconds": round(seconds, 4), "origin": origin_text,
                "key_parts": self.parts, "command": cmd,
            })
            try:
                module = load(self.kind, self.name, so_path)
            except Exception as exc:  # noqa: BLE001 - reported with the module's context
                raise CompileError(f"C module {self.name!r} compiled but cannot be loaded"
                                   f"{', ' + origin_text if origin_text else ''}: {exc}") from None
            if publish:
                entry = os.path.join(self.root, cache.MODULES, self.key)
                if cache.publish(built, entry) and self.kind == MODULE:
                    module.__file__ = os.path.join(entry, so_name)
            return module
        finally:
            if not keep:
                shutil.rmtree(workdir, ignore_errors=True)

    def _compile(self, workdir: str, files, so_path: str, lock) -> list[str]:
        """Build ``so_path`` from ``files`` ((path, text)...); returns the command that made
        it (the link, for several units). Raises CompileError with the failing unit's errors."""
        from tensorgraph.link.c import compiler

        cxx, flags = self.parts["compiler"], self.parts["flags"] + list(
            self.build["extra_compile_args"])
        libs = {"libraries": self.build["libraries"], "library_dirs": self.build["library_dirs"],
                "extra_link_args": self.build["extra_link_args"]}
        wait = {"heartbeat": lock.heartbeat if lock else None,
                "interval": min(1.0, config.compile__timeout / 4)}
        if len(files) == 1:
            (path, text), = files
            cmd = compiler.command(cxx, path, so_path, flags=flags,
                                   include_dirs=self.build["include_dirs"], **libs)
            self._check(compiler.run(cmd, **wait), path, text, workdir)
            return cmd
        objects = [path[:-2] + ".o" for path, _ in files]
        results = compiler.run_many(
            [compiler.object_command(cxx, path, obj, flags=flags,
                                     include_dirs=self.build["include_dirs"])
             for (path, _), obj in zip(files, objects)], **wait)
        for (path, text), result in zip(files, results):
            self._check(result, path, text, workdir)
        cmd = compiler.link_command(cxx, objects, so_path, flags=flags, **libs)
        self._check(compiler.run(cmd, **wait), files[0][0], files[0][1], workdir)
        return cmd

    def _check(self, result, c_file: str, source: str, workdir: str) -> None:
        """CompileError for a failed compiler run; its warnings shown if asked."""
        from tensorgraph.link.c import compiler

        if result.returncode != 0:
            if "No space left on device" in (result.stderr or ""):
                raise OSError(errno.ENOSPC, "No space left on device", workdir)
            raise CompileError(compiler.format_error(
                result, c_file=c_file, source=source, name=self.name,
                origin_text=describe_origin(self.origin),
                kept=workdir if config.nocleanup else ""))
        if config.cmodule__compilation_warning and (result.stderr or "").strip():
            warnings.warn(f"tensorgraph: compiler output for module {self.name}:\n"
                          f"{result.stderr.strip()}", ModuleCacheWarning, stacklevel=6)

    def _write_c(self, c_file: str) -> None:
        import cffi
        from cffi.recompiler import make_c_source

        ffi = cffi.FFI()
        try:
            ffi.cdef(self.cdef)
        except cffi.CDefError as exc:
            where = describe_origin(self.origin)
            raise CompileError(f"the cdef of C module {self.name!r} does not parse"
                               f"{', ' + where if where else ''}: {exc}") from None
        make_c_source(ffi, self.name, self.source, c_file)


def load(kind: str, name: str, path: str):
    """The module (imported) or library (``ctypes.CDLL``, its symbols resolved now) in
    ``path``."""
    if kind in (LIBRARY, PYLIBRARY):
        loader = ctypes.PyDLL if kind == PYLIBRARY else ctypes.CDLL
        library = loader(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        _fill_scipy_pointers(library)
        return library
    return import_extension(name, path)


def _fill_scipy_pointers(library) -> None:
    """Give each ``scipy_pointer`` variable ``library`` defines the address of its scipy
    function in this process (dtypes.scipy_pointer says why it is not in the source)."""
    for name in SCIPY_FUNCTIONS:
        for variant in VARIANTS:
            try:
                slot = ctypes.c_void_p.in_dll(library, scipy_pointer(name, variant))
            except ValueError:  # the library does not call it
                continue
            slot.value = scipy_address(name, variant)


def import_extension(name: str, path: str):
    """Import the extension module ``name`` from the file ``path`` (any file name)."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def module_name(hint: str, key: str) -> str:
    """``_tg_<hint>_<key prefix>``: a valid, unique C identifier (it names PyInit_...)."""
    clean = re.sub(r"\W+", "_", hint, flags=re.ASCII).strip("_")[:40] or "module"
    return f"_tg_{clean}_{key[:16]}"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _numpy_c_api_version() -> str:
    try:
        from numpy._core._multiarray_umath import _get_ndarray_c_version
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import _get_ndarray_c_version
    return hex(_get_ndarray_c_version())
