"""Several tables' batches in one statement (``store.record_batches``, ``server.commit_group``),
on a real PostgreSQL: each table's rows written as its own statement would write them; one
table's ledger refusal, lost lease or retried command costs the others nothing (they are
committed alone after the group's statement wrote nothing); a failed connection under the
statement tells every table of the group that its outcome is unknown; a table that stops
waiting hands its turn on; and the tables' lease rows are locked in order."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NamedTuple

import asyncpg
import pytest
from prometheus_client import REGISTRY

from games.errors import GameError
from games.ledger import Hold, Ledger, accounts
from server import store
from server.commit_group import CommitGroup, OutcomeUnknown
from server.config import Settings
from tests.helpers.databases import until_waiting

from .test_replay import GAMES, Table, _ctx, _table

ME = "server-1"
TABLES = ("r1", "r2", "r3")
PLAYERS = {"r1": "anna", "r2": "bob", "r3": "cyd"}


def wallet(table: str) -> str:
    return accounts.wallet(PLAYERS[table], "CHF")


@pytest.fixture
async def floor(pool):
    """Tables r1, r2, r3, owned by ME at epoch 0, each at seq 0; anna (at r1), bob (r2) and
    cyd (r3) have CHF 100.00 each."""
    ledger = Ledger(pool)
    async with pool.acquire() as conn:
        for t in TABLES:
            await ledger.open_account(accounts.bank(t, "CHF"))
            await ledger.deposit(PLAYERS[t], "CHF", 10000, f"dep-{t}")
            await conn.execute("INSERT INTO casino_tables (id, game, profile, mode, currency, name, created_by)"
                               " VALUES ($1, 'roulette', 'campione', 'rng', 'CHF', $1, 'test')", t)
            await conn.execute("INSERT INTO table_owners VALUES ($1, $2, now() + interval '10 seconds')", t, ME)
            await store.create_state(conn, t, f"{t}-1", b"state-0")
    return ledger


def bet(table: str, amount: int = 2500, *, cid: str = "c1", snapshot: bytes | None = None, keep: bool = False,
        refs: list[str] | None = None, unchecked: bool = False, epoch: int = 0) -> store.Batch:
    """The table's player's bet of ``amount``: its hold, event, answer and logged command."""
    player = PLAYERS[table]
    return store.Batch(
        table, epoch, 1, f"{table}-1",
        events=[(table, 1, f"{table}-1", "wager_placed", player, '{"wager": "w1"}')],
        players=[(player, f"{table}-1")],
        results=[(player, cid, table, f'{{"cid": "{cid}", "seq": 1}}')],
        open_refs=refs, commands=[(1, 1, 1, player, "player", '{"type": "bet"}')], last_command=1,
        snapshot=snapshot, keep=keep,
        ops=[Hold(f"{table}/w1/hold", wallet(table), accounts.bank(table, "CHF"), amount, "bet", f"{table}/w1")],
        unchecked=store.Unanswered("CHF", [(player, cid)]) if unchecked else None,
    )


async def table_rows(conn, table: str) -> tuple:
    """What a batch writes at ``table``, outside the ledger."""
    return (
        await conn.fetchval("SELECT count(*) FROM table_events WHERE table_id = $1", table),
        await conn.fetchval("SELECT count(*) FROM command_results WHERE table_id = $1", table),
        await conn.fetchval("SELECT count(*) FROM table_commands WHERE table_id = $1", table),
        await conn.fetchval("SELECT count(*) FROM round_players WHERE table_id = $1", table),
        await conn.fetchval("SELECT count(*) FROM table_snapshots WHERE table_id = $1", table),
        tuple(await conn.fetchrow("SELECT seq, state, state_seq, state_command, open_refs FROM table_state"
                                  " WHERE table_id = $1", table)),
    )


UNWRITTEN = (0, 0, 0, 0, 1, (0, b"state-0", 0, 0, []))


def group(at_once: int = 1) -> CommitGroup:
    return CommitGroup(Settings(jwt_secret="x" * 40, owner_id=ME, lease_seconds=10), at_once)


def statements() -> tuple[float, float]:
    """Batch statements sent through a group so far, and the batches they carried."""
    return (REGISTRY.get_sample_value("casino_batch_statement_tables_count") or 0.0,
            REGISTRY.get_sample_value("casino_batch_statement_tables_sum") or 0.0)


async def until_queued(commits: CommitGroup, n: int) -> None:
    """Until ``n`` batches wait for the flight (the tasks run up to their wait)."""
    for _ in range(1000):
        if commits.waiting >= n:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{commits.waiting} batches waiting, not {n}")


def split() -> float:
    return REGISTRY.get_sample_value("casino_batch_statements_split_total") or 0.0


class InFlight(NamedTuple):
    first: asyncio.Task  # r1's record, its statement waiting for anna's wallet
    queued: list[asyncio.Task]  # the others' records, waiting for the flight
    release: Callable[[], Awaitable[None]]  # anna's wallet unlocked: r1's statement goes on


@contextlib.asynccontextmanager
async def r1_in_flight(pool: Any, commits: CommitGroup, behind: tuple[str, ...] = ("r2", "r3")
                       ) -> AsyncIterator[InFlight]:
    """r1's batch in flight, its statement waiting for anna's wallet (locked here until
    ``release``), and the batches of ``behind`` queued after it, each on its own connection."""
    async with contextlib.AsyncExitStack() as stack:
        holder = await stack.enter_async_context(pool.acquire())
        conns = [await stack.enter_async_context(pool.acquire()) for _ in range(1 + len(behind))]
        tr = holder.transaction()
        await tr.start()
        await holder.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", wallet("r1"))
        first = asyncio.create_task(commits.record(conns[0], bet("r1")))
        await until_waiting(holder, conns[0].get_server_pid())
        queued = [asyncio.create_task(commits.record(c, bet(t))) for c, t in zip(conns[1:], behind, strict=True)]
        await until_queued(commits, len(behind))
        try:
            yield InFlight(first, queued, tr.rollback)
        finally:
            if holder.is_in_transaction():
                await tr.rollback()


async def test_one_statement_writes_each_tables_rows_as_its_own_would(pool, floor):
    """r1 gives its open refs and a kept snapshot; r2 leaves its refs and takes a snapshot not
    kept; r3 neither: each table's row gets its own values, none another's."""
    async with pool.acquire() as conn:
        assert await store.record_batches(conn, ME, 10, [
            bet("r1", snapshot=b"state-r1", keep=True, refs=["r1/w1"]),
            bet("r2", 1000, snapshot=b"state-r2"),
            bet("r3", 500),
        ])
        assert await table_rows(conn, "r1") == (1, 1, 1, 1, 2, (1, b"state-r1", 1, 1, ["r1/w1"]))
        assert await table_rows(conn, "r2") == (1, 1, 1, 1, 1, (1, b"state-r2", 1, 1, []))
        assert await table_rows(conn, "r3") == (1, 1, 1, 1, 1, (1, b"state-0", 0, 0, []))
        # every lease renewed: ten seconds from the statement's start
        assert await conn.fetchval("SELECT count(*) FROM table_owners WHERE lease_until > now() + interval '9 s'") == 3
        # r1's refs are marked after the statement's holds (all three numbered before it)
        assert await conn.fetchval("SELECT refs_after FROM table_state WHERE table_id = 'r1'") == \
            await conn.fetchval("SELECT max(seq) FROM ledger_transfers")
    assert [(await floor.balance(wallet(t))).pending for t in TABLES] == [2500, 1000, 500]
    assert await floor.check() == []


async def test_two_batches_of_one_table_are_never_one_statement(pool, floor):
    async with pool.acquire() as conn:
        with pytest.raises(ValueError):
            await store.record_batches(conn, ME, 10, [bet("r1"), bet("r1", cid="c2")])
        assert await table_rows(conn, "r1") == UNWRITTEN


async def spoiled_r2(conn: Any, what: str) -> store.Batch:
    """r2's batch (unchecked), made to fail its statement: ``refused`` by the ledger (more than
    bob has), its lease ``lost`` to another process, or its command ``replayed`` (answered
    before)."""
    if what == "lost":
        await conn.execute("UPDATE table_owners SET owner = 'server-2' WHERE table_id = 'r2'")
    if what == "replayed":
        await conn.execute("INSERT INTO command_results (user_id, cid, table_id, result)"
                           " VALUES ('bob', 'c1', 'r2', '{}')")
    return bet("r2", 10001 if what == "refused" else 1000, unchecked=True)


@pytest.mark.parametrize("what", ["refused", "lost", "replayed"])
async def test_one_tables_failure_writes_nothing_of_the_statement(pool, floor, what):
    """The statement is all or nothing for every table in it: the ledger refuses r2's bet (it
    raises the refusal), r2's lease is another process's (False), or r2's unchecked command
    was answered before (Unchecked)."""
    async with pool.acquire() as conn:
        batches = [bet("r1"), await spoiled_r2(conn, what), bet("r3")]
        if what == "refused":
            with pytest.raises(GameError) as refused:
                await store.record_batches(conn, ME, 10, batches)
            assert refused.value.code == "insufficient_funds"
            assert refused.value.details["op"] == "r2/w1/hold"
        elif what == "lost":
            assert await store.record_batches(conn, ME, 10, batches) is False
        else:
            with pytest.raises(store.Unchecked):
                await store.record_batches(conn, ME, 10, batches)
        for t in ("r1", "r3"):
            assert await table_rows(conn, t) == UNWRITTEN
        assert await conn.fetchval("SELECT count(*) FROM ledger_transfers WHERE op = 'hold'") == 0


@pytest.mark.parametrize(("at_once", "grouped"), [(1, [1, 2]), (0, [])])
async def test_batches_ready_together_go_as_the_flights_allow(pool, floor, at_once, grouped):
    """Three tables' batches ready at once. One flight: the first goes alone and at once, the
    two others wait for it and go together. No limit (0, the default): each its own
    statement at once, none waits."""
    commits = group(at_once)
    before, carried = statements()
    async with pool.acquire() as c1, pool.acquire() as c2, pool.acquire() as c3:
        owned = await asyncio.gather(*(commits.record(c, bet(t)) for c, t in zip((c1, c2, c3), TABLES, strict=True)))
    assert owned == [True, True, True]
    assert statements() == (before + len(grouped), carried + sum(grouped))
    assert [(await floor.balance(wallet(t))).pending for t in TABLES] == [2500, 2500, 2500]


async def test_batches_that_wait_for_the_flight_go_together_after_it(pool, floor):
    """One statement in flight (r1's, waiting for anna's wallet, locked elsewhere): r2's and
    r3's batches wait, then go together in the next statement."""
    commits = group(at_once=1)
    before, carried = statements()
    async with r1_in_flight(pool, commits) as flight:
        assert not any(t.done() for t in flight.queued)
        await flight.release()
        assert await asyncio.gather(flight.first, *flight.queued) == [True, True, True]
    assert statements() == (before + 2, carried + 3)


@pytest.mark.parametrize("what", ["refused", "lost", "replayed"])
async def test_one_tables_failure_in_a_group_costs_the_others_nothing(pool, floor, what):
    """r1's batch in flight; r2's and r3's wait and go together. Their statement writes
    nothing; each then commits alone and gets its own answer: r3 committed, r2 its refusal,
    its lost lease or its Unchecked."""
    commits = group()
    splits = split()
    async with pool.acquire() as conn:
        r2 = await spoiled_r2(conn, what)
    async with pool.acquire() as c1, pool.acquire() as c2, pool.acquire() as c3:
        answers = await asyncio.gather(commits.record(c1, bet("r1")), commits.record(c2, r2),
                                       commits.record(c3, bet("r3")), return_exceptions=True)
    assert answers[0] is True and answers[2] is True
    if what == "refused":
        assert isinstance(answers[1], GameError) and answers[1].code == "insufficient_funds"
    elif what == "lost":
        assert answers[1] is False
    else:
        assert isinstance(answers[1], store.Unchecked)
    assert split() == splits + 1
    async with pool.acquire() as conn:
        # (the answer given before, of the replayed case, is the test's own row)
        assert await table_rows(conn, "r2") == (0, int(what == "replayed"), *UNWRITTEN[2:])
    assert [(await floor.balance(wallet(t))).pending for t in TABLES] == [2500, 0, 2500]
    assert await floor.check() == []


async def test_a_connection_lost_under_the_statement_tells_every_table_its_outcome_is_unknown(
        pool, floor, monkeypatch):
    """Each statement committed, then its connection failed before its answer: each table of
    it, r1's alone and r2's and r3's together, gets OutcomeUnknown (any of them may have
    been written); none is committed again alone."""
    commits = group()
    real = store.record_batches
    calls: list[int] = []

    async def committed_then_cut(conn: Any, owner: str, lease: float, batches: Any) -> bool:
        calls.append(len(batches))
        await real(conn, owner, lease, batches)
        raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")

    monkeypatch.setattr(store, "record_batches", committed_then_cut)
    async with pool.acquire() as c1, pool.acquire() as c2, pool.acquire() as c3:
        answers = await asyncio.gather(*(commits.record(c, bet(t)) for c, t in zip((c1, c2, c3), TABLES, strict=True)),
                                       return_exceptions=True)
    assert calls == [1, 2]
    assert [type(a) for a in answers] == [OutcomeUnknown] * 3
    assert [(await floor.balance(wallet(t))).pending for t in TABLES] == [2500, 2500, 2500]  # (written)


async def test_a_table_that_stops_waiting_hands_its_turn_on(pool, floor):
    """r2 waits for the flight and is cancelled (its table stopping): r3, behind it, still
    goes when the flight lands; r2's batch is not written."""
    commits = group(at_once=1)
    async with r1_in_flight(pool, commits) as flight:
        second, third = flight.queued
        second.cancel()
        await flight.release()
        assert await asyncio.gather(flight.first, third) == [True, True]
        with pytest.raises(asyncio.CancelledError):
            await second
    async with pool.acquire() as conn:
        assert await table_rows(conn, "r2") == UNWRITTEN
    assert commits.waiting == 0


@pytest.mark.parametrize("cancelled", ["given the turn", "behind it"])
async def test_a_table_cancelled_as_the_flight_lands_is_not_sent_and_blocks_nothing(pool, floor, cancelled):
    """r1's statement in flight; r2 and r3 wait. As it lands and hands the turn to r2, one of
    them is cancelled (its table stopping): r2, given the turn, gives it on to r3; or r3,
    still in the queue, is left out of r2's statement. The other commits, the cancelled one's
    batch is not written, and no flight is lost."""
    commits = group(at_once=1)
    async with r1_in_flight(pool, commits) as flight:
        second, third = flight.queued
        victim, survivor, lost = (second, third, "r2") if cancelled == "given the turn" else (third, second, "r3")
        real = commits._hand_on

        def hand_on_then_cancel() -> None:
            real()  # (the turn is r2's now: its task runs before the victim's cancel does)
            if not victim.cancelled():
                victim.cancel()

        commits._hand_on = hand_on_then_cancel  # type: ignore[method-assign]
        await flight.release()
        assert await flight.first
        assert await survivor
        with pytest.raises(asyncio.CancelledError):
            await victim
    async with pool.acquire() as conn:
        assert await table_rows(conn, lost) == UNWRITTEN
        assert (await table_rows(conn, "r3" if lost == "r2" else "r2"))[0] == 1
    assert (commits.waiting, commits._flights) == (0, 0)


async def test_a_leading_table_cancelled_lets_its_statement_finish_for_the_others(pool, floor):
    """r2 leads the statement of r2's and r3's batches, which waits for bob's wallet (locked
    elsewhere), and is cancelled (its table stopping): the statement goes on; r3 gets its
    own answer (committed), not an unknown outcome, and so is r2's batch written."""
    commits = group(at_once=1)
    async with pool.acquire() as anna_lock, pool.acquire() as bob_lock, pool.acquire() as c1, \
            pool.acquire() as c2, pool.acquire() as c3:
        holds = []
        for conn, account in ((anna_lock, wallet("r1")), (bob_lock, wallet("r2"))):
            tr = conn.transaction()
            await tr.start()
            await conn.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", account)
            holds.append(tr)
        first = asyncio.create_task(commits.record(c1, bet("r1")))
        await until_waiting(anna_lock, c1.get_server_pid())
        second = asyncio.create_task(commits.record(c2, bet("r2")))
        third = asyncio.create_task(commits.record(c3, bet("r3")))
        await until_queued(commits, 2)
        await holds[0].rollback()
        assert await first
        await until_waiting(bob_lock, c2.get_server_pid())  # r2 leads r2's and r3's statement
        second.cancel()
        await holds[1].rollback()
        assert await third is True
        with pytest.raises(asyncio.CancelledError):
            await second
        assert (await table_rows(c3, "r2"))[0] == 1  # (the statement stood, r2's part too)
    assert [(await floor.balance(wallet(t))).pending for t in TABLES] == [2500, 2500, 2500]
    assert (commits.waiting, commits._flights) == (0, 0)


async def test_a_statement_waiting_for_a_lock_stops_holding_the_flight(pool, floor):
    """r1's statement waits for anna's wallet, locked elsewhere for longer than the group's
    patience (half a second here): r2's batch, queued behind it, goes in a statement of its
    own meanwhile."""
    commits = CommitGroup(Settings(jwt_secret="x" * 40, owner_id=ME, lease_seconds=10), 1, patience=0.5)
    async with r1_in_flight(pool, commits, behind=("r2",)) as flight:
        assert await asyncio.wait_for(flight.queued[0], 10)  # while r1's still waits
        assert not flight.first.done()
        await flight.release()
        assert await flight.first
    assert (commits.waiting, commits._flights) == (0, 0)


@pytest.mark.parametrize("writer", ["batches", "renew"])
async def test_the_lease_rows_are_locked_in_the_tables_order(pool, floor, writer):
    """r1's lease row locked elsewhere: a statement for r1 and r2 (the tables' batches, or the
    lease loop's renewal) waits for r1 holding nothing, not r2 (so the two never wait for
    each other both ways)."""
    async with pool.acquire() as holder, pool.acquire() as conn, pool.acquire() as other:
        # r1's row version after r2's and r3's: a scan in the table's own order meets r2 first
        await holder.execute("UPDATE table_owners SET lease_until = lease_until WHERE table_id = 'r1'")
        assert [r["table_id"] for r in await holder.fetch("SELECT table_id FROM table_owners")] == ["r2", "r3", "r1"]
        # and a plan that reads the rows so, not in the primary key's order (a table's statistics decide)
        await conn.execute("SET enable_indexscan = off; SET enable_bitmapscan = off")
        tr = holder.transaction()
        await tr.start()
        await holder.execute("SELECT 1 FROM table_owners WHERE table_id = 'r1' FOR UPDATE")
        if writer == "batches":
            waiting = asyncio.create_task(store.record_batches(conn, ME, 10, [bet("r2"), bet("r1")]))
        else:
            waiting = asyncio.create_task(store.renew_leases(conn, ME, 10, ["r2", "r1"]))
        await until_waiting(holder, conn.get_server_pid())
        try:
            await other.execute("SELECT 1 FROM table_owners WHERE table_id = 'r2' FOR UPDATE NOWAIT")
        except asyncpg.LockNotAvailableError:
            raise AssertionError("r2's lease row is locked while r1's is waited for") from None
        finally:
            await tr.rollback()
        await waiting


async def test_tables_played_together_commit_together_and_restore_byte_for_byte(pool):
    """Three roulette wheels and two blackjack tables (one with side bets and a jackpot pool,
    whose batches commit in the pool's transaction, alone) played at once, in random bursts,
    one statement in flight: their batches go together (fewer statements than batches), and
    a poor player's refusals may fall in a group (its statement then fails, and its tables
    commit alone); each table restored from its snapshot and log equals the live one, and
    the ledger checks clean."""
    ctx = _ctx(pool, 5, commit_flights=1)
    games = [GAMES[0]] * 2 + GAMES
    tables = [Table(ctx, await _table(ctx, game, profile, f"cg{i}-{game}-{profile}", **settings),
                    random.Random(f"cg{i}-{game}-{profile}")) for i, (game, profile, settings) in enumerate(games)]
    for t in tables:
        await t.start()
    before, carried = statements()
    for i in range(120):
        await asyncio.gather(*(t.step() for t in tables))
        if i % 20 == 19:
            for t in tables:
                await t.check_restore()
    sent, batches = statements()[0] - before, statements()[1] - carried
    assert batches > sent > 0, (batches, sent)  # (some statements carried several tables' batches)
    for t in tables:
        await t.check_restore()
        assert t.rt is not None
        await t.rt.stop()
    assert await ctx.ledger.check() == []
