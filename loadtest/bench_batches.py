"""What a table's batch statement costs PostgreSQL, alone and with other tables' batches.

    .venv/bin/python -m loadtest.bench_batches [--tables 10] [--bets 1 5 50] [--batches 2000]

Works in a database of its own (``casino_bench_batches_<pid>``, dropped at the end) on the server
``games.db.database_url()`` gives. ``--tables`` roulette tables are owned by this bench;
each batch is ``--bets`` straight bets from different players: their holds, events, answers,
logged commands and round players, as the server's runtime writes them
(``store.record_batches``). Per shape it reports the CPU the statement's PostgreSQL backend
spent (``/proc/<pid>/stat``, so PostgreSQL must run on this machine), per batch and per bet,
and this process's: first each table's batch alone, one statement each (``alone``), then
the same batches of every table in one statement (``together``, ``server.commit_group``'s
case at a busy floor). Commits wait for the disk, as the server's do.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import NamedTuple

import asyncpg

from games.db import create_pool, database_url, migrate
from games.ledger import Hold, Ledger, accounts
from loadtest import databases
from loadtest.bench_measure import cpu_seconds
from server import store

BENCH_DB = f"casino_bench_batches_{os.getpid()}"  # (two runs on one server do not meet)
OWNER = "bench-batches"
PLAYERS = 500


class Shape(NamedTuple):
    mode: str  # "alone" or "together"
    bets: int  # a batch's
    batches: int
    backend_ms: float  # PostgreSQL's CPU, all the batches
    client_ms: float  # this process's


async def fresh_floor(url: str, tables: int) -> asyncpg.Pool:
    """The bench's database, new: ``tables`` tables owned by the bench, ``PLAYERS`` players
    with chips; a pool of one connection to it."""
    pool = await create_pool(await databases.recreate(url, BENCH_DB), min_size=1, max_size=1)
    ledger = Ledger(pool)
    async with pool.acquire() as conn:
        await migrate(conn, store.SCHEMA)
        for t in table_ids(tables):
            await ledger.open_account(accounts.bank(t, "CHF"), conn=conn)
            await conn.execute("INSERT INTO casino_tables (id, game, profile, mode, currency, name, created_by)"
                               " VALUES ($1, 'roulette', 'campione', 'rng', 'CHF', $1, 'bench')", t)
            await conn.execute("INSERT INTO table_owners VALUES ($1, $2, now() + interval '1 hour')", t, OWNER)
            await store.create_state(conn, t, f"{t}-1", b"state-0")
    for p in range(PLAYERS):
        await ledger.deposit(f"p{p}", "CHF", 10**12, f"dep-p{p}")
    return pool


def table_ids(tables: int) -> list[str]:
    return [f"t{i}" for i in range(tables)]


class Table:
    """A table's counters, as its runtime keeps them."""

    def __init__(self, table_id: str) -> None:
        self.id, self.seq, self.command, self.wagers = table_id, 0, 0, 0

    def batch(self, bets: int) -> store.Batch:
        rnd = f"{self.id}-1"
        events, players, results, commands, ops = [], [], [], [], []
        for _ in range(bets):
            self.seq += 1
            self.command += 1
            self.wagers += 1
            player = f"p{self.wagers % PLAYERS}"
            wager = f"w{self.wagers}"
            events.append((self.id, self.seq, rnd, "wager_placed", player,
                           f'{{"wager": "{wager}", "spot": "plein 17", "amount": 100}}'))
            players.append((player, rnd))
            results.append((player, f"c{self.wagers}", self.id, f'{{"cid": "c{self.wagers}", "seq": {self.seq}}}'))
            commands.append((self.command, self.seq, self.seq, player, "player",
                             '{"type": "place_bet", "spot": "plein 17", "amount": 100}'))
            ops.append(Hold(f"{self.id}/{wager}/hold", accounts.wallet(player, "CHF"), accounts.bank(self.id, "CHF"),
                            100, "bet", f"{self.id}/{wager}"))
        return store.Batch(self.id, 0, self.seq, rnd, events, players, results, None, commands, self.command,
                           ops=ops, unchecked=store.Unanswered("CHF", [(p, r[1]) for (p, _), r in zip(
                               players, results, strict=True)]))


async def measure(conn: asyncpg.Connection, tables: list[Table], mode: str, bets: int, batches: int) -> Shape:
    pid = conn.get_server_pid()
    backend0, client0 = cpu_seconds(pid), time.process_time()
    done = 0
    while done < batches:
        if mode == "alone":
            table = tables[done % len(tables)]
            assert await store.record_batches(conn, OWNER, 3600, [table.batch(bets)])
            done += 1
        else:
            assert await store.record_batches(conn, OWNER, 3600, [t.batch(bets) for t in tables])
            done += len(tables)
    return Shape(mode, bets, done, (cpu_seconds(pid) - backend0) * 1000, (time.process_time() - client0) * 1000)


async def bench(args: argparse.Namespace, url: str | None = None) -> list[Shape]:
    """Each shape measured on a new floor in ``url``'s server (``database_url()``'s)."""
    url = url or database_url()
    pool = await fresh_floor(url, args.tables)
    try:
        async with pool.acquire() as conn:
            tables = [Table(t) for t in table_ids(args.tables)]
            await measure(conn, tables, "alone", 5, min(200, args.batches))  # (the plans made)
            out = []
            for bets in args.bets:
                for mode in ("alone", "together"):
                    shape = await measure(conn, tables, mode, bets, args.batches)
                    out.append(shape)
                    print(f"{mode:8s} {bets:3d} bets a batch, {shape.batches} batches: PostgreSQL "
                          f"{shape.backend_ms / shape.batches:.3f} core-ms a batch, "
                          f"{shape.backend_ms / shape.batches / bets:.3f} a bet; this process "
                          f"{shape.client_ms / shape.batches / bets:.3f} a bet", flush=True)
            return out
    finally:
        await pool.close()
        await databases.drop(url, BENCH_DB)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m loadtest.bench_batches", description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=10, help="tables; 'together' is one batch of each")
    ap.add_argument("--bets", type=int, nargs="+", default=[1, 5, 50], help="bets a batch")
    ap.add_argument("--batches", type=int, default=2000, help="batches per shape")
    args = ap.parse_args(argv)
    asyncio.run(bench(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
