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
