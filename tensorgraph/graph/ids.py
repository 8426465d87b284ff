"""Node ids: the one short name each node of a graph goes by everywhere.

``dprint`` prints ``Elemwise{add} [id B]``; the graph view shows and searches ``B``; profiles
and error messages name the node ``B``. The ids are letters (``A``..``Z``, ``BA``, ...) handed
out in the order ``dprint`` meets the nodes: its roots (a function's outputs, then its
updates) in order, each node's inputs depth first, a node once. A node with several outputs
has one id; a graph input or constant has its own. Given the same roots the ids are always the
same, so a compiled function's nodes keep their ids for its whole life; a FunctionGraph caches
them until it changes.
"""

from __future__ import annotations

import string

__all__ = ["GraphIds", "graph_ids", "id_letters"]


def id_letters(n: int) -> str:
    """The ``n``-th id: A, B, ..., Z, BA, BB, ... (base 26 with A as zero)."""
    letters = string.ascii_uppercase
    text = letters[n % 26]
    n //= 26
    while n:
        text = letters[n % 26] + text
        n //= 26
    return text


class GraphIds:
    """Ids of the nodes and leaf variables reachable from some roots (see the module doc)."""

    def __init__(self, roots):
        self.order: list = []  # Apply nodes and leaf variables, in id order
        self._index: dict = {}
        for root in roots:
            self._visit(root)

    @staticmethod
    def key(obj):
        """What carries an id: a variable's node when it has one, else the variable itself."""
        owner = getattr(obj, "owner", None)
        return owner if owner is not None else obj

    def _visit(self, root) -> None:
        stack = [root]
        while stack:
            var = stack.pop()
            key = self.key(var)
            if key in self._index:
                continue
            self._index[key] = len(self.order)
            self.order.append(key)
            if key is not var:  # a computed variable: its inputs next, in order
                stack.extend(reversed(key.inputs))

    def __contains__(self, obj) -> bool:
        return self.key(obj) in self._index

    def __len__(self) -> int:
        return len(self.order)

    def number(self, obj) -> int:
        """The id as a number (``ids='int'`` in dprint)."""
        return self._index[self.key(obj)]

    def __getitem__(self, obj) -> str:
        """The id of a node, of the node computing a variable, or of a leaf variable."""
        return id_letters(self._index[self.key(obj)])

    def get(self, obj, default=None):
        index = self._index.get(self.key(obj))
        return default if index is None else id_letters(index)

    def find(self, text: str):
        """The node or leaf variable whose id is ``text`` (e.g. ``'BK'``), or None."""
        text = text.strip().upper()
        if not text or any(c not in string.ascii_uppercase for c in text):
            return None
        n = 0
        for c in text:
            n = n * 26 + string.ascii_uppercase.index(c)
        return self.order[n] if n < len(self.order) else None


def roots_of(obj) -> list:
    """The variables whose graph ``obj`` names, in dprint's order: a Variable; an Apply's
    outputs; a FunctionGraph's outputs; a compiled function's outputs then its updates (its
    FunctionGraph's outputs); or a list of these."""
    from tensorgraph.graph.basic import Apply, Variable
    from tensorgraph.graph.fg import FunctionGraph

    if isinstance(obj, Variable):
        return [obj]
    if isinstance(obj, Apply):
        return list(obj.outputs)
    if isinstance(obj, FunctionGraph):
        return list(obj.outputs)
    maker = getattr(obj, "maker", None)
    if maker is not None and hasattr(maker, "fgraph"):
        return list(maker.fgraph.outputs)
    if isinstance(obj, (list, tuple)):
        return [root for item in obj for root in roots_of(item)]
    raise TypeError(f"expected a variable, an Apply node, a FunctionGraph, a compiled function "
                    f"or a list of them, got {type(obj).__name__}")


def graph_ids(obj) -> GraphIds:
    """The ids of ``obj``'s graph (see :func:`roots_of`); cached on a FunctionGraph (and so on
    a compiled function) until the graph changes."""
    from tensorgraph.graph.fg import FunctionGraph

    maker = getattr(obj, "maker", None)
    fgraph = obj if isinstance(obj, FunctionGraph) else getattr(maker, "fgraph", None)
    if fgraph is None:
        return GraphIds(roots_of(obj))
    cached = getattr(fgraph, "_graph_ids", None)
    if cached is not None and cached[0] == fgraph.version:
        return cached[1]
    ids = GraphIds(list(fgraph.outputs))
    fgraph._graph_ids = (fgraph.version, ids)
    return ids
