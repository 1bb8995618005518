"""A table's state is a snapshot plus the log of the commands applied since (issue 14): a
restart replays the log through the engine and must land on exactly the state the table
had committed, byte for byte, or refuse to start the table. The log is kept whole, with the
snapshot each round opens with, so a dispute runs any past round again through a fresh
engine (issue 17, ``server.recall.rerun_stretch``): every round of the random play does, and
a tampered history is found at the very event.

The runtime runs here in the test's process on a real PostgreSQL, with the test as its
clock (it fires each timer the kind asks for, RNG draws included) and a seeded random
stream of players' and a director's commands, many of them refused, sent alone, several in
one batch, or while a batch is being committed (they make the next). After each step a
second runtime restores the table from the database and is compared with the live one."""

from __future__ import annotations

import asyncio
import logging
import random
from types import SimpleNamespace
from typing import Any

import pytest

from blackjack import commands as BC
from blackjack.phases import Phase
from games.errors import GameError
from games.ledger import accounts
from games.ledger.model import Hold, Kind
from games.ledger.store import Ledger
from roulette import commands as RC
from roulette.layout import parse_spot
from server import store
from server.auth import Principal
from server.commit_group import CommitGroup
from server.companions import Companion
from server.config import Settings
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.protocol import Accepted
from server.recall import rerun_stretch
from server.runtime import Item, ReplayRefused, TableRuntime
from server.store.limits import LimitsStore

PLAYERS = ("ann", "bob", "cyd", "dan")
POOR = "dan"  # too few chips for most stakes: the ledger refuses some of his, alone in their batch
DIRECTOR = Principal("dora", "director")


class Table:
    """One table's runtime, driven by the test: ``step`` sends a random burst of commands
    (or fires the table's timer) and waits for every answer."""

    def __init__(self, ctx: Any, info: TableInfo, rng: random.Random) -> None:
        self.ctx, self.info, self.rng = ctx, info, rng
        self.pace = random.Random(info.id)  # when the test yields to the table within a burst
        self.kind = game_kind(info.game)
        self.rt: TableRuntime | None = None
        self.cid = 0
        self.rounds: set[str] = set()

    async def start(self) -> None:
        rt = TableRuntime(self.ctx, self.info, self.kind)
        rt._arm_timer = lambda: None  # type: ignore[method-assign]  # the test is the clock
        await rt.start()
        self.rt = rt
        await self.settle()

    async def settle(self) -> None:
        """Wait until the queue is empty and its last batch committed (a probe item: no
        command, no event)."""
        assert self.rt is not None
        done = asyncio.get_running_loop().create_future()
        self.rt.queue.put_nowait(Item(self.rt.system, f"probe:{self.cid}", None, done))
        self.cid += 1
        await asyncio.wait_for(done, 10)

    def _timer(self) -> Item | None:
        rt = self.rt
        assert rt is not None
        timer = self.kind.next_timer(rt.engine, self.info, self.ctx.settings)
        if timer is None:
            return None
        command = timer.command() if callable(timer.command) else timer.command
        self.cid += 1
        return Item(rt.system, f"auto:{timer.key}:{self.cid}", command,
                    asyncio.get_running_loop().create_future())

    async def fire(self) -> None:
        """The table's clock: its next timer fires now."""
        item = self._timer()
        assert item is not None and self.rt is not None and item.future is not None
        self.rt.queue.put_nowait(item)
        await asyncio.wait_for(item.future, 10)

    async def step(self) -> None:
        rt = self.rt
        assert rt is not None
        burst: list[Item] = []  # chosen from the state before the burst, then sent
        for _ in range(self.rng.choice((1, 1, 1, 2, 3, 5))):
            if self.rng.random() < 0.3:
                item = self._timer()
                if item is not None:
                    burst.append(item)
                continue
            who, command = self.command()
            if command is None:
                continue
            self.cid += 1
            burst.append(Item(who, f"c{self.cid}", command))
        futures = []
        for item in burst:
            if item.system:
                rt.queue.put_nowait(item)
                futures.append(item.future)
            else:
                futures.append(rt.submit(item.who, item.cid, item.command))
            for _ in range(self.pace.choice((0, 0, 1, 3))):
                # The table takes what came so far: the commands after it wait for that batch's
                # commit, and make the next.
                await asyncio.sleep(0)
        if futures:
            await asyncio.wait_for(asyncio.gather(*futures), 10)
        self.rounds.add(self.kind.round_id(rt.engine))

    def command(self) -> tuple[Principal, Any]:
        assert self.rt is not None
        engine, r = self.rt.engine, self.rng
        if r.random() < 0.02:
            return DIRECTOR, self._limits(engine)
        who = Principal(r.choice(PLAYERS), "player")
        if self.info.game == "roulette":
            return who, self._roulette(engine, who.id)
        return who, self._blackjack(engine, who.id)

    def _limits(self, engine: Any) -> Any:
        r = self.rng
        if self.info.game == "roulette":
            return self.kind.limits_command(engine, DIRECTOR, r.choice((100, 200)), None,
                                            {"plein": r.choice((5_000, 10_000))}, "test")
        return self.kind.limits_command(engine, DIRECTOR, r.choice((1_000, 2_000)), r.choice((10_000, 20_000)),
                                        None, "")

    def _roulette(self, engine: Any, player: str) -> Any:
        r, s = self.rng, engine.state
        amount = r.choice((100, 200, 500, 1_000, 2_500))
        pick = r.random()
        if pick < 0.55:
            return RC.PlaceBet(spot=r.choice(SPOTS), amount=amount)
        if pick < 0.65:
            return RC.PlaceAnnounced(announce=r.choice(("voisins du zéro", "tiers du cylindre", "orphelins",
                                                        "17 et 2 voisins")), unit=r.choice((100, 200)))
        if pick < 0.72:
            return RC.SameAgain()
        if pick < 0.82:
            mine = [b.wager for b in s.bets if getattr(b, "player", "") == player]
            return RC.WithdrawBet(wager=r.choice(mine) if mine else "s1-w1")
        if pick < 0.9:
            return RC.SetPartagePreference(partage=r.random() < 0.5)
        return RC.LaunchBall()  # a player may not: refused

    def _blackjack(self, engine: Any, player: str) -> Any:
        r, s = self.rng, engine.state
        mine = [b for b in range(1, len(s.seats)) if s.seats[b] == player]
        box = r.choice(mine) if mine and r.random() < 0.8 else r.randint(1, 7)
        amount = r.choice((1_000, 2_000, 5_000, 10_000))
        if s.phase == Phase.BETTING:
            pick = r.random()
            if not mine or pick < 0.15:
                return BC.Sit(box=r.randint(1, 7))
            if pick < 0.7:
                return BC.PlaceBet(box=box, amount=amount)
            if pick < 0.85:  # (Lugano's, beside his own bet: Blazing 7s at its fixed stake)
                staked = [b.box for b in s.bets if b.player == player]
                bet = r.choice(("perfect_pairs", "21+3", "push_22", "blazing_7s", "blazing_7s"))
                return BC.PlaceSideBet(box=r.choice(staked) if staked else box, bet=bet,
                                       amount=500 if bet == "blazing_7s" else r.choice((100, 500, 1_000)))
            if pick < 0.93:
                return BC.WithdrawBet(box=box)
            return BC.Leave()
        if s.phase == Phase.PLAY and s.turn_box < len(s.boxes):
            turn = s.boxes[s.turn_box]
            hand = s.turn_hand
            action = r.choice((BC.Hit, BC.Hit, BC.Stand, BC.Double, BC.Split))
            return action(box=turn.number, hand=hand)
        if s.phase == Phase.OFFERS:
            return r.choice((BC.Insure(box=box, amount=amount // 2), BC.EvenMoney(box=box),
                             BC.DeclineOffer(box=box)))
        return r.choice((BC.Hit(box=box), BC.PlaceBet(box=box, amount=amount)))  # refused here

    async def restored(self) -> TableRuntime:
        """A second runtime on the same table, as a restart builds it (not started)."""
        other = TableRuntime(self.ctx, self.info, self.kind)
        await other.restore()
        return other

    async def check_restore(self) -> int:
        """Restore the table from the database and compare with the live runtime: the
        number of commands that were replayed (those logged after the snapshot)."""
        rt = self.rt
        assert rt is not None
        other = await self.restored()
        restored = self.kind.dump(other.engine)
        assert restored == self.kind.dump(rt.committed_engine) == self.kind.dump(rt.engine), _where(
            restored, self.kind.dump(rt.committed_engine))
        assert (other.seq, other.command, other.round) == (rt.seq, rt.command, rt.round)
        async with self.ctx.pool.acquire() as conn:
            row = await conn.fetchrow("SELECT seq, state_seq, state_command FROM table_state WHERE table_id = $1",
                                      self.info.id)
            kept = await conn.fetch("SELECT n, first_seq, last_seq FROM table_commands WHERE table_id = $1"
                                    " ORDER BY n", self.info.id)
        assert row["seq"] == rt.seq
        # The log is kept (every command the table applied but one it could not hold); a
        # restart replays those after the snapshot, numbered on from it.
        numbers = [c["n"] for c in kept]
        assert numbers == sorted(set(numbers)) and set(numbers) <= set(range(1, rt.command + 1))
        logged = [c for c in kept if c["n"] > row["state_command"]]
        assert [c["n"] for c in logged] == list(range(row["state_command"] + 1, rt.command + 1))
        assert all(row["state_seq"] < c["first_seq"] <= c["last_seq"] + 1 <= rt.seq + 1 for c in logged)
        return len(logged)

    async def check_disputes(self) -> int:
        """Every round played so far, run again from its kept snapshot: each matches. The
        number of rounds replayed."""
        rounds = 0
        async with self.ctx.pool.acquire() as conn:
            spans = await conn.fetch("SELECT round, min(seq) AS first, max(seq) AS last FROM table_events "
                                     "WHERE table_id = $1 AND round <> '' GROUP BY round", self.info.id)
            for r in spans:
                out = await rerun_stretch(conn, self.info, r["first"], r["last"])
                assert out.matches and out.first_difference is None, (r["round"], out.first_difference)
                assert out.events + len(out.server_events) > 0 and out.from_seq < r["first"]
                rounds += 1
        return rounds


def _where(restored: bytes, live: bytes) -> str:
    """Where two states first differ, with some context."""
    i = next((k for k in range(min(len(restored), len(live))) if restored[k] != live[k]),
             min(len(restored), len(live)))
    return f"restored: ...{restored[max(0, i - 200):i + 100]!r}\nlive:     ...{live[max(0, i - 200):i + 100]!r}"


SPOTS = [s for s in ("rouge", "noir", "pair", "impair", "manque", "passe", "plein 17", "plein 0", "cheval 0/3",
                     "carre 25/29", "plein 32", "cheval 17/20")
         if parse_spot(s)]


def _ctx(pool: Any, snapshot_batches: int, commit_flights: int = 0) -> Any:
    settings = Settings(jwt_secret="x" * 40, owner_id="replay-test", snapshot_batches=snapshot_batches,
                        seat_release_seconds=3600.0, commit_flights=commit_flights)
    manager = SimpleNamespace(runtimes={}, lost=lambda table_id: None,
                              router=SimpleNamespace(meters=lambda changes: None))
    return SimpleNamespace(settings=settings, pool=pool, ledger=Ledger(pool), limits=LimitsStore(pool),
                           channels=SimpleNamespace(publish=lambda frame, channel: None), manager=manager,
                           commits=CommitGroup(settings, settings.commit_flights))


async def _table(ctx: Any, game: str, profile: str, table_id: str, mode: str = "rng", **settings: Any) -> TableInfo:
    info = TableInfo(table_id, game, profile, mode, "CHF", table_id, settings, [])
    async with ctx.pool.acquire() as conn:
        await store.insert_table(conn, info, "test")
        for account, kind in ((accounts.bank(table_id, "CHF"), Kind.BANK),
                              (accounts.unclaimed(table_id, "CHF"), Kind.UNCLAIMED),
                              (accounts.floor(table_id, "CHF"), Kind.FLOOR)):
            await ctx.ledger.open_account(account, "CHF", kind, conn=conn)
    assert await store.take_lease(ctx.pool, table_id, ctx.settings.owner_id, 3600)
    for p in PLAYERS:
        await ctx.ledger.open_account(accounts.wallet(p, "CHF"), "CHF", Kind.WALLET)
        await ctx.ledger.deposit(p, "CHF", 3_000 if p == POOR else 2_000_000, f"dep-{p}")
    return info


GAMES = [
    ("roulette", "campione", {}),
    ("blackjack", "campione", {"min_bet": 1_000, "max_bet": 10_000}),
    ("blackjack", "lugano", {"min_bet": 1_000, "max_bet": 10_000}),  # side bets, a linked jackpot pool
]


@pytest.mark.parametrize(("game", "profile", "settings"), GAMES, ids=[f"{g}-{p}" for g, p, _ in GAMES])
@pytest.mark.parametrize("snapshot_batches", [5, 10_000])
async def test_a_restore_replays_to_the_live_state_byte_for_byte(pool, game, profile, settings, snapshot_batches,
                                                                 caplog):
    """Several rounds of random play; after each step the table restored from its snapshot
    and log equals the live one, and the log holds exactly what the snapshot lacks. With
    10,000 batches a snapshot is taken only at round boundaries; with 5, also mid-round."""
    caplog.set_level(logging.WARNING, logger="casino.runtime")
    ctx = _ctx(pool, snapshot_batches)
    table = Table(ctx, await _table(ctx, game, profile, f"rp-{game}-{profile}", **settings),
                  random.Random(f"{game}-{profile}-{snapshot_batches}"))
    await table.start()
    longest = 0
    for i in range(300):
        await table.step()
        if i % 3 == 0:
            longest = max(longest, await table.check_restore())
    longest = max(longest, await table.check_restore())
    assert len(table.rounds) >= 4, table.rounds  # the play crossed several rounds (several snapshots)
    assert longest >= (4 if snapshot_batches == 5 else 10)  # and restores replayed many commands
    # A restart (the live runtime stops without a snapshot, as after kill -9): the next one
    # resumes from the snapshot and the log, and goes on.
    assert table.rt is not None
    await table.rt.stop()
    await table.start()
    for _ in range(60):
        await table.step()
    await table.check_restore()
    # Every round, the ones across the restart included, runs again from its kept snapshot.
    assert await table.check_disputes() >= len(table.rounds) - 1
    assert await ctx.ledger.check() == []
    assert "does not read back" not in caplog.text  # every command was logged, none forced a snapshot
    assert "diverged" not in caplog.text  # the committed engine, applied each batch again, always agreed


async def test_a_restart_replays_only_what_the_snapshot_lacks(pool):
    """With snapshots every 3 batches, a restart replays no more than 2 batches' commands;
    the log keeps them all."""
    ctx = _ctx(pool, 3)
    table = Table(ctx, await _table(ctx, "roulette", "campione", "rp-cut"), random.Random(7))
    await table.start()
    assert table.rt is not None
    await table.fire()  # the spin opens
    seen = set()
    for i in range(12):  # one bet per batch
        answer = await table.rt.submit(Principal("ann", "player"), f"b{i}", RC.PlaceBet(spot="rouge", amount=500))
        assert isinstance(answer, Accepted)
        await table.check_restore()
        async with pool.acquire() as conn:
            logged = await conn.fetchval("SELECT count(*) FROM table_commands c JOIN table_state s USING (table_id) "
                                         "WHERE table_id = 'rp-cut' AND c.n > s.state_command")
            kept = await conn.fetchval("SELECT count(*) FROM table_commands WHERE table_id = 'rp-cut'")
        assert logged == table.rt.logged_batches <= 2
        assert kept == table.rt.command
        seen.add(logged)
    assert seen == {0, 1, 2}


async def _spin_open(pool: Any, table_id: str, seed: int) -> tuple[Any, Table, TableRuntime]:
    """A roulette table started on its own (snapshots only at rounds), its spin open."""
    ctx = _ctx(pool, 10_000)
    table = Table(ctx, await _table(ctx, "roulette", "campione", table_id), random.Random(seed))
    await table.start()
    assert table.rt is not None
    await table.fire()  # the spin opens
    return ctx, table, table.rt


async def test_a_committed_engine_that_diverges_is_rebuilt_from_the_working_one(pool, caplog, monkeypatch):
    """The committed state is a second engine each committed batch is applied to again. An
    engine that gave other events the second time (a bug: engines are pure) must not leave
    views and rollbacks on a wrong state: it is logged and the committed engine rebuilt from
    the working one, which is exactly what was committed; a later refusal rolls back to it."""
    ctx, table, rt = await _spin_open(pool, "rp-diverge", 5)
    real = table.kind.engine_events

    def forgetful(engine: Any, command: Any, actor: Any) -> list[Any]:
        events = real(engine, command, actor)
        return [] if engine is rt.committed_engine else events  # the second application "loses" them

    monkeypatch.setattr(table.kind, "engine_events", forgetful)
    assert isinstance(await rt.submit(Principal("ann", "player"), "d1", RC.PlaceBet(spot="rouge", amount=500)),
                      Accepted)
    assert "diverged" in caplog.text
    assert table.kind.dump(rt.committed_engine) == table.kind.dump(rt.engine)
    assert rt.snapshot_due  # the log since the last snapshot may not replay: the next batch takes one
    assert [b.amount for b in rt.committed_engine.state.bets] == [500]
    monkeypatch.setattr(table.kind, "engine_events", real)
    # dan's 3,000 cannot cover 5,000: refused alone, and the table rolls back to ann's bet.
    refused = await rt.submit(Principal(POOR, "player"), "d2", RC.PlaceBet(spot="noir", amount=5_000))
    assert getattr(refused, "code", None) == "insufficient_funds", refused
    assert [b.amount for b in rt.engine.state.bets] == [500]
    await table.check_restore()


async def test_a_batch_whose_companions_transaction_fails_to_commit_moves_nothing_on(pool):
    """A companion (a jackpot pool, a tournament) writes in a transaction that encloses the
    batch's own, so the batch is committed only when that one is. Its COMMIT failing (here a
    deferred foreign key the companion broke) must leave the table where it was: its seq, its
    committed engine (no bet without its hold), and a restore that agrees with both."""
    await pool.execute("CREATE TABLE IF NOT EXISTS probe_parent (id int PRIMARY KEY);"
                       "CREATE TABLE IF NOT EXISTS probe_child (p int REFERENCES probe_parent"
                       " DEFERRABLE INITIALLY DEFERRED)")
    ctx, table, rt = await _spin_open(pool, "rp-outer", 11)

    class Breaks(Companion):
        armed = 2

        async def forward(self, conn: Any, events: list[Any]) -> list[Any]:
            if self.armed:  # fails at the enclosing transaction's COMMIT: the batch sent
                self.armed -= 1  # unchecked, then again with the replay check
                await conn.execute("INSERT INTO probe_child VALUES (1)")
            return []

    rt.companions.append(Breaks(rt))
    seq, ann = rt.seq, Principal("ann", "player")
    refused = await rt.submit(ann, "o1", RC.PlaceBet(spot="rouge", amount=500))
    assert getattr(refused, "code", None) == "internal_error", refused
    assert rt.seq == seq and rt.committed_engine.state.bets == [] == rt.engine.state.bets
    await table.check_restore()
    assert isinstance(await rt.submit(ann, "o2", RC.PlaceBet(spot="rouge", amount=500)), Accepted)
    assert [b.amount for b in rt.committed_engine.state.bets] == [500]
    await table.check_restore()
    assert await ctx.ledger.check() == []


async def test_a_hold_no_wager_stands_for_is_found_at_the_tables_next_write(pool):
    """The list of wagers in play is written only by a batch that releases holds and at a
    snapshot (migration 0116): a batch that only adds bets leaves it, and the holds made since
    count as in play. A hold the game knows nothing of (what a bug would leave) passes until
    the table next writes the list, and is reported from then on."""
    ctx, _, rt = await _spin_open(pool, "rp-ghost", 9)  # (the open: a new round, a snapshot, the list written)

    async def written() -> list[str]:
        return list(await pool.fetchval("SELECT open_refs FROM table_state WHERE table_id = 'rp-ghost'"))

    ann = Principal("ann", "player")
    for i, spot in enumerate(("rouge", "noir")):
        assert isinstance(await rt.submit(ann, f"g{i}", RC.PlaceBet(spot=spot, amount=500)), Accepted)
    assert await written() == []  # two batches that only added bets: not rewritten
    ghost = Hold("rp-ghost/ghost/hold", accounts.wallet("ann", "CHF"), accounts.bank("rp-ghost", "CHF"), 100,
                 "bet", "rp-ghost/ghost")
    await ctx.ledger.apply([ghost])
    assert await ctx.ledger.check() == []  # made after the list was written: in play for now
    first, second = (b.wager for b in rt.committed_engine.state.bets)
    assert isinstance(await rt.submit(ann, "g2", RC.WithdrawBet(wager=first)), Accepted)  # a void
    assert await written() == [f"rp-ghost/{second}"]
    assert [(p.code, p.subject) for p in await ctx.ledger.check()] == [("hold_round_closed", ghost.id)]


async def _tampered(pool: Any, caplog: Any, tamper: str) -> str:
    """Play part of a round with no snapshot since its start, stop the runtime, run
    ``tamper`` on the stored events (``$1``: a logged command's event seq) and restart."""
    ctx = _ctx(pool, 10_000)
    table = Table(ctx, await _table(ctx, "roulette", "campione", "rp-bad"), random.Random(3))
    await table.start()
    rt = table.rt
    assert rt is not None
    await table.fire()  # the spin opens: a snapshot
    for i, spot in enumerate(("rouge", "plein 17", "noir")):
        await rt.submit(Principal("ann", "player"), f"bet{i}", RC.PlaceBet(spot=spot, amount=500))
    assert await table.check_restore() == 3  # the three bets after the snapshot at the spin's open
    async with pool.acquire() as conn:
        seq = await conn.fetchval("SELECT max(last_seq) FROM table_commands WHERE table_id = 'rp-bad'")
        await conn.execute(tamper, seq)
    await rt.stop()
    caplog.set_level(logging.ERROR, logger="casino.runtime")
    with pytest.raises(ReplayRefused) as refused:
        await table.start()
    assert f"table rp-bad: the commands logged since its snapshot do not reproduce its events at seq {seq}" \
        in caplog.text
    return str(refused.value)


async def test_a_tampered_event_refuses_the_table(pool, caplog):
    why = await _tampered(pool, caplog, "UPDATE table_events SET payload = jsonb_set(payload, '{amount}', '5000')"
                                        " WHERE table_id = 'rp-bad' AND seq = $1")
    assert "differs from the stored one" in why and why.endswith("the table is not started")


async def test_a_missing_event_refuses_the_table(pool, caplog):
    why = await _tampered(pool, caplog, "DELETE FROM table_events WHERE table_id = 'rp-bad' AND seq = $1")
    assert "none is stored there" in why


async def test_an_event_of_another_kind_refuses_the_table(pool, caplog):
    why = await _tampered(pool, caplog, "UPDATE table_events SET kind = 'wager_voided'"
                                        " WHERE table_id = 'rp-bad' AND seq = $1")
    assert "wager_placed" in why and "wager_voided" in why


async def test_a_command_that_does_not_read_back_makes_its_batch_a_snapshot(pool, caplog, monkeypatch):
    """A command whose JSON would not decode to itself is never logged (a restart could not
    replay it): its batch writes the state instead, with a warning."""
    ctx = _ctx(pool, 10_000)
    table = Table(ctx, await _table(ctx, "roulette", "campione", "rp-odd"), random.Random(5))
    await table.start()
    rt = table.rt
    assert rt is not None
    await table.fire()  # the spin opens
    ann = Principal("ann", "player")
    await rt.submit(ann, "b1", RC.PlaceBet(spot="rouge", amount=500))
    assert await table.check_restore() == 1
    caplog.set_level(logging.WARNING, logger="casino.runtime")
    await submit_unreadable(monkeypatch, rt, ann, "p1")
    assert "a set_partage_preference command does not read back from its JSON" in caplog.text
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT seq, state_seq FROM table_state WHERE table_id = 'rp-odd'")
    assert row["state_seq"] == row["seq"] == rt.seq
    assert await table.check_restore() == 0
    await rt.submit(ann, "b2", RC.PlaceBet(spot="noir", amount=500))  # logged again
    assert await table.check_restore() == 1


async def submit_unreadable(monkeypatch: Any, rt: TableRuntime, who: Principal, cid: str) -> None:
    """A partage preference whose JSON does not read back as itself (the decoder, for the
    while, flips it): the runtime cannot log it, and its batch takes a snapshot instead."""
    real = type(rt.kind).decode_command

    def odd(self: Any, raw: bytes) -> Any:
        command = real(self, raw)
        return RC.SetPartagePreference(partage=not command.partage) if type(command).__name__ == \
            "SetPartagePreference" else command

    with monkeypatch.context() as m:
        m.setattr(type(rt.kind), "decode_command", odd)
        await rt.submit(who, cid, RC.SetPartagePreference(partage=True))


async def _past_rounds(pool: Any, table_id: str) -> tuple[Table, list[Any]]:
    """Three spins with bets on a roulette table: its rounds' (round, first seq, last seq)."""
    ctx = _ctx(pool, 4)
    table = Table(ctx, await _table(ctx, "roulette", "campione", table_id), random.Random(11))
    await table.start()
    assert table.rt is not None
    await table.fire()  # the first spin opens (each next one opens as the last settles)
    for spin in range(3):
        for i, spot in enumerate(("rouge", "plein 17", "noir", "cheval 0/3", "pair", "passe")):
            await table.rt.submit(Principal(PLAYERS[i % 3], "player"), f"s{spin}b{i}",
                                  RC.PlaceBet(spot=spot, amount=500))
        while table.rt.kind.round_id(table.rt.engine) == f"spin-{spin + 1}":  # to the settlement
            await table.fire()
    async with pool.acquire() as conn:
        spans = await conn.fetch("SELECT round, min(seq) AS first, max(seq) AS last FROM table_events "
                                 "WHERE table_id = $1 AND round <> '' GROUP BY round ORDER BY 2", table_id)
    return table, spans


async def test_a_dispute_finds_a_tampered_event_of_a_past_round(pool):
    """A stored event of a round long settled is altered: the round's replay names that seq;
    the rounds before it still match."""
    table, spans = await _past_rounds(pool, "rp-dispute")
    placed = [s for s in spans if s["last"] - s["first"] > 6]
    assert len(placed) >= 2
    target = placed[0]
    async with pool.acquire() as conn:
        seq = await conn.fetchval("SELECT max(seq) FROM table_events WHERE table_id = 'rp-dispute' AND round = $1 "
                                  "AND kind = 'wager_placed'", target["round"])
        assert (await rerun_stretch(conn, table.info, target["first"], target["last"])).matches
        await conn.execute("UPDATE table_events SET payload = jsonb_set(payload, '{amount}', '5000') "
                           "WHERE table_id = 'rp-dispute' AND seq = $1", seq)
        out = await rerun_stretch(conn, table.info, target["first"], target["last"])
        assert not out.matches and out.first_difference is not None
        assert out.first_difference.seq == seq and "differs from the stored one" in out.first_difference.why
        later = await rerun_stretch(conn, table.info, placed[-1]["first"], placed[-1]["last"])
        assert later.matches  # the round after it starts from its own kept snapshot


async def test_a_dispute_refuses_a_round_whose_log_has_a_hole(pool):
    table, spans = await _past_rounds(pool, "rp-hole")
    target = [s for s in spans if s["last"] - s["first"] > 6][0]
    async with pool.acquire() as conn:
        n = await conn.fetchval("SELECT max(n) FROM table_commands WHERE table_id = 'rp-hole' AND last_seq <= $1",
                                target["last"])
        await conn.execute("DELETE FROM table_commands WHERE table_id = 'rp-hole' AND n = $1", n)
        with pytest.raises(GameError) as refused:
            await rerun_stretch(conn, table.info, target["first"], target["last"])
        assert refused.value.code == "not_replayable"
        # A round played before commands were kept (its snapshots gone): not replayable either.
        await conn.execute("DELETE FROM table_snapshots WHERE table_id = 'rp-hole'")
        with pytest.raises(GameError) as refused:
            await rerun_stretch(conn, table.info, spans[-1]["first"], spans[-1]["last"])
        assert refused.value.code == "not_replayable" and "before" in refused.value.message
