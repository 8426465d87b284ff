"""Rewritten graphs kept by content (config.cache_rewritten_graphs): compiling the same graph
again, in this process or another, skips rewriting; anything that could change the result of
rewriting changes the key."""

from __future__ import annotations

import os
import random
import textwrap

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile import rewrite_cache
from tensorgraph.compile.debugmode import DebugMode


@pytest.fixture(autouse=True)
def cache_on():
    with config.change_flags(cache_rewritten_graphs=True):
        yield


def _fresh() -> float:
    """A constant no earlier run put in the cache (the disk cache outlives a test run)."""
    return random.SystemRandom().uniform(0.1, 0.9)


def _model(scale, name="w"):
    x = tt.matrix("x")
    w = tg.shared(np.linspace(-1, 1, 3), name=name)
    y = tt.exp(tt.dot(x, w)).sum() * scale + tt.log1p(tt.exp(tt.dot(x, w))).mean()
    return tg.function([x], y, updates=[(w, w * 0.9)])


def _history(f):
    return getattr(f.maker.fgraph, "rewrite_history", None)


def test_the_same_graph_again_is_not_rewritten_and_computes_the_same():
    scale = _fresh()
    first = _model(scale)
    again = _model(scale)
    assert _history(first) is not None and _history(again) is None
    assert len(again.maker.fgraph.apply_nodes) == len(first.maker.fgraph.apply_nodes)
    data = np.arange(6.0).reshape(2, 3) / 10
    np.testing.assert_allclose(again(data), first(data))
    np.testing.assert_allclose(again(data), first(data))  # each updated its own w alike
    assert tg.dprint(again, file="str").count("\n") == tg.dprint(first, file="str").count("\n")


def test_what_may_change_the_rewritten_graph_changes_the_key():
    scale = _fresh()
    assert _history(_model(scale)) is not None
    assert _history(_model(scale + 1e-9)) is not None  # another constant
    assert _history(_model(scale, name="v")) is not None  # another name
    with config.change_flags(floatX="float32"):  # another flag
        assert _history(_model(scale)) is not None
    x = tt.matrix("x")
    w = tg.shared(np.ones(3), name="w")
    made_here = tg.function([x], tt.exp(tt.dot(x, w)).sum() * scale)
    made_on_another_line = tg.function(
        [x], tt.exp(tt.dot(x, w)).sum() * scale)
    assert _history(made_here) is not None and _history(made_on_another_line) is not None


def test_the_compile_report_and_debug_modes_always_rewrite(ipython_shell):
    scale = _fresh()
    _model(scale)
    with rewrite_cache.recording():
        assert _history(_model(scale)) is not None
    x = tt.vector("x")
    plain = tg.function([x], tt.exp(x) * 3)
    debug = tg.function([x], tt.exp(x) * 3, mode=DebugMode())
    assert _history(debug) is not None
    del plain


def test_a_damaged_entry_is_rewritten_and_replaced():
    scale = _fresh()
    f = _model(scale)
    x = f.maker.original_graph
    key = rewrite_cache.graph_key(*x, f.maker.mode)
    path = rewrite_cache._path(key)
    assert os.path.exists(path)
    rewrite_cache._memory.clear()
    with open(path, "wb") as bad:
        bad.write(b"not a pickle")
    assert _history(_model(scale)) is not None  # rewritten again, entry replaced
    rewrite_cache._memory.clear()
    assert _history(_model(scale)) is None


def test_a_new_process_finds_the_rewritten_graph_on_disk(run_python, tmp_path):
    code = textwrap.dedent("""
        import numpy as np
        import tensorgraph as tg, tensorgraph.tensor as tt
        x = tt.matrix("x")
        w = tg.shared(np.ones(3), name="w")
        f = tg.function([x], tt.exp(tt.dot(x, w)).sum() * 0.4321, updates=[(w, w + 1)])
        print(getattr(f.maker.fgraph, "rewrite_history", None) is None, float(f(np.ones((2, 3)))))
    """)
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'cache'},compile__tiers=False"}
    first, second = (run_python("-c", code, env=env) for _ in range(2))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.split()[0] == "False" and second.stdout.split()[0] == "True"
    assert first.stdout.split()[1] == second.stdout.split()[1]
    graphs = tmp_path / "cache"
    assert any(p.suffix == ".pkl" for p in graphs.rglob("graphs/*"))
