"""The websocket takes its token from the Authorization header, a ``bearer.<token>``
subprotocol (browsers; the answer names ``casino.v1`` only) or a first ``auth`` frame, and
never from the URL: a ``?token=`` connection is closed with 4001. A real server logging at
debug writes no token, and no query string, whichever way a client came in."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta

import jwt
import pytest
import websockets

from helpers.servers import ADMIN_PASSWORD, JWT_SECRET, Serve
from server.client import CasinoClient

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(db_url: str, tmp_path_factory):
    env = {**os.environ, "DATABASE_URL": db_url, "CASINO_JWT_SECRET": JWT_SECRET,
           "CASINO_ADMIN_PASSWORD": ADMIN_PASSWORD, "CASINO_WS_AUTH_SECONDS": "1"}
    srv = Serve(env, tmp_path_factory.mktemp("ws-auth"), "--log-level", "debug").start()
    try:
        yield srv
    finally:
        srv.stop()


async def _closed_with(ws) -> int:
    with pytest.raises(websockets.ConnectionClosed):
        while True:
            await ws.recv()
    return ws.close_code


async def test_each_way_to_present_the_token_and_none_reaches_the_log(server):
    c = CasinoClient(server.url)
    await c.login("admin", ADMIN_PASSWORD)
    token = c.token
    try:
        for how in ("header", "subprotocol", "frame"):
            await c.connect(how)
            assert (await c.command({"type": "ping"}))["type"] == "pong"
            if how == "subprotocol":
                assert c.ws.subprotocol == "casino.v1"
                assert c.ws.response.headers["Sec-WebSocket-Protocol"] == "casino.v1"
            if how == "frame":  # the auth frame was answered like any command
                assert [f["type"] for f in c.frames[:1]] == ["accepted"]
            await c.disconnect()
            c.frames.clear()
        await c.request("GET", "/health", params={"secret": "hunter2"})
    finally:
        await c.close()

    url = server.url.replace("http", "ws", 1) + "/ws"
    # In the URL the token is refused even when it is valid, even beside a good header.
    async with websockets.connect(f"{url}?token={token}") as ws:
        assert await _closed_with(ws) == 4001
    async with websockets.connect(f"{url}?token={token}",
                                  additional_headers={"Authorization": f"Bearer {token}"}) as ws:
        assert await _closed_with(ws) == 4001
    log = server.stderr()
    assert token not in log and token.split(".")[2] not in log and "eyJ" not in log
    assert "hunter2" not in log
    assert '"WebSocket /ws?[redacted]"' in log and '"GET /health?[redacted] HTTP/1.1" 200' in log


async def test_a_socket_without_a_good_token_is_closed_with_a_code(server):
    url = server.url.replace("http", "ws", 1) + "/ws"
    past = datetime.now(UTC) - timedelta(minutes=1)
    expired = jwt.encode({"sub": "admin", "exp": past, "iat": past - timedelta(hours=1)}, JWT_SECRET, "HS256")
    for first, code in [
        (None, 4001),  # nothing within CASINO_WS_AUTH_SECONDS
        ({"type": "ping", "cid": "p1"}, 4001),  # the first frame must be the auth
        ({"type": "auth", "cid": "a1", "token": "nonsense"}, 4001),
        ({"type": "auth", "cid": "a2", "token": expired}, 4003),
    ]:
        async with websockets.connect(url) as ws:
            if first is not None:
                await ws.send(json.dumps(first))
            assert await _closed_with(ws) == code
    # A subprotocol without a token is not a login either.
    async with websockets.connect(url, subprotocols=["casino.v1"]) as ws:
        assert ws.subprotocol == "casino.v1"
        assert await _closed_with(ws) == 4001
