"""``%tg_show``: the graph view of an expression, as a line magic.

    %tg_show cost                 the graph of a variable (or a list, a function, a FunctionGraph)
    %tg_show train --height 700   a taller view
    %tg_show [p, cost] --expand   every group open
"""

from __future__ import annotations

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from tensorgraph.notebook.graph_view import GraphView
from tensorgraph.notebook.magic_args import excerpt, help_requested, parse_magic_args, usage_error
from tensorgraph.notebook.magic_output import shown


MIN_HEIGHT, MAX_HEIGHT = 120, 4000  # pixels: a readable view, and no page-long blank


@magics_class
class ShowMagics(Magics):
    """The ``%tg_show`` line magic."""

    @magic_arguments()
    @argument("expression", nargs="+",
              help="a Python expression giving a Variable, a list of them, an Apply, a "
                   "FunctionGraph or a compiled function")
    @argument("--height", type=int, default=520, help="height of the view in pixels (120 to 4000)")
    @argument("--expand", action="store_true", help="open every group")
    @argument("--title", default=None, help="the title shown above the graph")
    @line_magic("tg_show")
    def tg_show(self, line: str = ""):
        """Show the graph of an expression as an interactive view (see tensorgraph.notebook.show)."""
        if help_requested(line, self.tg_show):
            return None
        args = parse_magic_args(self.tg_show, "%tg_show", line)
        source = " ".join(args.expression)
        if not MIN_HEIGHT <= args.height <= MAX_HEIGHT:
            raise usage_error("%tg_show", f"--height must be between {MIN_HEIGHT} and "
                                          f"{MAX_HEIGHT} pixels, got {args.height}")
        try:
            obj = self.shell.ev(source)
        except Exception as exc:  # noqa: BLE001 - any failure of the user's expression
            raise usage_error("%tg_show", f"cannot evaluate {excerpt(source)}: "
                                          f"{type(exc).__name__}: {exc}") from None
        try:
            view = GraphView(obj, title=args.title or source, height=args.height)
        except TypeError as exc:
            raise usage_error("%tg_show", f"{excerpt(source)} is a {type(obj).__name__}: "
                                          f"{exc}") from None
        if args.expand:
            view.expand_all()
        return shown(view)
