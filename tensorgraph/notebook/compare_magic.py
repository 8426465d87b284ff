"""``%tg_compare``: compile a function's graph in several modes and show them side by side.

    %tg_compare train(X, Y)                          FAST_RUN, JAX, NUMBA, PYTORCH
    %tg_compare -m FAST_RUN,JAX -n 100 train(X, Y)   two modes, up to 100 timed calls each
    %tg_compare --no-compile-times train(X, Y)       skip the fresh processes (cold, warm)
    %tg_compare --wait train(X, Y)                   return when the compile times are in
    %tg_compare -m FAST_RUN -p C,NUMBA logp(point)   a PyMC function: PyTensor's C and NUMBA too

The graph of the compiled function (as it was given: inputs, outputs, updates) is compiled
again in each mode and called with the arguments; the magic returns the ``Comparison``
(``tgn.compare``, whose docstring says what every number means), shown as its widget. It
returns as soon as the calls are timed: the compile columns fill in as their fresh processes
finish (``cmp.wait()`` blocks, ``cmp.cancel()`` or the widget's Cancel button stops them).
A mode that fails is a row with its error; an unknown mode name or a bad call is a one-line
usage error. A PyTensor or PyMC compiled function (``%tg_compare logp(point)``) gets rows for
PyTensor's own C and NUMBA modes too (``tgn.compare``, docs/pymc.md).
"""

from __future__ import annotations

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from tensorgraph.notebook.call_parsing import parse_call
from tensorgraph.notebook.magic_args import excerpt, help_requested, parse_magic_args, usage_error
from tensorgraph.notebook.magic_output import shown

__all__ = ["CompareMagics"]

NAME = "%tg_compare"


@magics_class
class CompareMagics(Magics):
    """The ``%tg_compare`` line magic (see the module docstring)."""

    @magic_arguments()
    @argument("call", nargs="+", help="a call of a compiled function: f(x, y, ...)")
    @argument("-m", "--modes", default="FAST_RUN,JAX,NUMBA,PYTORCH",
              help="comma-separated modes; the first that runs is the reference")
    @argument("-n", "--repeat", type=int, default=50,
              help="at most this many timed calls per mode")
    @argument("--budget", type=float, default=1.0,
              help="seconds of timed calls per mode (at least 3 calls)")
    @argument("--no-compile-times", action="store_true",
              help="do not measure the cold and warm compile times (two new processes per mode)")
    @argument("-p", "--pytensor-modes", default="C,NUMBA",
              help="for a PyTensor or PyMC function: PyTensor's own modes compared beside "
                   "TENSORGRAPH (comma-separated; C is PyTensor's FAST_RUN)")
    @argument("--wait", action="store_true",
              help="return only when the compile times are measured (default: they fill in "
                   "the widget as they come)")
    @line_magic("tg_compare")
    def tg_compare(self, line: str = ""):
        """Compile a function's graph in several modes; compare compile and call times,
        results and rewritten graphs."""
        __tracebackhide__ = True  # noqa: F841 - IPython: the user's cell first
        if help_requested(line, self.tg_compare, __doc__.split("\n\n", 1)[1]):
            return None
        args = parse_magic_args(self.tg_compare, NAME, line)
        if args.repeat < 1:
            raise usage_error(NAME, f"-n must be at least 1, got {args.repeat}")
        if not args.budget > 0:
            raise usage_error(NAME, f"--budget must be more than 0 seconds, got {args.budget}")
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        if not modes:
            raise usage_error(NAME, f"-m takes modes such as FAST_RUN,JAX, got "
                                    f"{excerpt(args.modes)}")
        from tensorgraph.compile.mode import get_mode

        for mode in modes:
            try:
                get_mode(mode)
            except ValueError as exc:
                raise usage_error(NAME, str(exc)) from None
            except Exception:  # noqa: BLE001 - a known mode that cannot run here: its row says why
                pass
        fn, values, named = parse_call(NAME, " ".join(args.call), self.shell.user_ns,
                                       keep_pytensor=True)
        if named:
            raise usage_error(NAME, "give the arguments by position: the comparison calls "
                                    f"f(*args), got {', '.join(named)}=...")
        from tensorgraph.notebook.compare import compare

        return shown(compare(fn, modes=modes, args=values, repeat=args.repeat,
                             budget=args.budget, compile_times=not args.no_compile_times,
                             wait=args.wait,
                             pytensor_modes=[m.strip() for m in args.pytensor_modes.split(",")
                                             if m.strip()]))
