"""Views of graphs as text and pictures: ``debugprint`` (the tree of nodes), ``pp`` (a math
expression), the ``Print`` op and Graphviz pictures (``to_graphviz``, ``pydotprint``).

One module per job, every public name re-exported here (``tensorgraph.printing.debugprint``
is where Theano and PyTensor users look for it):

- ``tree``: ``debugprint`` / ``dprint`` and ``get_node_by_id``;
- ``print_op``: ``Print(message)(x)``, which prints a value whenever it is computed;
- ``expression``: ``pp`` / ``pprint``, its printers and ``min_informative_str``;
- ``graphviz``: ``to_graphviz``, ``pydotprint`` and the labels the views share.
"""

from tensorgraph.printing.expression import (
    DefaultPrinter,
    FunctionPrinter,
    OperatorPrinter,
    PatternPrinter,
    PPrinter,
    default_printer,
    min_informative_str,
    pp,
    pprint,
)
from tensorgraph.printing.graphviz import (
    leaf_kind,
    op_label,
    pydotprint,
    to_graphviz,
    type_label,
)
from tensorgraph.printing.print_op import Print
from tensorgraph.printing.tree import (
    char_from_number,
    debugprint,
    dprint,
    get_node_by_id,
)

__all__ = ["debugprint", "dprint", "char_from_number", "get_node_by_id", "Print",
           "OperatorPrinter", "FunctionPrinter", "PatternPrinter", "DefaultPrinter",
           "default_printer", "PPrinter", "pprint", "pp", "min_informative_str", "op_label",
           "type_label", "leaf_kind", "to_graphviz", "pydotprint"]
