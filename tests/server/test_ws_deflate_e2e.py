"""permessage-deflate on the websockets is off unless ``CASINO_WS_DEFLATE`` says so: the
server compresses each frame again for every socket it goes to, and browsers always ask for
it (one event to 5,000 such sockets: the server's CPU +52%, delivery p99 ≈ 330 ms against
204–239 ms; BENCHMARKS.md, "Compressing frames per socket")."""

from __future__ import annotations

import websockets

from helpers.databases import new_database

from .conftest import ServerProcess


async def _extensions(url: str) -> str:
    """What the server answers to a client that offers permessage-deflate, as browsers do."""
    async with websockets.connect(url.replace("http", "ws", 1) + "/ws", compression="deflate") as ws:
        return ws.response.headers.get("Sec-WebSocket-Extensions", "")


async def test_the_server_declines_compression_by_default(server):
    assert await _extensions(server.url) == ""


async def test_an_operator_may_turn_compression_on(pg_url, tmp_path):
    async with new_database(pg_url, "deflate") as url:
        on = ServerProcess(url, tmp_path, CASINO_WS_DEFLATE="1")
        on.start()
        try:
            assert (await _extensions(on.url)).startswith("permessage-deflate")
        finally:
            on.stop()
