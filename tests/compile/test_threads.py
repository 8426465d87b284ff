"""A Function called from many threads at once, and from inside its own calls.

Dask's threaded scheduler and Jupyter callbacks call one compiled function from several
threads: every linker and mode must give each call its own storage (docs/architecture.md,
"Threads"). The switch interval is made tiny so Python hands the GIL over between almost any
two bytecodes, in the middle of argument conversion, of a node's ``perform``, of a hook.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.graph import Apply, Op
from tensorgraph.link.c import cachedir

LINKERS = ["cvm", "cvm_nogc", "c", "c|py", "c|py_nogc", "py", "vm", "vm_nogc"]
MODES = ["FAST_RUN", "FAST_COMPILE", "MonitorMode", "NanGuardMode", "DebugMode", "JAX", "NUMBA",
         "PYTORCH"]


@pytest.fixture
def busy_switching():
    """Threads switch as often as Python allows (every bytecode boundary it checks)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _graph(mode):
    x, z = tt.vector("x"), tt.vector("z")
    w = tensorgraph.shared(np.linspace(0, 1, 5000), name="w")
    y = tt.exp(x) * 2 + tt.sum(z) * w[:x.shape[0]]
    return tensorgraph.function([x, z], [y, tt.max(z)], mode=mode)


def _expected(x, z):
    w = np.linspace(0, 1, 5000)
    return np.exp(x) * 2 + z.sum() * w[:len(x)], z.max()


def _hammer(f, threads=8, calls=60, sizes=(7, 5000)):
    """Call ``f`` from ``threads`` threads with lists, float32 and float64 arrays of several
    sizes (small calls keep the GIL, big ones release it); the wrong answers and errors."""
    problems = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for i in range(calls):
            n = sizes[i % len(sizes)]
            x = rng.standard_normal(n)
            z = rng.standard_normal(n)
            zarg = [list(z), z.astype(np.float32), z][i % 3]
            try:
                y, zmax = f(x, zarg)
            except Exception as exc:  # noqa: BLE001 - every failure is a finding
                problems.append(repr(exc)[:300])
                continue
            ey, ezmax = _expected(x, np.asarray(zarg, dtype=np.float64))
            if not (np.allclose(y, ey) and np.isclose(zmax, ezmax)):
                problems.append(f"wrong values in call {i} of thread {seed}")

    workers = [threading.Thread(target=work, args=(s,)) for s in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return problems


@pytest.mark.parametrize("linker", LINKERS)
def test_eight_threads_share_one_function_in_every_linker(linker, busy_switching):
    f = _graph(tensorgraph.Mode(linker=linker, optimizer="fast_run"))
    assert _hammer(f) == []


@pytest.mark.parametrize("mode", MODES)
def test_eight_threads_share_one_function_in_every_mode(mode, busy_switching):
    f = _graph(mode)
    calls = 4 if mode == "DebugMode" else 30
    assert _hammer(f, threads=4 if mode == "DebugMode" else 8, calls=calls) == []


def test_threads_and_updates_each_call_commits_its_own_update(busy_switching):
    """Updates of concurrent calls: each call's update is computed from the value the call
    read; no call sees a half-written state. With an update that adds 1, every committed
    value is an integer between 1 and the number of calls."""
    counter = tensorgraph.shared(np.zeros(4096), name="counter")
    f = tensorgraph.function([], counter.sum(), updates=[(counter, counter + 1)])
    seen = []

    def work():
        for _ in range(50):
            seen.append(float(f()) / 4096)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    final = counter.get_value()
    assert np.all(final == final[0]) and 1 <= final[0] <= 200
    assert all(v == int(v) for v in seen)


class _CallsItself:
    """An argument whose ``__array__`` calls the function it is passed to."""

    def __init__(self, f, value):
        self.f, self.value = f, value
        self.inner = None

    def __array__(self, dtype=None, copy=None):
        self.inner = self.f(self.value + 1, np.ones(3))
        return np.asarray(self.value, dtype=dtype)


@pytest.mark.parametrize("linker", LINKERS)
def test_an_argument_converted_by_calling_the_same_function(linker):
    x, z = tt.vector("x"), tt.vector("z")
    f = tensorgraph.function([x, z], [x * 2, tt.sum(z)],
                             mode=tensorgraph.Mode(linker=linker, optimizer="fast_run"))
    arg = _CallsItself(f, np.arange(3.0))
    y, s = f(np.arange(3.0), arg)
    assert np.array_equal(y, [0, 2, 4]) and s == 3
    inner_y, inner_s = arg.inner
    assert np.array_equal(inner_y, [2, 4, 6]) and inner_s == 3


class _PerformCalls(Op):
    """An op whose ``perform`` calls a function: the one it belongs to, once, on the way."""

    __props__ = ()

    def __init__(self):
        self.function = None
        self.inner = []

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if self.function is not None and not self.inner:
            self.inner.append(None)  # only the outer call calls again
            self.inner[0] = self.function(x + 10)
        output_storage[0][0] = x * 3


@pytest.mark.parametrize("linker", LINKERS)
def test_an_op_calling_its_own_function_gets_every_output(linker):
    op = _PerformCalls()
    x = tt.vector("x")
    f = tensorgraph.function([x], [op(x), tt.exp(x)],
                             mode=tensorgraph.Mode(linker=linker, optimizer="fast_run"))
    op.function = f
    a, b = f(np.zeros(2))
    assert np.array_equal(a, [0, 0]) and np.array_equal(b, [1, 1])
    (inner_a, inner_b), = op.inner
    assert np.array_equal(inner_a, [30, 30]) and np.allclose(inner_b, np.exp(10))


def test_a_profiled_function_refuses_reentry_clearly_and_serializes_threads(busy_switching):
    op = _PerformCalls()
    x = tt.vector("x")
    f = tensorgraph.function([x], op(x) + 1, profile=True, mode="FAST_COMPILE")
    op.function = f
    with pytest.raises(RuntimeError, match="profiled and was called again from inside"):
        f(np.zeros(2))
    op.function = None
    f.profile.records[0].calls = 0
    results = []

    def work():
        for k in range(20):
            results.append(bool(np.array_equal(f(np.full(3, float(k))), np.full(3, 3.0 * k + 1))))

    workers = [threading.Thread(target=work) for _ in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert results == [True] * 80


def test_spare_vms_are_kept_for_later_calls():
    """A call that finds the VM busy links a spare once; later busy calls reuse it."""
    x = tt.vector("x")
    f = tensorgraph.function([x], x * 2, mode=tensorgraph.Mode(linker="py"))
    arg = _CallsItself(None, np.arange(2.0))

    class Again:
        def __array__(self, dtype=None, copy=None):
            return np.asarray(f(np.ones(2)), dtype=dtype)

    for _ in range(3):
        assert np.array_equal(f(Again()), [4, 4])
    assert len(f._spare_vms) == 1
    del arg


def test_a_directory_made_by_another_thread_meanwhile_is_fine(tmp_path, monkeypatch):
    """The compile directory is created while another thread creates it too (a spurious
    CompiledirError 3 times in 10 with 8 threads compiling into a new base_compiledir)."""
    target = tmp_path / "a" / "b"
    real_isdir = os.path.isdir
    raced = []

    def isdir(path):
        if os.fspath(path) == str(target) and not raced:
            raced.append(1)  # the first look finds nothing; then "another thread" makes it
            os.makedirs(target)
            return False
        return real_isdir(path)

    monkeypatch.setattr(cachedir.os.path, "isdir", isdir)
    cachedir._makedirs_private(str(target))
    assert real_isdir(target)


def test_eight_threads_compile_into_a_new_cache_directory(run_python, tmp_path):
    code = """
import threading
import numpy as np
import tensorgraph, tensorgraph.tensor as tt
errors = []
def work(k):
    try:
        x = tt.vector("x")
        f = tensorgraph.function([x], tt.exp(x) * (k + 3))
        assert np.allclose(f(np.ones(3)), np.e * (k + 3))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(errors)
"""
    base = tmp_path / "new" / "cache"
    result = run_python("-c", code, env={"TENSORGRAPH_FLAGS": f"base_compiledir={base},compile__tiers=False"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
