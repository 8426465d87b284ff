"""C kernels raise the same exception classes as the ops' numpy ``perform``."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.c.linkers import c_error


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_index_errors_are_index_errors_in_every_mode(mode):
    x, i, iv = tt.dvector("x"), tt.lscalar("i"), tt.lvector("iv")
    f = tg.function([x, i, iv], [x[i], x[iv]], mode=mode)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        f(np.ones(3), 5, np.zeros(1, "int64"))
    with pytest.raises(IndexError, match="index 7 .*out of bounds for axis 0 with size 3"):
        f(np.ones(3), 0, np.array([7]))
    p, y = tt.dmatrix("p"), tt.lvector("y")
    g = tg.function([p, y], tt.categorical_crossentropy(p, y), mode=mode)
    with pytest.raises(IndexError, match="label 5 is out of range for 3 classes"):
        g(np.full((2, 3), 1 / 3), np.array([0, 5]))


def test_c_error_prefixes():
    assert type(c_error("IndexError: bad")) is IndexError and str(c_error("IndexError: bad")) == "bad"
    assert type(c_error("TypeError: t")) is TypeError
    plain = c_error("Reshape: cannot reshape")
    assert type(plain) is ValueError and str(plain) == "Reshape: cannot reshape"
