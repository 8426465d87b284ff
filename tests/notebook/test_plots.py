"""line_plot: the tutorials' one plot, as static SVG."""

import numpy as np
import pytest

from tensorgraph.notebook import line_plot


def test_a_line_plot_is_svg_with_its_range_and_labels():
    plot = line_plot([3.0, 2.0, np.nan, 1.5], title="loss", xlabel="step", ylabel="xent")
    svg = plot._repr_svg_()
    assert svg.startswith("<svg") and svg.count(",") >= 3  # three finite points
    assert ">3<" in svg and ">1.5<" in svg and ">loss<" in svg and ">step<" in svg
    assert repr(plot) == "<LinePlot 'loss': 4 points, from 3 to 1.5>"
    assert "<polyline" in line_plot([2.0])._repr_svg_()  # one point, flat range


def test_bad_input_says_what_was_expected():
    with pytest.raises(ValueError, match="at least one value"):
        line_plot([])
    with pytest.raises(ValueError, match="2 x values for 3 y values"):
        line_plot([1, 2, 3], [0, 1])
