"""A reviewer's attack through the real server on the dispute replay (who may ask, odd and
unknown ids, a tournament's table), the unclaimed register's countersignature (role
boundaries, two inspectors at once, a countersignature racing a claim, a claim racing the
expiry: the money moves once) and the tournaments' status (running, paused, resumed, in
the list and in the tournament's own answer). After each scenario the ledger is whole.

Two findings, fixed since, are regression tests: a settled tournament hand in which no card
was dealt (every player absent, Art. 27) was refused a replay (422 not_replayable), and a
tournament asked about at a process that does not serve it answered status ''."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest

from games.db import create_pool
from games.errors import GameError
from games.ledger import Ledger
from loadtest.tournament_bots import TournamentBot, tournament_command
from server import unclaimed
from server.auth import Principal
from server.client import HTTPError, Rejected
from server.placement import preferred

from .conftest import Floor, owner_id, until
from .test_many_processes_e2e import _processes
from .test_many_processes_e2e import redis_url as redis_url  # (a fixture)
from .test_tournament_e2e import events_of, sums
from .test_unclaimed_e2e import _balances

pytestmark = pytest.mark.slow

TABLE = "rv-roul"
REGISTER, BANK, CASH = f"unclaimed:{TABLE}:CHF", f"bank:{TABLE}:CHF", "cashier:CHF"
FLOOR_PLAYERS = ("floor:a", "floor:b", "floor:c", "floor:d", "floor:e")


async def _status_of(coro) -> tuple[int, str]:
    try:
        await coro
    except HTTPError as exc:
        return exc.status, exc.code
    return 200, ""


async def _subscribed(client, table: str) -> bool:
    try:
        await client.subscribe(table)
        return True
    except Rejected:
        return False


async def _ledger_whole(floor, db_url: str) -> None:
    totals = await sums(db_url)
    assert totals == dict.fromkeys(totals, 0), totals
    assert await floor.ledger_problems() == []


async def test_replay_roles_ids_and_the_register_races(floor, db_url):
    croupier = await floor.account("rv-croupier", "croupier")
    chef = await floor.account("rv-chef", "chef")
    player = await floor.account("rv-ann", chips=10_000)
    insp1 = await floor.account("rv-insp1", "inspector")
    insp2 = await floor.account("rv-insp2", "inspector")
    director = await floor.account("rv-director", "director")
    admin = await floor.admin()
    cashier = await floor.cashier()
    clients = (croupier, chef, player, insp1, insp2, director, admin, cashier)
    await floor.table("roulette", "campione", TABLE, staff=("rv-croupier", "rv-chef"))
    try:
        for c in (croupier, chef):
            await c.connect()
            await c.subscribe(TABLE)
        # A live spin: five floor players on red, 3 comes, each is paid and walks away.
        await croupier.play(TABLE, {"type": "open_spin"})
        for p in FLOOR_PLAYERS:
            await croupier.play(TABLE, {"type": "place_bet", "spot": "rouge", "amount": 1_000, "player": p})
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 3, "source": "croupier"}):
            await croupier.play(TABLE, step)
        await chef.next_event(TABLE, "spin_settled")

        # -- the replay: oversight only; unknown and odd ids are a 404, never a 500 -----------
        path = f"/tables/{TABLE}/rounds/spin-1/replay"
        for who in (insp1, director, admin):
            out = await who.request("GET", path)
            assert out["matches"] is True and out["engine"]["matches"] is True, out
            assert (out["game"], out["mode"], out["cards"], out["cards_note"]) == ("roulette", "live", None,
                                                                                   "no_shoe")
            assert out["engine"]["commands"] >= 9 and out["engine"]["first_difference"] is None
        for who in (player, croupier, chef, cashier):
            assert await _status_of(who.request("GET", path)) == (403, "forbidden")
        assert await _status_of(insp1.request("GET", "/tables/nowhere/rounds/spin-1/replay")) == \
            (404, "unknown_table")
        for odd in ("spin-99", "spin-1'--", "spin-1 OR 1=1", "%", "é" * 200, "spin-1/../spin-1"):
            status, code = await _status_of(insp1.request("GET", f"/tables/{TABLE}/rounds/{quote(odd, safe='')}"
                                                                 f"/replay"))
            assert status in (400, 404) and code in ("unknown_round", "invalid_text", "invalid_request",
                                                     "http_error", "not_found"), (odd, status, code)

        # -- the register: five items --------------------------------------------------------
        for p in FLOOR_PLAYERS:
            await chef.play(TABLE, {"type": "mark_unclaimed", "player": p})
        items = {it["player"]: it for it in await insp1.request("GET", f"/unclaimed?status=open&table={TABLE}")}
        assert set(items) == set(FLOOR_PLAYERS) and {it["amount"] for it in items.values()} == {2_000}
        a, b, c, d, e = (items[p]["id"] for p in FLOOR_PLAYERS)
        sign = "/unclaimed/{}/countersign".format
        # Only an inspector: oversight's other roles neither.
        for who in (director, admin, cashier, chef, croupier, player):
            assert await _status_of(who.request("POST", sign(a))) == (403, "forbidden")

        # The chef recorded them all: even in an inspector's role he may not sign one (no route
        # changes a role: straight to the server's code).
        pool = await create_pool(db_url, min_size=1, max_size=1)
        try:
            with pytest.raises(GameError) as own:
                await unclaimed.countersign(pool, Principal("rv-chef", "inspector"), a)
            assert own.value.code == "own_unclaimed"
        finally:
            await pool.close()

        # Two inspectors at once, several times each: one signature, the other refused.
        answers = await asyncio.gather(*(_status_of(w.request("POST", sign(a))) for w in (insp1, insp2) * 4))
        signed = await insp1.request("GET", f"/unclaimed?table={TABLE}")
        [item_a] = [it for it in signed if it["id"] == a]
        winner = item_a["countersigned_by"]
        assert winner in ("rv-insp1", "rv-insp2")
        want = [(200, "") if w.user == winner else (409, "already_countersigned") for w in (insp1, insp2) * 4]
        assert answers == want
        audit = await insp1.request("GET", f"/audit?target={a}")
        assert [(x["actor"], x["action"]) for x in audit] == [(winner, "unclaimed.countersign")]

        # A countersignature racing the cashier's claim: the claim pays once; the signature
        # lands before it or is refused after it.
        before = await _balances(db_url)
        claim, sig = await asyncio.gather(
            _status_of(cashier.request("POST", f"/unclaimed/{b}/claim", json={"player": "floor:b"})),
            _status_of(insp1.request("POST", sign(b))))
        assert claim == (200, "") and sig in ((200, ""), (409, "already_claimed"))
        after = await _balances(db_url)
        assert after[REGISTER] == before[REGISTER] - 2_000 and after[CASH] == before[CASH] + 2_000

        # Past the period: a (signed above), c and e countersigned, d not. Expiry (two runs at
        # once, as two processes' hourly runs) races the cashier's claims on c and d.
        for item in (c, e):
            await insp2.request("POST", sign(item))
        later = datetime.now(UTC) + timedelta(days=31)
        pool = await create_pool(db_url, min_size=1, max_size=6)
        try:
            ledger = Ledger(pool)
            before = await _balances(db_url)
            ran = await asyncio.gather(
                unclaimed.expire(pool, ledger, as_of=later),
                unclaimed.expire(pool, ledger, as_of=later),
                _status_of(cashier.request("POST", f"/unclaimed/{c}/claim", json={"player": "floor:c"})),
                _status_of(cashier.request("POST", f"/unclaimed/{d}/claim", json={"player": "floor:d"})))
            expired = sorted(it.id for run in ran[:2] for it in run)
            c_expired = c in expired
            assert expired == sorted([a, e, *([c] if c_expired else [])]), expired  # each once, d never
            assert ran[3] == (200, "")  # d is the player's: his claim needs no countersignature
            assert ran[2] == ((409, "already_expired") if c_expired else (200, ""))
            final = {it.id: it.status for it in await unclaimed.register(pool, table=TABLE)}
            assert [final[x] for x in (a, b, c, d, e)] == \
                ["expired", "claimed", "expired" if c_expired else "claimed", "claimed", "expired"]
            assert await unclaimed.expire(pool, ledger, as_of=later) == []
        finally:
            await pool.close()
        end = await _balances(db_url)
        assert end[BANK] - before[BANK] == 2_000 * (2 + c_expired)
        assert end[CASH] - before[CASH] == 2_000 * (2 - c_expired)
        assert end[REGISTER] == before[REGISTER] - 4 * 2_000 == 0
        await _ledger_whole(floor, db_url)
    finally:
        for cl in clients:
            await cl.close()


SPEC = {"name": "Review", "buy_in": 10_000, "shoes": 1, "decks": 1, "min_bet": 10, "max_bet": 50,
        "max_entrants": 7, "max_tables": 1}


async def _started(floor, tid: str, bots: bool):
    """A tournament of two checked in and started (with a bot playing for each, or nobody at
    the table): the director (following the tournament and its table), an inspector, the
    players, the bots' tasks and the table."""
    director = await floor.account(f"{tid}-dir", "director")
    inspector = await floor.account(f"{tid}-insp", "inspector")
    players = [await floor.account(f"{tid}-{i}", chips=30_000, currency="EUR") for i in range(2)]
    created = await director.request("POST", "/tournaments", json={
        "id": tid, "spec": {**SPEC, "starts_at": int(time.time()) + 3600}})
    assert created["status"] == "scheduled"
    await tournament_command(director, tid, {"type": "open_registration"})
    for p in players:
        await tournament_command(p, tid, {"type": "register"})
        await tournament_command(p, tid, {"type": "check_in"})
    await director.connect()
    await director.subscribe(tid)
    runs = [asyncio.create_task(TournamentBot(p, tid).run(timeout=60)) for p in players] if bots else []
    await tournament_command(director, tid, {"type": "start"})
    (phase,) = await events_of(director, tid, "phase_started", timeout=30)
    table = phase["tables"][0]["table"]
    assert table.startswith(f"{tid}-")
    assert await until(lambda: _subscribed(director, table), 20)
    return director, inspector, players, runs, table


async def _cancelled(floor, db_url: str, director, tid: str, runs) -> None:
    with contextlib.suppress(HTTPError):
        await tournament_command(director, tid, {"type": "cancel", "reason": "review over"})
    await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 30)

    async def no_points() -> bool:
        rows = await sums(db_url)
        return rows == dict.fromkeys(rows, 0)

    assert await until(no_points, 30)
    await _ledger_whole(floor, db_url)


async def test_tournament_status_through_its_life_and_a_dealt_hand_replays(floor, db_url):
    """registration, running (the draw), paused, running again (resumed), cancelled: in the
    list and in the tournament's own answer alike; a hand its table dealt replays through a
    fresh engine, for an inspector only."""
    tid = "rvt"
    director, inspector, players, runs, table = await _started(floor, tid, bots=True)
    try:
        async def status() -> tuple[str, str]:
            listed = {t["id"]: t["status"] for t in await players[0].request("GET", "/tournaments")}
            return listed[tid], (await players[0].request("GET", f"/tournaments/{tid}"))["tournament"]["status"]

        assert await status() == ("running", "running")
        dealt = await director.next_event(table, "card_dealt", timeout=40)
        while (await director.next_event(table, "round_settled", timeout=40))["round"] != dealt["round"]:
            pass
        await tournament_command(director, tid, {"type": "pause", "reason": "review"})
        assert await status() == ("paused", "paused")
        path = f"/tables/{table}/rounds/{dealt['round']}/replay"
        out = await inspector.request("GET", path)
        assert out["engine"]["matches"] is True and out["matches"] is True, out
        assert out["cards_note"] in ("", "shoe_not_revealed") and out["engine"]["commands"] > 0
        assert await _status_of(players[0].request("GET", path)) == (403, "forbidden")
        # The coordinator's own stream: no such round, refused (never a 500).
        assert await _status_of(inspector.request("GET", f"/tables/{tid}/rounds/round-1/replay")) == \
            (404, "unknown_round")
        await tournament_command(director, tid, {"type": "resume"})
        assert await status() == ("running", "running")
        await tournament_command(director, tid, {"type": "pause", "reason": "again"})
        await tournament_command(director, tid, {"type": "cancel", "reason": "review over"})
        assert await status() == ("cancelled", "cancelled")
    finally:
        await _cancelled(floor, db_url, director, tid, runs)
        for cl in (director, inspector, *players):
            await cl.close()


async def test_a_tournament_hand_of_absent_players_replays(floor, db_url):
    """Nobody comes to the table: the hand is settled by charging each absent player the
    minimum (Art. 27), no card dealt. A player disputing his charge: the hand runs again
    through a fresh engine like any other (the card check has nothing to check)."""
    tid = "rva"
    director, inspector, players, runs, table = await _started(floor, tid, bots=False)
    try:
        settled = await director.next_event(table, "round_settled", timeout=40)
        charged = [f for f in director.frames if f.get("table") == table and f.get("type") == "event"
                   and f["event"]["type"] == "absent_charged"]
        assert len(charged) == 2 and not [f for f in director.frames if f.get("table") == table
                                          and f.get("type") == "event" and f["event"]["type"] == "card_dealt"]
        out = await inspector.request("GET", f"/tables/{table}/rounds/{settled['round']}/replay")
        assert out["engine"]["matches"] is True and out["cards"] is None and out["cards_note"] == "no_cards"
    finally:
        await _cancelled(floor, db_url, director, tid, runs)
        for cl in (director, inspector, *players):
            await cl.close()


@pytest.fixture
async def own_db(pg_url: str):
    """A database of the test's own (the module's is served by ``server``)."""
    from helpers.databases import new_database

    async with new_database(pg_url, "rvst") as url:
        yield url


async def test_a_tournaments_status_asked_of_another_process(own_db, redis_url, tmp_path_factory):
    """A tournament served by one process (a) and asked about at the other (b): the list and
    the tournament's own answer say the same status there as at a."""
    a, b = _processes(own_db, redis_url, tmp_path_factory.mktemp("rv-status"), 2)
    a.start()
    b.start()
    try:
        ids = [owner_id(a), owner_id(b)]
        tid = next(t for t in (f"rvs{i}" for i in range(10_000)) if preferred(t, ids) == ids[0])
        director = await Floor(a).account("rvs-dir", "director")
        await director.request("POST", "/tournaments", json={
            "id": tid, "spec": {**SPEC, "starts_at": int(time.time()) + 3600}})
        await tournament_command(director, tid, {"type": "open_registration"})
        viewer = await Floor(b).account("rvs-ann")

        async def served_by_a() -> bool:
            try:
                listed = {t["id"]: t for t in await viewer.request("GET", "/tournaments")}
            except HTTPError:
                return False
            return tid in listed and listed[tid]["owner"] == ids[0]

        assert await until(served_by_a, 30)
        here = await director.request("GET", f"/tournaments/{tid}")
        assert here["tournament"]["status"] == "registration"
        listed = {t["id"]: t["status"] for t in await viewer.request("GET", "/tournaments")}
        assert listed[tid] == "registration"  # the list reads the database: right on any process
        there = await viewer.request("GET", f"/tournaments/{tid}")
        assert there["view"]["status"] == "registration"  # the owner's view came across whole
        assert there["tournament"]["status"] == "registration"
        for c in (director, viewer):
            await c.close()
    finally:
        a.stop()
        b.stop()
