"""A client that stops reading is dropped with close code 4008 once its bounded queue of
unsent frames is full; the table that publishes never waits for it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from helpers.sockets import StuckSocket, push
from server.channels_backend import RESYNC
from server.config import Settings
from server.protocol import CLOSE_STREAM_FAILED, CLOSE_TOO_SLOW
from server.ws import Connection


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


class _NoDatabase:
    def acquire(self):
        raise OSError("the database is away")


async def test_a_stream_that_fails_closes_the_socket_with_1011():
    """A socket's feed fills a gap from PostgreSQL after the broker was away; the database away
    too, it failed, and the socket stayed open hearing nothing more of the table (while the
    subscription's backlog grew). It now closes with 1011: the client resumes elsewhere."""
    ctx = SimpleNamespace(settings=Settings(jwt_secret="x" * 40), pool=_NoDatabase())
    conn = Connection(StuckSocket(), ctx, channels=None)
    await push(conn, "t1", [RESYNC])  # the broker was away
    assert conn.closing is not None and conn.closing[0] == CLOSE_STREAM_FAILED == 1011
    assert conn.closed.is_set()
