"""User-chosen text never breaks (or becomes) generated C.

Variable names, op names and Assert messages may hold newlines, quotes, comment ends,
backslashes, ``%``, preprocessor lines, trigraphs, NUL bytes and non-ASCII letters.  They
reach C only through ``tensorgraph.link.c.cstring``; these tests compile real functions whose
every name is hostile, and compile the escaping itself with the C compiler.
"""

import subprocess

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.link.c.cstring import c_comment, c_string
from tensorgraph.raise_op import Assert
from tensorgraph.scalar.math import Exp
from tensorgraph.tensor.elemwise import Elemwise

HOSTILE = ["a\nb", 'q"uote', "end*/", "/*open", "back\\slash", "per%cent %s %n", "#include <x.h>",
           "tri??/", "nul\x00byte", "tab\tcr\r", "été ✓", "\\", "%"]


@pytest.fixture
def c_mode():
    return tg.Mode(linker="cvm", optimizer="fast_run")


@pytest.mark.parametrize("name", HOSTILE, ids=repr)
def test_hostile_variable_names_compile_and_run(name, c_mode):
    x, z = tt.vector(name), tt.vector(name + "2")
    m = tt.matrix(name + "m")
    y = tt.exp(x) * 2 + z
    y.name = name
    s = tt.set_subtensor(m[1:, 0], x[:2])
    s.name = name + "s"
    f = tg.function([x, z, m], [y, tt.max(x), x[1:], s, tt.dot(m, x)], mode=c_mode)
    assert {getattr(t, "kind", "py") for t in f.vm.thunks} == {"c"}
    a, b, c = np.arange(3.0), np.ones(3), np.ones((3, 3))
    out = f(a, b, c)
    assert np.allclose(out[0], np.exp(a) * 2 + 1)
    assert out[1] == 2 and np.array_equal(out[2], a[1:]) and np.allclose(out[4], c @ a)
    with pytest.raises(ValueError, match="cannot be broadcast together") as info:
        f(a, np.ones(4), c)
    assert name + "2" in str(info.value)  # the error report (made in Python) names the input


class Named(Exp):
    """Exp under a user-chosen name (the name shows in str(op) and so in the C)."""

    def __init__(self, label):
        self.label = label

    __props__ = ("label",)

    @property
    def name(self):
        return self.label


@pytest.mark.parametrize("name", HOSTILE, ids=repr)
def test_hostile_op_names_and_messages_compile_and_run(name, c_mode):
    x = tt.vector("x")
    y = Elemwise(Named(name))(x)
    checked = Assert(name)(y, tt.all(tt.ge(x, 0)))
    f = tg.function([x], checked, mode=c_mode)
    assert {getattr(t, "kind", "py") for t in f.vm.thunks} == {"c"}
    assert np.allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)))
    with pytest.raises(AssertionError) as info:
        f(np.array([-1.0]))
    assert name.replace("\x00", "\\0") in str(info.value)


def test_escaped_text_is_printable_ascii_and_round_trips_through_the_compiler(tmp_path):
    texts = HOSTILE + ["".join(map(chr, range(2, 128)))]
    body = []
    for text in texts:
        for piece in (c_string(text), c_string(text, printf=False), c_comment(text)):
            assert all(32 <= ord(ch) < 127 for ch in piece), piece
        body.append(f'printf("{c_string(text)}"); putchar(1);')
        body.append(f'printf("%s", "{c_string(text, printf=False)}"); putchar(1);')
        body.append(f"/* {c_comment(text)} */")
    src = tmp_path / "probe.c"
    src.write_text("#include <stdio.h>\nint main(void) {\n" + "\n".join(body) + "\nreturn 0; }\n")
    exe = tmp_path / "probe"
    cc = subprocess.run([config.cxx or "gcc", "-std=c99", "-Wall", "-Werror", "-Wno-format-security",
                         "-x", "c", str(src), "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    printed = subprocess.run([str(exe)], capture_output=True).stdout.decode("utf-8").split("\x01")
    expected = [t.replace("\x00", "\\0") for t in texts for _ in (0, 1)]
    assert printed[:-1] == expected
