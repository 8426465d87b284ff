"""Mode PYTORCH: the whole graph traced into one FX graph and compiled by one torch.compile
(Inductor), against FAST_RUN on broad expression sets (tests/backend_checks.py), and what a
mode must do besides computing: shared variables, updates, givens, profiles, random streams,
the seed exercise, the tutorial programs, one error for every op PyTorch cannot run, the
rewrites it leaves out, its cache on disk.

Inductor compiles C++ (seconds per graph, longer under load): the expression sets go into
few functions, and its cache under the compile directory makes a second run faster."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import backend_checks as checks
import tensorgraph as tg
import tensorgraph.tensor as tt

pytest.importorskip("torch")

MODE = "PYTORCH"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float_ops_match_fast_run(dtype):
    checks.check_unary_float(MODE, dtype)


@pytest.mark.parametrize("dtype,seed", [("float32", 0), ("float64", 1)])
def test_binary_ops_over_broadcast_operands_match_fast_run(dtype, seed):
    checks.check_binary_float(MODE, dtype, seed)


def test_integer_and_bool_arithmetic_wraps_and_divides_as_numpy():
    checks.check_integer_ops(MODE, uint64_ordered=False)


def test_uint64_ops_needing_more_than_64_wrapping_bits_are_refused_clearly():
    from tensorgraph.link.backend import UnsupportedOpsError

    x = tt.vector("x", dtype="uint64")
    with pytest.raises(UnsupportedOpsError, match="PyTorch has no uint64 arithmetic"):
        tg.function([x], [x < x[0], tt.maximum(x, x[1]), x.argmax()], mode=MODE)
    big = np.array([2 ** 64 - 1, 2 ** 63, 5], dtype="uint64")
    checks.compare(MODE, [x], {"x * x + x": x * x + x, "sum": x.sum(), "x ^ x[2]": x ^ x[2]},
                   [big])


def test_casts():
    checks.check_casts(MODE)


# float32 is a slow sweep: a cold compile of the zoo takes 10-30 s per dtype
@pytest.mark.parametrize("dtype,seed", [pytest.param("float32", 0, marks=pytest.mark.slow),
                                        ("float64", 1)])
def test_reductions_along_every_axis_and_the_softmax_family(dtype, seed):
    checks.check_reductions(MODE, dtype, seed)


@pytest.mark.parametrize("dtype,seed", [("float32", 0), ("float64", 3)])
def test_products(dtype, seed):
    checks.check_products(MODE, dtype, seed)


def test_integer_products():
    checks.check_integer_products(MODE)


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


def test_random_draws_leave_the_process_torch_generator_alone():
    import torch

    from tensorgraph.tensor.random.utils import RandomStream

    srng = RandomStream(seed=3)
    f = tg.function([], srng.normal(size=(4,)), mode=MODE)
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    f()
    assert torch.equal(torch.rand(3), expected)


def test_shared_variables_updates_givens_and_borrow():
    checks.check_shared_updates_givens_borrow(MODE)


def test_profile_times_whole_calls_and_says_there_are_no_node_times():
    text = checks.check_profile(MODE)
    assert "PyTorch" in text


def test_seed_logistic_regression_trains_as_fast_run_in_float32():
    checks.check_logistic_regression(MODE)


def test_every_unsupported_op_in_one_error_at_compile_time():
    checks.check_unsupported_ops_listed(MODE, "PyTorch")


@pytest.mark.slow  # 6-14 s cold; tests/link/test_tutorial_graphs.py recompiles the notebooks
def test_tutorial_programs_compile_and_run():
    import test_tutorial_programs

    ran = checks.check_tutorial_programs(
        MODE, test_tutorial_programs,
        skip=("test_printing_the_logistic_regression_graph",))  # asserts the unfused graph
    assert len(ran) >= 10


def test_sizes_from_input_values_compile_per_value():
    checks.check_sizes_from_input_values(MODE)


def test_a_size_from_a_float_value_is_a_clear_error():
    checks.check_size_from_a_float_value(MODE, "PyTorch")


def test_the_mode_leaves_out_c_only_and_blas_rewrites():
    f = checks.check_rewrites_left_out(MODE, {"blas", "c_only"})
    ops = {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    assert "Gemv" not in ops and "Dot" in ops


def test_float32_graphs_stay_float32():
    f = checks.check_float32_stays_float32(MODE)
    # float32 sums accumulate in float64 (perform's acc_dtype); nothing else is float64
    fx = f.vm.source().split("# Inductor")[0]
    wide = [line for line in fx.splitlines() if "torch.float64" in line]
    assert wide and all("aten.sum" in line for line in wide), wide


def test_the_program_text_is_the_fx_graph_and_inductors_code():
    x = tt.vector("x")
    f = tg.function([x], tt.tanh(x) * 2, mode=MODE)
    assert "function once to see the program" in f.vm.source()
    f(np.ones(3))
    text = f.vm.source()
    assert "# FX graph" in text and "aten.tanh" in text and "float64[3]" in text
    assert "Inductor" in text
    assert f.vm.seconds["compile"] > 0


def test_outputs_never_share_memory_with_the_inputs():
    x = tt.matrix("x")
    f = tg.function([x], [x.T, x.reshape((-1,)), tt.second(x, 1.5)], mode=MODE)
    value = np.arange(6.0).reshape(2, 3)
    for out in f(value):
        assert not np.shares_memory(out, value)
        assert out.flags.writeable
    out = f(value)[2]
    out[0, 0] = 9.0
    assert out[1, 1] == 1.5  # a broadcast came back as an array of its own


def test_threads_call_one_function_at_once():
    import concurrent.futures

    x = tt.vector("x")
    f = tg.function([x], (tt.exp(x) * 2).sum(), mode=MODE)
    values = [np.full(50, k / 10) for k in range(16)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(f, values))
    np.testing.assert_allclose(results, [np.exp(v).sum() * 2 for v in values])


@pytest.mark.slow  # a cold Inductor compile in a new process: 19 s
def test_the_compile_cache_lives_under_the_compiledir(run_python, tmp_path):
    code = (
        "import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt, os\n"
        "x = tt.vector('x')\n"
        "f = tg.function([x], tt.tanh(x) * 3 + tt.exp(x).sum(), mode='PYTORCH')\n"
        "f(np.ones(4))\n"
        "path = os.environ['TORCHINDUCTOR_CACHE_DIR']\n"
        "print(path.startswith(tg.config.compiledir), len(os.listdir(path)) > 0,\n"
        "      f.vm.program.compiled_from)\n")
    # empty: unset (this process set it for its own compiledir, a child would inherit it)
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'cache'}",
           "TORCHINDUCTOR_CACHE_DIR": ""}
    first = run_python("-c", code, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["True", "True", "compiled"]
    second = run_python("-c", code, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["True", "True", "disk"]


def test_a_missing_torch_names_the_extra(run_python):
    checks.check_missing_library_names_the_extra(run_python, "torch", MODE, "pytorch")


@settings(max_examples=8, deadline=None)
@given(graph=checks.random_graph_strategy(), seed=st.integers(0, 2 ** 16))
def test_random_graphs_match_perform(graph, seed):
    checks.check_random_graph(MODE, graph, seed)


def test_ops_the_rewrites_remove_run_too():
    checks.check_ops_the_rewrites_remove("pytorch")


def test_more_distributions():
    checks.check_more_distributions(MODE)
