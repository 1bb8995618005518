"""``casino serve`` and ``casino db`` as real subprocesses for the tests of start-up, shutdown
and logging: a server's stderr kept in a file, and fresh embedded PostgreSQL data dirs
under ``.casino/test-runs/`` (pgserver opens every parent folder of its data dir when run
as root, so they stay inside the project), each stopped and removed afterwards."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from games.db import embedded
from games.db.embedded import PROJECT_DIR
from games.db.pids import alive
from loadtest.server_process import free_port, wait_healthy
from server import redis_embedded

TEST_RUNS = PROJECT_DIR / ".casino" / "test-runs"
JWT_SECRET = "serve-test-secret-" + "s" * 40
ADMIN_PASSWORD = "serve-admin-pass"


def fresh_pgdata(prefix: str) -> Path:
    """A new, empty data dir (its parent exists, as pgserver wants)."""
    TEST_RUNS.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-{os.getpid()}-", dir=TEST_RUNS)) / "pg"


def remove_pgdata(pgdata: Path) -> None:
    embedded.stop_server(pgdata, force=True)
    shutil.rmtree(pgdata.parent, ignore_errors=True)


def embedded_env(pgdata: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return {**env, "CASINO_PGDATA": str(pgdata), "CASINO_JWT_SECRET": JWT_SECRET,
            "CASINO_ADMIN_PASSWORD": ADMIN_PASSWORD, **extra}


def casino(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "server.cli", *args], cwd=PROJECT_DIR, env=env,
                          capture_output=True, text=True, timeout=120)


class Serve:
    """``casino serve --no-demo`` on a free port; ``stderr()`` is everything it logged."""

    def __init__(self, env: dict[str, str], log_dir: Path, *args: str) -> None:
        self.env, self.args = env, args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.err_path = log_dir / f"serve-{self.port}.err"
        self.out_path = log_dir / f"serve-{self.port}.out"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Serve:
        with open(self.err_path, "wb") as err, open(self.out_path, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--no-demo", "--host", "127.0.0.1",
                 "--port", str(self.port), *self.args],
                cwd=PROJECT_DIR, env=self.env, stdout=out, stderr=err)
        wait_healthy(self.proc, self.url, self.stderr, 90)
        return self

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` and wait for the exit; the exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace") if self.err_path.exists() else ""


STARTED = re.compile(r"worker (\d+) started: pid (\d+), owner (\S+)")


class Supervised:
    """``casino serve --workers 2`` on a port of its own, on the test's database, with the
    embedded Redis in ``redis_dir``; its log in ``log_dir``."""

    def __init__(self, db_url: str, log_dir: Path, redis_dir: Path,
                 admin_password: str = "supervisor-admin-pass") -> None:
        self.db_url = db_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"supervisor-{self.port}.log"
        self.redis_dir = redis_dir
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CASINO_OWNER_ID", "CASINO_WORKERS")}
        self.env = {**env, "DATABASE_URL": db_url, "CASINO_REDIS_DIR": str(redis_dir),
                    "CASINO_JWT_SECRET": "supervisor-test-secret-" + "w" * 40,
                    "CASINO_ADMIN_PASSWORD": admin_password}
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--workers", "2", "--no-demo", "--host", "127.0.0.1",
                 "--port", str(self.port), "--log-level", "info", "--no-access-log"],
                cwd=PROJECT_DIR, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        wait_healthy(self.proc, self.url, self.log, 60)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def workers(self) -> dict[int, list[int]]:
        """Each slot's pids, in the order they were started."""
        out: dict[int, list[int]] = {}
        for slot, pid, _ in STARTED.findall(self.log()):
            out.setdefault(int(slot), []).append(int(pid))
        return out

    def clean_up(self) -> None:
        """Whatever a test left running is killed: the supervisor, every worker it started,
        the Redis in its folder (and the folder)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pids in self.workers().values():
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
        redis_embedded.stop_server(self.redis_dir, force=True)
        shutil.rmtree(self.redis_dir.parent, ignore_errors=True)

    def wait_for(self, text: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.log():
            assert self.proc is not None and self.proc.poll() is None, self.log()[-3000:]
            assert time.monotonic() < deadline, f"no {text!r} in:\n{self.log()[-3000:]}"
            time.sleep(0.05)
