"""Mode JAX: the whole graph as one jax.jit, against FAST_RUN on broad expression sets
(tests/backend_checks.py), and what a mode must do besides computing: shared variables,
updates, givens, profiles, random streams, the seed exercise, the tutorial programs, one
error for every op JAX cannot run, the rewrites it leaves out, its cache on disk."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import backend_checks as checks
import tensorgraph as tg
import tensorgraph.tensor as tt

pytest.importorskip("jax")

MODE = "JAX"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float_ops_match_fast_run(dtype):
    checks.check_unary_float(MODE, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1])
def test_binary_ops_over_broadcast_operands_match_fast_run(dtype, seed):
    checks.check_binary_float(MODE, dtype, seed)


def test_integer_and_bool_arithmetic_wraps_and_divides_as_numpy():
    checks.check_integer_ops(MODE)


def test_casts():
    checks.check_casts(MODE)


@pytest.mark.parametrize("dtype,seed", [("float32", 0), ("float64", 1), ("float64", 2)])
def test_reductions_along_every_axis_and_the_softmax_family(dtype, seed):
    checks.check_reductions(MODE, dtype, seed)


@pytest.mark.parametrize("dtype,seed", [("float32", 0), ("float64", 3)])
def test_products(dtype, seed):
    checks.check_products(MODE, dtype, seed)


@pytest.mark.parametrize("seed", [0, 1])
def test_shape_ops(seed):
    checks.check_shape_ops(MODE, seed)


def test_join_and_split_along_an_axis_given_as_an_input():
    checks.check_symbolic_join_axis(MODE)


@pytest.mark.parametrize("seed", [0, 1])
def test_indexing_read_set_and_increment(seed):
    checks.check_indexing(MODE, seed)


def test_an_index_out_of_range_is_an_index_error_naming_the_node():
    checks.check_index_out_of_range(MODE)


def test_ifelse_runs_only_the_side_taken():
    checks.check_ifelse(MODE)


def test_random_streams():
    checks.check_random_streams(MODE)


def test_shared_variables_updates_givens_and_borrow():
    checks.check_shared_updates_givens_borrow(MODE)


def test_profile_times_whole_calls_and_says_there_are_no_node_times():
    text = checks.check_profile(MODE)
    assert "JAX" in text


def test_seed_logistic_regression_trains_as_fast_run_in_float32():
    checks.check_logistic_regression(MODE)


def test_every_unsupported_op_in_one_error_at_compile_time():
    checks.check_unsupported_ops_listed(MODE, "JAX")


def test_tutorial_programs_compile_and_run():
    import test_tutorial_programs

    ran = checks.check_tutorial_programs(MODE, test_tutorial_programs)
    assert len(ran) >= 10


def test_sizes_from_input_values_compile_per_value():
    checks.check_sizes_from_input_values(MODE)


def test_a_size_from_a_float_value_is_a_clear_error():
    checks.check_size_from_a_float_value(MODE, "JAX")


def test_the_mode_leaves_out_c_only_blas_fusion_and_inplace_rewrites():
    f = checks.check_rewrites_left_out(MODE, {"blas", "c_only", "fusion", "inplace"})
    ops = {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    assert "Gemv" not in ops and "Dot" in ops
    assert all(not getattr(n.op, "destroy_map", None) for n in f.maker.fgraph.apply_nodes)
    x, w = tt.matrix("x"), tt.vector("w")
    fast = tg.function([x, w], tt.exp(tt.dot(x, w)) * 2 + 1, mode="FAST_RUN")
    assert "Gemv" in {type(n.op).__name__ for n in fast.maker.fgraph.apply_nodes}


def test_float32_graphs_stay_float32():
    checks.check_float32_stays_float32(MODE)


def test_the_program_text_is_the_jaxpr_and_stablehlo():
    x = tt.vector("x")
    f = tg.function([x], tt.tanh(x) * 2, mode=MODE)
    assert "function once to see the program" in f.vm.source()
    assert f.vm.seconds["compile"] == 0  # the size of x is open: compiled at the first call
    f(np.ones(3))
    text = f.vm.source()
    assert "tanh" in text and "stablehlo" in text and "float64[3]" in text
    assert f.vm.seconds["compile"] > 0
    v = tt.TensorType("float64", (4,))("v")
    g = tg.function([v], tt.exp(v).sum(), mode=MODE)
    assert g.vm.seconds["compile"] > 0  # static shapes: compiled while linking
    assert "exp" in g.vm.source()


def test_the_persistent_cache_lives_under_the_compiledir(run_python, tmp_path):
    code = (
        "import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt, os, time\n"
        "x = tt.vector('x')\n"
        "t = time.perf_counter()\n"
        "f = tg.function([x], tt.tanh(x) * 3 + tt.exp(x).sum(), mode='JAX')\n"
        "f(np.ones(4))\n"
        "import jax\n"
        "path = jax.config.jax_compilation_cache_dir\n"
        "print(path.startswith(tg.config.compiledir), len(os.listdir(path)) > 0)\n")
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'cache'}"}
    first = run_python("-c", code, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["True", "True"]


def test_a_missing_jax_names_the_extra(run_python):
    checks.check_missing_library_names_the_extra(run_python, "jax", MODE, "jax")


@settings(max_examples=20, deadline=None)
@given(graph=checks.random_graph_strategy(), seed=st.integers(0, 2 ** 16))
def test_random_graphs_match_perform(graph, seed):
    checks.check_random_graph(MODE, graph, seed)


def test_ops_the_rewrites_remove_run_too():
    checks.check_ops_the_rewrites_remove("jax")


def test_more_distributions():
    checks.check_more_distributions(MODE)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_of_a_transpose_contract_the_other_axis_and_match_fast_run(dtype):
    rng = np.random.default_rng(3)
    x, m, n = (tt.matrix(name, dtype=dtype) for name in "xmn")
    v, u = tt.vector("v", dtype=dtype), tt.vector("u", dtype=dtype)
    outputs = [tt.dot(x.T, v), tt.dot(u, x.T), tt.dot(x.T, m), tt.dot(n, x.T),
               tt.dot(m.T, x), tt.dot(n.T, m.T), tt.dot(x.T, x)]
    shapes = [(5, 3), (5, 4), (4, 3), (5,), (3,)]
    values = [rng.standard_normal(s).astype(dtype) for s in shapes]
    jax_f = tg.function([x, m, n, v, u], outputs, mode=MODE)
    fast = tg.function([x, m, n, v, u], outputs, mode="FAST_RUN")
    tol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(jax_f(*values), fast(*values)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    text = jax_f.vm.source()
    assert "contracting_dims = [0] x [0]" in text  # dot(x.T, v): x's axis 0, no transpose
    # inner dimensions that differ are the same error as without the transpose
    with pytest.raises(ValueError, match="inner dimensions differ"):
        jax_f(*values[:3], values[4], values[4])
