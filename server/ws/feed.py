"""A socket's frames from one table, handed on where they arrive while the socket keeps up.

A published frame used to go to each subscribed socket through two tasks: a pump (the seq
check, the crowd share) and the socket's sender. For one event to 5,000 sockets that was
10,000 task switches and 5,000 queue round trips in the pump alone, the largest share of
the fan-out's profile after the sends themselves. A ``Feed`` does the pump's work in the
task that received the frame (Litestar's channels worker, a crowd hub), for every socket in
turn, when nothing is to be waited for: the seq check and the queueing are plain calls.

A frame that must wait goes, in order, to the feed's backlog, and a task of the feed's own
drains it the old way (``later``) until it is empty: before the subscription's snapshot or
replay is out (the gate), with the socket's send queue full, or when the frame is a resync
or follows a hole (both read from PostgreSQL). Whatever arrives while the task runs queues
behind it, so the socket gets its frames in the order they were published."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable


class Feed:
    """``now(frame)``: handled at once (True), or untouched and to be waited for (False);
    ``later(frame)``: handled with waits, False once the socket is done; ``failed(exc)``: the
    socket's end when either raises (a feed that stopped silently would leave it deaf)."""

    def __init__(self, now: Callable[[bytes], bool], later: Callable[[bytes], Awaitable[bool]],
                 gate: asyncio.Event, failed: Callable[[BaseException], None]) -> None:
        self.now, self.later, self.gate, self.failed = now, later, gate, failed
        self.backlog: deque[bytes] = deque()
        self.task: asyncio.Task[None] | None = None
        self.stopped = False

    @property
    def qsize(self) -> int:
        """Frames waiting for this socket (the slow-client rule's backlog)."""
        return len(self.backlog)

    def __call__(self, frame: bytes) -> None:
        if self.stopped:
            return
        if self.task is None:
            if self.gate.is_set():
                try:
                    if self.now(frame):
                        return
                except Exception as exc:  # (never into the publisher's task: it serves every socket)
                    self._fail(exc)
                    return
            self.task = asyncio.create_task(self._drain())
        self.backlog.append(frame)

    async def _drain(self) -> None:
        try:
            await self.gate.wait()
            while self.backlog and not self.stopped:
                if not await self.later(self.backlog.popleft()):
                    self.stop()
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail(exc)
            return
        # (no wait between the empty backlog and this: the next frame takes the plain path)
        self.task = None

    def _fail(self, exc: BaseException) -> None:
        self.stop()
        self.failed(exc)

    def stop(self) -> None:
        """Nothing more reaches the socket; a wait in progress is cancelled."""
        self.stopped = True
        self.backlog.clear()
        task, self.task = self.task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
