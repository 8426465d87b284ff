"""Compile tiers (config.compile__tiers): a function runs at once on what is ready (C found in
the module cache, numpy perform for the rest) while its optimized C compiles in the
background, and switches to it between two calls."""

from __future__ import annotations

import pickle
import random
import threading
import uuid
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.graph import Apply, Op
from tensorgraph.link import tiers
from tensorgraph.link.c.op import COp

UNARY = [tt.exp, tt.tanh, tt.sin, tt.cos, tt.sigmoid, tt.softplus, tt.expm1, tt.arctan,
         lambda x: tt.log1p(abs(x)), lambda x: tt.sqrt(abs(x) + 1), lambda x: x * x * x,
         tt.erf, lambda x: 1 / (1 + x * x)]


def _fresh_graph(x):
    """An elementwise chain no earlier test compiled (a random order of many unary ops): its
    fused C is certainly not in the module cache."""
    rng = random.Random(uuid.uuid4().int)
    y = x
    for fn in rng.sample(UNARY, 7):
        y = fn(y)
    return y + tt.sum(tt.tanh(x))


@pytest.fixture
def tiers_on():
    with config.change_flags(compile__tiers=True):
        yield


@pytest.fixture
def held_compiles():
    """Background compiles wait until the test lets them go (a job queued first holds the
    one background thread), so a test sees the quick tier for sure."""
    go = threading.Event()
    tiers._background().submit(go.wait, 60)
    yield go
    go.set()


def test_the_first_call_runs_at_once_on_the_quick_tier_then_the_optimized_code(
        tiers_on, held_compiles):
    x = tt.vector("x")
    w = tg.shared(np.linspace(-1, 1, 50), name="w")
    f = tg.function([x], _fresh_graph(x) * w, updates=[(w, w * 0.5)])
    assert f.tier == "quick" and "running on the quick tier" in repr(f)
    assert any(getattr(t, "kind", "py") in ("py", "quick") for t in f.vm.thunks)
    data = np.linspace(-2, 2, 50)
    first = f(data)
    assert f.tier == "quick"
    held_compiles.set()
    f.wait_optimized()
    assert f.tier == "optimized" and f.vm.whole_graph and "quick" not in repr(f)
    record = f.maker.compile_record  # says where it runs now, not where it started
    assert record.tier == "optimized" and "quick" not in record.summary()
    assert {t.kind for t in f.vm.thunks} == {"c"}
    second = f(data)
    np.testing.assert_allclose(second, first * 0.5, rtol=1e-12)  # w was halved by call 1
    np.testing.assert_allclose(w.get_value(), np.linspace(-1, 1, 50) * 0.25)


def test_a_function_whose_c_is_cached_is_optimized_at_once(tiers_on):
    x = tt.vector("x")
    f = tg.function([x], tt.exp(x) * 2)
    f.wait_optimized()
    g = tg.function([x], tt.exp(x) * 2)  # the same node functions: all in the cache
    assert g.tier == "optimized" and g.vm.whole_graph


def test_tiers_off_waits_for_the_optimized_code():
    with config.change_flags(compile__tiers=False):
        x = tt.vector("x")
        f = tg.function([x], _fresh_graph(x))
    assert f.tier == "optimized" and f.vm.whole_graph


def test_both_tiers_agree_on_every_op_of_the_sweep(tiers_on, held_compiles):
    """Each expression of the DebugMode sweep (elementwise, reductions along every axis,
    softmax family, indexing, products...) in one function: the quick tier (perform, as no
    new C is compiled yet) and the optimized tier give the same values within float
    tolerance, with the same dtypes and shapes."""
    import sweep_cases as sweep

    x, s = tt.matrix("x"), tt.vector("s")
    outputs = [make(x) for _name, make in sorted(sweep._expressions(2).items())]
    outputs.append(_fresh_graph(s))  # a node certainly not cached: the quick tier
    f = tg.function([x, s], outputs)
    assert f.tier == "quick"
    data = np.random.default_rng(0).normal(size=(7, 5))
    quick = f(data, np.ones(2))
    held_compiles.set()
    f.wait_optimized()
    optimized = f(data, np.ones(2))
    for a, b in zip(quick, optimized):
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


class _Waits(Op):
    """perform waits for an event: a call kept in flight while the optimized code lands."""

    __props__ = ()

    def __init__(self):
        self.entered, self.release = threading.Event(), threading.Event()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        self.entered.set()
        self.release.wait(60)
        output_storage[0][0] = inputs[0] + 1


def test_the_switch_never_happens_during_a_call(tiers_on, held_compiles):
    op = _Waits()
    x = tt.vector("x")
    f = tg.function([x], op(_fresh_graph(x)))
    assert f.tier == "quick"
    results = {}
    slow = threading.Thread(target=lambda: results.setdefault("slow", f(np.zeros(3))))
    slow.start()
    assert op.entered.wait(30)
    vm_of_the_call = f.vm
    held_compiles.set()
    f._pending.result(60)  # the optimized VM is built while the call is in flight
    f._switch_tier()  # what the next call does first: the VM is busy, so not now
    assert f.vm is vm_of_the_call and f.tier == "quick"
    op.release.set()
    slow.join(30)
    f(np.zeros(3))  # no call in flight: this one switches first
    assert f.tier == "optimized" and f.vm is not vm_of_the_call
    np.testing.assert_allclose(f(np.zeros(3)), results["slow"])


def test_threads_calling_across_the_switch_all_get_right_values(tiers_on, held_compiles):
    x = tt.vector("x")
    y = _fresh_graph(x)
    f = tg.function([x], y)
    want = tg.function([x], y, mode="FAST_COMPILE")
    data = [np.random.default_rng(k).normal(size=40) for k in range(8)]
    expected = [want(d) for d in data]
    errors = []

    def work(k):
        for i in range(40):
            if k == 0 and i == 10:
                held_compiles.set()
            got = f(data[k])
            if not np.allclose(got, expected[k], rtol=1e-9, atol=1e-12):
                errors.append((k, i))

    workers = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    f.wait_optimized()
    assert errors == [] and f.tier == "optimized"


class _BrokenC(COp):
    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def c_code(self, node, name, inputs, outputs, sub):
        return "this is not C;"

    def c_code_cache_version(self):
        return (uuid.uuid4().hex,)


def test_a_background_compile_error_keeps_the_quick_tier_and_says_so(tiers_on):
    x = tt.vector("x")
    f = tg.function([x], _BrokenC()(x) + 1)
    np.testing.assert_allclose(f(np.ones(2)), [3, 3])
    with pytest.raises(Exception, match="C compilation"):
        f.wait_optimized()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(f(np.ones(2)), [3, 3])  # still runs, on perform
    # where it runs, said alike by f.tier, its repr and its compile record (they said
    # 'optimized', or 'optimized code ready')
    assert f.tier == "quick" and f.maker.compile_record.tier == "quick"
    assert "running on the quick tier: its optimized code could not be built (CompileError)" \
        in repr(f)
    assert "its optimized code could not be built (CompileError: C compilation" \
        in f.maker.compile_record.summary()


def test_a_quick_tier_function_pickles_and_the_stepper_uses_the_current_tier(
        tiers_on, held_compiles):
    x = tt.vector("x")
    f = tg.function([x], _fresh_graph(x))
    run = f.stepper(np.ones(4))
    assert run.tier == "quick"
    stepped = run.finish()
    copy = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(copy(np.ones(4)), stepped, rtol=1e-12)
    held_compiles.set()
    f.wait_optimized()
    assert f.stepper(np.ones(4)).tier == "optimized"


# -- fork: multiprocessing's default start method on Linux ------------------------------------

_INHERITED: dict = {}  # functions a fork Pool's workers find (inherited, not pickled)


def _use_in_forked_worker(k):
    """In a fork Pool worker: the inherited function (if any) and a new one run, then get
    their optimized code (every wait bounded: a regression fails instead of hanging)."""
    x = tt.vector("x")
    functions = list(_INHERITED.values()) + [tg.function([x], _fresh_graph(x))]
    data = np.linspace(-1, 1, 5) + k
    done = []
    for f in functions:
        quick = f(data)
        f.wait_optimized(timeout=30)
        again = f(data)
        done.append((f.tier, bool(np.allclose(again, quick, rtol=1e-9, atol=1e-12))))
    return done


def _run_in_fork_pool(pool):
    try:
        return pool.map_async(_use_in_forked_worker, range(2)).get(timeout=150)
    finally:
        pool.terminate()
        pool.join()


def test_fork_pool_workers_build_the_optimized_code_of_their_functions(tiers_on):
    """The workers inherit the parent's background executor without its thread."""
    import multiprocessing

    x = tt.vector("x")
    tg.function([x], _fresh_graph(x)).wait_optimized(timeout=120)  # the thread exists
    results = _run_in_fork_pool(multiprocessing.get_context("fork").Pool(2))
    assert results == [[("optimized", True)]] * 2


def test_a_quick_tier_function_inherited_by_fork_workers_is_optimized_there(
        tiers_on, held_compiles):
    import multiprocessing

    x = tt.vector("x")
    f = tg.function([x], _fresh_graph(x))
    assert f.tier == "quick"  # its build is queued behind held_compiles in the parent
    _INHERITED["f"] = f
    try:
        results = _run_in_fork_pool(multiprocessing.get_context("fork").Pool(2))
    finally:
        _INHERITED.clear()
    assert results == [[("optimized", True), ("optimized", True)]] * 2
    held_compiles.set()
    f.wait_optimized(timeout=120)  # the parent's own build is unaffected
    assert f.tier == "optimized"


FORK_DURING_A_BUILD = """
import multiprocessing, os, threading, time
import numpy as np
import tensorgraph as tg, tensorgraph.tensor as tt
from tensorgraph.link import tiers

def work(k):
    f = INHERITED[0]
    x = tt.dvector("x")
    g = tg.function([x], tt.tanh(x) * (k + 2))
    done = []
    for fn in (f, g):
        quick = fn(np.ones(3))
        fn.wait_optimized(timeout=60)
        done.append((fn.tier, bool(np.allclose(fn(np.ones(3)), quick))))
    return done

go = threading.Event()
tiers._background().submit(go.wait, 60)  # the build waits until the gate is set up
x = tt.dvector("x")
f = tg.function([x], tt.exp(x) * 3 + 1)  # its quick code is compiled now, ungated
open(GATE, "w").close()
go.set()
deadline = time.monotonic() + 60
while not os.path.exists(STARTED):
    assert time.monotonic() < deadline, "the background compile never started"
    time.sleep(0.01)
INHERITED = [f]
pool = multiprocessing.get_context("fork").Pool(2)  # while the parent's builds wait
os.unlink(GATE)
try:
    print("WORKERS", pool.map_async(work, range(2)).get(timeout=60))
finally:
    pool.terminate()
    pool.join()
f.wait_optimized(timeout=60)
print("PARENT", f.tier)
"""


def _gated_compiler(tmp_path):
    """(TENSORGRAPH_FLAGS, started, gate): a compiler that, for builds in a new module cache,
    says it started, then waits while the gate file exists (at most 30 s)."""
    base, started, gate = tmp_path / "cache", tmp_path / "started", tmp_path / "gate"
    cxx = tmp_path / "gated-cc"
    cxx.write_text(f"#!/bin/sh\ncase \"$*\" in *{base}*)\n  touch {started}\n  n=0\n"
                   f"  while [ -e {gate} ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); "
                   f"done;;\nesac\nexec {config.cxx} \"$@\"\n")
    cxx.chmod(0o755)
    flags = f"cxx={cxx},base_compiledir={base},compile__tiers=True"
    return flags, f"STARTED, GATE = {str(started)!r}, {str(gate)!r}\n"


def test_a_fork_during_a_build_leaves_no_lock_held_in_the_workers(run_python, tmp_path):
    """Forked while the parent's background build is inside the compiler, holding its key's
    lock in the module cache and the key's file lock: the workers build the function
    themselves (the file lock is released when the parent's compile ends) and compile new
    functions."""
    flags, names = _gated_compiler(tmp_path)
    proc = run_python("-c", names + FORK_DURING_A_BUILD, env={"TENSORGRAPH_FLAGS": flags})
    assert proc.returncode == 0, proc.stderr
    assert "WORKERS [[('optimized', True), ('optimized', True)]," \
           " [('optimized', True), ('optimized', True)]]" in proc.stdout, proc.stdout
    assert "PARENT optimized" in proc.stdout


GLUE_DURING_A_FORK = """
import os, signal, time
from tensorgraph.link.c.codegen import _Glue
open(GATE, "w").close()
glue = _Glue()  # not in the new cache: its thread compiles it
deadline = time.monotonic() + 60
while not os.path.exists(STARTED):
    assert time.monotonic() < deadline, "the glue compile never started"
    time.sleep(0.01)
pid = os.fork()
if pid == 0:
    signal.alarm(60)  # a child waiting on a lock the parent's thread held dies of it
    os._exit(0 if glue.result() is not None else 3)
os.unlink(GATE)
print("CHILD", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), glue.result() is not None)
"""


def test_a_child_forked_while_the_glue_compiles_gets_the_glue(run_python, tmp_path):
    """The glue library compiles in a thread of its own; a child forked meanwhile has not that
    thread, and its cache's key lock was held by it."""
    flags, names = _gated_compiler(tmp_path)
    proc = run_python("-c", names + GLUE_DURING_A_FORK, env={"TENSORGRAPH_FLAGS": flags})
    assert proc.returncode == 0, proc.stderr
    assert "CHILD 0 True" in proc.stdout, proc.stdout + proc.stderr


def test_waiting_for_the_optimized_code_past_the_timeout_says_what_was_waited_for(
        tiers_on, held_compiles):
    x = tt.vector("x")
    f = tg.function([x], _fresh_graph(x), name="slow")
    with pytest.raises(TimeoutError, match=r"the optimized code of function 'slow' was not "
                                           r"built within 0.05 s; it runs on the quick tier"):
        f.wait_optimized(timeout=0.05)
    assert f.tier == "quick"
    held_compiles.set()
    assert f.wait_optimized(timeout=120).tier == "optimized"
