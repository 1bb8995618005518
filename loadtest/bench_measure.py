"""What the benchmarks measure besides latency: CPU seconds per group of processes (the
server, PostgreSQL, the drivers, the rest) from /proc, the server's RSS, py-spy profiles
summarised into self and inclusive shares, and the server's own CPU profile (``CpuProfile``)."""

from __future__ import annotations

import collections
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path


def raise_fd_limit(want: int = 0) -> int:
    """Open files: the soft limit up to the hard one, and the hard one up to ``want`` where
    the process may raise it (root, or CAP_SYS_RESOURCE); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if want > hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return want
        except (ValueError, OSError):
            pass
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def _stat(raw: str) -> tuple[str, int, float]:
    """A process's ``/proc/<pid>/stat``: its command name, its parent and the CPU seconds it
    has used (user and system)."""
    comm = raw[raw.index("(") + 1:raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2:].split()
    return comm, int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """CPU seconds a process of this machine has used so far."""
    return _stat(Path(f"/proc/{pid}/stat").read_text())[2]


def cpu_by_group(server_pid: int, driver_pids: set[int]) -> dict[int, tuple[str, float]]:
    """CPU seconds used so far by each process, with its group: the server (its workers too),
    PostgreSQL, Redis, the drivers or everything else."""
    out: dict[int, tuple[str, float]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            raw = (d / "stat").read_text()
        except OSError:
            continue
        comm, ppid, used = _stat(raw)  # (``casino serve --workers N``: the workers are the supervisor's children)
        pid = int(d.name)
        group = ("server" if server_pid in (pid, ppid) else "driver" if pid in driver_pids or pid == os.getpid()
                 else "postgres" if comm.startswith("postgres") else "redis" if comm.startswith("redis")
                 else "other")
        out[pid] = (group, used)
    return out


# The groups a load run is made of (``cpu_by_group``); "other" is whatever else the machine
# ran meanwhile.
RUN_GROUPS = ("server", "postgres", "redis", "driver")


def cpu_used(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per group between the two readings: each process's (all of it for one
    that started between them; one that ended between them is missing, not subtracted)."""
    used = dict.fromkeys((*RUN_GROUPS, "other"), 0.0)
    for pid, (group, now) in after.items():
        was = before.get(pid)
        used[group] += now - (was[1] if was and was[0] == group else 0.0)
    return used


def cpu_share(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]],
              seconds: float) -> dict[str, float]:
    """Cores busy per group over ``seconds`` (2.0 = both cores of this machine)."""
    return cores_busy(cpu_used(before, after), seconds)


def cores_busy(used: dict[str, float], seconds: float) -> dict[str, float]:
    """CPU seconds per group (``cpu_used``) as cores busy over ``seconds``."""
    return {k: round(v / seconds, 2) for k, v in used.items()}


def in_echo_round_trips(echo: dict, bets: dict) -> dict[str, float]:
    """A bet's CPU by group, counted in the echo's round trips: each group's CPU seconds per
    acked bet divided by the CPU seconds of one echo round trip, every group's together.
    Both are ``phase`` results (``done``: operations; ``cpu_s``: CPU seconds by group);
    "other" is left out of both. ``all`` is the sum. Where both phases keep the run's groups
    equally busy (and "other" is near zero), the bets' rate is the echo's divided by it: an
    estimate at that CPU use and at the batch sizes the run had. NaN where either phase did
    nothing."""
    per_trip = cpu_per_operation(echo)
    per_bet = {g: _per(bets["cpu_s"][g], bets["done"]) / per_trip if per_trip else math.nan for g in RUN_GROUPS}
    return {**per_bet, "all": sum(per_bet.values())}


def cpu_per_operation(*phases: dict) -> float:
    """CPU seconds per operation of ``phase`` results taken together (their CPU over their
    operations), the run's groups together; NaN where they did nothing."""
    return _per(sum(p["cpu_s"][g] for p in phases for g in RUN_GROUPS), sum(p["done"] for p in phases))


def _per(amount: float, count: int) -> float:
    return amount / count if count else math.nan


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """The process's resident memory now (``VmHWM``: its peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def start_py_spy(pid: int, seconds: float, out: Path, *, native: bool = False) -> subprocess.Popen:
    """py-spy on ``pid`` (and its children) for ``seconds``; ``native``: with the C frames
    below the Python ones (what a call into a C extension spends, down to the syscalls),
    which means pausing the process for each sample."""
    exe = Path(sys.executable).with_name("py-spy")  # the venv's, else the PATH's
    if not exe.exists():
        exe = Path(shutil.which("py-spy") or exe)
    # --subprocesses: a `--workers N` server's workers are the supervisor's children
    how = ["--native"] if native else ["--nonblocking"]
    return subprocess.Popen([str(exe), "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200",
                             "--format", "raw", "--output", str(out), *how, "--subprocesses"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ``bench_server profile --cpu``: the folder put on the server's PYTHONPATH (its
# sitecustomize), the variable naming where it writes, and what stops the profile.
CPU_PROFILE_SITE = Path(__file__).with_name("cpu_profile")
CPU_PROFILE_ENV = "CASINO_CPU_PROFILE"


class CpuProfile:
    """cProfile on the CPU clock in the server ``pid`` (its sitecustomize: ``loadtest/cpu_profile``)
    from ``start_in`` seconds from now for ``seconds``, by two timed signals; ``wait`` as a
    Popen's, ``cancel`` for a phase that failed (no signal to a server already stopped)."""

    def __init__(self, pid: int, seconds: float, start_in: float = 0.0) -> None:
        if seconds <= 0:
            raise ValueError("a CPU profile needs a positive duration")
        self.timers = [threading.Timer(start_in, os.kill, (pid, signal.SIGUSR1)),
                       threading.Timer(start_in + seconds, os.kill, (pid, signal.SIGUSR1))]
        for t in self.timers:
            t.start()

    def wait(self, timeout: float | None = None) -> None:
        for t in self.timers:
            t.join(timeout)

    def cancel(self) -> None:
        for t in self.timers:
            t.cancel()


def summarize_cpu_profile(stats: Path, top: int = 40) -> str:
    """The functions by CPU time of their own, and by CPU time with what they call."""
    import io
    import pstats

    out = io.StringIO()
    p = pstats.Stats(str(stats), stream=out)
    out.write(f"{p.total_tt:.2f} s of CPU in the profiled functions (cProfile's own cost included)\n")
    p.sort_stats("tottime").print_stats(top)
    p.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def summarize_profile(raw: Path, top: int = 25) -> str:
    """Self and inclusive sample shares from py-spy's collapsed stacks."""
    self_t: collections.Counter = collections.Counter()
    incl: collections.Counter = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        count = int(n)
        total += count
        frames = [f.split(" (")[0] + " (" + f.split(" (")[1].rstrip(")").split(":")[0].split("/")[-1] + ")"
                  if " (" in f else f for f in stack.split(";")]
        self_t[frames[-1]] += count
        for f in set(frames):
            incl[f] += count
    lines = [f"{total} samples", "", "self time:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in self_t.most_common(top)]
    lines += ["", "inclusive:"]
    lines += [f"  {100 * c / total:5.1f}%  {f}" for f, c in incl.most_common(top * 2)]
    return "\n".join(lines)


# The server's own histograms (GET /metrics), read around a phase: how much of the latency
# the driver sees is the table's (queue wait, engine, commit), how long the commits took, how
# many commands a batch held.
# And how late the event loop ran its ticks (the longest the process held it in one go), and
# the garbage collector's pauses (one of the things that hold it).
SERVER_HISTOGRAMS = ("casino_ack_latency_seconds", "casino_commit_seconds", "casino_batch_commands",
                     "casino_event_loop_lag_seconds", "casino_gc_pause_seconds")


SUM = "sum"  # the key of a histogram's sum of observations beside its buckets' bounds


def scrape_histograms(text: str) -> dict[str, dict[float | str, float]]:
    """Cumulative bucket counts by upper bound, and the sum of the observations (``SUM``),
    summed over labels, of ``SERVER_HISTOGRAMS`` from a Prometheus text scrape."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, dict[float | str, float]] = {name: collections.Counter() for name in SERVER_HISTOGRAMS}
    for family in text_string_to_metric_families(text):
        if family.name not in out:
            continue
        for sample in family.samples:
            if sample.name == family.name + "_bucket":
                out[family.name][float(sample.labels["le"])] += sample.value
            elif sample.name == family.name + "_sum":
                out[family.name][SUM] += sample.value
    return out


def histogram_summary(before: dict[float | str, float], after: dict[float | str, float]) -> dict[str, float]:
    """The observations between two scrapes: their count, their mean, and the upper bounds of
    the buckets holding the median, the 99th percentile and the largest (``inf``: beyond the
    last bound)."""
    bounds = sorted(b for b in after if b != SUM)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    out = {"count": total, "mean": (after.get(SUM, 0.0) - before.get(SUM, 0.0)) / total if total else float("nan")}
    for name, q in (("p50_le", 0.5), ("p99_le", 0.99), ("max_le", 1.0)):
        out[name] = next((b for b, c in zip(bounds, counts, strict=True) if total and c >= q * total), float("nan"))
    return out
