"""A connection ended under a batch's statement, on a real server: PostgreSQL terminates the
table's backend while its statement waits for a wallet's lock. The server cannot know
whether the batch was written: its player hears ``outcome_unknown``, the table stops in
that process, hands its lease back and is taken again at once (the notice) from the
database, and the same cid sent again is applied at most once."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from games.ledger import accounts
from server.client import Rejected
from tests.helpers.databases import activity

from .conftest import until

pytestmark = pytest.mark.slow

T = "ou-roul"


async def test_a_backend_ended_under_a_batch_answers_outcome_unknown_and_the_table_comes_back(floor, db_url):
    croupier = await floor.account("ou-croupier", "croupier")
    iris = await floor.account("iris", chips=50_000)
    await floor.table("roulette", "campione", T, staff=("ou-croupier",))
    for c in (croupier, iris):
        await c.connect()
        await c.subscribe(T)
    await croupier.play(T, {"type": "open_spin"})
    wallet = accounts.wallet("iris", "CHF")
    db = await asyncpg.connect(db_url)
    try:
        tr = db.transaction()
        await tr.start()
        await db.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", wallet)
        bet = asyncio.create_task(iris.bet(T, "rouge", 1_000, cid="ou-1"))

        async def waiting() -> int | None:  # the table's statement, waiting for iris's wallet
            return await activity(  # type: ignore[return-value]
                db, "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND application_name LIKE 'casino%' AND query LIKE '%ledger_apply_or_raise%'")

        pid = await until(waiting, 30)
        assert pid, (bet.done() and bet.exception(), floor.server.log()[-2000:])
        assert await db.fetchval("SELECT pg_terminate_backend($1)", pid)
        await tr.rollback()
        with pytest.raises(Rejected) as unknown:
            await asyncio.wait_for(bet, 10)
        assert unknown.value.code == "outcome_unknown", floor.server.log()[-2000:]

        async def served_again() -> bool:  # the croupier opens a spin again once the table is back
            try:
                await croupier.play(T, {"type": "open_spin"})
            except Rejected as exc:
                return exc.code not in ("table_unavailable", "outcome_unknown")  # (a spin already open: back)
            return True

        assert await until(served_again, 20)

        async def sent_again() -> dict | None:
            try:
                return await iris.bet(T, "rouge", 1_000, cid="ou-1")
            except Rejected as exc:
                if exc.code == "table_unavailable":
                    return None
                raise

        assert await until(sent_again, 20)
        holds = await db.fetchval("SELECT count(*) FROM ledger_transfers WHERE op = 'hold' AND debit = $1", wallet)
        assert holds == 1  # the ended statement wrote nothing; the cid sent again, once
    finally:
        await db.close()
        for c in (croupier, iris):
            await c.close()
