"""The same bits on every call, whatever tier runs it (docs/architecture.md, "Compile tiers").

The quick tier must not compute with other math functions or another summation order than the
optimized C: a function's result would change when it switches. Each test runs a function on
the optimized tier and on a quick VM in which *no* node function is ready (the case of a cold
module cache: every node takes the quick tier's own path), and compares the results bit for
bit (their bytes, so nan payloads and signed zeros count too).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import uuid

import numpy as np
import pytest

import sweep_cases as sweep
import tensorgraph as tg
import tensorgraph.scalar as ts
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.link import tiers
from tensorgraph.link.c.cmodule import library_of
from tensorgraph.link.c.codegen import pool_stats
from tensorgraph.link.c.codegen_version import codegen_version
from tensorgraph.link.c.compiler import CompileError
from tensorgraph.link.c.linkers import CLinker
from tensorgraph.link.c.quick import QuickCode, quick_flags
from tensorgraph.scalar.basic import ScalarOp
from tensorgraph.tensor import special
from tensorgraph.tensor.elemwise import Elemwise

FLOATS = ("float32", "float64")


def _bits(value):
    return np.ascontiguousarray(value).view(np.uint8)


def _assert_same_bits(names, quick, optimized):
    differ = []
    for name, a, b in zip(names, quick, optimized):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(_bits(a), _bits(b)):
            differ.append(name)
    assert not differ, f"the quick and optimized tiers differ on {differ}"


def _quick_run(f, data):
    """Run ``f``'s graph on a quick VM in which no node function is ready (a cold cache)."""
    vm = CLinker("cvm", None, whole_graph=True)._make_c_vm(f.maker.fgraph, None, None, ready={})
    assert vm.tier == "quick"
    for cell, value in zip(vm.input_storage, data):
        cell[0] = value
    vm()
    return [cell[0] for cell in vm.output_storage]


def _both_tiers(inputs, outputs: dict, data):
    f = tg.function(inputs, list(outputs.values()))
    assert f.tier == "optimized"
    optimized = f(*data)
    quick = _quick_run(f, data)
    _assert_same_bits(list(outputs), quick, optimized)
    return f, quick


def _data(dtype, shape=(5, 13), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, size=shape).astype(dtype)
    x.flat[:6] = [1.0, -1.0, 0.0, -0.0, 0.5, 3.0]
    return x


def _scalar_ops():
    """Every scalar op instance tensorgraph.scalar offers (the registry, not a hand list)."""
    ops = {}
    for name in dir(ts):
        op = getattr(ts, name)
        if isinstance(op, ScalarOp) and not name.startswith("_"):
            ops.setdefault(op, name)
    return sorted(ops.items(), key=lambda item: item[1])


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_scalar_op_gives_the_same_bits_on_both_tiers(dtype):
    x, y, z = (tt.matrix(n, dtype=dtype) for n in "xyz")
    outputs = {}
    for op, name in _scalar_ops():
        nin = 2 if op.nin == -1 else op.nin
        try:
            outputs[name] = Elemwise(op)(*(x, y, z)[:nin])
        except (TypeError, NotImplementedError, ValueError):
            continue  # an op that takes no floats (bitwise ops)
    assert {"exp", "sigmoid", "softplus", "erf", "tanh", "log1p"} <= set(outputs)
    _both_tiers([x, y, z], outputs, [_data(dtype), _data(dtype, seed=1),
                                     abs(_data(dtype, seed=2)) / 4])


@pytest.mark.parametrize("dtype", FLOATS)
def test_reductions_and_softmax_give_the_same_bits_on_both_tiers(dtype):
    x = tt.tensor3("x", dtype=dtype)
    sources = {"contiguous": x, "strided": x[:, ::2, ::-1], "transposed": x.dimshuffle(2, 0, 1)}
    outputs = {}
    for (src, v), (name, fn), axis in (
            (s, r, a) for s in sources.items() for r in
            {"sum": tt.sum, "prod": tt.prod, "max": tt.max, "mean": tt.mean}.items()
            for a in (None, 0, 1, 2, (0, 2), (1, 2))):
        outputs[f"{name}[{axis}] {src}"] = fn(v, axis=axis)
    for (src, v), axis in ((s, a) for s in sources.items() for a in (0, 1, 2)):
        outputs[f"softmax[{axis}] {src}"] = special.softmax(v, axis=axis)
        outputs[f"log_softmax[{axis}] {src}"] = special.log_softmax(v, axis=axis)
    _both_tiers([x], outputs, [_data(dtype, (3, 6, 70)) / 2])


@pytest.mark.parametrize("dtype", [pytest.param(d, marks=pytest.mark.slow) if d == "float32"
                                   else d for d in FLOATS])
def test_the_debugmode_sweep_gives_the_same_bits_on_both_tiers(dtype):
    """Every expression of the DebugMode sweep (elementwise, fused chains, reductions along
    each axis, the softmax family, indexing, products, discrete ops), 2-d and 3-d."""
    with config.change_flags(floatX=dtype):
        for ndim, shape in ((2, (7, 5)), (3, (3, 4, 2))):
            x = tt.tensor("x", dtype=dtype, shape=(None,) * ndim)
            outputs = {name: make(x) for name, make in sorted(sweep._expressions(ndim).items())}
            _both_tiers([x], outputs, [_data(dtype, shape)])


def test_a_fused_float64_chain_is_fused_and_gives_the_same_bits():
    x, y = tt.vector("x"), tt.vector("y")
    chain = tt.exp(-x * x) * tt.tanh(y) + tt.sigmoid(2 * x) / (1 + tt.softplus(y)) - tt.log1p(
        x * x) * tt.erf(y) + tt.prod(x) * tt.sum(tt.sin(y))
    f, _ = _both_tiers([x, y], {"chain": chain},
                       [_data("float64", (300,)), _data("float64", (300,), seed=3)])
    assert any(isinstance(n.op, Elemwise) and len(n.op.scalar_op.nodes) > 5
               for n in f.maker.fgraph.apply_nodes if hasattr(n.op, "scalar_op")
               and hasattr(n.op.scalar_op, "nodes"))


@contextlib.contextmanager
def _quick_tier_held():
    """New functions stay on the quick tier: the background thread is kept busy meanwhile."""
    go = threading.Event()
    tiers._background().submit(go.wait, 60)
    try:
        with config.change_flags(compile__tiers=True):
            yield
    finally:
        go.set()


def _fresh_chain(x, step, n=5):
    """``n`` float functions of ``x`` in a random order, ``step`` after each: a graph whose
    node functions no earlier run cached."""
    y = x
    for fn in random.Random(uuid.uuid4().int).sample(
            [tt.exp, tt.tanh, tt.sin, tt.sigmoid, tt.softplus, tt.arctan, tt.erf], n):
        y = step(fn(y))
    return y


@pytest.mark.parametrize("linker", ["cvm", "cvm_nogc"])  # the linkers with tiers
def test_the_first_call_on_the_quick_tier_gives_the_optimized_bits(linker):
    """End to end: a function whose C is not cached runs its first call on the quick tier;
    after the switch the same inputs give the same bits."""
    with _quick_tier_held():
        x = tt.matrix("x", dtype="float32")
        y = _fresh_chain(x, lambda v: v * 1.5, n=6)
        outputs = [y, special.log_softmax(y, axis=1), tt.prod(y, axis=0), tt.sum(tt.exp(y))]
        f = tg.function([x], outputs, mode=tg.Mode(linker=linker, optimizer="fast_run"))
        assert f.tier == "quick"
        data = _data("float32", (6, 40))
        first = f(data)
        assert f.tier == "quick"
    f.wait_optimized()
    assert f.tier == "optimized"
    _assert_same_bits(["chain", "log_softmax", "prod", "sum exp"], first, f(data))


@pytest.mark.parametrize("threads", [1, 3])
def test_the_optimized_bits_do_not_depend_on_the_thread_count(threads):
    """Loops split across the pool's threads (openmp, small minsize): same bits as one
    thread."""
    x = tt.matrix("x")
    outputs = {"exp": tt.exp(x), "sum": tt.sum(x), "sum0": tt.sum(x, axis=0),
               "prod1": tt.prod(x / 4, axis=1), "softmax": special.softmax(x, axis=1),
               "log_softmax0": special.log_softmax(x, axis=0)}
    data = [_data("float64", (40, 300))]
    with config.change_flags(openmp=True, openmp_elemwise_minsize=64, pool__threads=threads):
        f = tg.function([x], list(outputs.values()))
        jobs = pool_stats()["jobs"]
        split = f(*data)
        assert (pool_stats()["jobs"] > jobs) == (threads > 1)  # the loops were split
    with config.change_flags(openmp=False):
        g = tg.function([x], list(outputs.values()))
        single = g(*data)
    _assert_same_bits(list(outputs), split, single)


def test_threads_calling_the_quick_tier_at_once_get_the_same_bits():
    """Calls running side by side in spare quick VMs (each its own workspace of the quick
    node functions) give the bits of a lone call."""
    with _quick_tier_held():
        x = tt.vector("x")
        y = _fresh_chain(x, lambda v: v + 0.25)
        f = tg.function([x], [y, tt.sum(y), special.softmax(y)])
        assert f.tier == "quick"
        data = [_data("float64", (5000,), seed=k) for k in range(8)]
        alone = [f(d) for d in data]
        results = [None] * len(data)

        def work(k):
            for _ in range(5):
                results[k] = f(data[k])

        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(data))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert f.tier == "quick"
    for a, b in zip(alone, results):
        _assert_same_bits(["chain", "sum", "softmax"], a, b)


def test_the_quick_tier_broadcasts_and_fails_as_perform_does():
    """Broadcast rows, empty arrays, a 0-d function; a shape mismatch is perform's error."""
    x, r = tt.matrix("x"), tt.row("r")
    outputs = {"row": tt.exp(x * r) + tt.tanh(r), "scalar": tt.exp(tt.sum(x)) * 2}
    _both_tiers([x, r], outputs, [_data("float64", (4, 3)), _data("float64", (1, 3))])
    _both_tiers([x, r], outputs, [np.zeros((0, 3)), _data("float64", (1, 3))])
    f = tg.function([x, r], list(outputs.values()))
    with pytest.raises(ValueError, match="cannot be broadcast together") as optimized:
        f(_data("float64", (4, 3)), _data("float64", (1, 2)))
    with pytest.raises(ValueError, match="cannot be broadcast together") as quick:
        _quick_run(f, [_data("float64", (4, 3)), _data("float64", (1, 2))])
    assert "Input dimension mismatch" in str(optimized.value) and \
        "Input dimension mismatch" in str(quick.value)


def _command_of(symbol, version):
    """The command that built the cached library exporting ``symbol`` for ``version``."""
    found = library_of(symbol, runtime_version=version)
    assert found is not None, (symbol, version)
    with open(os.path.join(found[1], "manifest.json"), encoding="utf-8") as f:
        return json.load(f)["command"]


def test_the_quick_tier_compiles_at_o1_apart_from_the_optimized_code():
    """The quick tier's node functions are built at -O1 (a third less of gcc's time on the
    first call) and recorded apart: the optimized build compiles the same node functions at
    its own -O3 instead of taking the quick ones."""
    with _quick_tier_held():
        x = tt.vector("x")
        y = _fresh_chain(x, lambda v: v * 0.75)
        f = tg.function([x], [y, tt.sum(y)])
        assert f.tier == "quick"
        first = f(_data("float64", (50,)))
    f.wait_optimized()
    _assert_same_bits(["chain", "sum"], first, f(_data("float64", (50,))))
    version = codegen_version()
    assert quick_flags() == ("-O1",)
    for fn in f.vm.cgraph.functions:
        optimized = _command_of(fn.symbol, version)
        assert "-O3" in optimized and "-O1" not in optimized, fn.node
    pieces = QuickCode(f.maker.fgraph.toposort())._graphs["pieces"]
    for fn in pieces.functions:
        quick = _command_of(fn.symbol, f"{version} -O1")
        assert quick[quick.index("-O3") + 1:].count("-O1") == 1, fn.node  # -O1 comes last


def test_the_pieces_have_no_strided_loops():
    """The quick tier passes its pieces contiguous operands only, so their C has only the
    flat loop (less to compile on the first call); a strided operand is an error."""
    x = tt.vector("x")
    f = tg.function([x], tt.exp(x) * 2.5)
    code = QuickCode(f.maker.fgraph.toposort())
    pieces = code._graphs["pieces"]
    assert pieces.functions and all("rows" not in fn.text for fn in pieces.functions)
    (k,) = [k for k, fn in enumerate(pieces.functions) if "exp" in str(fn.node.op)]
    call = code.new_call()["pieces"]
    data = np.linspace(-2, 2, 10)
    np.testing.assert_allclose(call(k, data)[0], np.exp(data), rtol=1e-15)  # libmvec, not numpy
    with pytest.raises(ValueError, match="an operand is not contiguous"):
        call(k, data[::2])


def test_the_first_result_does_not_need_the_glue_library():
    """The quick thunks call their node functions without the glue library (link/c/direct.py),
    so its compile is off the first result's path: here it cannot compile at all (a macro
    breaks Python.h, which only the glue includes), and the first call still runs in C."""
    with _quick_tier_held(), config.change_flags(gcc__cxxflags="-DPyObject=int"):
        x = tt.vector("x")
        f = tg.function([x], tt.exp(x) * 2.5)
        assert f.tier == "quick"
        assert "quick" in {t.kind for t in f.vm.thunks}
        data = np.linspace(-2, 2, 7)
        np.testing.assert_allclose(f(data), np.exp(data) * 2.5, rtol=1e-15)
    with pytest.raises(CompileError, match="glue"):  # the background's build needs it
        f.wait_optimized()


@pytest.mark.parametrize("dtype", FLOATS)
def test_simd_reductions_give_the_same_bits_at_o1_for_every_tail_length(dtype):
    """``#pragma omp simd reduction`` lets the compiler reassociate a sum (the Gemv pair, the
    softmax family, dot): the quick tier's -O1 build must vectorize those loops as the -O3
    build does, whatever the length left for a loop's tail."""
    a, v, y = tt.matrix("a", dtype=dtype), tt.vector("v", dtype=dtype), tt.vector("y", dtype=dtype)
    p = tt.sigmoid(tt.dot(a, v))
    gv = tg.grad((-y * tt.log(p) - (1 - y) * tt.log(1 - p)).mean(), v)  # the Gemv pair
    outputs = {"softmax": special.softmax(a, axis=1), "log_softmax0": special.log_softmax(a, axis=0),
               "gemv": tt.dot(a, v), "gemv pair": gv, "dot": tt.dot(v, v), "sum1": tt.sum(a, axis=1)}
    f = tg.function([a, v, y], list(outputs.values()))
    rng = np.random.default_rng(2)
    for n in [*range(1, 34), 63, 64, 65, 257]:
        data = [rng.standard_normal((3, n)).astype(dtype), rng.standard_normal(n).astype(dtype),
                (rng.random(3) > 0.5).astype(dtype)]
        _assert_same_bits(list(outputs), _quick_run(f, data), f(*data))
