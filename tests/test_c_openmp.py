"""Parallel regions: their thread count (the process's CPUs, capped by a cgroup CPU quota) and
the thread pool they run on (pool.h: no libgomp, the caller runs blocks no worker took)."""

import os
import textwrap

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


def test_omp_num_threads_sets_the_count(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert openmp.region_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "5,2")
    assert openmp.region_threads() == 5
    for unusable in ("0", "many", ""):
        monkeypatch.setenv("OMP_NUM_THREADS", unusable)
        assert openmp.region_threads() == cpus.usable_cpus()
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert openmp.region_threads() == cpus.usable_cpus()


_POOL_SCRIPT = """
    import os, threading
    import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
    from tensorgraph.link.c.codegen import pool_stats
    tg.config.openmp = True
    tg.config.openmp_elemwise_minsize = 10
    x = tt.matrix("x", dtype="float64")
    f = tg.function([x], [tt.dot(x, x), tt.tanh(x).sum(axis=0), tt.exp(x) * 2, x.sum()])
    a = np.random.default_rng(0).normal(size=(300, 300))
    expected = [a @ a, np.tanh(a).sum(axis=0), np.exp(a) * 2, a.sum()]

    def check():
        for got, want in zip(f(a), expected):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)
"""


def test_regions_run_on_the_pool_without_libgomp(run_python):
    """Eight blocks per region on two cores: every block runs once (results match numpy), the
    workers take part, and libgomp is never loaded."""
    code = textwrap.dedent(_POOL_SCRIPT) + textwrap.dedent("""
        for _ in range(200):
            check()
        stats = pool_stats()
        assert stats["workers"] == 7, stats
        assert stats["jobs"] > 0 and stats["worker_blocks"] > 0, stats
        maps = open("/proc/self/maps").read()
        assert "libgomp" not in maps, [l for l in maps.splitlines() if "gomp" in l]
        print("ok")
    """)
    done = run_python("-c", code, env={"OMP_NUM_THREADS": "8"})
    assert done.stdout.strip() == "ok", done.stderr


def test_the_pool_under_threads_and_fork(run_python):
    """Python threads calling at once (one owns the pool, the others run their regions alone)
    and a child made by fork() after the workers started (it starts its own) all get numpy's
    results, and nothing hangs."""
    code = textwrap.dedent(_POOL_SCRIPT) + textwrap.dedent("""
        check()
        errors = []

        def many():
            try:
                for _ in range(50):
                    check()
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=many) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and not any(t.is_alive() for t in threads), errors
        pid = os.fork()
        if pid == 0:
            try:
                check()
                os._exit(0 if pool_stats()["workers"] >= 1 else 2)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        check()
        print("ok")
    """)
    done = run_python("-c", code, env={"OMP_NUM_THREADS": "4"})
    assert done.stdout.strip() == "ok", done.stderr


def test_on_one_cpu_the_caller_runs_regions_alone(run_python):
    """A worker that shares the caller's only CPU (the busy machine in miniature): regions
    still give numpy's results, and the caller runs most blocks itself instead of waiting for
    a worker the scheduler does not run."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs sched_setaffinity")
    code = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n" + \
        textwrap.dedent(_POOL_SCRIPT) + textwrap.dedent("""
        for _ in range(300):
            check()
        stats = pool_stats()
        assert stats["alone"] > 0, stats
        print("ok")
    """)
    done = run_python("-c", code, env={"OMP_NUM_THREADS": "2"})
    assert done.stdout.strip() == "ok", done.stderr


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
