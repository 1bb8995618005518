"""A channel's frames handed to its subscribers a slice of the event loop's time at a time.

A frame reaches this process's subscribers in one callback, and each socket's feed writes it
to its transport there and then (``server.ws.feed``, ``server.ws.direct``). For a big frame
to many sockets that one callback was long. A crowd's settlement at an ordinary wheel is a
2.94 MB frame to 2,000 sockets, and it held the whole process for about 7 s (BENCHMARKS,
"The event loop's lag"): no other table's commit, no socket's read, no lease renewal.

``Fanout`` hands out frames until it has spent its budget of the loop's turn (``SLICE``
seconds, shared by every hand-out of the turn), then leaves the rest to a later turn
(``call_soon``: after every callback already ready). Meanwhile the tables commit, the
sockets read and the leases are renewed. The budget grows with the frames waiting
(``BACKLOG_STEP``): a fan-out that falls behind takes more of each turn until it catches
up, so what waits cannot grow for ever (at worst it takes the loop, as before it was paced).

Order is per channel:

* a channel's frames reach its subscribers in the order they were published (a frame
  handed in by a subscriber while one is being handed out waits behind it);
* each frame goes to the subscribers the channel had when the frame was taken in (one
  that joins later has its snapshot read after the frame was committed).

Channels with frames waiting take turns, the one cut short going last, so one table's
big frame does not hold back another table's small ones for more than about a slice. The
slow-client rule (``server.ws.outbox``) never sees a frame still waiting here: only what was
handed to a socket counts against it.
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
# busy loop: with 5 ms (and no growth with the backlog), at a 2,000-player wheel the other
# work of each turn left it seconds behind the bets' frames (BENCHMARKS, "A big frame paced
# out"). Each subscriber served costs one clock read (≈ 50 ns, against microseconds for a
# socket's feed).
SLICE = 0.02
# Frames waiting for each further slice of a turn's budget: a fan-out behind by 8 frames
# takes two slices a turn, by 80 eleven.
BACKLOG_STEP = 8


class Delivery:
    """One frame, and the subscribers it has still to reach (from ``next`` on)."""

    __slots__ = ("frame", "subscribers", "next")

    def __init__(self, frame: bytes, subscribers: list[Any]) -> None:
        self.frame, self.subscribers, self.next = frame, subscribers, 0


class Fanout:
    """The frames of every channel of a process on their way to its subscribers."""

    def __init__(self, slice_seconds: float = SLICE, clock: Callable[[], float] = time.monotonic) -> None:
        self.slice, self.clock = slice_seconds, clock
        # Channels with frames waiting, in the order they are served next; each one's frames
        # in publication order. Only cut-short hand-outs and what queued behind them are here.
        self.waiting: dict[str, deque[Delivery]] = {}
        self.frames = 0  # frames waiting (the gauge), and their bytes, each counted once a channel
        self.bytes = 0
        self._until: float | None = None  # when this turn's budget is spent (None: not begun)
        self._turn: asyncio.Handle | None = None
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
            done = self._serve(delivery, self._deadline())
        finally:
            self._serving = False
        if not done:  # (first: a frame a subscriber handed in meanwhile came after it)
            self._wait(channel, delivery, first=True)

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
        while self.waiting:
            self._progress.clear()
            await self._progress.wait()

    def _deadline(self) -> float:
        """When this turn's budget is spent: begun by the turn's first hand-out, and
        larger by a slice for every ``BACKLOG_STEP`` frames waiting."""
        if self._until is None:
            self._until = self.clock() + self.slice * (1 + self.frames / BACKLOG_STEP)
            asyncio.get_running_loop().call_soon(self._next_turn)
        return self._until

    def _next_turn(self) -> None:
        self._until = None

    def _wait(self, channel: str, delivery: Delivery, first: bool = False) -> None:
        queue = self.waiting.get(channel)
        if queue is None:
            queue = self.waiting[channel] = deque()
        if first:
            queue.appendleft(delivery)
        else:
            queue.append(delivery)
        self.frames += 1
        self.bytes += len(delivery.frame)
        if self._turn is None:
            self._turn = asyncio.get_running_loop().call_soon(self._go_on)

    def _go_on(self) -> None:
        """A later turn: the channels waiting, in turn, until the budget is spent."""
        self._turn = None
        deadline = self._deadline()
        try:
            for channel in list(self.waiting):
                queue = self.waiting[channel]
                while queue:
                    delivery = queue[0]
                    if not self._serve(delivery, deadline):
                        # Cut short: this channel goes last, the others first at the next turn.
                        del self.waiting[channel]
                        self.waiting[channel] = queue
                        if self._turn is None:
                            self._turn = asyncio.get_running_loop().call_soon(self._go_on)
                        return
                    queue.popleft()
                    self.frames -= 1
                    self.bytes -= len(delivery.frame)
                del self.waiting[channel]
        finally:
            self._progress.set()

    def _serve(self, delivery: Delivery, deadline: float) -> bool:
        """Hand the frame on until the deadline: whether every subscriber has it. At least
        one is served each time, so a budget spent already still moves on."""
        frame, subscribers, clock = delivery.frame, delivery.subscribers, self.clock
        n = len(subscribers)
        i = delivery.next
        while i < n:
            subscriber = subscribers[i]
            i += 1
            try:
                subscriber.put_nowait(frame)
            except Exception:  # (one subscriber's failure never keeps a frame from the rest)
                log.exception("a frame could not be handed to a subscriber")
            if i < n and clock() >= deadline:
                delivery.next = i
                return False
        delivery.next = n
        return True
