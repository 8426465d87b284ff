"""Running the C compiler: the command line, the compiler's identity, and readable errors.

tensorgraph calls the compiler itself on the C file that cffi generates (API mode), instead of
``ffi.compile``: going through setuptools costs about 0.4 s more per module (0.52-0.65 s
against 0.14-0.16 s for a small module on the reference machine, measured 2026-11-22 at
2f3432c) and prints the compiler's output on the process's stderr, where it cannot be put into a :class:`CompileError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

from tensorgraph.configdefaults import config


class CompilationUnavailable(RuntimeError):
    """No usable C compiler (``config.cxx`` empty or not executable); C linkers fall back or
    report this as documented in docs/c_backend.md."""


class CompileError(Exception):
    """The C compiler rejected a generated module; the message shows its first errors with the
    numbered source lines around them, and where the module came from."""


class CompilerUnusableWarning(UserWarning):
    """``config.cxx`` cannot build a trivial C library: the C linkers run Python instead."""


# -- is the compiler usable? ----------------------------------------------------------------

_problems: dict[tuple, str] = {}  # (cxx, flags) -> '' (works) or why not, for this process

PROBE_SOURCE = "int tg_probe(void) { return 42; }\n"


def compiler_problem(probe: bool = True) -> str:
    """'' when ``config.cxx`` can build and load a C library with tensorgraph's flags, else
    why not, in words.

    The cheap part (cxx set, an executable file) is checked every time. The probe (compile,
    link and call a one-line library: about 50 ms, 2026-11-24 at 57c4e12) runs only when asked,
    which the C linkers do
    after a real compilation failed, to tell a broken compiler from broken generated code; so
    a working compiler costs nothing. Its answer is kept for the process: one warning, one
    probe."""
    cxx = config.cxx
    if not cxx:
        return "config.cxx is empty"
    if not (os.path.isfile(cxx) and os.access(cxx, os.X_OK)):
        return f"{cxx} is not an executable file"
    key = (cxx, tuple(compile_flags()))
    if key not in _problems:
        if not probe:
            return ""
        _problems[key] = _probe(cxx, list(key[1]))
    return _problems[key]


def _probe(cxx: str, flags: list[str]) -> str:
    import ctypes

    with tempfile.TemporaryDirectory(prefix="tensorgraph-probe-") as workdir:
        c_file, so_file = os.path.join(workdir, "probe.c"), os.path.join(workdir, "probe.so")
        with open(c_file, "w", encoding="utf-8") as f:
            f.write(PROBE_SOURCE)
        try:
            result = _run_captured(command(cxx, c_file, so_file, flags=flags),
                                   timeout=config.compile__timeout)
        except OSError as exc:
            return f"it cannot be run ({exc.strerror or exc})"
        except subprocess.TimeoutExpired:
            return f"it did not compile a one-line C file within {config.compile__timeout} s"
        if result.returncode != 0:
            said = (result.stderr or result.stdout).strip().splitlines()
            return (f"it failed on a one-line C file (exit status {result.returncode}): "
                    + (said[0][:200] if said else "it printed no diagnostic"))
        if not os.path.isfile(so_file):
            return "it exited with status 0 on a one-line C file but wrote no shared library"
        try:
            answer = ctypes.CDLL(so_file).tg_probe()
        except (OSError, AttributeError) as exc:
            return f"the library it built cannot be loaded ({exc})"
        if answer != 42:
            return f"the library it built computes a wrong value ({answer} instead of 42)"
    return ""


# -- the compiler's identity -------------------------------------------------------------

_versions: dict[str, str] = {}  # disk file -> version


def compiler_path() -> str:
    """``config.cxx`` checked to be an executable; :class:`CompilationUnavailable` if not."""
    cxx = config.cxx
    if not cxx:
        raise CompilationUnavailable(
            "no C compiler: config.cxx is empty, so tensorgraph cannot compile C code (install "
            "gcc, or set the cxx flag to a compiler's path)")
    if not (os.path.isfile(cxx) and os.access(cxx, os.X_OK)):
        raise CompilationUnavailable(
            f"config.cxx={cxx!r} is not an executable file; expected the path of a C compiler "
            "such as /usr/bin/gcc")
    return cxx


def compiler_version(cxx: str, cache_dir: str) -> str:
    """The first line of ``cxx --version``.

    It is part of every module's key, so a new process must get it without running the
    compiler: the answer is kept per process and on disk in ``cache_dir``, under a name that
    changes when the compiler's file does (real path, size, mtime).
    """
    real = os.path.realpath(cxx)
    st = os.stat(real)
    name = hashlib.sha256(repr((real, st.st_size, st.st_mtime_ns)).encode()).hexdigest()[:24]
    path = os.path.join(cache_dir, f"{name}.txt")
    version = _versions.get(path)
    if version is not None:
        return version
    try:
        with open(path, encoding="utf-8") as f:
            version = f.read().strip()
    except OSError:
        version = ""
    if not version:
        out = _run_captured([cxx, "--version"], timeout=60)
        lines = (out.stdout or out.stderr).strip().splitlines()
        version = lines[0].strip() if lines else f"unknown (exit {out.returncode})"
        _write_atomically(path, version + "\n")
    _versions[path] = version
    return version


_cpu: list[str] = []


def cpu_identity() -> str:
    """What ``-march=native`` means here: the CPU model and its feature flags (hashed), so a
    cache shared by machines with different CPUs never hands one of them the other's code."""
    if not _cpu:
        text = ""
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                block = f.read().split("\n\n", 1)[0]
            wanted = ("model name", "flags", "Features", "CPU part", "vendor_id")
            text = "\n".join(line for line in block.splitlines()
                             if line.split(":", 1)[0].strip() in wanted)
        except OSError:
            pass
        if not text:
            import platform

            text = f"{platform.machine()} {platform.processor()}"
        _cpu.append(hashlib.sha256(text.encode()).hexdigest()[:16])
    return _cpu[0]


# -- the command line ---------------------------------------------------------------------

def compile_flags(extra_compile_args=()) -> list[str]:
    """Code-generation flags, from the config and the caller (the caller's come last).

    ``_CFFI_NO_LIMITED_API``: cached modules are per Python version anyway (it is in the key),
    so the full C API is available to sources that include Python.h or numpy's headers.
    ``-ffp-contract=off``: gcc would otherwise fuse ``a * b + c`` into one FMA, rounding once
    where numpy rounds twice, so fused kernels would differ from ``perform`` in the last bit
    (no measured slowdown on the elementwise chain or the logreg step; ``fma()`` written
    explicitly is unaffected).
    ``-fno-math-errno -fno-trapping-math``: the two parts of ``-ffast-math`` that change no
    value (nan, inf, signed zeros and rounding stay IEEE): math functions need not set
    ``errno`` and floating-point exceptions are not observed. Without them gcc cannot
    vectorize a loop calling ``expf``/``log1pf`` (a call "clobbers memory" through errno) or
    if-convert a select such as the stable sigmoid's; with them the logreg cross-entropy loop
    over 400 floats went from 13.6 us to 1.4 us and ``sigmoid(x) > 0.5`` from 2.3 us to 0.9 us
    (measured 2026-11-22 at 36f6811).

    ``-fopenmp-simd``: the kernels' ``#pragma omp simd`` (vectorize this loop, its iterations
    are independent) and ``declare simd`` (tg_scalar.h's math functions have vector variants)
    are honoured; nothing else of OpenMP is used: parallel loops call tensorgraph's own thread
    pool explicitly (``tg_run``, runtime.h), so modules link no OpenMP runtime and gcc and
    clang build them alike. Every flag here is understood by both.

    ``-O3`` stays: at ``-O2 -ftree-vectorize`` gcc takes a third less time on the seed
    modules, but the reduction kernels run up to twice slower (measured with
    benchmarks/c_kernels.py)."""
    if config.cmodule__debug:
        flags = ["-O0", "-g"]
    else:
        flags = ["-O3", "-march=native", "-fopenmp-simd", "-DNDEBUG"]
    flags += ["-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-D_CFFI_NO_LIMITED_API"]
    flags += shlex.split(config.gcc__cxxflags)
    flags += list(extra_compile_args)
    if config.cmodule__remove_gxx_opt:
        flags = [f for f in flags if not f.startswith("-O")]
    return flags


#: Link only the libraries a module calls: every library of node functions names libmvec
#: (and the BLAS of any product), and one without math or products should not load them.
AS_NEEDED = ("-Wl,--as-needed",)


def command(cxx: str, c_file: str, so_file: str, *, flags, include_dirs=(), libraries=(),
            library_dirs=(), extra_link_args=()) -> list[str]:
    """One compile-and-link command building ``so_file`` from ``c_file``.

    Library directories are also put in the module's run path, so a cached module finds its
    libraries (e.g. OpenBLAS inside a wheel) in any later process.
    """
    import sysconfig

    includes = [sysconfig.get_paths()["include"], *include_dirs]
    cmd = [cxx, "-shared", "-fPIC", *flags]
    cmd += [f"-I{d}" for d in includes]
    cmd += [c_file, "-o", so_file, *AS_NEEDED]
    cmd += [f"-L{d}" for d in library_dirs]
    cmd += [f"-Wl,-rpath,{d}" for d in library_dirs]
    cmd += [f"-l{lib}" for lib in libraries]
    cmd += [*extra_link_args, "-lm"]
    return cmd


def object_command(cxx: str, c_file: str, o_file: str, *, flags, include_dirs=()) -> list[str]:
    """The command compiling one translation unit ``c_file`` to the object ``o_file`` (a part
    of a module built from several units, see :func:`link_command`)."""
    import sysconfig

    includes = [sysconfig.get_paths()["include"], *include_dirs]
    return [cxx, "-c", "-fPIC", *flags, *[f"-I{d}" for d in includes], c_file, "-o", o_file]


def link_command(cxx: str, objects, so_file: str, *, flags=(), libraries=(), library_dirs=(),
                 extra_link_args=()) -> list[str]:
    """The command linking ``objects`` into the shared library ``so_file``. The compile
    ``flags`` are passed too (``gcc__cxxflags`` may hold the linker's).
    Library directories also become its run path, as in :func:`command`."""
    cmd = [cxx, "-shared", *flags, *objects, "-o", so_file, *AS_NEEDED]
    cmd += [f"-L{d}" for d in library_dirs]
    cmd += [f"-Wl,-rpath,{d}" for d in library_dirs]
    cmd += [f"-l{lib}" for lib in libraries]
    cmd += [*extra_link_args, "-lm"]
    return cmd


def run_many(cmds, heartbeat=None, interval: float = 1.0) -> list[subprocess.CompletedProcess]:
    """Run several compiler commands at once (independent translation units of one module, so
    they use every core) and return their results in order, calling ``heartbeat()`` every
    ``interval`` seconds while they work; on any exception (KeyboardInterrupt too) the
    compilers still running are killed."""
    if config.cmodule__debug:
        for cmd in cmds:
            print("tensorgraph: " + shlex.join(cmd), file=sys.stderr)
    procs = []
    try:
        for cmd in cmds:
            procs.append(spawn(cmd))
        results = []
        for cmd, proc in zip(cmds, procs):
            while True:
                try:
                    out, err = proc.communicate(timeout=interval)
                    break
                except subprocess.TimeoutExpired:
                    if heartbeat is not None:
                        heartbeat()
            results.append(subprocess.CompletedProcess(cmd, proc.returncode, out, err))
        return results
    except BaseException:  # leave no compiler running behind us
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        raise


# A process forked by another thread while Popen runs keeps the pipe ends Popen has open at
# that moment (the child's error pipe, its output pipes), and the Popen waiting for them to
# close (the exec, the end of the output) then waits for that process to exit: a
# multiprocessing worker may live for hours, or wait for the lock this compile holds. So a
# fork waits until no compiler is being started here. (Never give Popen a preexec_fn under
# this lock: it runs these fork handlers in the thread that holds it.)
_spawning = threading.Lock()
os.register_at_fork(before=_spawning.acquire, after_in_parent=_spawning.release,
                    after_in_child=_spawning.release)


#: How much lower the scheduling priority is of the compilers that no caller waits for (the
#: optimized tier's, built in the background: link/tiers.py), so that on a busy machine the
#: compiles a first result waits for (the quick tier's, link/c/quick.py) get the cores first.
BACKGROUND_NICENESS = 10
_thread = threading.local()


@contextlib.contextmanager
def in_background():
    """Compilers this thread starts inside the block run under ``nice`` (lower priority by
    ``BACKGROUND_NICENESS``), where the system has ``nice``."""
    previous = in_the_background()
    _thread.background = True
    try:
        yield
    finally:
        _thread.background = previous


def in_the_background() -> bool:
    """Whether this thread is inside :func:`in_background`."""
    return getattr(_thread, "background", False)


def spawn(cmd: list[str]) -> subprocess.Popen:
    """Start ``cmd`` with its output captured as text, never while this process forks (under
    ``nice`` in :func:`in_background`)."""
    nice = shutil.which("nice") if in_the_background() else None
    if nice:
        cmd = [nice, "-n", str(BACKGROUND_NICENESS), *cmd]
    with _spawning:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace")


def _run_captured(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)``, started
    by :func:`spawn`."""
    with spawn(cmd) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run(cmd: list[str], heartbeat=None, interval: float = 1.0) -> subprocess.CompletedProcess:
    """Run the compiler, calling ``heartbeat()`` every ``interval`` seconds while it works (so
    processes waiting on our lock can tell we are alive); killed if we are interrupted."""
    return run_many([cmd], heartbeat, interval)[0]


# -- errors -------------------------------------------------------------------------------

_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<kind>fatal error|error): "
    r"(?P<msg>.*)$", re.MULTILINE)
MAX_ERRORS = 3
CONTEXT = 2


def source_offset(generated: str, source: str) -> int:
    """Number of lines cffi wrote before the caller's source in the generated C file."""
    at = generated.find(source) if source else -1
    return generated.count("\n", 0, at) if at >= 0 else -1


def format_error(result, *, c_file: str, source: str, name: str, origin_text: str,
                 kept: str) -> str:
    """The :class:`CompileError` message: the first ``MAX_ERRORS`` errors, each with numbered
    lines of the source around it; the compiler's raw output only when nothing parses."""
    try:
        with open(c_file, encoding="utf-8", errors="replace") as f:
            generated = f.read()
    except OSError:
        generated = ""
    offset = source_offset(generated, source)
    head = f"C compilation of module {name!r} failed (exit code {result.returncode})"
    lines = [head + (f", {origin_text}" if origin_text else "") + ":"]
    errors = list(_DIAGNOSTIC.finditer(result.stderr))
    for match in errors[:MAX_ERRORS]:
        lines.append("")
        lines.extend(_describe_diagnostic(match, c_file, generated, source, offset))
    if len(errors) > MAX_ERRORS:
        lines.append(f"\n... and {len(errors) - MAX_ERRORS} more error(s)")
    if not errors:
        raw = result.stderr.strip().splitlines() or result.stdout.strip().splitlines()
        if not raw:
            raw = [f"(the compiler, {result.args[0] if result.args else config.cxx}, printed "
                   "no diagnostic)"]
        lines += ["  " + line for line in raw[:15]]
        if len(raw) > 15:
            lines.append(f"  ... ({len(raw) - 15} more lines)")
    lines.append("")
    lines.append(f"generated C kept in {kept}" if kept else
                 "set config.nocleanup=True to keep the generated C file")
    return "\n".join(lines)


def _describe_diagnostic(match, c_file, generated, source, offset) -> list[str]:
    lineno = int(match["line"])
    message = f"{match['kind']}: {match['msg']}"
    same_file = os.path.abspath(match["file"]) == os.path.abspath(c_file)
    if same_file and offset >= 0 and 0 < lineno - offset <= source.count("\n") + 1:
        where, text, shown = "module source", source, lineno - offset
    elif same_file:
        where, text, shown = "cffi wrapper (from the cdef)", generated, lineno
    else:
        where, shown = match["file"], lineno
        try:
            with open(match["file"], encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
    out = [f"  {where}, line {shown}: {message}"]
    all_lines = text.splitlines()
    first = max(1, shown - CONTEXT)
    for n in range(first, min(len(all_lines), shown + CONTEXT) + 1):
        mark = ">" if n == shown else " "
        out.append(f"  {mark}{n:5d} | {all_lines[n - 1]}")
    return out


def describe_origin(origin) -> str:
    """One line saying what a module was compiled for: a node and the user line that built
    it, a graph, or the text of anything else."""
    if origin is None:
        return ""
    if hasattr(origin, "op") and hasattr(origin, "inputs"):  # an Apply node
        from tensorgraph.graph.utils import format_user_line

        user = format_user_line(origin)
        return f"for node {origin}" + (f" created at {user}" if user else "")
    if hasattr(origin, "toposort") and hasattr(origin, "outputs"):  # a FunctionGraph
        outs = ", ".join(str(o) for o in origin.outputs)[:120]
        return f"for a graph of {len(origin.apply_nodes)} nodes with outputs {outs}"
    return f"for {str(origin)[:200]}"


def _write_atomically(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
