"""What IPython shows for an object, read in tests of the notebook layer without a browser."""


def displayed(shell, obj) -> list[dict]:
    """The outputs IPython publishes for ``obj`` as a cell's last expression."""
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        data, _ = shell.display_formatter.format(obj)
    return [o.data for o in captured.outputs] + ([data] if data else [])


def widget_outputs(shell, cell: str) -> list[dict]:
    """The widget views ``cell`` displays, run as a notebook runs a cell (a line magic that is
    not the last line included)."""
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        result = shell.run_cell(cell)
    result.raise_error()
    return [o.data for o in captured.outputs
            if "application/vnd.jupyter.widget-view+json" in o.data]
