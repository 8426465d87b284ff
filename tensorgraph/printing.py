"""Text views of graphs: ``debugprint`` (the tree of nodes) and ``pp`` (a math expression).

``debugprint`` shows every node once with an id; a subexpression used twice is expanded the
first time and referenced by its id afterwards, so printed graphs stay as small as the graph::

    Elemwise{add} [id A] 'z'
     ├─ x [id B]
     └─ Elemwise{mul} [id C]
        ├─ y [id D]
        └─ 2 [id E]

``Print(message)(x)`` prints a value whenever a compiled function computes it;
``get_node_by_id`` finds the object behind a printed id.

``pp`` writes the expression the graph computes, ``(x + (y * 2))``. How an op is written comes
from a registry: ``pprint.assign(OpClass, printer)`` (other modules register their ops there);
elementwise ops are written from their scalar op's ``symbol`` (infix/prefix) or name
(``exp(x)``); anything else falls back to ``Op(args)``.
"""

from __future__ import annotations

import itertools
import sys

from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.ids import graph_ids, id_letters
from tensorgraph.graph.op import Op

# ----------------------------------------------------------------------------------------------
# debugprint


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


class Print(Op):
    """``Print(message)(x)`` is ``x``, printing ``message`` and the value (each of ``attrs``
    of it: ``'__str__'``, ``'shape'``...) whenever it is computed: Theano's way of looking
    at a value inside a compiled function. ``global_fn(op, value)`` replaces the printing.
    It runs in Python and is never removed by rewriting (constant folding included)."""

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(self, message: str = "", attrs=("__str__",), global_fn=None):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def __str__(self):
        return f"Print{{{self.message}}}"

    def make_node(self, x):
        if not isinstance(x, Variable):
            from tensorgraph import hooks

            x = hooks.as_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (value,) = inputs
        output_storage[0][0] = value
        if self.global_fn is not None:
            self.global_fn(self, value)
            return
        for attr in self.attrs:
            shown = getattr(value, attr)
            print(self.message, attr, "=", shown() if callable(shown) else shown)

    def infer_shape(self, fgraph, node, input_shapes):
        return list(input_shapes)

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)

    def R_op(self, inputs, eval_points):
        return list(eval_points)

    def do_constant_folding(self, fgraph, node) -> bool:
        return False

# ----------------------------------------------------------------------------------------------
# pp


class OperatorPrinter:
    """Writes a node as ``(a op b op c)`` (or ``op a`` for one input), e.g. ``(x + y)``."""

    def __init__(self, symbol: str):
        self.symbol = symbol

    def __call__(self, node, args: list[str]) -> str:
        if len(args) == 1:
            return f"{self.symbol}{args[0]}"
        return "(" + f" {self.symbol} ".join(args) + ")"


class FunctionPrinter:
    """Writes a node as ``name(args, prop=value, ...)`` with the op's chosen props as keywords
    (props equal to None are left out): ``sum(x, axis=1)``."""

    def __init__(self, name: str, props: tuple[str, ...] = ()):
        self.name = name
        self.props = props

    def __call__(self, node, args: list[str]) -> str:
        parts = list(args)
        for prop in self.props:
            value = getattr(node.op, prop)
            if value is not None:
                parts.append(f"{prop}={value}")
        return f"{self.name}({_call_args(parts)})"


class PatternPrinter:
    """Writes a node from a %-pattern over its printed inputs, PyTensor's way:
    ``PatternPrinter(("|%(0)s - %(1)s|", -1000))`` prints ``|a - b|``. One pattern per output
    (a pattern is a string or a ``(string, precedence)`` pair; the precedence is kept for
    PyTensor code that reads it, the inputs arrive already parenthesized)."""

    def __init__(self, *patterns):
        if not patterns:
            raise TypeError("PatternPrinter needs at least one pattern")
        self.patterns = [(p, None) if isinstance(p, str) else tuple(p) for p in patterns]

    def __call__(self, node, args: list[str]) -> str:
        pattern = self.patterns[0][0]
        return pattern % {str(i): a for i, a in enumerate(args)}


class DefaultPrinter:
    """Writes a node as ``Op(args)`` (what ``pp`` writes for an op with no printer)."""

    def __call__(self, node, args: list[str]) -> str:
        return f"{node.op}({_call_args(args)})"


default_printer = DefaultPrinter()


def _takes_two(key) -> bool:
    import inspect

    try:
        return len(inspect.signature(key).parameters) == 2
    except (TypeError, ValueError):
        return False


class PPrinter:
    """The ``pp`` registry and printer. ``pprint.assign(key, printer)``: ``key`` is an Op class
    (applies to subclasses), an Op instance (that op), a predicate ``op -> bool`` or, as in
    PyTensor, ``(pstate, variable) -> bool``; ``printer(node, args) -> str`` gets the already
    printed inputs. A printer for an Op instance is used first; among the others, later
    assignments win."""

    def __init__(self):
        self.printers: list = []

    def assign(self, key, printer) -> None:
        self.printers.insert(0, (key, printer))

    def _find(self, op, var=None):
        # a printer given for this very op wins over classes and predicates (PyTensor keeps
        # those in a table it reads first)
        for key, printer in self.printers:
            if isinstance(key, Op) and op == key:
                return printer
        for key, printer in self.printers:
            if isinstance(key, type):
                if isinstance(op, key):
                    return printer
            elif isinstance(key, Op):
                continue
            elif _takes_two(key):
                if var is not None and key(None, var):
                    return printer
            elif key(op):
                return printer
        return None

    def node_text(self, node, args: list[str]) -> str:
        printer = self._find(node.op, node.outputs[0])
        if printer is not None:
            return printer(node, args)
        scalar_op = getattr(node.op, "scalar_op", None)
        if scalar_op is not None:
            printer = self._find(scalar_op)
            if printer is not None:
                return printer(node, args)
            symbol = getattr(scalar_op, "symbol", None)
            if symbol:
                return OperatorPrinter(symbol)(node, args)
            return f"{getattr(scalar_op, 'name', scalar_op)}({_call_args(args)})"
        return f"{node.op}({_call_args(args)})"

    def process(self, var, memo: dict) -> str:
        """The text of ``var``; ``memo`` caches nodes already written (shared subexpressions)."""
        if var in memo:
            return memo[var]
        stack = [var]
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            node = top.owner
            if node is None:
                memo[top] = _leaf_text(top)
                stack.pop()
                continue
            pending = [i for i in node.inputs if i not in memo]
            if pending:
                stack.extend(reversed(pending))
                continue
            text = self.node_text(node, [memo[i] for i in node.inputs])
            for out in node.outputs:
                memo[out] = text if len(node.outputs) == 1 else f"{text}[{out.index}]"
            stack.pop()
        return memo[var]

    def __call__(self, obj) -> str:
        """``obj`` (a variable, a list of them, a FunctionGraph or a compiled function) as
        math; several outputs give one line each."""
        from tensorgraph.graph.fg import FunctionGraph

        if isinstance(obj, Variable):
            return self.process(obj, {})
        if isinstance(obj, FunctionGraph):
            obj = obj.outputs
        elif hasattr(obj, "maker") and hasattr(obj.maker, "fgraph"):
            obj = obj.maker.fgraph.outputs
        memo: dict = {}
        return "\n".join(self.process(v, memo) for v in obj)


def _call_args(args: list[str]) -> str:
    """Arguments of ``f(...)``; a lone ``(a + b)`` loses its now redundant parentheses."""
    if len(args) == 1 and _is_wrapped(args[0]):
        return args[0][1:-1]
    return ", ".join(args)


def _is_wrapped(text: str) -> bool:
    """Whether ``text`` is one parenthesized group, like ``(a + (b * c))``."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    level = 0
    for k, char in enumerate(text):
        level += char == "("
        level -= char == ")"
        if level == 0 and k < len(text) - 1:
            return False
    return True


def _leaf_text(var) -> str:
    if isinstance(var, Constant) or var.name is not None:
        return str(var)
    return f"<{var.type}>"


def _only_broadcasts(op) -> bool:
    """A DimShuffle that keeps the order of the dimensions and only adds or drops size-1 ones:
    as math it is the same value, so ``pp`` leaves it out."""
    kept = [d for d in op.new_order if d != "x"]
    return kept == sorted(kept)


def _dimshuffle_text(node, args):
    op = node.op
    if _only_broadcasts(op):
        return args[0]
    if op.new_order == (1, 0):
        return f"{args[0]}.T"
    return f"{args[0]}.dimshuffle{op.new_order}"


def _reduction_text(node, args):
    """``sum(x, axis=1)``: a reduction named after its class, the axis left out when it spans
    every dimension."""
    op = node.op
    name = type(op).__name__.lower()
    if name == "careduce":
        name = f"reduce_{op.scalar_op}"
    axis = op.axis
    ndim = getattr(node.inputs[0].type, "ndim", None)
    if axis is None or (ndim is not None and sorted(axis) == list(range(ndim))):
        return f"{name}({_call_args(args)})"
    axis = axis[0] if len(axis) == 1 else tuple(axis)
    return f"{name}({_call_args(args)}, axis={axis})"


def min_informative_str(obj, indent_level: int = 0, _prev_obs=None, _tag_generator=None) -> str:
    """The graph of ``obj`` (a variable or an Apply) as short lines ``A. Add``: each variable
    gets a letter; a named variable prints its name and is not expanded (the name says what it
    is), one seen before prints its letter only; children are indented one space."""
    prev = {} if _prev_obs is None else _prev_obs
    tags = iter(id_letters(k) for k in itertools.count()) if _tag_generator is None \
        else _tag_generator
    pad = " " * indent_level
    if obj in prev:
        return pad + prev[obj]
    tag = next(tags)
    prev[obj] = tag
    node = obj if isinstance(obj, Apply) else obj.owner
    if isinstance(obj, Variable) and (obj.name is not None or node is None):
        return f"{pad}{tag}. {obj.name if obj.name is not None else obj}"
    label = type(node.op).__name__
    scalar_op = getattr(node.op, "scalar_op", None)
    if scalar_op is not None:
        label = type(scalar_op).__name__
    lines = [f"{pad}{tag}. {label}"]
    lines += [min_informative_str(i, indent_level + 1, prev, tags) for i in node.inputs]
    return "\n".join(lines)


pprint = PPrinter()
# ops of tensorgraph.tensor, recognised by shape so that printing never imports tensor modules
pprint.assign(lambda op: type(op).__name__ == "DimShuffle", _dimshuffle_text)
pprint.assign(lambda op: hasattr(op, "scalar_op") and hasattr(op, "axis"), _reduction_text)
pp = pprint

# ----------------------------------------------------------------------------------------------
# Pictures: to_graphviz / pydotprint (the static form of the notebook's graph view)


def op_label(op, limit: int = 48) -> str:
    """An op as a view shows it: ``Gemv``, ``Sum{axis=(1,)}``, ``Elemwise{Composite{exp(i0)...}}``
    (long texts, such as fused loops, cut at ``limit`` characters)."""
    text = str(op)
    return text if len(text) <= limit else text[:limit - 4] + "...}"


def type_label(var) -> str:
    """``float32 (400, ?)``: dtype and static shape (``?`` where unknown), or the type's text."""
    t = var.type
    dtype, shape = getattr(t, "dtype", None), getattr(t, "shape", None)
    if dtype is None or shape is None:
        return str(t)
    dims = ", ".join("?" if s is None else str(s) for s in shape)
    return f"{dtype} ({dims}{',' if len(shape) == 1 else ''})"


def leaf_kind(var, fgraph_inputs=()) -> str:
    """What a graph leaf is: 'constant', 'shared' (a shared variable), or 'input'."""
    if isinstance(var, Constant):
        return "constant"
    if type(var).__name__ == "SharedVariable" or hasattr(var, "get_value"):
        return "shared"
    return "input"


_DOT_STYLES = {
    "apply": 'shape=box style="rounded,filled" fillcolor="#e8eef7" color="#4a6fa5"',
    "input": 'shape=ellipse style=filled fillcolor="#e3f2e1" color="#3d7a35"',
    "shared": 'shape=ellipse style=filled fillcolor="#fdf0d5" color="#b07d12"',
    "constant": 'shape=plaintext fontcolor="#555555"',
    "output": 'shape=ellipse style=filled fillcolor="#f6e1e1" color="#a83232"',
}


def _shorten(text: str, limit: int | None) -> str:
    return text if limit is None or len(text) <= limit else text[:max(limit - 3, 1)] + "..."


def to_graphviz(obj, *, rankdir: str = "TB", max_label_size: int | None = None,
                cond_highlight=None):
    """``obj``'s graph (a variable, a list of them, an Apply, a FunctionGraph or a compiled
    function) as a ``graphviz.Digraph``: nodes named by the ids ``dprint`` prints, boxes for
    ops, green ellipses for inputs, amber for shared variables, grey text for constants, red
    ellipses for outputs and updates; edges carry the intermediate values' types.
    ``max_label_size`` cuts op and variable names longer than that (ending in '...'); nodes
    stay apart by their ids whatever their labels.

    ``cond_highlight`` frames the work of a lazy ``ifelse``: the nodes only its "then" side
    needs, those only its "else" side needs, and those both need, in three boxes. Give the
    IfElse node, its name (``ifelse(..., name=)``) or True (the first IfElse met); a warning
    says when there is no such node."""
    import graphviz

    from tensorgraph.graph.ids import graph_ids, roots_of

    ids = graph_ids(obj)
    graph = graphviz.Digraph("tensorgraph", graph_attr={"rankdir": rankdir, "fontsize": "10"},
                             node_attr={"fontname": "Helvetica", "fontsize": "10"},
                             edge_attr={"fontname": "Helvetica", "fontsize": "8",
                                        "color": "#777777"})
    sides = _ifelse_sides(ids.order, cond_highlight) if cond_highlight is not None else {}
    frames = {side: graphviz.Digraph(f"cluster_{side}", graph_attr={
        "label": f"ifelse: {side}", "style": "rounded", "color": color, "fontcolor": color})
        for side, color in _IFELSE_SIDE_COLORS.items()}
    for key in ids.order:
        name = ids[key]
        if isinstance(key, Apply):
            label = f"{_shorten(op_label(key.op), max_label_size)}\\n[id {name}]"
            target = frames[sides[key]] if key in sides else graph
            target.node(name, label, _attributes=_dot_attrs("apply"))
            for inp in key.inputs:
                edge_label = "" if inp.owner is None else type_label(inp)
                graph.edge(ids[inp], name, label=edge_label)
        else:
            kind = leaf_kind(key)
            text = _shorten(key._label() if isinstance(key, Constant) else str(key),
                            max_label_size)
            label = text if kind == "constant" else f"{text}\\n{type_label(key)}"
            graph.node(name, label, _attributes=_dot_attrs(kind))
    roots = roots_of(obj)
    maker = getattr(obj, "maker", None)
    n_out = len(maker.outputs) if maker is not None else len(roots)
    targets = list(getattr(maker, "update_targets", ())) if maker is not None else []
    for k, var in enumerate(roots):
        if k < n_out:
            label = f"out {k}" + (f": {var.name}" if var.name else "")
        else:
            label = f"update of {targets[k - n_out]}" if k - n_out < len(targets) else "output"
        graph.node(f"out{k}", f"{label}\\n{type_label(var)}", _attributes=_dot_attrs("output"))
        graph.edge(ids[var], f"out{k}")
    for side, frame in frames.items():
        if side in sides.values():
            graph.subgraph(frame)
    return graph


_IFELSE_SIDE_COLORS = {"then": "#3d7a35", "else": "#a83232", "both": "#555555"}


def _ifelse_sides(nodes, which) -> dict:
    """{node: 'then' | 'else' | 'both'} for the nodes computing the branches of the IfElse
    that ``which`` names (the node, its op's name, or True: the first one); {} and a warning
    when there is none. A conditional op is one with ``branch_inputs(node)`` (IfElse has it;
    this layer does not import the ifelse module, which sits above it)."""
    import warnings

    found = None
    for node in nodes:
        if isinstance(node, Apply) and hasattr(node.op, "branch_inputs") and (
                which is True or node is which or getattr(node.op, "name", None) == which):
            found = node
            break
    if found is None:
        warnings.warn(f"pydotprint: cond_highlight={which!r} is set but the graph has no "
                      "matching IfElse node; nothing is highlighted", stacklevel=3)
        return {}
    then_inputs, else_inputs = found.op.branch_inputs(found)
    then_nodes = _ancestor_nodes(then_inputs)
    else_nodes = _ancestor_nodes(else_inputs)
    sides = {node: "then" for node in then_nodes - else_nodes}
    sides.update({node: "else" for node in else_nodes - then_nodes})
    sides.update({node: "both" for node in then_nodes & else_nodes})
    return sides


def _ancestor_nodes(variables) -> set:
    seen: set = set()
    stack = [v.owner for v in variables if v.owner is not None]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(i.owner for i in node.inputs if i.owner is not None)
    return seen


def _dot_attrs(kind: str) -> dict:
    attrs = {}
    for part in _DOT_STYLES[kind].split(" "):
        key, _, value = part.partition("=")
        attrs[key] = value.strip('"')
    return attrs


def pydotprint(obj, outfile: str | None = None, format: str = "png", timeout: float = 60.0,
               *, return_image: bool = False, max_label_size: int | None = None,
               print_output_file: bool = True, cond_highlight=None):
    """Write ``obj``'s graph as a picture (``format`` 'png', 'svg', 'pdf', ...), as Theano's
    ``pydotprint`` did; returns the file's path (default ``tensorgraph_graph.<format>``), and
    prints it unless ``print_output_file=False``. ``return_image=True`` writes no file and
    returns the picture's bytes; ``max_label_size`` cuts long names and ``cond_highlight``
    frames an ifelse's "then" and "else" work (see ``to_graphviz``).

    Needs Graphviz's ``dot`` (or ``graphviz-pure``, see ``tensorgraph.graphviz_run``); the
    whole graph is laid out, so a very big graph takes long (the notebook's graph view opens
    big graphs in groups instead)."""
    from tensorgraph.graphviz_run import run_dot

    graph = to_graphviz(obj, max_label_size=max_label_size, cond_highlight=cond_highlight)
    data = run_dot(graph.source, format, timeout=timeout)
    if return_image:
        return data
    path = outfile or f"tensorgraph_graph.{format}"
    with open(path, "wb") as handle:
        handle.write(data)
    if print_output_file:
        print(f"The output file is available at {path}")
    return path
