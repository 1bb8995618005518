"""Tournaments through the real server (Titano Art. 22-29, Appendix 1), with bot players on
the websocket and, at live tables, a croupier dealing chosen cards, so every stack, place
and prize is known in advance and checked exactly."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import asyncpg
import pytest

from helpers.databases import new_database
from loadtest.tournament_bots import TournamentBot, tournament_command
from server.client import CasinoClient, HTTPError, Rejected

from .conftest import PASSWORD, Floor, ServerProcess, until

pytestmark = pytest.mark.slow

# Cards are ints 0..51: rank = card % 13 (0 ace, 9 ten, 10..12 court cards), suit = card // 13.
TEN, NINE, SIX = 9, 8, 5
TENS = [rank + 13 * suit for suit in range(4) for rank in (9, 10, 11, 12)]  # a live shoe has 6 of each


def twenty(box: int) -> tuple[int, int]:
    return TENS[(2 * box) % 16], TENS[(2 * box + 1) % 16]


def nineteen(box: int) -> tuple[int, int]:
    return TENS[box % 16], NINE + 13 * (box % 4)


@pytest.fixture(scope="module")
def tour_server(db_url, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("tour"), CASINO_BETTING_SECONDS="2",
                        CASINO_DECISION_SECONDS="2")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def tour_floor(tour_server) -> Floor:
    return Floor(tour_server)


async def sums(db_url: str) -> dict[str, int]:
    """Every currency's balances summed (the ledger is double-entry: each must be 0)."""
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch("SELECT currency, sum(credits_posted - debits_posted)::bigint AS s "
                                "FROM ledger_accounts GROUP BY currency")
        return {r["currency"]: r["s"] for r in rows}
    finally:
        await conn.close()


async def balances(db_url: str, prefix: str) -> dict[str, int]:
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch("SELECT id, credits_posted - debits_posted AS b FROM ledger_accounts "
                                "WHERE id LIKE $1 || '%' ORDER BY id", prefix)
        return {r["id"]: r["b"] for r in rows}
    finally:
        await conn.close()


async def events_of(client: CasinoClient, table: str, kind: str, n: int = 1, timeout: float = 60) -> list[dict]:
    """Wait until ``n`` events of ``kind`` have arrived for ``table``; all of them."""
    async def got() -> list[dict]:
        found = [f["event"] for f in client.frames
                 if f.get("type") == "event" and f["table"] == table and f["event"]["type"] == kind]
        return found if len(found) >= n else []

    found = await until(got, timeout)
    assert found, f"no {n} x {kind} at {table}"
    return found


class LiveCroupier:
    """The croupier's console at a live tournament table: shuffles, cuts, closes the bets
    once the expected bets are down, announces the cut card (one hand per shoe) and deals
    the cards the test chose."""

    def __init__(self, client: CasinoClient) -> None:
        self.c = client

    async def view(self, table: str) -> dict:
        return (await self.c.request("GET", f"/tables/{table}"))["view"]

    async def until_ok(self, table: str, command: dict, seconds: float = 30) -> dict:
        """Send until the table takes it (the players may still be deciding)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                return await self.c.play(table, command)
            except Rejected as exc:
                if time.monotonic() > deadline:
                    raise AssertionError(f"{table}: {command} still refused: {exc}") from None
                await asyncio.sleep(0.1)

    async def one_hand(self, table: str, bets: int, cards: dict[int, tuple[int, int]], dealer: list[int]) -> None:
        """The phase's one hand: ``bets`` bets expected, ``cards`` per box, the dealer's up card,
        hole card and draws."""
        async def subscribed() -> bool:  # the tournament opens its tables just after the draw
            try:
                await self.c.subscribe(table)
                return True
            except Rejected:
                return False

        assert await until(subscribed, 30), f"{table} never opened"
        await self.until_ok(table, {"type": "shuffle"})
        await self.until_ok(table, {"type": "cut"})

        async def bets_down() -> bool:
            return len((await self.view(table))["bets"]) >= bets

        assert await until(bets_down, 30), f"{table}: the bets never came: {await self.view(table)}"
        await self.c.play(table, {"type": "close_bets"})
        order = (await events_of(self.c, table, "bets_closed"))[-1]["order"]
        await self.c.play(table, {"type": "cut_card_out"})  # the phase's one shoe ends with this hand
        for b in order:
            await self.c.play(table, {"type": "card", "box": b, "hand": 0, "card": cards[b][0]})
        await self.c.play(table, {"type": "card", "box": 0, "card": dealer[0]})
        for b in order:
            await self.c.play(table, {"type": "card", "box": b, "hand": 0, "card": cards[b][1]})
        await self.c.play(table, {"type": "card", "box": 0, "card": dealer[1]})
        for card in dealer[2:]:  # once every player has stood
            await self.until_ok(table, {"type": "card", "box": 0, "card": card})


async def test_a_live_tournament_of_15_tie_at_the_cut_final_and_prizes(tour_floor, tour_server):
    floor, tid = tour_floor, "spring"
    director = await floor.account("t-director", "director")
    croupier = await floor.account("t-croupier", "croupier")
    cashier = await floor.cashier()
    players = [await floor.account(f"t{i:02}", chips=100_000, currency="EUR") for i in range(16)]
    spec = {"name": "Spring Cup", "buy_in": 3333, "starts_at": int(time.time()) + 3600, "mode": "live",
            "staff": ["t-croupier"], "shoes": 1, "min_bet": 10, "max_bet": 100, "max_entrants": 21,
            "max_tables": 3}
    await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
    await director.connect()
    await director.subscribe(tid)
    await tournament_command(director, tid, {"type": "open_registration"})
    # Twelve pay from their wallets; three at the cashier's desk, one of them by bank transfer
    # (Art. 23); t15 pays cash and never turns up.
    for p in players[:12]:
        await tournament_command(p, tid, {"type": "register"})
    for p in players[12:15]:
        await tournament_command(cashier, tid, {"type": "register", "player": p.user, "source": "cashier"})
    await tournament_command(cashier, tid, {"type": "register", "player": "t15", "source": "bank_transfer",
                                            "reference": "SM-2026-0042"})
    with pytest.raises(HTTPError) as refused:  # a player pays only for himself
        await tournament_command(players[0], tid, {"type": "register", "player": "t01"})
    assert refused.value.status == 403
    for p in players[:15]:
        await tournament_command(p, tid, {"type": "check_in"})
    wallets = await balances(tour_server.db_url, "wallet:t")
    assert wallets["wallet:t00:EUR"] == 100_000 - 3333 - 2000  # buy-in + fee (10%, minimum EUR 20)
    assert wallets["wallet:t12:EUR"] == 100_000  # paid at the desk

    # The bots: each bets what the plan says at its table (0: it sits out).
    plan: dict[tuple[str, str], int] = {}

    def stake(bot: TournamentBot, min_bet: int, max_bet: int) -> int:
        return plan.get((bot.table, bot.user), 0)

    bots = [TournamentBot(p, tid, stake=stake) for p in players[:15]]
    runs = [asyncio.create_task(b.run(timeout=300)) for b in bots]
    await tournament_command(director, tid, {"type": "start"})
    (started,) = await events_of(director, tid, "started")
    assert sorted(started["order"]) == [f"t{i:02}" for i in range(15)] and started["pool"] == 15 * 3333
    (late,) = await events_of(director, tid, "not_admitted")
    assert late["player"] == "t15"
    with pytest.raises(HTTPError) as refused:  # late arrivals are not admitted (Art. 23)
        await tournament_command(players[15], tid, {"type": "check_in"})
    assert refused.value.code == "tournament_started"

    (phase1,) = await events_of(director, tid, "phase_started")
    assert [len(t["seats"]) for t in phase1["tables"]] == [5, 5, 5]  # balanced: 15 = 5/5/5
    t1, t2, t3 = (sorted(t["seats"], key=t["seats"].get) for t in phase1["tables"])
    ids = [t["table"] for t in phase1["tables"]]
    # Table 1 wins with 100..60; table 2 wins with 50, 40, 40, 30, 20; table 3 loses 10 each,
    # its first player absent (charged the minimum: Art. 27). Standings: 300 290 280 270 260
    # 250 240 240 | 230 ...: the 7th place is tied at 240 across the cut.
    for player, amount in zip(t1, (100, 90, 80, 70, 60), strict=True):
        plan[(ids[0], player)] = amount
    for player, amount in zip(t2, (50, 40, 40, 30, 20), strict=True):
        plan[(ids[1], player)] = amount
    for player in t3[1:]:
        plan[(ids[2], player)] = 10
    win = {"cards": twenty, "dealer": [TEN + 13, SIX, TEN + 26]}  # 20 each; the dealer 16, then busts
    lose = {"cards": nineteen, "dealer": [TEN + 13, TEN + 26]}  # 19 each against 20
    deal = LiveCroupier(croupier)
    await croupier.connect()
    seats = {t["table"]: t["seats"] for t in phase1["tables"]}
    for table, how, n in ((ids[0], win, 5), (ids[1], win, 5), (ids[2], lose, 4)):
        cards = {box: how["cards"](box) for box in seats[table].values()}
        await deal.one_hand(table, n, cards, how["dealer"])
    (charged,) = await events_of(croupier, ids[2], "absent_charged")
    assert (charged["player"], charged["amount"]) == (t3[0], 10)

    (tie,) = await events_of(director, tid, "tie_break")
    assert sorted(tie["players"]) == sorted(t2[1:3]) and tie["points"] == 240 and tie["places"] == [7, 8]
    phases = await events_of(director, tid, "phase_started", 2)
    tiebreak = phases[1]
    assert tiebreak["kind"] == "tiebreak" and tiebreak["shoes"] == 1
    (tb_table,) = tiebreak["tables"]
    first, second = sorted(tb_table["seats"], key=tb_table["seats"].get)
    plan[(tb_table["table"], first)], plan[(tb_table["table"], second)] = 20, 10
    await deal.one_hand(tb_table["table"], 2, {b: twenty(b) for b in tb_table["seats"].values()}, win["dealer"])
    # (both win: 260 and 250; the first ranks 7th)
    phases = await events_of(director, tid, "phase_started", 3)
    final = phases[2]
    assert final["kind"] == "final" and set(final["stacks"].values()) == {200}  # a fresh 200 (Art. 24)
    finalists = sorted(final["tables"][0]["seats"], key=final["tables"][0]["seats"].get)
    assert sorted(finalists) == sorted([*t1, t2[0], first])
    for player, amount in zip(finalists, (100, 90, 80, 70, 60, 50, 40), strict=True):
        plan[(final["tables"][0]["table"], player)] = amount
    await deal.one_hand(final["tables"][0]["table"], 7, {b: twenty(b) for b in final["tables"][0]["seats"].values()},
                        win["dealer"])

    (done,) = await events_of(director, tid, "finished")
    listed = {t["id"]: t["status"] for t in await director.request("GET", "/tournaments")}
    assert listed[tid] == "finished"
    # Art. 26: 60/25/15 of 15 x 33.33 = 499.95; cents rounded down, the remainder to first.
    assert done["prizes"] == {finalists[0]: 29_998, finalists[1]: 12_498, finalists[2]: 7_499}
    assert sum(done["prizes"].values()) == 15 * 3333
    places = [s["player"] for s in done["standings"]]
    assert places[:7] == finalists and places[7] == second
    await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 60)
    assert not [b.errors for b in bots if b.errors]
    after = await balances(tour_server.db_url, "wallet:t")
    assert after[f"wallet:{finalists[0]}:EUR"] - wallets[f"wallet:{finalists[0]}:EUR"] == 29_998
    assert after["wallet:t15:EUR"] == 100_000 + 3333  # the buy-in back; the fee kept
    assert set((await balances(tour_server.db_url, f"points:{tid}:")).values()) == {0}
    assert await sums(tour_server.db_url) == {c: 0 for c in await sums(tour_server.db_url)}
    assert await floor.ledger_problems() == []
    for c in [director, croupier, cashier, *players]:
        await c.close()


async def test_a_sit_and_go_starts_itself_at_five_and_charges_the_absent(tour_floor, tour_server):
    """Appendix 1: one table, starts as soon as 5 are registered, one winner takes the pool.
    One player never bets: he is charged the minimum every hand (Art. 27)."""
    floor, tid = tour_floor, "sng"
    director = await floor.account("s-director", "director")
    players = [await floor.account(f"s{i}", chips=20_000, currency="EUR") for i in range(5)]
    spec = {"name": "Sit&Go 50", "format": "sit_and_go", "buy_in": 5000, "max_entrants": 7, "max_tables": 1,
            "min_entrants": 5, "prizes": [100], "shoes": 1, "decks": 1, "min_bet": 10, "max_bet": 50}
    await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
    await director.connect()
    await director.subscribe(tid)
    await tournament_command(director, tid, {"type": "open_registration"})
    bots = [TournamentBot(p, tid, absent=p.user == "s4") for p in players]
    runs = [asyncio.create_task(b.run(timeout=240)) for b in bots]
    for p in players[:4]:
        await tournament_command(p, tid, {"type": "register"})
    assert not [f for f in director.frames if f.get("event", {}).get("type") == "started"]
    await tournament_command(players[4], tid, {"type": "register"})  # the fifth: it starts by itself
    (started,) = await events_of(director, tid, "started")
    assert sorted(started["order"]) == [p.user for p in players] and started["pool"] == 5 * 5000
    (phase,) = await events_of(director, tid, "phase_started")
    assert phase["kind"] == "final" and len(phase["tables"]) == 1
    table = phase["tables"][0]["table"]
    (done,) = await events_of(director, tid, "finished", timeout=180)
    (winner,) = done["prizes"]
    assert done["prizes"][winner] == 25_000 and done["standings"][0]["player"] == winner
    await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 60)
    # The absent player: charged the minimum for every hand he was in, nothing else. (The
    # table, its phase over, has left the lobby: archived, its history kept.)
    assert table not in [t["id"] for t in await director.tables()]
    assert table in [t["id"] for t in await director.request("GET", "/tables?archived=true")]
    conn = await asyncpg.connect(tour_server.db_url)
    try:
        rows = await conn.fetch("SELECT payload::text AS p FROM table_events WHERE table_id = $1 ORDER BY seq", table)
    finally:
        await conn.close()
    hands = [json.loads(r["p"]) for r in rows]
    charged = [e for e in hands if e["type"] == "absent_charged" and e["player"] == "s4"]
    standings = [e for e in hands if e["type"] == "hand_standings"]
    in_play = [s for s in standings if "s4" in s["stacks"]]
    assert charged and len(charged) == len(in_play) + any(e["type"] == "player_eliminated" and e["player"] == "s4"
                                                          for e in hands)
    assert all(c["amount"] == 10 for c in charged[:-1])
    assert [s["stacks"]["s4"] for s in in_play] == [200 - 10 * (i + 1) for i in range(len(in_play))]
    wallets = await balances(tour_server.db_url, "wallet:s")
    assert wallets[f"wallet:{winner}:EUR"] == 20_000 - 5000 - 1000 + 25_000  # fee: 10%, minimum EUR 10
    assert await sums(tour_server.db_url) == {c: 0 for c in await sums(tour_server.db_url)}
    assert set((await balances(tour_server.db_url, f"points:{tid}:")).values()) == {0}
    assert await floor.ledger_problems() == []
    for c in [director, *players]:
        await c.close()


@pytest.fixture
async def kill_db(pg_url: str):
    """Its own database: the server under test is killed and started again on it."""
    async with new_database(pg_url, "tkill") as url:
        yield url


async def test_a_kill_9_mid_phase_resumes_with_nothing_lost(kill_db, tmp_path_factory):
    """Bots on two RNG tables; the server is killed -9 in the middle of the elimination phase.
    After the restart each table voids its hand in play (stakes back), the tournament rests
    until the director resumes it, and it plays to the end: every point and euro accounted for."""
    db_url = kill_db
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("tour-kill"), CASINO_BETTING_SECONDS="2",
                        CASINO_DECISION_SECONDS="2")
    srv.start()
    floor, tid = Floor(srv), "crash-cup"
    director = await floor.account("k-director", "director")
    players = [await floor.account(f"k{i}", chips=50_000, currency="EUR") for i in range(8)]
    spec = {"name": "Crash Cup", "buy_in": 10_000, "starts_at": int(time.time()) + 3600, "shoes": 2, "decks": 2,
            "min_bet": 10, "max_bet": 40, "max_entrants": 14, "max_tables": 2, "finalists": 4}
    await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
    await tournament_command(director, tid, {"type": "open_registration"})
    for p in players:
        await tournament_command(p, tid, {"type": "register"})
        await tournament_command(p, tid, {"type": "check_in"})
    bots = [TournamentBot(p, tid) for p in players]
    runs = [asyncio.create_task(b.run(timeout=300)) for b in bots]
    await director.connect()
    await director.subscribe(tid)
    await tournament_command(director, tid, {"type": "start"})
    await events_of(director, tid, "standings_updated", 3, timeout=60)  # a few hands into the phase
    srv.kill()
    for r in runs:
        r.cancel()
    for c in [director, *players]:
        await c.close()
    srv.start()
    director = await floor.account("k-director2", "director")
    await director.connect()
    await director.subscribe(tid, since=0)  # the whole history: the pause came at the restart
    (paused,) = await events_of(director, tid, "paused", timeout=60)
    assert "director" in paused["reason"]
    clients = [CasinoClient(srv.url) for _ in players]
    for c, p in zip(clients, players, strict=True):
        await c.login(p.user, PASSWORD)
    bots = [TournamentBot(c, tid) for c in clients]
    runs = [asyncio.create_task(b.run(timeout=300)) for b in bots]
    await tournament_command(director, tid, {"type": "resume"})
    (done,) = await events_of(director, tid, "finished", timeout=240)
    assert sum(done["prizes"].values()) == 8 * 10_000
    await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 60)
    assert await sums(db_url) == {c: 0 for c in await sums(db_url)}
    assert set((await balances(db_url, f"points:{tid}:")).values()) == {0}
    assert (await balances(db_url, f"prize_pool:{tid}:"))[f"prize_pool:{tid}:EUR"] == 0
    assert await floor.ledger_problems() == []
    for c in [director, *clients]:
        await c.close()
    srv.stop()


async def test_the_command_line_creates_and_runs_one(tour_floor, tour_server):
    """``casino tournament``: the director creates one and opens it, a player registers himself,
    ``show`` prints what the console sees; a refusal prints its problem and exits 1."""
    await tour_floor.account("c-director", "director")
    await tour_floor.account("c-ann", chips=50_000, currency="EUR")

    def cli(*args: str, user: str = "c-director") -> subprocess.CompletedProcess:
        env = {**os.environ, "CASINO_URL": tour_server.url, "CASINO_USER": user, "CASINO_PASSWORD": PASSWORD}
        return subprocess.run([sys.executable, "-m", "server.cli", "tournament", *args], env=env,
                              capture_output=True, text=True, timeout=60)

    made = cli("create", "clicup", "--name", "CLI Cup", "--buy-in", "150.00", "--starts-at", "2030-01-01T20:00")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["fee"] == 2000  # 10% of EUR 150 is below the EUR 20 minimum
    assert cli("send", "clicup", "open_registration").returncode == 0
    assert cli("send", "clicup", "register", user="c-ann").returncode == 0
    shown = json.loads(cli("show", "clicup").stdout)
    assert shown["view"]["status"] == "registration" and [e["player"] for e in shown["view"]["entrants"]] == ["c-ann"]
    again = cli("send", "clicup", "register", user="c-ann")
    assert again.returncode == 1 and json.loads(again.stderr)["code"] == "already_registered"
    assert (await balances(tour_server.db_url, "wallet:c-ann"))["wallet:c-ann:EUR"] == 50_000 - 15_000 - 2000


async def test_registration_closes_ten_minutes_before_the_start_and_a_cancel_refunds_everything(
        tour_floor, tour_server):
    """Art. 23: the server closes registration 10 minutes before the start by itself; a
    cancelled tournament gives every buy-in and fee back (wallet or desk alike, into the wallet)."""
    floor, tid = tour_floor, "soon"
    director = await floor.account("x-director", "director")
    cashier = await floor.cashier()
    ann = await floor.account("x-ann", chips=40_000, currency="EUR")
    bob = await floor.account("x-bob", "player", currency="EUR")
    spec = {"name": "Soon", "buy_in": 25_000, "starts_at": int(time.time()) + 600 + 3}
    created = await director.request("POST", "/tournaments", json={"id": tid, "spec": spec})
    assert created["status"] == "scheduled"
    await director.connect()
    await director.subscribe(tid)
    await tournament_command(director, tid, {"type": "open_registration"})

    async def status() -> tuple[str, str]:  # in the list, and in the tournament's own answer
        listed = {t["id"]: t["status"] for t in await ann.request("GET", "/tournaments")}
        return listed[tid], (await ann.request("GET", f"/tournaments/{tid}"))["tournament"]["status"]

    assert await status() == ("registration", "registration")
    await tournament_command(ann, tid, {"type": "register"})
    await tournament_command(cashier, tid, {"type": "register", "player": "x-bob", "source": "cashier"})
    (closed,) = await events_of(director, tid, "registration_closed", timeout=30)
    assert "10 minutes" in closed["reason"] and closed["by"].startswith("system-")
    assert await status() == ("closed", "closed")
    with pytest.raises(HTTPError) as late:
        await tournament_command(ann, tid, {"type": "register"})
    assert late.value.code in ("already_registered", "registration_closed")
    wallets = await balances(tour_server.db_url, "wallet:x-")
    assert wallets["wallet:x-ann:EUR"] == 40_000 - 25_000 - 2500  # the fee: 10% of EUR 250
    await tournament_command(director, tid, {"type": "cancel", "reason": "the room flooded"})
    await events_of(director, tid, "cancelled")
    assert await status() == ("cancelled", "cancelled")
    wallets = await balances(tour_server.db_url, "wallet:x-")
    assert wallets["wallet:x-ann:EUR"] == 40_000  # all of it back
    assert wallets["wallet:x-bob:EUR"] == 25_000 + 2500  # he paid at the desk: his money back to his wallet
    assert (await balances(tour_server.db_url, f"prize_pool:{tid}:"))[f"prize_pool:{tid}:EUR"] == 0
    with pytest.raises(HTTPError) as again:
        await tournament_command(director, tid, {"type": "cancel"})
    assert again.value.code == "tournament_cancelled"
    assert await floor.ledger_problems() == []
    for c in (director, cashier, ann, bob):
        await c.close()


def test_the_status_index_covers_the_status_events():
    """GET /tournaments finds each one's last status event through its own partial index: the
    migration's predicate must name exactly the kinds ``_STATUS_OF`` maps."""
    import re
    from pathlib import Path

    from server import tournaments

    sql = (Path(tournaments.__file__).parent / "migrations" / "0115_tournament_status_index.sql").read_text()
    assert set(re.findall(r"'([a-z_]+)'", sql)) == set(tournaments._STATUS_OF)
