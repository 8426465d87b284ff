"""Every error path: the message names the flag, the value, its origin, what is allowed and
(for misspelt names) the closest flag; nothing changes when a setting is refused."""

import pytest

from tensorgraph import config
from tensorgraph.configparser import ConfigError, UnknownFlagError, parse_flags_string


def import_error(run_python, env):
    """Import tensorgraph in a fresh interpreter; return the error line it stopped with."""
    proc = run_python("-c", "import tensorgraph", env=env)
    assert proc.returncode != 0, "import should have failed"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tensorgraph.configparser."), proc.stderr
    return last


# -- at import: environment ---------------------------------------------------------------


def test_unknown_env_flag_suggests_close_match(run_python):
    msg = import_error(run_python, {"TENSORGRAPH_FLAGS": "floatx=float32"})
    assert "UnknownFlagError" in msg
    assert "'floatx'" in msg and "env TENSORGRAPH_FLAGS" in msg
    assert "Did you mean 'floatX'?" in msg


def test_unknown_env_flag_without_close_match_points_to_listing(run_python):
    msg = import_error(run_python, {"TENSORGRAPH_FLAGS": "zzqqxx=1"})
    assert "'zzqqxx'" in msg and "python -m tensorgraph config" in msg


def test_invalid_env_value_names_flag_value_source_and_choices(run_python):
    msg = import_error(run_python, {"TENSORGRAPH_FLAGS": "floatX=float33"})
    assert "invalid value 'float33' for flag 'floatX'" in msg
    assert "env TENSORGRAPH_FLAGS" in msg
    assert "{float64, float32, float16}" in msg


@pytest.mark.parametrize(
    "setting, allowed",
    [
        ("allow_gc=perhaps", "bool"),
        ("traceback__limit=many", "int >= -1"),
        ("optdb__max_use_ratio=-2", "float >= 0.0"),
        ("mode=FAST_RUNN", "a Mode instance"),
        ("device=cuda0", "CPU only"),
        ("compiledir_format=cd_%(nope)s", "%(python_version)s"),
        ("compiledir_format=a/b", "single, non-empty directory name"),
        ("DebugMode__check_preallocated_output=initial:sideways", "'sideways'"),
    ],
)
def test_invalid_env_value_of_each_type(run_python, setting, allowed):
    name, value = setting.split("=", 1)
    msg = import_error(run_python, {"TENSORGRAPH_FLAGS": setting})
    assert f"invalid value {value!r} for flag {name!r}" in msg
    assert allowed in msg


def test_env_piece_without_equals_is_refused(run_python):
    msg = import_error(run_python, {"TENSORGRAPH_FLAGS": "floatX,mode=Mode"})
    assert "'floatX'" in msg and "name=value" in msg


def test_env_piece_without_name_is_refused():
    with pytest.raises(ConfigError, match="no flag name"):
        parse_flags_string("=float32")


# -- at import: rc files --------------------------------------------------------------


def test_unknown_rc_flag_names_file_section_and_match(run_python, tmp_path):
    rc = tmp_path / "bad.rc"
    rc.write_text("[profiling]\nnapply = 3\n")
    msg = import_error(run_python, {"TENSORGRAPHRC": str(rc)})
    assert "'profiling__napply'" in msg
    assert f"rc file {rc} [profiling]" in msg
    assert "Did you mean 'profiling__n_apply'?" in msg


def test_invalid_rc_value_names_file_and_section(run_python, tmp_path):
    rc = tmp_path / ".tensorgraphrc"
    rc.write_text("[global]\nexception_verbosity = loud\n")
    msg = import_error(run_python, {})
    assert "invalid value 'loud' for flag 'exception_verbosity'" in msg
    assert f"rc file {rc} [global]" in msg
    assert "{low, high}" in msg


@pytest.mark.parametrize(
    "text", ["floatX = float32\n", "[global]\nfloatX float32\n", "[global]\na=1\na=2\n"]
)
def test_malformed_rc_file_names_the_file(run_python, tmp_path, text):
    rc = tmp_path / "broken.rc"
    rc.write_text(text)
    msg = import_error(run_python, {"TENSORGRAPHRC": str(rc)})
    assert f"cannot parse rc file {rc}" in msg


def test_rc_path_that_is_a_directory_is_an_error(run_python, tmp_path):
    rcdir = tmp_path / "rcdir"
    rcdir.mkdir()
    msg = import_error(run_python, {"TENSORGRAPHRC": str(rcdir)})
    assert f"rc file {rcdir} (from TENSORGRAPHRC=" in msg and "is a directory" in msg


def test_missing_rc_file_is_skipped(run_python, tmp_path):
    proc = run_python("-c", "import tensorgraph; print(tensorgraph.config.floatX)",
                      env={"TENSORGRAPHRC": str(tmp_path / "absent.rc")})
    assert proc.returncode == 0 and proc.stdout.strip() == "float64", proc.stderr


# -- after import ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["base_compiledir", "compiledir_format", "compiledir", "compile__wait",
             "compile__timeout", "cmodule__age_thresh_use", "device"],
)
def test_read_only_flags_refuse_assignment(name):
    before = getattr(config, name)
    with pytest.raises(ConfigError, match=f"flag '{name}' is read-only after import"):
        setattr(config, name, before)
    with pytest.raises(ConfigError, match="read-only"):
        with config.change_flags(**{name: before}):
            pass
    assert getattr(config, name) == before
    assert config.info(name).source == "default"


def test_read_only_message_says_how_to_set_it():
    with pytest.raises(ConfigError) as err:
        config.compile__wait = 3
    assert "TENSORGRAPH_FLAGS" in str(err.value) and ".tensorgraphrc" in str(err.value)


def test_invalid_assignment_changes_nothing():
    with pytest.raises(ConfigError, match="invalid value 'float8' for flag 'floatX'"):
        config.floatX = "float8"
    assert config.floatX == "float64"
    assert config.info("floatX").source == "default"


def test_update_is_all_or_none():
    with pytest.raises(ConfigError, match="'int_division'"):
        config.update({"floatX": "float32", "allow_gc": False, "int_division": "round"})
    assert (config.floatX, config.allow_gc) == ("float64", True)
    with pytest.raises(UnknownFlagError, match="Did you mean 'allow_gc'"):
        config.update({"floatX": "float32", "alow_gc": False})
    assert config.floatX == "float64"


def test_unknown_attribute_is_an_attribute_error_with_suggestion():
    with pytest.raises(AttributeError, match="Did you mean 'compute_test_value'"):
        config.compute_test_vlaue  # noqa: B018
    assert not hasattr(config, "no_such_flag")
    with pytest.raises(UnknownFlagError, match="Did you mean 'floatX'"):
        config.floatx = "float32"


def test_flags_cannot_be_deleted():
    with pytest.raises(ConfigError, match="cannot be deleted"):
        del config.floatX
    assert config.floatX == "float64"


def test_change_flags_with_bad_value_changes_nothing():
    with pytest.raises(ConfigError):
        with config.change_flags(floatX="float32", cast_policy="whatever"):
            pass
    assert config.floatX == "float64"
