"""``%tg_show``: the graph view of an expression, as a line magic.

    %tg_show cost                 the graph of a variable (or a list, a function, a FunctionGraph)
    %tg_show train --height 700   a taller view
    %tg_show [p, cost] --expand   every group open
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from tensorgraph.notebook.graph_view import GraphView
from tensorgraph.notebook.magic_args import help_requested, parse_magic_args


@magics_class
class ShowMagics(Magics):
    """The ``%tg_show`` line magic."""

    @magic_arguments()
    @argument("expression", nargs="+",
              help="a Python expression giving a Variable, a list of them, an Apply, a "
                   "FunctionGraph or a compiled function")
    @argument("--height", type=int, default=520, help="height of the view in pixels")
    @argument("--expand", action="store_true", help="open every group")
    @argument("--title", default=None, help="the title shown above the graph")
    @line_magic("tg_show")
    def tg_show(self, line: str = ""):
        """Show the graph of an expression as an interactive view (see tensorgraph.notebook.show)."""
        if help_requested(line, self.tg_show):
            return None
        args = parse_magic_args(self.tg_show, "%tg_show", line)
        source = " ".join(args.expression)
        try:
            obj = self.shell.ev(source)
        except Exception as exc:  # noqa: BLE001 - any failure of the user's expression
            raise UsageError(f"%tg_show: cannot evaluate {source!r}: "
                             f"{type(exc).__name__}: {exc}") from None
        if args.height < 120:
            raise UsageError(f"%tg_show: --height must be at least 120 pixels, got {args.height}")
        try:
            view = GraphView(obj, title=args.title or source, height=args.height)
        except TypeError as exc:
            raise UsageError(f"%tg_show: {source!r} is a {type(obj).__name__}: {exc}") from None
        if args.expand:
            view.expand_all()
        return view
