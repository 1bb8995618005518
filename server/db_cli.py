"""``casino db start|stop|status|migrate``: the database on its own.

``start`` starts it (initdb on a new data dir) and leaves it running after the command
exits, so servers and tools started later share it and none of them stops it; ``stop``
stops it (refused while a live process uses it, unless ``--force``); ``status`` says
whether it runs, its URL, data dir and pid (exit 0 running, 3 stopped, as ``pg_ctl status``).
With ``DATABASE_URL`` set the embedded server is not used: ``status`` says so and
``start``/``stop`` refuse. ``migrate`` brings the schema of every package (the ledger's,
the server's) up to date on ``DATABASE_URL``, else on the embedded server, and prints what
it applied: the step to run, with a role allowed to change the schema, before servers
started with ``casino serve --no-migrate``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from games.db.embedded import Status

NOT_RUNNING = 3


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pgdata", type=Path, default=None,
                        help="data dir (default: CASINO_PGDATA, else .casino/pgdata)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show PostgreSQL's own output (initdb, pg_ctl)")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    parser.add_argument("--force", action="store_true", help="stop: even while processes use it")


def run(args: argparse.Namespace) -> int:
    from games.db import embedded
    from server import logs

    logs.setup("text", "info" if args.verbose else "warning", verbose=args.verbose)
    what = args.db
    url = os.environ.get("DATABASE_URL")
    if what == "migrate":
        return _migrate(url, args)
    if url:
        where = embedded.describe(url)
        if what == "status":
            if args.json:
                print(json.dumps({"external": True, "url": where}))
            else:
                print(f"external PostgreSQL (DATABASE_URL): {where}\nthe embedded server is not used")
            return 0
        print(f"casino db {what}: DATABASE_URL is set ({where}); that server is not ours to "
              f"{what}. Unset DATABASE_URL to manage the embedded one.", file=sys.stderr)
        return 1
    pgdata = args.pgdata.resolve() if args.pgdata else None
    if what == "start":
        was_running = embedded.status(pgdata).running
        st = embedded.keep_running(pgdata)
        _print(st, args.json, "already running" if was_running else "started")
        return 0
    if what == "stop":
        try:
            stopped = embedded.stop_server(pgdata, force=args.force)
        except embedded.InUse as exc:
            print(f"casino db stop: the embedded PostgreSQL is {exc}; stop them first (or --force)",
                  file=sys.stderr)
            return 1
        st = embedded.status(pgdata)
        _print(st, args.json, "stopped" if stopped else "not running")
        return 0
    st = embedded.status(pgdata)
    _print(st, args.json, "running" if st.running else "not running")
    return 0 if st.running else NOT_RUNNING


def _migrate(url: str | None, args: argparse.Namespace) -> int:
    import asyncio

    import asyncpg

    from games.db import embedded
    from games.db.migrate import MigrationError, migrate, status
    from server.store import SCHEMA

    pgdata = None if url else (args.pgdata.resolve() if args.pgdata else embedded.data_dir())
    where = embedded.describe(url) if url else f"embedded PostgreSQL in {pgdata}"

    async def apply(target: str) -> tuple[bool, list[str], int]:
        conn = await asyncpg.connect(target)
        try:
            converted = (await status(conn, SCHEMA)).keyed_by_version
            applied = await migrate(conn, SCHEMA)
            return converted, applied, len((await status(conn, SCHEMA)).applied)
        finally:
            await conn.close()

    try:
        converted, applied, recorded = asyncio.run(apply(url or embedded.start_embedded(pgdata)))
    except (MigrationError, OSError, asyncpg.PostgresError) as exc:
        print(f"casino db migrate: {where}: {exc}", file=sys.stderr)
        return 1
    finally:
        if pgdata is not None:
            embedded.stop_embedded(pgdata)  # it keeps running only if others use it
    if args.json:
        print(json.dumps({"database": where, "converted": converted, "applied": applied, "recorded": recorded}))
        return 0
    lines = [f"database: {where}"]
    if converted:
        lines.append("converted schema_migrations: now keyed by (package, version)")
    lines += [f"applied {label}" for label in applied]
    lines.append(f"schema up to date: {recorded} migrations recorded" + ("" if applied else ", nothing to apply"))
    print("\n".join(lines))
    return 0


def _print(st: Status, as_json: bool, state: str) -> None:
    if as_json:
        print(json.dumps({"external": False, "state": state, **st.as_dict()}))
        return
    lines = [f"embedded PostgreSQL: {state}" + (f" (pid {st.pid})" if st.running else ""),
             f"  data dir: {st.data_dir}" + ("" if st.initialised else " (not initialised yet)")]
    if st.running:
        lines.append(f"  url:      {st.url}")
        held = (["kept running by `casino db start`"] if st.kept else []) + \
               ([f"used by pid {', '.join(map(str, st.users))}"] if st.users else [])
        lines.append(f"  held:     {'; '.join(held) or 'nothing (stops when its last user exits)'}")
    if st.stale:
        lines.append(f"  stale:    pids of processes gone without letting go (dropped at the next start): "
                     f"{', '.join(map(str, st.stale))}")
    print("\n".join(lines))
