"""A socket's feed (``server.ws.feed``): frames are handed on in the publisher's task while
nothing is to be waited for, and through the feed's own task when something is; either way
each frame reaches the socket once, in the order it was published."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.sockets import FastSocket
from server.channels_backend import RESYNC, FeedSubscriber
from server.config import Settings
from server.protocol import Events, TableEvent, encoder
from server.ws import Connection
from server.ws.feed import Feed
from server.ws.hub import Hub, Member


class Socket:
    """What the feed hands on, and how: ``slow`` frames must wait (``now`` refuses them)."""

    def __init__(self, slow: set[int] = frozenset(), *, done_after: int | None = None) -> None:
        self.slow, self.done_after = set(slow), done_after
        self.got: list[tuple[int, str]] = []
        self.failures: list[BaseException] = []

    def now(self, frame: bytes) -> bool:
        n = int(frame)
        if n in self.slow:
            return False
        self.got.append((n, "now"))
        return True

    async def later(self, frame: bytes) -> bool:
        await asyncio.sleep(0)  # a wait (a full send queue, a read from PostgreSQL)
        n = int(frame)
        self.got.append((n, "later"))
        return self.done_after is None or n < self.done_after

    def feed(self, gate: asyncio.Event | None = None) -> Feed:
        if gate is None:
            gate = asyncio.Event()
            gate.set()
        return Feed(self.now, self.later, gate, self.failures.append)


async def _settled(feed: Feed) -> None:
    while feed.task is not None:
        await asyncio.wait_for(asyncio.shield(feed.task), 5)


async def test_a_socket_that_keeps_up_gets_each_frame_in_the_publishers_task():
    sock = Socket()
    feed = sock.feed()
    for n in (1, 2, 3):
        feed(b"%d" % n)
        assert feed.task is None  # no task, no switch: handed on there and then
    assert sock.got == [(1, "now"), (2, "now"), (3, "now")]


async def test_frames_after_one_that_waits_queue_behind_it_then_the_plain_path_resumes():
    sock = Socket(slow={2})
    feed = sock.feed()
    for n in (1, 2, 3, 4):
        feed(b"%d" % n)
    # 3 and 4 could go at once, but 2 is waiting: they wait behind it.
    assert sock.got == [(1, "now")] and feed.qsize == 3
    await _settled(feed)
    assert sock.got == [(1, "now"), (2, "later"), (3, "later"), (4, "later")]
    feed(b"5")
    assert sock.got[-1] == (5, "now") and feed.task is None


async def test_frames_before_the_snapshot_is_out_wait_for_the_gate():
    sock, gate = Socket(), asyncio.Event()
    feed = sock.feed(gate)
    feed(b"1")
    feed(b"2")
    await asyncio.sleep(0.01)
    assert sock.got == [] and feed.qsize == 2
    gate.set()
    await _settled(feed)
    assert sock.got == [(1, "later"), (2, "later")]


async def test_a_failure_in_the_publishers_task_ends_this_socket_only():
    def broken(frame: bytes) -> bool:
        raise ValueError("a frame this socket could not read")

    failures: list[BaseException] = []
    gate = asyncio.Event()
    gate.set()
    feed = Feed(broken, Socket().later, gate, failures.append)
    feed(b"1")  # raises nothing into the publisher: the other sockets still get the frame
    assert [type(e) for e in failures] == [ValueError] and feed.stopped
    feed(b"2")
    assert len(failures) == 1 and feed.qsize == 0


async def test_a_socket_done_while_waiting_gets_nothing_more():
    sock = Socket(slow={1, 2, 3}, done_after=2)  # closing after frame 2
    feed = sock.feed()
    for n in (1, 2, 3):
        feed(b"%d" % n)
    await _settled(feed)
    assert sock.got == [(1, "later"), (2, "later")] and feed.stopped and feed.qsize == 0
    feed(b"4")
    assert sock.got[-1] == (2, "later")


async def test_a_stopped_feed_cancels_its_wait():
    sock, gate = Socket(), asyncio.Event()
    feed = sock.feed(gate)
    feed(b"1")
    task = feed.task
    feed.stop()
    await asyncio.sleep(0)
    assert task is not None and task.cancelled()
    gate.set()
    await asyncio.sleep(0.01)
    assert sock.got == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), min_size=1, max_size=40))
def test_every_frame_arrives_once_and_in_order(plan):
    """Any mix of frames that wait and frames that need not, published with the loop running
    in between (0-3 turns): the socket gets them all, once each, in order."""

    async def run() -> list[int]:
        slow = {n for n, (waits, _) in enumerate(plan) if waits}
        sock = Socket(slow)
        feed = sock.feed()
        for n, (_, turns) in enumerate(plan):
            feed(b"%d" % n)
            for _ in range(turns):
                await asyncio.sleep(0)
        await _settled(feed)
        return [n for n, _ in sock.got]

    assert asyncio.run(run()) == list(range(len(plan)))


# ---- where the frames come from: a channel's subscriber, a crowd hub --------------------------


def test_a_subscriber_hands_what_it_queued_before_the_feed_first_then_each_frame_as_it_comes():
    """Frames published while the socket's subscribe was still on its way to the broker wait
    in Litestar's queue; attached, the feed gets them first, in order (Litestar's stop
    sentinel is not a frame), then every later frame with no queue between."""
    sub = FeedSubscriber(plugin=SimpleNamespace(_backend=None))
    for item in (b"1", None, b"2"):
        sub.put_nowait(item)
    got: list[bytes] = []
    sub.attach(got.append)
    sub.put_nowait(b"3")
    assert got == [b"1", b"2", b"3"] and sub.qsize == 0


def test_a_hub_member_hands_its_early_frames_first():
    member = Member(Hub(None, "t"), "ann")
    member.put(b"1")
    member.put(b"2")
    got: list[bytes] = []
    member.attach(got.append)
    member.put(b"3")
    assert got == [b"1", b"2", b"3"] and member.early == []


# ---- a real socket's rules on the plain path -------------------------------------------------------


def _events(first: int, last: int) -> bytes:
    return encoder.encode(Events("t", last, [TableEvent(s, "r1", {"type": "x"}) for s in range(first, last + 1)]))


async def test_a_frame_that_must_wait_is_left_untouched_by_the_plain_path():
    """``_forward_now`` refuses, changing nothing (the frame goes to the waiting path whole):
    with the send queue full, after a hole in the seqs, and for a resync."""
    ctx = SimpleNamespace(settings=Settings(jwt_secret="x" * 40, send_queue_frames=2))
    conn = Connection(FastSocket(), ctx, channels=None)
    conn.last_seq["t"] = 4
    assert not conn._forward_now("t", _events(7, 8))  # 5 and 6 missing: from PostgreSQL first
    assert not conn._forward_now("t", RESYNC)
    assert conn.last_seq["t"] == 4 and conn.out.empty()
    assert conn._forward_now("t", _events(2, 4)) and conn.out.empty()  # held already: dropped
    assert conn._forward_now("t", _events(5, 5)) and conn._forward_now("t", _events(6, 6))
    assert conn.last_seq["t"] == 6 and conn.out.qsize() == 2  # the queue's bound: full now
    assert not conn._forward_now("t", _events(7, 7))
    assert conn.last_seq["t"] == 6 and conn.out.qsize() == 2

