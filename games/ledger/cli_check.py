"""``casino ledger check``: verify the ledger's invariants; exit 1 naming what is off."""

from __future__ import annotations

import argparse
import asyncio
import sys

from games.db import database_url
from games.db.pool import open_migrated_pool
from games.ledger.store import Ledger


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--open-round", action="append", metavar="REF", dest="open_rounds",
        help="treat REF as an open round (repeatable); by default open rounds come from the "
             "ledger_open_refs view (the server's)",
    )


async def _check(args: argparse.Namespace) -> int:
    pool = await open_migrated_pool(database_url())
    try:
        report = await Ledger(pool).check_report(open_refs=args.open_rounds)
    finally:
        await pool.close()
    for p in report.problems:
        print(f"{p.code}: {p.subject}: {p.detail}")
    rounds = ("their rounds are open" if report.rounds_checked
              else "rounds not checked: no ledger_open_refs view or --open-round")
    status = "ok" if not report.problems else f"{len(report.problems)} problem(s)"
    print(f"ledger {status}: {report.accounts} accounts, {report.transfers} transfers, "
          f"{report.pending_holds} pending holds; {rounds}",
          file=sys.stdout if not report.problems else sys.stderr)
    return 1 if report.problems else 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_check(args))
