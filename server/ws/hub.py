"""One subscription per process to a crowd table's channel (``server.crowd``), shared by the
players' sockets there: each published frame is cut once (``shares``) and handed only to the
sockets it has something for.

With a subscription per socket, every batch woke every socket's pump (2,000 queue puts and
task switches per batch at a 2,000-player wheel, most of them to find nothing to send: the
profile's largest share once the frames were cut). Through the hub a batch of other players'
bets reaches its bettors' sockets alone; the table's own events (the spin opening, the
result) reach every socket. A socket's feed then sees holes in the seqs by design, so the
hub, which sees every frame, is the one to notice frames lost on the way (a broker that
dropped them): it hands every socket ``RESYNC``, and each reads what it missed from
PostgreSQL through the same filter.

What the hub hands on is paced like any channel's frames (``server.fanout``, the plugin's
own where it has one): the result of a spin goes to every socket, and at a crowd of
thousands that is one long hand-out. A hub's frames keep their order on a line of their
own in the fan-out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from server.channels_backend import RESYNC
from server.fanout import Fanout
from server.runtime import channel_of
from server.ws.peek import batch_seqs
from server.ws.shares import split

log = logging.getLogger("casino.ws")


class Member:
    """A socket's place in a hub: the frames meant for it go to its feed (``server.ws.feed``),
    those before the feed is attached wait here."""

    def __init__(self, hub: Hub, player: str) -> None:
        self.hub, self.player = hub, player
        self.feed: Callable[[bytes], None] | None = None
        self.early: list[bytes] = []
        self.base: int | None = None  # the seq its snapshot or replay holds, once read

    def anchor(self, seq: int) -> int | None:
        """The socket's snapshot or replay holds the table up to ``seq``: the seq up to which
        it must read the table's events from PostgreSQL before the frames waiting for it, or
        None. The hub checks the frames it hands on for holes only from its first one on; a
        socket whose snapshot is older than that (a hub made for it just now, the table's first
        frame there a later one: lost on the way, or a table that moved, its new owner's first
        frame overtaking the old owner's last) would see a hole no one reports."""
        self.base = seq
        first = self.hub.first
        return first - 1 if first is not None and first > seq + 1 else None

    def attach(self, feed: Callable[[bytes], None]) -> None:
        for frame in self.early:
            feed(frame)
        self.early.clear()
        self.feed = feed

    def put(self, frame: bytes) -> None:
        if self.feed is None:
            self.early.append(frame)
        else:
            self.feed(frame)

    put_nowait = put  # (what the fan-out calls)


class Hub:
    def __init__(self, channels: Any, table: str) -> None:
        self.channels, self.table = channels, table
        self.members: set[Member] = set()
        self.by_player: dict[str, set[Member]] = {}
        self.seq = 0  # the last seq of the last frame seen
        self.first: int | None = None  # the first seq of the first: holes are checked from it on
        self.subscriber: Any = None
        self.task: asyncio.Task | None = None
        self.started = asyncio.Event()
        self.fanout: Fanout = getattr(channels, "fanout", None) or Fanout()
        self.line = f"hub {table}"  # (not a channel's name: the plugin hands the channel's frames to the hub)

    async def start(self) -> None:
        try:
            self.subscriber = await self.channels.subscribe(channel_of(self.table))
            self.task = asyncio.create_task(self._run(), name=f"crowd hub {self.table}")
        finally:
            self.started.set()

    def join(self, member: Member) -> None:
        self.members.add(member)
        self.by_player.setdefault(member.player, set()).add(member)

    def leave(self, member: Member) -> bool:
        """Whether the hub is now empty."""
        self.members.discard(member)
        mine = self.by_player.get(member.player)
        if mine is not None:
            mine.discard(member)
            if not mine:
                del self.by_player[member.player]
        return not self.members

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        if self.subscriber is not None:
            with contextlib.suppress(Exception):
                await self.channels.unsubscribe(self.subscriber, channel_of(self.table))

    async def _run(self) -> None:
        async for frame in self.subscriber.iter_events():
            if frame == RESYNC:
                self._all(self._resync())
                continue
            peek = batch_seqs(frame)
            start = peek.events[0].seq if peek.events else peek.seq + 1
            if self.first is None:
                self._first(start)
            elif start > self.seq + 1:
                log.warning("table %s: frames %d..%d lost on the way: every crowd socket reads them again",
                            self.table, self.seq + 1, start - 1)
                self._all(self._resync())
            self.seq = max(self.seq, peek.seq)
            cut = split(frame)
            if cut.public or cut.shared:  # something for everyone
                self._all(frame)
                continue
            # (one hand-out for all the sockets it concerns: counted once while it waits)
            concerned = [m for player in cut.own for m in self.by_player.get(player, ())]
            if concerned:
                self.fanout.hand(self.line, frame, concerned)

    def _first(self, start: int) -> None:
        """The hub's first frame starts at ``start``: a socket whose snapshot is older (see
        ``Member.anchor``) reads what lies between from PostgreSQL (a bare RESYNC: from its
        own last seq) before that frame."""
        self.first = start
        behind = [m for m in self.members if m.base is not None and m.base < start - 1]
        if behind:
            self.fanout.hand(self.line, RESYNC, behind)

    def _resync(self) -> bytes:
        """RESYNC, with the seq up to which every frame has already gone to each member (in
        order): a socket reads back from PostgreSQL only what came after it, not
        every other player's bet since its own last frame."""
        return RESYNC + b":%d" % self.seq

    def _all(self, frame: bytes) -> None:
        self.fanout.hand(self.line, frame, self.members)


async def join(hubs: dict[str, Hub], channels: Any, table: str, player: str) -> Member:
    """A socket of ``player`` joins the table's hub in this process (made at the first)."""
    for _ in range(2):  # (a hub that another socket was starting, and that failed: once more)
        hub = hubs.get(table)
        if hub is None:
            hub = hubs[table] = Hub(channels, table)
            try:
                await hub.start()
            finally:
                if hub.task is None and hubs.get(table) is hub:  # failed or cancelled: not kept
                    del hubs[table]
        else:
            await hub.started.wait()
        if hub.task is not None:
            break
    else:
        raise ConnectionError(f"table {table}: no subscription to its channel (the broker away?)")
    member = Member(hub, player)
    hub.join(member)
    return member


async def leave(hubs: dict[str, Hub], table: str, member: Member) -> None:
    hub = hubs.get(table)
    if hub is not None and hub.leave(member):
        del hubs[table]
        await hub.stop()
