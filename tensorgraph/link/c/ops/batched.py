"""C of ``Blockwise``: a core op with per-item C (an ``ItemC``) run over a batch in C.

A core op that computes one item (one matrix: ``Cholesky``, ``Solve``...) gives C for that
item only: an ``ItemC`` registered with ``@register_item(CoreOp)``, naming a C kernel
``int kernel(tg_item *it)`` (views of the item's inputs and outputs) and a shape function
(the output core shapes from the inputs', with the checks of the op's ``perform``). The
same C then serves both nodes the graph may hold:

* the core op itself (``local_unbatched_linalg`` leaves a single matrix so): one item;
* ``Blockwise{core op}``: ``batched.h``'s ``tg_items_run`` broadcasts the batch axes, reads
  each item through strided views (broadcast, transposed, any strides), writes C-contiguous
  outputs and runs the items on the pool, one per task (small batches on the calling thread).

A failing item gives the error ``Blockwise.perform`` gives, naming the batch index of the
first failing item; what is wrong comes from the ``ItemC``'s ``problems``. A ``Blockwise``
whose core op has no ``ItemC`` (or an ``ItemC`` declining the node's dtypes by raising
``NotImplementedError``) runs ``perform``.
"""

from __future__ import annotations

from tensorgraph.graph.registry import Registry
from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.cstring import c_string
from tensorgraph.link.c.ops import CImplementation, read_c, register
from tensorgraph.tensor.blockwise import Blockwise

__all__ = ["ItemC", "ITEMS", "register_item", "item_implementation", "items_support"]

#: the most inputs or outputs an item may have (TG_ITEM_MAXARGS in batched.h)
MAXARGS = 16

class ItemC:
    """How one item of a core op computes in C (see the module docstring). ``core_node``
    is the core op's node on one item (its inputs' and outputs' dtypes are the item's)."""

    #: the op's name in messages ("cholesky")
    what = ""
    #: what a positive kernel code means: ``problems[code - 1]`` ("is singular": the
    #: LinAlgError "<what>: the matrix is singular"; "ValueError: ..." a message of its own)
    problems: tuple[str, ...] = ()
    #: the kernel reads and writes complex operands (pairs of floats): complex nodes of the
    #: op compute in C (``CImplementation.complex_operands``)
    complex_operands = False

    def kernel(self, op, core_node) -> str:
        """The C name of the item kernel (defined by ``support_code``); raise
        ``NotImplementedError`` to decline the node (its ``perform`` runs)."""
        raise NotImplementedError

    def shapes(self, op, core_node) -> str:
        """The C name of the ``tg_item_shapes`` function."""
        raise NotImplementedError

    def params(self, op, core_node) -> list[int]:
        """The integers the kernel reads as ``it->params`` (the op's props)."""
        return []

    def finish(self, op, core_node) -> str:
        """The C name of a ``tg_item_finish`` function, or "NULL"."""
        return "NULL"

    def support_code(self, op, core_node) -> str:
        return ""

    def headers(self, op, core_node) -> list[str]:
        return []

    def libraries(self, op, core_node) -> list[str]:
        return []

    def library_dirs(self, op, core_node) -> list[str]:
        return []

    def compile_args(self, op, core_node) -> list[str]:
        return []


def _instance(op_class: type, item_class) -> ItemC:
    """What ``@register_item(CoreOp)`` stores: an instance of the decorated ``ItemC``
    subclass."""
    if not (isinstance(item_class, type) and issubclass(item_class, ItemC)):
        raise TypeError(f"@register_item({op_class.__name__}) decorates an ItemC "
                        f"subclass, got {item_class!r}")
    return item_class()


#: core op class -> its ``ItemC`` instance; filled by the C op table's built-in modules
#: (``linalg``, ``linalg_spectral``), which its first lookup imports
ITEMS = Registry("C item", make=_instance)


def item_implementation(op) -> ItemC | None:
    """The ``ItemC`` of ``op``'s class (nearest registered in its MRO, same rule as
    ``implementation``), or None."""
    from tensorgraph.link.c.ops import implementation

    implementation(op)  # loads the built-in modules, which register their items
    return ITEMS.lookup(op)


def register_item(op_class: type):
    """Class decorator: ``@register_item(CoreOp)`` makes an instance of the decorated
    ``ItemC`` subclass the item C of ``CoreOp``: its nodes, and ``Blockwise`` nodes of it,
    compute in C."""
    register_core = ITEMS.register(op_class)

    def decorate(item_class):
        register_core(item_class)
        register(op_class)(ItemsC)
        return item_class

    return decorate


def items_support() -> str:
    """The driver (once per unit)."""
    return "#ifndef TG_ITEMS_DEFINED\n#define TG_ITEMS_DEFINED\n" + read_c("batched.h") + \
        "\n#endif  /* TG_ITEMS_DEFINED */\n"


def _split(op, node):
    """(core op, core node, core ndims of the inputs, batch ndim of the outputs) of a node of
    a core op or of ``Blockwise{core op}``."""
    if isinstance(op, Blockwise):
        if any(nd is None for nd in op.core_ndims):
            raise NotImplementedError("a Blockwise input that is not a tensor")
        core = op._core_node(node.inputs)
        nb = node.outputs[0].type.ndim - core.outputs[0].type.ndim
        return op.core_op, core, list(op.core_ndims), nb
    return op, node, [v.type.ndim for v in node.inputs], 0


def _item(op, node):
    core_op, core_node, in_nd, nb = _split(op, node)
    item = ITEMS.lookup(core_op)
    if item is None:
        raise NotImplementedError(f"{core_op} has no item C")
    if len(node.inputs) > MAXARGS or len(node.outputs) > MAXARGS:
        raise NotImplementedError(f"more than {MAXARGS} inputs or outputs")
    return item, core_op, core_node, in_nd, nb


@register(Blockwise)
class ItemsC(CImplementation):
    """The C of a core op with an ``ItemC`` and of ``Blockwise`` nodes of it."""

    def code(self, op, node, name, inputs, outputs, sub):
        item, core_op, core_node, in_nd, nb = _item(op, node)
        kernel = item.kernel(core_op, core_node)
        shapes = item.shapes(core_op, core_node)
        finish = item.finish(core_op, core_node)
        params = item.params(core_op, core_node) or [0]
        problems = [f'"{c_string(p, printf=False)}"' for p in item.problems] or ['""']
        out_nd = [v.type.ndim for v in core_node.outputs]
        typenums = [cd.typenum(v.type.dtype) for v in node.outputs]

        def ints(values):
            return "{" + ", ".join(str(int(v)) for v in values) + "}"

        return f"""
        {{
            static const int tg_params[] = {ints(params)};
            static const char *const tg_problems[] = {{{", ".join(problems)}}};
            tg_item_spec tg_s = {{
                .what = "{c_string(item.what, printf=False)}",
                .nin = {len(inputs)}, .nout = {len(outputs)}, .nb = {nb},
                .in_nd = {ints(in_nd)}, .out_nd = {ints(out_nd)}, .out_typenum = {ints(typenums)},
                .kernel = {kernel}, .shapes = {shapes}, .params = tg_params,
                .problems = tg_problems, .finish = {finish},
                .node = "{c_string(str(op), printf=False)}"}};
            tg_array *tg_in[] = {{{", ".join(inputs)}}};
            tg_array *tg_out[] = {{{", ".join(outputs)}}};
            if (tg_items_run({sub['ctx']}, &tg_s, tg_in, tg_out)) {{ {sub['fail']} }}
        }}
        """

    def complex_operands(self, op):
        core_op = op.core_op if isinstance(op, Blockwise) else op
        item = ITEMS.lookup(core_op)
        return item is not None and item.complex_operands

    def support_code(self, op, node):
        item, core_op, core_node, _, _ = _item(op, node)
        return items_support() + "\n" + item.support_code(core_op, core_node)

    def headers(self, op, node):
        item, core_op, core_node, _, _ = _item(op, node)
        return ["<string.h>", "<stdlib.h>", *item.headers(core_op, core_node)]

    def libraries(self, op, node):
        item, core_op, core_node, _, _ = _item(op, node)
        return item.libraries(core_op, core_node)

    def library_dirs(self, op, node):
        item, core_op, core_node, _, _ = _item(op, node)
        return item.library_dirs(core_op, core_node)

    def compile_args(self, op, node):
        item, core_op, core_node, _, _ = _item(op, node)
        return item.compile_args(core_op, core_node)
