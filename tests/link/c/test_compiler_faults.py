"""A compiler or a compile directory that cannot serve: one clear message, never a raw OSError.

The rule (docs/c_backend.md): a compiler that cannot build a one-line C library is found once
per process and named in ONE warning with the reason; then FAST_RUN, 'cvm', 'cvm_nogc' and
'c|py' run every node in Python, and linker 'c' raises. A compile directory that cannot be
made, or that another user could write to, is an error naming the flag, the path and the fix.
Each case runs in a fresh process (the verdicts are per process).
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

PROGRAM = """
import warnings, numpy as np
import tensorgraph as tg, tensorgraph.tensor as tt
warnings.simplefilter("always")
x = tt.dvector("x")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    results = []
    for mode in ("FAST_RUN", tg.Mode("c|py", None), tg.Mode("cvm_nogc", None)):
        f = tg.function([x], tt.exp(x) * 2, mode=mode)
        results.append(sorted({getattr(t, "kind", "py") for t in f.vm.thunks}))
        assert np.allclose(f(np.zeros(2)), 2.0)
unusable = [str(w.message) for w in caught if type(w.message).__name__ == "CompilerUnusableWarning"]
print("KINDS", results)
print("WARNINGS", len(unusable))
for text in unusable:
    print("WARNING", text)
try:
    tg.function([x], x + 1, mode=tg.Mode("c", None))
except Exception as exc:
    print("C-LINKER", type(exc).__name__, exc)
"""


@pytest.mark.parametrize("flags, reason", [
    ("cxx=", "config.cxx is empty"),
    ("cxx=/nonexistent/gcc", "/nonexistent/gcc is not an executable file"),
    ("cxx=/tmp", "/tmp is not an executable file"),
    ("cxx=/etc/passwd", "/etc/passwd is not an executable file"),
    ("cxx=/bin/true", "exited with status 0 on a one-line C file but wrote no shared library"),
    ("cxx=/bin/false", "failed on a one-line C file (exit status 1): it printed no diagnostic"),
    ("gcc__cxxflags=-fno-such-flag", "unrecognized command-line option"),
])
def test_an_unusable_compiler_is_reported_once_and_python_runs(run_python, flags, reason):
    proc = run_python("-c", PROGRAM, env={"TENSORGRAPH_FLAGS": flags + ",compile__tiers=False"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "KINDS [['py'], ['py'], ['py']]" in out
    if flags == "cxx=":  # set on purpose while gcc is on PATH: Python, as asked, silently
        assert "WARNINGS 0" in out, out
    else:
        assert "WARNINGS 1" in out, out
        assert reason in out and "config.cxx=" in out
    assert "C-LINKER CompilationUnavailable linker 'c' needs a working C compiler" in out
    assert "Traceback" not in proc.stderr


def test_a_working_compiler_is_not_probed_and_code_errors_still_raise(run_python, tmp_path):
    """A CompileError in generated code with a good compiler is raised, not hidden by Python."""
    code = textwrap.dedent("""
        import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
        from tensorgraph.graph.basic import Apply
        from tensorgraph.link.c import compiler
        from tensorgraph.link.c.op import COp
        class Broken(COp):
            __props__ = ()
            def make_node(self, x):
                return Apply(self, [x], [x.type()])
            def perform(self, node, inputs, out):
                out[0][0] = inputs[0]
            def c_code(self, node, name, inputs, outputs, sub):
                return "this is not C;"
            def c_code_cache_version(self):
                return (1,)
        x = tt.dvector("x")
        f = tg.function([x], tt.exp(x))
        print("PROBED", bool(compiler._problems))
        try:
            tg.function([x], Broken()(x))
        except compiler.CompileError as exc:
            print("COMPILE-ERROR", str(exc).splitlines()[0])
        print("VERDICT", compiler._problems)
    """)
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "PROBED False" in proc.stdout  # the happy path never runs the probe
    assert "COMPILE-ERROR C compilation of module" in proc.stdout
    assert "VERDICT {" in proc.stdout and ": ''}" in proc.stdout  # probed once: compiler fine


@pytest.mark.parametrize("where, expect", [
    ("{afile}/sub", "is a regular file, not a directory"),
    ("{afile}", "is a regular file, not a directory"),
    ("/sys/tensorgraph-test-cache", "cannot create a directory in /sys"),
])
def test_a_compile_directory_that_cannot_be_made_names_flag_and_path(run_python, tmp_path,
                                                                   where, expect):
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    base = where.format(afile=afile)
    code = ("import tensorgraph as tg, tensorgraph.tensor as tt\n"
            "x = tt.dvector('x')\n"
            "try:\n    tg.function([x], tt.exp(x))\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    proc = run_python("-c", code, env={"TENSORGRAPH_FLAGS": f"base_compiledir={base},compile__tiers=False"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"CompiledirError config.base_compiledir={base!r} cannot hold")
    assert expect in proc.stdout and "to a directory you own" in proc.stdout


TRUST_PROGRAM = """
import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
x = tt.dvector("x")
try:
    f = tg.function([x], tt.exp(x) * 3 + 1)
    print("RAN", f(np.zeros(1))[0])
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def _warm_cache(run_python, base):
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={base},compile__tiers=False"}
    proc = run_python("-c", TRUST_PROGRAM, env=env)
    assert "RAN 4.0" in proc.stdout, proc.stdout + proc.stderr
    return env


def _compiledir(base):
    (sub,) = [p for p in base.iterdir() if p.name.startswith("compiledir_")]
    return sub


def test_new_cache_directories_are_private(run_python, tmp_path):
    base = tmp_path / "cache"
    _warm_cache(run_python, base)
    for directory in [base, *[p for p in base.rglob("*") if p.is_dir()]]:
        assert directory.stat().st_mode & 0o077 == 0, directory


@pytest.mark.parametrize("where", ["base", "compiledir", "entry"])
def test_a_cache_others_can_write_is_refused(run_python, tmp_path, where):
    base = tmp_path / "cache"
    env = _warm_cache(run_python, base)
    target = {"base": base, "compiledir": _compiledir(base),
              "entry": next((_compiledir(base) / "modules").iterdir())}[where]
    os.chmod(target, 0o777)
    proc = run_python("-c", TRUST_PROGRAM, env=env)
    assert proc.stdout.startswith(f"UntrustedCacheError tensorgraph refuses to load compiled C "
                                  f"code from {target}: it is writable by its group and others")
    assert f"chmod go-w {target}" in proc.stdout
    os.chmod(target, 0o700)
    assert "RAN 4.0" in run_python("-c", TRUST_PROGRAM, env=env).stdout


def test_a_cache_owned_by_another_user_is_refused(run_python, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    base = tmp_path / "cache"
    env = _warm_cache(run_python, base)
    library = next((_compiledir(base) / "modules").rglob("*.so"))
    os.chown(library, 12345, 12345)
    proc = run_python("-c", TRUST_PROGRAM, env=env)
    assert proc.stdout.startswith("UntrustedCacheError tensorgraph refuses to load compiled C "
                                  f"code from {library}: it belongs to uid 12345")


def test_what_a_killed_compile_leaves_is_removed_by_the_next_process(run_python, tmp_path):
    """Kill a process while gcc compiles (owner file written, tmp build directory made): the next
    process that compiles removes its build directory and its lock + owner files."""
    base = tmp_path / "cache"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TENSORGRAPH")},
           "HOME": str(tmp_path), "TENSORGRAPH_FLAGS": f"base_compiledir={base},compile__tiers=False"}
    slow = textwrap.dedent("""
        import tensorgraph as tg, tensorgraph.tensor as tt
        x = tt.dvector("x")
        y = x
        for k in range(60):   # a big fused loop: gcc runs long enough to be killed midway
            y = tt.tanh(y * (k + 1.5)) + tt.exp(-y) * k
        tg.function([x], [y, y.sum(), y.max()])
    """)
    victim = subprocess.Popen([sys.executable, "-c", slow], env=env, start_new_session=True)
    deadline = time.time() + 60
    owners = []
    while time.time() < deadline and not owners:
        owners = list(base.rglob(".owner")) if base.exists() else []
        time.sleep(0.02)
    assert owners, "the compile never started"
    time.sleep(0.2)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    compiledir = _compiledir(base)
    left = list((compiledir / "tmp").iterdir()) + list((compiledir / "locks").glob("*.owner"))
    assert left, "the killed compile left nothing behind to test with"
    proc = run_python("-c", TRUST_PROGRAM, env={"TENSORGRAPH_FLAGS": f"base_compiledir={base},compile__tiers=False"})
    assert "RAN 4.0" in proc.stdout, proc.stdout + proc.stderr
    assert list((compiledir / "tmp").iterdir()) == []
    assert list((compiledir / "locks").glob("*.owner")) == []
    for path in left:
        assert not path.exists()


def _no_space(path):
    import errno as _errno

    raise OSError(_errno.ENOSPC, "No space left on device", path)


@pytest.mark.parametrize("where", ["lock owner file", "C source", "compiler output"])
def test_a_full_disk_names_the_path_the_flag_and_the_fix(tmp_path, monkeypatch, where):
    """A full disk gave a bare OSError [Errno 28] from the lock's owner file or cffi's writer;
    now a CacheDiskFullError names the path, the flag and what to do, and the cache keeps
    nothing half-written."""
    from tensorgraph.link.c import cachedir, cmodule
    from tensorgraph.link.c.cache import MODULES, TMP

    if where == "lock owner file":
        monkeypatch.setattr(cmodule, "write_owner", lambda path, what: _no_space(path))
    elif where == "C source":
        def write_c(self, c_file):
            _no_space(c_file)
        monkeypatch.setattr(cmodule._Build, "_write_c", write_c)
    else:
        real_run = cmodule._Build._check

        def check(self, result, c_file, source, workdir):
            result.returncode, result.stderr = 1, f"{c_file}: fatal error: No space left on device"
            return real_run(self, result, c_file, source, workdir)
        monkeypatch.setattr(cmodule._Build, "_check", check)
    root = str(tmp_path / "cache")
    cache = cmodule.ModuleCache(root)
    source = f"int tg_answer_{where.replace(' ', '_')}(void) {{ return 42; }}"
    with pytest.raises(cachedir.CacheDiskFullError) as info:
        cache.get(cmodule.MODULE, source, f"int tg_answer_{where.replace(' ', '_')}(void);",
                  name_hint="full", units=(), libraries=(), library_dirs=(), include_dirs=(),
                  extra_compile_args=(), extra_link_args=(), runtime_version="",
                  unversioned=(), origin=None)
    message = str(info.value)
    assert "no space left" in message and "base_compiledir" in message
    assert "cache clear" in message and root in message
    for sub in (TMP, MODULES):  # nothing half-written stays
        directory = os.path.join(root, sub)
        assert not os.path.isdir(directory) or os.listdir(directory) == []


TIERED_PROGRAM = """
import warnings, numpy as np
import tensorgraph as tg, tensorgraph.tensor as tt
x = tt.dvector("x")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    f = tg.function([x], tt.tanh(tt.exp(x) * 2) + 1)
    first = f(np.zeros(2))
    at_first = [(type(w.message).__name__, str(w.message)) for w in caught]
    f.wait_optimized(timeout=60)
    for _ in range(3):
        assert np.allclose(f(np.zeros(2)), first)
    later = [(type(w.message).__name__, str(w.message)) for w in caught[len(at_first):]]
record = f.maker.compile_record
print("FIRST", at_first)
print("LATER", later)
print("TIER", f.tier, record.tier)
print("REPR", repr(f))
print("SUMMARY", record.summary())
"""


@pytest.mark.parametrize("cxx", ["/bin/true", "/bin/false"])
def test_an_unusable_compiler_with_tiers_warns_before_the_first_call_returns(
        run_python, tmp_path, cxx):
    """With compile tiers (the default) the broken compiler was found by the background
    build: no warning at the first call, a RuntimeWarning naming the compiler but not the
    flag at the second, and then f.tier said 'optimized'. It is probed before the first
    compile of the process, as the linkers do without tiers."""
    proc = run_python("-c", TIERED_PROGRAM, env={
        "TENSORGRAPH_FLAGS": f"cxx={cxx},base_compiledir={tmp_path / 'cache'}"})
    assert proc.returncode == 0, proc.stderr
    first, later, tier, shown, summary = proc.stdout.splitlines()
    assert first.count("CompilerUnusableWarning") == 1 and f"config.cxx={cxx!r}" in first
    assert "in Python" in first and "RuntimeWarning" not in first
    assert later == "LATER []"
    assert tier == "TIER python python"
    assert f"running in Python: config.cxx={cxx!r} cannot be used" in shown
    assert f"in Python: config.cxx={cxx!r} cannot be used" in summary
    assert "quick tier" not in shown + summary and "optimized" not in shown + summary
