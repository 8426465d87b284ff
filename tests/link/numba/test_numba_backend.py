"""Mode NUMBA: the whole graph as generated Python compiled by one numba.njit, against
FAST_RUN on broad expression sets (tests/backend_checks.py), and what a mode must do besides
computing: shared variables, updates, givens, profiles, random streams (numpy's own numbers),
the seed exercise, the tutorial programs, one error for every op Numba cannot run, the
rewrites it leaves out, its cache on disk.

Numba compiles slowly (seconds per function, longer under load): the expression sets go into
few functions, and the cache under the compile directory makes a second run fast."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import backend_checks as checks
import tensorgraph as tg
import tensorgraph.tensor as tt

pytest.importorskip("numba")

MODE = "NUMBA"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float_ops_match_fast_run(dtype):
    checks.check_unary_float(MODE, dtype)


@pytest.mark.parametrize("dtype,seed", [("float32", 0), ("float64", 1)])
def test_binary_ops_over_broadcast_operands_match_fast_run(dtype, seed):
    checks.check_binary_float(MODE, dtype, seed)


@pytest.mark.slow  # 24 s cold; tests/link/test_backend_modes.py checks integer edges per dtype
def test_integer_and_bool_arithmetic_wraps_and_divides_as_numpy():
    checks.check_integer_ops(MODE)


def test_casts():
    checks.check_casts(MODE, float16=False)


def test_float16_is_refused_clearly():
    from tensorgraph.link.backend import UnsupportedOpsError

    x = tt.vector("x", dtype="float16")
    with pytest.raises(UnsupportedOpsError, match="Numba has no float16 arithmetic"):
        tg.function([x], x * 2, mode=MODE)


# float32 is a slow sweep: a cold compile of the zoo takes 10-30 s per dtype
@pytest.mark.parametrize("dtype,seed", [pytest.param("float32", 0, marks=pytest.mark.slow),
                                        ("float64", 1)])
def test_reductions_along_every_axis_and_the_softmax_family(dtype, seed):
    checks.check_reductions(MODE, dtype, seed)


@pytest.mark.parametrize("dtype,seed", [pytest.param("float32", 0, marks=pytest.mark.slow),
                                        ("float64", 3)])
def test_products(dtype, seed):
    checks.check_products(MODE, dtype, seed)


def test_integer_products():
    checks.check_integer_products(MODE)


def test_shape_ops():
    checks.check_shape_ops(MODE)


def test_join_and_split_along_an_axis_given_as_an_input():
    checks.check_symbolic_join_axis(MODE)


def test_indexing_read_set_and_increment():
    checks.check_indexing(MODE)


def test_an_index_out_of_range_is_an_index_error_naming_the_node():
    assert "tg-node" not in checks.check_index_out_of_range(MODE)


def test_ifelse_runs_only_the_side_taken():
    checks.check_ifelse(MODE)


@pytest.mark.slow  # 13 s cold; tests/link/test_backend_scan.py draws inside a NUMBA loop
def test_random_streams():
    checks.check_random_streams(MODE)


def test_draws_are_numpys_numbers():
    """Numba's generators reproduce numpy's streams: the same seed gives FAST_RUN's draws."""
    from tensorgraph.tensor.random.utils import RandomStream

    results = []
    for mode in (MODE, "FAST_RUN"):
        srng = RandomStream(seed=5)
        loc = tt.vector("loc")
        draws = [srng.normal(0, 1, size=(3, 2)), srng.uniform(2, 3, size=(4,)),
                 srng.normal(loc, 0.5), srng.exponential(1.5, size=(3,)),
                 srng.bernoulli(0.3, size=(5,)), srng.permutation(6)]
        f = tg.function([loc], draws, mode=mode)
        results.append([f(np.arange(3.0)), f(np.arange(3.0))])
    for got, expected in zip(results[0], results[1]):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12)


def test_shared_variables_updates_givens_and_borrow():
    checks.check_shared_updates_givens_borrow(MODE)


def test_profile_times_whole_calls_and_says_there_are_no_node_times():
    text = checks.check_profile(MODE)
    assert "Numba" in text


def test_seed_logistic_regression_trains_as_fast_run_in_float32():
    checks.check_logistic_regression(MODE)


def test_every_unsupported_op_in_one_error_at_compile_time():
    checks.check_unsupported_ops_listed(MODE, "Numba")


@pytest.mark.slow  # 6-14 s cold; tests/link/test_tutorial_graphs.py recompiles the notebooks
def test_tutorial_programs_compile_and_run():
    import test_tutorial_programs

    ran = checks.check_tutorial_programs(
        MODE, test_tutorial_programs,
        skip=("test_printing_the_logistic_regression_graph",))  # asserts the unfused graph
    assert len(ran) >= 10


def test_the_mode_leaves_out_c_only_and_blas_rewrites_but_fuses():
    f = checks.check_rewrites_left_out(MODE, {"blas", "c_only"})
    ops = {str(n.op) for n in f.maker.fgraph.apply_nodes}
    assert any("Composite" in op for op in ops) and "Dot" in ops


def test_the_program_text_is_the_generated_python():
    x = tt.vector("x")
    f = tg.function([x], tt.tanh(x) * 2, mode=MODE)
    text = f.vm.source()
    assert "def graph(" in text and "np.tanh" in text and "@_jit" in text
    assert "tt.tanh(x) * 2" in text  # each node's user line, as a comment
    compile(text, "generated", "exec")


def test_a_second_process_loads_the_compiled_code_from_the_cache(run_python, tmp_path):
    code = ("import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt\n"
            "x = tt.vector('x')\n"
            "f = tg.function([x], tt.tanh(x).sum() * 3, mode='NUMBA')\n"
            "assert np.isclose(f(np.ones(4)), 12 * np.tanh(1.0))\n"
            "print(f.vm.program.compiled_from, f.vm.program.path.startswith("
            "tg.config.compiledir))\n")
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'cache'}"}
    first = run_python("-c", code, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["compiled", "True"]
    second = run_python("-c", code, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["disk", "True"]


def test_a_missing_numba_names_the_extra(run_python):
    checks.check_missing_library_names_the_extra(run_python, "numba", MODE, "numba")


@settings(max_examples=6, deadline=None)  # a Numba compile per example: seconds each
@given(graph=checks.random_graph_strategy(), seed=st.integers(0, 2 ** 16))
def test_random_graphs_match_perform(graph, seed):
    checks.check_random_graph(MODE, graph, seed)


def test_ops_the_rewrites_remove_run_too():
    checks.check_ops_the_rewrites_remove("numba")


def test_more_distributions():
    checks.check_more_distributions(MODE)


def test_the_same_graph_built_on_other_lines_finds_the_cache(run_python, tmp_path):
    """A notebook cell run again builds the same graph on another line (``Cell In[7]``):
    the compiled module leaves the comments naming lines out, so Numba's cache is found."""
    env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / 'cache'}"}
    found = []
    for blank_lines in (0, 3):
        code = ("import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt\n"
                + "\n" * blank_lines +
                "x = tt.vector('x'); f = tg.function([x], tt.exp(x).sum(), mode='NUMBA')\n"
                "print(f.vm.program.compiled_from)\n")
        proc = run_python("-c", code, env=env)
        assert proc.returncode == 0, proc.stderr
        found.append(proc.stdout.strip())
    assert found == ["compiled", "disk"]
