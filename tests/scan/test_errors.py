"""scan's errors: each names the scan, the output or sequence, and what came."""

import importlib.util

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.nanguardmode import NanGuardError, NanGuardMode
from tensorgraph.scan import scan


def test_wrong_number_of_outputs():
    x = tt.dvector("x")
    with pytest.raises(ValueError, match=r"scan 'two': the step function returned 1 output but "
                                         r"outputs_info has 2 entries"):
        scan(lambda v, a, b: a + v, sequences=x, outputs_info=[x[0], x[0]], name="two")


def test_initial_value_dtype_differs_from_step_result():
    x = tt.dvector("x")
    h0 = tt.fscalar("h0")
    with pytest.raises(TypeError, match=r"scan: output 0: outputs_info gives a scalar of "
                                        r"float32 .* returns a scalar of float64.*tt.cast"):
        scan(lambda v, h: h + v, sequences=x, outputs_info=h0)


def test_initial_value_ndim_differs_from_step_result():
    x = tt.dmatrix("x")
    h0 = tt.dscalar("h0")
    with pytest.raises(TypeError, match=r"outputs_info gives a scalar of float64 .* returns a "
                                        r"vector of float64"):
        scan(lambda v, h: h + v, sequences=x, outputs_info=h0)


def test_static_sizes_that_differ():
    h0 = tt.constant(np.zeros(3))
    with pytest.raises(ValueError, match=r"sizes differ along axis 0 \(3 != 4\)"):
        scan(lambda h: tt.concatenate([h, h[:1]]), outputs_info=h0, n_steps=2)


def test_state_shape_changing_at_run_time_names_iteration():
    h0 = tt.dvector("h0")
    out, _ = scan(lambda h: tt.concatenate([h, h[:1]]), outputs_info=h0, n_steps=3,
                  name="grow")
    f = tensorgraph.function([h0], out)
    with pytest.raises(ValueError, match=r"scan 'grow': output 0 \(h0\) has shape \(3,\) at "
                                         r"iteration 0, but its initial value has shape \(2,\)"):
        f(np.zeros(2))


def test_nit_sot_shape_changing_names_iteration():
    x = tt.dvector("x")
    n = tt.iscalar("n")
    out, _ = scan(lambda v, k: tt.arange(k) * v, sequences=x, outputs_info=None,
                  non_sequences=[n], name="ragged")
    f = tensorgraph.function([x, n], out)
    f(np.ones(3), 2)
    x2 = tt.dvector("x2")
    out2, _ = scan(lambda v: tt.arange(tt.cast(v, "int64")), sequences=x2, name="ragged")
    g = tensorgraph.function([x2], out2)
    with pytest.raises(ValueError, match=r"output 0 has shape \(2,\) at iteration 1, but the "
                                         r"earlier iterations gave shape \(1,\)"):
        g(np.array([1.0, 2.0]))


def test_negative_n_steps():
    with pytest.raises(ValueError, match="n_steps is -2; the number of steps cannot be "
                                         "negative"):
        scan(lambda h: h + 1, outputs_info=tt.constant(0.0), n_steps=-2)
    n = tt.lscalar("n")
    out, _ = scan(lambda h: h + 1, outputs_info=tt.constant(0.0), n_steps=n, name="count")
    f = tensorgraph.function([n], out)
    with pytest.raises(ValueError, match="scan 'count': n_steps is -1"):
        f(-1)


def test_sequences_of_unequal_length_name_both_lengths():
    x = tt.dvector("x")
    y = tt.dvector("y")
    out, _ = scan(lambda a, b: a + b, sequences=[x, y], name="pairs")
    f = tensorgraph.function([x, y], out)
    with pytest.raises(ValueError, match=r"scan 'pairs': sequence 1 \(y\) gives 3 steps \(3 "
                                         r"entries\) but sequence 0 \(x\) gives 4"):
        f(np.ones(4), np.ones(3))
    # with n_steps, longer sequences are fine and a shorter one is named
    out, _ = scan(lambda a, b: a + b, sequences=[x, y], n_steps=3)
    g = tensorgraph.function([x, y], out)
    np.testing.assert_allclose(g(np.ones(4), np.ones(5)), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"sequence 0 \(x\) gives 2 steps \(2 entries\) but "
                                         r"n_steps is 3"):
        g(np.ones(2), np.ones(5))


def test_sequence_too_short_for_its_taps():
    x = tt.dvector("x")
    out, _ = scan(lambda a, b: a + b, sequences=dict(input=x, taps=[-3, 1]))
    f = tensorgraph.function([x], out)
    assert f(np.arange(4.0)).shape == (0,)
    with pytest.raises(ValueError, match=r"sequence 0 \(x\) has 3 entries but its taps "
                                         r"\[-3, 1\] need at least 4"):
        f(np.arange(3.0))


def test_initial_buffer_too_short_for_the_taps():
    init = tt.dvector("init")
    out, _ = scan(lambda a, b: a + b, outputs_info=dict(initial=init, taps=[-3, -1]),
                  n_steps=2)
    f = tensorgraph.function([init], out)
    with pytest.raises(ValueError, match=r"output 0 \(init\) reads taps \[-3, -1\], so its initial "
                                         r"value needs at least 3 rows"):
        f(np.ones(2))


def test_no_n_steps_and_no_sequence():
    with pytest.raises(ValueError, match=r"give n_steps \(the number of steps\) or at least "
                                         "one sequence"):
        scan(lambda h: h + 1, outputs_info=tt.constant(0.0))


def test_bad_taps():
    x = tt.dvector("x")
    with pytest.raises(ValueError, match="taps must be distinct negative ints"):
        scan(lambda a, b: a + b, sequences=x, outputs_info=dict(initial=x, taps=[-1, 0]))


def test_error_inside_the_step_names_the_iteration():
    x = tt.dmatrix("x")
    w = tt.dmatrix("w")
    out, _ = scan(lambda row, w: tt.dot(w, row), sequences=x, non_sequences=w, name="proj")
    f = tensorgraph.function([x, w], out, mode="FAST_COMPILE")
    with pytest.raises(ValueError, match=r"\(iteration 0 of scan 'proj'\)"):
        f(np.ones((2, 3)), np.ones((2, 4)))


def test_nanguard_names_the_iteration_of_an_exploding_rnn():
    h0 = tt.dvector("h0")
    h, _ = scan(lambda h: h * 1e60, outputs_info=h0, n_steps=10, name="rnn")
    f = tensorgraph.function([h0], h, mode=NanGuardMode(big_is_error=False))
    with pytest.raises(NanGuardError, match=r"^NanGuardMode: output 0 of Elemwise{mul} has 2 "
                                            r"inf .*\(iteration 5 of scan 'rnn'\)"):
        f(np.ones(2))


@pytest.mark.parametrize("mode", ["FAST_RUN", "JAX", "NUMBA", "PYTORCH"])
def test_every_back_end_names_the_lengths_of_the_sequences(mode):
    """docs/scan.md: sequences of different lengths are an error naming both lengths, in
    every mode (NUMBA named an n_steps the user never gave, and no length)."""
    backend = {"JAX": "jax", "NUMBA": "numba", "PYTORCH": "torch"}.get(mode)
    if backend:
        pytest.importorskip(backend)
    x, y = tt.dvector("x"), tt.dvector("y")
    out, _ = scan(lambda a, b: a + b, sequences=[x, y], name="pairs")
    f = tensorgraph.function([x, y], out, mode=mode)
    with pytest.raises(ValueError, match=r"scan 'pairs': sequence 1 \(y\) gives 3 steps \(3 "
                                         r"entries\) but sequence 0 \(x\) gives 4; the "
                                         r"sequences must have the same length"):
        f(np.ones(4), np.ones(3))
    out, _ = scan(lambda a, b, c: a + b + c, sequences=[x, dict(input=y, taps=[-1, 1])],
                  n_steps=3)
    g = tensorgraph.function([x, y], out, mode=mode)
    with pytest.raises(ValueError, match=r"sequence 0 \(x\) gives 2 steps \(2 entries\) but "
                                         r"n_steps is 3"):
        g(np.ones(2), np.ones(6))
    with pytest.raises(ValueError, match=r"sequence 1 \(y\) has 1 entries but its taps "
                                         r"\[-1, 1\] need at least 2 plus one per step"):
        g(np.ones(4), np.ones(1))


HUGE_N_STEPS = """
import importlib.util

import numpy as np
import tensorgraph as tg, tensorgraph.tensor as tt
from tensorgraph.scan import scan
n, h0 = tt.lscalar("n"), tt.dvector("h0")
out, _ = scan(lambda h: h * 2, outputs_info=[h0], n_steps=n)
for mode in MODES:
    f = tg.function([h0, n], out, mode=mode)
    try:
        f(np.ones(2), 2 ** 62)
    except Exception as exc:
        print(mode, type(exc).__name__, str(exc).splitlines()[0], flush=True)
"""


def test_a_huge_symbolic_n_steps_is_too_big_an_array_in_jax_as_in_fast_run(run_python):
    """JAX aborted the process inside XLA (SIGABRT: overflow in static extent product);
    FAST_RUN (and NUMBA: numpy's np.empty both) raise numpy's 'array is too big'. Run in a
    process of its own."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    modes = ["FAST_RUN", "JAX"]
    proc = run_python("-c", f"MODES = {modes!r}\n" + HUGE_N_STEPS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(modes), proc.stdout
    for mode, line in zip(modes, lines):
        assert line == (f"{mode} ValueError array is too big; `arr.size * arr.dtype.itemsize` "
                        "is larger than the maximum possible size."), line
