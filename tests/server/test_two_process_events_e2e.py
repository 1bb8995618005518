"""Table events between processes on Redis pub/sub (``server.channels_backend``): every
channel subscribed in a process reaches its subscribers there, however the subscriptions
crowd in. (A tournament served by one process, its players' sockets on another, every event
of it up to its end: ``test_tournament_review_e2e``.)"""

from __future__ import annotations

import asyncio

from litestar.channels import ChannelsPlugin

from server.channels_backend import Channels, ResilientPubSubBackend

from .test_many_processes_e2e import redis_url as redis_url  # (a fixture)


def _backend(url: str, prefix: str) -> ResilientPubSubBackend:
    from redis.asyncio import Redis

    return ResilientPubSubBackend(redis=Redis.from_url(url), key_prefix=prefix)


async def _next(subscriber, seconds: float = 2.0) -> bytes | None:
    try:
        return await asyncio.wait_for(subscriber._queue.get(), seconds)
    except TimeoutError:
        return None


async def test_first_subscriptions_at_once_all_reach_the_process(redis_url):
    """Two watchers at a process's start, or two sockets on a fresh process: both first
    subscriptions at once. redis-py's PubSub took a connection for each, kept one, and the
    other channel went to a connection nobody reads (its messages lost for good)."""
    from redis.asyncio import Redis

    plugin = ChannelsPlugin(backend=_backend(redis_url, "first"), arbitrary_channels_allowed=True)
    names = [f"first-{i}" for i in range(4)]
    async with plugin:
        subscribers = await asyncio.gather(*(plugin.subscribe(n) for n in names))
        for i, name in enumerate(names):
            await plugin.wait_published(f"m{i}".encode(), [name])
        assert [await _next(s) for s in subscribers] == [f"m{i}".encode() for i in range(len(names))]
        broker = Redis.from_url(redis_url)
        try:
            assert (await broker.pubsub_numsub(*names)) == [(n.encode(), 1) for n in names]
        finally:
            await broker.aclose()


async def test_a_channels_second_subscriber_returns_once_it_is_subscribed(redis_url):
    """Litestar's plugin asks the broker for a channel's first subscriber only: a second
    one came back while the first's SUBSCRIBE still waited, and read its snapshot before the
    channel reached the process."""
    backend = _backend(redis_url, "second")
    plugin = Channels(backend=backend, arbitrary_channels_allowed=True)
    async with plugin:
        await plugin.subscribe("second-warm")  # (connected)
        async with backend._commands:  # the first subscriber's SUBSCRIBE waits its turn
            first = asyncio.create_task(plugin.subscribe("second-x"))
            second = asyncio.create_task(plugin.subscribe("second-x"))
            await asyncio.sleep(0.2)
            assert not first.done() and not second.done()
        s1, s2 = await asyncio.wait_for(asyncio.gather(first, second), 5)
        await plugin.wait_published(b"just after", ["second-x"])
        assert await _next(s1) == await _next(s2) == b"just after"


class _Bursts(ResilientPubSubBackend):
    """The real backend, recording the size of each burst it is handed."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.bursts: list[int] = []

    async def publish_many(self, frames):
        self.bursts.append(len(frames))
        await super().publish_many(frames)


async def test_frames_queued_together_go_out_in_one_burst_in_order(redis_url):
    """Litestar's publishing task sent one frame a round trip: two workers at their peak
    published seconds behind their tables. Every frame waiting is now one pipeline, in
    the order published, each channel of a frame once."""
    from redis.asyncio import Redis

    from server.channels_backend import PUBLISH_BURST

    backend = _Bursts(redis=Redis.from_url(redis_url), key_prefix="burst")
    plugin = Channels(backend=backend, arbitrary_channels_allowed=True)
    async with plugin:
        a, b = await plugin.subscribe("burst-a"), await plugin.subscribe("burst-b")
        total = PUBLISH_BURST + 44
        for i in range(total):  # all queued before the publishing task runs again
            plugin.publish(f"f{i}".encode(), ["burst-a", "burst-b", "burst-a"] if i % 2 else ["burst-a"])
        got_a = [await _next(a) for _ in range(total)]
        got_b = [await _next(b) for _ in range(total // 2)]
        assert got_a == [f"f{i}".encode() for i in range(total)]
        assert got_b == [f"f{i}".encode() for i in range(1, total, 2)]
        assert await _next(a, 0.3) is None and await _next(b, 0.3) is None  # each once
        assert backend.bursts == [PUBLISH_BURST, 44]
        assert plugin.publish_queue == 0


async def test_a_burst_the_broker_refused_is_sent_again_whole(redis_url):
    """A burst whose pipeline fails (the broker's connection dropped under it) is sent
    again, all of it, in order: nothing published after it overtakes it."""
    from redis.asyncio import Redis

    class Flaky(_Bursts):
        failures = 1

        async def _send(self, frames):
            if self.failures:
                self.failures -= 1
                raise ConnectionError("the broker's connection dropped")
            await super()._send(frames)

    backend = Flaky(redis=Redis.from_url(redis_url), key_prefix="flaky")
    plugin = Channels(backend=backend, arbitrary_channels_allowed=True)
    async with plugin:
        s = await plugin.subscribe("flaky-a")
        for i in range(5):
            plugin.publish(f"g{i}".encode(), ["flaky-a"])
        assert [await _next(s) for _ in range(5)] == [f"g{i}".encode() for i in range(5)]
        assert backend.failures == 0 and backend.bursts == [5]
