"""The two scan flags change what runs: scan__allow_gc (the inner intermediates kept or freed
between iterations) and scan__allow_output_prealloc (outputs written into one buffer, reused
across calls, or stacked from separate steps)."""

import tracemalloc

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.scan import scan
from tensorgraph.scan.op import Scan


def _rnn_function(mode, output=None, **flags):
    x = tt.dmatrix("x")
    w = tt.dmatrix("w")
    h0 = tt.dvector("h0")
    h, _ = scan(lambda x_t, h, w: tt.tanh(tt.dot(h, w) * 2 + x_t) + 1, sequences=x,
                outputs_info=h0, non_sequences=w, name="rnn")
    with config.change_flags(**flags):
        f = tensorgraph.function([x, h0, w], h if output is None else output(h), mode=mode)
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
    return f, Scan.runner_of(node)


def _args(n=5, size=3):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, size)), rng.normal(size=size), rng.normal(size=(size, size)) * 0.1


@pytest.mark.parametrize("linker", ["py", "c|py", "cvm"])
def test_allow_gc_frees_the_inner_intermediates(linker):
    mode = tensorgraph.Mode(linker=linker, optimizer="fast_compile")
    kept, kept_runner = _rnn_function(mode, scan__allow_gc=False)
    freed, freed_runner = _rnn_function(mode, scan__allow_gc=True)
    args = _args()
    np.testing.assert_allclose(kept(*args), freed(*args))
    assert freed_runner.held_intermediates() == 0
    assert kept_runner.held_intermediates() > 0  # kept between iterations and calls
    assert freed_runner.function.vm.allow_gc and not kept_runner.function.vm.allow_gc


def test_output_prealloc_writes_steps_into_one_buffer_reused_across_calls():
    # an outer linker without gc hands the scan its previous output buffer back
    mode = tensorgraph.Mode(linker="vm_nogc", optimizer="fast_run")
    f, runner = _rnn_function(mode, output=lambda h: h.sum(axis=0),
                              scan__allow_output_prealloc=True)
    args = _args()
    first = f(*args)
    for _ in range(2):
        np.testing.assert_allclose(f(*args), first)
    assert runner.counters["buffers_allocated"] == 1
    assert runner.counters["buffers_reused"] == 2
    assert runner.counters["outputs_stacked"] == 0


def test_without_output_prealloc_steps_are_stacked():
    mode = tensorgraph.Mode(linker="vm_nogc", optimizer="fast_run")
    f, runner = _rnn_function(mode, output=lambda h: h.sum(axis=0),
                              scan__allow_output_prealloc=False)
    for _ in range(3):
        f(*_args())
    assert runner.counters == {"calls": 3, "iterations": 15, "buffers_allocated": 0,
                               "buffers_reused": 0, "outputs_stacked": 3, "c_runs": 0,
                               "python_iterations": 15}


def test_output_prealloc_lowers_peak_memory():
    # numpy's allocations (linker 'py') are seen by tracemalloc: stacking the steps holds them
    # and the stacked copy at once
    n, size = 400, 200
    peaks = {}
    for prealloc in (True, False):
        f, _ = _rnn_function(tensorgraph.Mode(linker="py", optimizer="fast_run"),
                             output=lambda h: h.sum(axis=0),
                             scan__allow_output_prealloc=prealloc)
        args = _args(n, size)
        f(*args)
        tracemalloc.start()
        f(*args)
        peaks[prealloc] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    output_bytes = n * size * 8
    assert peaks[False] - peaks[True] > 0.8 * output_bytes
