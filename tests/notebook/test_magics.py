"""%tg_config through a real IPython InteractiveShell."""

import pytest

IPython = pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402

from tensorgraph import config  # noqa: E402


@pytest.fixture
def ip(ipython_shell):
    config.reset()  # these tests read which flags differ from the defaults (conftest sets one)
    return ipython_shell


def magic(ip, line=""):
    return ip.run_line_magic("tg_config", line)


def test_load_ext_registers_the_magic(ip):
    assert "tg_config" in ip.magics_manager.magics["line"]


def test_magics_class_does_not_shadow_traitlets_config(ip):
    from tensorgraph.notebook.config_magic import ConfigMagics

    assert "config" not in vars(ConfigMagics)
    assert "config" not in ConfigMagics.magics["line"]


def test_no_argument_shows_every_flag_as_html_and_text(ip):
    view = magic(ip)
    html = view._repr_html_()
    assert html.count("<tr") == len(config) + 1  # header row
    for col in ("flag (click for its doc)", "value", "default", "source"):
        assert f">{col}</th>" in html
    assert html.count("<th ") == 4  # a table that fits a notebook: docs fold out per flag
    assert "<summary><code>floatX</code></summary>" in html
    assert "float64, float32, float16" in html
    assert html.count("<details>") == len(config)
    text = repr(view)
    assert "floatX (" in text and "value: 'float64'  [default]" in text


def test_non_default_rows_stand_out(ip):
    config.floatX = "float32"
    html = magic(ip)._repr_html_()
    changed = [row for row in html.split("<tr")[1:] if 'class="tg-changed"' in row]
    assert len(changed) == 1 and "<code>floatX</code>" in changed[0]


def test_one_flag(ip):
    view = magic(ip, "floatX")
    assert [i.name for i in view.infos] == ["floatX"]
    assert view.title == "tensorgraph config: selected flags (1)"


def test_set_several_flags(ip):
    view = magic(ip, "floatX=float32 mode=FAST_COMPILE")
    assert (config.floatX, config.mode) == ("float32", "FAST_COMPILE")
    assert [(i.name, i.value, i.source) for i in view.infos] == [
        ("floatX", "float32", "assignment"),
        ("mode", "FAST_COMPILE", "assignment"),
    ]


def test_quoted_values_may_contain_spaces(ip):
    magic(ip, "gcc__cxxflags='-O2 -g'")
    assert config.gcc__cxxflags == "-O2 -g"


def test_invalid_value_sets_nothing_and_reports_inline(ip):
    with pytest.raises(UsageError, match="invalid value 'bad' for flag 'mode'.*FAST_RUN"):
        magic(ip, "floatX=float32 mode=bad")
    assert (config.floatX, config.mode) == ("float64", "Mode")


def test_read_only_flag_sets_nothing(ip):
    with pytest.raises(UsageError, match="'compile__wait' is read-only"):
        magic(ip, "floatX=float32 compile__wait=3")
    assert config.floatX == "float64"


def test_misspelt_names_get_a_suggestion(ip):
    with pytest.raises(UsageError, match="Did you mean 'floatX'"):
        magic(ip, "floatx=float32")
    with pytest.raises(UsageError, match="Did you mean 'floatX'"):
        magic(ip, "floatx")


def test_error_shows_as_one_line_in_a_cell(ip, capsys):
    result = ip.run_cell("%tg_config floatX=float99")
    assert not result.success
    out = capsys.readouterr()
    shown = out.out + out.err
    assert "UsageError" in shown and "float99" in shown and "Traceback" not in shown


def test_diff_shows_only_changed_flags(ip):
    unchanged = magic(ip, "--diff")
    assert unchanged.infos == []
    assert "every flag has its default value" in repr(unchanged)
    assert "every flag has its default value" in unchanged._repr_html_()
    assert "<table" not in unchanged._repr_html_()  # no empty table
    config.allow_gc = False
    assert [i.name for i in magic(ip, "--diff").infos] == ["allow_gc"]


def test_reset_restores_defaults(ip):
    magic(ip, "floatX=float16 allow_gc=False")
    view = magic(ip, "--reset")
    assert sorted(i.name for i in view.infos) == ["allow_gc", "floatX"]
    assert (config.floatX, config.allow_gc) == ("float64", True)
    assert magic(ip, "--diff").infos == []


def test_reset_named_flags_only(ip):
    magic(ip, "floatX=float16 allow_gc=False")
    magic(ip, "--reset floatX")
    assert (config.floatX, config.allow_gc) == ("float64", False)


@pytest.mark.parametrize(
    "line", ["--bogus", "--diff --reset", "floatX=float32 mode", "--diff floatX=float32",
             "floatX='unclosed"],
)
def test_usage_errors(ip, line):
    with pytest.raises(UsageError):
        magic(ip, line)
    assert config.floatX == "float64"


def test_unload_removes_the_magic(ip):
    ip.run_line_magic("unload_ext", "tensorgraph")
    try:
        assert "tg_config" not in ip.magics_manager.magics["line"]
    finally:
        ip.run_line_magic("load_ext", "tensorgraph")
    assert "tg_config" in ip.magics_manager.magics["line"]


def test_help_prints_the_usage(ip, capsys):
    assert magic(ip, "--help") is None
    out = capsys.readouterr().out
    assert "%tg_config --diff" in out and "--reset" in out
    assert ip.run_line_magic("tg_show", "--help") is None
    out = capsys.readouterr().out
    assert "%tg_show [--height HEIGHT]" in out and "--expand" in out


# -- the rules every %tg_* magic keeps for its line --------------------------------------------

@pytest.fixture
def g(ip):
    """``g(x, y) = x * y`` and two vectors X, Y in the notebook."""
    import numpy as np

    import tensorgraph as tg
    import tensorgraph.tensor as tt

    x, y = tt.vector("x"), tt.vector("y")
    ip.user_ns.update(g=tg.function([x, y], x * y, mode="FAST_COMPILE"), np=np, tt=tt,
                      X=np.ones(3), Y=np.full(3, 2.0), vx=x)
    return ip


def test_a_call_with_a_minus_sign_is_python_not_flags(g):
    from tensorgraph.notebook import GraphView, ProfileView, Stepper

    assert isinstance(g.run_line_magic("tg_step", "g(X, -Y)"), Stepper)
    assert isinstance(g.run_line_magic("tg_step", "g(X, - Y) --nan"), Stepper)
    view = g.run_line_magic("tg_profile", "-n 2 g(X, -Y)")
    assert isinstance(view, ProfileView) and view.profile.call_count == 2
    assert isinstance(g.run_line_magic("tg_show", "[vx, -vx] --title 'a title'"), GraphView)


@pytest.mark.parametrize("magic, line", [
    ("tg_show", "'x"), ("tg_step", "g('x, Y)"), ("tg_profile", "-n 2 g(X, \"Y)"),
    ("tg_compile", "'h"),
])
def test_an_unbalanced_quote_is_a_one_line_usage_error(g, magic, line):
    with pytest.raises(UsageError, match="quote") as info:
        if magic == "tg_compile":
            g.run_cell_magic(magic, line, "1")
        else:
            g.run_line_magic(magic, line)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("line, message", [
    ("g(X)", "missing value for input 1"),
    ("g(np.ones((2, 2)), Y)", "bad value for input 0"),
    ("g(X, Y, X)", "takes 2 inputs"),
])
def test_a_wrong_argument_is_the_same_one_line_error_for_step_and_profile(g, line, message):
    for magic in ("tg_step", "tg_profile"):
        with pytest.raises(UsageError, match=f"^%{magic}: .*{message}") as info:
            g.run_line_magic(magic, line)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("magic, line", [
    ("tg_show", "a" * 10_000), ("tg_show", "vx --title " + "t" * 10_000 + " --nope"),
    ("tg_step", "g(" + "a" * 10_000 + ")"), ("tg_profile", "b" * 10_000),
    ("tg_config", "floatX=" + "f" * 10_000), ("tg_config", "'" + "f" * 10_000),
    ("tg_compile", "--mode " + "M" * 10_000),
])
def test_errors_quote_a_short_excerpt_of_a_long_input(g, magic, line):
    with pytest.raises(UsageError) as info:
        if magic == "tg_compile":
            g.run_cell_magic(magic, line, "1")
        else:
            g.run_line_magic(magic, line)
    assert len(str(info.value)) < 400 and "\n" not in str(info.value)


def test_the_height_of_a_view_is_bounded(g):
    for height in ("99999999999", "10"):
        with pytest.raises(UsageError, match="--height must be between 120 and"):
            g.run_line_magic("tg_show", f"vx --height {height}")


@pytest.mark.parametrize("line", ["%tg_show vx", "%tg_step g(X, Y)", "%tg_profile g(X, Y)"])
def test_a_magic_shows_its_view_wherever_it_stands_in_the_cell(g, line):
    """Not only as the last line (IPython drops other lines' values); as the last line once,
    and an assignment keeps the view without showing it, as for any value."""
    from display_checks import widget_outputs

    assert len(widget_outputs(g, f"{line}\nafter = 1")) == 1
    assert len(widget_outputs(g, f"before = 1\n{line}")) == 1
    assert widget_outputs(g, f"kept = {line}") == [] and g.user_ns["kept"] is not None


def test_importing_the_views_loads_no_magic():
    """``import tensorgraph.notebook`` (the views: show, report, compare...) loads no magic and
    no IPython hook: those come with ``%load_ext tensorgraph`` (notebook/extension.py)."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys; import tensorgraph.notebook\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tensorgraph.'))))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout))
    assert not {m for m in loaded if m.endswith("_magic") or m.endswith(".extension")}, loaded
