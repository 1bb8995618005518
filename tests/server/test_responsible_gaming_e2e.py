"""Responsible gaming through a real server (issue 17): self-exclusion and cool-off (login
refused, even after a restart; open sockets closed; a cool-off lapses, a self-exclusion is
lifted by the desk only after its end), deposit limits (lower at once, higher after the
cooling period; a deposit over a limit refused with what is still allowed, nothing moved),
the age/ID check (a self-registered player deposits only once verified), and the reality
check and session time limit over the websocket (a "minute" is a second here)."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from server.client import CasinoClient, HTTPError

from .conftest import PASSWORD, Floor, ServerProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("rg"), CASINO_REALITY_CHECK_UNIT_SECONDS="1",
                        CASINO_LIMIT_RAISE_HOURS="24")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def floor(server) -> Floor:
    return Floor(server)


async def refused(call) -> tuple[int, dict]:
    with pytest.raises(HTTPError) as e:
        await call
    return e.value.status, e.value.problem


async def login_refusal(server: ServerProcess, user: str) -> tuple[int, dict]:
    c = CasinoClient(server.url)
    try:
        return await refused(c.login(user, PASSWORD))
    finally:
        await c.close()


async def sql(server: ServerProcess, query: str, *args):
    conn = await asyncpg.connect(server.db_url)
    try:
        return await conn.fetch(query, *args)
    finally:
        await conn.close()


async def backdate_deposits(server: ServerProcess, user: str, interval: str) -> None:
    """Move a player's deposits back in time (the ledger refuses any UPDATE: its trigger is
    off for this one statement, in this test's own database)."""
    conn = await asyncpg.connect(server.db_url)
    try:
        async with conn.transaction():
            await conn.execute("ALTER TABLE ledger_transfers DISABLE TRIGGER ledger_transfers_immutable")
            await conn.execute(f"UPDATE ledger_transfers SET at = now() - interval '{interval}' "
                               "WHERE credit = $1 AND code = 'deposit'", f"wallet:{user}:CHF")
            await conn.execute("ALTER TABLE ledger_transfers ENABLE TRIGGER ledger_transfers_immutable")
    finally:
        await conn.close()


async def deposit(floor: Floor, user: str, amount: int, op_id: str) -> dict:
    cashier = await floor.cashier()
    try:
        return await cashier.request("POST", "/cashier/deposit", json={"user": user, "amount": amount, "id": op_id})
    finally:
        await cashier.close()


async def closed_with(client: CasinoClient, seconds: float = 10) -> int:
    return await asyncio.wait_for(asyncio.shield(client.closed), seconds)


async def test_self_exclusion_refuses_login_closes_sockets_and_survives_a_restart(server, floor):
    ann = await floor.account("rg-ann", chips=1_000)
    other = CasinoClient(server.url)
    await other.login("rg-ann", PASSWORD)  # a second session of hers, with its socket
    try:
        await ann.connect()
        await other.connect()
        # Unknown periods are refused; a player may not exclude another.
        status, p = await refused(ann.request("POST", "/me/exclusion", json={"kind": "self_exclusion",
                                                                            "period": "2d"}))
        assert (status, p["code"]) == (422, "invalid_period")
        out = await ann.request("POST", "/me/exclusion", json={"kind": "self_exclusion", "period": "6m"})
        assert out["kind"] == "self_exclusion" and out["period"] == "6m" and out["set_by"] == "rg-ann"
        # Every open socket of hers closes (4011), her token no longer works, nor a new login.
        assert await closed_with(ann) == 4011
        assert await closed_with(other) == 4011
        status, p = await refused(ann.me())
        assert (status, p["code"]) == (403, "self_excluded") and p["until"] == out["until"]
        status, p = await login_refusal(server, "rg-ann")
        assert (status, p["code"]) == (403, "self_excluded") and p["until"] == out["until"]
        # The pages' login too.
        async with __import__("httpx").AsyncClient(base_url=server.url) as http:
            r = await http.post("/auth/session", json={"user": "rg-ann", "password": PASSWORD},
                                headers={"Origin": server.url})
        assert (r.status_code, r.json()["code"]) == (403, "self_excluded")
        # A wrong password still says only "bad credentials".
        c = CasinoClient(server.url)
        status, p = await refused(c.login("rg-ann", "wrong-password"))
        await c.close()
        assert p["code"] == "bad_credentials"
        # A new socket with her old token is refused (4011).
        await ann.connect()
        assert await closed_with(ann) == 4011
        # She cannot shorten it with a cool-off (she cannot even ask), and the desk cannot lift
        # it before its end; no chips go in meanwhile.
        cashier = await floor.cashier()
        try:
            status, p = await refused(cashier.request("DELETE", "/accounts/rg-ann/exclusion"))
            assert (status, p["code"]) == (409, "exclusion_in_force")
            status, p = await refused(cashier.request("POST", "/cashier/deposit",
                                                      json={"user": "rg-ann", "amount": 100, "id": "rg-ann-2"}))
            assert (status, p["code"]) == (403, "self_excluded")
        finally:
            await cashier.close()
    finally:
        await ann.close()
        await other.close()

    # A restart on the same database: still excluded.
    server.stop()
    server.start()
    status, p = await login_refusal(server, "rg-ann")
    assert (status, p["code"]) == (403, "self_excluded")

    # Its period over (moved in the database), it holds until the desk lifts it at her request.
    await sql(server, "UPDATE player_exclusions SET until = now() - interval '1 minute' WHERE user_id = 'rg-ann'")
    status, p = await login_refusal(server, "rg-ann")
    assert (status, p["code"]) == (403, "self_excluded") and "ended" in p["detail"]
    inspector = await floor.account("rg-inspector", role="inspector")
    try:
        await inspector.request("DELETE", "/accounts/rg-ann/exclusion")
    finally:
        await inspector.close()
    ann = CasinoClient(server.url)
    await ann.login("rg-ann", PASSWORD)
    await ann.close()
    actions = [r["action"] for r in await sql(server, "SELECT action FROM audit_log WHERE target = 'rg-ann' "
                                                      "ORDER BY id")]
    assert "player.self_exclusion" in actions and "player.exclusion_lifted" in actions


async def test_the_desk_excludes_a_player_who_asks(server, floor):
    bob = await floor.account("rg-bob")
    await bob.connect()
    cashier = await floor.cashier()
    try:
        status, p = await refused(cashier.request("POST", "/accounts/rg-bob/exclusion", json={"period": "24h"}))
        assert (status, p["code"]) == (422, "invalid_period")  # the desk sets self-exclusions, not cool-offs
        out = await cashier.request("POST", "/accounts/rg-bob/exclusion", json={"period": "indefinite"})
        assert out["period"] == "indefinite" and out["set_by"] == "t-cashier"
        assert await closed_with(bob) == 4011
        status, p = await login_refusal(server, "rg-bob")
        assert (status, p["code"]) == (403, "self_excluded") and "indefinitely" in p["detail"]
        # A shorter one asked for later does not replace it.
        again = await cashier.request("POST", "/accounts/rg-bob/exclusion", json={"period": "1y"})
        assert again["period"] == "indefinite"
    finally:
        await cashier.close()
        await bob.close()


async def test_a_cool_off_refuses_then_lapses(server, floor):
    cleo = await floor.account("rg-cleo")
    try:
        out = await cleo.request("POST", "/me/exclusion", json={"kind": "cool_off", "period": "24h"})
        assert out["kind"] == "cool_off"
        status, p = await login_refusal(server, "rg-cleo")
        assert (status, p["code"]) == (403, "cooling_off") and p["until"] == out["until"]
        status, p = await refused(cleo.me())
        assert p["code"] == "cooling_off"
        # The desk cannot end it early either.
        cashier = await floor.cashier()
        try:
            status, p = await refused(cashier.request("DELETE", "/accounts/rg-cleo/exclusion"))
            assert (status, p["code"]) == (409, "exclusion_in_force")
        finally:
            await cashier.close()
    finally:
        await cleo.close()
    # A day later (moved in the database) it has lapsed by itself.
    await sql(server, "UPDATE player_exclusions SET until = now() - interval '1 second' WHERE user_id = 'rg-cleo'")
    cleo = CasinoClient(server.url)
    try:
        await cleo.login("rg-cleo", PASSWORD)
        assert (await cleo.me())["id"] == "rg-cleo"
    finally:
        await cleo.close()


async def test_deposit_limits(server, floor):
    dan = await floor.account("rg-dan", chips=5_000)
    try:
        limits = await dan.request("PUT", "/me/limits", json={"daily": 10_000, "weekly": 20_000})
        by = {d["period"]: d for d in limits["deposit"]}
        assert by["daily"]["amount"] == 10_000 and by["weekly"]["amount"] == 20_000
        assert by["monthly"]["amount"] is None and by["daily"]["pending"] is None
        # 5,000 deposited today already: 5,000 more are allowed, not 6,000; nothing moves.
        before = await dan.balance()
        status, p = await refused(deposit(floor, "rg-dan", 6_000, "rg-dan-1"))
        assert (status, p["code"], p["allowed"], p["period"]) == (422, "deposit_limit", 5_000, "daily")
        assert await dan.balance() == before
        assert not await sql(server, "SELECT 1 FROM ledger_transfers WHERE id = 'rg-dan-1'")
        await deposit(floor, "rg-dan", 5_000, "rg-dan-2")
        status, p = await refused(deposit(floor, "rg-dan", 1, "rg-dan-3"))
        assert (p["code"], p["allowed"]) == ("deposit_limit", 0)
        # A replay of a deposit already made is answered again, not refused.
        assert (await deposit(floor, "rg-dan", 5_000, "rg-dan-2"))["id"] == "rg-dan-2"

        # Lowering: at once. Raising: only after the cooling period, shown with its date.
        limits = await dan.request("PUT", "/me/limits", json={"daily": 50_000, "weekly": 15_000})
        by = {d["period"]: d for d in limits["deposit"]}
        assert by["weekly"]["amount"] == 15_000 and by["weekly"]["pending"] is None
        assert by["daily"]["amount"] == 10_000 and by["daily"]["pending"] == 50_000
        assert by["daily"]["pending_from"]
        assert (await dan.request("GET", "/me/limits"))["deposit"] == limits["deposit"]
        # Yesterday's deposits (moved in the database) no longer count for the day, but do
        # for the week: 15,000 - 10,000.
        await backdate_deposits(server, "rg-dan", "25 hours")
        status, p = await refused(deposit(floor, "rg-dan", 6_000, "rg-dan-4"))
        assert (p["code"], p["allowed"], p["period"]) == ("deposit_limit", 5_000, "weekly")
        # The cooling period over (moved in the database), the raise is in force.
        await sql(server, "UPDATE deposit_limits SET pending_from = now() - interval '1 second' "
                          "WHERE user_id = 'rg-dan' AND period = 'daily'")
        by = {d["period"]: d for d in (await dan.request("GET", "/me/limits"))["deposit"]}
        assert by["daily"]["amount"] == 50_000 and by["daily"]["pending"] is None
        # Removing a limit is a raise too: it waits.
        limits = await dan.request("PUT", "/me/limits", json={"daily": 50_000})
        by = {d["period"]: d for d in limits["deposit"]}
        assert by["weekly"]["amount"] == 15_000 and by["weekly"]["pending"] is None and by["weekly"]["pending_from"]
        status, p = await refused(dan.request("PUT", "/me/limits", json={"daily": -1}))
        assert status == 400 or p["code"] == "invalid_limit"
    finally:
        await dan.close()
    actions = [r["action"] for r in await sql(server, "SELECT action FROM audit_log WHERE target = 'rg-dan'")]
    assert actions.count("player.limits") == 3


async def test_a_self_registered_player_deposits_only_once_verified(server, floor):
    eve = CasinoClient(server.url)
    try:
        await eve.register("rg-eve", PASSWORD)
        status, p = await refused(deposit(floor, "rg-eve", 1_000, "rg-eve-1"))
        assert (status, p["code"]) == (422, "not_verified")
        assert (await eve.balance())["posted"] == 0
        # Only the cashier verifies, and says what he checked.
        inspector = await floor.account("rg-inspector2", role="inspector")
        cashier = await floor.cashier()
        try:
            status, p = await refused(inspector.request("POST", "/accounts/rg-eve/verification",
                                                        json={"checked": "passport"}))
            assert status == 403
            status, p = await refused(cashier.request("POST", "/accounts/rg-eve/verification",
                                                      json={"checked": " "}))
            assert p["code"] == "invalid_verification"
            await cashier.request("POST", "/accounts/rg-eve/verification",
                                  json={"checked": "passport CH X1234567, born 1990-02-03"})
        finally:
            await inspector.close()
            await cashier.close()
        await deposit(floor, "rg-eve", 1_000, "rg-eve-2")
        assert (await eve.balance())["posted"] == 1_000
    finally:
        await eve.close()


async def test_reality_check_and_session_limit(server, floor):
    fay = await floor.account("rg-fay", chips=2_000)
    try:
        status, p = await refused(fay.request("PUT", "/me/limits", json={"session_limit_minutes": 0}))
        assert p["code"] == "invalid_limit"
        # A "minute" is a second on this server: a reality check every 1, the session over at 4.
        await fay.request("PUT", "/me/limits", json={"reality_check_minutes": 1, "session_limit_minutes": 4})
        await fay.connect()
        code = await closed_with(fay, 15)
        checks = [f for f in fay.frames if f["type"] == "reality_check"]
        assert code == 4010
        assert [c["minutes"] for c in checks][:3] == [1, 2, 3]
        assert all(c["net"] == 0 and c["currency"] == "CHF" and c["since"] for c in checks)
    finally:
        await fay.close()


async def test_the_reality_check_counts_his_play_not_the_cashier(server, floor):
    """``net`` is what his play won or lost since he connected: a spin lost (2,500) counts, the
    chips he bought meanwhile (5,000) do not."""
    croupier = await floor.account("rg-rc-croupier", "croupier")
    gus = await floor.account("rg-gus", chips=10_000)
    cashier = await floor.cashier()
    table = "rg-rc"
    await floor.table("roulette", "campione", table, staff=("rg-rc-croupier",))
    try:
        await gus.request("PUT", "/me/limits", json={"reality_check_minutes": 1})
        for c in (croupier, gus):
            await c.connect()
            await c.subscribe(table)
        await croupier.play(table, {"type": "open_spin"})
        await gus.bet(table, "rouge", 2_000)
        await gus.bet(table, "plein 17", 500)
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 4, "source": "croupier"}):  # 4: black, both lose
            await croupier.play(table, step)
        await gus.next_event(table, "spin_settled")
        await cashier.request("POST", "/cashier/deposit", json={"user": "rg-gus", "amount": 5_000, "id": "rg-gus-2"})
        assert (await gus.balance())["available"] == 10_000 - 2_500 + 5_000

        def after() -> list[dict]:
            return [f for f in gus.frames if f["type"] == "reality_check" and f["net"] != 0]

        for _ in range(50):
            if after():
                break
            await asyncio.sleep(0.1)
        assert after() and after()[0]["net"] == -2_500
    finally:
        for c in (croupier, gus, cashier):
            await c.close()


async def test_the_pages_show_the_reality_check_and_stop_at_the_session_limit(server, floor, open_page):
    """At a table's page: the reality check appears in the message bar; at his session limit
    the socket closes (4010) and the page says so instead of connecting again."""
    hal = await floor.account("rg-hal", chips=2_000)
    await floor.table("roulette", "campione", "rg-page", mode="rng")
    await hal.request("PUT", "/me/limits", json={"reality_check_minutes": 1, "session_limit_minutes": 3})
    await hal.close()
    page = await open_page.as_user("rg-hal", PASSWORD, "/app/roulette.html?table=rg-page")
    await page.wait_for_selector("#messages .msg.reality:has-text('Reality check')", timeout=10_000)
    assert "neither won nor lost" in await page.inner_text("#messages")
    await page.wait_for_selector("#messages .msg.error:has-text('session limit is reached')", timeout=10_000)
    assert await page.inner_text("#conn") == "session-over"
    await asyncio.sleep(2)  # no new connection: the page stays off
    assert await page.inner_text("#conn") == "session-over"
    assert page.problems == []
