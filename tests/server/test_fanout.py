"""The paced fan-out (``server.fanout``): a frame goes to its channel's subscribers until a
slice of the loop's time is spent, the rest at later turns, so the loop lets everything else
in between; each channel's frames still reach each subscriber once, in publication order.

The clock is the test's own, and only the subscribers move it (each hand-out costs one
unit), so which subscriber is served at which turn is exact, not a matter of this machine's
speed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st
from litestar.channels.backends.memory import MemoryChannelsBackend

from server.channels_backend import Channels, FeedSubscriber
from server.fanout import Fanout


class Clock:
    """Time that passes only as subscribers are served (``Sub.put_nowait``)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


CLOCK = Clock()  # the running test's (each makes its fan-out with ``_fanout``)


class Ticks:
    """A clock that moves on at each read, for subscribers that do not move ``CLOCK`` (a
    hub's members): with a slice under one, one subscriber a turn."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


class Sub:
    def __init__(self, name: str, log: list, fail: bool = False) -> None:
        self.name, self.log, self.fail = name, log, fail

    def put_nowait(self, frame: bytes) -> bool:
        CLOCK.now += 1
        if self.fail:
            raise RuntimeError("this subscriber is broken")
        self.log.append((self.name, frame))
        return True


def _fanout(per_turn: int, grow_after: float = 1e9, most_slices: float = 5) -> Fanout:
    """A fan-out whose turns serve ``per_turn`` subscribers (the clock is read before each:
    a slice of per_turn - 0.5 lets per_turn through); no growth unless ``grow_after`` says."""
    global CLOCK
    CLOCK = Clock()
    return Fanout(slice_seconds=per_turn - 0.5, clock=CLOCK, grow_after=grow_after, most_slices=most_slices)


async def _turns(n: int = 1) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def _subs(names: Iterable[str], log: list) -> list[Sub]:
    return [Sub(n, log) for n in names]


async def test_a_frame_within_the_slice_reaches_every_subscriber_at_once():
    log: list = []
    fanout = _fanout(per_turn=10)
    fanout.hand("t", b"f", _subs("abc", log))
    assert log == [("a", b"f"), ("b", b"f"), ("c", b"f")]
    assert not fanout.busy and fanout.frames == 0


async def test_a_long_hand_out_lets_the_loop_in_between_slices():
    log: list = []
    fanout = _fanout(per_turn=2)
    fanout.hand("t", b"f", _subs("abcde", log))
    asyncio.get_running_loop().call_soon(log.append, "another callback")
    assert log == [("a", b"f"), ("b", b"f")]
    assert fanout.frames == 1 and fanout.bytes == 1
    await _turns(3)
    # The rest's first slice was due before the other callback; the last one after it.
    assert log == [("a", b"f"), ("b", b"f"), ("c", b"f"), ("d", b"f"), "another callback", ("e", b"f")]
    assert not fanout.busy and fanout.frames == 0 and fanout.bytes == 0


async def test_a_channels_later_frames_wait_behind_its_frame_cut_short():
    log: list = []
    fanout = _fanout(per_turn=2)
    subs = _subs("abc", log)
    fanout.hand("t", b"1", subs)
    fanout.hand("t", b"2", subs)  # would fit a slice: waits, in order
    assert log == [("a", b"1"), ("b", b"1")]
    await _turns(4)
    for name in "abc":
        assert [f for n, f in log if n == name] == [b"1", b"2"]


async def test_channels_take_turns_so_a_big_frame_does_not_hold_back_another_tables():
    log: list = []
    fanout = _fanout(per_turn=2)
    fanout.hand("big", b"B", _subs(["b1", "b2", "b3", "b4", "b5", "b6"], log))
    fanout.hand("small", b"s", _subs(["s1"], log))  # another table, while the big one waits
    assert log == [("b1", b"B"), ("b2", b"B")]
    await _turns(1)  # the small table's frame first, though it came after the cut
    assert log == [("b1", b"B"), ("b2", b"B"), ("s1", b"s"), ("b3", b"B")]
    await _turns(2)
    assert [n for n, _ in log if n.startswith("b")] == ["b1", "b2", "b3", "b4", "b5", "b6"]
    assert not fanout.busy


async def test_a_channel_cut_short_goes_after_the_others_at_the_next_turn():
    log: list = []
    fanout = _fanout(per_turn=2)
    fanout.hand("a", b"A", _subs(["a1", "a2", "a3", "a4", "a5"], log))  # cut after a2
    fanout.hand("b", b"B", _subs(["b1", "b2", "b3"], log))  # waits behind
    await _turns(1)  # b first (it came after a was cut), and b is cut in turn
    assert log[2:] == [("b1", b"B"), ("b2", b"B")]
    await _turns(1)  # a again
    assert log[4:] == [("a3", b"A"), ("a4", b"A")]
    await _turns(2)
    assert log[6:] == [("b3", b"B"), ("a5", b"A")]


async def test_a_subscriber_that_fails_keeps_the_frame_from_no_one(caplog):
    log: list = []
    fanout = _fanout(per_turn=10)
    subs = [Sub("a", log), Sub("broken", log, fail=True), Sub("c", log)]
    fanout.hand("t", b"f", subs)
    assert log == [("a", b"f"), ("c", b"f")]
    assert "could not be handed to a subscriber" in caplog.text


async def test_a_frame_goes_to_the_subscribers_its_channel_had_when_it_was_taken_in():
    log: list = []
    fanout = _fanout(per_turn=1)
    channel = set(_subs("ab", log))
    fanout.hand("t", b"f", channel)
    channel.add(Sub("late", log))  # joined after: its snapshot is read after the frame's commit
    await _turns(3)
    assert sorted(n for n, _ in log) == ["a", "b"]


async def test_until_empty_returns_once_every_frame_is_out():
    log: list = []
    fanout = _fanout(per_turn=1)
    fanout.hand("t", b"xyz", _subs("abc", log))
    assert fanout.bytes == 3
    waiter = asyncio.ensure_future(fanout.until_empty())
    await _turns(1)
    assert not waiter.done()
    await asyncio.wait_for(waiter, 1)
    assert len(log) == 3 and fanout.frames == 0 and fanout.bytes == 0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.sampled_from("xyz"), st.integers(0, 2)), min_size=1, max_size=30))
def test_every_subscriber_gets_its_channels_frames_once_and_in_order(per_turn, plan):
    """Frames published on three channels (four subscribers each), the loop turning 0-2
    times between them, with any slice: each subscriber gets exactly its channel's frames,
    in the order they were published."""

    async def run() -> dict:
        log: list = []
        fanout = _fanout(per_turn)
        subs = {c: _subs([f"{c}{i}" for i in range(4)], log) for c in "xyz"}
        for k, (channel, turns) in enumerate(plan):
            fanout.hand(channel, b"%d" % k, subs[channel])
            await _turns(turns)
        await asyncio.wait_for(fanout.until_empty(), 5)
        got: dict = {}
        for name, frame in log:
            got.setdefault(name, []).append(int(frame))
        return got

    got = asyncio.run(run())
    for channel in "xyz":
        sent = [k for k, (c, _) in enumerate(plan) if c == channel]
        for i in range(4):
            assert got.get(f"{channel}{i}", []) == sent


async def test_the_plugin_paces_what_it_publishes_and_keeps_each_sockets_order():
    """The memory backend's plugin (one process): a frame published reaches every subscriber
    through the fan-out, a socket's feed in publication order."""
    plugin = Channels(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
    async with plugin:
        plugin.fanout.slice = 0.0  # one subscriber a turn
        got: dict[int, list[bytes]] = {}
        subscribers = []
        for i in range(5):
            sub = await plugin.subscribe("t")
            assert isinstance(sub, FeedSubscriber)
            sub.attach(got.setdefault(i, []).append)
            subscribers.append(sub)
        for n in range(3):
            plugin.publish(b"%d" % n, "t")
        await _turns(2)
        assert plugin.fanout.busy  # paced: not everyone has the first frame yet
        await asyncio.wait_for(plugin.fanout.until_empty(), 5)
        assert all(frames == [b"0", b"1", b"2"] for frames in got.values())


async def test_frames_from_the_broker_are_paced_in_order_per_channel(own_redis, monkeypatch):
    """Another process's frames, read off a real Redis: each subscriber here gets its
    channel's frames in the order they were published, with the hand-out cut at every
    subscriber and the broker's reader waiting for the fan-out at each frame."""
    from redis.asyncio import Redis

    from server import channels_backend
    from server.channels_backend import ResilientPubSubBackend

    monkeypatch.setattr(channels_backend, "FANOUT_HOLD_BYTES", 0)
    _, url = own_redis

    def plugin(prefix: str) -> Channels:
        backend = ResilientPubSubBackend(redis=Redis.from_url(url), key_prefix=prefix)
        return Channels(backend=backend, arbitrary_channels_allowed=True)

    here, there = plugin("paced-here"), plugin("paced-there")
    async with here, there:
        here.fanout.slice = 0.0
        got: dict[tuple[str, int], list[bytes]] = {}
        heard_all = asyncio.Event()

        def hear(key: tuple[str, int], frame: bytes) -> None:
            got[key].append(frame)
            if len(got) == 6 and all(len(v) == 20 for v in got.values()):
                heard_all.set()

        for channel in ("p1", "p2"):
            for i in range(3):
                sub = await here.subscribe(channel)
                got[(channel, i)] = []
                sub.attach(lambda frame, key=(channel, i): hear(key, frame))
        frames = {"p1": [b"a%d" % n for n in range(20)], "p2": [b"b%d" % n for n in range(20)]}
        for n in range(20):
            await there.wait_published(frames["p1"][n], ["p1"])
            await there.wait_published(frames["p2"][n], ["p2"])
        await asyncio.wait_for(heard_all.wait(), 10)
        for (channel, _), heard in got.items():
            assert heard == frames[channel]


async def test_a_crowd_hub_hands_on_through_the_fan_out_in_order():
    """A crowd table's hub (``server.ws.hub``) hands its frames on through the plugin's
    fan-out, on a line of its own: cut after every member, each socket still gets what
    concerns it, in order, a RESYNC after the frames it says went by."""
    from server.channels_backend import RESYNC
    from server.ws import hub as hubs

    from .test_crowd import ANN_BET, BOB_BET, RESULT, SETTLED, _Channels, _drain, _frame

    channels, registry = _Channels(), {}
    channels.fanout = Fanout(slice_seconds=0.5, clock=Ticks())  # one member a turn
    ann = await hubs.join(registry, channels, "t", "ann")
    bob = await hubs.join(registry, channels, "t", "bob")
    cy = await hubs.join(registry, channels, "t", "cy")
    bets, result, lost = _frame(3, ANN_BET, BOB_BET), _frame(5, RESULT, SETTLED), _frame(9, ANN_BET)
    for f in (bets, result, lost):
        channels.source.queue.put_nowait(f)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert channels.fanout.busy  # handed on over several turns
    await asyncio.wait_for(channels.fanout.until_empty(), 5)
    assert _drain(ann) == [bets, result, RESYNC + b":5", lost]
    assert _drain(bob) == [bets, result, RESYNC + b":5"]
    assert _drain(cy) == [result, RESYNC + b":5"]
    for m in (ann, bob, cy):
        await hubs.leave(registry, "t", m)


async def test_the_hand_outs_of_one_turn_share_its_budget():
    """Three tables' frames in one turn (three callbacks): the budget is the turn's, not
    each hand-out's; the second frame is cut, the third waits, both go on at the next turn."""
    log: list = []
    fanout = _fanout(per_turn=3)
    for channel in ("t1", "t2", "t3"):
        fanout.hand(channel, channel.encode(), _subs([f"{channel}a", f"{channel}b"], log))
    assert [n for n, _ in log] == ["t1a", "t1b", "t2a"]
    await _turns(1)  # t3 first: it began to wait after t2 was cut
    assert [n for n, _ in log] == ["t1a", "t1b", "t2a", "t3a", "t3b", "t2b"] and not fanout.busy


async def test_frames_to_one_socket_each_keep_to_the_budget_too():
    """Five tables' frames to one socket each, in one turn: three fit the budget, the others
    wait for the next turn (the clock is read before every subscriber, the first included)."""
    log: list = []
    fanout = _fanout(per_turn=3)
    for k in range(5):
        fanout.hand(f"t{k}", b"f", _subs([f"s{k}"], log))
    assert [n for n, _ in log] == ["s0", "s1", "s2"] and fanout.frames == 2
    await _turns(1)
    assert [n for n, _ in log] == ["s0", "s1", "s2", "s3", "s4"]


async def test_a_frame_handed_in_by_a_subscriber_waits_behind_the_one_being_handed_out():
    """A subscriber that publishes on the channel while it is handed a frame (none does
    today): the others still get the first frame first, cut short or not."""
    for per_turn in (10, 1):
        log: list = []
        fanout = _fanout(per_turn=per_turn)
        subs: list[Sub] = []
        subs += [Echoing("a", log, fanout, subs), Sub("b", log), Sub("c", log)]
        fanout.hand("t", b"1", subs)
        await asyncio.wait_for(fanout.until_empty(), 5)
        for name in "abc":
            assert [f for n, f in log if n == name] == [b"1", b"2"], per_turn


class Echoing(Sub):
    """A subscriber that hands the channel's subscribers a frame when it is handed frame 1."""

    def __init__(self, name: str, log: list, fanout: Fanout, subs: list) -> None:
        super().__init__(name, log)
        self.fanout, self.subs = fanout, subs

    def put_nowait(self, frame: bytes) -> bool:
        super().put_nowait(frame)
        if frame == b"1":
            self.fanout.hand("t", b"2", self.subs)
        return True


async def _served_per_turn(fanout: Fanout, log: list, turns: int) -> list[int]:
    counts = [len(log)]
    for _ in range(turns):
        await _turns(1)
        counts.append(len(log) - sum(counts))
    return counts


async def test_a_fan_out_behind_takes_more_of_each_turn_up_to_a_bound():
    """Six tables' frames wait for the fan-out's time, their hand-outs not begun, while a
    big frame goes out: each turn's budget grows by a slice for every ``grow_after`` the
    oldest of them has waited (here 2 units), up to ``most_slices`` (4 slices of 1.5: 6
    subscribers, the clock read before each); once none waits unbegun, one slice again."""
    log: list = []
    fanout = _fanout(per_turn=2, grow_after=2, most_slices=4)
    fanout.hand("a", b"big", _subs([f"a{i}" for i in range(40)], log))
    for channel in "bcdefg":
        fanout.hand(channel, b"f", _subs([f"{channel}{i}" for i in range(3)], log))  # since 2
    assert await _served_per_turn(fanout, log, 6) == [2, 2, 3, 6, 6, 2, 2]


async def test_a_big_frame_keeps_one_slice_a_turn_whatever_waits_behind_it():
    """Its own table's next frame waits for it, not for the loop: no growth, not even when
    the first ends just as a turn's budget does and the next reaches the head unbegun (its
    wait at the head counts from then, not from when it was published)."""
    log: list = []
    fanout = _fanout(per_turn=2, grow_after=2, most_slices=4)
    fanout.hand("t", b"big", _subs([f"s{i}" for i in range(6)], log))  # its last at a turn's end
    fanout.hand("t", b"next", _subs([f"x{i}" for i in range(40)], log))
    assert await _served_per_turn(fanout, log, 6) == [2, 2, 2, 2, 2, 2, 2]


async def test_the_brokers_reader_goes_on_once_half_of_what_waits_is_out():
    """The reader waits while more than the mark is waiting, and goes on as soon as no more
    is: not when everything is out (under load, that could be never)."""
    log: list = []
    fanout = _fanout(per_turn=1)
    fanout.hand("t1", b"x" * 20, _subs("ab", log))  # cut after a
    fanout.hand("t2", b"y" * 10, _subs([f"s{i}" for i in range(20)], log))  # behind it
    assert fanout.bytes == 30
    reader = asyncio.ensure_future(fanout.until_at_most(15))
    while not reader.done():
        await _turns(1)
    assert fanout.busy and fanout.bytes == 10  # t1's frame is out, t2's still going
    await asyncio.wait_for(fanout.until_empty(), 5)
    assert len(log) == 22


async def test_a_hub_frame_for_several_players_waits_as_one_frame():
    from server.ws import hub as hubs

    from .test_crowd import ANN_BET, BOB_BET, RESULT, SETTLED, _Channels, _frame

    channels, registry = _Channels(), {}
    channels.fanout = Fanout(slice_seconds=0.5, clock=Ticks())  # one member a turn
    members = [await hubs.join(registry, channels, "t", p) for p in ("ann", "bob", "cy")]
    result, bets = _frame(2, RESULT, SETTLED), _frame(4, ANN_BET, BOB_BET)
    channels.source.queue.put_nowait(result)  # to all three: cut after the first
    channels.source.queue.put_nowait(bets)  # ann's and bob's: one hand-out, behind it
    await asyncio.sleep(0)  # the hub's task takes both frames in one go (a queue with items: no wait)
    assert channels.fanout.frames == 2 and channels.fanout.bytes == len(result) + len(bets)
    await asyncio.wait_for(channels.fanout.until_empty(), 5)
    for m in members:
        await hubs.leave(registry, "t", m)


async def test_each_start_of_the_plugin_has_a_fan_out_of_its_own():
    """A stop that gave up with frames waiting (its patience spent) leaves nothing that a
    later start of the same plugin would wait for."""
    plugin = Channels(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
    async with plugin:
        first = plugin.fanout
    async with plugin:
        assert plugin.fanout is not first and not plugin.fanout.busy


async def test_a_channel_not_yet_begun_keeps_its_place():
    """A turn's budget spent just before a channel's frame: that channel is first at the
    next turn, not sent behind the channels that came after it (which, arriving as fast as
    they go, would keep it waiting for ever)."""
    log: list = []
    fanout = _fanout(per_turn=2)
    fanout.hand("a", b"A", _subs(["a1", "a2", "a3"], log))  # cut after a2
    fanout.hand("b", b"f", _subs(["b1", "b2"], log))
    fanout.hand("c", b"f", _subs(["c1"], log))
    await _turns(1)  # b1, b2; then c is reached with the budget spent
    assert [n for n, _ in log] == ["a1", "a2", "b1", "b2"]
    fanout.hand("d", b"f", _subs(["d1"], log))  # a newcomer
    await _turns(1)
    assert [n for n, _ in log][4:] == ["c1", "a3"]


class Gone(BaseException):
    """Not an ``Exception``: past the fan-out's own catch (the loop reports it)."""


async def test_a_subscriber_raising_past_the_fan_out_does_not_stop_it():
    """The frames still waiting go on at the next turn."""
    log: list = []
    fanout = _fanout(per_turn=1)

    class Raising(Sub):
        def put_nowait(self, frame: bytes) -> bool:
            CLOCK.now += 1
            raise Gone

    loop = asyncio.get_running_loop()
    reported: list = []
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context.get("exception")))
    try:
        fanout.hand("t", b"1", [Sub("a", log), Raising("x", log), Sub("b", log)])
        await asyncio.wait_for(fanout.until_empty(), 5)
    finally:
        loop.set_exception_handler(handler)
    assert [n for n, _ in log] == ["a", "b"] and len(reported) == 1 and isinstance(reported[0], Gone)
