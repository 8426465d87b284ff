"""Parsing of each flag type, from strings (env/rc) and from Python values."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorgraph.configparser import (
    BoolParam,
    DeviceParam,
    EnumStr,
    FloatParam,
    IntParam,
    ModeParam,
    PathParam,
    StrParam,
    parse_flags_string,
)


@pytest.mark.parametrize(
    "text, expected",
    [("True", True), ("true", True), ("1", True), ("yes", True), ("on", True),
     ("False", False), ("false", False), ("0", False), ("no", False), ("off", False),
     (" TRUE ", True), (True, True), (False, False), (1, True), (0, False)],
)
def test_bool_parses(text, expected):
    assert BoolParam(False, "d").parse(text) is expected


@pytest.mark.parametrize("bad", ["maybe", "", "2", 2, 1.0, None])
def test_bool_rejects(bad):
    with pytest.raises(ValueError):
        BoolParam(False, "d").parse(bad)


def test_int_parses_and_checks_minimum():
    p = IntParam(3, "d", minimum=0)
    assert p.parse("12") == 12
    assert p.parse(" 7 ") == 7
    assert p.parse(0) == 0
    for bad in ("-1", -1, "1.5", "x", True, 2.0):
        with pytest.raises(ValueError):
            p.parse(bad)
    assert p.allowed() == "int >= 0"
    assert IntParam(-5, "d").parse("-5") == -5


def test_float_parses_and_checks_minimum():
    p = FloatParam(1.0, "d", minimum=0.0)
    assert p.parse("2.5") == 2.5
    assert p.parse(3) == 3.0 and isinstance(p.parse(3), float)
    for bad in ("-0.1", "abc", True, None):
        with pytest.raises(ValueError):
            p.parse(bad)


def test_str_accepts_text_and_runs_its_check():
    def no_spaces(text):
        if " " in text:
            raise ValueError("no spaces")

    p = StrParam("", "d", check=no_spaces)
    assert p.parse("-O2") == "-O2"
    with pytest.raises(ValueError, match="no spaces"):
        p.parse("a b")
    with pytest.raises(ValueError):
        p.parse(3)


def test_enum_accepts_only_choices_and_defaults_to_first():
    p = EnumStr(("low", "high"), "d")
    assert p.default == "low"
    assert p.parse(" high ") == "high"
    for bad in ("HIGH", "medium", 1):
        with pytest.raises(ValueError):
            p.parse(bad)
    assert p.allowed() == "{low, high}"


def test_device_is_cpu_only():
    p = DeviceParam("cpu", "d")
    assert p.parse("cpu") == "cpu"
    with pytest.raises(ValueError, match="CPU only"):
        p.parse("cuda0")
    with pytest.raises(ValueError):
        p.parse("tpu")


def test_path_expands_user_and_makes_absolute(tmp_path, monkeypatch):
    p = PathParam("~/x", "d")
    assert p.parse("~/cache") == os.path.join(os.path.expanduser("~"), "cache")
    monkeypatch.chdir(tmp_path)
    assert p.parse("rel") == str(tmp_path / "rel")
    assert p.parse(tmp_path) == str(tmp_path)
    for bad in ("", "   ", 3):
        with pytest.raises(ValueError):
            p.parse(bad)


def test_mode_names_parse_without_importing_the_compiler():
    p = ModeParam(("Mode", "FAST_RUN", "FAST_COMPILE"), "d")
    assert p.parse("FAST_RUN") == "FAST_RUN"
    with pytest.raises(ValueError):
        p.parse("FAST_RUNN")


def test_mode_accepts_mode_instances_only():
    mode_module = pytest.importorskip("tensorgraph.compile.mode")
    p = ModeParam(("Mode",), "d")
    instance = mode_module.Mode()
    assert p.parse(instance) is instance
    with pytest.raises(ValueError, match="Mode instance"):
        p.parse(3)


names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,20}", fullmatch=True)
values = st.text(alphabet=st.characters(blacklist_characters=",=", blacklist_categories=("Cs",)))


@given(st.lists(st.tuples(names, values), max_size=6))
def test_flags_string_round_trips_and_rightmost_wins(pairs):
    text = ",".join(f"{n}={v}" for n, v in pairs)
    parsed = parse_flags_string(text)
    expected = {}
    for n, v in pairs:
        expected[n] = v.strip()
    assert {n: raw.value for n, raw in parsed.items()} == expected
    assert all(raw.source == "env TENSORGRAPH_FLAGS" for raw in parsed.values())
