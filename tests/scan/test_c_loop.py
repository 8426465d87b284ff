"""The loop over iterations in C (tensorgraph/link/c/scan_loop.py): the same values as the Python
loop calling the compiled step once per iteration, bit for bit; the Python loop wherever hooks
watch the step's nodes; errors naming the iteration and the inner node as before."""

import threading

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.scan import foldr, map, scan, until
from tensorgraph.scan.op import Scan

C_MODES = ["FAST_RUN", "c", "cvm_nogc"]


def _mode(name):
    if name in ("py", "c|py", "cvm", "c", "cvm_nogc"):
        return tensorgraph.Mode(linker=name, optimizer="fast_run")
    return name


def _runners(f):
    """The inner runners of every scan node of ``f`` and of the loops inside them."""
    found, functions = [], [f]
    while functions:
        fn = functions.pop()
        for node in fn.maker.fgraph.toposort():
            if isinstance(node.op, Scan):
                runner = Scan.runner_of(node)
                found.append(runner)
                functions.append(runner.function)
    return found


def _run_both(f, *args):
    """f's outputs with the C loop, then with the Python loop (and the counters' changes)."""
    runners = _runners(f)
    assert runners
    results = {}
    for enabled in (True, False):
        for r in runners:
            r.c_loop_enabled = enabled
        before = [dict(r.counters) for r in runners]
        out = f(*args)
        results[enabled] = ([np.array(o, copy=True) for o in out] if isinstance(out, list)
                            else [np.array(out, copy=True)])
        results[enabled, "counters"] = [{k: r.counters[k] - b[k] for k in b}
                                        for r, b in zip(runners, before)]
    for r in runners:
        r.c_loop_enabled = True
    for c_value, py_value in zip(results[True], results[False]):
        assert c_value.dtype == py_value.dtype and c_value.shape == py_value.shape
        np.testing.assert_array_equal(c_value, py_value)
    return results[True], results[True, "counters"], results[False, "counters"]


def _compile(inputs, outputs, mode, **kwargs):
    f = tensorgraph.function(inputs, outputs, mode=_mode(mode), **kwargs)
    f.wait_optimized()
    for r in _runners(f):
        r.function.wait_optimized()
    return f


# -- the cases of the scan suite, each with a numpy check ------------------------------------


def _power(mode):
    A, k = tt.dvector("A"), tt.lscalar("k")
    result, _ = scan(lambda prior, A: prior * A, outputs_info=tt.ones_like(A), non_sequences=A,
                     n_steps=k)
    a = np.arange(1.0, 6.0)
    return _compile([A, k], result, mode), (a, 4), [np.stack([a ** i for i in range(1, 5)])]


def _polynomial(mode):
    c, x = tt.dvector("c"), tt.dscalar("x")
    parts, _ = scan(lambda c, p, x: c * (x ** p), sequences=[c, tt.arange(c.shape[0])],
                    non_sequences=x)
    return (_compile([c, x], parts, mode), (np.array([1.0, 0.0, 2.0]), 3.0),
            [np.array([1.0, 0.0, 18.0])])


def _running_sum(mode):
    x = tt.dvector("x")
    total, _ = scan(lambda x_t, acc: acc + x_t, sequences=x,
                    outputs_info=tt.constant(np.float64(0.0)))
    v = np.linspace(-1, 2, 50)
    return _compile([x], total, mode), (v,), [np.cumsum(v)]


def _fibonacci(mode):
    n = tt.lscalar("n")
    fib, _ = scan(lambda f2, f1: f2 + f1,
                  outputs_info=dict(initial=tt.constant(np.array([0, 1], dtype="int64")),
                                    taps=[-2, -1]), n_steps=n)
    return _compile([n], fib, mode), (10,), [np.array([1, 2, 3, 5, 8, 13, 21, 34, 55, 89])]


def _rnn(mode, dtype="float64"):
    rng = np.random.default_rng(0)
    X, h0 = tt.tensor3("X", dtype=dtype), tt.matrix("h0", dtype=dtype)
    w_in = tensorgraph.shared(rng.normal(size=(3, 4)).astype(dtype) * 0.5, name="W_in")
    w_rec = tensorgraph.shared(rng.normal(size=(4, 4)).astype(dtype) * 0.5, name="W_rec")
    h, _ = scan(lambda x_t, h: tt.tanh(tt.dot(x_t, w_in) + tt.dot(h, w_rec)), sequences=X,
                outputs_info=h0)
    x, h_init = rng.normal(size=(7, 2, 3)).astype(dtype), rng.normal(size=(2, 4)).astype(dtype)
    expected, h_t = [], h_init
    for x_t in x:
        h_t = np.tanh(x_t @ w_in.get_value() + h_t @ w_rec.get_value())
        expected.append(h_t)
    return _compile([X, h0], h, mode), (x, h_init), [np.array(expected)]


def _rnn_float32(mode):
    return _rnn(mode, "float32")


def _until(mode):
    A, v0 = tt.dmatrix("A"), tt.dvector("v0")

    def step(v, A):
        w = tt.dot(A, v)
        w = w / tt.sqrt((w ** 2).sum())
        return w, until(tt.sqrt(((w - v) ** 2).sum()) < 1e-10)

    vs, _ = scan(step, outputs_info=v0, non_sequences=A, n_steps=1000)
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    u, steps = np.array([1.0, 0.0]), []
    while len(steps) < 1000:
        w = a @ u
        w = w / np.sqrt((w ** 2).sum())
        steps.append(w)
        done = np.sqrt(((w - u) ** 2).sum()) < 1e-10
        u = w
        if done:
            break
    assert 16 < len(steps) < 1000  # the loop grows its rows at least once
    return _compile([A, v0], vs, mode), (a, np.array([1.0, 0.0])), [np.array(steps)]


def _sequence_taps_and_nit_sot(mode):
    x = tt.dvector("x")
    (acc, prod), _ = scan(lambda a, b, c, acc: (acc + b, a * c),
                          sequences=dict(input=x, taps=[-2, 0, 1]),
                          outputs_info=[tt.constant(np.float64(0.0)), None])
    v = np.arange(1.0, 9.0)
    steps = len(v) - 3
    return (_compile([x], [acc, prod], mode), (v,),
            [np.cumsum(v[2:2 + steps]), v[:steps] * v[3:3 + steps]])


def _go_backwards_strided(mode):
    x = tt.dmatrix("x")
    out, _ = scan(lambda x_t, acc: acc * 10 + x_t, sequences=x.T,
                  outputs_info=tt.zeros((2,), dtype="float64"), go_backwards=True)
    m = np.arange(6.0).reshape(2, 3)  # the sequence is a transposed, reversed view
    expected, acc = [], np.zeros(2)
    for row in m.T[::-1]:
        acc = acc * 10 + row
        expected.append(acc)
    return _compile([x], out, mode), (m,), [np.array(expected)]


def _map_foldr(mode):
    x = tt.dvector("x")
    squares, _ = map(lambda v: v ** 2, sequences=x)
    right, _ = foldr(lambda v, acc: acc * 2 + v, sequences=x,
                     outputs_info=tt.constant(0.0, dtype="float64"))
    v = np.array([1.0, 0.0, 1.0, 1.0])
    return _compile([x], [squares, right], mode), (v,), [v ** 2, np.array(13.0)]


def _nested(mode):
    m = tt.dmatrix("m")

    def row_cumsum(row):
        out, _ = scan(lambda v, acc: acc + v, sequences=row,
                      outputs_info=tt.constant(0.0, dtype="float64"))
        return out

    out, _ = scan(row_cumsum, sequences=m)
    a = np.arange(6.0).reshape(2, 3)
    return _compile([m], out, mode), (a,), [np.cumsum(a, axis=1)]


def _last_steps_kept(mode):
    # scan_save_mem: h[-1] keeps one row, h[-3:] a ring of 3 rows
    x = tt.dvector("x")
    h, _ = scan(lambda x_t, h: h * 0.5 + x_t, sequences=x, outputs_info=tt.constant(1.0))
    v = np.arange(10.0)
    expected, value = [], 1.0
    for x_t in v:
        value = value * 0.5 + x_t
        expected.append(value)
    f = _compile([x], [h[-1], h[-3:]], mode)
    assert any(r.op.info.keep for r in _runners(f))
    return f, (v,), [np.array(expected[-1]), np.array(expected[-3:])]


def _states_swapped(mode):
    # each state's new value is the other's old one: rows the loop reads are written in the
    # same iteration (a ring of one row each), so values that view them are staged first
    a0, b0 = tt.dvector("a0"), tt.dvector("b0")
    (a, b), _ = scan(lambda a, b: (b, a[::-1]), outputs_info=[a0, b0], n_steps=5)
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    return (_compile([a0, b0], [a[-1], b[-1]], mode), (x, y),
            [np.array([3.0, 4.0]), np.array([2.0, 1.0])])


def _bptt(mode):
    # the gradient of an RNN with taps [-2, -1]: a backward loop of accumulators
    rng = np.random.default_rng(3)
    x = tt.dmatrix("x")
    w = tensorgraph.shared(rng.normal(size=(3, 3)) * 0.3, name="w")
    h0 = tt.dmatrix("h0")
    h, _ = scan(lambda x_t, h2, h1: tt.tanh(tt.dot(h1, w) + h2 * 0.5 + x_t), sequences=x,
                outputs_info=dict(initial=h0, taps=[-2, -1]), truncate_gradient=4)
    cost = (h ** 2).sum()
    grads = tensorgraph.grad(cost, [w, h0, x])
    f = _compile([x, h0], grads, mode)
    return f, (rng.normal(size=(6, 3)), rng.normal(size=(2, 3))), None


def _zero_steps(mode):
    x = tt.dvector("x")
    total, _ = scan(lambda x_t, acc: acc + x_t, sequences=x, outputs_info=tt.constant(0.0))
    return _compile([x], total, mode), (np.zeros(0),), [np.zeros(0)]


CASES = [_power, _polynomial, _running_sum, _fibonacci, _rnn, _rnn_float32, _until,
         _sequence_taps_and_nit_sot, _go_backwards_strided, _map_foldr, _nested,
         _last_steps_kept, _states_swapped, _bptt, _zero_steps]


@pytest.mark.parametrize("mode", C_MODES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_c_loop_gives_the_python_loops_values(case, mode):
    f, args, expected = case(mode)
    values, c_counts, py_counts = _run_both(f, *args)
    if expected is not None:
        for value, want in zip(values, expected):
            np.testing.assert_allclose(value, want, rtol=1e-6 if value.dtype == "float32"
                                       else 1e-12)
    ran = [c for c in c_counts if c["iterations"]]
    if case is _zero_steps:
        assert not ran
        return
    # every loop with iterations ran them in C (nested: the inner loop; the outer one's step
    # holds a scan node, so it is not whole-graph C and runs in Python)
    assert any(c["c_runs"] for c in ran)
    for c, p in zip(c_counts, py_counts):
        assert p["c_runs"] == 0 and p["python_iterations"] == p["iterations"]
        if c["c_runs"]:
            # in Python only: the first iteration of an output not fed back (its shape) and,
            # in a while loop, the iteration that grows the rows
            assert c["python_iterations"] <= 1 + 6 * (case is _until)


def test_c_loop_with_scan_allow_gc():
    with config.change_flags(scan__allow_gc=True):
        f, args, expected = _rnn("FAST_RUN")
    (value,), counts, _ = _run_both(f, *args)
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    (runner,) = _runners(f)
    assert runner.allow_gc and counts[0]["c_runs"] == 1
    assert runner.held_intermediates() == 0


@pytest.mark.parametrize("mode", ["NanGuardMode", "MonitorMode", "DebugMode", "FAST_COMPILE",
                                  "py", "c|py"])
def test_python_loop_where_hooks_watch_the_step_or_it_is_not_whole_graph_c(mode):
    seen = []
    if mode == "MonitorMode":  # with a function to call for every node
        from tensorgraph.compile.monitormode import MonitorMode

        mode = MonitorMode(post_func=lambda fgraph, i, node, thunk: seen.append(node),
                           linker="cvm", optimizer="fast_run")
    f, args, expected = _rnn(mode)
    np.testing.assert_allclose(f(*args), expected[0], rtol=1e-10)
    (runner,) = _runners(f)
    assert runner.counters["c_runs"] == 0
    # (DebugMode runs the node more than once)
    assert runner.counters["python_iterations"] == runner.counters["iterations"] >= 7
    assert len(seen) == (7 * len(runner.function.vm.nodes) + len(f.vm.nodes) if seen else 0)


def test_python_loop_while_a_hook_is_set_on_the_step():
    f, args, expected = _rnn("FAST_RUN")
    (runner,) = _runners(f)
    seen = []
    runner.function.vm.post_hook = lambda i, node, thunk: seen.append(node)
    try:
        np.testing.assert_allclose(f(*args), expected[0], rtol=1e-12)
    finally:
        runner.function.vm.post_hook = None
    assert runner.counters["c_runs"] == 0 and len(seen) == 7 * len(runner.function.vm.nodes)
    f(*args)
    assert runner.counters["c_runs"] == 1


def test_python_loop_for_a_step_with_a_random_draw():
    from tensorgraph.tensor.random.utils import RandomStream

    srng = RandomStream(seed=1)
    pos, updates = scan(lambda p: p + srng.normal(0.0, 1.0, dtype="float64"),
                        outputs_info=tt.constant(0.0), n_steps=4)
    f = _compile([], pos, "FAST_RUN", updates=updates)
    f()
    (runner,) = _runners(f)
    assert runner.counters["c_runs"] == 0 and runner.counters["python_iterations"] == 4


def _gather(mode):
    idx, v = tt.lvector("idx"), tt.dvector("v")
    out, _ = scan(lambda i, acc, v: acc + v[i], sequences=idx, outputs_info=tt.constant(0.0),
                  non_sequences=v, name="gather")
    return _compile([idx, v], out, mode)


@pytest.mark.parametrize("mode", C_MODES)
def test_an_error_in_the_c_loop_names_the_iteration_and_the_inner_node(mode):
    f = _gather(mode)
    (runner,) = _runners(f)
    messages = {}
    for enabled in (True, False):
        runner.c_loop_enabled = enabled
        with pytest.raises(IndexError) as info:
            f(np.array([0, 1, 2, 7, 1]), np.arange(4.0))
        messages[enabled] = str(info.value)
    assert runner.counters["c_runs"] == 0 and runner.counters["python_iterations"] == 3
    assert messages[True] == messages[False]
    first = messages[True].splitlines()
    assert first[0] == ("Subtensor{i}: index 7 is out of bounds for axis 0 with size 4 "
                        "(iteration 3 of scan 'gather')")
    assert first[1].startswith("  in node Subtensor{i}(v, idx[t])")
    # the function still works, in C, after the error
    runner.c_loop_enabled = True
    np.testing.assert_allclose(f(np.array([3, 0]), np.arange(4.0)), [3.0, 3.0])
    assert runner.counters["c_runs"] == 1


def test_a_shape_change_found_by_the_c_loop_raises_the_python_loops_error():
    k = tt.lvector("k")
    h, _ = scan(lambda k_t, h: tt.ones((k_t,), dtype="float64") + h[0], sequences=k,
                outputs_info=tt.zeros((2,), dtype="float64"), name="grow")
    f = _compile([k], h, "FAST_RUN")
    (runner,) = _runners(f)
    messages = {}
    for enabled in (True, False):
        runner.c_loop_enabled = enabled
        with pytest.raises(ValueError) as info:
            f(np.array([2, 2, 3, 2]))
        messages[enabled] = str(info.value)
    assert messages[True] == messages[False]
    assert "has shape (3,) at iteration 2, but its initial value has shape (2,)" in messages[True]


def test_node_times_add_up_over_the_iterations():
    f, args, _ = _rnn("FAST_RUN")
    (runner,) = _runners(f)
    vm = runner.function.vm
    vm.collect_node_times = True
    try:
        f(*args)
        f(*args)
    finally:
        vm.collect_node_times = False
    assert runner.counters["c_runs"] == 2
    assert list(vm.node_calls) == [14] * len(vm.nodes)
    assert (vm.node_times > 0).all() and vm.loop_seconds[0] >= vm.node_times.sum()


def test_threads_share_a_function_whose_loop_runs_in_c():
    f, args, expected = _rnn("FAST_RUN")
    errors, results = [], []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(20):
                scale = rng.uniform(0.5, 1.5)
                results.append((scale, f(args[0] * scale, args[1])))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    (runner,) = _runners(f)
    assert runner.counters["c_runs"] > 0  # (counters are not exact under threads)
    reference = {}
    for scale, value in results:
        want = reference.setdefault(scale, None)
        if want is None:
            runner.c_loop_enabled = False
            reference[scale] = want = f(args[0] * scale, args[1])
            runner.c_loop_enabled = True
        np.testing.assert_array_equal(value, want)


def test_arrays_c_cannot_take_as_they_are_run_in_python():
    x = tt.dvector("x")
    s, _ = scan(lambda v, acc: acc * 0.5 + v, sequences=x, outputs_info=tt.constant(0.0))
    f = _compile([x], s, "FAST_RUN")
    raw = np.zeros(8 * 6 + 1, dtype="u1")
    unaligned = np.frombuffer(raw.data, dtype="f8", count=6, offset=1)
    raw[1:] = np.arange(1.0, 7.0).view("u1")
    assert not unaligned.flags.aligned
    expected, acc = [], 0.0
    for v in range(1, 7):
        acc = acc * 0.5 + v
        expected.append(acc)
    np.testing.assert_array_equal(f(unaligned), expected)
    (runner,) = _runners(f)
    assert runner.counters["c_runs"] == 0 and runner.counters["python_iterations"] == 6
    np.testing.assert_array_equal(f(np.arange(1.0, 7.0)), expected)
    assert runner.counters["c_runs"] == 1
