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
    other = Channels(backend=_backend(redis_url, "first-other"), arbitrary_channels_allowed=True)  # another process
    names = [f"first-{i}" for i in range(4)]
    async with plugin, other:
        subscribers = await asyncio.gather(*(plugin.subscribe(n) for n in names))
        for i, name in enumerate(names):
            await other.wait_published(f"m{i}".encode(), [name])
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
    owner = Channels(backend=_backend(redis_url, "second-owner"), arbitrary_channels_allowed=True)  # another process
    async with plugin, owner:
        await plugin.subscribe("second-warm")  # (connected)
        async with backend._commands:  # the first subscriber's SUBSCRIBE waits its turn
            first = asyncio.create_task(plugin.subscribe("second-x"))
            second = asyncio.create_task(plugin.subscribe("second-x"))
            await asyncio.sleep(0.2)
            assert not first.done() and not second.done()
        s1, s2 = await asyncio.wait_for(asyncio.gather(first, second), 5)
        await owner.wait_published(b"just after", ["second-x"])
        assert await _next(s1) == await _next(s2) == b"just after"


async def _drained(plugin: Channels) -> bool:
    """Until nothing waits to be published (the subscriber may have a frame before the
    publisher has Redis's answer)."""
    for _ in range(40):
        if plugin.publish_queue == 0:
            return True
        await asyncio.sleep(0.05)
    return False


class _Bursts(ResilientPubSubBackend):
    """The real backend, recording the size of each burst it is handed."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.bursts: list[int] = []

    async def publish_many(self, frames):
        self.bursts.append(len(frames))
        await super().publish_many(frames)


class _Away(_Bursts):
    """The real backend, with the broker out of its reach while ``down``."""

    down = True

    async def publish_many(self, frames):
        if self.down:
            raise ConnectionError("the broker is gone")
        await super().publish_many(frames)


async def test_frames_queued_together_go_out_in_one_burst_in_order(redis_url):
    """Litestar's publishing task sent one frame a round trip: two workers at their peak
    published seconds behind their tables. Every frame waiting is now one pipeline, and
    reaches the other process in the order published, each channel of a frame once."""
    from redis.asyncio import Redis

    from server.channels_backend import PUBLISH_BURST

    backend = _Bursts(redis=Redis.from_url(redis_url), key_prefix="burst")
    owner = Channels(backend=backend, arbitrary_channels_allowed=True)
    other = Channels(backend=_backend(redis_url, "burst-other"), arbitrary_channels_allowed=True)
    async with owner, other:
        a, b = await other.subscribe("burst-a"), await other.subscribe("burst-b")
        total = PUBLISH_BURST + 44
        for i in range(total):  # all queued before the publishing task runs again
            owner.publish(f"f{i}".encode(), ["burst-a", "burst-b", "burst-a"] if i % 2 else ["burst-a"])
        got_a = [await _next(a) for _ in range(total)]
        got_b = [await _next(b) for _ in range(total // 2)]
        assert got_a == [f"f{i}".encode() for i in range(total)]
        assert got_b == [f"f{i}".encode() for i in range(1, total, 2)]
        assert await _next(a, 0.3) is None and await _next(b, 0.3) is None  # each once
        assert backend.bursts == [PUBLISH_BURST, 44]
        assert await _drained(owner)


async def test_a_process_hands_its_own_frames_to_its_subscribers_itself(redis_url):
    """A table's own sockets get its frames in their process, in order and once: never
    through the broker's round trip (nor its copy back), and not at all held up when the
    broker is unreachable. The other processes get them through the broker."""
    from redis.asyncio import Redis

    backend = _Away(redis=Redis.from_url(redis_url), key_prefix="own")
    backend.down = False
    owner = Channels(backend=backend, arbitrary_channels_allowed=True)
    other = Channels(backend=_backend(redis_url, "own-other"), arbitrary_channels_allowed=True)
    async with owner, other:
        here, there = await owner.subscribe("own-t"), await other.subscribe("own-t")
        for i in range(5):
            owner.publish(f"h{i}".encode(), ["own-t"])
        assert [await _next(here) for _ in range(5)] == [f"h{i}".encode() for i in range(5)]
        assert [await _next(there) for _ in range(5)] == [f"h{i}".encode() for i in range(5)]
        assert await _next(here, 0.3) is None  # the broker's copy of its own frames: skipped
        backend.down = True
        owner.publish(b"while down", ["own-t"])
        owner.publish(b"behind it", ["own-t"])
        assert [await _next(here), await _next(here)] == [b"while down", b"behind it"]
        assert await _next(there, 0.5) is None
        assert owner.publish_queue == 2  # the burst tried again, and the frame behind it
        backend.down = False  # back within the burst's patience: nothing lost, in order
        assert [await _next(there), await _next(there)] == [b"while down", b"behind it"]


async def test_a_broker_away_too_long_costs_frames_counted(redis_url, monkeypatch):
    """Past its patience a burst is dropped, logged and counted: the other processes'
    sockets fill the hole from PostgreSQL (its next frame shows it); the frames behind it
    go out."""
    from redis.asyncio import Redis

    from server import channels_backend, metrics

    monkeypatch.setattr(channels_backend, "PUBLISH_PATIENCE", 0.3)

    backend = _Away(redis=Redis.from_url(redis_url), key_prefix="away")
    owner = Channels(backend=backend, arbitrary_channels_allowed=True)
    other = Channels(backend=_backend(redis_url, "away-other"), arbitrary_channels_allowed=True)
    dropped = metrics.BROKER_DROPPED._value.get()
    async with owner, other:
        there = await other.subscribe("away-t")
        for i in range(3):
            owner.publish(f"lost{i}".encode(), ["away-t"])
        for _ in range(50):
            if metrics.BROKER_DROPPED._value.get() == dropped + 3:
                break
            await asyncio.sleep(0.1)
        assert metrics.BROKER_DROPPED._value.get() == dropped + 3
        backend.down = False
        owner.publish(b"next", ["away-t"])
        assert await _next(there) == b"next"
        assert await _drained(owner)


async def test_a_burst_stops_at_a_megabyte(redis_url):
    """A crowd's settlement is a frame of megabytes: 256 of them in one pipeline would pass
    Redis's output limit for a subscriber's connection, which Redis then drops."""
    from redis.asyncio import Redis

    backend = _Bursts(redis=Redis.from_url(redis_url), key_prefix="big")
    owner = Channels(backend=backend, arbitrary_channels_allowed=True)
    other = Channels(backend=_backend(redis_url, "big-other"), arbitrary_channels_allowed=True)
    async with owner, other:
        there = await other.subscribe("big-t")
        frames = [bytes([65 + i]) * 300_000 for i in range(8)]
        for frame in frames:
            owner.publish(frame, ["big-t"])
        assert [await _next(there) for _ in frames] == frames
        assert backend.bursts == [4, 4]  # 1.2 MB each: a burst stops once past 1 MiB


async def test_a_burst_the_broker_refused_is_sent_again_whole(redis_url):
    """A burst whose pipeline fails (the broker's connection dropped under it) is sent
    again, all of it, in order: nothing published after it overtakes it."""
    from redis.asyncio import Redis

    class Flaky(_Bursts):
        failures = 1

        async def publish_many(self, frames):
            if self.failures:  # the first two went through, then the connection dropped
                self.failures -= 1
                await super().publish_many(frames[:2])
                raise ConnectionError("the broker's connection dropped")
            await super().publish_many(frames)

    backend = Flaky(redis=Redis.from_url(redis_url), key_prefix="flaky")
    owner = Channels(backend=backend, arbitrary_channels_allowed=True)
    other = Channels(backend=_backend(redis_url, "flaky-other"), arbitrary_channels_allowed=True)
    async with owner, other:
        s = await other.subscribe("flaky-a")
        for i in range(5):
            owner.publish(f"g{i}".encode(), ["flaky-a"])
        # (twice over for the first two: a socket's seq check drops the second copies)
        assert [await _next(s) for _ in range(7)] == [b"g0", b"g1", b"g0", b"g1", b"g2", b"g3", b"g4"]
        assert await _next(s, 0.3) is None
        assert backend.failures == 0 and backend.bursts == [2, 5]


async def test_a_stop_with_the_broker_away_waits_seconds_not_for_ever(redis_url, monkeypatch):
    """With the broker away, Litestar's wait for every queued frame at the stop never ended
    (and the supervisor's kill came before the leases were handed over). Once stopping, a
    frame gets 2 s, not its 15 s (here 60), and what is left is dropped and counted."""
    from redis.asyncio import Redis

    from server import channels_backend, metrics

    monkeypatch.setattr(channels_backend, "PUBLISH_PATIENCE", 60.0)
    owner = Channels(backend=_Away(redis=Redis.from_url(redis_url), key_prefix="stop"), arbitrary_channels_allowed=True)
    dropped = metrics.BROKER_DROPPED._value.get()
    await owner.__aenter__()
    for _ in range(5):
        owner.publish(b"frame", ["stop-t"])
    await asyncio.sleep(0.3)
    await asyncio.wait_for(owner.__aexit__(None, None, None), 10)  # (not a speed check: it ended)
    assert metrics.BROKER_DROPPED._value.get() == dropped + 5


async def test_a_stop_cuts_short_an_attempt_the_broker_never_answers(redis_url, monkeypatch):
    """A broker that takes the pipeline and never answers (no socket timeout) held the
    attempt begun before the stop for its frames' whole patience."""
    from redis.asyncio import Redis

    from server import channels_backend, metrics

    class Silent(_Bursts):
        async def publish_many(self, frames):
            await asyncio.Event().wait()  # no answer, ever

    monkeypatch.setattr(channels_backend, "PUBLISH_PATIENCE", 60.0)
    owner = Channels(backend=Silent(redis=Redis.from_url(redis_url), key_prefix="silent"),
                     arbitrary_channels_allowed=True)
    dropped = metrics.BROKER_DROPPED._value.get()
    await owner.__aenter__()
    owner.publish(b"frame", ["silent-t"])
    await asyncio.sleep(0.3)  # (the attempt under way)
    await asyncio.wait_for(owner.__aexit__(None, None, None), 10)
    assert metrics.BROKER_DROPPED._value.get() == dropped + 1


async def test_the_tables_last_frames_go_out_before_the_channels_stop(redis_url):
    """The app's lifespan stops the tables; the channels plugin's lifespan must end after it,
    or a table's last frames (its batch under way, its closing) are published into a plugin
    already stopped: lost to the other processes, and not even counted."""
    from contextlib import asynccontextmanager

    from litestar import Litestar

    owner = Channels(backend=_backend(redis_url, "last"), arbitrary_channels_allowed=True)
    other = Channels(backend=_backend(redis_url, "last-other"), arbitrary_channels_allowed=True)

    @asynccontextmanager
    async def tables(app):
        yield
        owner.publish(b"the table's last frame", ["last-t"])  # (manager.stop(), in server.app)

    app = Litestar(route_handlers=[], lifespan=[tables], plugins=[owner])
    async with other:
        there = await other.subscribe("last-t")
        async with app.lifespan():
            pass
        assert await _next(there) == b"the table's last frame"
