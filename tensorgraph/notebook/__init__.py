"""The notebook layer: IPython magics and widgets.

This is the only package that imports IPython or ipywidgets; it reads what the core
records and never patches it.  ``%load_ext tensorgraph`` calls
:func:`load_ipython_extension` through ``tensorgraph.load_ipython_extension``.
"""

from tensorgraph.graph.utils import register_location_formatter, unregister_location_formatter
from tensorgraph.notebook.cell_locations import CellLocations
from tensorgraph.notebook.compare import Comparison, compare
from tensorgraph.notebook.compare_magic import CompareMagics
from tensorgraph.notebook.compile_magic import CompileMagics
from tensorgraph.notebook.compile_report import CompileReport, last_report, report
from tensorgraph.notebook.config_magic import ConfigMagics
from tensorgraph.notebook.error_view import after_cell
from tensorgraph.notebook.graph_view import GraphView, show
from tensorgraph.notebook.plots import line_plot
from tensorgraph.notebook.profile_magic import ProfileMagics
from tensorgraph.notebook.profile_view import ProfileView
from tensorgraph.notebook.show_magic import ShowMagics
from tensorgraph.notebook.step_magic import StepMagics
from tensorgraph.notebook.stepper_view import Stepper

__all__ = ["GraphView", "show", "CompileReport", "report", "last_report", "Stepper",
           "ProfileView", "line_plot", "compare", "Comparison",
           "load_ipython_extension", "unload_ipython_extension"]

_MAGICS = (ConfigMagics, ShowMagics, CompileMagics, StepMagics, ProfileMagics, CompareMagics)
_cell_locations: dict = {}  # id(shell) -> its CellLocations


def _graph_bundle(obj):
    """Rich display of a compiled Function / FunctionGraph: its graph view, then its static
    form (``bundles.StaticFallback``)."""
    GraphView(obj)._ipython_display_()


def _profile_bundle(profile):
    """Rich display of a ``ProfileStats``: its profile view, then its static form."""
    ProfileView(profile)._ipython_display_()


def _comparison_bundle(comparison):
    """Rich display of a ``Comparison`` (``tgn.compare``): its table and graphs as a widget,
    then its static form."""
    comparison.view()._ipython_display_()


def _displayed_types():
    from tensorgraph.compile.compiled import Function
    from tensorgraph.compile.profiling import ProfileStats
    from tensorgraph.graph.fg import FunctionGraph

    return {Function: _graph_bundle, FunctionGraph: _graph_bundle, ProfileStats: _profile_bundle,
            Comparison: _comparison_bundle}


def load_ipython_extension(ipython):
    """Register tensorgraph's magics with ``ipython``, show compiled functions and
    FunctionGraphs as graph views, and make errors name cells as IPython does
    (``Cell In[3], line 2``). The core classes keep their plain ``repr``.

    >>> %load_ext tensorgraph                                 # doctest: +SKIP
    """
    for magics in _MAGICS:
        ipython.register_magics(magics)
    formatter = ipython.display_formatter.ipython_display_formatter
    for cls, bundle in _displayed_types().items():
        formatter.for_type(cls, bundle)
    if after_cell not in ipython.events.callbacks["post_run_cell"]:
        ipython.events.register("post_run_cell", after_cell)
    if id(ipython) not in _cell_locations:
        _cell_locations[id(ipython)] = CellLocations(ipython)
        register_location_formatter(_cell_locations[id(ipython)])


def unload_ipython_extension(ipython):
    """Remove what :func:`load_ipython_extension` registered.

    >>> %unload_ext tensorgraph                               # doctest: +SKIP
    """
    for kind in ("line", "cell"):
        registered = ipython.magics_manager.magics[kind]
        for magics in _MAGICS:
            for name in magics.magics[kind]:
                registered.pop(name, None)
    formatter = ipython.display_formatter.ipython_display_formatter
    for cls in _displayed_types():
        formatter.type_printers.pop(cls, None)
    if after_cell in ipython.events.callbacks["post_run_cell"]:
        ipython.events.unregister("post_run_cell", after_cell)
    cell_formatter = _cell_locations.pop(id(ipython), None)
    if cell_formatter is not None:
        unregister_location_formatter(cell_formatter)
