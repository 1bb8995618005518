"""Most batches go to PostgreSQL without the replay check first (issue 14: one round trip a
batch): the batch's statement itself finds a command answered before (a client's retry) or
a player with play limits, writes nothing then, and the table runs the batch again the
checked way. A refusal waits until it is known that it does not answer a retry of an
accepted command. On a real PostgreSQL, the runtime in the test's process (``test_replay``'s
harness)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from games.ledger import accounts
from roulette import commands as RC
from server import store
from server.auth import Principal
from server.metrics import RECHECKED, REFUSALS
from server.protocol import Accepted, Rejected
from server.runtime import outcome_unknown

from .test_replay import Table, _ctx, _table

ANN, BOB = Principal("ann", "player"), Principal("bob", "player")


@pytest.fixture
async def wheel(pool):
    ctx = _ctx(pool, 10_000)
    table = Table(ctx, await _table(ctx, "roulette", "campione", "uc-1"), rng=None)  # type: ignore[arg-type]
    await table.start()
    await table.fire()  # the table's clock opens it: bets are taken
    yield table
    assert table.rt is not None
    await table.rt.stop()
    assert await ctx.ledger.check() == []


@pytest.fixture
def checks(monkeypatch) -> list[int]:
    """How many replay checks (``store.answered``) ran: a spy, the real check still runs."""
    calls: list[int] = []
    real = store.answered

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(len(args[2]))
        return await real(*args, **kwargs)

    monkeypatch.setattr(store, "answered", counted)
    return calls


async def send(table: Table, *commands: tuple[Principal, str, Any]) -> list[Any]:
    """The commands queued together (one batch), their answers."""
    assert table.rt is not None
    futures = [table.rt.submit(who, cid, command) for who, cid, command in commands]
    return list(await asyncio.wait_for(asyncio.gather(*futures), 10))


async def pending(table: Table, player: str) -> int:
    return (await table.ctx.ledger.balance(accounts.wallet(player, "CHF"))).pending


@contextlib.asynccontextmanager
async def a_bet_waiting_in_postgres(table: Table) -> AsyncIterator[tuple[asyncio.Future, Any]]:
    """ann's bet (cid a1), its batch's statement waiting in PostgreSQL for her wallet's lock,
    held here until ``release()`` (or the end): (the bet's answer, release)."""
    rt = table.rt
    assert rt is not None
    async with table.ctx.pool.acquire() as holder:
        tr = holder.transaction()
        await tr.start()
        await holder.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", accounts.wallet("ann", "CHF"))
        bet = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        while not rt._busy:  # noqa: ASYNC110 (the table took the batch)
            await asyncio.sleep(0.01)
        try:
            yield bet, tr.rollback
        finally:
            with contextlib.suppress(asyncpg.InterfaceError):  # (released already)
                await tr.rollback()


def wager_of(table: Table, player: str) -> str:
    assert table.rt is not None
    return next(b.wager for b in reversed(table.rt.engine.state.bets) if b.player == player)


async def test_a_batch_of_bets_costs_no_replay_check(wheel, checks):
    answers = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)),
                         (BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000)))
    assert [type(a) for a in answers] == [Accepted, Accepted], answers
    assert checks == []
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (1_000, 2_000)


def rechecked(why: str) -> float:
    return next(s.value for s in RECHECKED.collect()[0].samples if s.labels == {"why": why})


async def test_a_retry_is_answered_again_and_applied_once(wheel, checks):
    replayed = rechecked("replayed")
    [first] = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)))
    # The same command id again, with a newcomer's bet in the same batch: the statement finds
    # the retry, writes nothing, and the batch runs again with the check.
    again = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)),
                       (BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000)))
    assert again[0] == first and isinstance(again[1], Accepted)
    assert checks == [2]
    assert rechecked("replayed") - replayed == 1
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (1_000, 2_000)


async def test_a_retry_the_table_would_refuse_now_still_gets_its_first_answer(wheel, checks):
    """ann's withdrawal was accepted; her client sends it again (it never saw the answer). The
    wager is gone, so the engine refuses it now: that refusal must not be what she is told."""
    await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)))
    withdraw = RC.WithdrawBet(wager=wager_of(wheel, "ann"))
    [first] = await send(wheel, (ANN, "a2", withdraw))
    assert isinstance(first, Accepted) and checks == []
    # alone in its batch: nothing to commit, the held refusal is checked on its own
    assert await send(wheel, (ANN, "a2", withdraw)) == [first]
    assert checks == [1]
    # beside an accepted bet: the statement finds the retry among the refusals it carries
    again = await send(wheel, (ANN, "a2", withdraw), (BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000)))
    assert again[0] == first and isinstance(again[1], Accepted)
    assert checks == [1, 2]
    assert wheel.rt is not None and not wheel.rt.rejected  # no refusal was ever sent
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (0, 2_000)


async def test_a_refusal_that_is_no_retry_is_sent_once(wheel, checks):
    answers = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)),
                         (BOB, "b1", RC.WithdrawBet(wager="nope")),  # the engine refuses it
                         (BOB, "b2", RC.PlaceBet(spot="noir", amount=2_000)))
    assert [type(a) for a in answers] == [Accepted, Rejected, Accepted]
    assert checks == []  # the statement checked the refusal with the bets
    assert wheel.rt is not None and list(wheel.rt.rejected) == [("bob", "b1")]
    # refused alone: one check, for it
    [alone] = await send(wheel, (BOB, "b3", RC.WithdrawBet(wager="nope")))
    assert isinstance(alone, Rejected) and alone.code == answers[1].code
    assert checks == [1]


async def test_a_player_with_limits_is_checked_and_held_to_them(wheel, checks):
    async with wheel.ctx.pool.acquire() as conn:
        await conn.execute("INSERT INTO users (id, password_hash, role, currency) VALUES ('ann', 'x', 'player', 'CHF')")
        await conn.execute("INSERT INTO play_limits (user_id, currency, kind, period, amount)"
                           " VALUES ('ann', 'CHF', 'stake', 'daily', 1500)")
    answers = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)),
                         (BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000)))
    assert [type(a) for a in answers] == [Accepted, Accepted]
    assert checks == [2]  # the statement found her limits: the batch again, checked
    assert wheel.rt is not None and wheel.rt.known_limited == {"ann"}
    [over] = await send(wheel, (ANN, "a2", RC.PlaceBet(spot="rouge", amount=1_000)))
    assert isinstance(over, Rejected) and over.code == "stake_limit"
    assert checks == [2, 1]  # known now: checked first, no statement wasted
    [bob] = await send(wheel, (BOB, "b2", RC.PlaceBet(spot="noir", amount=1_000)))
    assert isinstance(bob, Accepted) and checks == [2, 1]  # the others are not
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (1_000, 3_000)


async def test_a_refusal_at_the_door_is_sent_at_once_while_a_batch_is_under_way(wheel):
    """A command refused before it is queued (a player may not launch the ball) belongs to
    no batch: it is answered at once, even while an unchecked batch waits in PostgreSQL."""
    assert wheel.rt is not None
    async with a_bet_waiting_in_postgres(wheel) as (bet, release):
        refused = await asyncio.wait_for(wheel.rt.submit(BOB, "b1", RC.LaunchBall()), 5)
        assert isinstance(refused, Rejected) and not bet.done()
        await release()
    assert isinstance(await asyncio.wait_for(bet, 10), Accepted)


async def test_the_servers_own_refusal_in_a_batch_run_again_is_sent_and_counted_once(wheel, checks):
    """The table's clock fires twice in one batch (the second is refused) beside a player's
    retry: the batch runs again, checked, and the refusal is sent once, counted once."""
    assert wheel.rt is not None
    [first] = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)))
    fire, again = wheel._timer(), wheel._timer()
    assert fire is not None and again is not None and fire.future is not None and again.future is not None
    code_before = {s.labels["code"]: s.value for s in REFUSALS.collect()[0].samples if s.name.endswith("_total")}
    wheel.rt.queue.put_nowait(fire)
    wheel.rt.queue.put_nowait(again)
    retry = wheel.rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
    answers = await asyncio.wait_for(asyncio.gather(fire.future, again.future, retry), 10)
    assert isinstance(answers[0], Accepted) and isinstance(answers[1], Rejected) and answers[2] == first
    assert checks == [1]  # the retry made the batch run again, checked
    code_after = {s.labels["code"]: s.value for s in REFUSALS.collect()[0].samples if s.name.endswith("_total")}
    assert code_after.get(answers[1].code, 0) - code_before.get(answers[1].code, 0) == 1


async def test_a_stopping_table_begins_no_new_batch_and_answers_every_command(wheel):
    """stop() while a batch waits in PostgreSQL and more commands are queued: the batch ends
    and is answered, the queued ones are refused (nothing of theirs written), none hangs."""
    rt = wheel.rt
    assert rt is not None
    async with a_bet_waiting_in_postgres(wheel) as (first, release):
        queued = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
        stopping = asyncio.create_task(rt.stop())
        await asyncio.sleep(0.05)
        await release()  # the batch goes on: committed and answered before the table stops
    await asyncio.wait_for(stopping, 10)
    assert isinstance(await asyncio.wait_for(first, 1), Accepted)
    refused = await asyncio.wait_for(queued, 1)
    assert isinstance(refused, Rejected) and refused.code == "table_unavailable"
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (1_000, 0)


async def test_a_connection_lost_under_the_statement_answers_outcome_unknown_and_hands_the_table_back(
        wheel, monkeypatch):
    """The statement committed, then the connection failed before its answer came back: the
    table cannot know. The bet is answered outcome_unknown, the table stops here and hands
    its lease back, and the table read again from the database has the bet, once: the same
    cid sent again gets it accepted, not placed twice."""
    rt = wheel.rt
    assert rt is not None
    real = store.record_batches
    lost: list[str] = []
    wheel.ctx.manager.lost = lost.append

    async def committed_then_cut(*args: Any, **kwargs: Any) -> bool:
        await real(*args, **kwargs)
        raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")

    monkeypatch.setattr(store, "record_batches", committed_then_cut)
    bet = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
    answer = await asyncio.wait_for(bet, 10)
    assert isinstance(answer, Rejected) and answer.code == "outcome_unknown"
    assert rt.task is not None
    await asyncio.wait_for(rt.task, 5)  # (its last step hands the lease back)
    assert rt.stopped and lost == ["uc-1"]
    assert await wheel.ctx.pool.fetchval("SELECT lease_until <= now() FROM table_owners WHERE table_id = 'uc-1'")
    monkeypatch.setattr(store, "record_batches", real)
    assert await store.take_lease(wheel.ctx.pool, "uc-1", wheel.ctx.settings.owner_id, 3600)
    await wheel.start()  # (what the lease loop does): read again from the database
    assert wheel.rt is not rt
    again = await send(wheel, (ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000)))
    assert isinstance(again[0], Accepted)
    # placed once (and given back once: the restart voids the cut-off spin's bets)
    holds = await wheel.ctx.pool.fetchval("SELECT count(*) FROM ledger_transfers WHERE op = 'hold' AND debit = $1",
                                          accounts.wallet("ann", "CHF"))
    assert holds == 1


def _fatal() -> asyncpg.AdminShutdownError:
    exc = asyncpg.AdminShutdownError("terminating connection due to administrator command")
    exc.severity = "FATAL"  # (as the server sends it)
    return exc


@pytest.mark.parametrize(("exc", "unknown"), [
    (asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"), True),
    (ConnectionResetError(), True),
    (TimeoutError(), True),
    (_fatal(), True),  # a terminated backend: it may follow the commit
    (asyncpg.UniqueViolationError("duplicate key"), False),  # the server's own error: rolled back
    (asyncpg.DeadlockDetectedError("deadlock detected"), False),
    (RuntimeError("a bug before the statement"), False),
], ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v))
def test_which_failures_leave_a_commit_unknown(exc, unknown):
    assert outcome_unknown(exc) is unknown
    assert outcome_unknown(exc, closed=True)  # a connection asyncpg closed since: whatever it raised


async def test_a_lost_lease_refuses_the_batch_and_everything_queued_behind_it(wheel):
    rt = wheel.rt
    assert rt is not None
    async with a_bet_waiting_in_postgres(wheel) as (first, release):
        queued = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
        await wheel.ctx.pool.execute("UPDATE table_owners SET owner = 'another-process' WHERE table_id = 'uc-1'")
        await release()
    answers = await asyncio.wait_for(asyncio.gather(first, queued), 5)
    assert [a.code for a in answers] == ["table_unavailable", "table_unavailable"]
    assert rt.stopped
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (0, 0)
    await wheel.ctx.pool.execute("UPDATE table_owners SET owner = $1 WHERE table_id = 'uc-1'",
                                 wheel.ctx.settings.owner_id)  # (the fixture's check at the end)
