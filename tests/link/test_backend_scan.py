"""Scan in the whole-graph back ends (modes JAX, NUMBA, PYTORCH): the loops of docs/scan.md
against FAST_RUN (an RNN and its gradient, taps on states and sequences, outputs not fed
back, a while loop, a shared variable updated by the step), float32 kept, calls from threads,
a pickle unpickled in another process, and a clear compile-time error for what a back end
cannot run (each says why)."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.link.backend import UnsupportedOpsError
from tensorgraph.scan import until

MODES = [pytest.param(mode, marks=pytest.mark.skipif(
             not tg.link.backend.available(module), reason=f"{module} is not installed"))
         for mode, module in (("JAX", "jax"), ("NUMBA", "numba"), ("PYTORCH", "torch"))]


def _tolerance(dtype):
    return dict(rtol=2e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)


def _agree(mode, inputs, outputs, args, updates=None):
    """Compile in ``mode`` and FAST_RUN; the results (and dtypes) agree; returns mode's."""
    f = tg.function(inputs, outputs, mode=mode, updates=updates)
    ref = tg.function(inputs, outputs, mode="FAST_RUN", updates=updates)
    got, want = f(*args), ref(*args)
    got, want = (got, want) if isinstance(outputs, list) else ([got], [want])
    for a, b in zip(got, want):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, **_tolerance(np.asarray(b).dtype.name))
    return f


def _rnn(dtype):
    with config.change_flags(floatX=dtype):
        x, h0 = tt.matrix("x"), tt.vector("h0")
        rng = np.random.default_rng(0)
        w = tg.shared((rng.standard_normal((3, 3)) * 0.5).astype(dtype), name="w")
        h, _ = tg.scan(lambda x_t, h_prev: tt.tanh(tt.dot(h_prev, w) + x_t),
                       sequences=x, outputs_info=h0, name="rnn")
        cost = (h[-1] ** 2).sum()
    args = (rng.standard_normal((7, 3)).astype(dtype), rng.standard_normal(3).astype(dtype))
    return x, h0, w, h, cost, args


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float64", pytest.param("float32", marks=pytest.mark.slow)])
def test_an_rnn_and_its_gradient_agree_with_fast_run(mode, dtype):
    x, h0, w, h, cost, args = _rnn(dtype)
    _agree(mode, [x, h0], [h], args)
    grads = tg.grad(cost, [w, x, h0])
    f = _agree(mode, [x, h0], [cost] + grads, args)
    assert all(np.asarray(v).dtype == dtype for v in f(*args))


@pytest.mark.parametrize("mode", MODES)
def test_state_taps_sequence_taps_and_outputs_not_fed_back(mode):
    x0 = tt.dmatrix("x0")
    fib, _ = tg.scan(lambda a, b: a + b, outputs_info=dict(initial=x0, taps=[-2, -1]),
                     n_steps=6)
    f = _agree(mode, [x0], fib, (np.array([[1.0, 0.5], [1.0, 2.0]]),))
    np.testing.assert_allclose(f(np.ones((2, 1))).ravel(), [2, 3, 5, 8, 13, 21])
    s = tt.dvector("s")
    outs, _ = tg.scan(lambda a, b, c, acc: (a * c + acc, a + b + c),
                      sequences=dict(input=s, taps=[-1, 0, 2]), outputs_info=[tt.constant(0.0),
                                                                               None])
    _agree(mode, [s], outs, (np.arange(9.0) ** 1.5,))
    _agree(mode, [s], [o[-2:] for o in outs], (np.arange(9.0) ** 1.5,))  # the rows kept


@pytest.mark.parametrize("mode", MODES)
def test_n_steps_from_an_input_and_a_shared_variable_the_step_updates(mode):
    n = tt.iscalar("n")
    v = tt.dvector("v")
    acc = tg.shared(np.zeros(2), name="acc")
    powers, _ = tg.scan(lambda p: p * v, outputs_info=tt.ones_like(v), n_steps=n)
    f = _agree(mode, [n, v], powers, (4, np.array([2.0, 0.5])))
    assert f(2, np.array([3.0, 1.0])).shape == (2, 2)  # another n: another compile
    (states, sums), _ = tg.scan(lambda p: [p * v, p.sum() + tt.zeros((3,))],
                                outputs_info=[v, None], n_steps=n)
    g = _agree(mode, [n, v], [states, sums], (0, np.ones(2)))  # no step: empty, same shapes
    assert [r.shape for r in g(0, np.ones(2))] == [(0, 2), (0, 3)]
    total, updates = tg.scan(lambda x_t: {acc: acc + x_t}, sequences=v[:, None] * tt.ones(2))
    f = tg.function([v], [], updates=updates, mode=mode)
    f(np.array([1.0, 2.0, 3.0]))
    f(np.array([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(acc.get_value(), [9.0, 9.0])


@pytest.mark.parametrize("mode", MODES)
def test_a_while_loop_reading_its_last_step(mode):
    a, v0 = tt.dmatrix("A"), tt.dvector("v0")

    def power_step(v):
        new = tt.dot(a, v)
        new = new / tt.sqrt((new ** 2).sum())
        return new, until(tt.abs(new - v).max() < 1e-9)

    vs, _ = tg.scan(power_step, outputs_info=v0, n_steps=500, name="power")
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    f = _agree(mode, [a, v0], vs[-1], (m, np.ones(2)))
    top = np.linalg.eigh(m)[1][:, -1]
    np.testing.assert_allclose(np.abs(f(m, np.ones(2))), np.abs(top), rtol=1e-7)
    bounded, _ = tg.scan(power_step, outputs_info=v0, n_steps=3)  # stops at the bound
    _agree(mode, [a, v0], bounded[-1], (m, np.ones(2)))
    x0 = tt.dvector("x0")  # taps [-2, -1] and an output not fed back, in a while loop
    (fib, doubled), _ = tg.scan(lambda a, b: ([a + b, 2 * b], until(b > 50)),
                                outputs_info=[dict(initial=x0, taps=[-2, -1]), None],
                                n_steps=100)
    f = _agree(mode, [x0], [fib[-1], doubled[-1]], (np.array([1.0, 1.0]),))
    assert f(np.array([1.0, 1.0]))[0] == 89.0


@pytest.mark.parametrize("mode", MODES)
def test_a_while_loop_whose_every_step_is_read(mode):
    """Numba sizes arrays when running: it runs it. JAX and PyTorch fix sizes when compiling:
    they refuse it, saying why."""
    v0 = tt.dvector("v0")
    halves, _ = tg.scan(lambda v: (v / 2, until(v.sum() < 1e-3)), outputs_info=v0,
                        n_steps=1000, name="halving")
    if mode in ("JAX", "PYTORCH"):
        with pytest.raises(UnsupportedOpsError, match="scan 'halving' is a while loop.*"
                                                      "known only when"):
            tg.function([v0], halves, mode=mode)
        return
    f = _agree(mode, [v0], [halves, halves.shape[0]], (np.ones(2),))
    assert f(np.ones(2))[1] == 12
    short, _ = tg.scan(lambda v: (v / 2, until(v.sum() < 1e-3)), outputs_info=v0, n_steps=5)
    _agree(mode, [v0], short, (np.ones(2),))  # stops at the bound


@pytest.mark.parametrize("mode", MODES)
def test_random_draws_inside_the_step(mode):
    """Each step new numbers, each call new ones, a reseeded stream repeats itself, and the
    gradient sees the very draws of the forward pass. JAX and PyTorch draw with their own
    generators (other numbers than FAST_RUN, the same distribution); Numba with numpy's
    streams (FAST_RUN's numbers)."""
    from tensorgraph.tensor.random.utils import RandomStream

    srng = RandomStream(3)
    x = tt.dvector("x")
    noisy, _ = tg.scan(lambda x_t: x_t + srng.normal(0, 1, size=(4000,)), sequences=x,
                       name="noisy")
    f = tg.function([x], noisy, mode=mode)
    if mode == "NUMBA":
        reference = tg.function([x], noisy, mode="FAST_RUN")
        srng.seed(5)
        want = reference(np.arange(3.0))
        srng.seed(5)
        np.testing.assert_allclose(f(np.arange(3.0)), want, rtol=1e-12)
    first, second = f(np.arange(3.0)), f(np.arange(3.0))
    assert first.shape == (3, 4000) and first.dtype == np.float64
    noise = first - np.arange(3.0)[:, None]
    np.testing.assert_allclose(noise.mean(axis=1), 0, atol=0.1)
    np.testing.assert_allclose(noise.std(axis=1), 1, atol=0.1)
    assert not np.allclose(noise[0], noise[1])  # each step draws anew
    assert not np.allclose(first, second)  # each call too
    srng.seed(7)
    again = f(np.arange(3.0))
    srng.seed(7)
    np.testing.assert_array_equal(f(np.arange(3.0)), again)

    w = tt.dscalar("w")
    hs, eps = tg.scan(lambda h: [h * w + (e := srng.uniform(0, 1)), e],
                      outputs_info=[tt.constant(1.0), None], n_steps=4)[0]
    g = tg.function([w], [hs, eps, tg.grad(hs[-1], w)], mode=mode)
    values, draws, grad = g(0.7)
    h, dh = 1.0, 0.0  # d h_t / d w along the same draws, in numpy
    for e in draws:
        h, dh = h * 0.7 + e, dh * 0.7 + h
    np.testing.assert_allclose(values[-1], h, rtol=1e-12)
    np.testing.assert_allclose(grad, dh, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("as_while", [False, True])
def test_an_index_out_of_range_inside_the_step_is_an_index_error(mode, as_while):
    x, i0 = tt.dvector("x"), tt.lscalar("i0")

    def step(i):
        return ([i + 1, x[i]], until(x[i] > 100)) if as_while else [i + 1, x[i]]

    (_, read), _ = tg.scan(step, outputs_info=[i0, None], n_steps=5)
    f = tg.function([x, i0], read[-1], mode=mode)
    assert f(np.arange(10.0), 0) == 4.0
    with pytest.raises(IndexError):
        f(np.arange(3.0), 0)


def test_pytorch_compiles_the_step_of_a_long_loop_once():
    """PyTorch runs a loop of known length as one operator calling its step, traced and
    compiled once: a loop of 2000 steps (twice the longest it unrolled before) compiles, its
    FX graph calls the loop once and the step's graph holds one step."""
    pytest.importorskip("torch")
    v = tt.dvector("v")
    out, _ = tg.scan(lambda p: p * 0.5 + 1.0, outputs_info=v, n_steps=2000, name="long")
    f = tg.function([v], [out[-1], out[:3]], mode="PYTORCH")
    last, first = f(np.array([1.0, 4.0]))
    np.testing.assert_allclose(last, [2.0, 2.0])
    np.testing.assert_allclose(first, [[1.5, 3.0], [1.75, 2.5], [1.875, 2.25]])
    compiled = f.vm.program._last
    assert compiled.fx_code.count("tensorgraph.scan_loop") == 1
    (loop,) = compiled.loops
    calls = [n.target for n in loop.graph_module.graph.nodes if n.op == "call_function"]
    assert [str(t) for t in calls].count("aten.mul.Tensor") == 1, calls
    assert "the step of scan 'long', compiled once" in f.vm.source()


@pytest.mark.parametrize("mode", MODES)
def test_the_step_is_rewritten_for_the_mode_and_not_compiled_apart(mode):
    """In a whole-graph mode the loop runs inside the one program: the step is rewritten for
    the mode (the node keeps it) and is not compiled as a function of its own."""
    from tensorgraph.scan.op import Scan

    x, h0, w, h, cost, args = _rnn("float64")
    f = tg.function([x, h0], h[-1], mode=mode)
    (node,) = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert getattr(node.tag, "scan_runner", None) is None
    inner = node.tag.scan_inner_fgraph
    assert inner is not node.op.fgraph and inner.rewrite_history is not None
    if mode != "JAX":  # fusion runs for Numba and PyTorch: tanh(a + b) is one Composite
        assert any("Composite" in str(n.op) for n in inner.apply_nodes)
    assert Scan.runner_of(node).reference  # tools reading a runner get the reference one


@pytest.mark.parametrize("mode", MODES)
def test_a_nested_loop(mode):
    m = tt.dmatrix("m")

    def row_sum(r):
        partial, _ = tg.scan(lambda e, acc: acc + e, sequences=r, outputs_info=tt.constant(0.0))
        return partial[-1]

    sums, _ = tg.scan(row_sum, sequences=m)
    _agree(mode, [m], sums, (np.arange(12.0).reshape(3, 4),))


@pytest.mark.parametrize("mode", MODES)
def test_a_scan_function_from_threads_and_pickled(mode, run_python, tmp_path):
    x, h0, w, h, cost, args = _rnn("float64")
    f = tg.function([x, h0], [h[-1]] + tg.grad(cost, [w]), mode=mode, name="rnn")
    rng = np.random.default_rng(5)
    inputs = [(rng.standard_normal((4 + k % 3, 3)), rng.standard_normal(3)) for k in range(12)]
    expected = [[v.copy() for v in f(*a)] for a in inputs]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            got = list(pool.map(lambda a: f(*a), inputs))
            for g, e in zip(got, expected):
                for u, v in zip(g, e):
                    np.testing.assert_array_equal(u, v)
    (tmp_path / "f.pkl").write_bytes(pickle.dumps(f))
    np.save(tmp_path / "x.npy", args[0])
    np.save(tmp_path / "h0.npy", args[1])
    code = ("import pickle, numpy as np\n"
            f"f = pickle.loads(open({str(tmp_path / 'f.pkl')!r}, 'rb').read())\n"
            f"x, h0 = np.load({str(tmp_path / 'x.npy')!r}), np.load({str(tmp_path / 'h0.npy')!r})\n"
            "print(repr([v.tolist() for v in f(x, h0)]), f.maker.mode.linker_name)\n")
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    values, linker = proc.stdout.rsplit(" ", 1)
    assert linker.strip() == mode.lower()
    for u, v in zip(eval(values), f(*args)):  # noqa: S307 - our own repr of lists of floats
        np.testing.assert_allclose(u, v, rtol=1e-12)
