"""Scan's loop in C (``link/c/scan_loop.py``) reads a ``ScanLoop`` only through its public
view (``ScanLoop.buffers()``) and the C VM through its public entry points, and scan reaches
it through ``tensorgraph.hooks``, never by importing the link layer."""

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph import hooks
from tensorgraph.link.c import scan_loop
from tensorgraph.scan import scan
from tensorgraph.scan.loop import LoopBuffers, ScanLoop
from tensorgraph.scan.op import Scan


def _private_reads(path: Path) -> list[str]:
    """``obj._name`` reads of another object than ``self`` (dunders aside)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")):
            found.append(f"line {node.lineno}: .{node.attr}")
    return found


def test_the_c_loop_reads_no_private_attribute_of_the_loop_or_the_vm():
    assert _private_reads(Path(scan_loop.__file__)) == []


def test_scan_runs_its_iterations_in_c_reached_through_hooks_and_a_read_only_view():
    x = tt.vector("x")
    out, _ = scan(lambda v, acc: acc + v, sequences=[x], outputs_info=[tt.constant(0.0)])
    f = tensorgraph.function([x], out, mode="FAST_RUN")
    np.testing.assert_allclose(f(np.arange(5.0)), np.cumsum(np.arange(5.0)))
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
    runner = Scan.runner_of(node)
    assert isinstance(hooks.scan_c_loop(runner), scan_loop.CLoop)  # filled by the package
    assert runner.counters["c_runs"] >= 1 and runner.counters["python_iterations"] == 0
    loop = ScanLoop(node.op, node, [np.int64(3), np.arange(3.0), np.array(0.0)])
    view = loop.buffers()
    assert isinstance(view, LoopBuffers)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.outputs = ()
    assert [offset for _, offset in view.sequence_reads] == [0]
