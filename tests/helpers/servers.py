"""``casino serve`` and ``casino db`` as real subprocesses for the tests of start-up, shutdown
and logging: a server's stderr kept in a file, and fresh embedded PostgreSQL data dirs
under ``.casino/test-runs/`` (pgserver opens every parent folder of its data dir when run
as root, so they stay inside the project), each stopped and removed afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from games.db import embedded
from games.db.embedded import PROJECT_DIR
from loadtest.server_process import free_port, wait_healthy

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
