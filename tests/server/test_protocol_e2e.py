"""The websocket protocol's guarantees over a real connection: bad input is refused with a
stable code and changes nothing, every role boundary holds, a retried command id is
answered again but applied once, and a reconnect resumes with nothing missed or twice."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import jwt
import pytest
import websockets

from server.client import CasinoClient, HTTPError, Rejected

from .conftest import CASHIER, JWT_SECRET, first_refusal

pytestmark = pytest.mark.slow

T, OTHER = "proto-roul", "proto-roul-2"


@pytest.fixture(scope="module")
async def people(floor):
    out = {
        "croupier": await floor.account("p-croupier", "croupier"),
        "stranger": await floor.account("p-croupier2", "croupier"),
        "chef": await floor.account("p-chef", "chef"),
        "inspector": await floor.account("p-inspector", "inspector"),
        "gina": await floor.account("gina", chips=50_000),
        "hugo": await floor.account("hugo", chips=50_000),
    }
    await floor.table("roulette", "campione", T, staff=("p-croupier", "p-chef"))
    await floor.table("roulette", "campione", OTHER, staff=("p-croupier2",))
    for c in out.values():
        await c.connect()
        await c.subscribe(T)
    await out["croupier"].play(T, {"type": "open_spin"})
    yield out
    for c in out.values():
        await c.close()


async def test_malformed_frames_are_refused_and_the_connection_survives(people):
    gina = people["gina"]
    assert (await first_refusal(gina, "{not json"))["code"] == "malformed"
    assert (await first_refusal(gina, json.dumps({"type": "dance", "cid": "x1"})))["code"] == "invalid_message"
    bad = await first_refusal(gina, json.dumps({"type": "subscribe", "cid": "x2", "table": 7}))
    assert (bad["type"], bad["code"], bad["cid"]) == ("rejected", "invalid_message", "x2")
    big = json.dumps({"type": "ping", "cid": "x" * 20_000})
    assert (await first_refusal(gina, big))["code"] == "frame_too_large"
    bad_cmd = await first_refusal(gina, json.dumps(
        {"type": "play", "cid": "x3", "table": T,
         "command": {"type": "place_bet", "spot": "plein 17", "amount": "ten"}}))
    assert bad_cmd["code"] == "invalid_command"
    with pytest.raises(Rejected) as r:
        await gina.play(T, {"type": "place_bet", "spot": "plein 99", "amount": 500})
    assert r.value.code == "number_out_of_range"
    with pytest.raises(Rejected) as r:
        await gina.play(OTHER, {"type": "place_bet", "spot": "rouge", "amount": 500})
    assert r.value.code == "not_subscribed"
    with pytest.raises(Rejected) as r:
        await gina.subscribe("no-such-table")
    assert r.value.code == "unknown_table"
    # Still connected, nothing changed.
    assert (await gina.command({"type": "ping"}))["type"] == "pong"
    assert (await gina.balance())["available"] == 50_000


async def test_every_role_boundary(people, floor):
    gina, hugo = people["gina"], people["hugo"]
    stranger, inspector, croupier = people["stranger"], people["inspector"], people["croupier"]
    refusals = []
    for who, cmd in [
        (gina, {"type": "launch_ball"}),  # a player is not the croupier
        (gina, {"type": "place_bet", "player": "hugo", "spot": "rouge", "amount": 500}),  # another's wager
        (stranger, {"type": "launch_ball"}),  # a croupier at a table not theirs
        (inspector, {"type": "place_bet", "spot": "rouge", "amount": 500}),
        (croupier, {"type": "raise_limit", "kind": "plein", "maximum": 100_000, "control_officer": "x"}),
    ]:
        with pytest.raises(Rejected) as r:
            await who.play(T, cmd)
        refusals.append(r.value.code)
    assert refusals == ["forbidden", "not_your_seat", "not_your_table", "forbidden", "not_allowed"]

    placed = await hugo.bet(T, "noir", 500)
    while (ev := await hugo.next_event(T))["seq"] != placed["seq"]:
        pass
    wager = ev["event"]["wager"]
    with pytest.raises(Rejected) as r:  # gina may not take back hugo's bet
        await gina.play(T, {"type": "withdraw_bet", "wager": wager})
    assert r.value.code == "not_allowed"

    # HTTP: the same boundaries, as problem details.
    for client, method, path, body in [
        (gina, "POST", "/tables", {"game": "roulette", "profile": "campione"}),
        (gina, "POST", "/cashier/deposit", {"user": "gina", "amount": 100}),
        (croupier, "POST", "/credit", {"user": "gina", "limit": 100}),
        (gina, "GET", "/accounts/hugo/balance", None),
        (gina, "GET", "/audit", None),
    ]:
        with pytest.raises(HTTPError) as e:
            await client.request(method, path, json=body)
        assert e.value.status == 403 and e.value.problem["code"] == "forbidden"
        assert e.value.problem["status"] == 403 and e.value.problem["type"] == "/errors/forbidden"
    with pytest.raises(HTTPError) as e:
        await CasinoClient(floor.server.url).request("GET", "/me")
    assert e.value.status == 401
    with pytest.raises(HTTPError) as e:
        await gina.request("GET", f"/tables/{T}/rounds/spin-1")  # gina played no spin yet
    assert e.value.status == 403

    # The console actions are in the audit log, with who and when.
    admin = await floor.admin()
    try:
        log = await admin.request("GET", "/audit", params={"target": T})
    finally:
        await admin.close()
    assert {"actor": "p-croupier", "action": "table.open_spin"} in [
        {"actor": e["actor"], "action": e["action"]} for e in log]


async def test_expired_and_bad_tokens_close_with_a_code(floor):
    past = datetime.now(UTC) - timedelta(minutes=1)
    expired = jwt.encode({"sub": "gina", "exp": past, "iat": past - timedelta(hours=1)}, JWT_SECRET, "HS256")
    url = floor.server.url.replace("http", "ws") + "/ws"
    for token, code in [(expired, 4003), ("nonsense", 4001)]:
        async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as ws:
            with pytest.raises(websockets.ConnectionClosed):
                await ws.recv()
            assert ws.close_code == code


async def test_a_retried_command_is_applied_once(people):
    gina = people["gina"]
    before = (await gina.balance())["available"]
    first = await gina.bet(T, "plein 7", 700, cid="retry-1")
    again = await gina.bet(T, "plein 7", 700, cid="retry-1")
    assert first == again
    # After a reconnect the answer comes from the database, still applied once.
    await gina.reconnect()
    third = await gina.bet(T, "plein 7", 700, cid="retry-1")
    assert third == first
    assert (await gina.balance())["available"] == before - 700


async def test_reconnect_resumes_with_nothing_missed_or_twice(people):
    gina, hugo = people["gina"], people["hugo"]
    await hugo.disconnect()
    last = hugo.last_seq[T]
    for spot in ("rouge", "pair", "manque"):
        ack = await gina.bet(T, spot, 500)
    await gina.wait_seq(T, ack["seq"])
    missed = [f["seq"] for f in gina.frames if f.get("type") == "event" and f["table"] == T and f["seq"] > last]
    assert len(missed) == 3
    n = len(hugo.frames)
    await hugo.reconnect()
    ack = await gina.bet(T, "passe", 500)  # a live event after the resume
    await hugo.wait_seq(T, ack["seq"])
    got = [f["seq"] for f in hugo.frames[n:] if f.get("type") == "event"]
    assert got == list(range(last + 1, last + 5))
    assert not [f for f in hugo.frames[n:] if f.get("type") == "snapshot"]


async def test_heartbeats_and_published_protocol(people, floor):
    gina = people["gina"]
    for _ in range(300):  # the test server beats every 2 s
        if any(f["type"] == "heartbeat" for f in gina.frames):
            break
        await asyncio.sleep(0.02)
    assert any(f["type"] == "heartbeat" for f in gina.frames)

    doc = await gina.request("GET", "/asyncapi.json")
    assert doc["asyncapi"].startswith("3.")
    client_msgs = [m["$ref"].rsplit("/", 1)[1] for m in doc["operations"]["clientSends"]["messages"]]
    assert client_msgs == ["Auth", "Subscribe", "Unsubscribe", "Play", "Ping"]
    assert "Snapshot" in doc["components"]["messages"] and "Events" in doc["components"]["messages"]
    assert doc["components"]["schemas"]["TableEvent"]["required"] == ["seq", "round", "event"]
    assert set(doc["x-game-commands"]) == {"roulette", "blackjack", "tournament"}
    # A tournament's channel: subscribe to its id; its events are the coordinator's.
    tour = doc["channels"]["tournament"]
    assert "subscribe" in tour["description"] and tour["messages"]["TournamentEvent"]["payload"]
    assert doc["x-game-events"]["tournament"] == tour["messages"]["TournamentEvent"]["payload"]
    openapi = await gina.request("GET", "/schema/openapi.json")
    assert "/tables/{table_id}/rounds/{round_id}" in openapi["paths"]


async def test_a_token_expiring_mid_connection_is_refused_then_renewed(people, floor):
    c = CasinoClient(floor.server.url)
    try:
        await c.login("hugo", "secret-pass-1")
        fresh = c.token
        soon = datetime.now(UTC) + timedelta(seconds=2)
        c.token = jwt.encode({"sub": "hugo", "exp": soon, "iat": soon - timedelta(minutes=1)}, JWT_SECRET, "HS256")
        await c.connect()
        await c.subscribe(T)
        await asyncio.sleep(2.5)
        with pytest.raises(Rejected) as r:
            await c.bet(T, "impair", 500)
        assert r.value.code == "token_expired"
        with pytest.raises(Rejected) as r:  # a connection keeps its user
            gina_token = people["gina"].token
            await c.command({"type": "auth", "token": gina_token})
        assert r.value.code == "wrong_user"
        await c.command({"type": "auth", "token": fresh})
        assert (await c.bet(T, "impair", 500))["type"] == "accepted"
    finally:
        await c.close()


async def test_cashier_receipts_credit_and_chef_limits_are_checked_and_audited(people, floor):
    chef, inspector = people["chef"], people["inspector"]
    admin, cashier = await floor.admin(), await floor.cashier()
    try:
        body = {"user": "hugo", "amount": 2_500, "id": "dep-hugo-audit"}
        first = await cashier.request("POST", "/cashier/deposit", json=body)
        assert await cashier.request("POST", "/cashier/deposit", json=body) == first  # the same receipt
        await inspector.request("POST", "/credit", json={"user": "hugo", "limit": 5_000, "id": "cr-hugo"})
        # A chef changes limits only at the tables they are assigned to.
        with pytest.raises(HTTPError) as e:
            await chef.request("PUT", f"/tables/{OTHER}/limits", json={"minimum": 1_000, "reason": "x"})
        assert (e.value.status, e.value.code) == (403, "not_your_table")
        log = await admin.request("GET", "/audit", params={"target": "hugo"})
    finally:
        await admin.close()
        await cashier.close()
    actions = [(e["actor"], e["action"], e["detail"].get("id")) for e in log]
    assert (CASHIER, "cashier.deposit", "dep-hugo-audit") in actions
    assert ("p-inspector", "credit.grant", "cr-hugo") in actions


async def test_a_replayed_cashier_or_credit_request_writes_no_second_audit_record(people, floor):
    inspector = people["inspector"]
    admin, cashier = await floor.admin(), await floor.cashier()
    try:
        dep = {"user": "gina", "amount": 1_200, "id": "dep-gina-replay"}
        out = {"user": "gina", "amount": 700, "id": "out-gina-replay"}
        credit = {"user": "gina", "limit": 3_000, "id": "cr-gina-replay"}
        receipts = [await cashier.request("POST", "/cashier/deposit", json=dep) for _ in range(2)]
        cashed = [await cashier.request("POST", "/cashier/cash-out", json=out) for _ in range(2)]
        grants = [await inspector.request("POST", "/credit", json=credit) for _ in range(2)]
        log = await admin.request("GET", "/audit", params={"target": "gina", "limit": 5000})
    finally:
        await admin.close()
        await cashier.close()
    assert receipts[0] == receipts[1] and cashed[0] == cashed[1] and grants[0] == grants[1]
    assert receipts[0]["amount"] == 1_200 and cashed[0]["amount"] == 700
    ids = [e["detail"].get("id") for e in log]
    assert ids.count("dep-gina-replay") == ids.count("out-gina-replay") == ids.count("cr-gina-replay") == 1


async def test_a_batch_reaches_each_subscriber_as_one_events_message(people, floor):
    """Bets queued together are committed together and published as ONE ``events`` message
    per subscriber: consecutive seqs in order, ``seq`` the last one's, none missed or twice."""
    gina, hugo = people["gina"], people["hugo"]
    url = floor.server.url.replace("http", "ws", 1) + "/ws"
    raw: list[dict] = []
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {hugo.token}"}) as ws:
        await ws.send(json.dumps({"type": "subscribe", "table": T, "cid": "s1"}))
        start = None
        while start is None:
            msg = json.loads(await ws.recv())
            if msg["type"] == "snapshot":
                start = msg["seq"]
        acks = await asyncio.gather(*(gina.bet(T, f"plein {n}", 500) for n in range(1, 21)))
        last = max(a["seq"] for a in acks)
        while not raw or raw[-1]["seq"] < last:
            msg = json.loads(await ws.recv())
            if msg["type"] == "events":
                raw.append(msg)
    seqs = [e["seq"] for m in raw for e in m["events"]]
    assert seqs == list(range(start + 1, last + 1))  # every event once, in order
    for m in raw:
        assert m["table"] == T and m["seq"] == m["events"][-1]["seq"]
        assert [e["seq"] for e in m["events"]] == list(range(m["events"][0]["seq"], m["seq"] + 1))
        assert all(set(e) == {"seq", "round", "event"} for e in m["events"])
    assert len(raw) <= len(seqs)
    placed = [e["event"] for m in raw for e in m["events"] if e["event"]["type"] == "wager_placed"]
    assert sorted(p["amount"] for p in placed) == [500] * 20
