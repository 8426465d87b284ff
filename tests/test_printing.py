"""debugprint / dprint and pp."""

import io

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph import Apply, Op
from tensorgraph.printing import FunctionPrinter, OperatorPrinter, debugprint, pp, pprint


def test_tree_with_ids_and_shared_subexpression():
    x, y = tt.dvectors("x", "y")
    m = y * 2
    z = (x + m) - m
    z.name = "z"
    text = debugprint(z, file="str")
    assert text == (
        "Elemwise{sub} [id A] 'z'\n"
        " ├─ Elemwise{add} [id B]\n"
        " │  ├─ x [id C]\n"
        " │  └─ Elemwise{mul} [id D]\n"
        " │     ├─ y [id E]\n"
        " │     └─ DimShuffle{x} [id F]\n"
        " │        └─ 2 [id G]\n"
        " └─ Elemwise{mul} [id D] ···\n")


def test_id_styles_types_shapes_and_depth():
    x = tt.dmatrix("x")
    y = x * 3
    assert "[id 0]" in debugprint(y, file="str", ids="int")
    assert "[id" not in debugprint(y, file="str", ids="")
    assert f"[id {id(y.owner)}]" in debugprint(y, file="str", ids="id")
    typed = debugprint(y, file="str", print_type=True)
    assert "<Matrix(float64, shape=(?, ?))>" in typed
    assert "shape=(?, ?)" in debugprint(y, file="str", print_shape=True)
    assert debugprint(y, file="str", depth=1) == "Elemwise{mul} [id A]\n"
    with pytest.raises(ValueError, match="ids must be"):
        debugprint(y, file="str", ids="roman")


def test_shape_from_test_values():
    x = tt.dmatrix("x")
    x.tag.test_value = np.zeros((2, 3))
    with tg.config.change_flags(compute_test_value="raise"):
        y = x + 1
    assert "shape=(2, 3)" in debugprint(y, file="str", print_shape=True).splitlines()[0]


def test_prints_lists_nodes_graphs_and_functions(capsys):
    x = tt.dvector("x")
    s = tg.shared(np.zeros(1), name="s")
    y = x + s
    assert debugprint([y, x * 2], file="str").count("[id A]") == 1
    assert debugprint(y.owner, file="str") == debugprint(y, file="str")
    f = tg.function([x], y, updates=[(s, s + x)])
    text = debugprint(f, file="str")
    assert "(update of s)" in text
    assert debugprint(f.maker.fgraph, file="str") == text.replace(" (update of s)", "")
    assert debugprint(y) is None
    assert capsys.readouterr().out == debugprint(y, file="str")
    buffer = io.StringIO()
    tg.dprint(y, file=buffer)
    assert buffer.getvalue() == debugprint(y, file="str")
    assert "bound method" not in text and "object at" not in text
    with pytest.raises(TypeError, match="cannot print a int"):
        debugprint(3)


def test_multi_output_nodes_show_the_output_index():
    class Split(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = output_storage[1][0] = inputs[0]

    x = tt.dvector("x")
    a, b = Split()(x)
    text = debugprint([a + b], file="str")
    assert "Split.0 [id B]" in text and "Split.1 [id B] ···" in text
    assert pp(a + b) == "(Split(x)[0] + Split(x)[1])"


def test_pp_math_expressions():
    x, y = tt.dvectors("x", "y")
    assert pp(x + y * 2) == "(x + (y * 2))"
    assert pp(-x) == "-x"
    assert pp((x - y) / x) == "((x - y) / x)"
    assert pp(tt.cast(x + 1, "float32")) == "cast{float32}(x + 1)"
    assert pp(tt.dvector() + 1) == "(<Vector(float64, shape=(?,))> + 1)"
    assert pp([x + 1, y]) == "(x + 1)\ny"
    m = tt.dmatrix("m")
    assert pp(m.T) == "m.T"
    assert pp(m.dimshuffle(1, "x", 0)) == "m.dimshuffle(1, 'x', 0)"
    assert pp(m.dimshuffle(0, "x", 1)) == "m"  # broadcasting only: the same value
    assert pp(tt.exp(x)) == "exp(x)"


def test_pp_reductions():
    m = tt.dmatrix("m")
    assert pp(m.sum(axis=1)) == "sum(m, axis=1)"
    assert pp(m.sum()) == "sum(m)"
    assert pp(m.max(axis=(0, 1))) == "max(m)"
    assert pp((m * 2).sum(axis=0) + 1) == "(sum(m * 2, axis=0) + 1)"


def test_pp_registry():
    class Twice(Op):
        __props__ = ("axis",)

        def __init__(self, axis=None):
            self.axis = axis

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

    x = tt.dvector("x")
    assert pp(Twice(axis=1)(x)) == "Twice{1}(x)"
    pprint.assign(Twice, FunctionPrinter("twice", ("axis",)))
    assert pp(Twice(axis=1)(x)) == "twice(x, axis=1)"
    assert pp(Twice()(x)) == "twice(x)"
    pprint.assign(lambda op: isinstance(op, Twice) and op.axis == 0, OperatorPrinter("@"))
    assert pp(Twice(axis=0)(x + 1)) == "@(x + 1)"


def test_pp_of_a_function_and_fgraph():
    x = tt.dvector("x")
    f = tg.function([x], x * 2)
    assert pp(f) == pp(f.maker.fgraph)
    assert pp(f) == "([2.] * x)"  # canonical products: the constant (folded to an array) first
    g = tg.function([x], x * 2, mode=tg.Mode("py", None))
    assert pp(g) == "(x * 2)"


def test_deep_graphs_do_not_hit_the_recursion_limit():
    x = tt.dscalar("x")
    y = x
    for _ in range(3000):
        y = y + 1
    assert pp(y).count("+") == 3000


def test_returns_the_file_it_wrote_to(capsys):
    x = tt.dvector("x")
    buf = io.StringIO()
    assert debugprint(x * 2, file=buf) is buf
    assert buf.getvalue() == debugprint(x * 2, file="str")
    assert debugprint(x * 2) is None and capsys.readouterr().out == buf.getvalue()


def test_auto_ids_are_the_variables_auto_names():
    a, b = tt.dmatrices("a", "b")
    d = b.dot(a)
    e = d + a
    lines = debugprint(e, file="str", id_type="auto").splitlines()
    assert lines[0].endswith(f"[id {e.auto_name}]")
    assert lines[1].endswith(f"[id {d.auto_name}]")
    assert lines[2].endswith(f"[id {b.auto_name}]")
    assert lines[3].endswith(f"[id {a.auto_name}]") and lines[4].endswith(f"[id {a.auto_name}]")


def test_rich_tree_needs_rich_and_says_so(monkeypatch):
    import sys

    x = tt.dvector("x")
    for name in ("rich", "rich.tree", "rich.markup"):
        monkeypatch.setitem(sys.modules, name, None)   # as if not installed
    with pytest.raises(ImportError, match="'rich' package"):
        debugprint(x * 2, file="rich")
    assert debugprint(x * 2, file="str").startswith("Elemwise{mul}")   # text needs no rich


def test_get_node_by_id_follows_inner_graph_paths():
    from tensorgraph.compile.builders import OpFromGraph
    from tensorgraph.printing import get_node_by_id

    a, b = tt.dvectors("a", "b")
    inner_out = tt.exp(a) * b
    op = OpFromGraph([a, b], [inner_out])
    x, y = tt.dvectors("x", "y")
    z = op(x, y) + 1
    text = debugprint(z, file="str")
    # the OpFromGraph node is B outside; its inner graph is printed headed [id B]
    assert "OpFromGraph{inline=False} [id B]" in text.split("Inner graphs:")[1]
    inner = op.fgraph
    assert get_node_by_id(z, "B") is z.owner.inputs[0].owner
    assert get_node_by_id(z, "B/A") is inner.outputs[0].owner
    assert get_node_by_id(z, "B/B").op == inner.outputs[0].owner.inputs[0].owner.op
    assert get_node_by_id(z, "1/0", id_types="int") is inner.outputs[0].owner
    assert get_node_by_id(z, "A/A") is None        # A (the add) has no inner graph
    assert get_node_by_id(z, "B/ZZ") is None
    assert get_node_by_id(z, z.auto_name, id_types="auto") is z
    inner_var = inner.outputs[0]
    assert get_node_by_id(z, inner_var.auto_name, id_types="auto") is inner_var
    assert get_node_by_id(z, str(id(inner_var.owner)), id_types="id") is inner_var.owner
    with pytest.raises(ValueError, match="id_types"):
        get_node_by_id(z, "A", id_types="roman")


def test_memory_maps_storage_and_fgraph_inputs():
    from tensorgraph.graph.fg import FunctionGraph

    x, y, unused = tt.dvector("x"), tt.dvector("y"), tt.dscalar("u")
    z = (x.dimshuffle("x", 0) + 1) * y
    fg = FunctionGraph([x, y, unused], [z], clone=False)
    plain = debugprint(fg, file="str")
    assert "v={" not in plain and "→" not in plain
    text = debugprint(fg, file="str", print_view_map=True, print_fgraph_inputs=True)
    lines = text.splitlines()
    # the inputs first, with the ids the tree gives them; an unused input has none
    assert lines[:3] == [f"→ x [id {text.split('x [id ')[1][0]}]",
                         f"→ y [id {text.split('y [id ')[1][0]}]", "→ u"]
    assert [ln for ln in lines if "DimShuffle" in ln][0].endswith("v={0: [0]}")
    assert debugprint(fg, file="str", print_memory_map=True) == debugprint(
        fg, file="str", print_view_map=True, print_destroy_map=True)
    # an in-place op shows its destroy_map
    a = tt.dvector("a")
    inplace = tg.function([tg.In(a, mutable=True)], tt.exp(a) + 1, mode="FAST_RUN")
    shown = debugprint(inplace, file="str", print_destroy_map=True)
    assert "d={0: [0]}" in shown
    assert "d={" not in debugprint(inplace, file="str")
    # what the compiled function's storage cells hold (kept with allow_gc=False)
    with tg.config.change_flags(allow_gc=False):
        f = tg.function([x, y], (x + y) * 2, mode="FAST_COMPILE")
    f([1.0], [2.0])
    stored = debugprint(f, file="str", print_storage=True)
    assert "Elemwise{add} [id C] [array([3.])]" in stored


def test_stop_on_name_marks_what_it_leaves_out():
    x = tt.dvector("x")
    y = tt.exp(x)
    y.name = "ex"
    x.name = "x"
    z = (y * 2).sum()
    z.name = "total"
    text = debugprint(z, file="str", stop_on_name=True)
    assert text == ("Sum{axis=(0,), dtype=float64} [id A] 'total'\n"
                    " └─ Elemwise{mul} [id B]\n"
                    "    ├─ Elemwise{exp} [id C] 'ex'\n"
                    "    │  └─ ···\n"
                    "    └─ DimShuffle{x} [id E]\n"
                    "       └─ 2 [id F]\n")
    # ids stay the graph's (x is D, not printed); a named leaf has nothing left out
    assert "···" not in debugprint(x * 2, file="str", stop_on_name=True)


def test_cond_highlight_frames_the_ifelse_sides():
    import re
    import warnings

    from tensorgraph.ifelse import ifelse
    from tensorgraph.printing import pydotprint, to_graphviz

    a, b = tt.dscalars("a", "b")
    shared_work = tt.exp(a)
    z = ifelse(a < b, shared_work * 2 + b, tt.log(shared_work) - a, name="pick")
    from tensorgraph.graph.ids import graph_ids

    graph = graph_ids(z)
    ids = {str(key.op): graph[key] for key in graph.order if isinstance(key, Apply)}

    def frame(source, side):
        body = source.split(f"subgraph cluster_{side} {{")[1].split("\n\t}")[0]
        return set(re.findall(r"^\s*(\w+) \[label=", body, re.M))

    for which in ("pick", True, z.owner):
        source = to_graphviz(z, cond_highlight=which).source
        assert frame(source, "then") == {ids["Elemwise{add}"], ids["Elemwise{mul}"]}
        assert frame(source, "else") == {ids["Elemwise{sub}"], ids["Elemwise{log}"]}
        assert frame(source, "both") == {ids["Elemwise{exp}"]}
        assert "cluster_" not in source.split("subgraph")[0]   # the rest stays outside
    with pytest.warns(UserWarning, match="no matching IfElse"):
        source = to_graphviz(z, cond_highlight="other").source
    assert "cluster" not in source
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "cluster" not in to_graphviz(z).source
    svg = pydotprint(z, format="svg", return_image=True, cond_highlight="pick")
    assert b"ifelse: then" in svg and b"ifelse: both" in svg
