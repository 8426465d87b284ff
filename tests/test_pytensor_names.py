"""Names PyTensor and Theano code types, kept so that it ports by changing the imports:
mode names, rewrite queries and rewrite_graph, graph comparison helpers, platform constants.
Each test states the behaviour PyTensor's documentation gives the name."""

import math

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode, get_default_mode, get_mode
from tensorgraph.graph import FunctionGraph, equal_computations
from tensorgraph.rewriting import EquilibriumDB, RewriteDatabaseQuery, node_rewriter
from tensorgraph.rewriting.optdb import optdb


def _ops(f):
    return [type(getattr(n.op, "scalar_op", n.op)).__name__ for n in f.maker.fgraph.toposort()]


# -- mode names ---------------------------------------------------------------------------


def test_mode_names_are_case_insensitive_and_include_pytensors_c_modes():
    assert get_mode("fast_run") == get_mode("FAST_RUN")
    assert get_mode("fast_compile") == get_mode("FAST_COMPILE")
    cvm = get_mode("CVM")
    assert cvm.optimizer == "fast_run" and cvm.provided_linker == "cvm"
    assert get_mode("cvm") == cvm
    c = get_mode("C")
    assert c.optimizer == "fast_run" and c.provided_linker == "c"
    assert type(get_mode("debugmode")).__name__ == "DebugMode"
    x = tt.dvector("x")
    for name in ("CVM", "C", "fast_run"):
        f = tg.function([x], 2 * x, mode=name)
        np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])


def test_get_default_mode_is_config_mode_with_the_flag_tags():
    with tg.config.change_flags(mode="FAST_COMPILE", optimizer_excluding="fusion"):
        mode = get_default_mode()
        assert mode.optimizer == "fast_compile" and mode.rewrite_excluding == ("fusion",)
    assert get_default_mode() == get_mode(None)
    from tensorgraph.compile import get_default_mode as exported

    assert exported is get_default_mode


def test_config_mode_takes_pytensors_spellings():
    with tg.config.change_flags(mode="fast_compile"):
        assert tg.config.mode == "FAST_COMPILE"
        assert get_default_mode().optimizer == "fast_compile"
    with tg.config.change_flags(mode="cvm"):
        assert tg.config.mode == "CVM" and get_default_mode().provided_linker == "cvm"
    with pytest.raises(Exception, match="mode"):
        with tg.config.change_flags(mode="fastest_run"):
            pass


def test_modes_tensorgraph_does_not_have_say_so():
    with pytest.raises(NotImplementedError, match="MLX.*not yet available"):
        get_mode("MLX")
    with pytest.raises(ValueError, match="unknown mode 'FASTER'"):
        get_mode("FASTER")


# -- rewrite queries ------------------------------------------------------------------------


def test_mode_takes_a_rewrite_database_query():
    x = tt.dvector("x")
    y = tt.log(1 + tt.exp(x))
    f = tg.function([x], y, mode=Mode("py", RewriteDatabaseQuery(include=["fast_run"])))
    assert _ops(f) == ["Softplus"]
    # include=[None] (a PyTensor idiom) selects no rewrite at all
    g = tg.function([x], y, mode=Mode("py", RewriteDatabaseQuery(include=[None])))
    assert _ops(g) == ["DimShuffle", "Exp", "Add", "Log"]  # the constant's broadcast stays
    np.testing.assert_allclose(f([0.5]), g([0.5]))
    assert "RewriteDatabaseQuery" in repr(Mode("py", RewriteDatabaseQuery(include=[None])))
    with pytest.raises(TypeError, match="RewriteDatabaseQuery"):
        Mode("py", optimizer=3)


def test_a_query_changed_after_creation_is_used_as_it_is_now():
    x = tt.dvector("x")
    y = tt.log(1 + tt.exp(x))
    query = RewriteDatabaseQuery(include=["fast_run"])
    mode = Mode("py", query)
    query.position_cutoff = 1.01  # merge and canonicalize only: no stabilize (1.5)
    assert _ops(tg.function([x], y, mode=mode)) == ["Exp", "Add", "Log"]
    query.position_cutoff = 1.51  # PyTensor's cutoff "through stabilize" means the same here
    assert _ops(tg.function([x], y, mode=mode)) == ["Softplus"]
    assert query.position_cutoff == 1.51 and "position_cutoff=1.51" in str(query)
    assert optdb.query(include=["fast_run"], position_cutoff=None) is not None


def test_database_queries_in_pytensors_string_form():
    @node_rewriter([tt.elemwise.Elemwise])
    def exp_to_neg(fgraph, node):
        if type(node.op.scalar_op).__name__ == "Exp":
            return [-node.inputs[0]]
        return None

    db = EquilibriumDB()
    db.register("exp_to_neg", exp_to_neg, "mine")
    assert db.query("+mine") is not None
    assert db.query("+mine", "-exp_to_neg") is None
    assert db.query(include=["mine"]) is not None
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(x), mode=Mode("py", optimizer=db.query("+mine")))
    np.testing.assert_array_equal(f([1.0, 2.0]), [-1.0, -2.0])
    with pytest.raises(TypeError, match="tags do not apply"):
        Mode("py", optimizer=db.query("+mine")).excluding("fusion")


def test_mode_register_adds_a_graph_rewriter_among_the_phases():
    from tensorgraph.rewriting import graph_rewriter

    seen = []

    @graph_rewriter
    def count_nodes(fgraph):
        seen.append(len(fgraph.apply_nodes))

    x = tt.dvector("x")
    mode = Mode("py", "fast_run").register((count_nodes, 1.2))
    assert isinstance(mode.optimizer, RewriteDatabaseQuery)
    tg.function([x], tt.log(1 + tt.exp(x)), mode=mode)
    assert seen == [3]  # after canonicalize, before stabilize made one softplus of the three
    assert mode.optdb is optdb


def test_queries_compare_by_content_and_refuse_a_string():
    a = RewriteDatabaseQuery(include=["fast_run"], exclude=["inplace"])
    assert a == RewriteDatabaseQuery(["fast_run"], exclude=["inplace"])
    assert a.including("x").include == {"fast_run", "x"}
    assert a.excluding("fast_run").position_cutoff == math.inf
    with pytest.raises(TypeError, match="collection of tags"):
        RewriteDatabaseQuery("fast_run")
    assert RewriteDatabaseQuery(include=None).include == frozenset()


def test_local_dimshuffle_lift_is_local_dimshuffle():
    from tensorgraph.tensor.rewriting import basic

    assert basic.local_dimshuffle_lift is basic.local_dimshuffle
    x = tt.dmatrix("x")
    y = x.T.T + 1
    kept = tg.function([x], y, mode=Mode("py", "fast_run").excluding("local_dimshuffle_lift"))
    assert _ops(kept).count("DimShuffle") == 2
    assert "DimShuffle" not in _ops(tg.function([x], y, mode=Mode("py", "fast_run")))


# -- rewrite_graph, is_same_graph, equal_computations ----------------------------------------


def test_rewrite_graph_canonicalizes_by_default_and_takes_query_arguments():
    from tensorgraph.graph import rewrite_graph

    x = tt.dvector("x")
    y = tt.log(1 + tt.exp(x)) * 1
    canon = rewrite_graph(y, clone=True)
    assert type(canon.owner.op.scalar_op).__name__ == "Log"      # * 1 is gone, no softplus
    stable = rewrite_graph(y, include=("canonicalize", "stabilize"), clone=True)
    assert type(stable.owner.op.scalar_op).__name__ == "Softplus"
    none = rewrite_graph(y, include=("canonicalize", "stabilize"), exclude=("stabilize",),
                         clone=True)
    assert equal_computations([none], [canon])
    a, b = rewrite_graph([x * 1, x + 0], clone=True)
    assert a is x and b is x
    fg = FunctionGraph(outputs=[y])
    assert rewrite_graph(fg) is fg and len(fg.apply_nodes) == 3
    with pytest.raises(TypeError, match="expected variables"):
        rewrite_graph([x, 3])


def test_rewrite_graph_edits_the_given_graph_unless_cloned():
    from tensorgraph.rewriting import rewrite_graph

    x = tt.dvector("x")
    inner = x * 1
    y = tt.exp(inner)
    rewrite_graph(y, clone=True)
    assert y.owner.inputs[0] is inner
    out = rewrite_graph(y)
    assert out is y and y.owner.inputs[0] is x


def test_is_same_graph_with_givens():
    from tensorgraph.rewriting.utils import is_same_graph

    x, y = tt.dvector("x"), tt.dvector("y")
    assert is_same_graph(x + 1, x + 1)
    assert not is_same_graph(x + 1, y + 1)
    assert is_same_graph(x + 1, y + 1, givens={x: y})
    assert not is_same_graph(x + 1, 1 + x)


def test_equal_computations():
    x, y = tt.dvector("x"), tt.dvector("y")
    a = tt.exp(x) + 1
    assert equal_computations([a], [tt.exp(x) + 1])
    assert not equal_computations([a], [tt.exp(y) + 1])
    assert equal_computations([a], [tt.exp(y) + 1], in_xs=[x], in_ys=[y])
    assert not equal_computations([a], [tt.exp(x) + 2])
    assert not equal_computations([a], [a], in_xs=[x], in_ys=[y])
    assert not equal_computations([x], [tt.fvector("x")])
    with pytest.raises(ValueError, match="xs"):
        equal_computations([a], [])
    deep_x, deep_y = x, x
    for _ in range(5000):  # no recursion limit
        deep_x, deep_y = deep_x + 1, deep_y + 1
    assert equal_computations([deep_x], [deep_y])


def test_function_graph_from_outputs_and_remove_output():
    x, y = tt.dvector("x"), tt.dvector("y")
    a, b, c = tt.exp(x), tt.log(y), x + y
    fg = FunctionGraph(outputs=[a, b, c], clone=False)
    assert set(fg.inputs) == {x, y}
    fg.remove_output(1)
    assert fg.outputs == [a, c]
    assert b.owner not in fg.apply_nodes
    fg.check_integrity()
    fg.remove_output(-1)
    assert fg.outputs == [a] and c.owner not in fg.apply_nodes
    fg.check_integrity()
    with pytest.raises(IndexError, match="1 outputs"):
        fg.remove_output(3)
    kept_inputs = FunctionGraph(outputs=[a], copy_inputs=False)
    assert kept_inputs.inputs == [x] and kept_inputs.outputs[0] is not a


# -- helpers PyTensor code imports ------------------------------------------------------------


def test_platform_constants():
    from tensorgraph.utils import LOCAL_BITWIDTH, PYTHON_INT_BITWIDTH

    assert LOCAL_BITWIDTH == np.dtype(np.intp).itemsize * 8
    assert PYTHON_INT_BITWIDTH == np.array([1]).dtype.itemsize * 8
    assert tg.shared(1).type.dtype == f"int{PYTHON_INT_BITWIDTH}"


def test_method_not_defined_is_a_not_implemented_error():
    from tensorgraph.graph.utils import MethodNotDefined

    with pytest.raises(NotImplementedError):
        raise MethodNotDefined("no C for complex64")


def test_str_diagnostic_describes_the_largest_difference():
    from tensorgraph.compile.debugmode import str_diagnostic

    text = str_diagnostic(np.arange(4.0), np.arange(4.0) + [0, 0, 1e-3, 0], 1e-5, 1e-8)
    assert "largest absolute difference 0.001 at index (2,)" in text
    assert "1 of 4 elements differ" in text
    assert "shape (2,)" in str_diagnostic([1, 2], [1, 2, 3], 1e-5, 1e-8)


# -- function: values, stateful inputs, flags, dumps --------------------------------------------


def test_plain_python_values_that_fit_are_accepted():
    v, s = tt.ivector("v"), tt.fscalar("s")
    assert tg.function([v], v * 2)([6]).tolist() == [12]
    assert tg.function([s], s * 2)(3.5) == 7.0
    b = tt.bvector("b")
    f = tg.function([b], b + 1)
    assert f([6]).tolist() == [7]
    with pytest.raises(OverflowError, match="out of the range"):
        f([312])                       # does not fit int8: numpy's and PyTensor's error
    with tg.config.change_flags(floatX="float64"):
        with pytest.raises(TypeError, match="lose precision"):
            tg.function([s], s)(0.1)   # 0.1 is not a float32 number
    with pytest.raises(TypeError, match="lose precision"):
        tg.function([v], v)(np.array([6], dtype="int64"))   # arrays keep the dtype rule


def test_in_with_update_keeps_state_between_calls():
    from tensorgraph.compile.sharedvalue import Container

    a = tt.dscalar("a")
    state = Container(a, storage=[np.array(0.0)])
    f = tg.function([tg.In(a, value=state, implicit=True, update=a + 1)], a)
    assert [float(f()) for _ in range(3)] == [0.0, 1.0, 2.0]
    assert float(state.storage[0]) == 3.0
    explicit = tg.function([tg.In(a, value=10.0, update=a * 2)], a)
    assert [float(explicit()) for _ in range(3)] == [10.0, 20.0, 40.0]
    assert float(explicit(1.0)) == 1.0 and float(explicit()) == 2.0   # a given value, updated
    shared = tg.shared(1.0)
    swap = tg.function([tg.In(a, value=Container(a, [np.array(0.0)]), update=shared)], [],
                       updates={shared: a})
    for i in range(4):
        swap()
        assert shared.get_value() == i % 2
    with pytest.raises(TypeError, match="has type"):
        tg.In(a, update=tt.dvector("b"))
    with pytest.raises(TypeError, match="explicit input"):
        tg.function([tg.In(shared, update=shared + 1)], [])


def test_function_argument_checks():
    a, b = tt.lscalar("a"), tg.shared(1)
    with pytest.raises(TypeError, match="as a list"):
        tg.function({a}, a + b)
    with pytest.raises(TypeError, match="no_default_updates"):
        tg.function([a], a + b, no_default_updates=1)
    with pytest.raises(TypeError, match="pairs"):
        tg.function([a], a + b, updates=[{b, a}])
    from tensorgraph.gradient import grad_not_implemented, grad_undefined

    x = tt.dvector("x")
    with pytest.raises(TypeError, match="undefined gradient"):
        tg.function([x], grad_not_implemented(tt.exp(x).owner.op, 0, x),
                    on_unused_input="ignore")
    with pytest.raises(TypeError, match="undefined gradient"):
        tg.function([x], grad_undefined(tt.exp(x).owner.op, 0, x), on_unused_input="ignore")


def test_rebuild_strict_and_trust_input():
    x = tt.fvector("x")
    y = x * 2
    d = tt.dvector("d")
    with pytest.raises(TypeError, match="rebuild_strict"):
        tg.function([d], y, givens={x: d})
    f = tg.function([d], y, givens={x: d}, rebuild_strict=False)
    out = f([1.0, 2.0])
    assert out.dtype == np.float64 and out.tolist() == [2.0, 4.0]
    g = tg.function([d], d + 1, trust_input=True)
    assert g.trust_input and g(np.array([1.0])).tolist() == [2.0]


def test_function_dprint_and_function_dump(tmp_path):
    import pickle

    from tensorgraph.compile import function_dump

    x = tt.dvector("x")
    w = tg.shared(np.array([1.0, 2.0]), name="w")
    f = tg.function([x], (x * w).sum(), updates={w: w + 1})
    text = f.dprint(file="str")
    assert "update of w" in text and text == tg.printing.debugprint(f, file="str")
    path = tmp_path / "case.pkl"
    function_dump(str(path), [x], (x * w).sum(), updates={w: w + 1}, mode="FAST_COMPILE")
    with open(path, "rb") as fh:
        arguments = pickle.load(fh)
    again = tg.function(**arguments)
    assert again([1.0, 1.0]) == 3.0
    with pytest.raises(TypeError, match="not arguments"):
        function_dump(str(path), [x], x, speed="max")


def test_verify_grad_broadcasts_size_one_dimensions_and_takes_zero_gradients():
    from tensorgraph.gradient import verify_grad

    rng = np.random.default_rng(3)
    verify_grad(lambda a, b: a * b, [rng.random((3, 5)), rng.random((1, 5))], rng=rng)
    for op in (tt.floor, tt.sign):
        verify_grad(op, [rng.random((3, 4)) + 0.1], rng=rng)


# -- linker and op classes users construct ----------------------------------------------------


def test_linker_classes_stand_for_tensorgraph_linkers():
    from tensorgraph.link.basic import CLinker, OpWiseCLinker, PerformLinker, VMLinker

    expected = {PerformLinker(): "py", VMLinker(c_thunks=False): "vm",
                VMLinker(use_cloop=True): "cvm", VMLinker(allow_gc=False, use_cloop=True):
                "cvm_nogc", CLinker(): "c", OpWiseCLinker(): "c|py"}
    x = tt.dvector("x")
    for linker, name in expected.items():
        assert linker.name == name
        mode = Mode(linker=linker, optimizer="fast_run")
        assert mode.linker_name == name and mode == Mode(name, "fast_run")
        np.testing.assert_allclose(tg.function([x], tt.exp(x), mode=mode)([0.0]), [1.0])
    assert VMLinker(use_cloop=True).clone(allow_gc=False).name == "cvm_nogc"
    with pytest.raises(NotImplementedError, match="MonitorMode"):
        VMLinker(callback=print)


def test_check_and_raise_raises_the_exception_it_is_given():
    from tensorgraph.raise_op import Assert, CheckAndRaise, assert_op

    x = tt.dvector("x")
    y = CheckAndRaise(NotImplementedError, "x must be positive")(x, tt.all(x > 0))
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        f = tg.function([x], y * 2, mode=mode)
        np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
        with pytest.raises(NotImplementedError, match="x must be positive"):
            f([-1.0])
    assert isinstance(assert_op(x, tt.all(x > 0)).owner.op, CheckAndRaise)
    assert Assert("m").exc_type is AssertionError
    assert CheckAndRaise(ValueError, "a") == CheckAndRaise(ValueError, "a")
    assert CheckAndRaise(ValueError, "a") != CheckAndRaise(KeyError, "a")
    with pytest.raises(TypeError, match="exception class"):
        CheckAndRaise("ValueError", "a")


def test_as_op_and_deep_copy_op():
    from tensorgraph.compile.ops import DeepCopyOp, as_op, deep_copy_op

    @as_op(itypes=[tt.dmatrix], otypes=[tt.dvector])
    def row_sums(a):
        return a.sum(axis=1)

    x = tt.dmatrix("x")
    f = tg.function([x], row_sums(x) * 2)
    np.testing.assert_array_equal(f(np.ones((2, 3))), [6.0, 6.0])
    with pytest.raises(TypeError, match="input 0 must have type"):
        row_sums(tt.dvector("v"))

    @as_op(itypes=[tt.dvector], otypes=[tt.dvector])
    def wrong(a):
        return a.reshape(1, -1)

    v = tt.dvector("v")
    with pytest.raises(TypeError, match="does not fit"):
        tg.function([v], wrong(v))([1.0])
    with pytest.raises(TypeError, match="must be types"):
        as_op(itypes=["float64"], otypes=[tt.dvector])
    copied = deep_copy_op(x)
    assert isinstance(copied.owner.op, DeepCopyOp)
    value = np.ones((2, 2))
    out = tg.function([x], copied, mode="FAST_RUN")(value)
    assert not np.shares_memory(out, value) and (out == value).all()
    g = tg.grad(deep_copy_op(x).sum(), x)
    np.testing.assert_array_equal(tg.function([x], g)(value), np.ones((2, 2)))


# -- features, aliases, ifelse views, generic values ------------------------------------------


def test_no_output_from_inplace_keeps_an_output_out_of_inplace_ops():
    from tensorgraph.compile.mode import AddFeatureOptimizer
    from tensorgraph.rewriting.destroyhandler import NoOutputFromInplace

    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    b, c = tt.tanh(tt.dot(x, y)), tt.tanh(tt.dot(2 * x, y))

    def destroyed(f):
        return [bool(o.owner.op.destroy_map) for o in f.maker.fgraph.outputs]

    assert destroyed(tg.function([x, y], [b, c], mode=Mode("py", "fast_run"))) == [True, True]
    mode = Mode("py", "fast_run").register((AddFeatureOptimizer(NoOutputFromInplace([1])), 6.5))
    f = tg.function([x, y], [b, c], mode=mode)
    assert destroyed(f) == [True, False]
    a = np.ones((2, 2))
    np.testing.assert_allclose(f(a, a)[1], np.tanh(4 * np.ones((2, 2))))
    assert str(Mode("py", None)) == "Mode(linker=py, optimizer=None)"


def test_pytensor_rewrite_names_are_aliases():
    x = tt.dvector("x")
    mode = Mode("py", "fast_run").excluding("inplace_elemwise_optimizer", "local_add_canonizer")
    f = tg.function([x], tt.exp(x) + 1, mode=mode)
    assert not any(n.op.destroy_map for n in f.maker.fgraph.toposort())
    assert RewriteDatabaseQuery(include=["local_mul_canonizer"]).include == {
        "local_mul_canonical"}


def test_ifelse_hands_out_the_chosen_input_unless_a_reader_overwrites_it():
    from tensorgraph.ifelse import IfElse, ifelse

    x, y, c = tt.dvector("x"), tt.dvector("y"), tt.iscalar("c")
    f = tg.function([c, x, y], ifelse(c, x, y), mode="FAST_RUN")
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, IfElse)]
    assert node.op.as_view
    vx = np.ones(3)
    out = f(1, vx, np.zeros(2))
    assert (out == vx).all() and not np.shares_memory(out, vx)   # outputs are still copies
    g = tg.function([c, x, y], tt.exp(ifelse(c, x * 2, y * 2)) + 1, mode="FAST_RUN")
    (node,) = [n for n in g.maker.fgraph.toposort() if isinstance(n.op, IfElse)]
    assert not node.op.as_view          # the exp+1 below writes into the if's output
    np.testing.assert_allclose(g(0, vx, vx), np.exp(2 * vx) + 1)
    compiled = tg.function([c, x, y], ifelse(c, x, y), mode="FAST_COMPILE")
    assert not [n for n in compiled.maker.fgraph.toposort() if n.op.view_map]


def test_generic_variables_hold_python_objects():
    from tensorgraph.graph.type import generic
    from tensorgraph.ifelse import ifelse

    x, y, c = generic(), generic(), tt.iscalar("c")
    f = tg.function([c, x, y], ifelse(c, x, y))
    assert f(1, ["testX"], ["testY"]) == ["testX"] and f(0, ["testX"], ["testY"]) == ["testY"]
    s = tg.shared("text", strict=True)
    assert s.type == generic
    s.set_value(88)
    assert s.get_value() == 88
    with pytest.raises(TypeError, match="cannot hold a value of type list"):
        tg.shared([1, 2, 3])


def test_profile_stats_takes_pytensors_arguments():
    from tensorgraph.compile.profiling import ProfileStats

    p = ProfileStats(False, gpu_checks=False)
    assert p.name == "" and p.print_at_exit is False
    assert ProfileStats(atexit_print=True).print_at_exit is True
    assert ProfileStats("mine").name == "mine"


def test_pytensors_top_level_names():
    from tensorgraph.compile.builders import OpFromGraph
    from tensorgraph.compile.ops import as_op
    from tensorgraph.gradient import Lop, Rop, pullback, pushforward

    assert (tg.Lop, tg.Rop, tg.pullback, tg.pushforward) == (Lop, Rop, pullback, pushforward)
    assert tg.OpFromGraph is OpFromGraph and tg.wrap_py is as_op and tg.as_op is as_op


def test_print_op_ids_and_get_node_by_id(capsys):
    from tensorgraph.printing import Print, char_from_number, get_node_by_id

    x = tt.dvector("x")
    shown = []
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        f = tg.function([x], Print("x is")(x) * 2, mode=mode)
        np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])
        assert "x is __str__ = [1. 2.]" in capsys.readouterr().out
    g = tg.function([x], Print("", global_fn=lambda op, v: shown.append(v.shape))(x).sum())
    g([1.0, 2.0, 3.0])
    assert shown == [(3,)]
    assert [char_from_number(n) for n in (0, 25, 26, 2080)] == ["A", "Z", "BA", "DCA"]
    z = tt.exp(x) + 1
    assert get_node_by_id(z, "B") is z.owner.inputs[0].owner
    assert get_node_by_id(z, "C") is x and get_node_by_id(z, "ZZ") is None
    assert get_node_by_id(z, 0, id_types="int") is z.owner


def test_pytensors_linear_algebra_names():
    """pytensor.tensor.linalg's public names (PyTensor 3.0's ``__all__``) but those listed as
    not yet in docs/linalg.md; nlinalg and slinalg keep the older import paths, with PyTensor
    3's DeprecationWarning; ``tt.linalg`` loads on first use."""
    import subprocess
    import sys

    from tensorgraph.tensor import linalg, nlinalg, slinalg

    pytensor_all = {
        "block_diag", "cho_solve", "cholesky", "det", "eig", "eigh", "eigvalsh", "expm", "inv",
        "kron", "lstsq", "lu", "lu_factor", "lu_solve", "matrix_dot", "matrix_power", "norm",
        "ordqz", "pinv", "pivot_to_permutation", "qr", "qz", "schur", "slogdet", "solve",
        "solve_continuous_lyapunov", "solve_discrete_are", "solve_discrete_lyapunov",
        "solve_sylvester", "solve_triangular", "svd", "tensorinv", "tensorsolve", "trace",
        "tridiagonal_lu_factor", "tridiagonal_lu_solve"}
    not_yet = {"tridiagonal_lu_factor", "tridiagonal_lu_solve"}
    assert sorted(pytensor_all - not_yet) == sorted(linalg.__all__)
    assert all(callable(getattr(linalg, n)) for n in linalg.__all__)
    with pytest.warns(DeprecationWarning, match="nlinalg.matrix_inverse moved: import it "
                                                "from tensorgraph.tensor.linalg"):
        assert nlinalg.matrix_inverse is linalg.inv
    with pytest.warns(DeprecationWarning, match="slinalg.cholesky moved"):
        assert slinalg.cholesky is linalg.cholesky
    with pytest.warns(DeprecationWarning, match="slinalg.ordqz moved"):
        assert slinalg.ordqz is linalg.ordqz
    with pytest.raises(AttributeError, match="has no attribute 'tridiagonal_lu_factor'"):
        slinalg.tridiagonal_lu_factor
    assert {"Cholesky", "Solve", "SolveTriangular", "CholeskySolve", "Expm", "BlockDiagonal",
            "LU", "LUFactor", "QR", "Eigvalsh", "PivotToPermutations"} <= set(dir(slinalg))
    assert {"MatrixInverse", "MatrixPinv", "Det", "SLogDet", "SVD", "Eig", "Eigh", "Lstsq",
            "KroneckerProduct"} <= set(dir(nlinalg))
    assert tt.linalg is linalg
    code = ("import sys, tensorgraph.tensor as tt; assert 'tensorgraph.tensor.linalg' not in "
            "sys.modules; tt.linalg.det; assert 'scipy.linalg' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
