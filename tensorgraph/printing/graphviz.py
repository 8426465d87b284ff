"""Pictures of graphs: ``to_graphviz`` and ``pydotprint`` (the static form of the notebook's
graph view), and the op, type and leaf labels the views share."""

from __future__ import annotations

from tensorgraph.graph.basic import Apply, Constant


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
