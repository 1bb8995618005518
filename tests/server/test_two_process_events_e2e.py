"""Table events between processes on Redis pub/sub (``server.channels_backend``): every
channel subscribed in a process reaches its subscribers there, however the subscriptions
crowd in; and a tournament served by one process reaches its players' sockets on another,
every event of it up to its end."""

from __future__ import annotations

import asyncio

import pytest
from litestar.channels import ChannelsPlugin

from server.channels_backend import Channels, ResilientPubSubBackend

from .conftest import Floor
from .test_many_processes_e2e import redis_url as redis_url  # (a fixture)
from .test_tournament_e2e import events_of
from .test_tournament_review_e2e import clean, create, enter_and_start


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


@pytest.fixture
async def own_db(pg_url: str):
    from helpers.databases import new_database

    async with new_database(pg_url, "twoev") as url:
        yield url


@pytest.mark.slow
async def test_every_tournament_event_reaches_the_players_on_the_other_process(own_db, redis_url,
                                                                                tmp_path_factory):
    """The tournament on a, its players' sockets on b: each gets every seq of the
    tournament's channel after its snapshot, and its bot stops on "finished"."""
    from server.placement import preferred

    from .conftest import owner_id
    from .test_many_processes_e2e import _processes

    a, b = _processes(own_db, redis_url, tmp_path_factory.mktemp("two-ev"), 2, CASINO_BETTING_SECONDS="1",
                      CASINO_DECISION_SECONDS="1")
    a.start()
    b.start()
    try:
        ids = [owner_id(a), owner_id(b)]
        tid = next(t for t in (f"tw-ev{i}" for i in range(10_000))
                   if preferred(t, ids) == ids[0] and preferred(f"{t}-1-1", ids) == ids[1])
        floor = Floor(a)
        director = await floor.account("twev-dir", "director")
        players = [await Floor(b).account(f"twev-{i}", chips=30_000, currency="EUR") for i in range(3)]
        await create(director, tid)
        bots, runs = await enter_and_start(director, tid, players)
        (done,) = await events_of(director, tid, "finished", timeout=60)
        _, late = await asyncio.wait(runs, timeout=15)
        for r in late:
            r.cancel()
        final = director.last_seq[tid]
        for p in players:
            await p.wait_seq(tid, final, timeout=15)
            seqs = [f["seq"] for f in p.frames if f.get("type") == "event" and f["table"] == tid]
            start = p.snapshots[tid]["seq"]
            assert [s for s in seqs if s <= final] == list(range(start + 1, final + 1)), (p.user, start, seqs)
        assert {bt.out for bt in bots} <= {"finished", "eliminated"}, [bt.out for bt in bots]
        assert sum(done["prizes"].values()) == 3 * 10_000
        assert sum(bt.hands for bt in bots) > 0 and not [bt.errors for bt in bots if bt.errors]
        await clean(floor, a, tid)
        for c in (director, *players):
            await c.close()
    finally:
        a.stop()
        b.stop()
