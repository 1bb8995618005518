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
