"""A table's batches one behind another (issue 14, ``TableRuntime._flow``): the next batch is
applied to the engine while the one before commits, and its statement sent behind it, where it
waits in PostgreSQL for that one (the chain, migration 0121). On a real PostgreSQL, the
runtime in the test's process (``test_replay``'s harness), a player's wallet held locked by
the test to keep a batch's statement waiting there."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest

from games.ledger import accounts
from roulette import commands as RC
from server import store
from server.auth import Principal
from server.metrics import RECHECKED, RESENT
from server.protocol import Accepted, Rejected
from tests.helpers.databases import activity

from .test_replay import DIRECTOR, POOR, Table, _ctx, _table

ANN, BOB, CYD, DAN = (Principal(p, "player") for p in ("ann", "bob", "cyd", POOR))  # dan has 3,000


@pytest.fixture
async def wheel(pool):
    ctx = _ctx(pool, 10_000)
    table = Table(ctx, await _table(ctx, "roulette", "campione", "pl-1"), rng=None)  # type: ignore[arg-type]
    await table.start()
    await table.fire()  # the table's clock opens it: bets are taken
    yield table
    assert table.rt is not None
    await table.rt.stop()
    assert await ctx.ledger.check() == []


async def until(check: Callable[[], bool]) -> None:
    for _ in range(1_000):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never")


@contextlib.asynccontextmanager
async def wallet_locked(table: Table, player: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """``player``'s wallet locked (a batch moving his money waits in PostgreSQL) until the
    release this yields is awaited (or the block ends)."""
    async with table.ctx.pool.acquire() as holder:
        tr = holder.transaction()
        await tr.start()
        await holder.execute("SELECT 1 FROM ledger_accounts WHERE id = $1 FOR UPDATE", accounts.wallet(player, "CHF"))
        try:
            yield tr.rollback
        finally:
            with contextlib.suppress(asyncpg.InterfaceError):  # (released already)
                await tr.rollback()


def sent(table: Table) -> int:
    """How many of the table's commands are in statements sent to PostgreSQL, not answered yet."""
    assert table.rt is not None
    return len(table.rt._batch) if table.rt._busy else 0


async def waiting_behind(table: Table) -> int:
    """The table's batch statements waiting in PostgreSQL for another batch statement (the one
    before them, which holds the table's row)."""
    async with table.ctx.pool.acquire() as conn:
        return await activity(  # type: ignore[return-value]
            conn, """WITH batch AS (SELECT pid FROM pg_stat_activity WHERE datname = current_database()
                                    AND state = 'active' AND query LIKE '%table_batch_chained%')
                     SELECT count(*) FROM batch b WHERE pg_blocking_pids(b.pid) && ARRAY(SELECT pid FROM batch)""")


async def pending(table: Table, player: str) -> int:
    return (await table.ctx.ledger.balance(accounts.wallet(player, "CHF"))).pending


async def stored_seqs(table: Table) -> list[int]:
    rows = await table.ctx.pool.fetch("SELECT seq FROM table_events WHERE table_id = $1 ORDER BY seq", table.info.id)
    return [r["seq"] for r in rows]


def counted(metric: Any, **labels: str) -> float:
    return next(s.value for s in metric.collect()[0].samples if s.name.endswith("_total") and s.labels == labels)


async def test_a_batch_staged_while_another_commits_waits_behind_it_and_both_are_written_in_order(wheel):
    rt = wheel.rt
    async with wallet_locked(wheel, "ann") as release:
        first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 1)
        second = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
        await until(lambda: sent(wheel) == 2)  # bob's batch went to PostgreSQL behind ann's
        assert not first.done() and not second.done()
        # Applied already, on top of ann's: the working engine holds both, the committed neither.
        assert [b.amount for b in rt.engine.state.bets] == [1_000, 2_000]
        assert rt.committed_engine.state.bets == []
        for _ in range(100):
            if await waiting_behind(wheel) == 1:  # bob's statement, for the table's row
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("bob's statement is not waiting behind ann's")
        await release()
    a, b = await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert isinstance(a, Accepted) and isinstance(b, Accepted) and a.seq + 1 == b.seq == rt.seq
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (1_000, 2_000)
    assert await stored_seqs(wheel) == list(range(1, rt.seq + 1))
    assert await wheel.ctx.pool.fetchval("SELECT batches FROM table_state WHERE table_id = 'pl-1'") == rt.batches
    await wheel.check_restore()


async def test_a_batch_behind_one_the_ledger_refuses_writes_nothing_and_is_sent_again(wheel):
    """dan's 5,000 cannot be covered (he has 3,000); ann's bet was sent behind it. dan's
    statement raises, so ann's finds the table not at the batch it named and writes nothing.
    dan's batch runs again the checked way, alone, and is refused; ann's is applied again on
    the committed state and written."""
    rt = wheel.rt
    failed = counted(RECHECKED, why="failed")
    async with wallet_locked(wheel, POOR) as release:
        poor = rt.submit(DAN, "d1", RC.PlaceBet(spot="noir", amount=5_000))
        await until(lambda: sent(wheel) == 1)
        behind = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 2)
        await release()
    d, a = await asyncio.wait_for(asyncio.gather(poor, behind), 10)
    assert isinstance(d, Rejected) and d.code == "insufficient_funds", d
    assert isinstance(a, Accepted) and a.seq == rt.seq
    assert counted(RECHECKED, why="failed") - failed == 1
    assert (await pending(wheel, POOR), await pending(wheel, "ann")) == (0, 1_000)
    assert [(b.player, b.amount) for b in rt.engine.state.bets] == [("ann", 1_000)]
    assert await stored_seqs(wheel) == list(range(1, rt.seq + 1))  # no hole where dan's would have been
    await wheel.check_restore()


async def test_what_was_staged_behind_a_failed_batch_is_staged_again_in_order(wheel):
    """Three batches: dan's, refused by the ledger, in PostgreSQL; ann's behind it; bob's and
    cyd's staged, waiting for a turn. All of ann's, bob's and cyd's are applied again, in the
    order they came, on the committed state."""
    rt = wheel.rt
    async with wallet_locked(wheel, POOR) as release:
        poor = rt.submit(DAN, "d1", RC.PlaceBet(spot="noir", amount=5_000))
        await until(lambda: sent(wheel) == 1)
        ann = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 2)
        later = [rt.submit(p, f"{p.id}1", RC.PlaceBet(spot="pair", amount=500)) for p in (BOB, CYD)]
        await until(lambda: rt._open is not None and len(rt._open.staged) == 2)
        await release()
    answers = await asyncio.wait_for(asyncio.gather(poor, ann, *later), 10)
    assert [type(x) for x in answers] == [Rejected, Accepted, Accepted, Accepted]
    assert [(b.player, b.amount) for b in rt.engine.state.bets] == [("ann", 1_000), ("bob", 500), ("cyd", 500)]
    assert answers[1].seq < answers[2].seq < answers[3].seq == rt.seq
    await wheel.check_restore()


async def test_a_console_action_is_not_sent_behind_another_batch(wheel):
    """A director's action is audited in its batch's transaction (more than one statement):
    it goes to PostgreSQL only when nothing is there."""
    rt = wheel.rt
    async with wallet_locked(wheel, "ann") as release:
        first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 1)
        limits = wheel.kind.limits_command(rt.engine, DIRECTOR, 100, None, {"plein": 5_000}, "test")
        action = rt.submit(DIRECTOR, "l1", limits)
        await until(lambda: rt._open is not None and len(rt._open.staged) == 1)  # staged ...
        assert sent(wheel) == 1  # ... and not sent
        await release()
    a, l1 = await asyncio.wait_for(asyncio.gather(first, action), 10)
    assert isinstance(a, Accepted) and isinstance(l1, Accepted) and l1.seq > a.seq
    audited = await wheel.ctx.pool.fetchval("SELECT count(*) FROM audit_log WHERE actor = 'dora'")
    assert audited == 1
    await wheel.check_restore()


async def test_a_batch_that_reached_postgres_before_the_one_ahead_is_sent_again(wheel, monkeypatch):
    """Two connections, two backends: the statement sent second may start before the first
    has locked the table's row. It then finds the count of batches not moved on and writes
    nothing; once the first has committed, it is sent again and written."""
    rt = wheel.rt
    real = store.record_batch
    gate = asyncio.Event()
    calls: list[int] = []

    async def first_late(*args: Any, **kwargs: Any) -> bool:
        calls.append(kwargs["batches"])
        if len(calls) == 1:
            await gate.wait()  # the first statement reaches PostgreSQL only after the second
        return await real(*args, **kwargs)

    monkeypatch.setattr(store, "record_batch", first_late)
    resent = counted(RESENT)
    first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
    await until(lambda: sent(wheel) == 1)
    second = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
    await until(lambda: len(calls) == 2)
    await asyncio.sleep(0.1)  # (the second statement has run, and found the table not at its count)
    gate.set()
    a, b = await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert isinstance(a, Accepted) and isinstance(b, Accepted) and a.seq < b.seq
    assert counted(RESENT) - resent == 1
    base = calls[0]
    assert calls == [base, base + 1, base + 1]  # the second, sent again with the same count
    assert (await pending(wheel, "ann"), await pending(wheel, "bob")) == (1_000, 2_000)
    await wheel.check_restore()


async def test_an_outcome_unknown_ahead_answers_what_is_behind_it_unknown_too(wheel, monkeypatch):
    """The first batch committed, then its connection failed: unknown. The one behind it may
    have been written on top (it was: the chain waited for the first's commit). Both are
    answered outcome_unknown, the table stops and hands its lease back; read again from the
    database it has both bets, once each, and the same cids sent again are answered."""
    rt = wheel.rt
    real = store.record_batch
    lost: list[str] = []
    wheel.ctx.manager.lost = lost.append
    calls: list[int] = []

    async def first_cut(*args: Any, **kwargs: Any) -> bool:
        calls.append(1)
        owned = await real(*args, **kwargs)
        if len(calls) == 1:
            await asyncio.sleep(0.2)  # (the second is sent behind it meanwhile)
            raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")
        return owned

    monkeypatch.setattr(store, "record_batch", first_cut)
    first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
    await until(lambda: sent(wheel) == 1)
    second = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
    answers = await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert [getattr(x, "code", None) for x in answers] == ["outcome_unknown", "outcome_unknown"]
    assert rt.task is not None
    await asyncio.wait_for(rt.task, 5)
    assert rt.stopped and lost == ["pl-1"]
    monkeypatch.setattr(store, "record_batch", real)
    assert await store.take_lease(wheel.ctx.pool, "pl-1", wheel.ctx.settings.owner_id, 3600)
    await wheel.start()
    again = [await wheel.rt.submit(p, cid, RC.PlaceBet(spot=spot, amount=n))
             for p, cid, spot, n in ((ANN, "a1", "rouge", 1_000), (BOB, "b1", "noir", 2_000))]
    assert [type(x) for x in again] == [Accepted, Accepted]
    holds = await wheel.ctx.pool.fetchval("SELECT count(*) FROM ledger_transfers WHERE op = 'hold'")
    assert holds == 2  # each placed once (the restart voids the cut-off spin's bets: given back once)


async def test_a_divergence_found_with_batches_ahead_rebuilds_the_committed_engine_once_they_are_in(
        wheel, monkeypatch, caplog):
    """The committed engine, applied each committed batch again, gives other events (a bug:
    engines are pure) while a later batch is staged on the working engine: the committed one
    cannot be taken from the working one then. It stands still until that batch is committed
    too, and is then rebuilt from the working one, which is exactly what was committed."""
    rt = wheel.rt
    real = wheel.kind.engine_events

    def forgetful(engine: Any, command: Any, actor: Any) -> list[Any]:
        events = real(engine, command, actor)
        return [] if engine is rt.committed_engine else events  # the second application "loses" them

    async with wallet_locked(wheel, "ann") as release:
        first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 1)
        second = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
        await until(lambda: sent(wheel) == 2)
        monkeypatch.setattr(wheel.kind, "engine_events", forgetful)
        await release()
    answers = await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert [type(x) for x in answers] == [Accepted, Accepted]
    assert "diverged" in caplog.text and not rt._diverged
    assert wheel.kind.dump(rt.committed_engine) == wheel.kind.dump(rt.engine)
    assert [b.amount for b in rt.committed_engine.state.bets] == [1_000, 2_000]
    assert rt.snapshot_due  # the log since the last snapshot may not replay: the next batch takes one
    monkeypatch.setattr(wheel.kind, "engine_events", real)
    await wheel.check_restore()


async def test_an_engine_fault_while_staging_behind_a_batch_refuses_that_command_alone(wheel, monkeypatch, caplog):
    """The engine fails (not a refusal: a bug) on bob's command, staged on top of ann's batch
    in PostgreSQL: bob's is refused, the working engine is built again from the committed one
    with ann's applied again, and cyd's, staged after, is written on top of it."""
    rt = wheel.rt
    real = wheel.kind.engine_events

    def broken_for_bob(engine: Any, command: Any, actor: Any) -> list[Any]:
        if getattr(actor, "id", actor) == "bob":
            engine.state.bets.append(None)  # (a half-applied change: the rebuild must drop it)
            raise RuntimeError("engine bug")
        return real(engine, command, actor)

    monkeypatch.setattr(wheel.kind, "engine_events", broken_for_bob)
    async with wallet_locked(wheel, "ann") as release:
        first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 1)
        bad = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
        after = rt.submit(CYD, "c1", RC.PlaceBet(spot="pair", amount=500))
        await until(lambda: sent(wheel) == 3)  # bob's (refused, held) and cyd's, sent behind ann's
        await release()
    a, b, c = await asyncio.wait_for(asyncio.gather(first, bad, after), 10)
    assert isinstance(a, Accepted) and isinstance(c, Accepted), (a, c)
    assert isinstance(b, Rejected) and b.code == "internal_error"
    assert "engine failed" in caplog.text
    assert [(x.player, x.amount) for x in rt.engine.state.bets] == [("ann", 1_000), ("cyd", 500)]
    monkeypatch.setattr(wheel.kind, "engine_events", real)
    await wheel.check_restore()


async def test_a_lost_lease_answers_every_command_in_flight_staged_or_taken(wheel):
    """Another process took the table while ann's batch waited in PostgreSQL: its fence
    raises, bob's behind it finds the chain broken, cyd's (a player with play limits, for the
    checked way after the pipeline) was taken and not staged. None of them was written and
    every one is answered: the table moved."""
    rt = wheel.rt
    lost: list[str] = []
    wheel.ctx.manager.lost = lost.append
    rt.known_limited.add("cyd")
    async with wallet_locked(wheel, "ann") as release:
        first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 1)
        behind = rt.submit(BOB, "b1", RC.PlaceBet(spot="noir", amount=2_000))
        await until(lambda: sent(wheel) == 2)
        taken = rt.submit(CYD, "c1", RC.PlaceBet(spot="pair", amount=500))
        await wheel.ctx.pool.execute("UPDATE table_owners SET owner = 'another' WHERE table_id = 'pl-1'")
        await release()
    answers = await asyncio.wait_for(asyncio.gather(first, behind, taken), 10)
    assert [getattr(x, "code", None) for x in answers] == ["table_unavailable"] * 3
    assert rt.stopped and lost == ["pl-1"]
    assert [await pending(wheel, p) for p in ("ann", "bob", "cyd")] == [0, 0, 0]


async def test_a_failure_behind_that_returns_before_the_batch_ahead_is_still_recovered(wheel, monkeypatch):
    """Two results in any order: dan's batch, behind ann's, fails (the ledger) and its
    statement returns while ann's answer has not been read yet; once ann's is answered, dan's
    failure is found at the head and handled (it was not lost with its wake-up)."""
    rt = wheel.rt
    real = store.record_batch
    ann_read = asyncio.Event()
    dan_failed = asyncio.Event()

    async def ann_read_late(*args: Any, **kwargs: Any) -> bool:
        try:
            owned = await real(*args, **kwargs)
        except Exception:
            dan_failed.set()
            raise
        if not dan_failed.is_set():
            await ann_read.wait()  # ann's committed; her answer is read only after dan's failure
        return owned

    monkeypatch.setattr(store, "record_batch", ann_read_late)
    async with wallet_locked(wheel, "ann") as release:
        first = rt.submit(ANN, "a1", RC.PlaceBet(spot="rouge", amount=1_000))
        await until(lambda: sent(wheel) == 1)
        poor = rt.submit(DAN, "d1", RC.PlaceBet(spot="noir", amount=5_000))
        await until(lambda: sent(wheel) == 2)
        await release()
    await asyncio.wait_for(dan_failed.wait(), 10)
    await asyncio.sleep(0.05)  # (the flow has seen dan's wake-up: ann's batch is still ahead)
    ann_read.set()
    a, d = await asyncio.wait_for(asyncio.gather(first, poor), 10)
    assert isinstance(a, Accepted) and isinstance(d, Rejected) and d.code == "insufficient_funds"
    assert (await pending(wheel, "ann"), await pending(wheel, POOR)) == (1_000, 0)
    await wheel.check_restore()
