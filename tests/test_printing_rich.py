"""debugprint(file='rich'): the same walk as the text tree, as a ``rich.tree.Tree``."""

import io
import re

import pytest

import tensorgraph.tensor as tt
from tensorgraph.compile.builders import OpFromGraph
from tensorgraph.printing import debugprint

rich = pytest.importorskip("rich")
import rich.console  # noqa: E402
import rich.tree  # noqa: E402

COLOR = re.compile(r"^\[(\w+)\]")


def labels(tree, depth=0):
    """(depth, label) of every entry under the hidden root, in order."""
    out = []
    for child in tree.children:
        out.append((depth, str(child.label)))
        out += labels(child, depth + 1)
    return out


def rendered(tree) -> str:
    buf = io.StringIO()
    rich.console.Console(file=buf, width=200, color_system=None, highlight=False).print(tree)
    return buf.getvalue()


def test_tree_has_the_text_trees_entries():
    x, y = tt.dvectors("x", "y")
    z = (x + y * 2).sum()
    tree = debugprint(z, file="rich")
    assert isinstance(tree, rich.tree.Tree) and tree.hide_root
    text_lines = debugprint(z, file="str").splitlines()
    entries = labels(tree)
    # one entry per text line, at the text line's depth, with the same words
    assert len(entries) == len(text_lines)
    for (depth, label), line in zip(entries, text_lines):
        body = line.lstrip(" │├└─")
        assert (len(line) - len(body)) // 3 == depth
        assert label.replace("\\[", "[") == body


def test_outputs_are_the_roots_children_and_depth_limits():
    x = tt.dvector("x")
    assert len(debugprint([x.sum(), x.max(), x], file="rich").children) == 3
    only_root = debugprint((x * 2).sum(), depth=1, file="rich")
    assert len(only_root.children) == 1 and only_root.children[0].children == []


def test_repeated_node_is_colored_with_a_dots_child():
    x = tt.dvector("x")
    a, b = x * 2, x + 1
    tree = debugprint([(a + b) * (a - b)], file="rich")
    entries = [label for _, label in labels(tree)]
    dots = [e for e in entries if "···" in e]
    assert len(dots) == 2                       # a and b, once each
    colored = {}
    for e in entries:
        m = COLOR.match(e)
        if m and "···" not in e:
            colored.setdefault(m.group(1), []).append(e)
    # first appearance and repeat of each shared node share a color; the two differ
    assert len(colored) == 2 and all(len(v) == 2 for v in colored.values())
    for e in dots:
        assert COLOR.match(e).group(1) in colored
    # nodes that appear once stay uncolored
    assert not COLOR.match(str(tree.children[0].label))


def test_names_with_brackets_render_and_missing_ids_are_kept():
    x = tt.dvector("x")
    y = x * 2
    y.name = "out[bold]"
    tree = debugprint(y.sum(), file="rich", print_type=True)
    text = rendered(tree)
    assert "'out[bold]'" in text and "[id B]" in text and "<Vector(float64" in text


def test_inner_graphs_section():
    x = tt.dvector("x")
    out = OpFromGraph([x], [x.std()])(x)
    tree = debugprint(out, file="rich")
    assert len(tree.children) == 2
    section = tree.children[1]
    assert str(section.label) == "[bold]Inner graphs:[/bold]"
    (heading,) = section.children
    assert "OpFromGraph" in str(heading.label)
    assert str(heading.children[0].label).startswith("← ")
    assert len(debugprint(out, file="rich", print_inner_graphs=False).children) == 1



def test_fgraph_inputs_come_first_marked():
    from tensorgraph.graph.fg import FunctionGraph

    x = tt.dvector("x")
    fg = FunctionGraph([x], [x * 2])
    tree = debugprint(fg, file="rich", print_fgraph_inputs=True)
    assert [str(c.label) for c in tree.children][0].startswith("→ ")
    assert len(tree.children) == 2
