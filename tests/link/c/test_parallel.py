"""Parallel loops: their thread count (config.pool__threads: OMP_NUM_THREADS, else the
process's CPUs capped by a cgroup CPU quota), the thread pool they run on (pool.h: the caller
runs blocks no worker took; its tuning from the pool__* flags), and what modules link: no
OpenMP runtime, no OpenMP symbols."""

import glob
import os
import re
import textwrap

import numpy as np
import pytest

from tensorgraph import configdefaults, cpus


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


def test_omp_num_threads_sets_the_default_thread_count(monkeypatch):
    """The config reads OMP_NUM_THREADS (the only place that does) for pool__threads."""
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert configdefaults._default_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "5,2")
    assert configdefaults._default_threads() == 5
    for unusable in ("0", "many", ""):
        monkeypatch.setenv("OMP_NUM_THREADS", unusable)
        assert configdefaults._default_threads() == cpus.usable_cpus()
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert configdefaults._default_threads() == cpus.usable_cpus()


def test_only_the_config_reads_omp_num_threads():
    import tensorgraph

    root = os.path.dirname(tensorgraph.__file__)
    readers = [os.path.relpath(path, root)
               for path in glob.glob(os.path.join(root, "**", "*.py"), recursive=True)
               if "OMP_NUM_THREADS" in open(path, encoding="utf-8").read()
               and re.search(r"environ", open(path, encoding="utf-8").read())]
    assert readers == ["configdefaults.py"]


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


def test_loops_run_on_the_pool_without_libgomp(run_python):
    """Eight blocks per loop on two cores: every block runs once (results match numpy), the
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
    done = run_python("-c", code, env={"OMP_NUM_THREADS": "",
                                       "TENSORGRAPH_FLAGS": "pool__threads=8,compile__tiers=False"})
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


def test_on_one_cpu_the_caller_runs_loops_alone(run_python):
    """A worker that shares the caller's only CPU (the busy machine in miniature): loops
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


def test_the_pool_takes_its_tuning_from_the_flags(run_python):
    """pool__* flags reach the pool when a function is linked: on one CPU, after one job its
    workers were absent from (pool__absent_jobs=1), the caller runs the next 100000 jobs alone
    (pool__pause_jobs) without publishing them; with the defaults it tries the workers again
    after 8 absent jobs and a pause of 16."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs sched_setaffinity")
    code = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n" + \
        textwrap.dedent(_POOL_SCRIPT) + textwrap.dedent("""
        for _ in range(100):
            check()
        print(pool_stats()["jobs"])
    """)
    paused = "pool__absent_jobs=1,pool__pause_jobs=100000,pool__max_pause_jobs=100000"
    jobs = []
    for flags in (paused, ""):
        done = run_python("-c", code, env={"OMP_NUM_THREADS": "2",
                                           "TENSORGRAPH_FLAGS": flags + ",compile__tiers=False"})
        assert done.returncode == 0, done.stderr
        jobs.append(int(done.stdout.strip()))
    assert jobs[0] <= 5 and jobs[1] >= 20, jobs


def test_a_one_cpu_quota_runs_parallel_code_on_one_thread(run_python):
    """With the count forced to one, split products and loops still give numpy's results."""
    code = """if True:
        import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
        from tensorgraph import configdefaults, cpus
        cpus.cgroup_cpu_limit = lambda: 1.0
        assert configdefaults._default_threads() == 1
        tg.config.pool__threads = 1
        tg.config.openmp = True
        tg.config.openmp_elemwise_minsize = 10
        x = tt.matrix("x", dtype="float64")
        f = tg.function([x], [tt.dot(x, x), tt.tanh(x).sum(axis=0), tt.exp(x) * 2])
        a = np.random.default_rng(0).normal(size=(300, 300))
        for g, e in zip(f(a), [a @ a, np.tanh(a).sum(axis=0), np.exp(a) * 2]):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-9)
        print("ok")
    """
    done = run_python("-c", code, env={"OMP_NUM_THREADS": ""})
    assert done.stdout.strip() == "ok", done.stderr


def test_parallel_loops_compile_with_and_without_openmp():
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
