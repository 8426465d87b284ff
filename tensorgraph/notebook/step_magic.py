"""``%tg_step f(args)``: step through one call of a compiled function, as a widget.

    %tg_step train(X, Y)         a stepper on the graph of train, nothing run yet
    %tg_step train(X, Y) --nan   run at once to the first node making a NaN or Inf

The call is not made: its arguments are evaluated and handed to ``tgn.Stepper``. The call is
Python (``train(X, -Y)``); arguments the function would refuse are a one-line error, as in
``%tg_profile``.
"""

from __future__ import annotations

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from tensorgraph.notebook.call_parsing import parse_call
from tensorgraph.notebook.magic_args import help_requested, parse_magic_args
from tensorgraph.notebook.magic_output import shown
from tensorgraph.notebook.stepper_view import Stepper


@magics_class
class StepMagics(Magics):
    """The ``%tg_step`` line magic."""

    @magic_arguments()
    @argument("call", nargs="+", help="a call of a compiled function: f(x, y, ...)")
    @argument("--nan", action="store_true", help="run to the first NaN or Inf at once")
    @line_magic("tg_step")
    def tg_step(self, line: str = ""):
        """Step through a call of a compiled function (see tensorgraph.notebook.Stepper)."""
        if help_requested(line, self.tg_step, __doc__.split("\n\n", 1)[1]):
            return None
        args = parse_magic_args(self.tg_step, "%tg_step", line)
        fn, values, named = parse_call("%tg_step", " ".join(args.call), self.shell.user_ns)
        widget = Stepper(fn, *values, **named)  # parse_call checked the arguments
        if args.nan:
            widget.run_to_nonfinite()
        return shown(widget)
