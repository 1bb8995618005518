"""Ledger benchmark: durable bet holds per second, with settlement, beside the raw
single-row INSERT rate of the same PostgreSQL measured in the same run.

    .venv/bin/python -m loadtest.bench_ledger [--seconds 10] [--batch 500] [--players 1000]

Works in its own database ``casino_bench_ledger`` (dropped and created again) on the
server ``games.db.database_url()`` gives: the embedded one, or ``DATABASE_URL``.
A round is one ``apply`` of ``--batch`` holds from different players (one transaction, on
the table's own connection, as the server's runtime does) then one ``apply`` settling them
as a table would: half lost (post), four in ten won
(post + win transfer), one in ten pushed (void). holds/s counts bets placed *and*
settled. Every commit is durable (the server's fsync and synchronous_commit are shown),
unless ``--no-wait-for-disk``: the bets' commits then do not wait for the disk, and the
median time of one apply is the statement's own cost (a shared disk's flushes swing 10x).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from typing import NamedTuple

import asyncpg

from games.db import create_pool, database_url, migrate
from games.ledger import Hold, Ledger, Post, Transfer, Void, accounts
from loadtest import databases

BENCH_DB = "casino_bench_ledger"



async def fresh_database(url: str) -> str:
    bench_url = await databases.recreate(url, BENCH_DB)
    conn = await asyncpg.connect(bench_url)
    try:
        await migrate(conn, ("games.ledger",))
        await conn.execute("CREATE TABLE bench_raw (id bigserial PRIMARY KEY, v text NOT NULL)")
    finally:
        await conn.close()
    return bench_url


async def raw_inserts(pool: asyncpg.Pool, seconds: float) -> float:
    """Single-row INSERTs, each its own (durable) transaction, one after another."""
    async with pool.acquire() as c:
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            await c.execute("INSERT INTO bench_raw (v) VALUES ($1)", "x")
            n += 1
        return n / (time.perf_counter() - t0)


class Rounds(NamedTuple):
    bets: int
    hold_ms: list[float]  # each apply of a round's holds, then of its settlement
    settle_ms: list[float]


async def bet_rounds(ledger: Ledger, worker: int, players: list[str], batch: int, seconds: float,
                     wait_for_disk: bool = True) -> Rounds:
    async with ledger.pool.acquire() as conn:  # a table keeps its connection, as the server's runtime does
        if not wait_for_disk:  # what the statements cost, without the disk's flush in each commit
            await conn.execute("SET synchronous_commit = off")
        try:
            return await _bet_rounds(ledger, conn, worker, players, batch, seconds)
        finally:
            await conn.execute("RESET synchronous_commit")


async def _bet_rounds(ledger: Ledger, conn: asyncpg.Connection, worker: int, players: list[str], batch: int,
                      seconds: float) -> Rounds:
    rng = random.Random(worker)
    bank = accounts.bank(f"t{worker}", "CHF")
    await ledger.open_account(bank, conn=conn)
    bets, rnd, t0 = 0, 0, time.perf_counter()
    hold_ms: list[float] = []
    settle_ms: list[float] = []
    while time.perf_counter() - t0 < seconds:
        rnd += 1
        who = rng.sample(players, batch) if batch <= len(players) else [rng.choice(players) for _ in range(batch)]
        holds = [Hold(f"n{batch}w{worker}r{rnd}b{i}", accounts.wallet(p, "CHF"), bank, 100 * (1 + rng.randrange(10)),
                      "bet", ref=f"t{worker}:{rnd}") for i, p in enumerate(who)]
        t1 = time.perf_counter()
        await ledger.apply(holds, conn=conn)
        hold_ms.append((time.perf_counter() - t1) * 1e3)
        settle = []
        for h in holds:
            x = rng.random()
            if x < 0.5:
                settle.append(Post(h.id + "p", h.id, code="lost"))
            elif x < 0.9:
                settle.append(Post(h.id + "p", h.id, code="lost_to_win"))
                settle.append(Transfer(h.id + "w", bank, h.debit, h.amount, "win", h.ref))
            else:
                settle.append(Void(h.id + "v", h.id, "push"))
        t1 = time.perf_counter()
        await ledger.apply(settle, conn=conn)
        settle_ms.append((time.perf_counter() - t1) * 1e3)
        bets += len(holds)
    return Rounds(bets, hold_ms, settle_ms)


async def bench(args: argparse.Namespace) -> None:
    url = await fresh_database(database_url())
    pool = await create_pool(url, min_size=args.workers + 1, max_size=args.workers + 2)
    try:
        async with pool.acquire() as c:
            fsync = await c.fetchval("SHOW fsync")
            sync = await c.fetchval("SHOW synchronous_commit")
            version = await c.fetchval("SHOW server_version")
        ledger = Ledger(pool)
        players = [f"p{i}" for i in range(args.players)]
        for i in range(0, len(players), 500):
            await asyncio.gather(*(ledger.deposit(p, "CHF", 10**9, f"dep-{p}") for p in players[i:i + 500]))

        raw = await raw_inserts(pool, args.raw_seconds)
        print(f"PostgreSQL {version}, fsync={fsync}, synchronous_commit={sync}")
        print(f"raw single-row INSERT (one per transaction): {raw:,.0f} rows/s")
        for batch in args.batches:
            share = [players[w::args.workers] for w in range(args.workers)]
            t0 = time.perf_counter()
            done = await asyncio.gather(*(bet_rounds(ledger, w, share[w], batch, args.seconds, args.wait_for_disk)
                                          for w in range(args.workers)))
            bets = sum(r.bets for r in done)
            rate = bets / (time.perf_counter() - t0)
            holds = [ms for r in done for ms in r.hold_ms]
            settles = [ms for r in done for ms in r.settle_ms]
            print(f"holds with settlement, batch {batch}, {args.workers} connection(s): {rate:,.0f} holds/s "
                  f"({bets:,} bets) = {rate / raw:.2f} x the raw insert rate; one apply, median: "
                  f"holds {statistics.median(holds):.2f} ms, settlement {statistics.median(settles):.2f} ms")
        problems = await ledger.check()
        print("ledger check:", "ok" if not problems else problems[:5])
    finally:
        await pool.close()
    await databases.drop(database_url(), BENCH_DB)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per batch size")
    ap.add_argument("--raw-seconds", type=float, default=5.0)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 500], help="bets per transaction")
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=1, help="connections betting at once, one table each")
    ap.add_argument("--no-wait-for-disk", dest="wait_for_disk", action="store_false",
                    help="bet with synchronous_commit off: the statements' own cost, not the disk's flush")
    args = ap.parse_args(argv)
    asyncio.run(bench(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
