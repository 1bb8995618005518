"""An outsider's attack on tournaments through the real server: money (retries, races,
refusals, cancellations mid-hand), roles, the websocket protocol and robustness. After each
scenario the ledger is checked: every currency sums to 0, no points left anywhere, the
inspector's ledger check clean."""

from __future__ import annotations

import asyncio
import contextlib
import time

import asyncpg
import pytest

from loadtest.tournament_bots import TournamentBot, tournament_command
from server.client import CasinoClient, HTTPError, Rejected

from .conftest import PASSWORD, Floor, ServerProcess, first_refusal, until
from .test_many_processes_e2e import redis_url as redis_url  # (a fixture)
from .test_tournament_e2e import balances, events_of, sums

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rsrv(db_url, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("review"), CASINO_BETTING_SECONDS="1",
                        CASINO_DECISION_SECONDS="1")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def rfloor(rsrv) -> Floor:
    return Floor(rsrv)


def cup(**kw) -> dict:
    return {"name": "Review Cup", "buy_in": 10_000, "starts_at": int(time.time()) + 3600, "shoes": 1, "decks": 1,
            "min_bet": 10, "max_bet": 50, "max_entrants": 14, "max_tables": 2, **kw}


async def create(director: CasinoClient, tid: str, **kw) -> None:
    await director.request("POST", "/tournaments", json={"id": tid, "spec": cup(**kw)})
    await tournament_command(director, tid, {"type": "open_registration"})


async def enter_and_start(director: CasinoClient, tid: str, players: list[CasinoClient]):
    """Each player registers and checks in; the director follows the tournament and starts it
    with a bot playing for each: (the bots, their tasks)."""
    for p in players:
        await tournament_command(p, tid, {"type": "register"})
        await tournament_command(p, tid, {"type": "check_in"})
    await director.connect()
    await director.subscribe(tid)
    bots = [TournamentBot(p, tid) for p in players]
    runs = [asyncio.create_task(b.run(timeout=120)) for b in bots]
    await tournament_command(director, tid, {"type": "start"})
    return bots, runs


async def refused(client: CasinoClient, tid: str, command: dict, cid: str | None = None) -> HTTPError:
    with pytest.raises(HTTPError) as info:
        await tournament_command(client, tid, command, cid)
    return info.value


async def clean(floor: Floor, srv: ServerProcess, tid: str) -> None:
    """The ledger after a scenario: balanced, no points left (once the tables have carried out
    the last orders: a cancel's end reaches them a moment later), the inspector's check clean."""
    totals = await sums(srv.db_url)
    assert totals == dict.fromkeys(totals, 0), totals

    async def points_back() -> bool:
        # Every player's points and the pool: points a table still holds (a hand ending after a
        # cancel) leave the players at 0 and the pool short until the table hands them back.
        players = await balances(srv.db_url, f"points:{tid}:")
        pool = await balances(srv.db_url, f"points_pool:{tid}")
        return set(players.values()) <= {0} and set(pool.values()) <= {0}

    assert await until(points_back, 30)
    assert await floor.ledger_problems() == []
    inspector = await floor.account(f"{tid}-insp", "inspector")
    try:
        report = await inspector.request("GET", "/ledger/check")
        assert not report.get("problems"), report
    finally:
        await inspector.close()


async def view(client: CasinoClient, tid: str) -> dict:
    return (await client.request("GET", f"/tournaments/{tid}"))["view"]


# -- money ---------------------------------------------------------------------------------------


async def test_a_retried_cid_and_racing_registrations_pay_once(rfloor, rsrv):
    """One entry, one payment: the same cid sent again answers the first seq and moves
    nothing; eight registrations at once (new cids) take one buy-in + fee; a player who
    cannot pay is refused and leaves nothing behind (no entrant, no ledger movement)."""
    tid = "rv-money"
    director = await rfloor.account("rvm-dir", "director")
    ann = await rfloor.account("rvm-ann", chips=50_000, currency="EUR")
    bob = await rfloor.account("rvm-bob", chips=50_000, currency="EUR")
    poor = await rfloor.account("rvm-poor", chips=5_000, currency="EUR")
    await create(director, tid)
    first = await tournament_command(ann, tid, {"type": "register"}, cid="reg-1")
    again = await tournament_command(ann, tid, {"type": "register"}, cid="reg-1")
    assert again["seq"] == first["seq"]
    results = await asyncio.gather(*(tournament_command(bob, tid, {"type": "register"}) for _ in range(8)),
                                   return_exceptions=True)
    ok = [r for r in results if isinstance(r, dict)]
    assert len(ok) == 1, results
    assert {r.code for r in results if isinstance(r, HTTPError)} == {"already_registered"}
    wallets = await balances(rsrv.db_url, "wallet:rvm-")
    assert wallets["wallet:rvm-ann:EUR"] == wallets["wallet:rvm-bob:EUR"] == 50_000 - 10_000 - 2_000
    err = await refused(poor, tid, {"type": "register"})
    assert err.status in (400, 402, 409, 422) and err.code, err.problem
    assert (await balances(rsrv.db_url, "wallet:rvm-poor"))["wallet:rvm-poor:EUR"] == 5_000
    v = await view(director, tid)
    assert [e["player"] for e in v["entrants"]] == ["rvm-ann", "rvm-bob"]
    assert (await balances(rsrv.db_url, f"prize_pool:{tid}"))[f"prize_pool:{tid}:EUR"] == 20_000
    # The cashier's desk: the player's wallet is not touched.
    cashier = await rfloor.cashier()
    cid = await rfloor.account("rvm-cid", chips=1_000, currency="EUR")
    await tournament_command(cashier, tid, {"type": "register", "player": "rvm-cid", "source": "cashier"})
    assert (await balances(rsrv.db_url, "wallet:rvm-cid"))["wallet:rvm-cid:EUR"] == 1_000
    # Cancelled before the start: every buy-in and fee back, to the cent; again: refused.
    await tournament_command(director, tid, {"type": "cancel", "reason": "review"})
    err = await refused(director, tid, {"type": "cancel"})
    assert err.code == "tournament_cancelled"
    after = await balances(rsrv.db_url, "wallet:rvm-")
    assert after["wallet:rvm-ann:EUR"] == after["wallet:rvm-bob:EUR"] == 50_000
    assert after["wallet:rvm-cid:EUR"] == 1_000 + 12_000  # paid at the desk, refunded to his wallet
    assert after["wallet:rvm-poor:EUR"] == 5_000
    await clean(rfloor, rsrv, tid)
    for c in (director, ann, bob, poor, cashier, cid):
        await c.close()


async def test_the_cashier_registers_only_real_players(rfloor, rsrv):
    """Only a player stakes in a tournament: the cashier's desk may not enter an account that
    does not exist (its prize would go to a wallet nobody owns) nor a croupier, a director or
    an admin (staff never play; a croupier could deal his own table)."""
    tid = "rv-desk"
    director = await rfloor.account("rvd-dir", "director")
    await rfloor.account("rvd-crp", "croupier")
    cashier = await rfloor.cashier()
    await create(director, tid)
    codes = {}
    for who in ("rvd-nobody", "rvd-crp", "rvd-dir", "admin"):
        try:
            await tournament_command(cashier, tid, {"type": "register", "player": who, "source": "cashier"})
            codes[who] = "accepted"
        except HTTPError as exc:
            codes[who] = exc.code
    entrants = [e["player"] for e in (await view(director, tid))["entrants"]]
    with contextlib.suppress(HTTPError):  # (with a ghost entered, the cancel's refund has no wallet to go to)
        await tournament_command(director, tid, {"type": "cancel"})
    await cashier.close()
    await director.close()
    assert entrants == [], codes
    assert "accepted" not in codes.values(), codes


async def test_a_player_paid_at_the_desk_without_a_euro_wallet_is_refunded(rfloor, rsrv):
    """Art. 23 / the money: a player registered at the cashier's desk (cash) may have no EUR
    wallet (his account is in CHF); his refund (not admitted, or a cancellation) and his prize
    must still reach him (money.tournament_wallets says so: such wallets are opened). Today the
    director's start (refunding the absent one's buy-in) and the cancel are refused with
    unknown_account, so the tournament can neither start nor be cancelled."""
    tid = "rv-chf"
    director = await rfloor.account("rvh-dir", "director")
    ann = await rfloor.account("rvh-ann", chips=50_000, currency="EUR")
    bob = await rfloor.account("rvh-bob", chips=50_000, currency="EUR")
    await rfloor.account("rvh-chf", chips=10_000)  # a CHF account: no EUR wallet
    cashier = await rfloor.cashier()
    await create(director, tid)
    await tournament_command(cashier, tid, {"type": "register", "player": "rvh-chf", "source": "cashier"})
    for p in (ann, bob):
        await tournament_command(p, tid, {"type": "register"})
        await tournament_command(p, tid, {"type": "check_in"})
    outcome = {}
    for step in ({"type": "start"}, {"type": "cancel"}):
        try:
            await tournament_command(director, tid, step)
            outcome[step["type"]] = "accepted"
        except HTTPError as exc:
            outcome[step["type"]] = exc.code
    assert outcome["start"] == "accepted", outcome  # rvh-chf did not check in: not admitted, buy-in back
    assert outcome["cancel"] == "accepted", outcome
    assert (await balances(rsrv.db_url, "wallet:rvh-chf:EUR")).get("wallet:rvh-chf:EUR") == 12_000
    await clean(rfloor, rsrv, tid)
    for c in (director, ann, bob, cashier):
        await c.close()


# -- roles ---------------------------------------------------------------------------------------


async def test_who_may_send_what(rfloor, rsrv):
    """Each role sends only its own commands, over HTTP and the websocket, and a refusal
    changes nothing: a player registers only himself and only from his wallet; staff,
    inspectors and admins neither register nor start; a director pays with nobody's wallet;
    no client sends a table_report or a draw."""
    tid = "rv-roles"
    director = await rfloor.account("rvr-dir", "director")
    ann = await rfloor.account("rvr-ann", chips=50_000, currency="EUR")
    await rfloor.account("rvr-bob", chips=50_000, currency="EUR")
    others = {role: await rfloor.account(f"rvr-{role}", role) for role in ("croupier", "chef", "inspector")}
    admin = await rfloor.admin()
    cashier = await rfloor.cashier()
    await create(director, tid)
    before = await balances(rsrv.db_url, "wallet:rvr-")
    checks = [
        (ann, {"type": "register", "player": "rvr-bob"}, 403, "players_only"),
        (ann, {"type": "register", "source": "cashier"}, None, "source_not_allowed"),
        (ann, {"type": "register", "source": "bank_transfer", "reference": "X"}, None, "source_not_allowed"),
        (director, {"type": "register", "player": "rvr-bob"}, 403, "forbidden"),
        (cashier, {"type": "register", "player": "rvr-bob"}, None, "source_not_allowed"),  # the wallet: not his
        (cashier, {"type": "register", "player": "rvr-bob", "source": "bank_transfer"}, None, "reference_missing"),
        (others["croupier"], {"type": "register", "player": "rvr-bob", "source": "cashier"}, 403, "forbidden"),
        (others["chef"], {"type": "register"}, 403, "forbidden"),
        (others["inspector"], {"type": "register", "player": "rvr-bob", "source": "cashier"}, 403, "forbidden"),
        (admin, {"type": "register", "player": "rvr-bob", "source": "cashier"}, 403, "forbidden"),
        (others["croupier"], {"type": "start"}, 403, "forbidden"),
        (admin, {"type": "start"}, 403, "forbidden"),
        (ann, {"type": "start"}, 403, "forbidden"),
        (ann, {"type": "open_registration"}, 403, "forbidden"),
        (ann, {"type": "table_report", "table": f"{tid}-1-1", "phase": 1, "seq": 1}, 403, "forbidden"),
        (director, {"type": "table_report", "table": f"{tid}-1-1", "phase": 1, "seq": 1}, 403, "forbidden"),
        (director, {"type": "start", "draw": "00" * 32}, None, "invalid_command"),
        (ann, {"type": "register", "draw": "ab"}, None, "invalid_command"),
    ]
    got = []
    for client, command, status, code in checks:
        err = await refused(client, tid, command)
        got.append((client.user, command["type"], err.code, err.status))
        assert err.code == code, (client.user, command, err.problem)
        assert 400 <= err.status < 500 and err.status == (status or err.status), (client.user, command, err.problem)
    assert await balances(rsrv.db_url, "wallet:rvr-") == before
    assert (await view(director, tid))["entrants"] == []
    # The websocket: a cashier has no play there; a player may not relay a table's order.
    await ann.connect()
    await ann.subscribe(tid)
    with pytest.raises(Rejected) as ws_refusal:
        await ann.play(tid, {"type": "table_report", "table": f"{tid}-1-1", "phase": 1, "seq": 1})
    assert ws_refusal.value.code == "forbidden"
    await tournament_command(director, tid, {"type": "cancel"})
    await clean(rfloor, rsrv, tid)
    for c in (director, ann, admin, cashier, *others.values()):
        await c.close()


async def test_the_cashier_registers_over_the_websocket_as_over_http(rfloor, rsrv):
    """docs/tournaments.md: "Every step is a command to the tournament, the same over HTTP and
    over the websocket (play with the tournament's id)", and the cashier registers a player
    paying at the desk. Over HTTP he may; over the websocket check_table_role refuses him
    ("A cashier watches the tables but does not play or run them")."""
    tid = "rv-wsdesk"
    director = await rfloor.account("rvq-dir", "director")
    await rfloor.account("rvq-ann", chips=1_000, currency="EUR")
    cashier = await rfloor.cashier()
    await create(director, tid)
    await cashier.connect()
    await cashier.subscribe(tid)
    try:
        answer = await cashier.play(tid, {"type": "register", "player": "rvq-ann", "source": "cashier"})
    except Rejected as exc:
        answer = exc.answer
    await tournament_command(director, tid, {"type": "cancel"})
    await clean(rfloor, rsrv, tid)
    for c in (director, cashier):
        await c.close()
    assert answer.get("type") != "rejected", answer


# -- the protocol --------------------------------------------------------------------------------


async def test_the_websocket_subscribe_play_and_malformed_commands(rfloor, rsrv):
    """Subscribing to a tournament gives a snapshot and then every event; commands sent by
    websocket play are the HTTP ones; a malformed command gets a precise error and changes
    nothing (no entrant, no money)."""
    tid = "rv-ws"
    director = await rfloor.account("rvw-dir", "director")
    ann = await rfloor.account("rvw-ann", chips=50_000, currency="EUR")
    await create(director, tid)
    await ann.connect()
    await ann.subscribe(tid)
    snap = ann.snapshots[tid]
    assert snap["view"]["status"] == "registration" and "register" in snap["view"]["legal"]
    bad = [
        {"type": "register", "source": "crypto"},
        {"type": "register", "player": 7},
        {"type": "register", "player": "x" * 200},
        {"type": "register", "player": "a\nb"},
        {"type": "register", "draw": "zz"},
        {"type": "explode"},
        {"type": "expel"},  # no player
        {"player": "rvw-ann"},
    ]
    for command in bad:
        with pytest.raises(Rejected) as info:
            await ann.play(tid, command)
        assert info.value.code in ("malformed_command", "invalid_command", "malformed"), (command,
                                                                                        info.value.answer)
        assert info.value.answer.get("message"), info.value.answer
    assert (await view(director, tid))["entrants"] == []
    frame = await first_refusal(ann, '{"type": "play", "table": "rv-ws", "command": "register"}')
    assert frame["type"] in ("error", "rejected")
    await ann.play(tid, {"type": "register"})
    ev = await ann.next_event(tid, "registered", "entry_paid")
    assert ev["event"]["player"] == "rvw-ann"
    await ann.play(tid, {"type": "check_in"})
    await ann.next_event(tid, "checked_in")
    with pytest.raises(Rejected) as info:
        await ann.play(tid, {"type": "check_in"})
    assert info.value.code == "already_checked_in"
    await tournament_command(director, tid, {"type": "cancel"})
    await ann.next_event(tid, "cancelled")
    await clean(rfloor, rsrv, tid)
    for c in (director, ann):
        await c.close()


# -- play, cancel mid-hand -----------------------------------------------------------------------


async def test_cancel_mid_hand_returns_every_point_and_euro(rfloor, rsrv):
    """A tournament cancelled while its tables deal: each table ends after its hand, every
    stack goes back (PTS sums to 0, no points account left non-zero), every buy-in and fee
    back; a player may not relay a table's orders (tournament_seat, tournament_pause) himself,
    and checking in after the start is refused."""
    tid = "rv-cancel"
    director = await rfloor.account("rvc-dir", "director")
    players = [await rfloor.account(f"rvc-{i}", chips=30_000, currency="EUR") for i in range(5)]
    late = await rfloor.account("rvc-late", chips=30_000, currency="EUR")
    await create(director, tid, shoes=3, decks=2)
    for p in players:
        await tournament_command(p, tid, {"type": "register"})
        await tournament_command(p, tid, {"type": "check_in"})
    await tournament_command(late, tid, {"type": "register"})
    await director.connect()
    await director.subscribe(tid)
    bots = [TournamentBot(p, tid) for p in players]
    runs = [asyncio.create_task(b.run(timeout=120)) for b in bots]
    await tournament_command(director, tid, {"type": "start"})
    err = await refused(late, tid, {"type": "check_in"})
    assert err.code == "tournament_started"
    (phase,) = await events_of(director, tid, "phase_started")
    table = phase["tables"][0]["table"]
    await events_of(director, tid, "standings_updated", 2, timeout=40)
    me = players[0]
    for order in ({"type": "tournament_seat", "order": 99, "tournament": tid, "phase": 1, "shoes": 9,
                   "min_bet": 1, "max_bet": 1000, "seats": [{"box": 1, "player": me.user, "stack": 100_000}]},
                  {"type": "tournament_pause", "order": 99, "paused": True},
                  {"type": "tournament_end", "order": 99},
                  {"type": "tournament_expel", "order": 99, "player": players[1].user}):
        with pytest.raises(Rejected) as info:
            await me.play(table, order)
        assert info.value.code in ("forbidden", "server_only"), info.value.answer
    await tournament_command(director, tid, {"type": "cancel", "reason": "review"})
    await events_of(director, tid, "cancelled")

    async def all_back() -> bool:
        pts = await balances(rsrv.db_url, f"points:{tid}:")
        pool = await balances(rsrv.db_url, f"points_pool:{tid}")
        return bool(pts) and set(pts.values()) == {0} and set(pool.values()) == {0}

    assert await until(all_back, 30), (await balances(rsrv.db_url, f"points:{tid}:"),
                                       await balances(rsrv.db_url, f"points_pool:{tid}"))
    await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 30)
    assert not [b.errors for b in bots if b.errors]

    async def tables_done() -> bool:
        return not (await view(director, tid)).get("phase") or all(
            t["done"] for t in (await view(director, tid))["phase"]["tables"])

    assert await until(tables_done, 20)
    wallets = await balances(rsrv.db_url, "wallet:rvc-")
    assert set(wallets.values()) == {30_000}, wallets
    await clean(rfloor, rsrv, tid)
    for c in (director, late, *players):
        await c.close()


async def test_a_tournament_never_adopts_a_table_it_did_not_open(rfloor, rsrv):
    """A phase's table is the tournament's own: its ids ``<tournament>-<phase>-<n>`` are kept
    for it. A tournament whose tables would clash with a table already there is refused
    (it would otherwise send its orders to someone else's table and wait for ever), and once
    it exists nobody else may take those ids, a tournament or a cash table."""
    tid = "rv-col"
    director = await rfloor.account("rvx-dir", "director")
    await director.request("POST", "/tournaments", json={"id": f"{tid}-1-1", "spec": cup(name="Squatter")})
    with pytest.raises(HTTPError) as clash:
        await create(director, tid)
    assert clash.value.code == "table_exists"
    await create(director, "rv-own")
    with pytest.raises(HTTPError) as taken:
        await director.request("POST", "/tournaments", json={"id": "rv-own-2-1", "spec": cup(name="Squatter 2")})
    assert taken.value.code == "table_exists"
    admin = await rfloor.admin()
    with pytest.raises(HTTPError) as cash:
        await admin.request("POST", "/tables", json={"game": "blackjack", "profile": "titano", "id": "rv-own-1-3"})
    assert cash.value.code == "table_exists"
    for c in (director, admin):
        await c.close()


# -- robustness ----------------------------------------------------------------------------------


async def test_a_kill_9_right_after_the_start_loses_nothing(pg_url, tmp_path_factory):
    """kill -9 just after the start, before the tables exist: at the restart the tournament
    rests paused, its tables open, the director resumes and it plays to the end with every
    point and euro accounted for."""
    from helpers.databases import new_database

    async with new_database(pg_url, "rvkill") as db:
        srv = ServerProcess(db, tmp_path_factory.mktemp("rv-kill"), CASINO_BETTING_SECONDS="1",
                            CASINO_DECISION_SECONDS="1")
        srv.start()
        try:
            floor, tid = Floor(srv), "rv-kill"
            director = await floor.account("rvk-dir", "director")
            players = [await floor.account(f"rvk-{i}", chips=30_000, currency="EUR") for i in range(3)]
            await create(director, tid)
            for p in players:
                await tournament_command(p, tid, {"type": "register"})
                await tournament_command(p, tid, {"type": "check_in"})
            await tournament_command(director, tid, {"type": "start"})
            srv.kill()
            for c in (director, *players):
                await c.close()
            srv.start()
            director = await floor.account("rvk-dir2", "director")
            await director.connect()
            await director.subscribe(tid, since=0)
            await events_of(director, tid, "paused", timeout=30)
            clients = [CasinoClient(srv.url) for _ in players]
            for c, p in zip(clients, players, strict=True):
                await c.login(p.user, PASSWORD)
            bots = [TournamentBot(c, tid) for c in clients]
            runs = [asyncio.create_task(b.run(timeout=120)) for b in bots]
            await asyncio.sleep(1)
            await tournament_command(director, tid, {"type": "resume"})
            (done,) = await events_of(director, tid, "finished", timeout=90)
            assert sum(done["prizes"].values()) == 3 * 10_000
            await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 30)
            await clean(floor, srv, tid)
            for c in (director, *clients):
                await c.close()
        finally:
            srv.stop()


async def test_pause_between_hands_expel_then_resume(rfloor, rsrv):
    """Art. 27: a pause lets the hand in play finish and deals no other until the resume; an
    expelled player's points go back at once, he ranks last and wins nothing; the rest play
    on to the end with the whole pool paid."""
    tid = "rv-pause"
    director = await rfloor.account("rvp-dir", "director")
    players = [await rfloor.account(f"rvp-{i}", chips=30_000, currency="EUR") for i in range(3)]
    await create(director, tid, shoes=2)
    bots, runs = await enter_and_start(director, tid, players)
    (phase,) = await events_of(director, tid, "phase_started")
    table = phase["tables"][0]["table"]
    watcher = await rfloor.account("rvp-watch")
    await watcher.connect()
    assert await until(lambda: _subscribed(watcher, table), 20)
    await events_of(director, tid, "standings_updated", 1, timeout=40)
    err = await refused(director, tid, {"type": "resume"})
    assert err.code == "not_paused"
    await tournament_command(director, tid, {"type": "pause", "reason": "review"})
    await events_of(watcher, table, "tournament_paused")
    listed = {t["id"]: t["status"] for t in await watcher.request("GET", "/tournaments")}
    assert listed[tid] == "paused" == (await watcher.request("GET", f"/tournaments/{tid}"))["tournament"]["status"]
    await asyncio.sleep(4)  # the hand in play finishes (decisions time out in 1 s)

    def opened() -> int:
        return sum(1 for f in watcher.frames if f.get("table") == table and f.get("type") == "event"
                   and f["event"]["type"] == "round_opened")

    n = opened()
    await asyncio.sleep(3)
    assert opened() == n, "a hand was dealt during the pause"
    victim = players[1].user
    await tournament_command(director, tid, {"type": "expel", "player": victim, "reason": "passing chips"})
    (gone,) = await events_of(watcher, table, "player_expelled")
    assert gone["player"] == victim
    err = await refused(director, tid, {"type": "expel", "player": victim})
    assert err.code == "not_in_tournament"
    await tournament_command(director, tid, {"type": "resume"})
    (done,) = await events_of(director, tid, "finished", timeout=60)
    assert victim not in done["prizes"] and done["standings"][-1]["player"] == victim
    assert sum(done["prizes"].values()) == 3 * 10_000
    await asyncio.wait_for(asyncio.gather(*runs, return_exceptions=True), 30)
    await clean(rfloor, rsrv, tid)
    for c in (director, watcher, *players):
        await c.close()


async def _subscribed(client: CasinoClient, table: str) -> bool:
    try:
        await client.subscribe(table)
        return True
    except Rejected:
        return False


@pytest.fixture
async def own_db(pg_url: str):
    """A database of the test's own (the module's is served by ``rsrv``)."""
    from helpers.databases import new_database

    async with new_database(pg_url, "rvmp") as url:
        yield url


async def test_a_tournament_and_its_table_on_two_processes(own_db, redis_url, tmp_path_factory):
    """A tournament on one process (a), its players connected to the other (b): their
    registrations cross, the orders or the bets cross (wherever its table is served), the
    reports come back, and it finishes with every point and euro accounted for."""
    from server.placement import preferred

    from .conftest import owner_id
    from .test_many_processes_e2e import _processes

    a, b = _processes(own_db, redis_url, tmp_path_factory.mktemp("rv-two"), 2, CASINO_BETTING_SECONDS="1",
                      CASINO_DECISION_SECONDS="1")
    a.start()
    b.start()
    try:
        ids = [owner_id(a), owner_id(b)]
        tid = next(t for t in (f"rv-mp{i}" for i in range(10_000))
                   if preferred(t, ids) == ids[0] and preferred(f"{t}-1-1", ids) == ids[1])
        floor = Floor(a)
        director = await floor.account("rvmp-dir", "director")
        # The players are on the process that does not own the tournament (b): their
        # registrations cross to a; either the table is on b (the seat and end orders cross
        # from a) or on a (their bets cross from b).
        players = [await Floor(b).account(f"rvmp-{i}", chips=30_000, currency="EUR") for i in range(3)]
        await create(director, tid)
        bots, runs = await enter_and_start(director, tid, players)
        (done,) = await events_of(director, tid, "finished", timeout=60)
        owners = {t["id"]: t["owner"] for t in await director.tables()}
        tours = {t["id"]: t["owner"] for t in await director.request("GET", "/tournaments")}
        assert sum(done["prizes"].values()) == 3 * 10_000
        # Every player's socket, on the process that does not own the tournament, hears its end
        # there, and every bot stops (on it, or when it was out before).
        for p in players:
            await events_of(p, tid, "finished", timeout=30)
        final = director.last_seq[tid]
        for p in players:  # every seq of the tournament's channel after his snapshot, none missing
            await p.wait_seq(tid, final, timeout=15)
            seqs = [f["seq"] for f in p.frames if f.get("type") == "event" and f["table"] == tid]
            start = p.snapshots[tid]["seq"]
            assert [s for s in seqs if s <= final] == list(range(start + 1, final + 1)), (p.user, start, seqs)
        assert set(await asyncio.wait_for(asyncio.gather(*runs), 30)) <= {"finished", "eliminated"}
        assert sum(bt.hands for bt in bots) > 0 and not [bt.errors for bt in bots if bt.errors]
        assert tours[tid] == ids[0], (tours, owners)
        await clean(floor, a, tid)
        for c in (director, *players):
            await c.close()
    finally:
        a.stop()
        b.stop()


async def test_an_excluded_player_is_not_entered_from_his_socket_nor_at_the_desk(rfloor, rsrv):
    """An exclusion written where his process never heard of it (his socket stays open): his
    ``register`` over it is refused ``self_excluded`` and his wallet pays nothing; the cashier
    may not enter him for cash either. Lifted (a cool-off that has ended), he enters."""
    tid = "rv-excl"
    director = await rfloor.account("rve-dir", "director")
    ann = await rfloor.account("rve-ann", chips=50_000, currency="EUR")
    cashier = await rfloor.cashier()
    await create(director, tid)
    await ann.connect()
    await ann.subscribe(tid)
    db = await asyncpg.connect(rsrv.db_url)
    try:
        await db.execute("INSERT INTO player_exclusions (user_id, kind, period, until, set_by) "
                         "VALUES ('rve-ann', 'self_exclusion', '6m', now() + interval '180 days', 'rve-ann')")
        with pytest.raises(Rejected) as refused:
            await ann.play(tid, {"type": "register"})
        assert refused.value.code == "self_excluded"
        with pytest.raises(HTTPError) as desk:
            await tournament_command(cashier, tid, {"type": "register", "player": "rve-ann", "source": "cashier"})
        assert desk.value.code == "self_excluded"
        assert (await view(director, tid))["entrants"] == []
        assert (await balances(rsrv.db_url, "wallet:rve-ann"))["wallet:rve-ann:EUR"] == 50_000
        await db.execute("UPDATE player_exclusions SET kind = 'cool_off', until = now() - interval '1 second' "
                         "WHERE user_id = 'rve-ann'")
        await ann.play(tid, {"type": "register"})
        assert [e["player"] for e in (await view(director, tid))["entrants"]] == ["rve-ann"]
        await tournament_command(director, tid, {"type": "cancel"})
    finally:
        await db.close()
        for c in (director, ann, cashier):
            await c.close()
    await clean(rfloor, rsrv, tid)


async def test_an_entry_from_the_wallet_keeps_within_the_players_own_limits(rfloor, rsrv):
    """A buy-in and its fee, paid from the wallet, are money staked: Eve's stake limit of EUR
    120.00 a day takes one entry of the Review Cup (buy-in 100.00, fee 20.00) and not a second
    (refused ``stake_limit``, at most 0 more, nothing paid); once the first tournament is
    cancelled and both refunded, the second is taken."""
    first, second = "rv-lim-a", "rv-lim-b"
    director = await rfloor.account("rvl-dir", "director")
    eve = await rfloor.account("rvl-eve", chips=50_000, currency="EUR")
    await eve.request("PUT", "/me/limits", json={"stake": {"daily": 12_000}})
    for tid in (first, second):
        await create(director, tid)
    try:
        await tournament_command(eve, first, {"type": "register"})
        with pytest.raises(HTTPError) as refused:
            await tournament_command(eve, second, {"type": "register"})
        assert refused.value.code == "stake_limit" and "at most 0" in str(refused.value)
        assert (await balances(rsrv.db_url, "wallet:rvl-eve"))["wallet:rvl-eve:EUR"] == 50_000 - 12_000
        await tournament_command(director, first, {"type": "cancel"})
        await tournament_command(eve, second, {"type": "register"})
        assert [e["player"] for e in (await view(director, second))["entrants"]] == ["rvl-eve"]
        await tournament_command(director, second, {"type": "cancel"})
    finally:
        for c in (director, eve):
            await c.close()
    for tid in (first, second):
        await clean(rfloor, rsrv, tid)
