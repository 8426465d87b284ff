"""The thread count of OpenMP regions: the process's CPUs, capped by a cgroup CPU quota."""

import os

import numpy as np
import pytest

from tensorgraph import cpus
from tensorgraph.link.c import openmp


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("text, expected", [("150000 100000\n", 1.5), ("max 100000\n", None),
                                            ("200000 100000", 2.0), ("garbage", None)])
def test_cgroup_v2_quota(tmp_path, text, expected):
    write(tmp_path / "cpu.max", text)
    assert cpus.cgroup_cpu_limit(str(tmp_path)) == expected


def test_cgroup_v1_quota(tmp_path):
    write(tmp_path / "cpu" / "cpu.cfs_quota_us", "50000\n")
    write(tmp_path / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert cpus.cgroup_cpu_limit(str(tmp_path)) == 0.5
    write(tmp_path / "cpu" / "cpu.cfs_quota_us", "-1\n")
    assert cpus.cgroup_cpu_limit(str(tmp_path)) is None
    assert cpus.cgroup_cpu_limit(str(tmp_path / "missing")) is None


def test_usable_cpus_is_capped_by_the_quota(monkeypatch):
    mask = len(os.sched_getaffinity(0))
    monkeypatch.setattr(cpus, "cgroup_cpu_limit", lambda: None)
    assert cpus.usable_cpus() == mask
    monkeypatch.setattr(cpus, "cgroup_cpu_limit", lambda: 0.5)
    assert cpus.usable_cpus() == 1
    monkeypatch.setattr(cpus, "cgroup_cpu_limit", lambda: 1000.0)
    assert cpus.usable_cpus() == mask


def test_omp_num_threads_leaves_the_count_to_openmp(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert openmp.region_threads() == 0
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert openmp.region_threads() == cpus.usable_cpus()


def test_a_one_cpu_quota_runs_parallel_code_on_one_thread(run_python):
    """With the count forced to one, split products and loops still give numpy's results."""
    code = """if True:
        import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
        from tensorgraph import cpus
        from tensorgraph.link.c import openmp
        cpus.cgroup_cpu_limit = lambda: 1.0
        assert openmp.region_threads() == 1
        tg.config.openmp = True
        tg.config.openmp_elemwise_minsize = 10
        x = tt.matrix("x", dtype="float64")
        f = tg.function([x], [tt.dot(x, x), tt.tanh(x).sum(axis=0), tt.exp(x) * 2])
        a = np.random.default_rng(0).normal(size=(300, 300))
        for g, e in zip(f(a), [a @ a, np.tanh(a).sum(axis=0), np.exp(a) * 2]):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-9)
        print("ok")
    """
    done = run_python("-c", code)
    assert done.stdout.strip() == "ok", done.stderr


def test_thread_support_compiles_with_and_without_openmp():
    import tensorgraph
    import tensorgraph.tensor as tt
    from tensorgraph import config

    x = tt.vector("x", dtype="float64")
    for flag in (False, True):
        with config.change_flags(openmp=flag, openmp_elemwise_minsize=1):
            f = tensorgraph.function([x], [tt.exp(x).sum(), tt.exp(x)])
            total, values = f(np.arange(50.0))
            np.testing.assert_allclose(total, np.exp(np.arange(50.0)).sum())
            np.testing.assert_allclose(values, np.exp(np.arange(50.0)))
