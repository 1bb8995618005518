"""A ``Connection`` (``server.ws``) driven without a server: fake peers, and frames pushed
through a table's feed as the channels worker hands them over."""

from __future__ import annotations

import asyncio
from typing import Any

from server.ws import Connection


class FastSocket:
    """A peer that reads everything at once: the texts sent, in order."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message["text"])


class StuckSocket:
    """A peer that never reads: every send waits for ever."""

    async def send(self, message: dict[str, Any]) -> None:
        await asyncio.Event().wait()


async def push(conn: Connection, table: str, frames: list[bytes], seconds: float = 5) -> None:
    """``frames`` published on ``table``'s channel, each handed to the socket's feed (the
    subscription's snapshot already out), then until the feed has done with them."""
    gate = asyncio.Event()
    gate.set()
    feed = conn.feed(table, gate)
    for frame in frames:
        feed(frame)
    if feed.task is not None:
        await asyncio.wait_for(feed.task, seconds)
