"""A reviewer's attack on the dispute replay (``server.recall.replay`` / ``rerun_stretch``), in
the test's process on a real PostgreSQL with the test as the table's clock (the harness of
``test_replay``): nothing secret in a report before its reveal (a fair spin's seed, an RNG
shoe's salt and order), a round still in progress, a command the log could not hold, and
what a long round costs.

Two findings, fixed since, are regression tests: an RNG blackjack round in which no card was
dealt yet was refused a replay altogether (now its engine run comes back, ``cards_note``
``no_cards``), and a command the log could not hold was missed by the hole check when it was
the table's last (the round was reported as matching)."""

from __future__ import annotations

import asyncio
import random
import time
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from blackjack import commands as BC
from blackjack.phases import Phase
from games.errors import GameError
from roulette import commands as RC
from server.auth import Principal
from server.recall import RecallService, rerun_stretch

from .test_replay import Table, _ctx, _table, submit_unreadable

ANN, BOB = Principal("ann", "player"), Principal("bob", "player")


@pytest.fixture
async def tables(pool):
    """The tables a test starts, stopped after it (their runtimes' tasks end with the test)."""
    made: list[Table] = []
    yield made
    for table in made:
        if table.rt is not None:
            await table.rt.stop()


async def _started(ctx: Any, info: Any, seed: int, tables: list[Table]) -> Table:
    table = Table(ctx, info, random.Random(seed))
    tables.append(table)
    await table.start()
    assert table.rt is not None
    return table


def _service(ctx: Any, info: Any) -> RecallService:
    return RecallService(ctx.pool, ctx.ledger, SimpleNamespace(known=lambda table_id: info))


async def _commands(pool: Any, table_id: str) -> list[dict]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT command::text AS c FROM table_commands WHERE table_id = $1 ORDER BY n",
                                table_id)
    return [msgspec.json.decode(r["c"]) for r in rows]


async def _fire_until(table: Table, done: Any, limit: int = 20) -> None:
    for _ in range(limit):
        if done():
            return
        await table.fire()
    raise AssertionError("the table's clock did not get there")


async def test_a_fair_spins_seed_is_in_no_report_before_its_reveal(pool, tables):
    """An RNG roulette spin is open with bets on it: its seed (drawn as it opened, in the
    logged open_spin) fixes the number. The open spin's replay matches and says nothing of
    the seed; once revealed, the settled spin's replay matches too."""
    ctx = _ctx(pool, 10_000)
    info = await _table(ctx, "roulette", "campione", "rv-fair")
    table = await _started(ctx, info, 1, tables)
    rt = table.rt
    assert rt is not None
    await table.fire()  # spin 1 opens, its seed drawn
    for i, spot in enumerate(("rouge", "plein 17", "noir")):
        await rt.submit(ANN, f"b{i}", RC.PlaceBet(spot=spot, amount=500))
    [seed] = [c["seed"] for c in await _commands(pool, "rv-fair") if c.get("type") == "open_spin"]
    assert len(seed) >= 32
    service = _service(ctx, info)
    report = await service.replay("rv-fair", "spin-1")
    assert report.matches and report.engine.matches and report.engine.commands >= 4
    assert (report.cards, report.cards_note) == (None, "no_shoe")
    text = msgspec.json.encode(report).decode()
    assert seed not in text and seed[:16] not in text
    # Launched (the number is fixed, not yet shown): still nothing of the seed.
    await table.fire()
    assert rt.engine.state.phase == "launched"
    assert seed not in msgspec.json.encode(await service.replay("rv-fair", "spin-1")).decode()
    await _fire_until(table, lambda: rt.engine.state.phase == "settled")
    settled = await service.replay("rv-fair", "spin-1")
    assert settled.matches and settled.engine.events > report.engine.events


async def _rng_blackjack(pool: Any, table_id: str, tables: list[Table]) -> tuple[Any, Any, Table]:
    ctx = _ctx(pool, 10_000)
    info = await _table(ctx, "blackjack", "campione", table_id, min_bet=1_000, max_bet=10_000)
    table = await _started(ctx, info, 2, tables)
    assert table.rt is not None
    await _fire_until(table, lambda: table.rt.engine.state.phase == Phase.BETTING)  # shuffled and cut
    return ctx, info, table


async def test_an_rng_shoe_in_play_is_in_no_report(pool, tables):
    """An RNG blackjack round dealt from a shoe still in play: the engine's run is checked,
    the cards wait for the reveal, and the report holds neither the shoe's salt nor its order."""
    ctx, info, table = await _rng_blackjack(pool, "rv-shoe", tables)
    rt = table.rt
    assert rt is not None
    for who, box in ((ANN, 1), (BOB, 2)):
        await rt.submit(who, f"sit{box}", BC.Sit(box=box))
        await rt.submit(who, f"bet{box}", BC.PlaceBet(box=box, amount=1_000))
    await table.fire()  # the bets close: the cards are dealt from the shoe
    assert rt.engine.state.phase in (Phase.PLAY, Phase.OFFERS, Phase.DEALER, Phase.BETTING)
    [shuffle] = [c for c in await _commands(pool, "rv-shoe") if c.get("type") == "shuffle"]
    report = await _service(ctx, info).replay("rv-shoe", "round-1")
    assert report.engine.matches and report.matches
    assert (report.cards, report.cards_note) == (None, "shoe_not_revealed")
    text = msgspec.json.encode(report).decode()
    assert shuffle["salt"] not in text
    assert ",".join(map(str, shuffle["order"][:12])) not in text.replace(" ", "")


async def test_an_rng_blackjack_round_still_taking_bets_replays(pool, tables):
    """A dispute about a bet in the betting window of an RNG blackjack round (no card dealt
    yet): the engine's run is checked like any round's; the card check has nothing to check
    (``cards`` None, ``cards_note`` says why), as at a live table or a roulette table."""
    ctx, info, table = await _rng_blackjack(pool, "rv-betting", tables)
    rt = table.rt
    assert rt is not None
    await rt.submit(ANN, "sit", BC.Sit(box=1))
    await rt.submit(ANN, "bet", BC.PlaceBet(box=1, amount=1_000))
    async with pool.acquire() as conn:
        engine = await rerun_stretch(conn, info, 1, rt.seq)
    assert engine.matches  # the engine's run alone is fine
    report = await _service(ctx, info).replay("rv-betting", "round-1")
    assert report.engine.matches and report.cards is None and report.cards_note == "no_cards"


async def test_a_round_whose_last_command_was_not_logged_is_not_reported_as_matching(pool, tables, monkeypatch):
    """A command that does not read back from its JSON is not logged (its batch takes a kept
    snapshot instead). If it is the last command of the round being disputed, the replay
    cannot check its events: it must say not_replayable, not ``matches``."""
    ctx = _ctx(pool, 10_000)
    info = await _table(ctx, "roulette", "campione", "rv-odd")
    table = await _started(ctx, info, 5, tables)
    rt = table.rt
    assert rt is not None
    await table.fire()  # the spin opens
    await rt.submit(ANN, "b1", RC.PlaceBet(spot="rouge", amount=500))
    await submit_unreadable(monkeypatch, rt, ANN, "p1")
    async with pool.acquire() as conn:
        unlogged = await conn.fetchval("SELECT state_command FROM table_state WHERE table_id = 'rv-odd'")
        assert await conn.fetchval("SELECT max(n) FROM table_commands WHERE table_id = 'rv-odd'") == unlogged - 1
        first, last = await conn.fetchrow("SELECT min(seq), max(seq) FROM table_events WHERE table_id = 'rv-odd' "
                                          "AND round = 'spin-1'")
        # The partage event is the unlogged command's: nothing checked it.
        # (What it says instead: matches, with the player's partage_preference_set listed
        # among the server's own events.)
        with pytest.raises(GameError) as refused:
            await rerun_stretch(conn, info, first, last)
        assert refused.value.code == "not_replayable"


async def test_a_gap_after_the_round_is_no_false_alarm_and_restore_is_unaffected(pool, tables, monkeypatch):
    """The same command not logged, but played after the disputed round: that round still
    replays (nothing of it is missing), and a restart lands on the live state."""
    ctx = _ctx(pool, 3)
    info = await _table(ctx, "roulette", "campione", "rv-gap")
    table = await _started(ctx, info, 6, tables)
    rt = table.rt
    assert rt is not None
    await table.fire()
    for i in range(5):
        await rt.submit(ANN, f"s1b{i}", RC.PlaceBet(spot="rouge", amount=500))
    await _fire_until(table, lambda: rt.kind.round_id(rt.engine) == "spin-2")
    await submit_unreadable(monkeypatch, rt, ANN, "p1")
    for i in range(4):
        await rt.submit(BOB, f"s2b{i}", RC.PlaceBet(spot="noir", amount=500))
    await table.check_restore()
    async with pool.acquire() as conn:
        first, last = await conn.fetchrow("SELECT min(seq), max(seq) FROM table_events WHERE table_id = 'rv-gap' "
                                          "AND round = 'spin-1'")
        out = await rerun_stretch(conn, info, first, last)
        assert out.matches and out.events > 5
        # spin-2 holds the unlogged command: refused, never reported as matching.
        first, last = await conn.fetchrow("SELECT min(seq), max(seq) FROM table_events WHERE table_id = 'rv-gap' "
                                          "AND round = 'spin-2'")
        with pytest.raises(GameError) as refused:
            await rerun_stretch(conn, info, first, last)
        assert refused.value.code == "not_replayable"


async def test_a_long_round_replays_in_reasonable_time(pool, tables):
    """A spin with 1,500 bets (three batches of 512 at most): its replay runs every command
    again well within a second or two."""
    ctx = _ctx(pool, 10_000)
    info = await _table(ctx, "roulette", "campione", "rv-long", minimum=100)
    table = await _started(ctx, info, 7, tables)
    rt = table.rt
    assert rt is not None
    await table.fire()
    spots = ("rouge", "noir", "pair", "impair", "manque", "passe")
    futures = [rt.submit(Principal(("ann", "bob", "cyd")[i % 3], "player"), f"b{i}",
                         RC.PlaceBet(spot=spots[i % 6], amount=100)) for i in range(1_500)]
    answers = await asyncio.wait_for(asyncio.gather(*futures), 60)
    assert {type(a).__name__ for a in answers} == {"Accepted"}
    await _fire_until(table, lambda: rt.engine.state.phase == "settled")
    started = time.perf_counter()
    report = await _service(ctx, info).replay("rv-long", "spin-1")
    took = time.perf_counter() - started
    assert report.matches and report.engine.commands >= 1_500
    assert took < 10, took
