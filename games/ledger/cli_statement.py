"""``casino ledger statement ACCOUNT``: print an account's history with running balances."""

from __future__ import annotations

import argparse
import asyncio
import sys

from games.db import database_url
from games.db.pool import open_migrated_pool
from games.errors import GameError
from games.ledger.store import Ledger
from games.money import currency


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("account", help='an account id, e.g. "wallet:anna:CHF" or "bank:roulette-1:EUR"')
    parser.add_argument("--limit", type=int, default=50, help="how many of the latest lines (default 50)")
    parser.add_argument(
        "--before", type=int, default=None, metavar="SEQ", help="only lines before this sequence number"
    )


async def _statement(args: argparse.Namespace) -> int:
    pool = await open_migrated_pool(database_url())
    try:
        ledger = Ledger(pool)
        try:
            bal = await ledger.balance(args.account)
            lines = await ledger.statement(args.account, limit=args.limit, before=args.before)
        except GameError as e:
            print(f"casino ledger statement: {e.code}: {e.message}", file=sys.stderr)
            return 1
    finally:
        await pool.close()
    cur = currency(bal.currency)
    print(f"{args.account}  balance {cur.format(bal.posted)}  on the tables {cur.format(bal.pending)}  "
          f"available {cur.format(bal.available)}  credit line {cur.format(bal.credit_limit)}")
    print(f"{'seq':>8}  {'time (UTC)':19}  {'op':8} {'code':14} {'change':>16} {'balance':>16} {'held':>14}  "
          f"counterparty / ref / id")
    for x in lines:
        change = cur.format(x.change) if x.change else ""
        print(f"{x.seq:>8}  {x.at:%Y-%m-%d %H:%M:%S}  {x.op:8} {x.code:14} {change:>16} "
              f"{cur.format(x.balance):>16} {cur.format(x.pending):>14}  {x.counterparty} {x.ref} {x.id}")
    if not lines:
        print("(no transfers)")
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_statement(args))
