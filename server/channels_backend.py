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

And a frame reaches the subscribers of the process that published it in that process, at
the loop's next turn, never through the broker: each frame on Redis carries its process's
mark (``ORIGIN`` and 8 random bytes) and a process skips its own. A table's own sockets
(all of them, with sockets placed at their tables' owners) no longer wait for Redis's
round trip under load, nor for Redis at all when it is down; and no process reads its own
frames back off the broker.

Both paths, a frame published here and one read off the broker, hand it to the channel's
subscribers a slice of the loop's time at a time (``server.fanout``), in order per channel:
a big frame to thousands of sockets no longer holds the whole process while it goes out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import Any

from litestar.channels import ChannelsPlugin, Subscriber
from litestar.channels.backends.redis import RedisChannelsPubSubBackend
from litestar.channels.plugin import ChannelsException

from server import metrics
from server.fanout import Fanout

log = logging.getLogger("casino.channels")

RESYNC = b"\x00resync"  # not JSON: no table frame can look like it
ORIGIN = b"\x01"  # a frame on Redis: ORIGIN, its process's 8 bytes, the frame (not JSON either)
MARK = len(ORIGIN) + 8
PUBLISH_BURST = 256  # frames at most in one pipeline (bounds its replies)
PUBLISH_BURST_BYTES = 1 << 20  # and bytes (a crowd's settlement is megabytes: a burst of them
# would pass Redis's output limit for a slow subscriber's connection, which Redis then drops)
PUBLISH_PATIENCE = 15.0  # seconds a frame is tried (backing off) from when it was published
CLOSING_PATIENCE = 2.0  # and at most this long once the channels stop (the process's exit waits)
# Bytes of frames (each counted once, not per subscriber) waiting to be handed out past which
# the broker is not read until half of them are out: Redis holds what follows meanwhile, up
# to its own limit for a subscriber's connection (32 MB by default, past which it drops the
# connection: a RESYNC).
FANOUT_HOLD_BYTES = 16 << 20


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
        self._in_flight = 0  # frames of the burst being published
        self._closing_at: float | None = None
        self._attempt: asyncio.Future[None] | None = None
        # The broker's bursts (None: the memory backend, one process and no other to reach).
        self._many: Callable[[list[tuple[bytes, list[str]]]], Awaitable[None]] | None = getattr(
            self._backend, "publish_many", None)
        self._cleanups: set[asyncio.Task[None]] = set()
        self.fanout = Fanout()
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

    def publish(self, data: Any, channels: str | Iterable[str]) -> None:
        """``data`` to ``channels``' subscribers here from the loop's next turn on (in order:
        the loop runs its callbacks first in, first out, and a big frame's hand-out is paced
        in order, ``server.fanout``), and to the other processes through the broker where
        there is one (the memory backend's process has no other)."""
        frame, names = self._here(data, channels)
        queue = self._pub_queue
        if queue is not None and self._many is not None:
            queue.put_nowait((frame, names, time.monotonic()))

    async def wait_published(self, data: Any, channels: str | Iterable[str]) -> None:
        """``publish``, returning once the broker has it (its subscribers here have it from
        the loop's next turn on, in order with the frames published before)."""
        frame, names = self._here(data, channels)
        if self._many is not None:
            await self._backend.publish(frame, names)

    def _here(self, data: Any, channels: str | Iterable[str]) -> tuple[bytes, list[str]]:
        """The frame, handed to this process's subscribers from the loop's next turn on."""
        if self._pub_queue is None:
            raise RuntimeError("Plugin not yet initialized. Did you forget to call on_startup?")
        names = [channels] if isinstance(channels, str) else list(channels)
        frame = self.encode_data(data)
        asyncio.get_running_loop().call_soon(self._deliver, frame, names)
        return frame, names

    def _deliver(self, frame: bytes, names: list[str]) -> None:
        for name in dict.fromkeys(names):
            self._hand(name, frame)

    def _hand(self, channel: str, frame: bytes) -> None:
        """A frame to the channel's subscribers here, paced (``server.fanout``): both paths'."""
        subscribers = self._channels.get(channel)
        if subscribers:
            self.fanout.hand(channel, frame, subscribers)

    async def _sub_worker(self) -> None:
        # Litestar's hands a frame from the broker to every subscriber in one go; here it is
        # paced like the frames published here, and the broker read no faster than they go.
        async for channel, payload in self._backend.stream_events():
            self._hand(channel, payload)
            if self.fanout.bytes > FANOUT_HOLD_BYTES:
                await self.fanout.until_at_most(FANOUT_HOLD_BYTES // 2)

    @property
    def publish_queue(self) -> int:
        """Frames not yet published: waiting, and the burst on its way (the metrics' queue
        depth; a burst tried again while the broker is away counts all along)."""
        queue = self._pub_queue
        return (queue.qsize() if queue is not None else 0) + self._in_flight

    async def _pub_worker(self) -> None:
        # Litestar's publishes one frame a round trip; a backend that can send a burst
        # (``publish_many``) gets every frame waiting, in order.
        many = self._many
        if many is None:
            await super()._pub_worker()
            return
        while self._pub_queue:
            queue = self._pub_queue
            burst = [await queue.get()]
            size = len(burst[0][0])
            while len(burst) < PUBLISH_BURST and size < PUBLISH_BURST_BYTES and not queue.empty():
                burst.append(queue.get_nowait())
                size += len(burst[-1][0])
            self._in_flight = len(burst)
            try:
                await self._send_burst(many, burst)
            finally:
                self._in_flight = 0
                for _ in burst:
                    queue.task_done()

    async def _send_burst(self, many: Callable[[list[tuple[bytes, list[str]]]], Awaitable[None]],
                          burst: list[tuple[bytes, list[str], float]]) -> None:
        """Sent again whole when it fails, backing off: its first frames may have gone
        through and arrive twice, and the sockets' seq check drops the second copies
        (``server.ws.connection``). The frames behind it wait, in order. A frame not out
        ``PUBLISH_PATIENCE`` seconds after it was published (``CLOSING_PATIENCE`` after the
        channels began to stop, the tables stopped already) is dropped, logged and counted: the other processes' sockets
        read it from PostgreSQL at the table's next frame, or at the RESYNC after their own
        reconnection. So a broker away for long holds no more than that many seconds of
        frames, and never a stop."""
        pause = 0.05
        error: BaseException | None = None
        while burst:
            now = time.monotonic()
            late = [f for f in burst if self._due(f[2]) <= now]  # (the oldest first: a head of the burst)
            if late:
                names = sorted({c for _, channels, _ in late for c in channels})
                log.error("%d frame(s) for %s could not be published: %s", len(late), names, error)
                metrics.BROKER_DROPPED.inc(len(late))
                burst = burst[len(late):]
                continue
            due = self._due(burst[0][2])
            # A task of its own, which the stop can cut short (``_on_shutdown``): a broker that
            # does not answer would hold an attempt begun before the stop for its full patience.
            attempt = self._attempt = asyncio.ensure_future(many([(frame, names) for frame, names, _ in burst]))
            try:
                await asyncio.wait({attempt}, timeout=due - now)
            except BaseException:  # (this task cancelled: the attempt goes with it)
                attempt.cancel()
                raise
            finally:
                self._attempt = None
            if not attempt.done():
                attempt.cancel()  # (redis-py drops the connection of a command cut short)
                error = TimeoutError(f"no answer within {due - now:.1f} s")
            elif attempt.cancelled():
                error = ConnectionError("cut short: the process is stopping")
            elif attempt.exception() is not None:
                error = attempt.exception()
            else:
                return
            await asyncio.sleep(max(0.0, min(pause, self._due(burst[0][2]) - time.monotonic())))
            pause = min(pause * 2, 2.0)

    def _due(self, published_at: float) -> float:
        due = published_at + PUBLISH_PATIENCE
        return due if self._closing_at is None else min(due, self._closing_at + CLOSING_PATIENCE)

    async def _on_startup(self) -> None:
        # A fan-out of its own for each start: one left from an earlier start on another
        # loop (a stop that gave up with frames waiting) would wait for that loop's turns.
        self.fanout = Fanout()
        await super()._on_startup()

    async def _on_shutdown(self) -> None:
        # Litestar's waits for every frame queued to be published: with the broker away that
        # was for ever. Now a frame gets CLOSING_PATIENCE more, and an attempt that has not
        # answered by then is cut short. (The tables stopped before: ``on_app_init``.)
        self._closing_at = time.monotonic()
        cut = asyncio.get_running_loop().call_later(CLOSING_PATIENCE, self._cut_short)
        try:
            # The tables' last frames to this process's sockets first (paced: they may wait).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.fanout.until_empty(), CLOSING_PATIENCE)
            await super()._on_shutdown()
        finally:
            cut.cancel()

    def _cut_short(self) -> None:
        if self._attempt is not None and not self._attempt.done():
            self._attempt.cancel()

    def on_app_init(self, app_config: Any) -> Any:
        """Litestar's, with the plugin's lifespan first: entered before the app's own (which
        starts the tables) and left after it, so the tables stop, and publish their last
        frames, while the channels still run (left first, they dropped those frames)."""
        app_config = super().on_app_init(app_config)
        app_config.lifespan.remove(self)
        app_config.lifespan.insert(0, self)
        return app_config

    async def _drop(self, channels: list[str]) -> None:
        with contextlib.suppress(Exception):
            await self._backend.unsubscribe([c for c in channels if not self._channels.get(c)])


class ResilientPubSubBackend(RedisChannelsPubSubBackend):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        # One pub/sub command at a time (see the module's doc): the first one connects,
        # and no (un)subscription interleaves with another's bookkeeping or a resubscription.
        self._commands = asyncio.Lock()
        # This process's frames on Redis, skipped when they come back: ``Channels`` hands them
        # to the process's subscribers itself (with Litestar's own plugin they would be lost).
        self.mark = ORIGIN + os.urandom(MARK - len(ORIGIN))
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
        """One frame (``Channels.wait_published``), one attempt: raises if it fails."""
        await self.publish_many([(data, list(channels))])

    async def publish_many(self, frames: list[tuple[bytes, list[str]]]) -> None:
        """``frames`` in one pipeline, in order, each marked as this process's; raises if
        it fails (``Channels`` tries it again). PUBLISH needs no script for one channel at a
        time: Litestar's Lua script only made a multi-channel publish atomic, and nothing
        here relies on that."""
        pipe = self._redis.pipeline(transaction=False)
        mark = self.mark
        for data, channels in frames:
            marked = mark + data
            for channel in dict.fromkeys(channels):
                pipe.publish(channel, marked)
        await pipe.execute()

    async def stream_events(self) -> AsyncGenerator[tuple[str, Any], None]:
        while True:
            try:
                async for channel, data in super().stream_events():
                    if data[:1] == ORIGIN:
                        if data[:MARK] == self.mark:
                            continue  # ours: this process's subscribers had it (``Channels.publish``)
                        data = data[MARK:]
                    yield channel, data
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
