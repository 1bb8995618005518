"""The embedded Redis: the broker the processes of ``casino serve --workers N`` share.

With ``REDIS_URL`` set we use that server. Without it ``casino serve --workers N`` starts
Debian's ``redis-server`` (apt package ``redis-server``) with everything under the project's
``.casino/redis/`` (``CASINO_REDIS_DIR``), as the embedded PostgreSQL keeps its data under
``.casino/pgdata/``:

* it listens on a unix socket only, ``.casino/redis/redis.sock``, mode 700: no TCP port
  (``--port 0``), so only this user's processes on this machine reach it;
* it persists nothing (``--save "" --appendonly no``): the broker carries live traffic only
  (table events, forwarded commands), PostgreSQL is the record;
* it daemonizes itself (``redis.pid``, ``redis.log``), so it outlives the process that
  started it when others still use it, and any of them can stop it.

Like pgserver's ``.handle_pids.json``, ``users.json`` lists the pids of the processes using
it (each ``start_redis`` adds its own, under a lock): ``stop_redis`` lets go and stops the
server only when no other live process uses it; pids of processes killed without letting go
are dropped at the next start. A second ``start_redis`` finds it running (it answers PING)
and joins it. ``casino redis start`` keeps it running for good (its own pid counts as a
user, alive exactly as long as it is); ``casino redis stop`` stops it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from games.db.embedded import PROJECT_DIR
from games.db.pids import alive, read_pids, write_pids

DEFAULT_DIR = PROJECT_DIR / ".casino" / "redis"
SOCKET, PIDFILE, LOGFILE, USERS, LOCK = "redis.sock", "redis.pid", "redis.log", "users.json", ".lock"
# sockaddr_un.sun_path is 108 bytes on Linux, the final NUL included.
MAX_SOCKET_PATH = 107
START_SECONDS = 10.0
STOP_SECONDS = 10.0
NOT_INSTALLED = "redis-server is not installed: apt-get install redis-server, or set REDIS_URL to a Redis of your own"


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis cannot be started (not installed, a folder too deep, it would not start)."""


class InUse(EmbeddedRedisError):
    def __init__(self, pids: list[int]) -> None:
        super().__init__(f"in use by process{'es' if len(pids) > 1 else ''} {', '.join(map(str, pids))}")
        self.pids = pids


def redis_dir() -> Path:
    return Path(os.environ.get("CASINO_REDIS_DIR", DEFAULT_DIR)).resolve()


def url_of(folder: Path) -> str:
    """``unix:///abs/path/redis.sock``: what ``redis.asyncio.Redis.from_url`` takes."""
    return f"unix://{folder.resolve() / SOCKET}"


def binary() -> str:
    path = shutil.which("redis-server")
    if path is None:
        raise EmbeddedRedisError(NOT_INSTALLED)
    return path


def start_redis(folder: Path | None = None) -> str:
    """Start (or join) the embedded Redis in ``folder`` (default ``CASINO_REDIS_DIR``, else
    ``.casino/redis/``) and return its URL. It runs until this process lets go of it
    (``stop_redis``) and no other process uses it."""
    folder = (folder or redis_dir()).resolve()
    sock = folder / SOCKET
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        raise EmbeddedRedisError(f"the embedded Redis's socket path {sock} is longer than a unix socket's "
                                 f"{MAX_SOCKET_PATH} bytes: set CASINO_REDIS_DIR to a shorter folder, or REDIS_URL")
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    with _locked(folder):
        users = [p for p in _read_users(folder) if alive(p)]
        if not _ping(sock):
            _spawn(folder)
        if os.getpid() not in users:
            users.append(os.getpid())
        _write_users(folder, users)
    return url_of(folder)


def stop_redis(folder: Path | None = None) -> bool:
    """Let go of the embedded Redis this process joined in ``folder``: it stops if no other
    live process uses it. True if it was stopped."""
    folder = (folder or redis_dir()).resolve()
    if not folder.is_dir():
        return False
    with _locked(folder):
        users = _read_users(folder)
        if os.getpid() not in users:
            return False
        others = [p for p in users if p != os.getpid() and alive(p)]
        _write_users(folder, others)
        if others:
            return False
        return _shutdown(folder)


@dataclass
class Status:
    folder: str
    running: bool
    pid: int | None = None  # redis-server's
    url: str | None = None
    kept: bool = False  # `casino redis start` keeps it running
    users: list[int] = field(default_factory=list)  # live processes using it
    stale: list[int] = field(default_factory=list)  # pids of processes gone without letting go

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def status(folder: Path | None = None) -> Status:
    folder = (folder or redis_dir()).resolve()
    out = Status(str(folder), _ping(folder / SOCKET))
    if out.running:
        out.pid, out.url = _server_pid(folder), url_of(folder)
    for pid in _read_users(folder):
        if pid == out.pid:
            out.kept = True
        elif alive(pid):
            out.users.append(pid)
        else:
            out.stale.append(pid)
    return out


def keep_running(folder: Path | None = None) -> Status:
    """Start the embedded Redis (or find it running) and leave it running after this process
    exits, until ``stop_server``: its own pid is one of its users."""
    folder = (folder or redis_dir()).resolve()
    start_redis(folder)
    with _locked(folder):
        users = [p for p in _read_users(folder) if p != os.getpid()]
        pid = _server_pid(folder)
        if pid is not None and pid not in users:
            users.append(pid)
        _write_users(folder, users)
    return status(folder)


def stop_server(folder: Path | None = None, *, force: bool = False) -> bool:
    """Stop the embedded Redis; False if it was not running. Refuses (``InUse``) while live
    processes use it, unless ``force``."""
    folder = (folder or redis_dir()).resolve()
    if not folder.is_dir():
        return False
    with _locked(folder):
        pid = _server_pid(folder)
        users = [p for p in _read_users(folder) if alive(p) and p not in (os.getpid(), pid)]
        if users and not force:
            raise InUse(users)
        _write_users(folder, [])
        return _shutdown(folder)


def describe(url: str) -> str:
    """A Redis URL fit for a log line: the password masked, the query left out."""
    parts = urlsplit(url)
    if parts.password:
        user, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user.split(':', 1)[0]}:***@{host}")
    return urlunsplit(parts._replace(query=""))


# ---- the server process ----------------------------------------------------------------------


def _spawn(folder: Path) -> None:
    """Start redis-server on ``folder``'s socket and wait until it answers PING."""
    sock = folder / SOCKET
    _shutdown(folder)  # one that no longer answers (hung, or its socket removed)
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()  # left by a redis-server killed with -9
    argv = [binary(), "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
            "--save", "", "--appendonly", "no", "--dir", str(folder),
            "--daemonize", "yes", "--pidfile", str(folder / PIDFILE), "--logfile", str(folder / LOGFILE)]
    # With --daemonize it forks, and the command returns at once (its child carries on in a
    # session of its own: a terminal's Ctrl-C never reaches it).
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=START_SECONDS)
    if done.returncode != 0:
        raise EmbeddedRedisError(f"redis-server did not start (exit {done.returncode}): "
                                 f"{(done.stderr or done.stdout).strip()[-2000:]}")
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if _ping(sock):
            return
        time.sleep(0.02)
    raise EmbeddedRedisError(f"redis-server did not answer on {sock} within {START_SECONDS:.0f} s: "
                             f"{_log_tail(folder)}")


def _shutdown(folder: Path) -> bool:
    """Stop the redis-server of ``folder`` (SIGTERM, then SIGKILL); whether one was running."""
    pid = _server_pid(folder)
    if pid is None:
        return _shutdown_command(folder / SOCKET)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for name in (SOCKET, PIDFILE):
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
    return True


def _shutdown_command(sock: Path) -> bool:
    """SHUTDOWN NOSAVE over the socket: a server that answers but whose pidfile is gone."""
    import redis

    if not _ping(sock):
        return False
    client = redis.Redis(unix_socket_path=str(sock), socket_timeout=STOP_SECONDS)
    try:
        client.shutdown(nosave=True)
    except (redis.RedisError, OSError):
        pass  # it closes the connection as it goes
    finally:
        client.close()
    return True


def _server_pid(folder: Path) -> int | None:
    """The pid of the redis-server serving ``folder``'s socket (its pidfile, checked: a pid is
    reused after a reboot or a kill -9)."""
    import psutil

    try:
        pid = int((folder / PIDFILE).read_text().strip())
        proc = psutil.Process(pid)
        if proc.status() != psutil.STATUS_ZOMBIE and str(folder / SOCKET) in " ".join(proc.cmdline()):
            return pid
    except (OSError, ValueError, psutil.Error):
        pass
    return None


def _ping(sock: Path) -> bool:
    return sock.exists() and answers(f"unix://{sock}")


def answers(url: str, timeout: float = 1.0) -> bool:
    """Whether the Redis at ``url`` answers PING."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def _log_tail(folder: Path) -> str:
    try:
        return (folder / LOGFILE).read_text(errors="replace").strip()[-2000:]
    except OSError:
        return "(no log)"


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One process at a time checks, starts, joins or stops the server of ``folder``."""
    with open(folder / LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _read_users(folder: Path) -> list[int]:
    return read_pids(folder / USERS)


def _write_users(folder: Path, pids: list[int]) -> None:
    write_pids(folder / USERS, pids)


# ---- casino redis start | stop | status ------------------------------------------------------

NOT_RUNNING = 3


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=None, dest="folder",
                        help="its folder (default: CASINO_REDIS_DIR, else .casino/redis)")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    parser.add_argument("--force", action="store_true", help="stop: even while processes use it")


def run(args: argparse.Namespace) -> int:
    what = args.redis
    url = os.environ.get("REDIS_URL")
    if url and what != "status":
        print(f"casino redis {what}: REDIS_URL is set ({describe(url)}); that server is not ours to {what}. "
              f"Unset REDIS_URL to manage the embedded one.", file=sys.stderr)
        return 1
    folder = args.folder.resolve() if args.folder else None
    try:
        if what == "start":
            was_running = status(folder).running
            _print(keep_running(folder), args.json, "already running" if was_running else "started")
            return 0
        if what == "stop":
            stopped = stop_server(folder, force=args.force)
            _print(status(folder), args.json, "stopped" if stopped else "not running")
            return 0
    except InUse as exc:
        print(f"casino redis stop: the embedded Redis is {exc}; stop them first (or --force)", file=sys.stderr)
        return 1
    except EmbeddedRedisError as exc:
        print(f"casino redis {what}: {exc}", file=sys.stderr)
        return 1
    st = status(folder)
    if url:
        st_line = f"external Redis (REDIS_URL): {describe(url)}; the embedded one is "
        print(json.dumps({"external": True, "url": describe(url), **st.as_dict()}) if args.json
              else st_line + ("running too" if st.running else "not used"))
        return 0
    _print(st, args.json, "running" if st.running else "not running")
    return 0 if st.running else NOT_RUNNING


def _print(st: Status, as_json: bool, state: str) -> None:
    if as_json:
        print(json.dumps({"external": False, "state": state, **st.as_dict()}))
        return
    lines = [f"embedded Redis: {state}" + (f" (pid {st.pid})" if st.running and st.pid else ""),
             f"  folder: {st.folder}"]
    if st.running:
        lines.append(f"  url:    {st.url}")
        held = (["kept running by `casino redis start`"] if st.kept else []) + \
               ([f"used by pid {', '.join(map(str, st.users))}"] if st.users else [])
        lines.append(f"  held:   {'; '.join(held) or 'nothing (stops when its last user lets go)'}")
    if st.stale:
        lines.append(f"  stale:  pids of processes gone without letting go (dropped at the next start): "
                     f"{', '.join(map(str, st.stale))}")
    print("\n".join(lines))
