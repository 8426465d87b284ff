"""The notebook layer: IPython magics and widgets.

This is the only package that imports IPython or ipywidgets; it reads what the core
records and never patches it.  ``%load_ext tensorgraph`` calls
:func:`load_ipython_extension` through ``tensorgraph.load_ipython_extension``.
"""

from tensorgraph.notebook.config_magic import ConfigMagics


def load_ipython_extension(ipython):
    """Register tensorgraph's magics with ``ipython``."""
    ipython.register_magics(ConfigMagics)


def unload_ipython_extension(ipython):
    """Remove the magics registered by :func:`load_ipython_extension`."""
    line_magics = ipython.magics_manager.magics["line"]
    for name in ConfigMagics.magics["line"]:
        line_magics.pop(name, None)
