"""A channel's frames handed to its subscribers a slice of the event loop's time at a time.

A frame reaches this process's subscribers in one callback, and each socket's feed writes it
to its transport there and then (``server.ws.feed``, ``server.ws.direct``). For a big frame
to many sockets that one callback was long. A crowd's settlement at an ordinary wheel is a
2.94 MB frame to 2,000 sockets, and it held the whole process for about 7 s (BENCHMARKS,
"The event loop's lag"): no other table's commit, no socket's read, no lease renewal.

``Fanout`` hands out frames until it has spent its budget of the loop's turn (``SLICE``
seconds, shared by every hand-out of the turn), then leaves the rest to a later turn
(``call_soon``: after every callback already ready). Meanwhile the tables commit, the
sockets read and the leases are renewed. A turn runs from one ``_next_turn`` to the next, so
one iteration of the loop may spend what was left of the previous budget and then a fresh
one: at most about two. A channel's frame at its channel's head, its hand-out not begun, is
evidence the fan-out is behind: the budget grows by a slice for every ``GROW_AFTER``
seconds the oldest such frame has waited there (the loop's other work counts: a busy loop
gives the fan-out a little more), up to ``MOST_SLICES``. A big frame's own hand-out, and the
frames behind it on its channel, do not grow it.

Order is per channel:

* a channel's frames reach its subscribers in the order they were published (a frame
  handed in by a subscriber while one is being handed out waits behind it);
* each frame goes to the subscribers the channel had when the frame was taken in (one
  that joins later has its snapshot read after the frame was committed).

Channels with frames waiting take turns: the one cut short goes after every other, those
that began to wait since included, so one table's big frame holds back another table's
small ones for a turn or so, not for its whole fan-out. The slow-client rule
(``server.ws.outbox``) never sees a frame still waiting here: only what was handed to a
socket counts against it.

What waits is bounded by time, not by size: a process that cannot send its tables' frames
as fast as they come, even with ``MOST_SLICES`` of each turn, sees them pile up here
(``casino_fanout_waiting_bytes``), as it did in its sockets' send queues before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("casino.channels")

# Seconds of hand-outs in one turn of the loop. A small frame to a table's few sockets never
# reaches it: only a big frame to many sockets is paced. It is also the fan-out's share of a
# busy loop: with 5 ms (and no growth), at a 2,000-player wheel the other work of each turn
# left it seconds behind the bets' frames (BENCHMARKS, "A big frame paced out"). Each
# subscriber served costs one clock read (≈ 50 ns, against microseconds for a socket's feed).
SLICE = 0.02
# A slice more of each turn for every GROW_AFTER seconds the oldest channel's frame not yet
# begun has waited at its channel's head (for the fan-out's time alone), up to MOST_SLICES:
# behind, the fan-out takes more of the loop (never by the count of frames waiting: while
# anything waits every new frame queues, so the count follows the turn's length and a
# longer turn made a longer budget, without end). A frame behind its own channel's big one
# does not count: growing for it held the loop 100 ms a turn through a crowd's settlement.
GROW_AFTER = 0.1
MOST_SLICES = 5


class Delivery:
    """One frame, the subscribers it has still to reach (from ``next`` on), and since when
    it waits at its channel's head (for the fan-out's time, not for the frames before it)."""

    __slots__ = ("frame", "subscribers", "next", "since")

    def __init__(self, frame: bytes, subscribers: list[Any]) -> None:
        self.frame, self.subscribers, self.next, self.since = frame, subscribers, 0, 0.0


class Fanout:
    """The frames of every channel of a process on their way to its subscribers."""

    def __init__(self, slice_seconds: float = SLICE, clock: Callable[[], float] = time.monotonic, *,
                 grow_after: float = GROW_AFTER, most_slices: float = MOST_SLICES) -> None:
        self.slice, self.clock = slice_seconds, clock
        self.grow_after, self.most_slices = grow_after, most_slices
        # Channels with frames waiting, in the order they are served next; each one's frames
        # in publication order. Only cut-short hand-outs and what queued behind them are here.
        self.waiting: dict[str, deque[Delivery]] = {}
        self.frames = 0  # frames waiting (the gauge), and their bytes, each counted once a channel
        self.bytes = 0
        self._until: float | None = None  # when this turn's budget is spent (None: not begun)
        self._turn: asyncio.Handle | None = None
        self._cut: str | None = None  # the channel cut short last: after every other at the next turn
        self._serving = False
        self._progress = asyncio.Event()  # set at the end of each later turn's hand-outs

    def hand(self, channel: str, frame: bytes, subscribers: Iterable[Any]) -> None:
        """``frame`` to ``subscribers`` (its channel's now): at once as far as the turn's
        budget goes, or, with frames of any channel waiting, behind them."""
        delivery = Delivery(frame, list(subscribers))
        if not delivery.subscribers:
            return
        if self.waiting or self._serving:
            self._wait(channel, delivery)
            return
        self._serving = True
        try:
            done = self._serve(delivery, self._deadline(), must=False)
        finally:
            self._serving = False
        if not done:  # (first: a frame a subscriber handed in meanwhile came after it)
            self._wait(channel, delivery, first=True)
            if delivery.next:
                self._cut = channel

    @property
    def busy(self) -> bool:
        return bool(self.waiting)

    async def until_at_most(self, nbytes: int) -> None:
        """Until no more than ``nbytes`` of frames wait (the broker's reader waits here
        when too much does)."""
        while self.waiting and self.bytes > nbytes:
            self._progress.clear()
            await self._progress.wait()

    async def until_empty(self) -> None:
        """Until no frame waits."""
        await self.until_at_most(-1)

    def _deadline(self) -> float:
        """When this turn's budget is spent: begun by the turn's first hand-out; a slice,
        and more when a frame has waited without its hand-out begun (``GROW_AFTER``)."""
        if self._until is None:
            loop = asyncio.get_running_loop()
            now = self.clock()
            self._until = now + self.slice * self._slices(now)
            loop.call_soon(self._next_turn)
        return self._until

    def _slices(self, now: float) -> float:
        # The channels' first frames whose hand-out has not begun wait for the fan-out's time
        # alone. (A frame behind its channel's frame cut short waits for that one, and a big
        # frame to thousands of sockets is long however the loop is shared: no growth for it.
        # A channel's queue here is never empty.)
        oldest = min((queue[0].since for queue in self.waiting.values() if not queue[0].next), default=now)
        return min(self.most_slices, 1 + (now - oldest) / self.grow_after)

    def _next_turn(self) -> None:
        self._until = None

    def _wait(self, channel: str, delivery: Delivery, first: bool = False) -> None:
        queue = self.waiting.get(channel)
        if queue is None:
            queue = self.waiting[channel] = deque()
        if first or not queue:  # at its channel's head: it waits for the fan-out's time
            delivery.since = self.clock()
        if first:
            queue.appendleft(delivery)
        else:
            queue.append(delivery)
        self.frames += 1
        self.bytes += len(delivery.frame)
        if self._turn is None:
            self._turn = asyncio.get_running_loop().call_soon(self._go_on)

    def _go_on(self) -> None:
        """A later turn: the channels waiting, in turn, until the budget is spent (at least
        one subscriber served, so the turn moves on even with its budget spent)."""
        self._turn = None
        cut, self._cut = self._cut, None
        if cut is not None and cut in self.waiting:  # behind the channels that began to wait since
            self.waiting[cut] = self.waiting.pop(cut)
        deadline = self._deadline()
        must = True
        try:
            for channel in list(self.waiting):
                queue = self.waiting[channel]
                while queue:
                    delivery = queue[0]
                    done = self._serve(delivery, deadline, must)
                    must = False
                    if not done:
                        if delivery.next:
                            # Cut short: this channel goes last, the others first at the next turn.
                            del self.waiting[channel]
                            self.waiting[channel] = queue
                            self._cut = channel
                        # (else not begun: every channel before it was emptied, it is first)
                        return
                    queue.popleft()
                    self.frames -= 1
                    self.bytes -= len(delivery.frame)
                    if queue:  # the next frame waits for the fan-out's time from now on
                        queue[0].since = self.clock()
                del self.waiting[channel]
        finally:
            if self.waiting and self._turn is None:  # (cut short, or a subscriber raised past us)
                self._turn = asyncio.get_running_loop().call_soon(self._go_on)
            self._progress.set()

    def _serve(self, delivery: Delivery, deadline: float, must: bool) -> bool:
        """Hand the frame on until the deadline: whether every subscriber has it. The clock
        is read before each subscriber, so no frame, even one to a single socket, goes out
        past the budget; ``must``: the first one is served whatever the clock says."""
        frame, subscribers, clock = delivery.frame, delivery.subscribers, self.clock
        n = len(subscribers)
        i = delivery.next
        while i < n:
            if not must and clock() >= deadline:
                return False
            must = False
            delivery.next = i + 1  # (first: a subscriber raising past the catch is not tried again)
            try:
                subscribers[i].put_nowait(frame)
            except Exception:  # (one subscriber's failure never keeps a frame from the rest)
                log.exception("a frame could not be handed to a subscriber")
            i += 1
        return True

