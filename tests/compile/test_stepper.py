"""The stepper: a call run node by node equals the call (outputs and updates), under every
linker; shared variables change only at finish(); errors mid-run and abandoned runs leave them
alone; a lazy ifelse steps through the branch it takes; run_until_nonfinite names the culprit."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from seed_graphs import seed
from tensorgraph.ifelse import ifelse

LINKERS = ["py", "vm", "vm_nogc", "c|py", "c|py_nogc", "cvm", "cvm_nogc", "c"]


def shared_values(fn):
    return [s.get_value().copy() for s in fn.maker.shared_inputs]


def reset(fn, values):
    for s, v in zip(fn.maker.shared_inputs, values):
        s.set_value(v.copy())


@pytest.mark.parametrize("linker", LINKERS)
def test_a_stepped_call_equals_the_call(linker):
    train, data = seed(linker)
    start = shared_values(train)
    run = train.stepper(*data)
    assert run.position == 0 and run.current is run.vm.nodes[0] and not run.done
    assert run.vm.nodes == train.vm.nodes  # the same nodes, so the same ids
    run.step()
    run.step(3)
    assert run.position == 4 and run.ran == train.vm.nodes[:4]
    assert all(np.array_equal(a, b) for a, b in zip(shared_values(train), start))
    outputs = run.finish()
    stepped = shared_values(train)
    reset(train, start)
    expected = train(*data)
    for got, want in zip(outputs, expected):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(stepped, shared_values(train)):
        np.testing.assert_array_equal(got, want)
    assert run.finished and len(run.times) == len(train.vm.nodes)
    with pytest.raises(RuntimeError, match="has finished"):
        run.finish()


def test_normal_calls_between_steps_neither_see_nor_disturb_the_stepper():
    train, data = seed()
    start = shared_values(train)
    run = train.stepper(*data)
    run.step(5)
    train(*data)  # a normal call in the middle updates the shared variables itself
    after_call = shared_values(train)
    reset(train, start)
    outputs = run.finish()
    reset(train, start)
    expected = train(*data)
    np.testing.assert_array_equal(outputs[1], expected[1])
    assert not all(np.array_equal(a, b) for a, b in zip(after_call, start))


def test_an_abandoned_run_and_an_error_mid_run_leave_shared_variables_alone():
    train, data = seed()
    start = shared_values(train)
    run = train.stepper(*data)
    run.step(len(train.vm.nodes) - 1)  # everything but the last node, inplace updates included
    del run
    assert all(np.array_equal(a, b) for a, b in zip(shared_values(train), start))

    bad = train.stepper(np.ones((6, 5), dtype="float32"), data[1])  # 5 features, w has 7
    with pytest.raises(ValueError) as info:
        while not bad.done:
            bad.step()
    assert getattr(info.value, "node", None) is not None
    assert all(np.array_equal(a, b) for a, b in zip(shared_values(train), start))
    with pytest.raises(RuntimeError, match="stopped on an error"):
        bad.step()


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_a_lazy_ifelse_steps_through_the_branch_it_takes(linker):
    c, x = tt.scalar("c"), tt.vector("x")
    taken = tt.exp(x) * 3
    skipped = tt.log(x) * 5
    fn = tg.function([c, x], ifelse(c, taken, skipped), mode=Mode(linker, "fast_run"))
    values = np.array([1.0, 2.0])
    run = fn.stepper(1.0, values)
    ran_ops = set()
    while not run.done:
        ran_ops |= {str(n.op) for n in run.step()}
    assert not any("log" in op for op in ran_ops) and any("exp" in op for op in ran_ops)
    np.testing.assert_allclose(run.finish(), fn(1.0, values))


def test_run_to_values_and_ids_are_the_ones_dprint_prints():
    train, data = seed()
    run = train.stepper(*data)
    gemv = next(n for n in train.vm.nodes if type(n.op).__name__ == "Gemv")
    gid = run.ids[gemv]
    assert gid in tg.printing.debugprint(train, file="str")
    ran = run.run_to(gid)
    assert ran[-1] is gemv and run.position == len(ran)
    assert run.values[gemv.outputs[0]].shape == (6,)
    assert run.values[data_id(run, "x")].shape == (6, 7)
    with pytest.raises(ValueError, match="has run already"):
        run.run_to(gemv)
    with pytest.raises(KeyError, match="no node with id 'ZZZZ'"):
        run.run_to("ZZZZ")
    with pytest.raises(KeyError, match="not been computed yet"):
        run.values[train.maker.fgraph.outputs[0]]
    with pytest.raises(ValueError, match="whole number"):
        run.step(-1)
    assert "nodes run; next:" in repr(run)


def data_id(run, name):
    return next(run.ids[v] for v in run.function.maker.fgraph.inputs if v.name == name)


def test_run_until_nonfinite_names_the_first_node_and_the_users_line():
    x = tt.vector("x")
    y = tt.log(x)  # the line the report names
    z = tt.exp(y) * 2 + tt.sqrt(x + 1)
    fn = tg.function([x], z, mode=Mode("c|py", "None"))
    run = fn.stepper(np.array([1.0, 0.0, 2.0]))
    found = run.run_until_nonfinite()
    assert found is not None and "log" in str(found.node.op)
    assert found.inf == 1 and found.nan == 0 and found.size == 3
    assert "y = tt.log(x)" in str(found) and f"[id {found.node_id}]" in str(found)
    assert run.current is not None  # stopped there: the rest has not run
    assert fn.stepper(np.array([1.0, 2.0])).run_until_nonfinite() is None
    stop = fn.stepper(np.array([1.0, 2.0])).run_until(lambda node, outs: "exp" in str(node.op))
    assert stop is not None and "exp" in str(stop.op)


def test_run_until_nonfinite_names_the_node_reading_a_nan_constant():
    """A NaN written into the graph (a constant) enters the computation at the node reading
    it: that node is the culprit (an Alloc of a NaN fill), not a victim of an earlier one."""
    z = tt.dvector("z")
    fn = tg.function([z], tt.exp(z) * tt.alloc(np.nan, z.shape[0]), mode=Mode("cvm", None))
    found = fn.stepper(np.ones(3)).run_until_nonfinite()
    assert found is not None and type(found.node.op).__name__ == "Alloc"
    assert found.nan == 3


def test_run_until_nonfinite_names_inputs_and_shared_values_that_are_already_bad():
    """After a diverged training loop the weights are NaN: every node would only be a victim,
    so the stepper says which values the call starts with are bad, with counts, and runs
    nothing (it said 'every node has run' and found nothing)."""
    x = tt.vector("x")
    w = tg.shared(np.array([1.0, np.nan, np.nan]), name="w")
    b = tg.shared(np.array([0.5, 0.5, np.inf]), name="b")
    v = tg.shared(np.ones(3), name="v")
    fn = tg.function([x], tt.exp(x * w + b) + v, mode=Mode("cvm", "fast_run"))
    run = fn.stepper(np.array([1.0, np.inf, 0.0]))
    found = run.run_until_nonfinite()
    assert found is not None and found.node is None and run.position == 0
    labels = [label for _v, label, *_ in found.found]
    assert labels == ["input 0 (x)", "shared variable w", "shared variable b"]
    text = str(found)
    assert "shared variable w has 2 nan (of 3 elements)" in text
    assert "shared variable b has 1 inf" in text and "input 0 (x) has 1 inf" in text
    assert "v" not in labels
    assert set(found.variables) <= set(fn.maker.fgraph.inputs)
    # a cell's last line shows the repr: the message, as NonFinite's (not "<... at 0x...>")
    assert repr(found) == text


def test_bad_arguments_are_the_calls_errors():
    train, data = seed()
    with pytest.raises(TypeError, match="bad value for input 0"):
        train.stepper("nope", data[1])
    with pytest.raises(TypeError, match="missing value for input 1"):
        train.stepper(data[0])


@pytest.mark.parametrize("linker", ["py", "cvm", "c"])
def test_a_tutorial_mlp_step_stepped_equals_the_call(linker):
    rng = np.random.default_rng(1)
    x, labels = tt.matrix("x"), tt.ivector("labels")
    params, h = [], x
    for k, (n_in, n_out) in enumerate([(20, 16), (16, 5)]):
        W = tg.shared(rng.standard_normal((n_in, n_out)) * 0.3, name=f"W{k}")
        c = tg.shared(np.zeros(n_out), name=f"c{k}")
        h = tt.tanh(tt.dot(h, W) + c) if k == 0 else tt.special.softmax(tt.dot(h, W) + c)
        params += [W, c]
    loss = tt.special.categorical_crossentropy(h, labels).mean()
    grads = tg.grad(loss, params)
    step = tg.function([x, labels], loss, mode=Mode(linker, "fast_run"),
                       updates=[(p, p - 0.5 * g) for p, g in zip(params, grads)])
    data = (rng.standard_normal((8, 20)), rng.integers(0, 5, 8).astype("int32"))
    start = shared_values(step)
    run = step.stepper(*data)
    while not run.done:
        run.step(3)
    stepped_loss, stepped = run.finish(), shared_values(step)
    reset(step, start)
    assert stepped_loss == step(*data)
    for a, b in zip(stepped, shared_values(step)):
        np.testing.assert_array_equal(a, b)
