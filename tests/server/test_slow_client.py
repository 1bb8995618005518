"""A client that stops reading is dropped with close code 4008 once its bounded queue of
unsent frames is full; the table that publishes never waits for it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from server.config import Settings
from server.protocol import CLOSE_TOO_SLOW
from server.ws import Connection


class StuckSocket:
    """A socket whose peer never reads: every send waits for ever."""

    async def send_text(self, data: str) -> None:
        await asyncio.Event().wait()


async def test_overflow_closes_with_4008_without_waiting():
    ctx = SimpleNamespace(settings=Settings(jwt_secret="x" * 40, send_queue_frames=3))
    conn = Connection(StuckSocket(), ctx, channels=None)
    sender = asyncio.create_task(conn._sender())
    try:
        for _i in range(10):  # never awaits: the publisher is not slowed down
            conn.send(b'{"type":"events"}')
        await asyncio.sleep(0)
        assert conn.closing is not None and conn.closing[0] == CLOSE_TOO_SLOW == 4008
        assert conn.closed.is_set()
        assert conn.out.qsize() <= 3
    finally:
        sender.cancel()
