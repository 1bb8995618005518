"""Money at the felt through a real server (issue 12): a croupier enters chips for floor
players only, booked on the table's floor account; an RNG wheel refuses a bet after the
launch at once; a seated player who left loses his seat between rounds."""

from __future__ import annotations

import asyncpg
import pytest

from server.client import Rejected

from .conftest import ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(db_url, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("floor"), CASINO_SEAT_RELEASE_SECONDS="1",
                        CASINO_BETTING_SECONDS="2")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


async def _balance(db_url: str, account: str) -> int:
    conn = await asyncpg.connect(db_url)
    try:
        return await conn.fetchval("SELECT credits_posted - debits_posted FROM ledger_accounts WHERE id = $1", account)
    finally:
        await conn.close()


async def test_a_croupier_enters_floor_chips_never_an_online_wallets(floor, db_url):
    croupier = await floor.account("fl-croupier", "croupier")
    bob = await floor.account("fl-bob", chips=10_000)
    await floor.table("roulette", "campione", "fl-roul", staff=("fl-croupier",))
    try:
        for c in (croupier, bob):
            await c.connect()
            await c.subscribe("fl-roul")
        await croupier.play("fl-roul", {"type": "open_spin"})
        with pytest.raises(Rejected) as r:  # the audit's hole: bob's wallet, the croupier's word
            await croupier.play("fl-roul", {"type": "place_bet", "spot": "plein 17", "amount": 500, "player": "fl-bob"})
        assert r.value.code == "floor_only"
        with pytest.raises(Rejected) as r:
            await croupier.play("fl-roul", {"type": "place_announced", "announce": "voisins du zéro", "unit": 500,
                                            "player": "fl-bob"})
        assert r.value.code == "floor_only"
        await croupier.play("fl-roul", {"type": "place_bet", "spot": "rouge", "amount": 2_000, "player": "floor:blue"})
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 3, "source": "croupier"}):  # 3 is red
            await croupier.play("fl-roul", step)
        await bob.next_event("fl-roul", "spin_settled")
        assert await _balance(db_url, "floor:fl-roul:CHF") == 2_000  # the floor players won 2,000
        assert await _balance(db_url, "bank:fl-roul:CHF") == -2_000
        assert (await bob.balance())["available"] == 10_000  # untouched
        assert await floor.ledger_problems() == []
    finally:
        for c in (croupier, bob):
            await c.close()


async def test_an_rng_wheel_refuses_a_bet_after_the_launch_at_once(floor):
    cleo = await floor.account("fl-cleo", chips=10_000)
    await floor.table("roulette", "campione", "fl-rng", mode="rng")
    try:
        await cleo.connect()
        await cleo.subscribe("fl-rng")
        await cleo.next_event("fl-rng", "ball_launched", timeout=60)
        with pytest.raises(Rejected) as r:
            await cleo.bet("fl-rng", "rouge", 500)
        assert r.value.code in ("no_more_bets", "wrong_phase")  # launched, or already rien ne va plus
        assert (await cleo.balance())["available"] == 10_000
    finally:
        await cleo.close()


async def test_a_player_who_left_loses_his_seat_between_rounds(floor):
    dora = await floor.account("fl-dora", chips=10_000)
    eve = await floor.account("fl-eve", chips=10_000)
    await floor.table("blackjack", "titano", "fl-bj", mode="rng", min_bet=1_000, max_bet=10_000)
    try:
        for c in (dora, eve):
            await c.connect()
            await c.subscribe("fl-bj")
        await dora.sit("fl-bj", 4)
        seats = (await eve.request("GET", "/tables/fl-bj"))["view"]["seats"]  # boxes 1..7
        assert seats[3] == "fl-dora"
        await dora.disconnect()  # gone: after the house's time (1 s here) the seat is freed
        released = await eve.next_event("fl-bj", "seat_released", timeout=30)
        assert (released["event"]["player"], released["event"]["box"]) == ("fl-dora", 4)
        view = (await eve.request("GET", "/tables/fl-bj"))["view"]
        assert view["seats"][3] == ""
    finally:
        for c in (dora, eve):
            await c.close()


async def test_the_cashier_serves_players_only_and_never_takes_a_tables_ids(floor):
    """Only players hold wallets: no chips nor credit for staff (the inspector cannot grant
    himself a credit line); and a receipt id may not be one a table will need."""
    from server.client import HTTPError

    await floor.account("fl-gus", chips=1_000)
    inspector = await floor.account("fl-inspector", "inspector")
    cashier = await floor.cashier()
    try:
        for client, path, body, code in [
            (cashier, "/cashier/deposit", {"user": "fl-inspector", "amount": 500}, "not_a_player"),
            (cashier, "/cashier/cash-out", {"user": "fl-inspector", "amount": 500}, "not_a_player"),
            (inspector, "/credit", {"user": "fl-inspector", "limit": 100_000}, "not_a_player"),
            (cashier, "/cashier/deposit", {"user": "fl-gus", "amount": 1, "id": "fl-roul/s2-w7/void"}, "invalid_id"),
        ]:
            with pytest.raises(HTTPError) as e:
                await client.request("POST", path, json=body)
            assert (e.value.status, e.value.code) == (422, code), body
    finally:
        await inspector.close()
        await cashier.close()


async def test_names_a_person_could_confuse_are_refused(floor):
    from server.client import CasinoClient, HTTPError

    c, admin = CasinoClient(floor.server.url), await floor.admin()
    try:
        for name in ("Alice", "ａlice", "floorːblue", "é", "x" * 70, "bob\n"):
            with pytest.raises(HTTPError) as e:
                await c.register(name, "a-long-password")
            assert e.value.code in ("invalid_username", "invalid_text"), name
        # The server's own actor at a table or a tournament is "system-<id>" in events, recall
        # and the audit: nobody registers, nor is created, under such a name (an outside
        # tester registered "system-campione-roulette-1").
        for name in ("system-campione-roulette-1", "system"):  # ("system": the unclaimed expiries', ...)
            with pytest.raises(HTTPError) as e:
                await c.register(name, "a-long-password")
            assert (e.value.status, e.value.code) == (422, "reserved_username")
        with pytest.raises(HTTPError) as e:
            await admin.request("POST", "/accounts", json={"user": "system-x", "password": "a-long-password",
                                                           "role": "croupier"})
        assert (e.value.status, e.value.code) == (422, "reserved_username")
        assert (await c.register("systematic", "a-long-password"))["user"] == "systematic"
        with pytest.raises(HTTPError) as e:
            await admin.request("POST", "/tables", json={"game": "roulette", "profile": "campione", "id": "nl1\n"})
        assert e.value.code in ("invalid_table_id", "invalid_text")
        with pytest.raises(HTTPError) as e:
            await admin.request("POST", "/tables", json={"game": "roulette", "profile": "campione", "name": "x" * 101})
        assert e.value.status == 400
        with pytest.raises(HTTPError) as e:
            await admin.request("POST", "/tables", json={"game": "roulette", "profile": "campione",
                                                         "settings": {"anything": {"nested": [1]}}})
        assert e.value.code == "invalid_settings"
    finally:
        await c.close()
        await admin.close()
