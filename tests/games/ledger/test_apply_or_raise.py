"""``ledger_apply_or_raise`` (migration 0005): the ledger inside a statement of the caller's
own (a table's whole commit). It must apply what ``Ledger.apply`` applies, refuse what it
refuses with the very same error, write nothing then, and settle its lost races itself: a
statement with no transaction of its own has no caller to ask it again."""

from __future__ import annotations

import asyncio

import asyncpg

from games.errors import GameError
from games.ledger import Hold, Post, Transfer, accounts
from games.ledger.store import apply_args, raised_refusal
from tests.helpers.databases import until_waiting

from .test_store import BANK, A, refusal_cases, snapshot

_CALL = "SELECT ledger_apply_or_raise($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"


async def apply_or_raise(conn, ops) -> int:
    batch, args = apply_args(ops)
    try:
        return await conn.fetchval(_CALL, *args)
    except asyncpg.PostgresError as exc:
        raise raised_refusal(batch, exc) or exc from None


def error_of(exc: GameError) -> tuple:
    return type(exc), exc.code, exc.message, exc.details


async def test_every_refusal_is_the_one_apply_gives_and_writes_nothing(ledger, pool, table):
    cases = await refusal_cases(ledger)
    before = await snapshot(pool)
    for ops, code in cases:
        try:
            await ledger.apply(ops)
        except GameError as exc:
            expected = error_of(exc)
        async with pool.acquire() as c:
            try:
                await apply_or_raise(c, ops)
            except GameError as exc:
                assert error_of(exc) == expected, ops
                assert exc.code == code
            else:
                raise AssertionError(f"{ops} was applied")
        assert await snapshot(pool) == before, ops


async def test_it_applies_in_order_and_counts_what_it_applied(ledger, pool, table):
    async with pool.acquire() as c:
        assert await apply_or_raise(c, []) == 0
        ops = [Hold("h1", A, BANK, 1000, "bet", "s1"), Post("p1", "h1", 400), Transfer("w1", BANK, A, 50, "win")]
        assert await apply_or_raise(c, ops) == 3
        assert await apply_or_raise(c, ops) == 3  # the same ids, the same content: nothing again
    assert (await ledger.balance(A)).posted == 10000 - 400 + 50
    assert await ledger.check() == []


async def wait_for_lock(conn, pid: int) -> None:
    await until_waiting(conn, pid)


async def test_a_lost_race_on_an_id_is_asked_again_inside_the_statement(ledger, pool, table):
    """No account in common: the unique index orders the two. The loser is asked again
    within its own statement, sees the winner's row and answers id_conflict."""
    b, bank2 = accounts.wallet("bruno", "CHF"), accounts.bank("r2", "CHF")
    await ledger.open_account(bank2)
    async with pool.acquire() as c1, pool.acquire() as c2:
        tr = c1.transaction()
        await tr.start()
        await ledger.apply([Transfer("t1", A, BANK, 101, "bet")], conn=c1)  # written, not yet committed
        loser = asyncio.create_task(apply_or_raise(c2, [Transfer("t1", b, bank2, 100, "bet")]))
        await wait_for_lock(c1, c2.get_server_pid())
        await tr.commit()
        try:
            await loser
        except GameError as exc:
            assert exc.code == "id_conflict"
        else:
            raise AssertionError("the second t1 was applied")
    assert [(await ledger.balance(x)).posted for x in (A, b)] == [10000 - 101, 10000]
    assert await ledger.check() == []


async def test_a_hold_committed_while_it_waits_is_settled_once(ledger, pool, table):
    """The statement chose its locks before the hold was committed: it is asked again with
    the hold's accounts locked too, and settles the hold once."""
    b = accounts.wallet("bruno", "CHF")
    async with pool.acquire() as c1, pool.acquire() as c2:
        tr = c1.transaction()
        await tr.start()
        await ledger.apply([Hold("h1", A, BANK, 300, "bet", "s1")], conn=c1)  # holds anna's lock
        batch = asyncio.create_task(apply_or_raise(c2, [Transfer("t1", A, b, 100, "gift"), Post("p1", "h1")]))
        await wait_for_lock(c1, c2.get_server_pid())
        await tr.commit()
        assert await batch == 2
    assert [(await ledger.balance(x)).posted for x in (A, b, BANK)] == [9600, 10100, 300]
    assert await ledger.check() == []
