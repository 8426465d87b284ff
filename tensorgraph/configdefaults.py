"""Every tensorgraph flag, declared once: name, type, default, doc, mutability, C-key.

The names, choices and defaults follow the configuration pages of Theano / Aesara /
PyTensor so that rc files and ``*_FLAGS`` strings port by renaming the variable.  The
module builds :data:`config` when tensorgraph is imported; a bad setting in the
environment or an rc file stops the import with a :class:`ConfigError`.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import struct

from tensorgraph.configparser import (
    BoolParam,
    Config,
    DeviceParam,
    EnumStr,
    FloatParam,
    IntParam,
    ModeParam,
    PathParam,
    StrParam,
)

# Keys usable in ``compiledir_format``; all cheap to compute (no subprocess, no numpy).
_uname = platform.uname()
COMPILEDIR_FORMAT_KEYS = {
    "platform": f"{_uname.system}-{_uname.release}-{_uname.machine}",
    "short_platform": _uname.system,
    "processor": _uname.machine,
    "python_version": platform.python_version(),
    "python_bitwidth": str(struct.calcsize("P") * 8),
    "python_int_bitwidth": str(struct.calcsize("l") * 8),
    "python_implementation": platform.python_implementation(),
    "hostname": socket.gethostname(),
}


def _check_compiledir_format(fmt: str) -> None:
    try:
        formatted = fmt % COMPILEDIR_FORMAT_KEYS
    except (KeyError, ValueError, TypeError) as exc:
        keys = ", ".join(f"%({k})s" for k in COMPILEDIR_FORMAT_KEYS)
        raise ValueError(f"cannot format it ({exc!r}); usable keys: {keys}") from None
    if os.sep in formatted or not formatted.strip():
        raise ValueError("it must give a single, non-empty directory name")


class _check_colon_list:
    """Check of a ``a:b:c`` flag whose items come from ``allowed``; a class rather than a
    closure so that the config (which holds it) pickles."""

    def __init__(self, allowed: tuple[str, ...]):
        self.allowed = tuple(allowed)

    def __call__(self, text: str) -> None:
        bad = [p for p in text.split(":") if p and p not in self.allowed]
        if bad:
            raise ValueError(f"unknown item(s) {', '.join(map(repr, bad))}; "
                             f"items: {self.allowed}")


def _find_c_compiler() -> str:
    for name in ("gcc", "cc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return ""


def _default_threads() -> int:
    """``OMP_NUM_THREADS`` when it is a positive number (OpenMP's convention, which users of
    numpy's BLAS already set; a list such as ``4,2`` counts by its first), else the CPUs this
    process may keep busy. The one place tensorgraph reads that variable."""
    from tensorgraph.cpus import usable_cpus

    first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if first.isdigit() and int(first) > 0:
        return int(first)
    return usable_cpus()


def _default_openmp(cfg) -> bool:
    """On when this process may keep more than one CPU busy (its affinity mask, capped by a
    cgroup CPU quota) and ``pool__threads`` is not 1 (``OMP_NUM_THREADS=1``): numpy's BLAS, JAX
    and PyTorch use every core by default too, and a user comparing them expects the same
    (on 2 cores the MLP step took 0.78 ms with several threads, 1.4 ms without, measured
    2026-11-25 at 7fa313e). Small loops
    and products stay on one thread either way."""
    from tensorgraph.cpus import usable_cpus

    return usable_cpus() > 1 and cfg.pool__threads != 1


# Callable defaults are module-level functions (not lambdas) so that the config pickles.
def _default_cxx(cfg) -> str:
    return _find_c_compiler()


def _default_pool_threads(cfg) -> int:
    return _default_threads()


def _default_compiledir(cfg) -> str:
    return os.path.join(cfg.base_compiledir, cfg.compiledir_format % COMPILEDIR_FORMAT_KEYS)


def _declare(config: Config) -> None:
    add = config.add

    # -- device and dtypes ---------------------------------------------------------
    add("device", DeviceParam("cpu", """Where computations run. tensorgraph generates CPU
        code only, so 'cpu' is the only value.""", mutable=False))
    add("print_active_device", BoolParam(True, """Print the active device when a
        non-default device is selected at import."""))
    add("floatX", EnumStr(("float64", "float32", "float16"), """Default float dtype: the
        dtype of tt.matrix(), tt.vector()... without an explicit dtype, and what Python
        floats become in graphs. float32 halves memory and is often faster; float16 is
        mainly for storage."""))
    add("warn_float64", EnumStr(("ignore", "warn", "raise", "pdb"), """What to do when a
        float64 variable is created: useful to catch accidental upcasts when floatX is
        float32."""))
    add("cast_policy", EnumStr(("custom", "numpy+floatX"), """How the result dtype of an
        operation is chosen. 'custom' is tensorgraph's own rule (Python scalars don't
        upcast tensors); 'numpy+floatX' follows numpy, except that float64 results that
        come only from Python floats use floatX."""))
    add("int_division", EnumStr(("int", "raise", "floatX"), """Meaning of `/` between two
        integer tensors: 'int' divides as integers (like Python 2; a `/` the user writes
        warns once per line, IntDivisionWarning), 'raise' refuses and asks for `//` or an
        explicit cast, 'floatX' gives a float of dtype floatX."""))
    add("deterministic", EnumStr(("default", "more"), """'more' picks slower but
        deterministic implementations where an Op has a choice."""))

    # -- modes, linkers, rewrites --------------------------------------------------
    add("mode", ModeParam(("Mode", "FAST_RUN", "FAST_COMPILE", "DebugMode",
                           "NanGuardMode", "MonitorMode", "JAX", "NUMBA", "PYTORCH",
                           "DEBUG_MODE", "CVM", "C"),
                          """Default compilation mode of
        function(): 'Mode' uses the linker and optimizer flags, 'FAST_RUN' rewrites fully
        and runs C, 'FAST_COMPILE' does few rewrites and runs numpy code, 'DebugMode'
        cross-checks Python and C implementations and rewrites (slow), 'NanGuardMode'
        stops at the first node producing nan/inf/huge values, 'MonitorMode' calls user
        hooks around every node, 'JAX' / 'NUMBA' / 'PYTORCH' compile the whole graph with
        JAX / Numba / torch.compile (optional extras), 'DEBUG_MODE' is the deprecated name
        of 'DebugMode', 'CVM' and
        'C' are PyTensor's names of FAST_RUN's rewrites with the 'cvm' / 'c' linker. Names
        are case-insensitive ('fast_run'). A Mode instance is accepted too."""))
    add("linker", EnumStr(("cvm", "c|py", "py", "c", "c|py_nogc", "vm", "vm_nogc",
                           "cvm_nogc", "jax", "numba", "pytorch"), """How a rewritten graph becomes
        a
        callable when mode='Mode': 'py' calls each node's numpy perform; 'c' compiles the
        whole graph into one C program; 'c|py' uses per-node C code where an Op has it and
        numpy otherwise; 'vm' / 'cvm' run the node loop in Python / in C and free
        intermediate results early; the _nogc variants keep them (faster, more memory);
        'jax' / 'numba' / 'pytorch' compile the whole graph into one JAX / Numba /
        torch.compile function."""))
    add("allow_gc", BoolParam(True, """Free intermediate results as soon as no later node
        needs them. False keeps them between calls: faster, more memory."""))
    add("optimizer", EnumStr(("o4", "o3", "o2", "o1", "unsafe", "fast_run", "fast_compile",
                              "merge", "stabilize", "None"), """Rewrite preset when
        mode='Mode': 'o4'/'fast_run' all safe rewrites, 'o3'..'o1' progressively fewer
        (cheaper compiles), 'unsafe' adds rewrites that assume valid inputs, 'fast_compile'
        few cheap rewrites, 'stabilize' only numerical-stability rewrites, 'merge' only
        merging duplicate subgraphs, 'None' none at all."""))
    add("optimizer_excluding", StrParam("", """Colon-separated rewrite names or tags to
        leave out of the mode's rewrites."""))
    add("optimizer_including", StrParam("", """Colon-separated rewrite names or tags to add
        to the mode's rewrites."""))
    add("optimizer_requiring", StrParam("", """Colon-separated rewrite names or tags that
        every rewrite of the default mode must have: rewrites lacking one are left out."""))
    add("optimizer_verbose", BoolParam(False, """Print every replacement a rewrite makes
        while compiling."""))
    add("on_opt_error", EnumStr(("warn", "raise", "pdb", "ignore"), """What to do when a
        rewrite raises: 'warn' skips it and warns, 'raise' stops compilation, 'pdb' opens
        the debugger, 'ignore' skips it silently."""))
    add("on_shape_error", EnumStr(("warn", "raise"), """What to do when shape inference
        fails during rewriting."""))
    add("on_unused_input", EnumStr(("raise", "warn", "ignore"), """What function() does
        when an input does not take part in computing the outputs."""))
    add("cycle_detection", EnumStr(("regular", "fast"), """How destructive (inplace)
        rewrites check that they do not create cycles: 'regular' checks every candidate,
        'fast' skips checks it can prove unnecessary (faster compiles, may miss an inplace
        opportunity)."""))
    add("check_stack_trace", EnumStr(("off", "log", "warn", "raise"), """Check that
        rewrites copy the user's source location onto the nodes they create: 'log' records,
        'warn' warns, 'raise' fails when it is missing."""))
    add("check_input", BoolParam(True, """Generated C code checks the number of dimensions,
        dtype and broadcastable dimensions of its inputs. Turning it off saves a little time
        per call and gives crashes instead of errors on bad input.""", in_c_key=True))
    add("unpickle_function", BoolParam(True, """Unpickle compiled functions; when False,
        a pickled function unpickles as None."""))
    add("reoptimize_unpickled_function", BoolParam(False, """Rewrite the graph again when
        unpickling a compiled function instead of reusing the pickled rewritten graph."""))
    add("optdb__max_use_ratio", FloatParam(8.0, """An equilibrium rewriter raises
        RewriteLimitError, naming the rewrite, when one rewrite has been applied more than this
        many times the graph's node count: a guard against rewrites that undo each other.""",
        minimum=0.0))
    add("tensor__local_elemwise_fusion", BoolParam(True, """Fuse chains of elementwise
        operations into one loop (one C kernel)."""))
    add("metaopt__verbose", IntParam(0, """Verbosity of rewrites that pick an Op
        implementation by timing candidates: 0 silent, 1 report the choice, 2 report every
        candidate.""", minimum=0))

    # -- profiling -----------------------------------------------------------------
    add("profile", BoolParam(False, """Profile every compiled function (time per node and
        per Op); the summary is printed at exit."""))
    add("profile_memory", BoolParam(False, """Also record memory use per node (needs
        profile)."""))
    add("profile_optimizer", BoolParam(False, """Also record the time each rewrite takes
        (needs profile)."""))
    add("profiling__n_apply", IntParam(20, """Number of nodes (Apply) listed in a profile
        summary.""", minimum=0))
    add("profiling__n_ops", IntParam(20, """Number of Ops listed in a profile summary.""",
                                     minimum=0))
    add("profiling__output_line_width", IntParam(512, """Maximum line width of a profile
        summary.""", minimum=40))
    add("profiling__min_memory_size", IntParam(1024, """Nodes whose outputs take fewer
        bytes than this are left out of the memory profile.""", minimum=0))
    add("profiling__min_peak_memory", BoolParam(False, """Also compute the smallest peak
        memory any node order could reach (slow on big graphs)."""))
    add("profiling__destination", StrParam("stdout", """Where profile summaries go:
        'stdout', 'stderr' or a file path (stdout by default: notebooks paint stderr as
        an error)."""))
    add("profiling__debugprint", BoolParam(False, """Print the graph of each profiled
        function with its profile."""))
    add("profiling__ignore_first_call", BoolParam(False, """Leave each function's first call
        out of its profile (it may include one-time work)."""))

    # -- scan ----------------------------------------------------------------------
    add("scan__allow_output_prealloc", BoolParam(True, """Let scan preallocate its outputs
        and reuse them across iterations (faster, more memory)."""))
    add("scan__allow_gc", BoolParam(False, """Free scan's inner intermediate results after
        each iteration (less memory, slower)."""))

    # -- DebugMode and NanGuardMode ------------------------------------------------
    add("DebugMode__patience", IntParam(10, """How many times DebugMode runs each
        rewrite-free check, to catch nondeterministic Ops.""", minimum=1))
    add("DebugMode__check_c", BoolParam(True, """DebugMode runs each Op's C implementation
        and compares it with perform."""))
    add("DebugMode__check_py", BoolParam(True, """DebugMode runs each Op's numpy perform."""))
    add("DebugMode__check_finite", BoolParam(True, """DebugMode reports nan and inf in any
        node output."""))
    add("DebugMode__check_strides", IntParam(0, """DebugMode checks that an Op's perform and
        C code give outputs with the same strides: 0 no, 1 warn, 2 raise.""", minimum=0))
    add("DebugMode__warn_input_not_reused", BoolParam(True, """DebugMode warns when an Op
        declared as inplace or view does not actually reuse its input."""))
    add("DebugMode__check_preallocated_output", StrParam("", """Colon-separated kinds of
        preallocated output buffers DebugMode hands to each Op to check it handles them:
        initial, previous, c_contiguous, f_contiguous, strided, wrong_size, ALL. Empty
        means none.""", check=_check_colon_list(("initial", "previous", "c_contiguous",
                                                  "f_contiguous", "strided", "wrong_size",
                                                  "ALL"))))
    add("DebugMode__check_preallocated_output_ndim", IntParam(4, """Strided or wrong-size
        buffers are only tried for outputs with at most this many dimensions.""",
                                                              minimum=0))
    add("NanGuardMode__nan_is_error", BoolParam(True, """NanGuardMode flags nan values."""))
    add("NanGuardMode__inf_is_error", BoolParam(True, """NanGuardMode flags inf values."""))
    add("NanGuardMode__big_is_error", BoolParam(True, """NanGuardMode flags values with an
        absolute value above 1e10."""))
    add("NanGuardMode__action", EnumStr(("raise", "warn", "pdb"), """What NanGuardMode does
        when it flags a value."""))

    # -- test values and errors ----------------------------------------------------
    add("compute_test_value", EnumStr(("off", "ignore", "warn", "raise", "pdb"), """Compute
        each node's value on the test values of its inputs while the graph is built, so
        shape and dtype errors show at the line that made them. 'off' disables; 'ignore'
        skips nodes whose inputs have no test value; 'warn', 'raise', 'pdb' act when one is
        missing."""))
    add("compute_test_value_opt", EnumStr(("off", "ignore", "warn", "raise", "pdb"), """As
        compute_test_value, for the nodes rewrites create during compilation."""))
    add("print_test_value", BoolParam(False, """Show test values in printed graphs and in
        error messages."""))
    add("exception_verbosity", EnumStr(("low", "high"), """How much of the failing graph an
        error raised at run time shows: 'low' the failing node and its inputs, 'high' the
        whole graph with the node marked."""))
    add("traceback__limit", IntParam(8, """Number of stack frames recorded on every node
        created, to point errors at the user code that built it. -1 records all frames.""",
                                        minimum=-1))
    add("traceback__compile_limit", IntParam(0, """Number of stack frames recorded for
        nodes created during compilation; 0 records none.""", minimum=-1))
    add("warn__ignore_bug_before", EnumStr(("None", "all", "0.1"), """Do not warn about
        behaviour that changed because of bugs fixed in tensorgraph up to this version:
        'None' warns about all of them, 'all' about none."""))
    add("nocleanup", BoolParam(False, """Keep temporary C sources and build files, also of
        compilations that succeeded."""))

    # -- C compilation -------------------------------------------------------------
    add("cxx", StrParam(_default_cxx, """C compiler used for generated
        code. The default is the first of gcc, cc and clang found on PATH at import; empty
        means no compiler, and C-based linkers fall back to Python code with a warning.""",
                        in_c_key=True))
    add("gcc__cxxflags", StrParam("", """Extra flags passed to the C compiler.""",
                                  in_c_key=True))
    add("blas__ldflags", StrParam("", """Linker flags for BLAS (e.g. '-lopenblas'; the
        library must export the CBLAS interface, cblas_sgemv ...). Empty means automatic: link
        the OpenBLAS shipped in the scipy-openblas32 wheel that tensorgraph depends on
        (tensorgraph's own C kernels if it is missing). 'none' means no BLAS library:
        tensorgraph's own C gemv/gemm kernels.""", in_c_key=True))
    # -- the thread pool parallel loops run on (link/c/pool.h) ----------------------
    add("pool__threads", IntParam(_default_pool_threads, """Threads a parallel loop
        of generated C is split across (large elementwise loops, reductions and matrix
        products, under openmp): blocks run on tensorgraph's thread pool, the calling thread
        included. Default: OMP_NUM_THREADS when it is a positive number (the first of a list
        such as '4,2'), else the CPUs this process may keep busy, its affinity mask capped by a
        cgroup CPU quota (a container limited to 2 CPUs on a 64-core host gets 2, not 64).
        Taken when a function is linked.""", minimum=1))
    add("pool__spin_seconds", FloatParam(100e-6, """How long an idle worker of the thread pool
        watches for the next job (yielding its CPU every few microseconds) before it sleeps
        on a futex. The parallel loops of one training step follow each other within
        microseconds, so workers find the next loop awake; OpenMP's own workers spin for
        milliseconds, which on 2 busy cores took the seed step's median from 13 us to 29 us
        (worst batch 325 times the median), while this pool (100 us) ran it in 35-51 us
        beside 2 CPU-bound processes (numpy 50-74 us), worst batch 1.08 times the median
        (measured 2026-11-25 at 7fa313e).
        Taken when a function is linked; raise it on a machine with idle cores and long
        gaps between loops.""", minimum=0.0))
    add("pool__late_seconds", FloatParam(1e-3, """A worker woken this long ago (seconds) that
        has not run yet counts as absent from the job (as does one that was awake but got no
        CPU): the scheduler gives it none, as on a machine with more busy threads than
        cores. Chosen with pool__absent_jobs and the pauses on 2 cores beside 2 CPU-bound
        processes (benchmarks/run.py --load 2: the seed step at most numpy's time, spread
        1.08x against numpy's 1.04x).""", minimum=0.0))
    add("pool__absent_jobs", IntParam(8, """After this many jobs in a row that the calling
        thread ran alone because the workers were absent (pool__late_seconds), it stops
        waking them for pool__pause_jobs jobs, doubling the pause each time up to
        pool__max_pause_jobs: a busy machine gets one thread's speed without the cost of
        wake-ups nobody answers, and the pool tries again later.""", minimum=1))
    add("pool__pause_jobs", IntParam(16, """The first pause (jobs run by the calling thread
        alone without waking the workers) after pool__absent_jobs absent jobs; any job a
        worker helps with resets it.""", minimum=0))
    add("pool__max_pause_jobs", IntParam(256, """The longest pause (see pool__pause_jobs):
        the pause doubles after each run of absent jobs up to this.""", minimum=0))
    add("pool__move_cpus", BoolParam(True, """A new worker starts away from its creator's
        CPU, and a worker woken on the CPU of the thread that published the job moves to
        another CPU of the process's mask: left to the scheduler, on machines whose CPUs
        share no cache it stayed on the caller's CPU, able to run only when the caller
        stopped (the seed step at one thread's speed, 21.8 us instead of 11.3 us, in one
        benchmark run of three; 2026-11-25 at 7fa313e).
        Turn it off where the scheduler already spreads threads
        well, or where moving threads between CPUs is not allowed."""))
    add("malloc__trim_threshold", IntParam(64 << 20, """Bytes of freed memory the process
        keeps instead of returning them to the system (glibc's M_TRIM_THRESHOLD; with it,
        M_MMAP_THRESHOLD is fixed at 32 MiB, glibc's largest dynamic value), set through
        mallopt when the C glue library first loads; 0 leaves malloc's settings alone (and
        on systems without glibc nothing is set). Arrays of a few MB allocated and freed at
        every call (a loop's buffers, copies between kernels) otherwise go back to the system
        and fault in again, page by page: about 3400 page faults per training step of a scan
        RNN, 15% of its CPU time (29.4 against 24.8 ms, one thread;
        2026-11-25 at 9687835).""", minimum=0))
    add("openmp", BoolParam(_default_openmp, """Let large elementwise loops, reductions and
        matrix products run in parallel on the CPU, split across pool__threads threads.
        Default: on when the process may use more than one CPU and pool__threads (from
        OMP_NUM_THREADS) is not 1. (The name is PyTensor's; generated code does not use an
        OpenMP runtime.)""", in_c_key=True))
    add("openmp_elemwise_minsize", IntParam(200000, """Elementwise loops over fewer elements
        than this stay single-threaded even when openmp is on; in a loop calling math
        functions (exp, tanh, ...) each call counts as 8 elements, so it splits sooner.""",
                                            minimum=0,
                                            in_c_key=True))
    add("lib__amdlibm", BoolParam(False, """Use AMD's libm for elementwise math functions in
        C code.""", in_c_key=True))
    add("cmodule__warn_no_version", BoolParam(False, """Warn when an Op's C code has no
        version, which keeps it out of the on-disk cache."""))
    add("cmodule__remove_gxx_opt", BoolParam(False, """Compile without -O3 (faster builds
        of slower code; helps when the compiler misbehaves).""", in_c_key=True))
    add("cmodule__compilation_warning", BoolParam(False, """Print the compiler's warnings."""))
    add("cmodule__preload_cache", BoolParam(False, """Load the index of every cached module
        at the first compilation instead of on demand.""", mutable=False))
    add("cmodule__age_thresh_use", IntParam(60 * 60 * 24 * 24, """Cached modules unused for
        this many seconds (default 24 days) are removed by cache cleanup.""", minimum=0,
                                            mutable=False))
    add("cmodule__debug", BoolParam(False, """Compile C code with debug information and
        without optimisation, for gdb."""
                                    , in_c_key=True))
    add("compile__wait", IntParam(5, """Seconds between attempts to take the compile-cache
        lock held by another process.""", minimum=1, mutable=False))
    add("compile__timeout", IntParam(120, """Seconds after which a compile-cache lock whose
        holder shows no activity is considered stale and taken over.""", minimum=1,
                                     mutable=False))
    add("compile__lock_warning", IntParam(30, """Seconds a process waits for another
        process's compile-cache lock before a CacheLockWarning says so. A shorter wait (another
        worker compiling the same module, the normal case) is one INFO line in the
        'tensorgraph' logger.""", minimum=1))
    add("cache_rewritten_graphs", BoolParam(True, """Keep rewritten graphs, by the graph's
        content (ops, types, constants, names, source lines), the mode, the flags and
        tensorgraph's code, in this process and under compiledir/graphs, so compiling the same
        graph again skips rewriting. The compile report (%%tg_compile), the debug modes and
        graphs with test values always rewrite."""))
    add("compile__tiers", BoolParam(True, """Run a new function's first calls on what is ready
        at once (node functions already in the module cache; for the rest, graph-independent C
        giving the same bits, compiled now if the machine never did, or perform where it is
        exact) while the optimized C compiles in the background, and switch to it between two
        calls (f.wait_optimized() waits for it). False: function() waits for the optimized C, as
        before. Applies to the linkers cvm and cvm_nogc (FAST_RUN); profiled functions, debug
        modes and other linkers always wait."""))

    # -- the compile directory -----------------------------------------------------
    add("base_compiledir", PathParam("~/.tensorgraph", """Parent directory of compiledir
        (compiled C modules and their locks).""", mutable=False))
    add("compiledir_format", StrParam(
        "compiledir_%(short_platform)s-%(processor)s-%(python_version)s-%(python_bitwidth)s",
        "Name of compiledir inside base_compiledir, as a %-format over: "
        + ", ".join(COMPILEDIR_FORMAT_KEYS) + ". Separate machines sharing a home directory "
        "get separate caches.", check=_check_compiledir_format, mutable=False))
    add("compiledir", PathParam(
        _default_compiledir,
        """Directory holding compiled C modules; by default base_compiledir joined with the
        formatted compiledir_format.""", mutable=False))


def _build(environ=None) -> Config:
    cfg = Config(environ)
    _declare(cfg)
    cfg.finalize()
    return cfg


config = _build()
