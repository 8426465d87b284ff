"""``debugprint``: the tree of a graph's nodes, each printed once with an id, and
``get_node_by_id``, which finds the object behind a printed id.

A subexpression used twice is expanded the first time and referenced by its id afterwards, so
printed graphs stay as small as the graph::

    Elemwise{add} [id A] 'z'
     ├─ x [id B]
     └─ Elemwise{mul} [id C]
        ├─ y [id D]
        └─ 2 [id E]
"""

from __future__ import annotations

import sys

from tensorgraph.graph.basic import Apply, Variable
from tensorgraph.graph.ids import graph_ids, id_letters


class _Ids:
    """The ``[id X]`` suffix of each printed node: the graph's ids (``tensorgraph.graph.ids``,
    shared with the graph view, profiles and errors), as letters, numbers, Python ids, the
    variables' ``auto_name`` or none."""

    STYLES = ("CHAR", "int", "id", "auto", "")

    def __init__(self, style: str, roots):
        if style not in self.STYLES:
            raise ValueError(f"ids must be 'CHAR', 'int', 'id', 'auto' or '', got {style!r}")
        self.style = style
        self.ids = graph_ids(roots) if style in ("CHAR", "int") else None

    def __call__(self, obj, var=None) -> str:
        """The suffix of ``obj`` (an Apply node or a leaf variable); ``var`` is the variable
        printed for it (one output of a node with several), for ``auto`` ids."""
        if self.style == "":
            return ""
        if self.style in ("CHAR", "int") and obj not in self.ids:
            return ""   # an input no output uses (print_fgraph_inputs): it has no id
        if self.style == "CHAR":
            return f" [id {self.ids[obj]}]"
        if self.style == "int":
            return f" [id {self.ids.number(obj)}]"
        if self.style == "auto":
            if var is None:
                var = obj.outputs[0] if isinstance(obj, Apply) else obj
            return f" [id {var.auto_name}]"
        return f" [id {id(obj)}]"


def _shape_text(var) -> str:
    """The actual shape when a value is known (test value, constant, shared), else the static one."""
    value = None
    try:
        value = var.get_test_value()
    except Exception:
        pass
    shape = getattr(value, "shape", None)
    if shape is None:
        shape = getattr(var.type, "shape", None)
        if shape is None:
            return ""
    dims = ", ".join("?" if s is None else str(s) for s in shape)
    return f" shape=({dims}{',' if len(shape) == 1 else ''})"


def _label(var) -> str:
    node = var.owner
    if node is None:
        return str(var)
    text = str(node.op)
    if len(node.outputs) > 1:
        text += f".{var.index}"
    return text


class _TextSink:
    """Where the walk goes for text: one line per entry, drawn with box characters. A place
    is the ``(head, indent)`` pair: what starts this line, and what starts its children's."""

    def __init__(self):
        self.lines: list[str] = []

    def root(self):
        return ("", " ")

    def emit(self, place, text: str, key, repeated: bool):
        head, indent = place
        self.lines.append(head + text + (" ···" if repeated else ""))
        return indent

    def child(self, indent: str, last: bool):
        return (indent + ("└─ " if last else "├─ "), indent + ("   " if last else "│  "))

    def omitted(self, indent: str):
        self.lines.append(indent + "└─ ···")

    def inner_section(self, first: bool, heading: str):
        if first:
            self.lines += ["", "Inner graphs:"]
        self.lines += ["", heading]
        return (" ← ", "    ")

    def input_place(self, inner: bool):
        return (" → " if inner else "→ ", "    " if inner else "  ")

    def result(self):
        return "\n".join(self.lines) + "\n"


class _RichSink:
    """Where the walk goes for ``file='rich'``: a ``rich.tree.Tree`` whose hidden root holds
    one child per printed output (then "Inner graphs:"). A node reached again is drawn with
    its label and a ``···`` child; it and its first appearance get one color, a different one
    for each such node, so the eye finds where a repeated node was expanded. Labels are
    markup-escaped (names may hold ``[...]``). A place is ``(parent tree, label prefix)``."""

    COLORS = ("blue", "cyan", "green", "yellow", "magenta")

    def __init__(self):
        try:
            import rich.markup
            import rich.tree
        except ImportError as exc:
            raise ImportError("debugprint(file='rich') needs the 'rich' package "
                              "(pip install rich); file='str' gives the same tree as text"
                              ) from exc
        self.escape = rich.markup.escape
        self.tree = rich.tree.Tree("", hide_root=True)
        self.Tree = rich.tree.Tree
        self.colors: dict = {}   # repeated node -> its color
        self.drawn: dict = {}    # node -> the tree entries drawn for it (colored afterwards)
        self.inner_root = None
        self.heading = None

    def root(self):
        return (self.tree, "")

    def _color(self, key) -> str:
        if key not in self.colors:
            color = self.COLORS[len(self.colors) % len(self.COLORS)]
            self.colors[key] = color
            for entry in self.drawn.get(key, ()):
                entry.label = f"[{color}]{entry.label}[/{color}]"
        return self.colors[key]

    def emit(self, place, text: str, key, repeated: bool):
        parent, prefix = place
        label = self.escape(prefix + text)
        if repeated:
            color = self._color(key)
            entry = parent.add(f"[{color}]{label}[/{color}]")
            entry.add(f"[{color}]···[/{color}]")
            return entry
        if key in self.colors:
            label = f"[{self.colors[key]}]{label}[/{self.colors[key]}]"
        entry = parent.add(label)
        self.drawn.setdefault(key, []).append(entry)
        return entry

    def child(self, entry, last: bool):
        return (entry, "")

    def omitted(self, entry):
        entry.add("···")

    def inner_section(self, first: bool, heading: str):
        if self.inner_root is None:
            self.inner_root = self.tree.add("[bold]Inner graphs:[/bold]")
        self.heading = self.inner_root.add(self.escape(heading))
        return (self.heading, "← ")

    def input_place(self, inner: bool):
        return (self.heading if inner else self.tree, "→ ")

    def result(self):
        return self.tree


class _TreeWalker:
    """The walk ``debugprint`` makes: depth first from each root, a node expanded once (met
    again, it is sent as ``repeated``), to ``depth`` levels, not below a named variable with
    ``stop_on_name``. Each entry goes to a sink (text lines or a rich tree)."""

    def __init__(self, sink, ids, print_type, print_shape, depth, stop_on_name=False,
                 maps=(False, False), storage=None):
        self.sink = sink
        self.ids = ids
        self.print_type = print_type
        self.print_shape = print_shape
        self.depth = depth
        self.stop_on_name = stop_on_name
        self.destroy_map, self.view_map = maps
        self.storage = storage   # {variable: storage cell} of compiled functions, or None
        self.done: set = set()
        self.inner_ops: list = []      # nodes with an inner graph met, in order (one per op)

    def line(self, var, suffix: str = "") -> str:
        key = var.owner if var.owner is not None else var
        text = _label(var) + self.ids(key, var)
        if var.owner is not None and var.name is not None:
            text += f" '{var.name}'"
        if self.print_type:
            text += f" <{var.type}>"
        if self.print_shape:
            text += _shape_text(var)
        op = getattr(var.owner, "op", None)
        if self.destroy_map and getattr(op, "destroy_map", None):
            text += f" d={op.destroy_map}"
        if self.view_map and getattr(op, "view_map", None):
            text += f" v={op.view_map}"
        if self.storage is not None and var in self.storage:
            text += f" {self.storage[var]}"
        return text + suffix

    def tree(self, var, place, level: int, suffix: str = ""):
        node = var.owner
        key = node if node is not None else var
        if node is not None and node in self.done:
            self.sink.emit(place, self.line(var, suffix), key, True)
            return
        here = self.sink.emit(place, self.line(var, suffix), key, False)
        if node is None or (0 <= self.depth <= level + 1):
            return
        if self.stop_on_name and var.name is not None and level > 0:
            self.sink.omitted(here)   # a ··· child: its inputs are there, not shown
            return
        self.done.add(node)
        if _inner_fgraph(node.op) is not None and all(n.op is not node.op
                                                      for n in self.inner_ops):
            self.inner_ops.append(node)
        for k, inp in enumerate(node.inputs):
            self.tree(inp, self.sink.child(here, k == len(node.inputs) - 1), level + 1)


def _roots(obj):
    """[(variable, suffix)] to print for a variable, node, graph, function or list of them."""
    from tensorgraph.graph.fg import FunctionGraph

    if isinstance(obj, Variable):
        return [(obj, "")]
    if isinstance(obj, Apply):
        return [(obj.outputs[0], "")] if len(obj.outputs) == 1 else [
            (out, "") for out in obj.outputs]
    if isinstance(obj, FunctionGraph):
        return [(out, "") for out in obj.outputs]
    maker = getattr(obj, "maker", None)
    if maker is not None and hasattr(maker, "fgraph"):
        outputs = maker.fgraph.outputs
        n_out = len(maker.outputs)
        roots = [(out, "") for out in outputs[:n_out]]
        for out, target in zip(outputs[n_out:], maker.update_targets):
            roots.append((out, f" (update of {target})"))
        return roots
    if isinstance(obj, (list, tuple)):
        return [root for item in obj for root in _roots(item)]
    raise TypeError(f"debugprint: cannot print a {type(obj).__name__}; give a variable, an Apply "
                    "node, a FunctionGraph, a compiled function or a list of them")


def _inner_fgraph(op):
    """The inner graph of an op that has one (OpFromGraph, Scan, jacobian's loop), or None."""
    from tensorgraph.graph.fg import FunctionGraph

    inner = getattr(op, "fgraph", None)
    return inner if isinstance(inner, FunctionGraph) else None


def _node_inner_fgraph(node):
    """The inner graph to print for ``node``: a scan of a compiled function runs its step as
    compiled (rewritten; ``node.tag.scan_runner``), and that is the graph whose ids the graph
    view, the stepper and the profile use (``D/B``); else the op's inner graph as built."""
    runner = getattr(getattr(node, "tag", None), "scan_runner", None)
    if runner is not None:
        return runner.function.maker.fgraph
    return _inner_fgraph(node.op)


def debugprint(obj, file=None, print_type: bool = False, print_shape: bool = False,
               depth: int = -1, ids: str = "CHAR", id_type: str | None = None,
               stop_on_name: bool = False, print_inner_graphs: bool = True,
               print_destroy_map: bool = False, print_view_map: bool = False,
               print_memory_map: bool = False, print_storage: bool = False,
               print_fgraph_inputs: bool = False):
    """Print the graph(s) of ``obj`` as a tree, one line per node.

    Parameters
    ----------
    obj : Variable, Apply, FunctionGraph, compiled Function, or a list of them
    file : None (print to stdout), 'str' (return the text), a file object to write to, or
        'rich' (return a ``rich.tree.Tree`` of the same entries, for ``rich.print``: a
        repeated node and its first appearance share a color; needs the ``rich`` package)
    print_type : show each variable's type
    print_shape : show each variable's shape (the test value's when there is one, otherwise
        the static shape with ``?`` for unknown sizes)
    depth : how many levels to show (-1: all)
    ids : 'CHAR' (A, B, ...), 'int' (0, 1, ...), 'id' (Python ids), 'auto' (each variable's
        ``auto_name``) or '' (none); ``id_type`` is PyTensor's name for it. 'CHAR' and 'int'
        are the ids the graph view, profiles and error messages use.
    stop_on_name : do not expand below a named variable (other than a root); a ``···``
        line under it stands for its inputs
    print_inner_graphs : after the tree, print the inner graph of each op that has one
        (OpFromGraph, Scan), under "Inner graphs:", its outputs marked ``←``
    print_destroy_map, print_view_map : show the op's ``destroy_map`` (``d={0: [0]}``: output
        0 overwrites input 0) and ``view_map`` (``v={0: [0]}``: output 0 is a view of input
        0), to see which compiled nodes work in place; ``print_memory_map`` sets both
    print_storage : for a compiled function, show what each variable's storage cell holds
        now (``[None]`` once freed; keep values with ``config.allow_gc=False``)
    print_fgraph_inputs : for a FunctionGraph or compiled function, first list its inputs,
        marked ``→`` (inner graphs' inputs too)

    Returns the text ('str'), the tree ('rich'), the file object given, or None (stdout).

    A node reached a second time is not expanded again: its line ends with ``···``.
    Compiled functions also show their update expressions, marked ``(update of s)``.
    """
    if id_type is not None:
        ids = id_type
    if print_memory_map:
        print_destroy_map = print_view_map = True
    maps = (print_destroy_map, print_view_map)
    roots = _roots(obj)
    node_ids = _Ids(ids, obj)
    storage = _storage_of(obj) if print_storage else None
    sink = _RichSink() if isinstance(file, str) and file == "rich" else _TextSink()
    printer = _TreeWalker(sink, node_ids, print_type, print_shape, depth, stop_on_name, maps,
                          storage)
    if print_fgraph_inputs:
        for var in _fgraph_inputs(obj):
            printer.tree(var, sink.input_place(False), 0)
    for var, suffix in roots:
        printer.tree(var, sink.root(), 0, suffix)
    if print_inner_graphs and printer.inner_ops:
        # each heading names its node as the graph view does: J, or J/C for a loop in J's step
        heading_id = {n: printer.ids(n) for n in printer.inner_ops}
        for k, node in enumerate(printer.inner_ops):   # (inner graphs may hold inner graphs)
            inner = _node_inner_fgraph(node)
            sub_ids = _Ids(ids, inner)
            sub = _TreeWalker(sink, sub_ids, print_type, print_shape, depth, stop_on_name,
                              maps)
            compiled = inner is not _inner_fgraph(node.op)
            heading = str(node.op) + heading_id[node] + (" (as compiled)" if compiled else "")
            place = sink.inner_section(k == 0, heading)
            if print_fgraph_inputs:
                for var in inner.inputs:
                    sub.tree(var, sink.input_place(True), 0)
            for out in inner.outputs:
                sub.tree(out, place, 0)
            new = [n for n in sub.inner_ops if all(m.op is not n.op for m in printer.inner_ops)]
            for n in new:
                outer = heading_id[node]
                heading_id[n] = (outer[:-1] + "/" + sub_ids(n)[len(" [id "):]
                                 if outer and sub_ids(n) and ids != "auto" else sub_ids(n))
            printer.inner_ops += new
    result = sink.result()
    if isinstance(file, str) and file in ("str", "rich"):
        return result
    if file is None:   # returns None, not sys.stdout: a notebook cell shows no stream object
        sys.stdout.write(result)
        return None
    file.write(result)
    return file


def _graph_objects(obj) -> list:
    return [o for item in obj for o in _graph_objects(item)] if isinstance(obj, (list, tuple)) \
        else [obj]


def _fgraph_inputs(obj) -> list:
    """The inputs of the FunctionGraphs and compiled functions in ``obj``, in order, once."""
    from tensorgraph.graph.fg import FunctionGraph

    inputs: dict = {}
    for item in _graph_objects(obj):
        fgraph = item if isinstance(item, FunctionGraph) else getattr(
            getattr(item, "maker", None), "fgraph", None)
        if fgraph is not None:
            inputs.update(dict.fromkeys(fgraph.inputs))
    return list(inputs)


def _storage_of(obj) -> dict:
    """{variable: storage cell} of the compiled functions in ``obj`` (their VM's cells)."""
    storage: dict = {}
    for item in _graph_objects(obj):
        storage.update(getattr(getattr(item, "vm", None), "storage_map", None) or {})
    return storage


dprint = debugprint

#: the id ``debugprint`` gives the ``n``-th node: A, ..., Z, BA, ... (PyTensor's name)
char_from_number = id_letters


def get_node_by_id(graphs, target_var_id, id_types: str = "CHAR"):
    """The node (or leaf variable) that ``debugprint(graphs, ids=id_types)`` labels
    ``[id target_var_id]``, or None: to get from a printed graph back to the object.

    A node of an inner graph (OpFromGraph, Scan) is named as the graph view names it, by its
    path: ``'D/B'`` is node B of the inner graph of node D (``debugprint`` prints that inner
    graph under "Inner graphs:", headed ``[id D]``). With ``id_types='auto'`` the id is a
    variable's ``auto_name``: the variable is returned."""
    if id_types not in ("CHAR", "int", "id", "auto"):
        raise ValueError("get_node_by_id: id_types must be 'CHAR', 'int', 'id' or 'auto', "
                         f"got {id_types!r}")
    if id_types in ("id", "auto"):
        return _find_in_graphs(graphs, id_types, str(target_var_id))
    path = str(target_var_id).split("/")
    found = None
    for depth, part in enumerate(path):
        if depth:
            inner = _node_inner_fgraph(found) if isinstance(found, Apply) else None
            if inner is None:
                return None
            graphs = inner
        found = _find_by_graph_id(graph_ids(graphs), part, id_types)
        if found is None:
            return None
    return found


def _find_by_graph_id(ids, part: str, id_types: str):
    if id_types == "CHAR":
        return ids.find(part)
    try:
        n = int(part)
    except ValueError:
        return None
    return ids.order[n] if 0 <= n < len(ids.order) else None


def _find_in_graphs(graphs, id_types: str, target: str):
    """The node with Python id ``target`` ('id'), or the variable named ``target`` by its
    ``auto_name`` ('auto'), among the nodes and variables of ``graphs`` and their inner graphs."""
    pending = [graph_ids(graphs)]
    while pending:
        ids = pending.pop()
        for obj in ids.order:
            if id_types == "id" and str(id(obj)) == target:
                return obj
            if id_types == "auto":
                for var in (obj.outputs if isinstance(obj, Apply) else [obj]):
                    if getattr(var, "auto_name", None) == target:
                        return var
            inner = _node_inner_fgraph(obj) if isinstance(obj, Apply) else None
            if inner is not None:
                pending.append(graph_ids(inner))
    return None
