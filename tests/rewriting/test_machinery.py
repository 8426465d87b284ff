"""The rewriting machinery: node/graph rewriters, walkers, equilibrium, patterns, the database,
error handling, verbosity, profiling, merging and the history."""

import warnings

import numpy as np
import pytest

import tensorgraph.tensor as tt
from tensorgraph.configdefaults import config
from tensorgraph.graph import FunctionGraph
from tensorgraph.rewriting import (
    EquilibriumDB,
    EquilibriumGraphRewriter,
    MergeRewriter,
    PatternNodeRewriter,
    RewriteDatabaseQuery,
    RewriteHistory,
    RewriteLimitError,
    SequenceDB,
    WalkerDB,
    in2out,
    node_rewriter,
    out2in,
    structurally_equal,
)
from tensorgraph.scalar import basic as ps
from tensorgraph.scalar import math as psm
from tensorgraph.tensor.elemwise import Elemwise


def ops_of(fg):
    return [str(n.op) for n in fg.toposort()]


def elemwise_of(scalar_cls):
    return lambda node: isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, scalar_cls)


@node_rewriter([Elemwise])
def exp_to_exp2(fgraph, node):
    if isinstance(node.op.scalar_op, psm.Exp):
        return [tt.exp2(node.inputs[0] * np.float64(1 / np.log(2)).astype(node.inputs[0].dtype))]
    return None


@node_rewriter([Elemwise])
def neg_neg(fgraph, node):
    if isinstance(node.op.scalar_op, ps.Neg):
        inner = node.inputs[0].owner
        if inner is not None and isinstance(inner.op, Elemwise) and isinstance(
                inner.op.scalar_op, ps.Neg):
            return [inner.inputs[0]]
    return None


def test_node_rewriter_records_tracks_name_and_source():
    assert exp_to_exp2.tracks() == [Elemwise]
    assert exp_to_exp2.name == "exp_to_exp2"
    filename, line = exp_to_exp2.source
    assert filename == __file__ and line > 0
    assert exp_to_exp2.location.endswith(f"test_machinery.py:{line}")
    with pytest.raises(ValueError, match="at least one op"):
        node_rewriter([])


def test_walkers_only_visit_tracked_ops():
    seen = []
    exp_op = tt.exp(tt.vector()).owner.op

    @node_rewriter([exp_op])
    def spy(fgraph, node):
        seen.append(node.op)

    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.log(tt.exp(x) + tt.exp(x * 2))])
    in2out(spy).rewrite(fg)
    assert seen == [exp_op, exp_op]
    seen.clear()
    out2in(spy).rewrite(fg)
    assert seen == [exp_op, exp_op]


def test_in2out_and_out2in_order():
    order = []

    @node_rewriter(None)
    def spy(fgraph, node):
        order.append(str(node.op.scalar_op))

    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.log(tt.exp(x))])
    in2out(spy).rewrite(fg)
    assert order == ["exp", "log"]
    order.clear()
    out2in(spy).rewrite(fg)
    assert order == ["log", "exp"]


def test_walker_visits_new_nodes_and_replaces():
    x = tt.vector("x")
    fg = FunctionGraph([x], [-(-(-(-x)))])
    in2out(neg_neg).rewrite(fg)
    assert len(fg.apply_nodes) == 0 and fg.outputs[0] is fg.inputs[0]


def test_pattern_rewriter_matches_and_binds():
    mul = tt.mul(tt.vector(), tt.vector()).owner.op
    rw = PatternNodeRewriter((mul, "x", 1), "x")
    assert rw.tracks() == [mul]
    assert rw.source[0] == __file__
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(x * tt.constant(np.ones(1, dtype=x.dtype)))])
    in2out(rw).rewrite(fg)
    assert ops_of(fg) == ["Elemwise{exp}"]


def test_pattern_rewriter_repeated_name_must_be_same_variable():
    sub = tt.sub(tt.vector(), tt.vector()).owner.op
    rw = PatternNodeRewriter((sub, "x", "x"), lambda x: tt.zeros_like(x))
    x, y = tt.vectors("x", "y")
    fg = FunctionGraph([x, y], [x - y, x - x])
    in2out(rw).rewrite(fg)
    ops = ops_of(fg)
    assert ops.count("Elemwise{sub}") == 1


def test_pattern_rewriter_skips_type_changes_and_shared_inner_nodes():
    mul = tt.mul(tt.vector(), tt.vector()).owner.op
    x = tt.vector("x")
    ones = tt.constant(np.ones((3, 4), dtype=x.dtype))
    # x * ones broadcasts x to a matrix: replacing it with x would change the type
    fg = FunctionGraph([x], [x * ones])
    in2out(PatternNodeRewriter((mul, "x", 1), "x")).rewrite(fg)
    assert len(fg.apply_nodes) == 2  # dimshuffle + mul kept
    neg = tt.neg(tt.vector()).owner.op
    inner = -x
    fg = FunctionGraph([x], [-inner, inner * 2])
    in2out(PatternNodeRewriter((neg, (neg, "x")), "x")).rewrite(fg)
    assert ops_of(fg).count("Elemwise{neg}") == 2
    fg = FunctionGraph([x], [-inner, inner * 2])
    in2out(PatternNodeRewriter((neg, (neg, "x")), "x", allow_multiple_clients=True)).rewrite(fg)
    assert fg.outputs[0] is fg.inputs[0]


def test_equilibrium_reaches_a_fixed_point():
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(-(-(tt.exp(-(-x)))))])
    EquilibriumGraphRewriter([neg_neg]).rewrite(fg)
    assert ops_of(fg) == ["Elemwise{exp}", "Elemwise{exp}"]


def test_equilibrium_limit_names_the_rewriter():
    @node_rewriter([Elemwise])
    def grow(fgraph, node):
        if isinstance(node.op.scalar_op, psm.Exp):
            return [tt.exp(-(-node.inputs[0]))]

    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(x)])
    with pytest.raises(RewriteLimitError, match=r"grow \(defined at .*test_machinery") as info:
        EquilibriumGraphRewriter([grow], max_use_ratio=2).rewrite(fg)
    assert "nodes" in str(info.value) and "optdb__max_use_ratio" in str(info.value)


@node_rewriter([Elemwise])
def crashing(fgraph, node):
    raise ZeroDivisionError("boom")


def test_on_opt_error_warn_skips_and_names_the_rewrite_and_node():
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(x)])
    with config.change_flags(on_opt_error="warn"):
        with pytest.warns(UserWarning, match=r"rewrite crashing .* failed at Elemwise\{exp\}.*boom"):
            in2out(crashing).rewrite(fg)
    assert ops_of(fg) == ["Elemwise{exp}"]


def test_on_opt_error_raise_and_ignore():
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(x)])
    with config.change_flags(on_opt_error="raise"):
        with pytest.raises(ZeroDivisionError) as info:
            in2out(crashing).rewrite(fg)
    assert any("crashing" in note for note in info.value.__notes__)
    with config.change_flags(on_opt_error="ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            in2out(crashing).rewrite(fg)


def test_bad_replacement_type_goes_through_on_opt_error():
    @node_rewriter([Elemwise])
    def wrong_type(fgraph, node):
        return [tt.matrix()]

    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(x)])
    with config.change_flags(on_opt_error="warn"):
        with pytest.warns(UserWarning, match="wrong_type"):
            in2out(wrong_type).rewrite(fg)
    fg.check_integrity()


def test_optimizer_verbose_prints_each_replacement(capsys):
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(-(-x))])
    with config.change_flags(optimizer_verbose=True):
        in2out(neg_neg).rewrite(fg)
    out = capsys.readouterr().out
    assert "rewriting: neg_neg:" in out and "-> x" in out


def test_profile_optimizer_records_time_per_rewrite():
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(-(-x))])
    @node_rewriter([Elemwise])
    def noop(fgraph, node):
        return None

    with config.change_flags(profile_optimizer=True):
        EquilibriumGraphRewriter([neg_neg, noop]).rewrite(fg)
    prof = fg.rewrite_profile
    seconds, calls, applied = prof.node_rewrites["neg_neg"]
    assert seconds >= 0 and calls >= 2 and applied == 1
    assert prof.node_rewrites["noop"][2] == 0
    assert "neg_neg" in prof.summary()


def test_merge_common_subexpressions_and_constants():
    x, y = tt.vectors("x", "y")
    a = tt.exp(x) + y
    b = tt.exp(x) + y
    c1 = tt.constant(np.array([1.0, 2.0], dtype=x.dtype))
    c2 = tt.constant(np.array([1.0, 2.0], dtype=x.dtype))
    fg = FunctionGraph([x, y], [a * b, x * c1, y * c2])
    assert len(fg.apply_nodes) == 7
    n = MergeRewriter().rewrite(fg)
    assert len(fg.apply_nodes) == 5 and n == 3
    consts = {id(v) for node in fg.apply_nodes for v in node.inputs if v.owner is None
              and v not in fg.inputs}
    assert len(consts) == 1


def test_database_registration_is_unique_and_queries_by_tags():
    db = SequenceDB("root")
    canon = EquilibriumDB()
    db.register("canon", canon, position=1)
    canon.register("neg_neg", neg_neg, "fast_run", "fast_compile")
    canon.register("exp_to_exp2", exp_to_exp2, "fast_run", "unsafe")
    walker = WalkerDB()
    db.register("late", walker, position=2)
    with pytest.raises(ValueError, match="already registered"):
        walker.register("neg_neg", neg_neg)
    with pytest.raises(ValueError, match="already registered"):
        walker.register("other_name", neg_neg)
    with pytest.raises(TypeError, match="rewriter or a database"):
        walker.register("x", lambda f, n: None)
    assert db.tags_of("neg_neg") == {"fast_run", "fast_compile", "neg_neg", "canon"}
    Q = RewriteDatabaseQuery

    def selected(q):
        rw = db.query(q)
        if rw is None:
            return []
        return [str(r) for phase in rw.rewriters for r in phase.node_rewriters]

    assert selected(Q({"fast_run"})) == ["neg_neg", "exp_to_exp2"]
    assert selected(Q({"fast_run"}, exclude={"unsafe"})) == ["neg_neg"]
    assert selected(Q({"fast_run"}, require={"unsafe"})) == ["exp_to_exp2"]
    assert selected(Q({"fast_run"}, exclude={"canon"})) == []
    assert selected(Q({"fast_run"}).excluding("neg_neg")) == ["exp_to_exp2"]
    assert selected(Q({"fast_compile"}, exclude={"unsafe"}).including("unsafe")) == [
        "neg_neg", "exp_to_exp2"]
    assert selected(Q()) == []
    with pytest.raises(TypeError, match="collection of tags"):
        Q("fast_run")
    assert "exp_to_exp2 [fast_run, unsafe]" in db.describe()


def test_history_records_steps_and_rebuilds_each_state():
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(-(-x)) + tt.exp(-(-x))])
    original = fg.clone()
    history = RewriteHistory()
    fg.attach_feature(history)
    assert fg.rewrite_history is history
    in2out(neg_neg).rewrite(fg)
    MergeRewriter().rewrite(fg)
    assert [s.name for s in history] == ["neg_neg", "neg_neg", "merge"]
    first = history[0]
    assert [str(r.op) for r in first.removed] == ["Elemwise{neg}", "Elemwise{neg}"]
    assert first.added == [] and first.seconds > 0
    assert first.location.startswith(__file__)
    assert [new for _, new in first.to_dict()["replaced"]] == ["x"]
    assert structurally_equal(history.rebuild(0), original)
    assert structurally_equal(history.rebuild(), fg)
    after_one = history.rebuild(1)
    assert len(after_one.apply_nodes) == 5
    with pytest.raises(IndexError):
        history.rebuild(4)
    import json
    assert json.loads(history.to_json())[2]["rewrite"] == "merge"


def test_history_records_direct_replacements_and_added_nodes():
    x = tt.vector("x")
    fg = FunctionGraph([x], [tt.exp(x)])
    history = RewriteHistory()
    fg.attach_feature(history)
    fg.replace(fg.outputs[0], tt.exp2(fg.inputs[0]) + 1, reason="by hand")
    assert len(history) == 1 and history[0].name == "by hand"
    assert sorted(str(r.op) for r in history[0].added) == [
        "DimShuffle{x}", "Elemwise{add}", "Elemwise{exp2}"]
    assert structurally_equal(history.rebuild(), fg)
