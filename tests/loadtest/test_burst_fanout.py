"""Found under load: a spin settling more bets than a socket's send queue holds produced
that many event frames at once, and every subscriber was closed as "too slow" (4008)
though it read at once. A burst must reach a reader that keeps up; a stuck one is
still closed (tests/server/test_slow_client.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from helpers.sockets import FastSocket, push
from server.config import Settings
from server.ws import Connection


async def test_a_burst_larger_than_the_queue_reaches_a_fast_reader():
    ctx = SimpleNamespace(settings=Settings(jwt_secret="x" * 40, send_queue_frames=10))
    sock = FastSocket()
    conn = Connection(sock, ctx, channels=None)
    sender = asyncio.create_task(conn._sender())
    frames = [b'{"type":"events","table":"t","seq":%d,"events":[{"seq":%d,"round":"r","event":{}}]}' % (i, i)
              for i in range(1, 101)]
    try:
        await push(conn, "t", frames)
        for _ in range(10):
            await asyncio.sleep(0)
        assert conn.closing is None
        assert [s.encode() for s in sock.sent] == frames
    finally:
        sender.cancel()
