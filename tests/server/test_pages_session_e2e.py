"""The pages' session (``POST /auth/session``, ``server.auth.SESSION_COOKIE``), attacked from
outside with plain HTTP and websockets: the token is only ever in an HttpOnly, SameSite=Strict
cookie; a request carrying that cookie may change something, or open a websocket, only from
one of our own pages (its Origin is this host), so another site's page cannot use a
visitor's login (CSRF, cross-site websocket hijacking). And the clock a page counts down by."""

from __future__ import annotations

import json

import httpx
import pytest
import websockets

from .conftest import PASSWORD, until

pytestmark = pytest.mark.slow

EVIL = "http://casino.example.evil"


async def _session(server, user: str) -> httpx.AsyncClient:
    """A browser-like client logged in through the pages' login (it keeps the cookie)."""
    c = httpx.AsyncClient(base_url=server.url)
    r = await c.post("/auth/session", json={"user": user, "password": PASSWORD}, headers={"origin": server.url})
    assert r.status_code == 200, r.text
    return c


async def test_the_session_cookie_holds_the_token_and_the_body_does_not(server, floor):
    await floor.account("ps-ann")
    async with httpx.AsyncClient(base_url=server.url) as c:
        r = await c.post("/auth/session", json={"user": "ps-ann", "password": PASSWORD},
                         headers={"origin": server.url})
        assert r.status_code == 200
        assert set(r.json()) == {"user", "role", "expires_at"} and r.json()["user"] == "ps-ann"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith("casino_session=")
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/" in cookie
        assert "Secure" not in cookie  # plain http here; behind https (or X-Forwarded-Proto) it is Secure
        me = await c.get("/me")  # the cookie alone authenticates a read
        assert me.status_code == 200 and me.json()["id"] == "ps-ann"
        out = await c.delete("/auth/session", headers={"origin": server.url})
        assert out.status_code == 204 and "Max-Age=0" in out.headers["set-cookie"]
        assert (await c.get("/me")).status_code == 401  # the cookie is gone


async def test_a_login_from_another_origin_or_none_is_refused(server, floor):
    await floor.account("ps-bob")
    async with httpx.AsyncClient(base_url=server.url) as c:
        for headers in ({"origin": EVIL}, {}):
            r = await c.post("/auth/session", json={"user": "ps-bob", "password": PASSWORD}, headers=headers)
            assert r.status_code == 403 and r.json()["code"] == "forbidden"
            assert "set-cookie" not in r.headers


async def test_a_cookie_request_from_another_site_changes_nothing(server, floor):
    """A director's cookie sent by another site's form (CSRF): 401, no table; the same
    request from our own page creates it. Bearer clients are not affected."""
    await floor.account("ps-dir", "director")
    c = await _session(server, "ps-dir")
    try:
        body = {"game": "roulette", "profile": "campione", "mode": "live", "id": "ps-csrf", "settings": {}}
        for headers in ({"origin": EVIL}, {}):
            r = await c.post("/tables", json=body, headers=headers)
            assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        assert (await c.get("/tables/ps-csrf")).status_code == 404
        r = await c.post("/tables", json=body, headers={"origin": server.url})
        assert r.status_code == 201, r.text
    finally:
        await c.aclose()


async def test_a_websocket_with_the_cookie_opens_only_from_our_origin(server, floor):
    await floor.account("ps-cat")
    await floor.table("roulette", "campione", "ps-ws")
    c = await _session(server, "ps-cat")
    cookie = f"casino_session={c.cookies['casino_session']}"
    url = server.url.replace("http", "ws", 1) + "/ws"
    try:
        # From another site's page: the cookie is not taken; the first frame is not an auth frame: 4001.
        async with websockets.connect(url, subprotocols=["casino.v1"], origin=EVIL,
                                      additional_headers={"cookie": cookie}) as ws:
            await ws.send(json.dumps({"type": "subscribe", "cid": "s1", "table": "ps-ws"}))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd.code == 4001
        # From our own page: authenticated by the cookie, a snapshot comes back.
        async with websockets.connect(url, subprotocols=["casino.v1"], origin=server.url,
                                      additional_headers={"cookie": cookie}) as ws:
            assert ws.subprotocol == "casino.v1"
            await ws.send(json.dumps({"type": "subscribe", "cid": "s1", "table": "ps-ws"}))
            frames = [json.loads(await ws.recv()) for _ in range(2)]
            assert {f["type"] for f in frames} >= {"snapshot"}
            assert next(f for f in frames if f["type"] == "snapshot")["view"]["viewer"] == "ps-cat"
    finally:
        await c.aclose()


async def test_the_view_says_what_the_tables_clock_does_next_and_when(server, floor):
    """A page's countdown: an RNG roulette table open for bets will launch the ball within
    its betting window (CASINO_BETTING_SECONDS=1 here); the time is relative (ms), so no
    browser clock is trusted. A live table has no clock."""
    await floor.table("roulette", "campione", "ps-clock", mode="rng")
    await floor.table("roulette", "campione", "ps-noclock")
    viewer = await floor.account("ps-dan")
    try:
        async def open_with_clock() -> bool:
            view = (await viewer.request("GET", "/tables/ps-clock"))["view"]
            due = view["next_automatic"]
            return view["phase"] == "open" and due is not None and due["command"] == "launch_ball"

        assert await until(open_with_clock, 20)
        due = (await viewer.request("GET", "/tables/ps-clock"))["view"]["next_automatic"]
        assert 0 <= due["in_ms"] <= 1_000
        assert (await viewer.request("GET", "/tables/ps-noclock"))["view"]["next_automatic"] is None
    finally:
        await viewer.close()
