"""The unclaimed register through a real server (issue 17; roulette Art. 19): a floor
player's wins the chef marks unclaimed are listed with their exact amount, only the
cashier pays one out (in cash, once, countersigned or not), and what nobody claims goes to
the table's float after the period once an inspector (the Controllore comunale) has
countersigned it, each with its ledger transfer; the ledger stays whole."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from games.db import create_pool
from games.errors import GameError
from server import unclaimed
from server.auth import Principal
from server.client import HTTPError

pytestmark = pytest.mark.slow

TABLE = "uc-roul"
REGISTER, BANK, CASH, FLOOR = (f"unclaimed:{TABLE}:CHF", f"bank:{TABLE}:CHF", "cashier:CHF",
                               f"floor:{TABLE}:CHF")


async def _balances(db_url: str) -> dict[str, int]:
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch("SELECT id, credits_posted - debits_posted AS b FROM ledger_accounts")
        return {r["id"]: r["b"] for r in rows}
    finally:
        await conn.close()


async def _currency_sums(db_url: str) -> dict[str, int]:
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch("SELECT currency, sum(credits_posted - debits_posted) AS s, "
                                "sum(credits_pending - debits_pending) AS p FROM ledger_accounts GROUP BY currency")
        return {r["currency"]: (int(r["s"]), int(r["p"])) for r in rows}
    finally:
        await conn.close()


async def _cli(db_url: str, *args: str, **env: str) -> tuple[int, str, str]:
    """``casino ...`` on the server's database, as an operator runs it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", *args, env={**os.environ, "DATABASE_URL": db_url, **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    return proc.returncode, out.decode(), err.decode()


async def _expire(db_url: str, *args: str) -> list[dict]:
    """``casino unclaimed expire`` on the server's database."""
    rc, out, err = await _cli(db_url, "unclaimed", "expire", *args)
    assert rc == 0, err
    return json.loads(out)


async def _refused(client, method: str, path: str, body=None) -> tuple[int, str]:
    with pytest.raises(HTTPError) as e:
        await client.request(method, path, json=body)
    return e.value.status, e.value.code


async def test_unclaimed_wins_are_listed_claimed_once_and_expire_to_the_float(floor, db_url):
    croupier = await floor.account("uc-croupier", "croupier")
    chef = await floor.account("uc-chef", "chef")
    ann = await floor.account("uc-ann", chips=10_000)
    inspector = await floor.account("uc-inspector", "inspector")
    inspector2 = await floor.account("uc-inspector2", "inspector")
    cashier = await floor.cashier()
    await floor.table("roulette", "campione", TABLE, staff=("uc-croupier", "uc-chef"))
    clients = (croupier, chef, ann, inspector, inspector2, cashier)
    try:
        for c in (croupier, chef):
            await c.connect()
            await c.subscribe(TABLE)
        # Spin 1: two floor players win on 3 (red, odd) and walk away from their chips.
        await croupier.play(TABLE, {"type": "open_spin"})
        await croupier.play(TABLE, {"type": "place_bet", "spot": "rouge", "amount": 2_000, "player": "floor:blue"})
        await croupier.play(TABLE, {"type": "place_bet", "spot": "impair", "amount": 1_000, "player": "floor:green"})
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 3, "source": "croupier"}):
            await croupier.play(TABLE, step)
        await chef.next_event(TABLE, "spin_settled")
        with pytest.raises(Exception) as r:  # Art. 19 is the chef's word, not the croupier's
            await croupier.play(TABLE, {"type": "mark_unclaimed", "player": "floor:blue"})
        assert getattr(r.value, "code", "") in ("not_allowed", "forbidden")
        await chef.play(TABLE, {"type": "mark_unclaimed", "player": "floor:blue"})
        await chef.play(TABLE, {"type": "mark_unclaimed", "player": "floor:green"})

        # The register lists both, with the exact amounts paid (stake back + win).
        items = await cashier.request("GET", f"/unclaimed?status=open&table={TABLE}")
        by_player = {it["player"]: it for it in items}
        assert set(by_player) == {"floor:blue", "floor:green"}
        blue, green = by_player["floor:blue"], by_player["floor:green"]
        assert (blue["amount"], green["amount"]) == (4_000, 2_000)
        for it in (blue, green):
            assert (it["table"], it["round"], it["left"], it["currency"], it["floor"]) == (TABLE, 1, "wins", "CHF",
                                                                                        True)
            assert it["recorded_by"] == "uc-chef" and it["status"] == "open"
            assert (it["countersigned_by"], it["countersigned_at"], it["awaiting_countersignature"]) == ("", "", False)
        before = await _balances(db_url)
        assert before[REGISTER] == 6_000
        assert await inspector.request("GET", "/unclaimed?status=open") == items  # oversight sees the same
        assert await cashier.request("GET", "/unclaimed?table=nowhere") == []

        # Nobody but the cashier pays out; nobody outside cashier and oversight reads the register.
        claim = f"/unclaimed/{blue['id']}/claim"
        for who in (ann, croupier, chef, inspector):
            assert await _refused(who, "POST", claim, {"player": "floor:blue"}) == (403, "forbidden")
        for who in (ann, croupier, chef):
            assert await _refused(who, "GET", "/unclaimed") == (403, "forbidden")
        assert await _refused(cashier, "POST", claim, {"player": "floor:green"}) == (422, "wrong_player")
        assert await _refused(cashier, "POST", "/unclaimed/u0000/claim", {"player": "floor:blue"}) == \
            (404, "unknown_unclaimed")
        assert await _balances(db_url) == before

        # The cashier pays blue in cash, with no countersignature (the chips are the player's):
        # exactly 4,000 from the register to the cashier's desk.
        paid = await cashier.request("POST", claim, json={"player": "floor:blue"})
        assert (paid["status"], paid["claimed_by"], paid["claimed_for"], paid["paid_to"]) == \
            ("claimed", "t-cashier", "floor:blue", CASH)
        after = await _balances(db_url)
        assert after[REGISTER] == before[REGISTER] - 4_000
        assert after[CASH] == before[CASH] + 4_000
        assert {k: v for k, v in after.items() if k not in (REGISTER, CASH)} == \
            {k: v for k, v in before.items() if k not in (REGISTER, CASH)}
        assert await _refused(cashier, "POST", claim, {"player": "floor:blue"}) == (409, "already_claimed")
        assert await _balances(db_url) == after
        audit = await inspector.request("GET", f"/audit?target={blue['id']}")
        assert [(a["actor"], a["action"], a["detail"]["amount"]) for a in audit] == \
            [("t-cashier", "unclaimed.claim", 4_000)]

        # Expiry: nothing is due today (30 days by default). 31 days on green is due, but no
        # inspector has countersigned it: it stays open in the register, the ledger untouched.
        assert await _expire(db_url) == []
        later = (datetime.now(UTC) + timedelta(days=31)).isoformat()
        rc, out, err = await _cli(db_url, "unclaimed", "expire", "--as-of", later)
        assert (rc, json.loads(out)) == (0, []) and "await an inspector's countersignature" in err and \
            green["id"] in err
        assert await _balances(db_url) == after
        rc, out, err = await _cli(db_url, "unclaimed", "list", "--status", "open", CASINO_UNCLAIMED_DAYS="0")
        assert rc == 0, err
        assert [(it["id"], it["awaiting_countersignature"]) for it in json.loads(out)] == [(green["id"], True)]

        # The countersignature (Art. 19: "registrate sia dal capo che dal Controllore comunale"):
        # an inspector's alone, never by whoever recorded the item, once per item.
        sign = f"/unclaimed/{green['id']}/countersign"
        for who in (ann, croupier, chef, cashier):
            assert await _refused(who, "POST", sign) == (403, "forbidden")
        assert await _refused(inspector, "POST", "/unclaimed/u0000/countersign") == (404, "unknown_unclaimed")
        assert await _refused(inspector, "POST", claim.replace("/claim", "/countersign")) == (409, "already_claimed")
        # The chef in an inspector's role (no route changes a role: straight to the server's code).
        pool = await create_pool(db_url, min_size=1, max_size=1)
        try:
            with pytest.raises(GameError) as own:
                await unclaimed.countersign(pool, Principal("uc-chef", "inspector"), green["id"])
            assert own.value.code == "own_unclaimed"
        finally:
            await pool.close()
        signed = await inspector.request("POST", sign)
        assert (signed["id"], signed["status"], signed["countersigned_by"], signed["recorded_by"]) == \
            (green["id"], "open", "uc-inspector", "uc-chef")
        assert signed["countersigned_at"] and not signed["awaiting_countersignature"]
        assert await inspector.request("POST", sign) == signed  # idempotent for the same inspector
        assert await _refused(inspector2, "POST", sign) == (409, "already_countersigned")
        assert [it for it in await cashier.request("GET", "/unclaimed?status=open") if it["id"] == green["id"]] == \
            [signed]
        assert await _balances(db_url) == after  # a signature moves no money
        assert [(a["actor"], a["role"], a["action"]) for a in await inspector.request(
            "GET", f"/audit?target={green['id']}")] == [("uc-inspector", "inspector", "unclaimed.countersign")]

        # Countersigned, 31 days on, green goes to the float: once.
        expired = await _expire(db_url, "--as-of", later)
        assert [(it["id"], it["status"], it["paid_to"], it["amount"]) for it in expired] == \
            [(green["id"], "expired", BANK, 2_000)]
        assert await _expire(db_url, "--as-of", later) == []  # idempotent
        end = await _balances(db_url)
        assert end[REGISTER] == 0
        assert end[BANK] == after[BANK] + 2_000
        assert end[CASH] == after[CASH] and end[FLOOR] == after[FLOOR]
        assert await _refused(cashier, "POST", f"/unclaimed/{green['id']}/claim", {"player": "floor:green"}) == \
            (409, "already_expired")
        assert [it["id"] for it in await cashier.request("GET", "/unclaimed?status=claimed")] == [blue["id"]]
        assert [it["id"] for it in await cashier.request("GET", "/unclaimed?status=expired")] == [green["id"]]
        assert await cashier.request("GET", "/unclaimed?status=open") == []
        audit = await inspector.request("GET", f"/audit?target={green['id']}")
        assert [a["action"] for a in audit] == ["unclaimed.expire", "unclaimed.countersign"]  # newest first
        assert (audit[0]["detail"]["recorded_by"], audit[0]["detail"]["countersigned_by"]) == \
            ("uc-chef", "uc-inspector")
        assert await _refused(inspector2, "POST", sign) == (409, "already_countersigned")
        assert await inspector.request("POST", sign) == (await cashier.request(
            "GET", "/unclaimed?status=expired"))[0]  # the same inspector again: unchanged

        assert (await ann.balance())["available"] == 10_000  # no wallet touched
        assert await floor.ledger_problems() == []
        rc, out, err = await _cli(db_url, "ledger", "check")
        assert rc == 0 and out.startswith("ledger ok"), (out, err)
        assert all(v == (0, 0) for v in (await _currency_sums(db_url)).values())
    finally:
        for c in clients:
            await c.close()


async def test_a_blackjack_floor_players_wins_go_to_the_same_register(floor, db_url):
    """Campione Art. 37, through the server: floor:ann's CHF 10.00 on 20 and floor:bo's on 18
    (Campione: two boxes at least) against a dealer who busts (6, 10, 10) are each paid 10.00
    back and 10.00 won; ann walks away: the chef records her 2,000, the register lists it and
    the cashier pays it out in cash."""
    t = "uc-bj"
    croupier = await floor.account("uc-bj-croupier", "croupier")
    chef = await floor.account("uc-bj-chef", "chef")
    cashier = await floor.cashier()
    await floor.table("blackjack", "campione", t, staff=("uc-bj-croupier", "uc-bj-chef"))
    try:
        for c in (croupier, chef):
            await c.connect()
            await c.subscribe(t)
        await croupier.play(t, {"type": "shuffle"})
        await croupier.play(t, {"type": "cut", "at": 150})
        for box, who in ((1, "floor:ann"), (2, "floor:bo")):
            await croupier.play(t, {"type": "place_bet", "box": box, "amount": 1_000, "player": who})
        await croupier.play(t, {"type": "close_bets"})
        for card, box in ((9, 1), (8, 2), (18, 0), (35, 1), (34, 2)):  # 10S 9S, the dealer's 6H, 10D 9D
            await croupier.play(t, {"type": "card", "card": card, "box": box})
        for box in (1, 2):
            await croupier.play(t, {"type": "stand", "box": box, "hand": 0})
        for card in (48, 22):  # the dealer draws 10C 10H: 26, bust
            await croupier.play(t, {"type": "card", "card": card, "box": 0})
        await chef.next_event(t, "round_settled")
        await chef.play(t, {"type": "mark_unclaimed", "player": "floor:ann"})
        items = await cashier.request("GET", f"/unclaimed?status=open&table={t}")
        assert [(it["player"], it["amount"], it["left"]) for it in items] == [("floor:ann", 2_000, "wins")]
        before = await _balances(db_url)
        await cashier.request("POST", f"/unclaimed/{items[0]['id']}/claim", json={"player": "floor:ann"})
        after = await _balances(db_url)
        assert after[f"unclaimed:{t}:CHF"] == before[f"unclaimed:{t}:CHF"] - 2_000
        assert after[CASH] == before[CASH] + 2_000
        assert await floor.ledger_problems() == []
    finally:
        for c in (croupier, chef, cashier):
            await c.close()
