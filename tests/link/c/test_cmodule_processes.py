"""Several real processes sharing one compiled-module cache.

Each child process runs ``CHILD`` below: it asks ``get_module`` for the modules named on its
command line and prints, as JSON, the results, which modules it compiled itself, and the
warnings it saw. Environment variables make it slow, hang while holding a lock, or forbid it
to start any program (the proof that a cached module needs no compiler).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tensorgraph import config
from tensorgraph.link.c import cache

pytestmark = pytest.mark.skipif(not config.cxx, reason="needs a C compiler")

CHILD = r"""
import json, os, subprocess, sys, time, warnings
from tensorgraph.link.c import cmodule, compiler

compiled = []
real_run = compiler.run

def run(cmd, *args, **kwargs):
    compiled.append(os.path.basename(cmd[cmd.index("-o") + 1]).rsplit("-", 1)[0])
    if os.environ.get("TG_TEST_HANG"):
        print("compiling", flush=True)
        time.sleep(120)
    time.sleep(float(os.environ.get("TG_TEST_SLOW", "0")))
    return real_run(cmd, *args, **kwargs)

compiler.run = run
if os.environ.get("TG_TEST_NO_PROGRAMS"):
    def forbidden(*args, **kwargs):
        raise AssertionError(f"started a program: {args}")
    subprocess.Popen = forbidden

results = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for offset in map(int, sys.argv[1:]):
        mod = cmodule.get_module(
            f"int add(int a, int b) {{ return a + b + {offset}; }}", "int add(int, int);",
            name_hint=f"proc{offset}")
        results[offset] = mod.lib.add(1, 2)
print(json.dumps({"results": results, "compiled": compiled,
                  "warnings": [str(w.message) for w in caught]}), flush=True)
"""


@pytest.fixture
def child(tmp_path):
    """``child(*offsets, flags='', **env)`` starts a child process (a Popen, stdout piped)."""
    base = tmp_path / "base"

    def start(*offsets, flags="", **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORGRAPH")}
        env["HOME"] = str(tmp_path)
        env["TENSORGRAPH_FLAGS"] = ",".join(f for f in (f"base_compiledir={base}", "compile__tiers=False", flags) if f)
        env.update(extra)
        return subprocess.Popen([sys.executable, "-c", CHILD, *map(str, offsets)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    return start


def report(proc, timeout=90):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def compiledir(tmp_path):
    (found,) = (tmp_path / "base").iterdir()
    return found


def test_a_second_process_imports_the_module_without_starting_any_program(child, tmp_path):
    first = report(child(1, 2))
    assert first["results"] == {"1": 4, "2": 5} and len(first["compiled"]) == 2
    second = report(child(2, 1, TG_TEST_NO_PROGRAMS="1"))
    assert second == {"results": {"2": 5, "1": 4}, "compiled": [], "warnings": []}

    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORGRAPH")}
    env["TENSORGRAPH_FLAGS"] = f"base_compiledir={tmp_path / 'base'},compile__tiers=False"
    listing = subprocess.run([sys.executable, "-m", "tensorgraph", "cache", "list"], env=env,
                             capture_output=True, text=True, check=True).stdout
    assert "2 module(s)" in listing and "_tg_proc1_" in listing


def test_concurrent_processes_compile_each_module_once(child, tmp_path):
    orders = [(20, 21), (21, 20), (20, 21), (21, 20)]
    procs = [child(*order, TG_TEST_SLOW="0.3") for order in orders]
    reports = [report(p) for p in procs]
    for rep in reports:
        assert rep["results"] == {"20": 23, "21": 24}
    compiled = sorted(name for rep in reports for name in rep["compiled"])
    assert len(compiled) == 2 and compiled[0] != compiled[1]
    entries = cache.entries(str(compiledir(tmp_path)))
    assert len(entries) == 2
    for entry in entries:
        so = os.path.join(entry.path, entry.manifest["file"])
        assert cache.sha256_file(so) == entry.manifest["sha256"]
    assert not os.listdir(compiledir(tmp_path) / cache.TMP)


def wait_for_line(proc, text, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        if text in line:
            return
        assert proc.poll() is None, proc.stderr.read()
    pytest.fail(f"the child never printed {text!r}")


def test_the_lock_of_a_killed_process_does_not_block(child, tmp_path):
    holder = child(30, TG_TEST_HANG="1")
    try:
        wait_for_line(holder, "compiling")
        locks = compiledir(tmp_path) / cache.LOCKS
        (owner,) = [f for f in os.listdir(locks) if f.endswith(".owner")]
        assert json.loads((locks / owner).read_text())["pid"] == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert (locks / owner).exists()  # left behind by the killed process
    started = time.time()
    rep = report(child(30, flags="compile__wait=1,compile__timeout=60"))
    assert time.time() - started < 30
    assert rep["results"] == {"30": 33} and len(rep["compiled"]) == 1
    assert rep["warnings"] == []


def test_a_waiter_names_a_silent_holder_once_and_takes_over(child, tmp_path):
    holder = child(40, TG_TEST_HANG="1")
    try:
        wait_for_line(holder, "compiling")
        rep = report(child(40, flags="compile__wait=1,compile__timeout=2"))
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert rep["results"] == {"40": 43} and len(rep["compiled"]) == 1
    (taking,) = rep["warnings"]  # the wait itself was an INFO line (test_compile_lock_waits)
    assert "without the lock" in taking and "no activity" in taking
    assert f"process {holder.pid} on host" in taking
    assert len(cache.entries(str(compiledir(tmp_path)))) == 1


def test_a_waiter_waits_for_a_busy_holder(child, tmp_path):
    slow_cc = tmp_path / "slowcc"
    slow_cc.write_text(f'#!/bin/sh\nif [ "$1" = --version ]; then exec {config.cxx} --version; '
                       f'fi\nsleep 3\nexec {config.cxx} "$@"\n')
    slow_cc.chmod(0o755)
    flags = f"cxx={slow_cc},compile__wait=1,compile__timeout=2"
    holder = child(50, flags=flags)
    deadline = time.time() + 60
    while time.time() < deadline:  # until the holder owns the lock
        locks = tmp_path / "base"
        if any(f.endswith(".owner") for _, _, files in os.walk(locks) for f in files):
            break
        time.sleep(0.05)
    waiter = report(child(50, flags=flags))
    assert report(holder)["compiled"] and waiter["compiled"] == []
    assert waiter["results"] == {"50": 53}
    assert waiter["warnings"] == []  # a normal wait: no warning (test_compile_lock_waits)
