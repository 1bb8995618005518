"""``bench_server profile --cpu``'s hook: a process with ``loadtest/cpu_profile`` on its path
profiles itself between two SIGUSR1s, on its CPU clock, and writes stats pstats reads."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from loadtest.bench_measure import CPU_PROFILE_ENV, CPU_PROFILE_SITE, CpuProfile, summarize_cpu_profile

BUSY = """
import sys, time
def busy_work():
    return sum(i * i for i in range(20_000))
print("ready", flush=True)
end = time.monotonic() + 3
while time.monotonic() < end:
    busy_work()
    time.sleep(0.001)
"""


def test_the_server_profiles_itself_between_two_signals(tmp_path):
    out = tmp_path / "cpu"
    env = {**os.environ, CPU_PROFILE_ENV: str(out),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(CPU_PROFILE_SITE), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", BUSY], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        CpuProfile(proc.pid, 0.5, start_in=0.1).wait(5)
        deadline = time.monotonic() + 5
        while not (tmp_path / f"cpu.{proc.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.wait(10)
    summary = summarize_cpu_profile(tmp_path / f"cpu.{proc.pid}")
    assert "busy_work" in summary and "s of CPU in the profiled functions" in summary
