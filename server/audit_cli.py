"""``casino audit verify [--anchor ID=HASH ...]`` and ``casino audit seal``: the audit chain
(``server.store.audit_chain``), straight from the database, without a server: DATABASE_URL,
else the embedded PostgreSQL in ``.casino/pgdata/`` (like ``casino ledger check``).

``verify`` recomputes the chain from the first row: exit 0 and ``audit chain ok`` with the
count and the head (id and hash), or exit 1 naming the first row where it breaks. ``seal``
seals what may be sealed now (the server does it every few seconds) and says how many."""

from __future__ import annotations

import argparse
import asyncio
import sys

from games.db import database_url
from games.db.pool import open_migrated_pool


def _anchor(text: str) -> tuple[int, str]:
    id_, sep, digest = text.partition("=")
    if not sep or not id_.isdigit() or len(digest) != 64:
        raise argparse.ArgumentTypeError("want ID=HASH (the row id and its 64 hex digit seal)")
    return int(id_), digest.lower()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--anchor", type=_anchor, action="append", default=[], metavar="ID=HASH",
                        help="verify: a head recorded earlier (verify's own output) that must still be in "
                             "the chain (repeatable)")


async def _main(args: argparse.Namespace) -> int:
    from server import store
    from server.store import audit_chain

    pool = await open_migrated_pool(database_url(), store.SCHEMA)
    try:
        if args.audit == "seal":
            n = await audit_chain.seal(pool, wait_seconds=10.0)
            print(f"audit: sealed {n} row(s)")
            return 0
        async with pool.acquire() as conn:
            v = await audit_chain.verify(conn, anchors=dict(args.anchor))
    finally:
        await pool.close()
    if not v.ok:
        print(f"audit chain broken at row {v.row}: {v.problem} "
              f"({v.sealed} row(s) check out before it, up to row {v.head_id})", file=sys.stderr)
        return 1
    print(f"audit chain ok: {v.sealed} row(s) sealed, head {v.head_id} {v.head_hash}; "
          f"{v.unsealed} row(s) not sealed yet")
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
