"""Many connections at once on one wallet: never overdrawn, never applied twice."""

from __future__ import annotations

import asyncio
import random

from games.errors import GameError
from games.ledger import Hold, Post, Transfer, Void, accounts
from tests.helpers.databases import activity, until_waiting

A = accounts.wallet("anna", "CHF")
BANK = accounts.bank("r1", "CHF")


async def attempt(ledger, ops):
    try:
        return await ledger.apply(ops)
    except GameError as e:
        return e.code


async def test_100_concurrent_bets_exactly_the_affordable_succeed(ledger, table):
    # anna has 10000: 33 bets of 300 fit, the 34th does not
    outcomes = await asyncio.gather(*(attempt(ledger, [Hold(f"b{i}", A, BANK, 300, "bet", "s1")]) for i in range(100)))
    ok = [o for o in outcomes if isinstance(o, list)]
    assert len(ok) == 33
    assert sorted(o for o in outcomes if isinstance(o, str)) == ["insufficient_funds"] * 67
    b = await ledger.balance(A)
    assert (b.posted, b.pending, b.available) == (10000, 9900, 100)
    assert await ledger.check() == []


async def test_concurrent_bets_of_different_sizes_never_overdraw(ledger, table):
    rng = random.Random(5)
    amounts = [rng.randrange(100, 1500) for _ in range(100)]
    outcomes = await asyncio.gather(
        *(attempt(ledger, [Hold(f"b{i}", A, BANK, a, "bet")]) for i, a in enumerate(amounts)))
    won = sum(a for a, o in zip(amounts, outcomes, strict=True) if isinstance(o, list))
    b = await ledger.balance(A)
    assert b.pending == won <= 10000
    # the balance only shrank, so each refused bet was larger than what is left now
    assert all(a > b.available for a, o in zip(amounts, outcomes, strict=True) if o == "insufficient_funds")
    assert all(isinstance(o, list) or o == "insufficient_funds" for o in outcomes)


async def test_the_same_id_from_many_connections_moves_once(ledger, table):
    op = Transfer("t1", A, BANK, 700, "bet")
    outcomes = await asyncio.gather(*(ledger.apply([op]) for _ in range(20)))
    assert all(o == outcomes[0] for o in outcomes)
    assert (await ledger.balance(A)).posted == 9300
    receipts = await asyncio.gather(*(ledger.deposit("carla", "CHF", 500, "buy-1") for _ in range(10)))
    assert len(set(receipts)) == 1 and (await ledger.balance("wallet:carla:CHF")).posted == 500
    assert await ledger.check() == []


async def test_a_hold_is_settled_once_under_a_race(ledger, table):
    await ledger.apply([Hold(f"h{i}", A, BANK, 100, "bet") for i in range(10)])
    tasks = []
    for i in range(10):
        tasks += [attempt(ledger, [Post(f"p{i}", f"h{i}")]), attempt(ledger, [Void(f"v{i}", f"h{i}", "push")])]
    outcomes = await asyncio.gather(*tasks)
    for i in range(10):
        pair = outcomes[2 * i: 2 * i + 2]
        assert sorted(map(type, pair), key=str) == sorted([list, str], key=str), pair
        assert "hold_not_pending" in pair
    assert (await ledger.balance(A)).pending == 0
    assert await ledger.check() == []


async def test_crossing_batches_do_not_deadlock(ledger, table):
    b = accounts.wallet("bruno", "CHF")
    batches = [[Transfer(f"x{i}", A, b, 10, "transfer"), Transfer(f"y{i}", b, A, 10, "transfer")] if i % 2 else
               [Transfer(f"y{i}", b, A, 10, "transfer"), Transfer(f"x{i}", A, b, 10, "transfer")] for i in range(40)]
    await asyncio.gather(*(ledger.apply(ops) for ops in batches))
    assert (await ledger.balance(A)).posted == 10000 == (await ledger.balance(b)).posted
    assert await ledger.check() == []


async def test_one_id_raced_with_different_content(ledger, pool, table):
    """No account in common, so no lock orders them: the unique index does. The batch that
    loses is rolled back inside the database, asked again and answers id_conflict; inside a
    caller's transaction that transaction lives on."""
    b, bank2 = accounts.wallet("bruno", "CHF"), accounts.bank("r2", "CHF")
    await ledger.open_account(bank2)
    first, other = Transfer("t1", A, BANK, 101, "bet"), Transfer("t1", b, bank2, 100, "bet")
    async with pool.acquire() as c1, pool.acquire() as c2, pool.acquire() as c3:
        tr = c1.transaction()
        await tr.start()
        await ledger.apply([first], conn=c1)  # written, not yet committed
        pids = [c2.get_server_pid(), c3.get_server_pid()]

        async def in_transaction():
            async with c3.transaction():
                outcome = await attempt_on(ledger, c3, [other])
                await c3.execute("SELECT 1")  # still usable
                return outcome

        racers = [asyncio.create_task(attempt_on(ledger, c2, [other])), asyncio.create_task(in_transaction())]
        while await activity(c1, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])"  # noqa: ASYNC110
                             " AND wait_event_type = 'Lock'", pids) < 2:  # type: ignore[operator]
            await asyncio.sleep(0.01)  # until both wait on the uncommitted id
        await tr.commit()
        assert await asyncio.gather(*racers) == ["id_conflict", "id_conflict"]
    assert (await ledger.balance(A)).posted == 10000 - 101
    assert (await ledger.balance(b)).posted == 10000
    assert await ledger.check() == []


async def attempt_on(ledger, conn, ops):
    try:
        return await ledger.apply(ops, conn=conn)
    except GameError as e:
        return e.code


async def test_a_post_whose_hold_commits_while_it_waits(ledger, pool, table):
    """The batch chose its locks before the hold was committed, and finds the hold once it
    has them: it starts again with the hold's accounts locked too, and settles it once."""
    b = accounts.wallet("bruno", "CHF")
    async with pool.acquire() as c1, pool.acquire() as c2:
        tr = c1.transaction()
        await tr.start()
        await ledger.apply([Hold("h1", A, BANK, 300, "bet", "s1")], conn=c1)  # holds anna's lock
        batch = asyncio.create_task(ledger.apply([Transfer("t1", A, b, 100, "gift"), Post("p1", "h1")], conn=c2))
        await until_waiting(c1, c2.get_server_pid())
        await tr.commit()
        assert [(r.op, r.amount) for r in await batch] == [("transfer", 100), ("post", 300)]
    assert [(await ledger.balance(x)).posted for x in (A, b, BANK)] == [9600, 10100, 300]
    assert await ledger.check() == []
