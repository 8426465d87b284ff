"""The public face of tensorgraph.config: the flag set, change_flags, printing, C key."""

import pytest

import tensorgraph
from tensorgraph import config
from tensorgraph.configparser import ConfigError, change_flags

# The flags issue 2 asks for, by name (PyTensor's configuration pages).
REQUIRED = """device print_active_device floatX warn_float64 allow_gc scan__allow_output_prealloc
scan__allow_gc cycle_detection check_stack_trace openmp openmp_elemwise_minsize cast_policy
int_division mode profile profile_memory profile_optimizer profiling__n_apply profiling__n_ops
profiling__min_memory_size profiling__min_peak_memory profiling__destination
profiling__debugprint profiling__ignore_first_call lib__amdlibm linker optimizer on_opt_error
on_shape_error warn__ignore_bug_before base_compiledir compiledir_format compiledir
blas__ldflags optimizer_excluding optimizer_including optimizer_requiring optimizer_verbose
nocleanup compile__timeout compile__wait DebugMode__check_preallocated_output
DebugMode__check_preallocated_output_ndim DebugMode__warn_input_not_reused
NanGuardMode__nan_is_error NanGuardMode__inf_is_error NanGuardMode__big_is_error
NanGuardMode__action compute_test_value compute_test_value_opt print_test_value
exception_verbosity cmodule__warn_no_version cmodule__remove_gxx_opt
cmodule__compilation_warning cmodule__preload_cache cmodule__age_thresh_use cmodule__debug
traceback__limit traceback__compile_limit metaopt__verbose cxx gcc__cxxflags""".split()

EXPECTED_DEFAULTS = {
    "device": "cpu", "floatX": "float64", "warn_float64": "ignore", "allow_gc": True,
    "cast_policy": "custom", "int_division": "int", "mode": "Mode", "linker": "cvm",
    "optimizer": "o4", "compute_test_value": "off", "compute_test_value_opt": "off",
    "print_test_value": False, "exception_verbosity": "low", "traceback__limit": 8,
    "traceback__compile_limit": 0, "on_opt_error": "warn", "on_shape_error": "warn",
    "cycle_detection": "regular", "check_stack_trace": "off",
    "openmp_elemwise_minsize": 200000, "profile": False, "profiling__n_apply": 20,
    "profiling__n_ops": 20, "profiling__min_memory_size": 1024,
    "profiling__destination": "stdout", "scan__allow_output_prealloc": True,
    "scan__allow_gc": False, "NanGuardMode__action": "raise", "NanGuardMode__nan_is_error": True,
    "DebugMode__check_preallocated_output": "", "DebugMode__check_preallocated_output_ndim": 4,
    "compile__wait": 5, "compile__timeout": 120, "cmodule__age_thresh_use": 60 * 60 * 24 * 24,
}

CHOICES = {
    "floatX": ("float64", "float32", "float16"),
    "linker": ("cvm", "c|py", "py", "c", "c|py_nogc", "vm", "vm_nogc", "cvm_nogc", "jax",
               "numba", "pytorch"),
    "optimizer": ("o4", "o3", "o2", "o1", "unsafe", "fast_run", "fast_compile", "merge",
                  "stabilize", "None"),
    "compute_test_value": ("off", "ignore", "warn", "raise", "pdb"),
}


def test_every_required_flag_exists_with_a_doc():
    missing = [n for n in REQUIRED if n not in config]
    assert not missing
    for name in config:
        assert len(config.info(name).doc) > 20, name


@pytest.mark.parametrize("name, default", sorted(EXPECTED_DEFAULTS.items()))
def test_documented_defaults(name, default):
    assert config.info(name).default == default


@pytest.mark.parametrize("name, choices", sorted(CHOICES.items()))
def test_documented_choices(name, choices):
    assert config.info(name).param.choices == choices


def test_mode_accepts_each_named_mode():
    for name in ("Mode", "FAST_RUN", "FAST_COMPILE", "DebugMode", "NanGuardMode", "JAX",
                 "NUMBA", "PYTORCH", "DEBUG_MODE"):
        config.mode = name
        assert config.mode == name


def test_defaults_computed_at_import_are_consistent():
    import os

    assert config.compiledir.startswith(config.base_compiledir + os.sep)
    assert config.cxx == "" or os.path.isfile(config.cxx)


def test_values_read_as_plain_values():
    assert isinstance(config.allow_gc, bool)
    assert isinstance(config.traceback__limit, int)
    assert isinstance(config.optdb__max_use_ratio, float)


def test_assignment_parses_strings_and_records_source():
    config.allow_gc = "false"
    assert config.allow_gc is False
    config.profiling__n_apply = "7"
    assert config.profiling__n_apply == 7
    assert config.info("allow_gc").source == "assignment"


# -- change_flags -----------------------------------------------------------------------


def test_change_flags_context_manager_restores_values_and_sources():
    config.allow_gc = False
    with config.change_flags(floatX="float32", allow_gc=True) as cfg:
        assert cfg is config
        assert (config.floatX, config.allow_gc) == ("float32", True)
        assert config.info("floatX").source == "change_flags"
    assert (config.floatX, config.allow_gc) == ("float64", False)
    assert config.info("floatX").source == "default"
    assert config.info("allow_gc").source == "assignment"


def test_change_flags_restores_on_exception():
    with pytest.raises(RuntimeError):
        with config.change_flags(floatX="float16"):
            raise RuntimeError("boom")
    assert config.floatX == "float64"


def test_change_flags_decorator_restores_and_is_reusable():
    @config.change_flags(floatX="float32")
    def inner(fail):
        if fail:
            raise KeyError("x")
        return config.floatX

    assert inner.__name__ == "inner"
    assert inner(False) == "float32"
    with pytest.raises(KeyError):
        inner(True)
    assert config.floatX == "float64"
    with config.change_flags(floatX="float16"):
        assert inner(False) == "float32"
        assert config.floatX == "float16"


def test_change_flags_nests_and_accepts_a_mapping():
    with config.change_flags({"floatX": "float32"}, mode="FAST_COMPILE"):
        with change_flags(floatX="float16"):
            assert (config.floatX, config.mode) == ("float16", "FAST_COMPILE")
        assert config.floatX == "float32"
    assert (config.floatX, config.mode) == ("float64", "Mode")


def test_same_change_flags_object_can_be_entered_twice():
    cf = config.change_flags(floatX="float32")
    with cf:
        config.floatX = "float16"
        with cf:
            assert config.floatX == "float32"
        assert config.floatX == "float16"
    assert config.floatX == "float64"


# -- reset --------------------------------------------------------------------------------


def test_reset_restores_defaults_of_mutable_flags():
    config.reset()  # from the defaults (conftest turns compile tiers off for the suite)
    config.update({"floatX": "float32", "allow_gc": False})
    assert sorted(config.reset()) == ["allow_gc", "floatX"]
    assert (config.floatX, config.allow_gc) == ("float64", True)
    assert config.info("floatX").source == "default"
    config.floatX = "float32"
    assert config.reset(["floatX"]) == ["floatX"]
    with pytest.raises(ConfigError, match="read-only"):
        config.reset(["compile__wait"])


# -- printing ---------------------------------------------------------------------------


def test_print_lists_every_flag_with_value_source_and_doc():
    config.floatX = "float32"
    text = str(config)
    for name in config:
        assert f"\n{name} (" in text
    assert "<bound method" not in text
    assert "value: 'float32'  [assignment; default 'float64']" in text
    assert "{float64, float32, float16}" in text
    assert "read-only" in text
    assert config.info("floatX").doc.split()[0] in text
    assert repr(config).startswith("<tensorgraph Config: ")


def test_describe_only_changed():
    config.reset()  # from the defaults (conftest turns compile tiers off for the suite)
    config.mode = "FAST_COMPILE"
    text = config.describe(only_changed=True)
    assert "mode (" in text and "floatX (" not in text
    assert text.startswith("tensorgraph config: 1 flag(s)")


# -- C key ------------------------------------------------------------------------------


def test_c_key_hash_tracks_only_c_flags():
    base = config.c_key_hash()
    assert len(base) == 64 and base == config.c_key_hash()
    with config.change_flags(floatX="float32", mode="FAST_COMPILE"):
        assert config.c_key_hash() == base
    with config.change_flags(gcc__cxxflags="-O1"):
        assert config.c_key_hash() != base
    assert config.c_key_hash() == base
    names = [n for n, _ in config.c_key_items()]
    assert {"cxx", "gcc__cxxflags", "blas__ldflags", "openmp"} <= set(names)


def test_c_key_hash_is_stable_across_processes(run_python):
    code = "import tensorgraph; print(tensorgraph.config.c_key_hash())"
    first = run_python("-c", code).stdout
    assert first == run_python("-c", code).stdout
    # both values given: the default depends on the CPUs the process may use, which a test
    # pinning this worker's affinity changes for the processes it starts
    on, off = (run_python("-c", code, env={"TENSORGRAPH_FLAGS": f"openmp={v}"}).stdout
               for v in (True, False))
    assert on != off and first in (on, off)


def test_openmp_default_follows_the_cpus_and_omp_num_threads(run_python):
    """On where the process may use several CPUs, unless OMP_NUM_THREADS=1 asks for one."""
    import os

    code = "import tensorgraph; print(tensorgraph.config.openmp)"
    several = len(os.sched_getaffinity(0)) > 1
    assert run_python("-c", code, env={"OMP_NUM_THREADS": "4"}).stdout.strip() == str(several)
    assert run_python("-c", code, env={"OMP_NUM_THREADS": "1"}).stdout.strip() == "False"
    one_cpu = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " + code
    assert run_python("-c", one_cpu, env={"OMP_NUM_THREADS": "4"}).stdout.strip() == "False"


def test_package_exposes_config_and_error():
    assert tensorgraph.config is config
    assert issubclass(tensorgraph.ConfigError, ValueError)
