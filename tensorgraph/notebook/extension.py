"""``%load_ext tensorgraph``: the magics, the rich displays and the error hook, registered with
IPython (and removed by ``%unload_ext``).

``tensorgraph.load_ipython_extension`` calls this module. It is apart from the package's
``__init__`` (the views users import: ``show``, ``report``, ``compare``...), which every module
of the notebook layer runs first: the magics and the hooks they bring are loaded only by
``%load_ext``, and the layer's run-time import cycle stays small (issue 32).
"""

from tensorgraph.compile.compiled import Function
from tensorgraph.compile.profiling import ProfileStats
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.graph.utils import register_location_formatter, unregister_location_formatter
from tensorgraph.notebook.cell_locations import CellLocations
from tensorgraph.notebook.compare import Comparison
from tensorgraph.notebook.compare_magic import CompareMagics
from tensorgraph.notebook.compile_magic import CompileMagics
from tensorgraph.notebook.config_magic import ConfigMagics
from tensorgraph.notebook.error_view import after_cell
from tensorgraph.notebook.graph_view import GraphView
from tensorgraph.notebook.profile_magic import ProfileMagics
from tensorgraph.notebook.profile_view import ProfileView
from tensorgraph.notebook.show_magic import ShowMagics
from tensorgraph.notebook.step_magic import StepMagics

__all__ = ["load_ipython_extension", "unload_ipython_extension"]

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
