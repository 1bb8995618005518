"""Litestar channels on Redis pub/sub that outlive a dropped broker connection.

Litestar's ``RedisChannelsPubSubBackend`` ends its reading loop (and the plugin's publishing
task) at the first connection error, silently: after a Redis restart no table event would
reach any socket again. This backend keeps both going: a publish is tried again before it
is given up (logged), and the reading loop subscribes again to every channel it had and
then hands each channel's subscribers ``RESYNC``, so each socket reads from PostgreSQL what
it missed meanwhile (``server.ws.connection``): a lost last batch is not followed by a frame
that would show the hole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Iterable
from typing import Any

from litestar.channels.backends.redis import RedisChannelsPubSubBackend

log = logging.getLogger("casino.channels")

RESYNC = b"\x00resync"  # not JSON: no table frame can look like it
PUBLISH_TRIES = 3


class ResilientPubSubBackend(RedisChannelsPubSubBackend):
    async def publish(self, data: bytes, channels: Iterable[str]) -> None:
        channels = list(channels)
        for attempt in range(PUBLISH_TRIES):
            try:
                await super().publish(data, channels)
                return
            except Exception as exc:
                if attempt == PUBLISH_TRIES - 1:
                    # Subscribers fill the hole from PostgreSQL at the next frame or resync.
                    log.error("a frame for %s could not be published: %s", channels, exc)
                    return
                await asyncio.sleep(0.1 * (attempt + 1))

    async def stream_events(self) -> AsyncGenerator[tuple[str, Any], None]:
        while True:
            try:
                async for item in super().stream_events():
                    yield item
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("the broker connection dropped (%s); subscribing again", exc)
                channels = await self._resubscribe()
                for channel in channels:
                    yield channel, RESYNC

    async def _resubscribe(self) -> list[str]:
        pubsub = self._pub_sub
        channels = [c.decode() if isinstance(c, bytes) else c for c in pubsub.channels]
        while True:
            await asyncio.sleep(0.5)
            with contextlib.suppress(Exception):  # (the old connection is gone anyway)
                await pubsub.aclose()
            try:
                if channels:
                    await pubsub.subscribe(*channels)
                return channels
            except Exception as exc:
                log.warning("the broker is still unreachable (%s)", exc)
