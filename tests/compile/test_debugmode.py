"""DebugMode: each check fires on an Op (or a rewrite) that misbehaves on purpose, good graphs
pass, constructor arguments override the flags, and the seed programs give the same results."""

import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link import registry as linkers
from tensorgraph.compile import mode as mode_module
from tensorgraph.compile.debugmode import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugMode,
    DebugModeError,
    InvalidValueError,
    StochasticOrder,
    compare,
    preallocated_buffers,
)
from tensorgraph.configdefaults import config
from tensorgraph.graph import Apply, Op
from tensorgraph.link.c.op import COp
from tensorgraph.link.vm import PyVMLinker
from tensorgraph.rewriting.history import RewriteHistory


class Unary(Op):
    """x -> 2 * x with a chosen way of misbehaving."""

    __props__ = ("how",)

    def __init__(self, how="good"):
        self.how = how
        if how == "destroys_undeclared":
            self.destroy_map = {}
        if how == "view_declared_copy":
            self.view_map = {0: [0]}

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        how = self.how
        if how == "destroys_undeclared":
            x *= 2
            output_storage[0][0] = x.copy()
        elif how == "aliases_undeclared":
            output_storage[0][0] = x
        elif how == "wrong_dtype":
            output_storage[0][0] = (2 * x).astype("float32")
        elif how == "wrong_ndim":
            output_storage[0][0] = np.atleast_2d(2 * x)
        elif how == "reuses_buffer_badly":
            out = output_storage[0][0]
            if out is not None and out.shape == x.shape:
                out += 2 * x  # bug: should overwrite, not accumulate
            else:
                output_storage[0][0] = 2 * x
        elif how == "assumes_buffer_size":
            out = output_storage[0][0]
            if out is None:
                out = output_storage[0][0] = np.empty_like(x)
            out[...] = 2 * x  # bug: a buffer of another shape breaks it
        else:
            output_storage[0][0] = 2 * x

    def make_alt_thunk(self, node, storage_map, compute_map):
        """The second implementation compared with perform (stands in for C code)."""
        inputs = [storage_map[v] for v in node.inputs]
        outputs = [storage_map[v] for v in node.outputs]
        flags = [compute_map[v] for v in node.outputs]
        off = 1.0 if self.how == "alt_disagrees" else 0.0
        layout = np.asfortranarray if self.how == "alt_fortran" else np.ascontiguousarray

        def thunk():
            outputs[0][0] = layout(2 * inputs[0][0] + off)
            flags[0][0] = True

        thunk.inputs, thunk.outputs, thunk.lazy, thunk.kind = inputs, outputs, False, "c"
        return thunk


class AltLinker(PyVMLinker):
    """A linker whose ops with ``make_alt_thunk`` get that thunk (kind 'c'), as a C linker's
    ops with C code get compiled thunks."""

    def make_vm(self, fgraph, input_storage=None, storage_map=None):
        vm = super().make_vm(fgraph, input_storage, storage_map)
        for i, node in enumerate(vm.nodes):
            if hasattr(node.op, "make_alt_thunk"):
                vm.thunks[i] = node.op.make_alt_thunk(node, vm.storage_map, vm.compute_map)
        return vm


@pytest.fixture
def alt_linker():
    linkers.register_linker("test_alt", lambda: AltLinker(False, "test_alt"))
    yield "test_alt"
    linkers._LINKERS.pop("test_alt", None)


def quiet(**kw):
    """A DebugMode without the rewrite-determinism repeats (fast tests)."""
    kw.setdefault("patience", 1)
    return DebugMode(**kw)


def test_a_good_graph_passes_every_check(alt_linker):
    x = tt.dvector("x")
    m = tt.dmatrix("m")
    y = tt.exp(Unary()(x)).sum() + tt.dot(m, x).mean()
    mode = DebugMode(c_linker=alt_linker, patience=3, check_preallocated_output="ALL")
    f = tg.function([x, m], y, mode=mode)
    xv, mv = np.arange(3.0), np.ones((2, 3))
    expected = np.exp(2 * xv).sum() + (mv @ xv).mean()
    assert np.isclose(f(xv, mv), expected)
    assert np.isclose(f(xv, mv), expected)  # second call: 'previous' buffers exist now


def test_bad_thunk_output_names_node_line_values_and_difference(alt_linker):
    x = tt.dvector("x")
    y = Unary("alt_disagrees")(x)  # the user line
    f = tg.function([x], y, mode=quiet(c_linker=alt_linker))
    with pytest.raises(BadThunkOutput) as info:
        f(np.arange(3.0))
    err = info.value
    assert isinstance(err, DebugModeError)
    assert err.kinds == ("py", "c") and err.output_index == 0
    assert err.largest_difference == pytest.approx(1.0)
    np.testing.assert_array_equal(err.values[0], [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(err.values[1], [1.0, 3.0, 5.0])
    text = str(err)
    assert "py and c implementations of Unary{alt_disagrees}" in text
    assert "largest difference 1" in text
    assert "test_debugmode.py" in text and "y = Unary(\"alt_disagrees\")(x)" in text


def test_matching_strides_warn_or_raise(alt_linker):
    m = tt.dmatrix("m")
    y = Unary("alt_fortran")(m)
    value = np.ones((2, 3))
    tg.function([m], y, mode=quiet(c_linker=alt_linker))(value)  # 0: not checked
    with pytest.warns(UserWarning, match="have strides"):
        tg.function([m], y, mode=quiet(c_linker=alt_linker, require_matching_strides=1))(value)
    with config.change_flags(DebugMode__check_strides=2):
        with pytest.raises(BadThunkOutput, match="have strides"):
            tg.function([m], y, mode=quiet(c_linker=alt_linker))(value)


def test_without_a_c_linker_the_c_side_is_skipped():
    x = tt.dvector("x")
    f = tg.function([x], Unary("alt_disagrees")(x), mode=quiet(c_linker="no_such_linker"))
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_check_c_false_turns_the_comparison_off(alt_linker):
    x = tt.dvector("x")
    f = tg.function([x], Unary("alt_disagrees")(x), mode=quiet(c_linker=alt_linker,
                                                               check_c=False))
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_check_py_false_runs_the_c_thunks_only(alt_linker):
    x = tt.dvector("x")
    f = tg.function([x], Unary("alt_disagrees")(x), mode=quiet(c_linker=alt_linker,
                                                               check_py=False))
    np.testing.assert_array_equal(f(np.arange(3.0)), [1.0, 3.0, 5.0])
    with pytest.raises(ValueError, match="cannot both be False"):
        DebugMode(check_py=False, check_c=False)


def test_bad_destroy_map():
    x = tt.dvector("x")
    f = tg.function([x], Unary("destroys_undeclared")(x) + 1, mode=quiet())
    with pytest.raises(BadDestroyMap, match=r"changed its input 0 \(x\).*destroy_map") as info:
        f(np.arange(3.0))
    assert info.value.input_index == 0 and isinstance(info.value, DebugModeError)


def test_bad_view_map():
    x = tt.dvector("x")
    f = tg.function([x], Unary("aliases_undeclared")(x) * 3, mode=quiet())
    with pytest.raises(BadViewMap, match="output 0 of the py implementation of Unary.*shares memory with input 0"):
        f(np.arange(3.0))


def test_input_not_reused_warns_and_the_flag_silences_it():
    x = tt.dvector("x")
    y = Unary("view_declared_copy")(x) * 3
    f = tg.function([x], y, mode=quiet())
    with pytest.warns(UserWarning, match="declares output 0 in view_map of input 0"):
        f(np.arange(3.0))
    f = tg.function([x], y, mode=quiet(warn_input_not_reused=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(np.arange(3.0))


@pytest.mark.parametrize("how, match", [
    ("wrong_dtype", "not a valid Vector\\(float64.*float32"),
    ("wrong_ndim", "not a valid Vector\\(float64.*dimension"),
])
def test_invalid_value(how, match):
    x = tt.dvector("x")
    f = tg.function([x], Unary(how)(x), mode=quiet())
    with pytest.raises(InvalidValueError, match=match):
        f(np.arange(3.0))


def test_isfinite_check_fires_and_the_argument_overrides_the_flag():
    x = tt.dvector("x")
    y = tt.log(x)
    with pytest.raises(InvalidValueError, match="1 nan/inf value.*check_isfinite"):
        tg.function([x], y, mode=quiet())([0.0, 1.0])
    assert np.isneginf(tg.function([x], y, mode=quiet(check_isfinite=False))([0.0, 1.0])[0])
    with config.change_flags(DebugMode__check_finite=False):
        assert np.isneginf(tg.function([x], y, mode=quiet())([0.0, 1.0])[0])
        with pytest.raises(InvalidValueError):
            tg.function([x], y, mode=quiet(check_isfinite=True))([0.0, 1.0])


@pytest.mark.parametrize("how, kind, match", [
    ("reuses_buffer_badly", "previous", "preallocated 'previous' output buffer"),
    ("assumes_buffer_size", "wrong_size", "failed when its output cells held a "
                                          "preallocated 'wrong_size' buffer"),
])
def test_preallocated_output_checks(how, kind, match):
    x = tt.dvector("x")
    y = Unary(how)(x)
    f = tg.function([x], y, mode=quiet())
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])  # not checked: passes
    f = tg.function([x], y, mode=quiet(check_preallocated_output=kind))
    with pytest.raises(BadThunkOutput, match=match):
        f(np.arange(3.0))
    with config.change_flags(DebugMode__check_preallocated_output=kind):
        with pytest.raises(BadThunkOutput, match=match):
            tg.function([x], y, mode=quiet())(np.arange(3.0))


def test_preallocated_buffer_kinds():
    ref = np.arange(6.0).reshape(2, 3)
    assert preallocated_buffers("initial", ref, 4) == [None]
    (f,) = preallocated_buffers("f_contiguous", ref, 4)
    assert f.flags.f_contiguous and not f.flags.c_contiguous and f.shape == (2, 3)
    (s,) = preallocated_buffers("strided", ref, 4)
    assert s.shape == (2, 3) and not s.flags.c_contiguous
    assert [b.shape for b in preallocated_buffers("wrong_size", ref, 4)] == [(3, 4), (1, 2)]
    assert preallocated_buffers("strided", ref, 1) is None  # ndim limit
    with pytest.raises(ValueError, match="check_preallocated_output: unknown kind 'bogus'"):
        DebugMode(check_preallocated_output="bogus")


def _install_rewriter(monkeypatch, fn):
    """Make every Mode rewrite with ``fn(fgraph)`` (recorded in a RewriteHistory)."""
    def rewriter(fgraph, mode):
        if getattr(fgraph, "rewrite_history", None) is None:
            fgraph.attach_feature(RewriteHistory())
        fn(fgraph)
    monkeypatch.setattr(mode_module, "_rewriter", rewriter)


def test_bad_optimization_names_the_rewrite_and_both_values(monkeypatch):
    def wrong_rewrite(fgraph):
        for node in fgraph.toposort():
            if node.op == tt.exp(tt.dvector()).owner.op:
                fgraph.replace(node.outputs[0], tt.log(node.inputs[0]),
                               reason="exp_is_log_bug")

    _install_rewriter(monkeypatch, wrong_rewrite)
    x = tt.dvector("x")
    y = tt.exp(x) + 1  # the replaced expression
    f = tg.function([x], y, mode=quiet())
    with pytest.raises(BadOptimization) as info:
        f(np.array([1.0, 2.0]))
    err = info.value
    assert err.step.name == "exp_is_log_bug"
    np.testing.assert_allclose(err.old_value, np.exp([1.0, 2.0]))
    np.testing.assert_allclose(err.new_value, np.log([1.0, 2.0]))
    text = str(err)
    assert "rewrite exp_is_log_bug" in text and "largest difference" in text
    assert "y = tt.exp(x) + 1" in text
    # the same graph without the check runs (wrongly, as the rewrite says)
    g = tg.function([x], y, mode=quiet(check_optimizations=False))
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), np.log([1.0, 2.0]) + 1)


def test_correct_rewrites_and_stabilizations_pass():
    x = tt.fvector("x")
    p = tt.sigmoid(x)
    y = tt.log(1 - p) + tt.log(p)  # overflows for big |x|; rewritten into softplus forms
    f = tg.function([x], y, mode=quiet(check_isfinite=False))
    out = f(np.array([-200.0, 0.0, 200.0], dtype="float32"))
    assert np.isfinite(out).all()


def test_stochastic_order(monkeypatch):
    calls = []

    def unstable_rewrite(fgraph):
        calls.append(1)
        (out,) = fgraph.outputs
        x = out.owner.inputs[0]
        replacement = x + x if len(calls) % 2 else x * 2  # same values, other graphs
        fgraph.replace(out, replacement, reason="unstable")

    _install_rewriter(monkeypatch, unstable_rewrite)
    x = tt.dvector("x")
    with pytest.raises(StochasticOrder, match="attempt 2 of 3"):
        tg.function([x], x * 2, mode=DebugMode(patience=3))
    calls.clear()
    f = tg.function([x], x * 2, mode=DebugMode(patience=1))  # no repeat: no check
    assert f([1.0]).tolist() == [2.0]


def test_patience_flag_is_the_default():
    with config.change_flags(DebugMode__patience=4):
        assert DebugMode().patience == 4
        assert DebugMode(patience=2).patience == 2


def test_compare_uses_dtype_tolerances():
    a = np.array([1.0, 2.0], dtype="float32")
    assert compare(a, a + np.float32(1e-6)) is None
    assert compare(a.astype("float64"), a.astype("float64") + 1e-5) is not None
    assert "shapes differ" in compare(a, a[:1])["text"]
    assert compare(np.array([np.nan]), np.array([np.nan])) is None


def test_named_mode_and_import_paths():
    from tensorgraph.compile import DebugMode as exported

    assert exported is DebugMode
    assert isinstance(tg.compile.get_mode("DebugMode"), DebugMode)
    x = tt.dvector("x")
    assert tg.function([x], x * 2, mode="DebugMode")([1.0]).tolist() == [2.0]


@pytest.mark.skipif(not linkers.is_registered("c|py_nogc"), reason="the C linkers are not built")
def test_real_c_thunks_are_compared_with_perform():
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(x) * 2 + 1, mode=quiet())
    kinds = {str(getattr(t, "kind", "")) for t in
             linkers.get_linker("c|py_nogc").make_vm(f.maker.fgraph).thunks}
    assert "c" in kinds
    np.testing.assert_allclose(f([0.0, 1.0]), np.exp([0.0, 1.0]) * 2 + 1)


# ----------------------------------------------------------------------------------------------
# The seed programs give the same results in every debugging mode

import test_logreg as logreg  # noqa: E402  (modules, not their tests: nothing collected twice)
import test_tutorial_programs as tutorial  # noqa: E402

#: tutorial sections; the printing one pins the FAST_COMPILE graph's text, not a result
TUTORIAL = sorted(name for name in vars(tutorial) if name.startswith("test_")
                  and name != "test_printing_the_logistic_regression_graph")


@pytest.mark.parametrize("mode", ["FAST_RUN", "DebugMode", "NanGuardMode", "MonitorMode"])
def test_tutorial_programs_in_every_mode(mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in TUTORIAL:
            with config.change_flags(mode=mode):
                getattr(tutorial, name)()


def _train(mode, steps):
    with config.change_flags(**dict(logreg.FLAGS, mode=mode)), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = logreg.build()
        for _ in range(steps):
            prediction, xent = g["train"](*g["D"])
        return prediction, xent, g["w"].get_value(), g["b"].get_value()


@pytest.mark.parametrize("mode, steps", [("DebugMode", 3), ("NanGuardMode", 30),
                                         ("MonitorMode", 30)])
def test_seed_logistic_regression_matches_fast_compile_and_fast_run(mode, steps):
    """DebugMode runs 3 training steps (it checks every node and rewrite on every call)."""
    results = [_train(m, steps) for m in ("FAST_COMPILE", "FAST_RUN", mode)]
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_lazy_ifelse_is_checked_without_computing_the_branch_not_taken():
    from tensorgraph.ifelse import ifelse

    a, b, x = tt.dscalar("a"), tt.dscalar("b"), tt.dvector("x")
    z = ifelse(tt.lt(a, b), tt.exp(x).sum(), tt.log(x).sum())  # log(0) only if taken
    f = tg.function([a, b, x], z, mode=DebugMode(patience=2, check_preallocated_output="ALL"))
    assert f(1.0, 2.0, np.array([0.0, 1.0])) == pytest.approx(1.0 + np.e)
    with pytest.raises(InvalidValueError, match="nan/inf"):
        f(3.0, 2.0, np.array([0.0, 1.0]))


class TwiceWithWrongC(COp):
    """perform doubles; the C code triples (the bug DebugMode must find)."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = 2 * inputs[0]

    def c_code(self, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return f"""
        if (tg_alloc({z}, 1, {x}->shape, TG_FLOAT64, {sub['ctx']})) {{ {sub['fail']} }}
        for (int64_t i = 0; i < {x}->shape[0]; i++)
            ((double *){z}->data)[i] = 3 * *(double *)({x}->data + i * {x}->strides[0]);
        """

    def c_code_cache_version(self):
        return (1,)


@pytest.mark.skipif(not linkers.is_registered("c|py_nogc"), reason="the C linkers are not built")
def test_real_c_code_disagreeing_with_perform_is_reported():
    x = tt.dvector("x")
    y = TwiceWithWrongC()(x)
    with pytest.raises(BadThunkOutput, match="py and c implementations of TwiceWithWrongC"):
        tg.function([x], y, mode=quiet())(np.array([1.0, 2.0]))


# ----------------------------------------------------------------------------------------------
# The C thunks are held to destroy_map / view_map too; BadOptimization past the float range


class CubeWritingItsInput(COp):
    """The ScaledCubeC of docs/c_backend.md whose C also writes into its input x (undeclared):
    perform is right, so only checking the C thunk finds it."""

    __props__ = ("how",)

    def __init__(self, how):
        self.how = how

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        output_storage[0][0] = x ** 3

    def c_code(self, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        if self.how == "writes_input":
            tail = f"*(double *)({x}->data) = 12345.0;"
            body = f"""
            if (tg_alloc({z}, 1, {x}->shape, TG_FLOAT64, {sub['ctx']})) {{ {sub['fail']} }}
            for (int64_t i = 0; i < {x}->shape[0]; i++) {{
                double v = *(double *)({x}->data + i * {x}->strides[0]);
                ((double *){z}->data)[i] = v * v * v;
            }}"""
        else:  # returns its input, cubed in place, as its output: an undeclared view
            tail = ""
            body = f"""
            for (int64_t i = 0; i < {x}->shape[0]; i++) {{
                double *p = (double *)({x}->data + i * {x}->strides[0]);
                *p = *p * *p * *p;
            }}
            tg_view({z}, {x});"""
        return body + tail

    def c_code_cache_version(self):
        return (1,)


@pytest.mark.skipif(not linkers.is_registered("c|py_nogc"), reason="the C linkers are not built")
def test_a_c_kernel_writing_an_undeclared_input_is_a_bad_destroy_map():
    x = tt.dvector("x")
    f = tg.function([x], CubeWritingItsInput("writes_input")(x) * 2, mode=quiet())
    with pytest.raises(BadDestroyMap, match=r"the c implementation of CubeWritingItsInput.* "
                                            r"changed its input 0 \(x\)"):
        f(np.array([1.0, 2.0]))


@pytest.mark.skipif(not linkers.is_registered("c|py_nogc"), reason="the C linkers are not built")
def test_a_c_kernel_returning_an_undeclared_view_is_a_bad_view_map():
    x = tt.dvector("x")
    f = tg.function([x], CubeWritingItsInput("views_input")(x) * 2, mode=quiet())
    with pytest.raises((BadViewMap, BadDestroyMap), match="the c implementation"):
        f(np.array([1.0, 2.0]))


def test_bad_optimization_is_checked_where_values_are_finite_beside_an_overflow(monkeypatch):
    """A wrong rewrite used to pass as soon as the replaced value held one inf anywhere."""
    def wrong_rewrite(fgraph):
        for node in fgraph.toposort():
            if node.op == tt.exp(tt.dvector()).owner.op:
                fgraph.replace(node.outputs[0], tt.exp(node.inputs[0]) * 1.5,
                               reason="exp_times_1_5_bug")

    _install_rewriter(monkeypatch, wrong_rewrite)
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(x) + 1, mode=quiet(check_isfinite=False))
    with pytest.raises(BadOptimization, match="exp_times_1_5_bug.*largest difference"):
        f(np.array([1000.0, 1.0]))  # exp(1000) is inf: position 1 is still compared


def test_bad_optimization_when_a_finite_value_becomes_nan(monkeypatch):
    def nan_rewrite(fgraph):
        for node in fgraph.toposort():
            if node.op == tt.exp(tt.dvector()).owner.op:
                x = node.inputs[0]
                fgraph.replace(node.outputs[0], tt.exp(x) * (x / x), reason="adds_nan_bug")

    _install_rewriter(monkeypatch, nan_rewrite)
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(x) + 1, mode=quiet(check_isfinite=False))
    with pytest.raises(BadOptimization, match=r"adds_nan_bug.*1 finite value\(s\) became nan"):
        f(np.array([1000.0, 0.0]))  # x/x is nan at 0, where exp(0) is finite


# ----------------------------------------------------------------------------------------------
# DebugMode's own checking code on ordinary graphs (issue 19)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_rewrites_are_verified_on_sums_along_any_axis(axis):
    """The cancellation check of a Sum compares it with its input's magnitudes summed over the
    same axes (it broadcast the input against the result and failed: "operands could not be
    broadcast together")."""
    x = tt.dmatrix("x")
    v = np.random.default_rng(0).standard_normal((7, 5))
    outputs = [tt.logsumexp(x, axis=axis), x.mean(axis=axis), tt.var(x, axis=axis),
               tt.std(x, axis=axis), x - x.mean(axis=axis, keepdims=True),
               tg.grad(tt.logsumexp(x, axis=axis).sum(), x)]
    got = tg.function([x], outputs, mode=quiet())(v)
    expected = tg.function([x], outputs, mode="FAST_COMPILE")(v)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
def test_a_wrong_rewrite_of_a_sum_along_an_axis_is_reported(monkeypatch, axis):
    sum_op = tt.dmatrix().sum(axis=axis).owner.op

    def wrong_rewrite(fgraph):
        for node in fgraph.toposort():
            if node.op == sum_op:
                fgraph.replace(node.outputs[0], sum_op(node.inputs[0]) * 1.5,
                               reason="sum_times_1_5_bug")

    _install_rewriter(monkeypatch, wrong_rewrite)
    x = tt.dmatrix("x")
    f = tg.function([x], x.sum(axis=axis) + 1, mode=quiet())
    with pytest.raises(BadOptimization, match="sum_times_1_5_bug"):
        f(np.random.default_rng(0).standard_normal((7, 5)))


def test_sum_cancellation_marks_the_reduced_positions():
    from tensorgraph.compile.debugmode import _cancelled

    x = tt.dmatrix("x")
    s = x.sum(axis=1)
    value = np.array([[1.0, -1.0, 1e-3], [1.0, 2.0, 3.0]])
    cancelled = _cancelled(s.owner, s, value.sum(axis=1), [value])
    np.testing.assert_array_equal(cancelled, [False, False])
    value[0, 2] = 1e-17
    cancelled = _cancelled(s.owner, s, value.sum(axis=1), [value])
    np.testing.assert_array_equal(cancelled, [True, False])


def test_gradients_of_sums_and_means_over_length_one_axes():
    """Elemwise{second}'s perform returned its input when the shapes matched (BadViewMap)."""
    x, m = tt.dvector("x"), tt.dmatrix("m")
    outputs = [tg.grad(x.sum(), x), tg.grad(x.mean(), x), tg.grad(m.mean(axis=1).sum(), m),
               tg.grad(m.mean(axis=0).sum(), m)]
    got = tg.function([x, m], outputs, mode=quiet())(np.array([3.0]), np.ones((4, 1)))
    for g, e in zip(got, [[1.0], [1.0], np.ones((4, 1)), np.full((4, 1), 0.25)]):
        np.testing.assert_array_equal(g, e)


def test_elemwise_perform_never_returns_an_input():
    a, b = tt.dvector("a"), tt.dvector("b")
    node = tt.second(a, b).owner
    inputs = [np.zeros(3), np.arange(3.0)]
    storage = [[None]]
    node.op.perform(node, inputs, storage)
    np.testing.assert_array_equal(storage[0][0], inputs[1])
    assert not np.shares_memory(storage[0][0], inputs[1])


@pytest.mark.skipif(not linkers.is_registered("c|py_nogc"), reason="the C linkers are not built")
def test_a_c_view_of_a_constant_is_not_reported_as_new_memory():
    """C thunks read constants from the module's own copy, not from the cell DebugMode fills:
    a DimShuffle of a constant (mean over a static length-1 axis) warned that it "returned new
    memory"."""
    x = tt.tensor("float64", shape=(2, 1, 3), name="x")
    f = tg.function([x], x.mean(axis=2), mode=quiet())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(np.ones((2, 1, 3))), np.ones((2, 1)))


def test_an_empty_view_is_not_reported_as_new_memory():
    x = tt.dvector("x")
    f = tg.function([x], x[1:], mode=quiet())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(np.ones(1)).shape == (0,)


def test_a_users_rewrite_query_given_as_optimizer_is_checked():
    # PyTensor code: a node_rewriter tracking the function tt.add (its ops compare equal to
    # the function), put in a rewrite database, queried, and given to DebugMode(optimizer=)
    from tensorgraph.rewriting.basic import node_rewriter
    from tensorgraph.rewriting.db import EquilibriumDB

    @node_rewriter([tt.add])
    def add_becomes_sub_bug(fgraph, node):
        if node.op == tt.add:
            return [tt.sub(*node.inputs)]
        return None

    db = EquilibriumDB()
    db.register("add_becomes_sub_bug", add_becomes_sub_bug, "all")
    x, y = tt.dvector("x"), tt.dvector("y")
    f = tg.function([x, y], x + y, mode=DebugMode(optimizer=db.query("+all"), patience=1))
    assert [n.op for n in f.maker.fgraph.toposort()] == [tt.sub(x, y).owner.op]
    with pytest.raises(BadOptimization) as info:
        f(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert info.value.reason == "add_becomes_sub_bug"


class _OverlappingHalves(Op):
    """Two outputs that are overlapping views of one new array (declared as nothing)."""

    __props__ = ()

    def make_node(self, a):
        a = tt.as_tensor_variable(a)
        return Apply(self, [a], [a.type(), a.type()])

    def perform(self, node, inputs, output_storage):
        r = inputs[0] * 1
        output_storage[0][0] = r[:-1]
        output_storage[1][0] = r[1:]


def test_outputs_sharing_memory_are_a_bad_view_map_when_both_are_read_later():
    from tensorgraph.compile.debugmode import BadViewMap

    x = tt.dvector("x")
    first, second = _OverlappingHalves()(x)
    f = tg.function([x], first * 2 + second * 2, mode=quiet())
    with pytest.raises(BadViewMap, match="outputs 0 and 1 of the py implementation of "
                                         "_OverlappingHalves share memory") as info:
        f(np.arange(4.0))
    assert info.value.output_index == 1
    # returned by the function only (outputs are copied), or only one of them read: fine
    first, second = _OverlappingHalves()(x)
    a, b = tg.function([x], [first, second], mode=quiet())(np.arange(4.0))
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(b, [1.0, 2.0, 3.0])
    first, _ = _OverlappingHalves()(x)
    np.testing.assert_array_equal(tg.function([x], first * 2, mode=quiet())(np.arange(4.0)),
                                  [0.0, 2.0, 4.0])
