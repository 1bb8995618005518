"""An outsider's review of the crowd tables' hub (``server.ws.hub``) and of the channels fix
(``server.channels_backend``: ``Channels`` waits for a channel's SUBSCRIBE, the backend's
commands go one at a time), without a server: the channels against a Redis of the test's own
(stopped and started again where the test says so), the hub against a fake subscription.

Bugs the review found, fixed since and kept here: a subscription that failed or was cancelled
half-way stayed registered in Litestar's plugin, so the channel was dead in the process for
every later subscriber (or kept a queue nobody read filling for good); a hub whose start
failed refused the next player."""

from __future__ import annotations

import asyncio
import contextlib

import msgspec
import pytest

from server import crowd
from server.channels_backend import RESYNC, Channels, ResilientPubSubBackend
from server.ws import hub as hubs
from server.ws.shares import frame_for

from .test_crowd import _Source

# ---- the channels, on a real Redis ------------------------------------------------------------


def _plugin(url: str, prefix: str) -> tuple[Channels, ResilientPubSubBackend]:
    from redis.asyncio import Redis

    backend = ResilientPubSubBackend(redis=Redis.from_url(url), key_prefix=prefix)
    return Channels(backend=backend, arbitrary_channels_allowed=True), backend


async def _next(subscriber, seconds: float = 2.0) -> bytes | None:
    try:
        return await asyncio.wait_for(subscriber._queue.get(), seconds)
    except TimeoutError:
        return None


async def _until_heard(plugin: Channels, subscriber, channel: str, seconds: float = 15.0) -> bool:
    """Publish on ``channel`` from ``plugin`` (another process's: a process hears its own
    frames without the broker) until ``subscriber`` hears it (the broker back, resubscribed)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        with contextlib.suppress(Exception):
            await plugin.wait_published(b"ping", [channel])
        got = await _next(subscriber, 0.3)
        while got == RESYNC:
            got = await _next(subscriber, 0.3)
        if got == b"ping":
            return True
    return False


async def test_a_subscribe_refused_while_the_broker_is_away_is_tried_again_later(own_redis):
    """The hub's own comment: 'its subscription failed (the broker away): the next one tries
    again'. Litestar's plugin registers the subscriber before the backend's SUBSCRIBE and keeps
    it when that raises; every later subscriber of the channel then finds it 'subscribed' and
    sends no SUBSCRIBE: after the broker is back, nothing published there reaches the process."""
    from server.redis_embedded import _shutdown, _spawn

    folder, url = own_redis
    plugin, _ = _plugin(url, "away")
    other, _ = _plugin(url, "away-other")  # another process, publishing
    async with plugin, other:
        warm = await plugin.subscribe("away-warm")  # (the process's watchers: the connection is up)
        _shutdown(folder)
        await asyncio.sleep(0.3)
        # ``ready`` does not hang: the subscribe is refused (and quickly).
        with pytest.raises(Exception):  # noqa: B017,PT011  (redis' ConnectionError, whatever its class)
            await asyncio.wait_for(plugin.subscribe("away-table"), 10)
        _spawn(folder)
        assert await _until_heard(other, warm, "away-warm")  # resubscribed: the process hears again
        again = await asyncio.wait_for(plugin.subscribe("away-table"), 10)  # (answered at once)
        await other.wait_published(b"after", ["away-table"])
        assert await _next(again) == b"after"


async def test_a_subscribe_cancelled_while_waiting_its_turn_leaves_the_channel_alive(own_redis):
    """A socket that closes while its subscribe waits for the backend's lock (a busy broker, a
    resubscription running): its task is cancelled. The next subscriber of the table must still
    hear it."""
    _, url = own_redis
    plugin, backend = _plugin(url, "cancel")
    other, _ = _plugin(url, "cancel-other")  # another process, publishing
    async with plugin, other:
        await plugin.subscribe("cancel-warm")
        async with backend._commands:
            gone = asyncio.create_task(plugin.subscribe("cancel-table"))
            await asyncio.sleep(0.1)
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
        later = await asyncio.wait_for(plugin.subscribe("cancel-table"), 5)
        await other.wait_published(b"hello", ["cancel-table"])
        assert await _next(later) == b"hello"


async def test_a_subscriber_cancelled_while_waiting_for_ready_is_not_kept(own_redis):
    """``Channels.subscribe`` waits for ``ready`` after Litestar registered the subscriber: a
    cancellation there (the socket closed) leaves a subscriber nobody reads registered for
    good; the channel stays subscribed after its last real subscriber left, and each frame
    published on it is queued there (unbounded: no max_backlog)."""
    from redis.asyncio import Redis

    _, url = own_redis
    plugin, backend = _plugin(url, "ready")
    other, _ = _plugin(url, "ready-other")  # another process, publishing
    async with plugin, other:
        await plugin.subscribe("ready-warm")
        async with backend._commands:
            first = asyncio.create_task(plugin.subscribe("ready-table"))
            await asyncio.sleep(0.05)
            second = asyncio.create_task(plugin.subscribe("ready-table"))  # waits for ``ready``
            await asyncio.sleep(0.05)
            second.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await second
        kept = await asyncio.wait_for(first, 5)
        for i in range(3):
            await other.wait_published(f"f{i}".encode(), ["ready-table"])
        assert [await _next(kept) for _ in range(3)] == [b"f0", b"f1", b"f2"]
        await plugin.unsubscribe(kept, "ready-table")
        await asyncio.sleep(0.2)
        broker = Redis.from_url(url)
        try:
            left = await broker.pubsub_numsub("ready-table")
        finally:
            await broker.aclose()
        orphans = plugin._channels.get("ready-table", set())
        assert not orphans and left == [(b"ready-table", 0)], (len(orphans), left)


async def test_subscribes_and_unsubscribes_crowding_one_channel_all_hear_it(own_redis):
    """Held: subscribe/unsubscribe churn on one channel while the backend's commands queue up
    (UNSUBSCRIBE then SUBSCRIBE of the same channel in one queue) never leaves a live
    subscriber deaf."""
    _, url = own_redis
    plugin, backend = _plugin(url, "churn")
    other, _ = _plugin(url, "churn-other")  # another process, publishing
    async with plugin, other:
        await plugin.subscribe("churn-warm")
        a = await plugin.subscribe("churn-t")
        async with backend._commands:
            out = asyncio.create_task(plugin.unsubscribe(a, "churn-t"))  # UNSUBSCRIBE queued
            await asyncio.sleep(0.05)
            b = asyncio.create_task(plugin.subscribe("churn-t"))  # SUBSCRIBE queued after it
            await asyncio.sleep(0.05)
            c = asyncio.create_task(plugin.subscribe("churn-t"))  # (waits for b's)
            await asyncio.sleep(0.05)
        await out
        sb, sc = await asyncio.wait_for(asyncio.gather(b, c), 5)
        await other.wait_published(b"x", ["churn-t"])
        assert await _next(sb) == await _next(sc) == b"x"


# ---- the hub, on a fake subscription -----------------------------------------------------------


class _SlowChannels:
    """A subscription that takes its time (a busy broker) until ``go`` is set."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.sources: list[_Source] = []

    async def subscribe(self, channel: str) -> _Source:
        await self.go.wait()
        self.sources.append(_Source())
        return self.sources[-1]

    async def unsubscribe(self, subscriber: _Source, channel: str) -> None:
        pass


async def test_a_hub_whose_first_joiner_went_away_does_not_refuse_the_next():
    """The first player's socket closes while the hub's subscription is being made (its task
    cancelled): the next player at the table must get the hub, not a refusal meant for a broker
    that is away."""
    channels, registry = _SlowChannels(), {}
    first = asyncio.create_task(hubs.join(registry, channels, "t", "ann"))
    await asyncio.sleep(0.05)
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first
    channels.go.set()
    member = await hubs.join(registry, channels, "t", "bob")
    assert registry["t"].members == {member}
    await hubs.leave(registry, "t", member)


class _FailingOnceChannels(_SlowChannels):
    """A subscription refused once (the broker away), then made."""

    def __init__(self) -> None:
        super().__init__()
        self.go.set()
        self.refused = False

    async def subscribe(self, channel: str) -> _Source:
        if not self.refused:
            self.refused = True
            raise ConnectionError("the broker is away")
        return await super().subscribe(channel)


async def test_a_hub_whose_subscription_was_refused_is_tried_again_by_the_next_player():
    channels, registry = _FailingOnceChannels(), {}
    with pytest.raises(ConnectionError):
        await hubs.join(registry, channels, "t", "ann")
    member = await hubs.join(registry, channels, "t", "bob")  # "the next one tries again" (hub.py)
    assert registry["t"].members == {member} and len(channels.sources) == 1
    await hubs.leave(registry, "t", member)


async def test_a_hub_joined_while_it_starts_then_left_by_all_is_stopped():
    """Held: players who join while the hub's subscription is being made all get the same hub;
    when they have all left it is stopped and out of the registry, and a later player gets a
    fresh one."""
    channels, registry = _SlowChannels(), {}
    joins = [asyncio.create_task(hubs.join(registry, channels, "t", p)) for p in ("ann", "bob", "cy")]
    await asyncio.sleep(0.05)
    channels.go.set()
    members = await asyncio.gather(*joins)
    (hub,) = registry.values()
    assert hub.members == set(members) and len(channels.sources) == 1
    for m in members:
        await hubs.leave(registry, "t", m)
    assert not registry and hub.task.done()
    again = await hubs.join(registry, channels, "t", "ann")
    assert registry["t"] is not hub and registry["t"].members == {again}
    await hubs.leave(registry, "t", again)


def _frame(seq: int, *events: dict) -> bytes:
    first = seq - len(events) + 1
    return msgspec.json.encode({"type": "events", "table": "t", "seq": seq, "events": [
        {"seq": first + i, "round": "spin-1", "event": e} for i, e in enumerate(events)]})


async def test_a_hub_reports_a_gap_not_a_repeated_or_older_frame():
    """Held: a frame the hub has already seen (a broker's duplicate) or one older than the last
    is no gap; a gap after a RESYNC is still reported."""
    channels, registry = _SlowChannels(), {}
    channels.go.set()
    ann = await hubs.join(registry, channels, "t", "ann")
    src = channels.sources[0]
    opened = {"type": "spin_opened", "spin": 1}
    for f in (_frame(5, opened), _frame(5, opened), _frame(4, opened), RESYNC, _frame(8, opened)):
        src.queue.put_nowait(f)
    await asyncio.sleep(0.05)
    got = [RESYNC if f.startswith(RESYNC) else f for f in ann.early]  # (a RESYNC may say more)
    assert got == [_frame(5, opened), _frame(5, opened), _frame(4, opened), RESYNC, RESYNC, _frame(8, opened)]
    await hubs.leave(registry, "t", ann)


async def test_a_new_hub_reports_what_its_first_frame_skipped_since_a_sockets_snapshot():
    """A hub made just now has no frame to check its first against: a socket whose snapshot is
    older than that frame is told to read the rest from PostgreSQL. Ann's snapshot (seq 3) was
    taken before the first frame, which starts at 6 (4 and 5 lost on the way): she gets a bare
    RESYNC (read from her own seq) ahead of it. Bob joined before the frame and read his
    snapshot after it: ``anchor`` names 5, what he must read before the frames waiting for
    him. Cy's snapshot (5) and Dan's (7) miss nothing. A table that moved: the new owner's
    frame 8 overtakes the old owner's 7 at a fresh hub; Eve (snapshot 6) reads 7 from
    PostgreSQL first, and the late 7 is no hole."""
    channels, registry = _SlowChannels(), {}
    channels.go.set()
    ann = await hubs.join(registry, channels, "t", "ann")
    bob = await hubs.join(registry, channels, "t", "bob")
    assert ann.anchor(3) is None  # (no frame yet)
    opened = {"type": "spin_opened", "spin": 1}
    channels.sources[0].queue.put_nowait(_frame(6, opened))
    await asyncio.sleep(0.05)
    assert ann.early == [RESYNC, _frame(6, opened)] and bob.early == [_frame(6, opened)]
    assert bob.anchor(3) == 5
    cy = await hubs.join(registry, channels, "t", "cy")
    dan = await hubs.join(registry, channels, "t", "dan")
    assert cy.anchor(5) is None and dan.anchor(7) is None
    for m in (ann, bob, cy, dan):
        await hubs.leave(registry, "t", m)

    eve = await hubs.join(registry, channels, "t", "eve")
    assert eve.anchor(6) is None
    for f in (_frame(8, opened), _frame(7, opened)):
        channels.sources[-1].queue.put_nowait(f)
    await asyncio.sleep(0.05)
    assert eve.early == [RESYNC, _frame(8, opened), _frame(7, opened)]
    await hubs.leave(registry, "t", eve)


# ---- what a player's share holds ---------------------------------------------------------------


def test_every_roulette_event_naming_another_player_is_out_of_his_share():
    """Held: each roulette event with a ``player`` is shown to him alone, whatever else it
    carries (a late bet's ``entered_by``, an announced bet's pieces, a prisoner's spot), in the
    live frame and read back from PostgreSQL alike."""
    others = [
        {"type": "wager_placed", "wager": "s1-w2", "player": "bob", "amount": 1000, "spot": "noir"},
        {"type": "wager_settled", "wager": "s1-w2", "player": "bob", "stake": 1000, "returned": 0, "won": 0},
        {"type": "wager_voided", "wager": "s1-w2", "player": "bob", "amount": 1000},
        {"type": "announced_bet_placed", "announce": "a1", "player": "bob", "name": "voisins", "unit": 100,
         "amount": 900, "pieces": [{"spot": "plein 0", "units": 1, "amount": 100, "wager": "s1-w3"}]},
        {"type": "over_maximum_entered", "wager": "s1-w4", "player": "bob", "spot": "plein 1", "maximum": 1,
         "excess": 1, "entered_by": "croupier"},
        {"type": "bets_restated", "player": "bob", "stakes": []},
        {"type": "late_bet_pending", "late": "l1", "player": "bob", "stakes": [], "entered_by": "croupier"},
        {"type": "late_bet_accepted", "late": "l1", "player": "bob", "by": "chef"},
        {"type": "late_bet_refused", "late": "l1", "player": "bob", "reason": "late"},
        {"type": "wager_imprisoned", "wager": "s1-w2", "player": "bob", "spot": "noir", "spin": 1},
        {"type": "prisoner_stays", "wager": "s1-w2", "player": "bob", "spot": "noir", "spin": 2},
        {"type": "prisoner_moved", "wager": "s1-w2", "player": "bob", "from_spot": "noir", "to_spot": "rouge"},
        {"type": "partage_preference_set", "player": "bob", "partage": True},
        {"type": "unclaimed_recorded", "player": "bob", "spin": 1, "kind": "bets", "amount": 1, "wagers": [],
         "by": "croupier"},
    ]
    for i, event in enumerate(others):
        assert frame_for(_frame(i + 1, event), "ann") is None, event["type"]
        assert crowd.sees_stored(msgspec.json.encode(event), "ann") is None, event["type"]
        assert frame_for(_frame(i + 1, event), "bob") is not None
