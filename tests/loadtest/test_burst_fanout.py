"""Found under load: a spin settling more bets than a socket's send queue holds produced
that many event frames at once, and every subscriber was closed as "too slow" (4008)
though it read at once. A burst must reach a reader that keeps up; a stuck one is
still closed (tests/server/test_slow_client.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from server.config import Settings
from server.ws import Connection


class FastSocket:
    """A peer that reads everything at once."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_text(self, data: str) -> None:
        self.sent.append(data)


class Burst:
    """A channel subscriber holding a whole settlement's frames already."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames

    async def iter_events(self):
        for f in self.frames:
            yield f


async def test_a_burst_larger_than_the_queue_reaches_a_fast_reader():
    ctx = SimpleNamespace(settings=Settings(jwt_secret="x" * 40, send_queue_frames=10))
    sock = FastSocket()
    conn = Connection(sock, ctx, channels=None)
    sender = asyncio.create_task(conn._sender())
    gate = asyncio.Event()
    gate.set()
    frames = [b'{"type":"events","table":"t","seq":%d,"events":[{"seq":%d,"round":"r","event":{}}]}' % (i, i)
              for i in range(1, 101)]
    try:
        await asyncio.wait_for(conn._pump("t", Burst(frames), gate), 5)
        for _ in range(10):
            await asyncio.sleep(0)
        assert conn.closing is None
        assert [s.encode() for s in sock.sent] == frames
    finally:
        sender.cancel()
