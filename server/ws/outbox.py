"""A socket's outgoing frames: one queue, drained by one sender task; a table's frame or an
answer that finds the queue empty and the sender idle is written straight to the transport
instead (``server.ws.direct``), so the order is the same either way.

A slow client is one that does not drain, not one whose queue is momentarily long: live
table events and snapshots wait, in this socket's own tasks, while send_queue_frames of
them (or send_queue_bytes) are unsent, and the socket is closed with 4008 only when the
sender then sends nothing for send_stall_seconds. Answers to the client's own frames are
not counted there: the reader bounds them. Frames that cannot wait (heartbeats, a replay
the client asked for) still close the socket at once when the queue is full. The table
never waits for a client.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from litestar import WebSocket

from server import metrics
from server.config import Settings
from server.protocol import CLOSE_TOO_SLOW, encoder
from server.ws.direct import Writer, framed, framed_of
from server.ws.per_frame import PerFrame

log = logging.getLogger("casino.ws")


def _message(frame: bytes) -> dict[str, Any]:
    return {"type": "websocket.send", "bytes": None, "text": frame.decode()}


# A frame's ASGI message (its text), made once per published frame, not once per socket
# (``per_frame``); sent through the socket's ASGI ``send`` itself, past Litestar's two
# wrappers of it that only build this message.
message_of = PerFrame(_message)


class Outbox:
    def __init__(self, socket: WebSocket, settings: Settings) -> None:
        self.socket = socket
        self.peer = "?"  # who is at the other end, for the log
        # (frame, counted): counted frames are table events, snapshots, heartbeats; the others
        # answer the client's own frames.
        self.out: asyncio.Queue[tuple[bytes, bool]] = asyncio.Queue()
        self.bound = settings.send_queue_frames
        self.bound_bytes = settings.send_queue_bytes
        self.stall_seconds = settings.send_stall_seconds
        self.queued = 0  # counted frames unsent
        self.queued_bytes = 0  # and their size: a few big frames (snapshots) fill it too
        self.answers = 0  # answers unsent
        self.progress = asyncio.Event()  # set each time the sender has handed a frame over
        self.closing: tuple[int, str] | None = None
        self.closed = asyncio.Event()
        self.writer: Writer | None = None  # straight to the transport (``server.ws.direct``), once accepted
        self.sending = False  # the sender is handing a frame over (it may wait for the transport)
        self.wrote = False  # a frame went straight out since the last heartbeat's look

    def send(self, frame: bytes) -> None:
        """A frame that cannot wait (a heartbeat, a notice): with the queue already full of
        unsent frames the client is too slow."""
        if self.closing:
            return
        if self._full():
            self._too_slow()
            return
        self._queue(frame)

    def _full(self) -> bool:
        return self.queued >= self.bound or self.queued_bytes >= self.bound_bytes

    def _queue(self, frame: bytes) -> None:
        self.queued += 1
        self.queued_bytes += len(frame)
        self.out.put_nowait((frame, True))

    def write_now(self, frame: bytes, shared: bool = True) -> bool:
        """A frame written to the transport now, when nothing of this socket's waits to go
        before it; False, nothing done, otherwise (then it is queued). ``shared``: a table's
        frame that other sockets get too (framed once for all)."""
        if (self.writer is None or self.sending or not self.out.empty() or self.closing
                or not self.writer.write(framed_of(frame) if shared else framed(frame))):
            return False
        self.wrote = True
        return True

    def send_msg(self, msg: Any) -> None:
        self.send(encoder.encode(msg))

    async def deliver(self, frame: bytes) -> bool:
        """A table event, snapshot or replayed event: waits (this socket's task, never the
        table) while the queue is full and the sender is making progress; closes with 4008
        once the sender has sent nothing for stall_seconds. False once the socket is closing."""
        while not self.closing and self._full():
            if not await self._progressed():
                return False
        if self.closing:
            return False
        self._queue(frame)
        return True

    def answer(self, msg: Any) -> None:
        """An answer to one of the client's frames (bounded by the reader: ``Connection``
        reads no further frames while MAX_PENDING answers are unsent)."""
        if self.closing:
            return
        frame = encoder.encode(msg)
        if self.write_now(frame, shared=False):  # (an ack never waits behind the table's fan-out)
            return
        self.answers += 1
        self.out.put_nowait((frame, False))

    async def _progressed(self) -> bool:
        """Wait for the sender to hand over a frame; False (and 4008) if it sent none in time."""
        self.progress.clear()
        try:
            await asyncio.wait_for(self.progress.wait(), self.stall_seconds)
            return True
        except TimeoutError:
            self._too_slow()
            return False

    def _too_slow(self) -> None:
        self.close(CLOSE_TOO_SLOW, "too slow: frames were not read in time")
        while not self.out.empty():  # what it did not read is dropped, not kept for it
            self.out.get_nowait()
        self.queued = self.queued_bytes = self.answers = 0

    def close(self, code: int, reason: str) -> None:
        if self.closing is None:
            log.debug("closing the socket of %s: %d %s", self.peer, code, reason)
            metrics.ws_closed(code)
            self.closing = (code, reason)
            self.closed.set()

    async def _sender(self) -> None:
        while True:
            frame, counted = await self.out.get()
            self.sending = True
            try:
                await self.socket.send(message_of(frame))
            finally:
                self.sending = False
            if self.closing and self.closing[0] == CLOSE_TOO_SLOW:
                continue  # the counters were reset with the queue
            if counted:
                self.queued -= 1
                self.queued_bytes -= len(frame)
            else:
                self.answers -= 1
            self.progress.set()

    async def _drain(self) -> None:
        """Until the sender has handed over every queued frame (when closing, not for a client
        too slow to read: its frames were dropped)."""
        while not self.out.empty() and self.closing and self.closing[0] != CLOSE_TOO_SLOW:
            self.progress.clear()
            await self.progress.wait()  # the sender sets it after each frame it hands over
