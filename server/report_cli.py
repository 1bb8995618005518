"""``casino report daily --date D [--tz ZONE] [--format json|csv] [--out FILE]``: the
regulator's daily report (``server.reports``), read straight from the database, so it runs
offline, without a server: DATABASE_URL, else the embedded PostgreSQL in ``.casino/pgdata/``
(like ``casino ledger check``). Exit 1 when the ledger check finds a problem or the tables
do not reconcile with the players' accounts."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from games.db import database_url
from games.db.pool import open_migrated_pool
from server.reports import daily_report, encode


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--date", required=True, type=date.fromisoformat, help="the day, YYYY-MM-DD")
    parser.add_argument("--tz", default="UTC", help="the time zone the day is counted in (default UTC)")
    parser.add_argument("--format", choices=("json", "csv"), default="json")
    parser.add_argument("--out", type=Path, help="write here instead of standard output")


async def _report(args: argparse.Namespace) -> int:
    from server import store

    pool = await open_migrated_pool(database_url(), store.SCHEMA)
    try:
        report = await daily_report(pool, args.date, args.tz)
    finally:
        await pool.close()
    data = encode(report, args.format)
    if args.out:
        args.out.write_bytes(data)
    else:
        sys.stdout.buffer.write(data + (b"" if data.endswith(b"\n") else b"\n"))
        sys.stdout.flush()
    bad = not report.ledger.ok or not all(t.reconciled for t in report.totals)
    if bad:
        print("report daily: the ledger check or the reconciliation failed (see the report)", file=sys.stderr)
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    try:
        ZoneInfo(args.tz)
    except (ZoneInfoNotFoundError, ValueError):
        print(f"report daily: unknown time zone {args.tz!r}", file=sys.stderr)
        return 2
    return asyncio.run(_report(args))
