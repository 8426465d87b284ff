"""The notebook layer: IPython magics and widgets.

This is the only package that imports IPython or ipywidgets; it reads what the core
records and never patches it.  ``%load_ext tensorgraph`` calls
:func:`load_ipython_extension` through ``tensorgraph.load_ipython_extension``.
"""

from tensorgraph.graph.utils import register_location_formatter, unregister_location_formatter
from tensorgraph.notebook.cell_locations import CellLocations
from tensorgraph.notebook.config_magic import ConfigMagics

_cell_locations: dict = {}  # id(shell) -> its CellLocations


def load_ipython_extension(ipython):
    """Register tensorgraph's magics with ``ipython``, and make errors name cells as IPython
    does (``Cell In[3], line 2``)."""
    ipython.register_magics(ConfigMagics)
    if id(ipython) not in _cell_locations:
        _cell_locations[id(ipython)] = CellLocations(ipython)
        register_location_formatter(_cell_locations[id(ipython)])


def unload_ipython_extension(ipython):
    """Remove what :func:`load_ipython_extension` registered."""
    line_magics = ipython.magics_manager.magics["line"]
    for name in ConfigMagics.magics["line"]:
        line_magics.pop(name, None)
    formatter = _cell_locations.pop(id(ipython), None)
    if formatter is not None:
        unregister_location_formatter(formatter)
