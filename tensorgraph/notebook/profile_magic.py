"""``%tg_profile``: profile calls of a compiled function and show the profile view.

    %tg_profile train(X, Y)                  one call (after a warm-up call)
    %tg_profile -n 100 train(X, Y)           100 calls
    %tg_profile -n 100 --no-warmup train(X, Y)   the first call counts too

The function is copied with a fresh ``ProfileStats`` (``f.copy(profile=...)``: same graph,
same compiled C, same shared variables, so updates happen as the calls would make them,
warm-up included); the function itself stays unprofiled. The warm-up call is made and left
out of the figures because a first call pays one-time costs: on the seed's train, 50
profiled calls read 47-80 us per call of the Gemv without it, 10 us with it (OpenMP starting
its threads, first touches of the buffers; 2026-11-25 at 3351394).
"""

from __future__ import annotations

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from tensorgraph.notebook.call_parsing import parse_call
from tensorgraph.notebook.magic_args import help_requested, parse_magic_args, usage_error
from tensorgraph.notebook.magic_output import shown
from tensorgraph.notebook.profile_view import ProfileView


@magics_class
class ProfileMagics(Magics):
    """The ``%tg_profile`` line magic."""

    @magic_arguments()
    @argument("call", nargs="+", help="a call of a compiled function: f(x, y, ...)")
    @argument("-n", "--number", type=int, default=1, help="how many calls to profile")
    @argument("--no-warmup", action="store_true",
              help="profile the first call too (by default one warm-up call is not counted)")
    @line_magic("tg_profile")
    def tg_profile(self, line: str = ""):
        """Profile calls of a compiled function and show the profile view."""
        __tracebackhide__ = True  # noqa: F841 - IPython: the user's cell first
        if help_requested(line, self.tg_profile, __doc__.split("\n\n", 1)[1]):
            return None
        args = parse_magic_args(self.tg_profile, "%tg_profile", line)
        if args.number < 1:
            raise usage_error("%tg_profile", f"-n must be at least 1, got {args.number}")
        fn, values, named = parse_call("%tg_profile", " ".join(args.call), self.shell.user_ns)
        from tensorgraph.compile.profiling import ProfileStats

        profile = ProfileStats(name=fn.name or "profile", print_at_exit=False)
        profiled = fn.copy(profile=profile, name=fn.name)
        if not args.no_warmup:
            profile.ignore_next_call()
            profiled(*values, **named)
        for _ in range(args.number):
            profiled(*values, **named)
        return shown(ProfileView(profile))
