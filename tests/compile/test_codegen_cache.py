"""A graph compiled again takes both its rewritten graph and its generated C from the caches
(compile/rewrite_cache.py, link/c/codegen_cache.py): the compile record says so, no node is
asked for its C, and the function computes the same bits; anything that may change the C
(flags, tensorgraph's code, a user's op, the graph changed after rewriting) writes it again."""

from __future__ import annotations

import json
import os
import random
import shutil
import textwrap

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile import rewrite_cache
from tensorgraph.graph.basic import Apply
from tensorgraph.link.c import codegen, codegen_cache, graph_files
from tensorgraph.link.c.op import COp


@pytest.fixture(autouse=True)
def cache_on():
    with config.change_flags(cache_rewritten_graphs=True):
        yield


@pytest.fixture
def asked_for_c(monkeypatch):
    """How many times a node was asked for its C (the real generation, counted)."""
    calls = [0]
    real = codegen.node_c_code

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(codegen, "node_c_code", counted)
    return calls


def _fresh() -> float:
    """A constant no earlier run put in the cache (the disk cache outlives a test run)."""
    return random.SystemRandom().uniform(0.1, 0.9)


def _model(scale):
    x = tt.matrix("x")
    w = tg.shared(np.linspace(-1, 1, 3), name="w")
    h = tt.tanh(tt.dot(x, w)[:, None] * w + scale)
    return tg.function([x], [h.sum(), tt.exp(h).mean()], updates=[(w, w * 0.9)])


DATA = np.arange(6.0).reshape(2, 3) / 10


def test_a_graph_compiled_again_takes_its_rewriting_and_its_c_from_the_caches(asked_for_c):
    scale = _fresh()
    first = _model(scale)
    record = first.maker.compile_record
    assert (record.rewritten_from, record.generated_from) == (None, None)
    assert asked_for_c[0] > 0
    asked_for_c[0] = 0
    again = _model(scale)
    record = again.maker.compile_record
    assert (record.rewritten_from, record.generated_from) == ("memory", "memory")
    assert asked_for_c[0] == 0  # no node wrote its C
    assert [f.symbol for f in again.vm.cgraph.functions] == [
        f.symbol for f in first.vm.cgraph.functions]
    for _ in range(2):  # each updates its own w alike
        for a, b in zip(again(DATA), first(DATA)):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    split = dict((phase, source) for phase, _, source in record.split())
    assert split["rewriting"] == split["generating C"] == "kept in memory"
    assert "rewriting" in record.summary() and "(kept in memory)" in record.summary()
    assert record.first_call_seconds is not None and "first call" in record.summary()


def test_flags_and_tensorgraph_s_code_are_part_of_the_key(asked_for_c, monkeypatch):
    scale = _fresh()
    _model(scale)
    with config.change_flags(openmp_elemwise_minsize=12345):  # a flag the C depends on
        record = _model(scale).maker.compile_record
        assert (record.rewritten_from, record.generated_from) == (None, None)
    monkeypatch.setattr(rewrite_cache, "_code_digest", ["tensorgraph edited since"])
    asked_for_c[0] = 0
    record = _model(scale).maker.compile_record
    assert (record.rewritten_from, record.generated_from) == (None, None)
    assert asked_for_c[0] > 0


def test_an_edited_module_changes_the_code_digest(tmp_path):
    package = os.path.dirname(tg.__file__)
    copy = tmp_path / "tensorgraph"
    shutil.copytree(os.path.join(package, "link", "c"), copy / "link" / "c",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = rewrite_cache.code_digest(str(copy))
    assert rewrite_cache.code_digest(str(copy)) == before
    module = copy / "link" / "c" / "codegen.py"
    module.write_text(module.read_text() + "\n# edited\n")
    assert rewrite_cache.code_digest(str(copy)) != before


def test_a_graph_changed_after_rewriting_writes_its_c_again():
    f = _model(_fresh())
    fgraph = f.maker.fgraph
    assert codegen_cache.key_of(fgraph, False) is not None
    fgraph.replace(fgraph.outputs[0], fgraph.outputs[1])  # both float64 scalars
    assert codegen_cache.key_of(fgraph, False) is None


class Twice(COp):
    """2 * x in C of a user's op (this module is not tensorgraph's code)."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] * 2

    def c_code(self, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return f"""
        if (!tg_is_c_contiguous({x})) {{ tg_error({sub['ctx']}, "contiguous only"); {sub['fail']} }}
        if (tg_alloc({z}, {x}->ndim, {x}->shape, {x}->typenum, {sub['ctx']})) {{ {sub['fail']} }}
        for (int64_t i = 0; i < tg_size({x}); i++)
            ((double *){z}->data)[i] = 2 * ((const double *){x}->data)[i];
        """

    def c_code_cache_version(self):
        return (1,)


def test_a_user_op_s_c_is_not_kept_its_text_may_change_under_the_same_name():
    x = tt.dvector("x")
    y = Twice()(tt.exp(x)) + _fresh()
    first = tg.function([x], y)
    again = tg.function([x], y)
    assert any(type(n.op) is Twice for n in again.vm.cgraph.c_nodes)
    assert again.maker.compile_record.rewritten_from == "memory"
    assert again.maker.compile_record.generated_from is None
    assert again(np.ones(2)).tobytes() == first(np.ones(2)).tobytes()


def test_a_damaged_entry_is_written_again():
    scale = _fresh()
    f = _model(scale)
    key = codegen_cache.key_of(f.maker.fgraph, False)
    assert json.loads(graph_files.read(f"{key}.json"))["functions"]
    codegen_cache._memory.clear()
    with open(graph_files.path(f"{key}.json"), "wb") as bad:
        bad.write(b"{not json")
    assert _model(scale).maker.compile_record.generated_from is None
    codegen_cache._memory.clear()
    assert _model(scale).maker.compile_record.generated_from == "disk"


def test_a_new_process_takes_both_from_disk_with_the_same_results(run_python, tmp_path):
    code = textwrap.dedent("""
        import numpy as np
        import tensorgraph as tg, tensorgraph.tensor as tt
        from tensorgraph.compile import rewrite_cache
        x = tt.matrix("x")
        w = tg.shared(np.ones(3), name="w")
        f = tg.function([x], tt.tanh(tt.dot(x, w)).sum() * 0.4321, updates=[(w, w + 1)])
        r = f.maker.compile_record
        print(r.rewritten_from, r.generated_from, float(f(np.ones((2, 3)))).hex(),
              rewrite_cache._code())
    """)
    for attempt in range(3):  # others editing this checkout meanwhile change the code's key
        env = {"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path / str(attempt)},"
                                    "compile__tiers=False"}
        first, second = (run_python("-c", code, env=env) for _ in range(2))
        assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
        first, second = first.stdout.split(), second.stdout.split()
        if first[3] == second[3]:
            break
    assert first[:2] == ["None", "None"]
    assert second[:3] == ["disk", "disk", first[2]]
