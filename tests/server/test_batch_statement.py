"""A table's batch is one statement with no transaction of its own (``store.record_batch``):
the ledger's operations, the lease fence, the events, the answers, the command log and the
table's row. On a real PostgreSQL: all of it is written, or, when the ledger refuses or the
lease is lost, none of it, the ledger's part included."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from games.errors import GameError
from games.ledger import Hold, Ledger, accounts
from server import store
from tests.helpers.databases import until_waiting

ANNA = accounts.wallet("anna", "CHF")
BANK = accounts.bank("r1", "CHF")
ME = "server-1"


@pytest.fixture
async def table(pool):
    """Table r1, owned by ME, at seq 0; anna has CHF 100.00."""
    ledger = Ledger(pool)
    await ledger.open_account(BANK)
    await ledger.deposit("anna", "CHF", 10000, "dep-anna")
    async with pool.acquire() as conn:
        await conn.execute("INSERT INTO casino_tables (id, game, profile, mode, currency, name, created_by)"
                           " VALUES ('r1', 'roulette', 'campione', 'rng', 'CHF', 'r1', 'test')")
        await conn.execute("INSERT INTO table_owners VALUES ('r1', $1, now() + interval '10 seconds')", ME)
        await store.create_state(conn, "r1", "r1-1", b"state-0")
    return ledger


async def bet(conn, amount: int, owner: str = ME, snapshot: bytes | None = None, epoch: int = 0) -> bool:
    """anna's bet of ``amount`` on r1: its hold, event, answer and logged command."""
    return await store.record_batch(
        conn, "r1", owner, 10, 1, "r1-1",
        events=[("r1", 1, "r1-1", "wager_placed", "anna", '{"wager": "w1"}')],
        players=[("anna", "r1-1")],
        results=[("anna", "c1", "r1", '{"cid": "c1", "seq": 1}')],
        open_refs=["r1/w1"],
        commands=[(1, 1, 1, "anna", "player", '{"type": "bet"}')],
        last_command=1, snapshot=snapshot, keep=snapshot is not None,
        ops=[Hold("r1/w1/hold", ANNA, BANK, amount, "bet", "r1/w1")], epoch=epoch,
    )


async def written(conn) -> tuple:
    """What a batch writes, outside the ledger."""
    return (
        await conn.fetchval("SELECT count(*) FROM table_events"),
        await conn.fetchval("SELECT count(*) FROM command_results"),
        await conn.fetchval("SELECT count(*) FROM table_commands"),
        await conn.fetchval("SELECT count(*) FROM round_players"),
        await conn.fetchval("SELECT count(*) FROM table_snapshots"),
        tuple(await conn.fetchrow("SELECT seq, state, open_refs FROM table_state WHERE table_id = 'r1'")),
        await conn.fetchval("SELECT lease_until FROM table_owners WHERE table_id = 'r1'"),
    )


async def ledger_rows(conn) -> list:
    return [tuple(r) for r in await conn.fetch("SELECT * FROM ledger_transfers ORDER BY seq")]


@pytest.mark.parametrize("snapshot", [None, b"state-1"])
async def test_the_batch_and_its_money_are_written_together(pool, table, snapshot):
    async with pool.acquire() as conn:
        assert await bet(conn, 2500, snapshot=snapshot)
        assert not conn.is_in_transaction()
        events, answers, logged, players, kept, row, _ = await written(conn)
        assert (events, answers, logged, players) == (1, 1, 1, 1)
        assert row == (1, snapshot or b"state-0", ["r1/w1"])
        assert kept == (2 if snapshot else 1)  # the start's, and this one's when kept
        # The open refs' mark is read after the batch's own hold was numbered: the view
        # lists the wager once (from the list), not a second time as a hold made since.
        assert await conn.fetchval("SELECT refs_after FROM table_state") == \
            await conn.fetchval("SELECT max(seq) FROM ledger_transfers WHERE op = 'hold'")
        assert [r["ref"] for r in await conn.fetch("SELECT ref FROM ledger_open_refs")] == ["r1/w1"]
    b = await table.balance(ANNA)
    assert (b.posted, b.pending) == (10000, 2500)
    assert await table.check() == []


async def test_a_ledger_refusal_writes_nothing_of_the_batch(pool, table):
    async with pool.acquire() as conn:
        before, money = await written(conn), await ledger_rows(conn)
        with pytest.raises(GameError) as refused:
            await bet(conn, 10001)
        # the very refusal Ledger.apply gives, with its details
        assert (refused.value.code, refused.value.details) == (
            "insufficient_funds", {"op": "r1/w1/hold", "account": ANNA, "available": 10000, "amount": 10001})
        assert await written(conn) == before  # the lease was not renewed either
        assert await ledger_rows(conn) == money


async def test_a_lost_lease_writes_nothing_not_even_the_money(pool, table):
    async with pool.acquire() as conn:
        await conn.execute("UPDATE table_owners SET owner = 'server-2'")
        before, money = await written(conn), await ledger_rows(conn)
        assert await bet(conn, 2500) is False
        assert not conn.is_in_transaction()
        assert await written(conn) == before
        assert await ledger_rows(conn) == money
    assert (await table.balance(ANNA)).pending == 0


async def test_inside_a_callers_transaction_it_is_a_part_of_it(pool, table):
    """A batch with work of its own first (a companion's, an audit) runs in a transaction:
    the statement's writes stand or fall with it."""
    async with pool.acquire() as conn:
        before, money = await written(conn), await ledger_rows(conn)
        with pytest.raises(RuntimeError):
            async with conn.transaction():
                assert await bet(conn, 2500)
                raise RuntimeError("a later step failed")
        assert await written(conn) == before
        assert await ledger_rows(conn) == money


async def test_the_lease_row_is_not_held_while_the_ledger_waits(pool, table):
    """The ledger runs before the fence: a batch waiting for a wallet's lock does not hold
    its table's lease row meanwhile (the lease loop renews every lease of the process in one
    statement, which would wait behind it)."""
    async with pool.acquire() as holder, pool.acquire() as conn, pool.acquire() as renewer:
        tr = holder.transaction()
        await tr.start()
        await holder.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", ANNA)
        batch = asyncio.create_task(bet(conn, 2500))
        await until_waiting(holder, conn.get_server_pid())
        try:
            await renewer.execute("SELECT 1 FROM table_owners WHERE table_id = 'r1' FOR UPDATE NOWAIT")
        except asyncpg.LockNotAvailableError:
            raise AssertionError("the lease row is locked while the ledger waits") from None
        finally:
            await tr.rollback()
        assert await batch


async def test_a_statement_of_an_earlier_lease_writes_nothing(pool, table):
    """The same owner took the table again (a runtime that gave it up, the table read anew):
    a statement still running from before, under the old epoch, writes nothing."""
    async with pool.acquire() as conn:
        assert await store.lease_epoch(conn, "r1", ME) == 0
        assert await store.take_lease(conn, "r1", ME, 10)
        assert await store.lease_epoch(conn, "r1", ME) == 1
        before, money = await written(conn), await ledger_rows(conn)
        assert await bet(conn, 2500, epoch=0) is False
        assert await written(conn) == before
        assert await ledger_rows(conn) == money
        assert await bet(conn, 2500, epoch=1)  # the new runtime's
