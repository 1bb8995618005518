"""What an outsider's audit found at the edge (issue 12), each a regression test against a
real server: a client id is per table, control characters never reach PostgreSQL, one bad
command never fails a batch holding other people's, hostile frames cost only themselves,
the OpenAPI lists every refusal, limits are bounded and typed."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest
import websockets

from server.client import HTTPError, Rejected

from .conftest import first_refusal

pytestmark = pytest.mark.slow

T1, T2, BJ = "edge-roul-1", "edge-roul-2", "edge-bj"


@pytest.fixture(scope="module")
async def people(floor):
    out = {
        "croupier": await floor.account("e-croupier", "croupier"),
        "chef": await floor.account("e-chef", "chef"),
        "director": await floor.account("e-director", "director"),
        "ida": await floor.account("ida", chips=100_000),
    }
    for tid in (T1, T2):
        await floor.table("roulette", "campione", tid, staff=("e-croupier", "e-chef"))
    await floor.table("blackjack", "titano", BJ, staff=("e-croupier",), min_bet=1_000, max_bet=10_000)
    for c in out.values():
        await c.connect()
        for tid in (T1, T2):
            await c.subscribe(tid)
    for tid in (T1, T2):
        await out["croupier"].play(tid, {"type": "open_spin"})
    yield out
    for c in out.values():
        await c.close()


async def test_a_client_id_names_one_command_at_one_table(people):
    ida = people["ida"]
    before = (await ida.balance())["available"]
    first = await ida.bet(T1, "plein 3", 500, cid="same-cid")
    second = await ida.bet(T2, "plein 3", 700, cid="same-cid")
    assert (first["table"], second["table"]) == (T1, T2)
    assert (await ida.balance())["available"] == before - 1_200  # both applied
    assert await ida.bet(T2, "plein 3", 700, cid="same-cid") == second  # a retry at T2 is still a retry


async def test_control_characters_are_refused_at_the_edge_and_change_nothing(people, floor):
    ida, chef = people["ida"], people["chef"]
    before = await ida.balance()
    bad = await first_refusal(ida, json.dumps({"type": "play", "cid": "nul-1", "table": T1,
                                         "command": {"type": "place_bet", "spot": "plein\u00007", "amount": 500}}))
    assert (bad["type"], bad["code"], bad["cid"]) == ("rejected", "invalid_text", "nul-1")
    for method, path, body in [
        ("PUT", f"/tables/{T1}/limits", {"minimum": 500, "reason": "late\u0000night"}),
        ("PUT", f"/tables/{T1}/limits", {"minimum": 500, "reason": "bell\u0007"}),
        ("GET", "/accounts/i%00da/balance", None),
        ("GET", f"/tables/{T1}/rounds/spin%001", None),
        ("GET", "/rounds?user=i%00da", None),
    ]:
        with pytest.raises(HTTPError) as e:
            await chef.request(method, path, json=body)
        assert (e.value.status, e.value.code) == (400, "invalid_text"), path
    admin = await floor.admin()
    try:
        with pytest.raises(HTTPError) as e:
            await admin.request("POST", "/accounts", json={"user": "nul\u0000", "password": "x" * 12,
                                                           "role": "player"})
        assert e.value.code == "invalid_text"
    finally:
        await admin.close()
    # Tab and newline are text; an escaped backslash before "u0000" is text too.
    ok = await people["director"].request("PUT", f"/tables/{T1}/limits",
                                          json={"minimum": 500, "reason": "line one\n\tline two \\u0000"})
    assert ok["limits"]["reason"] == "line one\n\tline two \\u0000"
    assert await ida.balance() == before


async def test_one_bad_command_never_fails_a_batch_holding_other_peoples(people, floor, db_url):
    """A console command whose commit fails (here the database refuses its event: a real
    constraint added to this test's own database) is refused alone; the 16 players' bets
    committed in the same batch are accepted."""
    players = [await floor.account(f"batch-p{i}", chips=10_000) for i in range(16)]
    for p in players:
        await p.connect()
        await p.subscribe(T1)
    db = await asyncpg.connect(db_url)
    try:
        await db.execute("ALTER TABLE table_events ADD CONSTRAINT no_poison "
                         "CHECK (payload::text NOT LIKE '%poison pill%')")
        # Hold the table's lease row: its next commit waits, and everything sent meanwhile
        # queues up behind it and is committed as one batch.
        tx = db.transaction()
        await tx.start()
        await db.execute("SELECT 1 FROM table_owners WHERE table_id = $1 FOR UPDATE", T1)
        first = asyncio.ensure_future(people["ida"].bet(T1, "rouge", 500))
        # Until the bet waits on that lock: PostgreSQL's pg_locks can only be polled, there is no event to await.
        while not await db.fetchval("SELECT count(*) FROM pg_locks WHERE NOT granted"):  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        poisoned = asyncio.ensure_future(people["director"].request("PUT", f"/tables/{T1}/limits",
                                                      json={"minimum": 500, "reason": "poison pill"}))
        bets = [asyncio.ensure_future(p.bet(T1, "plein 8", 500)) for p in players]
        await asyncio.sleep(0.5)  # let every command reach the table's queue
        await tx.rollback()
        assert (await first)["type"] == "accepted"
        answers = await asyncio.gather(*bets)
        assert [a["type"] for a in answers] == ["accepted"] * 16
        with pytest.raises(HTTPError) as e:
            await poisoned
        assert (e.value.status, e.value.code) == (500, "internal_error")
        for p in players:
            assert (await p.balance())["pending"] == 500
        # They were one batch with the console command: the server says so as it splits it.
        split = [line for line in floor.server.log().splitlines() if "could not be committed" in line]
        assert split and int(split[-1].split("a batch of ")[1].split()[0]) >= 17
    finally:
        await db.execute("ALTER TABLE table_events DROP CONSTRAINT IF EXISTS no_poison")
        await db.close()
        for p in players:
            await p.close()


async def test_hostile_frames_cost_only_themselves(people, floor):
    ida = people["ida"]
    deep = await first_refusal(ida, "[" * 2048)
    assert (deep["type"], deep["code"]) == ("error", "invalid_message")
    nested = f'{{"type": "play", "cid": "deep-1", "table": "{T1}", "command": {"[" * 2048}{"]" * 2048}}}'
    deep = await first_refusal(ida, nested)  # deeper than the decoder goes
    assert (deep["type"], deep["code"], deep["cid"]) == ("rejected", "malformed", "deep-1")
    lone = await first_refusal(ida, '{"type": "subscribe", "cid": "sur-1", "table": "\\ud800"}')
    assert (lone["type"], lone["code"], lone["cid"]) == ("rejected", "malformed", "sur-1")
    big = await first_refusal(ida, json.dumps({"type": "ping", "cid": "big-1", "pad": "x" * 20_000}))
    assert (big["type"], big["code"], big["cid"]) == ("rejected", "frame_too_large", "big-1")
    assert (await ida.command({"type": "ping"}))["type"] == "pong"  # the socket stayed
    # Past the transport's limit (1 MiB) the connection is closed with 1009, as the README says.
    url = floor.server.url.replace("http", "ws", 1) + "/ws"
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {ida.token}"},
                                  max_size=None) as ws:
        with pytest.raises(websockets.ConnectionClosed):
            # (the server may close while the frame is still going out: then the send raises)
            await ws.send("x" * (1024 * 1024 + 1))
            await ws.recv()
        assert ws.close_code == 1009


async def test_the_openapi_lists_every_refusal_as_problem_details(people):
    doc = await people["ida"].request("GET", "/schema/openapi.json")
    put = doc["paths"]["/tables/{table_id}/limits"]["put"]["responses"]
    assert {"400", "401", "403", "404", "409", "422", "500"} <= set(put)
    assert set(put["403"]["content"]) == {"application/problem+json"}
    assert doc["paths"]["/auth/login"]["post"]["responses"]["429"]["content"]["application/problem+json"]


async def test_limits_are_bounded_and_typed(people):
    chef, ida = people["chef"], people["ida"]
    chef = people["director"]  # roulette limits are the Direzione's (Art. 5)
    for body, code in [
        ({"minimum": 500, "maximum": -5}, "invalid_request"),
        ({"minimum": 500, "maxima": {"plein": 7 * 10**23}}, "invalid_request"),
        ({"minimum": 500, "surprise": 1}, "invalid_request"),
    ]:
        with pytest.raises(HTTPError) as e:
            await chef.request("PUT", f"/tables/{T1}/limits", json=body)
        assert (e.value.status, e.value.code) == (400, code), body
    with pytest.raises(HTTPError) as e:  # roulette maxima are per combination kind
        await chef.request("PUT", f"/tables/{T1}/limits", json={"minimum": 500, "maximum": 100_000})
    assert (e.value.status, e.value.code) == (422, "invalid_limits")
    director = people["director"]
    with pytest.raises(HTTPError) as e:
        await director.request("PUT", f"/tables/{BJ}/limits", json={"minimum": 1_000, "maximum": 7 * 10**23})
    assert (e.value.status, e.value.code) == (400, "invalid_request")
    # Unknown fields in a game command are refused, in both games.
    with pytest.raises(Rejected) as r:
        await ida.play(T1, {"type": "place_bet", "spot": "rouge", "amount": 500, "colour": "red"})
    assert r.value.code == "invalid_command"
    await ida.subscribe(BJ)
    with pytest.raises(Rejected) as r:
        await ida.play(BJ, {"type": "sit", "box": 2, "cushion": True})
    assert r.value.code == "invalid_command"


async def test_money_in_a_body_is_a_whole_json_integer(people, floor):
    """Litestar converts a body's values leniently ("500", 500.0 and 1e3 all read as the
    integer an amount wants, and the cashier paid them: an outside tester's find); the edge
    reads each body as its route's type strictly first, as the websocket reads a command."""
    ida, director = people["ida"], people["director"]
    cashier = await floor.cashier()
    try:
        before = await ida.balance()
        for amount in ("500", 500.0, 1e3, True, "5e2"):
            for route in ("/cashier/deposit", "/cashier/cash-out"):
                with pytest.raises(HTTPError) as e:
                    await cashier.request("POST", route, json={"user": "ida", "amount": amount,
                                                               "id": f"strict-{route[9:]}-{amount!r}"})
                assert (e.value.status, e.value.code) == (400, "invalid_request"), (route, amount)
                assert "Expected `int`" in e.value.problem["detail"], e.value.problem
        with pytest.raises(HTTPError) as e:  # a limit too, and a nested field names its place
            await director.request("PUT", f"/tables/{T1}/limits", json={"minimum": "500"})
        assert (e.value.status, e.value.code) == (400, "invalid_request")
        assert "$.minimum" in e.value.problem["detail"]
        # Litestar reads a body as JSON whatever its Content-Type says: so does the check.
        for media_type in ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", None):
            headers = {"Authorization": f"Bearer {cashier.token}"}
            if media_type:
                headers["Content-Type"] = media_type
            body = json.dumps({"user": "ida", "amount": "500", "id": f"strict-{media_type}"})
            r = await cashier.http.post("/cashier/deposit", headers=headers, content=body)
            assert (r.status_code, r.json()["code"]) == (400, "invalid_request"), media_type
        assert await ida.balance() == before  # nothing moved
        receipt = await cashier.request("POST", "/cashier/deposit", json={"user": "ida", "amount": 500,
                                                                           "id": "strict-whole"})
        assert receipt["amount"] == 500 and (await ida.balance())["available"] == before["available"] + 500
    finally:
        await cashier.close()


async def test_a_command_id_is_one_to_128_characters(people):
    """The table answers a cid once and a retry again: an empty one made every later command
    sent with it a retry of the first, silently not applied; and a cid is stored with its
    answer, so one of thousands of characters was kept as it came (an outside tester's find)."""
    ida = people["ida"]
    play = {"type": "play", "table": T1, "command": {"type": "place_bet", "spot": "plein 4", "amount": 500}}
    empty = await first_refusal(ida, json.dumps({**play, "cid": ""}))
    assert (empty["type"], empty["code"]) == ("error", "invalid_message") and "$.cid" in empty["message"]
    long = await first_refusal(ida, json.dumps({**play, "cid": "c" * 129}))
    assert (long["type"], long["code"], long["cid"]) == ("rejected", "invalid_message", "c" * 129)
    before = (await ida.balance())["available"]
    assert (await ida.bet(T1, "plein 4", 500, cid="c" * 128))["type"] == "accepted"
    assert (await ida.balance())["available"] == before - 500  # the refused two moved nothing
    assert (await ida.command({"type": "ping"}))["type"] == "pong"  # the socket stayed
