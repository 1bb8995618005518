"""A table's frame written straight to a socket's transport, when nothing of the socket's is
waiting to go before it.

Through ASGI each frame costs every socket a turn of its sender task, Litestar's wrapper and
uvicorn's framing of the same bytes again. For one event to 5,000 sockets that was most of the
server's work. uvicorn's websockets-sansio protocol frames with the websockets library and
writes to its asyncio transport; here the frame is framed once (the same library, unmasked, no
extension negotiated) and written to each transport from the task that received it. Only
when the socket's queue is empty and its sender idle, its transport taking writes and its
connection open: otherwise the frame takes the ordinary way, behind what is queued.

``KeepSend`` (outermost ASGI app) leaves uvicorn's own ``send`` in the scope; another server,
or a permessage-deflate socket, has no writer and every frame goes the ordinary way."""

from __future__ import annotations

from typing import Any

from websockets.frames import Frame, Opcode
from websockets.protocol import State

from server.ws.per_frame import PerFrame

RAW_SEND = "casino.raw_send"


class KeepSend:
    """The ASGI app, with the server's own ``send`` of a websocket kept in its scope."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        scope[RAW_SEND] = send
        try:
            await self.app(scope, receive, send)
        finally:  # (the protocol holds the scope: kept, the pair would wait for a full collection)
            scope.pop(RAW_SEND, None)

    def __getattr__(self, name: str) -> Any:  # (the app's own attributes: uvicorn reads none, tests may)
        return getattr(self.app, name)


def framed(frame: bytes) -> bytes:
    """The frame's bytes as a websocket text frame from the server (unmasked, whole)."""
    return Frame(Opcode.TEXT, frame).serialize(mask=False)


# A published frame goes to every socket as the same bytes: framed once.
framed_of = PerFrame(framed, min_bytes=0)


class Writer:
    """A socket's transport, reached through uvicorn's websockets-sansio protocol."""

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol

    def write(self, data: bytes) -> bool:
        """``data`` (a framed frame) written to the transport; False (nothing done) unless the
        connection is open and the transport takes writes."""
        p = self.protocol
        if p.close_sent or p.conn.state is not State.OPEN or not p.writable.is_set() or p.transport.is_closing():
            return False
        p.transport.write(data)
        return True


def writer_of(scope: Any) -> Writer | None:
    """The socket's writer, once accepted: None where frames must go through ASGI."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # pragma: no cover
        return None
    protocol = getattr(scope.get(RAW_SEND), "__self__", None)
    if not isinstance(protocol, WebSocketsSansIOProtocol):
        return None
    if not all(hasattr(protocol, name) for name in _USED):  # (another uvicorn: the old way, not a failure)
        return None
    if protocol.conn.extensions:
        return None
    return Writer(protocol)


# What ``Writer`` reads of uvicorn's protocol.
_USED = ("transport", "writable", "close_sent", "conn")
