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
was subscribed (a tournament's players on another process never heard its end). And every
subscriber waits until its channel's SUBSCRIBE is on its way (``Channels``): a snapshot read
before that could miss the events just after it.

Frames are published in bursts: Litestar's publishing task sends one frame and waits for
Redis's answer before it takes the next, so a process could publish no faster than one frame
a round trip, and a round trip under load is a turn of a busy event loop (5-12 ms). Two
workers at their peak published behind by seconds: the sockets on the other process got a
table's events up to 3 s late. ``Channels`` now takes every frame queued and sends them in
one pipeline, one round trip for the lot, in order on one connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any

from litestar.channels import ChannelsPlugin, Subscriber
from litestar.channels.backends.redis import RedisChannelsPubSubBackend
from litestar.channels.plugin import ChannelsException

log = logging.getLogger("casino.channels")

RESYNC = b"\x00resync"  # not JSON: no table frame can look like it
PUBLISH_TRIES = 3
PUBLISH_BURST = 256  # frames at most in one pipeline (bounds one burst's buffer and reply)


class FeedSubscriber(Subscriber):
    """Litestar's subscriber, which hands its frames to a feed once one is attached (a
    socket's: ``server.ws.feed``, no task switch per frame); the others (sessions, limits)
    read its queue as before."""

    feed: Callable[[bytes], None] | None = None

    def attach(self, feed: Callable[[bytes], None]) -> None:
        """From now on frames go to ``feed``, those already queued first."""
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None:
                feed(item)
        self.feed = feed

    def put_nowait(self, item: bytes | None) -> bool:
        feed = self.feed
        if feed is None or item is None:
            return super().put_nowait(item)
        feed(item)
        return True


class Channels(ChannelsPlugin):
    """Litestar's plugin, with two differences in ``subscribe``:

    * it returns only once the channel's SUBSCRIBE has gone to the broker, for every
      subscriber (Litestar's asks the backend for a channel's first subscriber only: a second
      one came back at once, while the first's SUBSCRIBE could still be waiting, and read its
      snapshot before the channel reached this process; the events just after it were lost
      to it, for good after a last event such as a tournament's end);
    * a subscription that fails or is cancelled half-way is taken back (Litestar's kept it
      registered: every later subscriber then took the channel for subscribed and sent no
      SUBSCRIBE, so after a broker outage a table first followed during it stayed silent in
      this process, or a cancelled one kept filling a queue nobody read)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        kw.setdefault("subscriber_class", FeedSubscriber)
        super().__init__(*args, **kw)
        self._cleanups: set[asyncio.Task[None]] = set()
        attach = getattr(self._backend, "attach", None)
        if attach is not None:
            attach(lambda channel: bool(self._channels.get(channel)))

    async def subscribe(self, channels: str | Iterable[str], history: int | None = None) -> Subscriber:
        names = [channels] if isinstance(channels, str) else list(channels)
        if not self._arbitrary_channels_allowed:
            for name in names:
                if name not in self._channels:
                    raise ChannelsException(f"Unknown channel: {name!r}.")
        subscriber = self._subscriber_class(plugin=self, max_backlog=self._max_backlog,
                                            backlog_strategy=self._backlog_strategy)
        fresh = []
        for name in names:
            subscribers = self._channels.setdefault(name, set())
            if not subscribers:
                fresh.append(name)
            subscribers.add(subscriber)
        try:
            ensure = getattr(self._backend, "ensure", None)
            if ensure is not None:
                await ensure(names)
            elif fresh:
                await self._backend.subscribe(fresh)
        except BaseException:
            idle = []
            for name in names:
                subscribers = self._channels.get(name, set())
                subscribers.discard(subscriber)
                if not subscribers:
                    idle.append(name)
            if idle:  # (in the background: this task may be the one being cancelled)
                task = asyncio.create_task(self._drop(idle))
                self._cleanups.add(task)
                task.add_done_callback(self._cleanups.discard)
            raise
        if history:
            await self.put_subscriber_history(subscriber=subscriber, limit=history, channels=names)
        return subscriber

    @property
    def publish_queue(self) -> int:
        """Frames waiting to be published (the metrics' queue depth)."""
        queue = self._pub_queue
        return queue.qsize() if queue is not None else 0

    async def _pub_worker(self) -> None:
        # Litestar's publishes one frame a round trip; a backend that can send a burst
        # (``publish_many``) gets every frame waiting, in order.
        many = getattr(self._backend, "publish_many", None)
        if many is None:
            await super()._pub_worker()
            return
        while self._pub_queue:
            queue = self._pub_queue
            burst = [await queue.get()]
            while len(burst) < PUBLISH_BURST and not queue.empty():
                burst.append(queue.get_nowait())
            try:
                await many(burst)
            finally:
                for _ in burst:
                    queue.task_done()

    async def _drop(self, channels: list[str]) -> None:
        with contextlib.suppress(Exception):
            await self._backend.unsubscribe([c for c in channels if not self._channels.get(c)])


class ResilientPubSubBackend(RedisChannelsPubSubBackend):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        # One pub/sub command at a time (see the module's doc): the first one connects,
        # and no (un)subscription interleaves with another's bookkeeping or a resubscription.
        self._commands = asyncio.Lock()
        self._in_use: Callable[[str], bool] = lambda channel: False

    def attach(self, in_use: Callable[[str], bool]) -> None:
        """Whether the plugin has subscribers for a channel (checked again under the lock)."""
        self._in_use = in_use

    def _subscribed(self) -> set[str]:
        pubsub = self._pub_sub
        gone = {_name(c) for c in pubsub.pending_unsubscribe_channels}
        return {_name(c) for c in pubsub.channels} - gone

    async def ensure(self, channels: Iterable[str]) -> None:
        """Until each of ``channels`` is subscribed at the broker (its SUBSCRIBE sent now, or
        before); raises if the broker cannot be reached."""
        async with self._commands:
            missing = [c for c in channels if c not in self._subscribed()]
            if missing:
                await super().subscribe(missing)

    async def subscribe(self, channels: Iterable[str]) -> None:
        await self.ensure(channels)

    async def unsubscribe(self, channels: Iterable[str]) -> None:
        async with self._commands:
            # (a channel subscribed again meanwhile, by a subscriber that came after, stays)
            idle = [c for c in channels if not self._in_use(c)]
            if idle:
                await super().unsubscribe(idle)

    async def publish(self, data: bytes, channels: Iterable[str]) -> None:
        await self.publish_many([(data, list(channels))])

    async def publish_many(self, frames: list[tuple[bytes, list[str]]]) -> None:
        """``frames`` in one pipeline, in order (PUBLISH needs no script for one channel
        at a time: Litestar's Lua script only made a multi-channel publish atomic, and
        nothing here relies on that). A burst that fails is sent again whole: a frame
        that went through the first time arrives twice, and the sockets' seq check drops
        the second (``server.ws.connection``)."""
        for attempt in range(PUBLISH_TRIES):
            try:
                await self._send(frames)
                return
            except Exception as exc:
                if attempt == PUBLISH_TRIES - 1:
                    # Subscribers fill the hole from PostgreSQL at the next frame or resync.
                    names = sorted({c for _, channels in frames for c in channels})
                    log.error("%d frame(s) for %s could not be published: %s", len(frames), names, exc)
                    return
                await asyncio.sleep(0.1 * (attempt + 1))

    async def _send(self, frames: list[tuple[bytes, list[str]]]) -> None:
        pipe = self._redis.pipeline(transaction=False)
        for data, channels in frames:
            for channel in dict.fromkeys(channels):
                pipe.publish(channel, data)
        await pipe.execute()

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


def _name(channel: Any) -> str:
    return channel.decode() if isinstance(channel, bytes) else str(channel)
