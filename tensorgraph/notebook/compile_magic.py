"""``%%tg_compile``: run a cell with compile settings in force, and report every compile.

    %%tg_compile [NAME] [--mode M] [--optimizer O] [--linker L] [--including TAGS]
                 [--excluding TAGS] [--profile] [--test-values off|warn|raise] [--quiet]

The settings hold while the cell runs (``config.change_flags``) and are restored afterwards,
also when the cell fails. Every ``tensorgraph.function`` compiled in the cell gets a compile
report below the cell (``--quiet``: one line each); a compile that runs the C compiler shows
its progress while it runs.

With NAME (an identifier, not a keyword), the cell's last line is an expression giving the
outputs: a Variable (the function returns one array, as ``function([x], y)`` does), a list
or tuple of them, or a dict ``{name: variable}`` (a list of arrays). It is compiled into a
function bound to NAME in the notebook. Its inputs are the graph's free symbolic inputs (not
shared variables, not constants) in the order they were created; shared variables are read
implicitly. Updates: if the cell assigns a variable named ``updates`` (a list of
``(shared, expression)`` pairs or a dict), they become the function's updates.

Bad usage (an unknown option, mode or rewrite tag, a last line that is not a graph, an
``updates`` that is not pairs) is a one-line error and binds nothing. Locations in the cell
read as IPython's do (``Cell In[3], line 7``, the magic's line being line 1). An error raised
in the cell shows the graph with the failing node marked when the error names one.
"""

from __future__ import annotations

import ast
import keyword
import time
import warnings

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from tensorgraph.configdefaults import config
from tensorgraph.notebook.cell_locations import cache_cell_magic_body
from tensorgraph.notebook.magic_args import excerpt, help_requested, parse_magic_args, usage_error

__all__ = ["CompileMagics"]

PROGRESS_AFTER = 0.5  # seconds: quicker compiles show only their report
NAME = "%%tg_compile"  # how usage errors name the magic


@magics_class
class CompileMagics(Magics):
    """The ``%%tg_compile`` cell magic (see the module docstring)."""

    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="compile the cell's last expression (the outputs) into a function bound "
                   "to this name; inputs are the graph's free inputs in creation order, "
                   "updates a cell variable named `updates`")
    @argument("--mode", default=None, help="FAST_RUN, FAST_COMPILE, Mode, DebugMode, ...")
    @argument("--optimizer", default=None, help="rewrite preset: fast_run, fast_compile, o1..o4, "
                                                "None, ...")
    @argument("--linker", default=None, help="cvm, c, c|py, py, vm, ...")
    @argument("--including", default=None, help="colon-separated rewrite names or tags to add")
    @argument("--excluding", default=None, help="colon-separated rewrite names or tags to drop")
    @argument("--profile", action="store_true", help="profile the functions compiled in the cell")
    @argument("--test-values", default=None, choices=["off", "warn", "raise"],
              help="compute test values while building graphs")
    @argument("--quiet", action="store_true", help="one summary line per compile, no report")
    @line_cell_magic("tg_compile")
    def tg_compile(self, line: str, cell: str | None = None):
        """Run the cell with compile settings in force; report every compile in it."""
        __tracebackhide__ = True  # noqa: F841 - IPython: the user's cell first
        if help_requested(line, self.tg_compile, __doc__.split("\n\n", 2)[2]):
            return None
        if cell is None:  # the line form only answers --help
            raise UsageError("%%tg_compile is a cell magic: put the code to compile under "
                             "'%%tg_compile [NAME] [options]' (see %tg_compile --help)")
        args = parse_magic_args(self.tg_compile, NAME, line)
        if args.name is not None and not args.name.isidentifier():
            raise usage_error(NAME, f"NAME must be a Python identifier, got "
                                    f"{excerpt(args.name)}")
        if args.name is not None and keyword.iskeyword(args.name):
            raise usage_error(NAME, f"NAME must be a Python identifier that is not a keyword, "
                                    f"got {args.name!r}")
        flags = _flags(args)
        filename, offset = cache_cell_magic_body(self.shell, "tg_compile", line, cell)
        try:
            tree = ast.parse(self.shell.transform_cell(cell))
        except SyntaxError as exc:
            raise usage_error(NAME, f"the cell does not parse: line "
                                    f"{(exc.lineno or 0) + offset}: {exc.msg}") from None
        ast.increment_lineno(tree, offset)
        last = None
        if args.name is not None:
            if not tree.body or not isinstance(tree.body[-1], ast.Expr):
                raise UsageError("%%tg_compile: with NAME, the cell's last line must be an "
                                 "expression giving the outputs (a Variable, a list of them or "
                                 "a dict {name: variable}); nothing was bound")
            last = ast.Expression(tree.body.pop().value)
        try:
            settings = config.change_flags(**flags)
            settings.__enter__()
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise usage_error(NAME, str(exc)) from None
        from tensorgraph.link.compile_events import listening
        from tensorgraph.compile.rewrite_cache import recording

        progress = _Progress(args.quiet or not _updates_in_place(self.shell))
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                progress.warnings = caught
                with listening(progress), recording():  # every rewrite step, for the report
                    function = self._run(tree, last, filename, args.name)
        finally:
            settings.__exit__(None, None, None)
            # Recorded for the reports; shown again (outside the recorder) so the user sees them.
            for w in list(caught):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        for fn, record in progress.compiled:
            if args.quiet:
                print(record.summary())
            else:
                from tensorgraph.notebook.compile_report import CompileReport, remember

                shown = CompileReport(fn)
                remember(shown)
                display(shown)
        if function is not None:
            self.shell.user_ns[args.name] = function
            print(f"{args.name}{_signature(function)}")
        return None

    def _run(self, tree, last, filename, name):
        """Run the cell's statements (and, with NAME, compile its last expression)."""
        __tracebackhide__ = True  # noqa: F841
        ns = self.shell.user_ns
        try:
            exec(compile(tree, filename, "exec"), ns)  # noqa: S102 - the user's own cell
            if last is None:
                return None
            value = eval(compile(last, filename, "eval"), ns)  # noqa: S307 - the user's cell
            outputs = _outputs(value)
            updates = _updates(ns) if _assigns(tree, "updates") else None
            from tensorgraph.compile.function import function

            # a single Variable gives a single array, as function([x], y) does
            inputs = _free_inputs(outputs if isinstance(outputs, list) else [outputs])
            return function(inputs, outputs, updates=updates, name=name)
        except UsageError:
            raise
        except Exception as exc:
            from tensorgraph.notebook.error_view import show_error

            show_error(exc)
            raise


def _updates_in_place(shell) -> bool:
    """Whether the front end replaces an updated display (a notebook) rather than printing it
    again (IPython in a terminal: there the progress lines would repeat the report)."""
    from IPython.core.displaypub import DisplayPublisher

    return type(shell.display_pub).publish is not DisplayPublisher.publish


class _Progress:
    """Listens to compile events: live progress for compiles that run the C compiler or take
    longer than ``PROGRESS_AFTER`` (unless ``quiet``), then the records of the compiled
    functions."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.compiled: list = []
        self.warnings: list = []
        self._started = 0.0
        self._warned_before = 0
        self._handle = None
        self._name = ""

    def __call__(self, event: str, info: dict) -> None:
        now = time.perf_counter()
        if event == "start":
            self._started, self._handle = now, None
            self._name = info.get("name") or "(unnamed function)"
            self._warned_before = len(self.warnings)
        elif event == "phase":
            slow = now - self._started > PROGRESS_AFTER or (info.get("phase") == "compiling")
            if slow and not self.quiet:
                text = f"compiling {self._name}: {_phase_text(info)} ({now - self._started:.1f} s)"
                if self._handle is None:
                    self._handle = display({"text/plain": text}, raw=True, display_id=True)
                else:
                    self._handle.update({"text/plain": text}, raw=True)
        elif event == "done":
            record = info["record"]
            record.warnings = [str(w.message) for w in self.warnings[self._warned_before:]]
            self.compiled.append((info["function"], record))
            if self._handle is not None:
                self._handle.update({"text/plain": f"compiled {record.summary()}"}, raw=True)


def _phase_text(info: dict) -> str:
    phase = info.get("phase", "")
    if phase == "compiling":
        units = info.get("units", 0)
        return f"compiling C ({units} translation unit{'s' if units != 1 else ''})"
    if phase == "generating C":
        return f"generating C for {info.get('nodes', '?')} nodes"
    return phase


def _flags(args) -> dict:
    """The config flags the options set."""
    from tensorgraph.compile.mode import get_mode

    flags = {}
    if args.mode is not None:
        flags["mode"] = args.mode
    if args.linker is not None or args.optimizer is not None:
        # only the generic mode reads config.linker / config.optimizer: keep the chosen
        # mode's other setting and compile through it
        try:
            base = get_mode(args.mode or config.mode)
        except (ValueError, TypeError) as exc:
            raise usage_error(NAME, str(exc)) from None
        flags["mode"] = "Mode"
        flags["linker"] = args.linker or base.linker_name
        flags["optimizer"] = args.optimizer or str(base.optimizer)
    from tensorgraph.rewriting.presets import check_tags

    for kind in ("including", "excluding"):
        tags = getattr(args, kind)
        if tags is not None:
            try:
                check_tags([t for t in tags.split(":") if t])
            except ValueError as exc:
                raise usage_error(NAME, f"--{kind}: {exc}") from None
            flags[f"optimizer_{kind}"] = tags
    if args.profile:
        flags["profile"] = True
    if args.test_values is not None:
        flags["compute_test_value"] = args.test_values
    return flags


def _outputs(value):
    """The outputs to compile: the Variable itself, or a list of them."""
    from tensorgraph.graph.basic import Variable

    if isinstance(value, Variable):
        return value
    items = list(value.values()) if isinstance(value, dict) else value
    if isinstance(items, (list, tuple)) and items and all(isinstance(v, Variable) for v in items):
        return list(items)
    raise usage_error(NAME, f"the cell's last expression must give the outputs (a Variable, a "
                            f"list or tuple of them, or a dict {{name: variable}}), got "
                            f"{type(value).__name__}; nothing was bound")


def _updates(ns):
    """The cell's ``updates``: a list or tuple of pairs or a dict (the pairs themselves are
    checked by ``function``)."""
    updates = ns.get("updates")
    if updates is not None and not isinstance(updates, (list, tuple, dict)):
        raise usage_error(NAME, f"`updates` must be a list of (shared variable, expression) "
                                f"pairs or a dict, got {type(updates).__name__}; nothing was "
                                f"bound")
    return updates


def _free_inputs(outputs) -> list:
    """The graph's symbolic inputs that are neither shared nor constant, in creation order."""
    from tensorgraph.compile.sharedvalue import SharedVariable
    from tensorgraph.graph.basic import Constant, graph_inputs

    free = [v for v in graph_inputs(outputs)
            if not isinstance(v, (SharedVariable, Constant))]
    return sorted(dict.fromkeys(free), key=lambda v: int(v.auto_name.split("_")[1]))


def _assigns(tree, name: str) -> bool:
    """Whether the cell's top-level statements assign ``name``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
    return False


def _signature(fn) -> str:
    from tensorgraph.printing import type_label

    params = ", ".join(f"{i.variable.name or i.variable.auto_name}: {type_label(i.variable)}"
                       for i in fn.maker.inputs)
    return f"({params})"
