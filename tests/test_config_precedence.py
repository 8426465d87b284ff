"""Where values come from: assignment > TENSORGRAPH_FLAGS > rc files (later wins) > default.

Import-time behaviour is checked in fresh interpreters (``run_python``) with a clean
HOME and environment.
"""

import json

import pytest

SHOW = (
    "import json, tensorgraph as tg; c = tg.config; "
    "print(json.dumps({n: [repr(c.info(n).value), c.info(n).source] for n in NAMES}))"
)


def flags(run_python, names, env=None):
    proc = run_python("-c", SHOW.replace("NAMES", repr(list(names))), env=env)
    assert proc.returncode == 0, proc.stderr
    return {n: (v, s) for n, (v, s) in json.loads(proc.stdout).items()}


def write(path, text):
    path.write_text(text)
    return str(path)


def test_defaults_without_env_or_rc(run_python, tmp_path):
    got = flags(run_python, ["floatX", "mode", "linker", "optimizer", "base_compiledir"])
    assert got["floatX"] == ("'float64'", "default")
    assert got["mode"] == ("'Mode'", "default")
    assert got["linker"] == ("'cvm'", "default")
    assert got["optimizer"] == ("'o4'", "default")
    assert got["base_compiledir"] == (repr(str(tmp_path / ".tensorgraph")), "default")


def test_default_rc_file_in_home(run_python, tmp_path):
    rc = write(tmp_path / ".tensorgraphrc", "[global]\nfloatX = float32\n")
    got = flags(run_python, ["floatX"])
    assert got["floatX"] == ("'float32'", f"rc file {rc} [global]")


def test_sections_map_to_double_underscore_flags(run_python, tmp_path):
    rc = write(
        tmp_path / "a.rc",
        "[global]\nallow_gc = False\n[profiling]\nn_apply = 40\n"
        "[DebugMode]\ncheck_preallocated_output = initial:strided\n",
    )
    got = flags(
        run_python,
        ["allow_gc", "profiling__n_apply", "DebugMode__check_preallocated_output"],
        env={"TENSORGRAPHRC": rc},
    )
    assert got["allow_gc"] == ("False", f"rc file {rc} [global]")
    assert got["profiling__n_apply"] == ("40", f"rc file {rc} [profiling]")
    assert got["DebugMode__check_preallocated_output"][0] == "'initial:strided'"


def test_later_rc_files_override_earlier_and_missing_ones_are_skipped(run_python, tmp_path):
    first = write(tmp_path / "first.rc", "[global]\nfloatX = float32\nint_division = raise\n")
    second = write(tmp_path / "second.rc", "[global]\nfloatX = float16\n")
    missing = str(tmp_path / "missing.rc")
    got = flags(
        run_python, ["floatX", "int_division"],
        env={"TENSORGRAPHRC": f"{first}:{missing}:{second}"},
    )
    assert got["floatX"] == ("'float16'", f"rc file {second} [global]")
    assert got["int_division"] == ("'raise'", f"rc file {first} [global]")


def test_tensorgraphrc_replaces_the_default_rc(run_python, tmp_path):
    write(tmp_path / ".tensorgraphrc", "[global]\nfloatX = float32\n")
    other = write(tmp_path / "other.rc", "[global]\nallow_gc = False\n")
    got = flags(run_python, ["floatX", "allow_gc"], env={"TENSORGRAPHRC": other})
    assert got["floatX"] == ("'float64'", "default")
    assert got["allow_gc"][0] == "False"


def test_env_overrides_rc(run_python, tmp_path):
    rc = write(tmp_path / "a.rc", "[global]\nfloatX = float32\nallow_gc = False\n")
    got = flags(
        run_python, ["floatX", "allow_gc"],
        env={"TENSORGRAPHRC": rc, "TENSORGRAPH_FLAGS": "floatX=float16"},
    )
    assert got["floatX"] == ("'float16'", "env TENSORGRAPH_FLAGS")
    assert got["allow_gc"] == ("False", f"rc file {rc} [global]")


def test_env_rightmost_duplicate_wins_and_spaces_are_trimmed(run_python):
    got = flags(
        run_python, ["floatX", "mode"],
        env={"TENSORGRAPH_FLAGS": " floatX = float32 ,mode=FAST_COMPILE,, floatX=float16"},
    )
    assert got["floatX"] == ("'float16'", "env TENSORGRAPH_FLAGS")
    assert got["mode"] == ("'FAST_COMPILE'", "env TENSORGRAPH_FLAGS")


def test_env_value_may_contain_commas(run_python):
    got = flags(
        run_python, ["blas__ldflags", "floatX"],
        env={"TENSORGRAPH_FLAGS": "blas__ldflags=-lopenblas -Wl,-rpath,/opt/lib,floatX=float32"},
    )
    assert got["blas__ldflags"][0] == repr("-lopenblas -Wl,-rpath,/opt/lib")
    assert got["floatX"][0] == "'float32'"


def test_compiledir_follows_base_compiledir_and_format(run_python, tmp_path):
    got = flags(
        run_python, ["compiledir"],
        env={"TENSORGRAPH_FLAGS": f"base_compiledir={tmp_path}/b,compiledir_format=cd_%(python_bitwidth)s"},
    )
    assert got["compiledir"] == (repr(f"{tmp_path}/b/cd_64"), "default")


@pytest.mark.parametrize("source", ["env", "rc"])
def test_assignment_overrides_env_and_rc(run_python, tmp_path, source):
    if source == "env":
        env = {"TENSORGRAPH_FLAGS": "floatX=float16"}
    else:
        env = {"TENSORGRAPHRC": write(tmp_path / "a.rc", "[global]\nfloatX=float16\n")}
    code = (
        "import tensorgraph as tg; before = tg.config.info('floatX').source; "
        "tg.config.floatX = 'float32'; i = tg.config.info('floatX'); "
        "print(before.split()[0], i.value, i.source)"
    )
    proc = run_python("-c", code, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [source, "float32", "assignment"]


def test_read_only_flags_accept_env_and_rc(run_python, tmp_path):
    rc = write(tmp_path / "a.rc", "[compile]\nwait = 9\n")
    got = flags(
        run_python, ["compile__wait", "compile__timeout"],
        env={"TENSORGRAPHRC": rc, "TENSORGRAPH_FLAGS": "compile__timeout=30"},
    )
    assert got["compile__wait"][0] == "9"
    assert got["compile__timeout"] == ("30", "env TENSORGRAPH_FLAGS")
