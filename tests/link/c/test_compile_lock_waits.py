"""What a process waiting for another process's compile lock says: two real processes, one
real lock (``KeyLock``), short bounds.

Waiting for another worker's compile is normal (two Dask workers starting on one machine):
it is one INFO line in the ``tensorgraph`` logger, no warning. A ``CacheLockWarning`` says
when the wait grows past ``compile__lock_warning`` seconds, or when the holder is gone."""

import json
import os
import subprocess
import sys

import pytest

HOLDER = r"""
import sys, time
from tensorgraph.link.c.locking import KeyLock

with KeyLock(sys.argv[1], "key", "module k") as lock:
    print("held", flush=True)
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        lock.heartbeat()
        time.sleep(0.2)
"""

WAITER = r"""
import json, logging, sys, time, warnings
from tensorgraph.link.c.locking import KeyLock

records = []
handler = logging.Handler(logging.INFO)
handler.emit = lambda record: records.append([record.levelname, record.getMessage()])
logging.getLogger("tensorgraph").addHandler(handler)
logging.getLogger("tensorgraph").setLevel(logging.INFO)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    started = time.time()
    with KeyLock(sys.argv[1], "key", "module k") as lock:
        waited = time.time() - started
print(json.dumps({"waited": waited, "taken_over": lock.taken_over, "log": records,
                  "warnings": [[w.category.__name__, str(w.message)] for w in caught]}))
"""


def _env(flags: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORGRAPH")}
    env["TENSORGRAPH_FLAGS"] = flags
    return env


def contend(tmp_path, hold: float, flags: str) -> tuple[dict, int]:
    """A holder takes the lock for ``hold`` seconds; a waiter (with ``flags``) then asks for
    it. The waiter's report and the holder's pid."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), str(hold)],
                              env=_env(""), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        waiter = subprocess.run([sys.executable, "-c", WAITER, str(tmp_path)],
                                env=_env(flags), capture_output=True, text=True, timeout=60)
    finally:
        holder.wait(timeout=60)
    assert waiter.returncode == 0, waiter.stderr
    return json.loads(waiter.stdout.strip().splitlines()[-1]), holder.pid


def test_waiting_for_another_workers_compile_is_one_info_line_not_a_warning(tmp_path):
    report, pid = contend(tmp_path, 2.5, "compile__wait=1,compile__lock_warning=30")
    assert report["waited"] > 1 and not report["taken_over"]
    assert report["warnings"] == []
    (line,) = report["log"]
    assert line[0] == "INFO" and f"process {pid}" in line[1] and "module k" in line[1]


def test_a_long_wait_is_one_cache_lock_warning(tmp_path):
    report, pid = contend(tmp_path, 4.5, "compile__wait=1,compile__lock_warning=2")
    assert not report["taken_over"]
    (warning,) = report["warnings"]
    assert warning[0] == "CacheLockWarning" and f"process {pid}" in warning[1]
    assert "compile__lock_warning=2" in warning[1]
    assert [level for level, _ in report["log"]] == ["INFO"]  # the status line before it


@pytest.mark.parametrize("flags", ["compile__lock_warning=0", "compile__lock_warning=x"])
def test_the_bound_is_a_number_of_seconds(run_python, flags):
    result = run_python("-c", "import tensorgraph", env={"TENSORGRAPH_FLAGS": flags})
    assert result.returncode != 0 and "compile__lock_warning" in result.stderr
