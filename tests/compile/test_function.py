"""function(): argument binding and checking, outputs, updates, givens, copies, options."""

import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile import In, Out, UnusedInputError
from tensorgraph.configdefaults import config
from tensorgraph.graph import Apply, MissingInputError, Op


def test_single_output_list_of_outputs_and_none():
    x, y = tt.dscalars("x", "y")
    assert tg.function([x, y], x + y)(1, 2) == 3
    both = tg.function([x, y], [x + y, x * y])(2, 3)
    assert isinstance(both, list) and [float(v) for v in both] == [5.0, 6.0]
    assert tg.function([x], [], on_unused_input="ignore")(1) == []
    assert tg.function([x], (x + 1,))(1) == [2.0]


def test_scalar_outputs_are_zero_d_arrays():
    x = tt.dscalar("x")
    out = tg.function([x], x * 2)(3)
    assert isinstance(out, np.ndarray) and out.shape == () and out == 6


def test_keyword_arguments_and_defaults():
    x, y, z = tt.dscalars("x", "y", "z")
    f = tg.function([x, In(y, value=1.0), In(z, value=2.0, name="zed")], (x + y) * z)
    assert f(1) == 4
    assert f(1, 2) == 6
    assert f(1, zed=3) == 6
    assert f(x=1, y=0, zed=1) == 1
    assert f.maker.inputs[2].name == "zed"


@pytest.mark.parametrize("call,match", [
    (lambda f: f(), r"missing value for input 0 \('x'\)"),
    (lambda f: f(1, 2, 3), "takes 2 inputs .*got 3"),
    (lambda f: f(1, w=2), "no input named 'w'; inputs: 'x', 'y'"),
    (lambda f: f(1, x=2), "'x' is given both by position and by keyword"),
])
def test_bad_calls_raise_type_errors(call, match):
    x, y = tt.dscalars("x", "y")
    f = tg.function([x, In(y, value=0.0)], x + y)
    with pytest.raises(TypeError, match=match):
        call(f)


def test_duplicate_names_must_be_passed_by_position():
    a, b = tt.dscalar("v"), tt.dscalar("v")
    f = tg.function([a, b], a - b)
    assert f(3, 1) == 2
    with pytest.raises(TypeError, match="several inputs are named 'v'"):
        f(v=1)


@pytest.mark.parametrize("value,match", [
    (np.zeros(3), r"input 0 \('x'\).*expected 2 dimensions \(Matrix.*got an array with 1: "
                  r"shape \(3,\)"),
    ("abc", r"input 0 \('x'\).*got str"),
    (np.zeros((2, 2), dtype="complex128"), "lose precision"),
])
def test_bad_values_name_the_input(value, match):
    x = tt.dmatrix("x")
    f = tg.function([x], x + 1)
    with pytest.raises(TypeError, match=match):
        f(value)


def test_lossy_downcast_needs_allow_input_downcast():
    x = tt.fvector("x")
    f = tg.function([x], x * 2)
    with pytest.raises(TypeError, match="allow_input_downcast"):
        f(np.array([0.1, 0.2]))
    g = tg.function([x], x * 2, allow_input_downcast=True)
    assert g(np.array([0.5, 1.0])).dtype == "float32"
    xs = tt.fscalar("xs")
    with config.change_flags(floatX="float32"):
        assert tg.function([xs], xs * 2)(0.1).dtype == "float32"  # Python floats fit floatX
    with config.change_flags(floatX="float64"):
        with pytest.raises(TypeError, match="lose precision"):
            tg.function([xs], xs * 2)(0.1)
    h = tg.function([In(x, allow_downcast=True)], x * 2)
    assert h(np.array([1.0])).tolist() == [2.0]


def test_unnamed_input_is_named_by_position_in_errors():
    x = tt.dvector()
    f = tg.function([x], x + 1)
    with pytest.raises(TypeError, match=r"input 0 \(<Vector"):
        f(np.zeros((1, 1)))


def test_trust_input_skips_conversion():
    x = tt.dvector("x")
    f = tg.function([x], x + 1)
    f.trust_input = True
    a = np.array([1.0])
    assert f(a).tolist() == [2.0]


def test_inputs_must_be_a_list_of_fresh_variables():
    x = tt.dscalar("x")
    with pytest.raises(TypeError, match=r"function\(\[x\], \.\.\.\)"):
        tg.function(x, x)
    with pytest.raises(TypeError, match="symbolic variable"):
        tg.function([3], x)
    with pytest.raises(ValueError, match="used twice in inputs"):
        tg.function([x, x], x)
    with pytest.raises(UnusedInputError, match=r"positions 0 and 1"):   # PyTensor's class
        tg.function([x, x, x], x)
    with pytest.raises(TypeError, match=r"Cannot use a shared variable \(w\) as explicit input"):
        tg.function([tg.shared(1.0, name="w")], x, on_unused_input="ignore")
    with pytest.raises(TypeError, match="output 0 .* must be a symbolic variable"):
        tg.function([x], [3])


def test_missing_input_is_named():
    x, y = tt.dscalars("x", "y")
    with pytest.raises(MissingInputError, match="y .* is needed"):
        tg.function([x], x + y)


def test_intermediate_variable_can_be_an_input():
    x = tt.dscalar("x")
    y = x * 2
    z = y + 1
    f = tg.function([y], z)
    assert f(10) == 11


def test_unused_inputs():
    x, y = tt.dscalars("x", "y")
    with pytest.raises(UnusedInputError, match=r"input 1 \(y\)"):
        tg.function([x, y], x * 2)
    with pytest.warns(UserWarning, match="not used"):
        tg.function([x, y], x * 2, on_unused_input="warn")
    assert tg.function([x, y], x * 2, on_unused_input="ignore")(1, 2) == 2
    with config.change_flags(on_unused_input="ignore"):
        tg.function([x, y], x * 2)
    with pytest.raises(ValueError, match="on_unused_input"):
        tg.function([x], x, on_unused_input="maybe")


# -- outputs the caller owns -------------------------------------------------------------------


def test_outputs_never_alias_inputs_shared_or_constants():
    x = tt.dvector("x")
    s = tg.shared(np.zeros(2), name="s")
    c = tt.constant(np.ones(2))
    a = np.array([1.0, 2.0])
    f = tg.function([x], [x, s, c, x.dimshuffle("x", 0)])
    out = f(a)
    assert not any(np.shares_memory(o, a) for o in (out[0], out[3]))
    out[1][0] = 9
    out[2][0] = 9
    assert s.get_value()[0] == 0 and f(a)[2][0] == 1
    borrowed = tg.function([x], Out(x, borrow=True))(a)
    assert np.shares_memory(borrowed, a)


def test_same_output_twice_gives_two_arrays():
    x = tt.dvector("x")
    y = x * 2
    out = tg.function([x], [y, y])([1.0])
    assert out[0] is not out[1]
    out[0][0] = 5
    assert out[1][0] == 2


def test_outputs_are_fresh_across_calls_without_gc():
    x = tt.dvector("x")
    f = tg.function([x], x * 2 + 1, mode=tg.Mode("vm_nogc"))
    first = f([1.0])
    second = f([2.0])
    assert first.tolist() == [3.0] and second.tolist() == [5.0]


def test_input_values_are_released_after_the_call():
    x = tt.dvector("x")
    f = tg.function([x], x + 1)
    f(np.ones(3))
    assert all(cell[0] is None for cell in f.vm.input_storage)


# -- updates --------------------------------------------------------------------------------------


def test_accumulator_returns_old_state():
    state = tg.shared(0, name="state")
    inc = tt.lscalar("inc")
    acc = tg.function([inc], state, updates=[(state, state + inc)])
    assert acc(1) == 0 and acc(10) == 1
    assert state.get_value() == 11
    dec = tg.function([inc], state, updates={state: state - inc})
    assert dec(2) == 11 and state.get_value() == 9


def test_updates_swap_values_simultaneously():
    a = tg.shared(np.array([1.0]), name="a")
    b = tg.shared(np.array([2.0]), name="b")
    tg.function([], [], updates=[(a, b), (b, a)])()
    assert a.get_value().tolist() == [2.0] and b.get_value().tolist() == [1.0]
    a.get_value(borrow=True)[0] = 50  # the two never share memory
    assert b.get_value()[0] == 1.0


def test_update_from_input_does_not_keep_the_callers_array():
    s = tg.shared(np.zeros(2), name="s")
    x = tt.dvector("x")
    f = tg.function([x], [], updates=[(s, x)])
    a = np.ones(2)
    f(a)
    a[0] = 7
    assert s.get_value().tolist() == [1.0, 1.0]


def test_output_equal_to_update_is_a_separate_array():
    s = tg.shared(np.zeros(2), name="s")
    new = s + 1
    f = tg.function([], new, updates=[(s, new)])
    out = f()
    out[0] = 100
    assert s.get_value().tolist() == [1.0, 1.0]


class Fails(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        if inputs[0].sum() < 0:
            raise ValueError("negative input")
        output_storage[0][0] = inputs[0]


def test_failed_call_changes_no_shared_variable():
    a = tg.shared(np.zeros(2), name="a")
    b = tg.shared(np.zeros(2), name="b")
    x = tt.dvector("x")
    f = tg.function([x], Fails()(x), updates=[(a, a + x), (b, b + 1)])
    f(np.ones(2))
    with pytest.raises(ValueError, match="negative input"):
        f(-np.ones(2))
    with pytest.raises(TypeError):
        f(np.ones((2, 2)))
    assert a.get_value().tolist() == [1.0, 1.0] and b.get_value().tolist() == [1.0, 1.0]


def test_update_checks():
    s = tg.shared(0.0, name="s")
    x = tt.dscalar("x")
    with pytest.raises(TypeError, match="not a shared variable"):
        tg.function([x], x, updates=[(x, x + 1)])
    with pytest.raises(ValueError, match="updated twice"):
        tg.function([x], x, updates=[(s, x), (s, x)])
    with pytest.raises(TypeError, match="pairs"):
        tg.function([x], x, updates=[s])


def test_default_updates_and_no_default_updates():
    counter = tg.shared(0, name="counter")
    counter.default_update = counter + 1
    other = tg.shared(10, name="other")
    other.default_update = other + counter  # reads counter, which has a default update
    f = tg.function([], other)
    assert f() == 10 and counter.get_value() == 1 and other.get_value() == 10
    assert f() == 10 and other.get_value() == 11
    tg.function([], other, no_default_updates=True)()
    assert counter.get_value() == 2 and other.get_value() == 11
    tg.function([], other, no_default_updates=[counter])()
    assert counter.get_value() == 2 and other.get_value() == 13
    tg.function([], other, updates=[(counter, counter * 0)])()
    assert counter.get_value() == 0


# -- givens ---------------------------------------------------------------------------------------


def test_givens_replace_variables():
    x, y = tt.dscalars("x", "y")
    s = tg.shared(5.0, name="s")
    f = tg.function([y], x * s, givens={x: y + 1})
    assert f(1) == 10
    with pytest.raises(MissingInputError, match="x"):
        tg.function([y], x * s, givens=[(s, y)])
    h = tg.function([y], x * s, givens=[(s, y), (x, y)])
    assert h(3) == 9
    assert s.get_value() == 5
    data = tg.shared(np.array(4.0), name="data")
    assert tg.function([], x * 2, givens={x: data})() == 8


def test_givens_checks():
    x, y = tt.dscalars("x", "y")
    v = tt.dvector("v")
    with pytest.raises(TypeError, match="givens: x has type .* replacement v"):
        tg.function([v], x, givens={x: v})
    with pytest.raises(ValueError, match="input of the function"):
        tg.function([x], x * 2, givens={x: y})
    assert tg.function([], x * 2, givens={x: 4.0})() == 8


# -- copies ---------------------------------------------------------------------------------------


def test_copy_swap_and_delete_updates():
    state = tg.shared(0, name="state")
    inc = tt.lscalar("inc")
    acc = tg.function([inc], state, updates=[(state, state + inc)], name="acc")
    new_state = tg.shared(0, name="new_state")
    swapped = acc.copy(swap={state: new_state})
    swapped(100)
    assert state.get_value() == 0 and new_state.get_value() == 100
    assert swapped.name == "acc copy"
    acc(5)
    frozen = acc.copy(delete_updates=True, name="frozen")
    assert frozen(3) == 5 and state.get_value() == 5 and frozen.name == "frozen"
    shared_mem = acc.copy(share_memory=True)
    shared_mem(1)
    assert state.get_value() == 6
    assert acc(0) == 6


def test_copy_keeps_defaults_and_checks_swap():
    x = tt.dscalar("x")
    s = tg.shared(1.0, name="s")
    f = tg.function([In(x, value=2.0)], x * s)
    g = f.copy()
    assert g() == 2 and g.maker.fgraph is not f.maker.fgraph
    with pytest.raises(ValueError, match="not a shared variable of this function"):
        f.copy(swap={tg.shared(1.0): s})
    with pytest.raises(TypeError, match="has type"):
        f.copy(swap={s: tg.shared(np.zeros(2))})


# -- the compiled graph and options -----------------------------------------------------------------


def test_maker_exposes_the_graph():
    x = tt.dvector("x")
    s = tg.shared(np.zeros(1), name="s")
    f = tg.function([x], x + s, updates=[(s, s + 1)])
    fg = f.maker.fgraph
    assert len(fg.inputs) == 2 and fg.inputs[1].container is s.container
    assert len(fg.outputs) == 2  # the output and the update
    assert [i.variable for i in f.maker.inputs] == [x]
    assert f.get_shared() == [s]
    assert fg.inputs[0] is not x  # the fgraph works on a copy of the user's graph
    assert "1 output, 1 update" in repr(f)


def test_inplace_graph_needs_accept_inplace():
    class Overwrite(Op):
        __props__ = ()
        destroy_map = {0: [0]}

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            inputs[0] += 1
            output_storage[0][0] = inputs[0]

    x = tt.dvector("x")
    with pytest.raises(TypeError, match="accept_inplace"):
        tg.function([x], Overwrite()(x))
    f = tg.function([In(x, mutable=True, borrow=False)], Overwrite()(x), accept_inplace=True)
    a = np.zeros(2)
    assert f(a).tolist() == [1.0, 1.0] and a.tolist() == [0.0, 0.0]  # borrow=False: a copy
    f = tg.function([In(x, mutable=True)], Overwrite()(x), accept_inplace=True)
    assert f(a).tolist() == [1.0, 1.0] and a.tolist() == [1.0, 1.0]  # PyTensor: borrow=mutable


def test_profile_flag_gives_a_profile():
    x = tt.dscalar("x")
    assert not hasattr(tg.function([x], x, profile=False), "profile")
    f = tg.function([x], x * 2, profile=True)
    assert f(1) == 2 and f.profile.call_count == 1  # details in tests/compile/test_profiling.py


def test_eval_uses_function():
    x = tt.dscalar("x")
    assert (x * 3).eval({x: 2}) == 6
    assert (x * 3).eval({"x": 2}) == 6


def test_no_warnings_in_a_plain_call():
    x = tt.dvector("x")
    f = tg.function([x], x * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f([1.0])


class DoubleInto(Op):
    """x * 2, written into the previous call's output buffer when there is one."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,), cell = inputs, output_storage[0]
        if cell[0] is not None and cell[0].shape == x.shape:
            np.multiply(x, 2, out=cell[0])
        else:
            cell[0] = x * 2


@pytest.mark.parametrize("linker", ["vm", "vm_nogc"])
def test_outputs_survive_ops_that_reuse_their_buffers(linker):
    x = tt.dvector("x")
    direct = tg.function([x], DoubleInto()(x), mode=tg.Mode(linker, None))
    view = tg.function([x], DoubleInto()(x).dimshuffle("x", 0), mode=tg.Mode(linker, None))
    for f in (direct, view):
        first = f([1.0])
        f([5.0])
        assert np.ravel(first).tolist() == [2.0]


def test_an_input_in_the_other_byte_order_is_made_native():
    """Same dtype name, other byte order: converted (C kernels read native numbers)."""
    x = tt.vector("x", dtype="float32")
    f = tg.function([x], x * 2)
    swapped = np.arange(4, dtype=">f4")
    assert f.maker.fgraph.inputs[0].type.filter(swapped).dtype.isnative
    np.testing.assert_array_equal(f(swapped), np.arange(4, dtype="float32") * 2)


def test_mode_is_the_third_positional_argument_as_in_theano():
    """function(inputs, outputs, mode, updates, givens, ...): Theano's and PyTensor's order."""
    x = tt.dvector("x")
    w = tg.shared(np.zeros(2), name="w")
    f = tg.function([x], x * 2, "FAST_COMPILE", [(w, w + x)])
    assert f.maker.mode.optimizer == tg.compile.get_mode("FAST_COMPILE").optimizer
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])
    with pytest.raises(TypeError, match="third argument is the mode"):
        tg.function([x], x * 2, [(w, w + x)])


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_python_ints_out_of_an_int_dtype_range_overflow(mode):
    b, c = tt.bvector("b"), tt.bscalar("c")          # int8
    f = tg.function([b, c], b + c, mode=mode)
    np.testing.assert_array_equal(f([6], 1), [7])   # Python values that fit are taken
    with pytest.raises(OverflowError, match=r"input 0 \('b'\).*312.*\[-128, 127\]"):
        f([312], 1)
    with pytest.raises(OverflowError, match=r"input 1 \('c'\).*806"):
        f([6], 806)
    with pytest.raises(TypeError, match="lose precision"):
        f(np.array([6], dtype="int16"), 1)         # an array of a wider dtype: a type error
    g = tg.function([b, c], b + c, mode=mode, allow_input_downcast=True)
    np.testing.assert_array_equal(g([312], 0), [56])  # wraps, as numpy's astype


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "C", "NUMBA", "DebugMode"])
def test_in_mutable_lets_the_function_overwrite_the_callers_array(mode):
    from tensorgraph.compile import In

    if mode == "NUMBA":
        pytest.importorskip("numba")
    a = tt.dvector("a")
    mutable = tg.function([In(a, mutable=True)], a * 2, mode=mode)
    kept = tg.function([In(a, mutable=False)], a * 2, mode=mode)
    copied = tg.function([In(a, mutable=True, borrow=False)], a * 2, mode=mode)
    for f, may_change in [(mutable, True), (kept, False), (copied, False)]:
        value = np.arange(5.0)
        out = f(value)
        np.testing.assert_array_equal(out, np.arange(5.0) * 2)
        if not may_change:
            np.testing.assert_array_equal(value, np.arange(5.0))
    assert In(a, mutable=True).borrow and not In(a).borrow   # PyTensor's default: borrow=mutable
    if mode in ("FAST_RUN", "C", "NUMBA", "DebugMode"):     # the inplace rewrite used it
        assert any(n.op.destroy_map for n in mutable.maker.fgraph.toposort())


def test_in_mutable_keeps_other_readers_safe_and_survives_pickle_copy_threads():
    import pickle
    import threading

    from tensorgraph.compile import In

    a = tt.dvector("a")
    # a is read twice: overwriting it for the first product would spoil the second
    f = tg.function([In(a, mutable=True)], [a * 2, tt.exp(a)])
    value = np.linspace(0, 1, 7)
    twice, expd = f(value.copy())
    np.testing.assert_allclose(twice, value * 2)
    np.testing.assert_allclose(expd, np.exp(value))
    g = pickle.loads(pickle.dumps(f))
    for h in (g, f.copy()):
        v = value.copy()
        np.testing.assert_allclose(h(v)[0], value * 2)
    m = tg.function([In(a, mutable=True)], a * 3)
    clone = pickle.loads(pickle.dumps(m))
    assert any(n.op.destroy_map for n in clone.maker.fgraph.toposort())
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(50):
                v = np.full(100, float(k))
                results[k] = m(v).copy()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        np.testing.assert_array_equal(results[k], np.full(100, 3.0 * k))


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_mutable_inputs_given_the_same_array_are_not_overwritten_under_each_other(mode):
    from tensorgraph.compile import In

    x, y = tt.dvector("x"), tt.dvector("y")
    m = tg.shared(np.arange(4.0), name="m")
    f = tg.function([In(x, mutable=True), In(y, mutable=True)],
                    (x * 2) * (y * 3) + m, mode=mode)
    expected = (np.arange(4.0) * 2) * (np.arange(4.0) * 3) + np.arange(4.0)
    v = np.arange(4.0)
    np.testing.assert_allclose(f(v, v), expected)                       # one array, twice
    np.testing.assert_allclose(f(np.arange(4.0), np.arange(4.0)), expected)
    stored = m.get_value(borrow=True)
    np.testing.assert_allclose(f(stored, np.arange(4.0)), expected)     # the shared storage
    np.testing.assert_array_equal(m.get_value(), np.arange(4.0))
    w = np.arange(8.0)
    np.testing.assert_allclose(f(w[:4], w[:4]), expected)               # views of one buffer


def test_outputs_keep_their_names_through_rewrites():
    x = tt.dvector("x")
    cost = tt.exp(x) * 2 + 1      # fused into one loop: a new, unnamed variable
    cost.name = "cost"
    same = x * 1                  # rewritten to x itself, which keeps its own name
    same.name = "same"
    f = tg.function([x], [cost, same])
    assert [o.name for o in f.maker.fgraph.outputs] == ["cost", "x"]
