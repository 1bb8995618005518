"""Litestar channels on Redis pub/sub that outlive a dropped broker connection.

Litestar's ``RedisChannelsPubSubBackend`` ends its reading loop (and the plugin's publishing
task) at the first connection error, silently: after a Redis restart no table event would
reach any socket again. This backend keeps both going: a publish is tried again before it
is given up (logged), and the reading loop subscribes again to every channel it had and
then hands each channel's subscribers ``RESYNC``, so each socket reads from PostgreSQL what
it missed meanwhile (``server.ws.connection``): a lost last batch is not followed by a frame
that would show the hole.

The backend's SUBSCRIBE and UNSUBSCRIBE go one at a time (``_commands``): redis-py's
``PubSub`` takes its connection at its first command without a lock, so two first
subscriptions at once (two sockets, or two watchers at start) each took a connection of the
pool, and the channel subscribed on the one it did not keep was dead in this process for
good: Redis sent its messages to a connection nobody reads, while ``PubSub.channels`` said it
was subscribed (a tournament's players on another process never heard its end). And a
channel's later subscribers wait until its first one's SUBSCRIBE is on its way
(``Channels``): a snapshot read before that could miss the events just after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Iterable
from typing import Any

from litestar.channels import ChannelsPlugin, Subscriber
from litestar.channels.backends.redis import RedisChannelsPubSubBackend

log = logging.getLogger("casino.channels")

RESYNC = b"\x00resync"  # not JSON: no table frame can look like it
PUBLISH_TRIES = 3


class Channels(ChannelsPlugin):
    """Litestar's plugin, whose ``subscribe`` returns only once the channel's SUBSCRIBE has
    gone to the broker. Litestar's asks the backend for a channel's first subscriber only: a
    second one came back at once, while the first's SUBSCRIBE could still be waiting (for
    the connection, for the lock), and read its snapshot before the channel reached this
    process; the events just after it were lost to it until a later frame showed the hole,
    and for good after a last event (a tournament's end)."""

    async def subscribe(self, channels: str | Iterable[str], history: int | None = None) -> Subscriber:
        subscriber = await super().subscribe(channels, history)
        ready = getattr(self._backend, "ready", None)
        if ready is not None:
            await ready([channels] if isinstance(channels, str) else channels)
        return subscriber


class ResilientPubSubBackend(RedisChannelsPubSubBackend):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        # One pub/sub command at a time (see the module's doc): the first one connects,
        # and no (un)subscription interleaves with another's bookkeeping or a resubscription.
        self._commands = asyncio.Lock()
        self._subscribing: dict[str, asyncio.Future] = {}  # channel -> its SUBSCRIBE sent

    async def subscribe(self, channels: Iterable[str]) -> None:
        channels = list(channels)
        loop = asyncio.get_running_loop()
        mine = {c: self._subscribing.setdefault(c, loop.create_future()) for c in channels}
        try:
            async with self._commands:
                await super().subscribe(channels)
        finally:
            for channel, sent in mine.items():
                if self._subscribing.get(channel) is sent:
                    del self._subscribing[channel]
                if not sent.done():
                    sent.set_result(None)

    async def ready(self, channels: Iterable[str]) -> None:
        """Until the SUBSCRIBE of those of ``channels`` being subscribed now has been sent."""
        waiting = [self._subscribing[c] for c in channels if c in self._subscribing]
        if waiting:
            await asyncio.gather(*(asyncio.shield(f) for f in waiting))

    async def unsubscribe(self, channels: Iterable[str]) -> None:
        async with self._commands:
            await super().unsubscribe(channels)

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
        channels: list[str] = []
        while True:
            await asyncio.sleep(0.5)
            async with self._commands:  # (a subscription meanwhile is in the list, not lost by aclose)
                for c in pubsub.channels:
                    name = c.decode() if isinstance(c, bytes) else c
                    if name not in channels:
                        channels.append(name)
                with contextlib.suppress(Exception):  # (the old connection is gone anyway)
                    await pubsub.aclose()
                try:
                    if channels:
                        await pubsub.subscribe(*channels)
                    return channels
                except Exception as exc:
                    log.warning("the broker is still unreachable (%s)", exc)
