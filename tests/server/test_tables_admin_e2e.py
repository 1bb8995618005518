"""Tables over HTTP, all or nothing (issue 12): a refused creation leaves nothing behind,
a table is closed and archived (never deleted: its history stays), and Art. 15's power to
suspend or close is the director's, or a chef's with the director's recorded authorisation."""

from __future__ import annotations

import contextlib

import asyncpg
import pytest

from server.client import HTTPError, Rejected

pytestmark = pytest.mark.slow


async def _count(db_url: str, sql: str) -> int:
    conn = await asyncpg.connect(db_url)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


async def test_a_refused_table_leaves_nothing_behind(floor, db_url):
    admin = await floor.admin()
    try:
        await admin.request("POST", "/tables", json={"game": "roulette", "profile": "campione", "id": "atom-1"})
        before = [await _count(db_url, "SELECT count(*) FROM ledger_accounts"),
                  await _count(db_url, "SELECT count(*) FROM casino_tables")]
        for body, code in [
            ({"game": "roulette", "profile": "campione", "id": "atom-1"}, "table_exists"),
            ({"game": "roulette", "profile": "campione", "settings": {"minimum": "five"}}, "invalid_settings"),
            # (bool("false") is True: a switch is a JSON boolean or nothing)
            ({"game": "roulette", "profile": "campione", "settings": {"doubled_plein": "false"}}, "invalid_settings"),
            ({"game": "blackjack", "profile": "titano", "settings": {"min_bet": 10, "max_bet": 5}}, "bad_limits"),
            ({"game": "roulette", "profile": "nowhere"}, "unknown_profile"),
            ({"game": "roulette", "profile": "campione", "currency": "PTS"}, "points_not_transferable"),
        ]:
            with pytest.raises(HTTPError) as e:
                await admin.request("POST", "/tables", json=body)
            assert e.value.code == code, body
        after = [await _count(db_url, "SELECT count(*) FROM ledger_accounts"),
                 await _count(db_url, "SELECT count(*) FROM casino_tables")]
        assert after == before
        # A table opens its bank, unclaimed register and floor account with it.
        assert await _count(db_url, "SELECT count(*) FROM ledger_accounts WHERE id LIKE '%:atom-1:%'") == 3
    finally:
        await admin.close()


async def test_an_account_in_points_is_refused_and_creates_nothing(floor, db_url):
    from server.client import CasinoClient

    c, admin = CasinoClient(floor.server.url), await floor.admin()
    try:
        with pytest.raises(HTTPError) as e:
            await c.register("pts-fan", "a-long-password", currency="PTS")
        assert e.value.status == 422
        with pytest.raises(HTTPError) as e:  # nor when a director or an admin opens it
            await admin.request("POST", "/accounts", json={"user": "pts-fan", "password": "a-long-password",
                                                           "role": "player", "currency": "PTS"})
        assert e.value.status == 422
        assert await _count(db_url, "SELECT count(*) FROM users WHERE id = 'pts-fan'") == 0
        assert await _count(db_url, "SELECT count(*) FROM ledger_accounts WHERE id LIKE 'wallet:pts-fan:%'") == 0
    finally:
        await c.close()
        await admin.close()


async def test_close_and_archive_returns_every_bet_and_keeps_the_history(floor):
    croupier = await floor.account("ar-croupier", "croupier")
    director = await floor.account("ar-director", "director")
    jo = await floor.account("jo", chips=10_000)
    await floor.table("roulette", "campione", "arch-roul", staff=("ar-croupier",))
    try:
        for c in (croupier, jo):
            await c.connect()
            await c.subscribe("arch-roul")
        await croupier.play("arch-roul", {"type": "open_spin"})
        await jo.bet("arch-roul", "rouge", 2_000)
        assert (await jo.balance())["pending"] == 2_000
        with pytest.raises(HTTPError) as e:  # Art. 15: the Direzione's, not the croupier's
            await croupier.request("POST", "/tables/arch-roul/archive", json={"reason": "end of day"})
        assert e.value.status == 403
        out = await director.request("POST", "/tables/arch-roul/archive", json={"reason": "end of day"})
        assert out["archived"] is True and out["running"] is False
        voided = await jo.next_event("arch-roul", "wager_voided")
        assert voided["event"]["amount"] == 2_000
        bal = await jo.balance()
        assert (bal["available"], bal["pending"]) == (10_000, 0)
        assert "arch-roul" not in [t["id"] for t in await jo.tables()]
        listed = await jo.request("GET", "/tables", params={"archived": "true"})
        assert [t["archived"] for t in listed if t["id"] == "arch-roul"] == [True]
        with pytest.raises(Rejected) as r:
            await jo.bet("arch-roul", "rouge", 500)
        assert r.value.code == "table_archived"
        with pytest.raises(HTTPError) as e:
            await director.request("POST", "/tables/arch-roul/archive", json={})
        assert e.value.code == "table_archived"
        # The history stays: the spin is recalled, the ledger is clean.
        steps = await director.request("GET", "/tables/arch-roul/rounds/spin-1")
        assert [s["kind"] for s in steps][-2:] == ["wager_voided", "table_closed"]
        assert await floor.ledger_problems() == []
    finally:
        for c in (croupier, director, jo):
            await c.close()


async def test_a_chef_suspends_only_with_the_directors_recorded_authorisation(floor):
    chef = await floor.account("au-chef", "chef")
    director = await floor.account("au-director", "director")
    kim = await floor.account("au-kim", chips=10_000)
    await floor.table("roulette", "campione", "auth-roul", staff=("au-chef",))
    try:
        for c in (chef, kim):
            await c.connect()
            await c.subscribe("auth-roul")
        await chef.play("auth-roul", {"type": "open_spin"})
        await kim.bet("auth-roul", "noir", 1_000)
        with pytest.raises(Rejected) as r:  # the client's own word is not an authorisation
            await chef.play("auth-roul", {"type": "suspend", "reason": "fire drill", "authorised_by": "au-director"})
        assert r.value.code == "missing_authorisation"
        with pytest.raises(HTTPError) as e:  # only the director grants it
            await chef.request("POST", "/tables/auth-roul/authorisations",
                               json={"chef": "au-chef", "action": "suspend", "reason": "fire drill"})
        assert e.value.status == 403
        out = await director.request("POST", "/tables/auth-roul/authorisations",
                                     json={"chef": "au-chef", "action": "suspend", "reason": "fire drill",
                                           "minutes": 30})
        assert [(a["chef"], a["action"], a["director"]) for a in out["authorisations"]] == [
            ("au-chef", "suspend", "au-director")]
        with pytest.raises(Rejected) as r:  # suspending is what it allows, not closing
            await chef.play("auth-roul", {"type": "close_table", "reason": "fire drill"})
        assert r.value.code == "missing_authorisation"
        await chef.play("auth-roul", {"type": "suspend", "reason": "fire drill"})
        suspended = await kim.next_event("auth-roul", "table_suspended")
        assert (suspended["event"]["by"], suspended["event"]["authorised_by"]) == ("au-chef", "au-director")
        assert (await kim.balance())["available"] == 10_000  # the bet came back (Art. 15)
        admin = await floor.admin()
        try:
            log = await admin.request("GET", "/audit", params={"target": "auth-roul"})
        finally:
            await admin.close()
        assert ("au-director", "table.authorise") in [(e["actor"], e["action"]) for e in log]
    finally:
        for c in (chef, director, kim):
            await c.close()


async def test_archiving_while_people_bet_and_reopen_leaves_nothing_held(floor):
    """The audit's race: a director reopening the wheel and a player betting while the table
    is archived. Sealed first, the table takes nothing but its closing command: every bet
    that got in is returned, none is left held."""
    import asyncio

    director = await floor.account("ar2-director", "director")
    mia = await floor.account("ar2-mia", chips=100_000)
    await floor.table("roulette", "campione", "race-roul")
    try:
        for c in (director, mia):
            await c.connect()
            await c.subscribe("race-roul")
        await director.play("race-roul", {"type": "open_spin"})
        stop = asyncio.Event()

        async def keep_at_it(client, command):
            while not stop.is_set():
                with contextlib.suppress(Rejected, ConnectionError):
                    await client.play("race-roul", command)
                await asyncio.sleep(0)

        spam = [asyncio.ensure_future(keep_at_it(mia, {"type": "place_bet", "spot": "rouge", "amount": 500})),
                asyncio.ensure_future(keep_at_it(director, {"type": "open_spin"}))]
        await asyncio.sleep(0.3)
        await director.request("POST", "/tables/race-roul/archive", json={"reason": "race"})
        stop.set()
        await asyncio.gather(*spam)
        bal = await mia.balance()
        assert (bal["pending"], bal["available"]) == (0, 100_000)
        assert await floor.ledger_problems() == []
    finally:
        for c in (director, mia):
            await c.close()
