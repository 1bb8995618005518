"""``casino unclaimed list [--status S] [--table T]`` and ``casino unclaimed expire
[--as-of WHEN] [--days N]``: the unclaimed register (``server.unclaimed``), straight from
the database (DATABASE_URL, else the embedded PostgreSQL), like ``casino report daily``.

``expire`` moves every open item recorded at least ``--days`` (``CASINO_UNCLAIMED_DAYS``,
default 30) before ``--as-of`` (default now; a date or an ISO time, UTC unless it says)
to its table's float, each with its ledger transfer and audit record, once an inspector
has countersigned it (``POST /unclaimed/{id}/countersign``: the Controllore comunale's
signature, Art. 19; this command has no logged-in inspector, so it does not sign); run
again it moves nothing more. It prints the items it moved as JSON, and on stderr how many
due items it left open awaiting their countersignature (``list`` shows them as
``"awaiting_countersignature": true``, with ``countersigned_by``/``countersigned_at`` on
the others)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime

import msgspec

from games.db import database_url
from games.db.pool import open_migrated_pool
from games.errors import GameError


def _when(text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date or ISO time: {text!r}") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def configure(parser: argparse.ArgumentParser) -> None:
    if parser.prog.endswith("expire"):
        parser.add_argument("--as-of", type=_when, default=None,
                            help="the moment the period is counted back from (default now), YYYY-MM-DD[THH:MM]")
        parser.add_argument("--days", type=int, default=None,
                            help="the period in days (default CASINO_UNCLAIMED_DAYS, else 30)")
    else:
        parser.add_argument("--status", choices=("open", "claimed", "expired"))
        parser.add_argument("--table")


async def _run(args: argparse.Namespace) -> int:
    from games.ledger.store import Ledger
    from server import store, unclaimed

    pool = await open_migrated_pool(database_url(), store.SCHEMA)
    try:
        if args.unclaimed == "expire":
            items = await unclaimed.expire(pool, Ledger(pool), as_of=args.as_of, days=args.days)
            held = [it for it in await unclaimed.register(pool, status="open", days=args.days, as_of=args.as_of)
                    if it.awaiting_countersignature]
            if held:
                print(f"unclaimed expire: {len(held)} item(s) past their period await an inspector's "
                      f"countersignature: {', '.join(it.id for it in held)}", file=sys.stderr)
        else:
            items = await unclaimed.register(pool, status=args.status, table=args.table)
    finally:
        await pool.close()
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(items)) + b"\n")
    sys.stdout.flush()
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "days", None) is not None and args.days < 0:
        print("unclaimed expire: --days cannot be negative", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_run(args))
    except GameError as e:
        print(f"unclaimed {args.unclaimed}: {e.code}: {e.message}", file=sys.stderr)
        return 1
