"""A table's frames and a socket's answers written straight to its transport
(``server.ws.direct``): only when nothing of the socket's waits to go before them, so a
socket gets its frames in the order they came, whichever way each went.

Against a real uvicorn (websockets-sansio, as ``casino serve`` runs it) and a real client:
frames written straight and frames sent through ASGI arrive in order, as text; a socket that
negotiated permessage-deflate has no writer."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import SimpleNamespace

import pytest
import uvicorn
import websockets

from server.config import Settings
from server.protocol import CLOSE_TOO_SLOW
from server.ws import Connection
from server.ws.direct import RAW_SEND, KeepSend, framed, writer_of

# ---- against uvicorn ---------------------------------------------------------------------------


_scopes: list[dict] = []


async def _app(scope, receive, send) -> None:
    """Accepts, then says a (ASGI), b (straight to the transport), c (ASGI), and whether it
    had a writer."""
    if scope["type"] != "websocket":
        return
    _scopes.append(scope)
    await receive()
    await send({"type": "websocket.accept"})
    writer = writer_of(scope)
    await send({"type": "websocket.send", "text": "a"})
    wrote = writer is not None and writer.write(framed(b'"b"'))
    await send({"type": "websocket.send", "text": "c"})
    await send({"type": "websocket.send", "text": f"writer {wrote}"})
    await receive()  # (until the client closes)


@contextlib.asynccontextmanager
async def _served(deflate: bool):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(KeepSend(_app), host="127.0.0.1", port=port, ws="websockets-sansio",
                                           ws_per_message_deflate=deflate, lifespan="off", log_level="warning"))
    task = asyncio.create_task(server.serve())
    for _ in range(500):  # (uvicorn says it has started by a flag, nothing to wait on)
        if server.started:
            break
        await asyncio.sleep(0.01)
    try:
        yield f"ws://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        await task


@pytest.mark.parametrize("deflate", [False, True], ids=["plain", "deflate"])
async def test_frames_written_straight_arrive_in_order_between_asgi_sends(deflate: bool):
    _scopes.clear()
    async with _served(deflate) as url:
        async with websockets.connect(url, compression="deflate" if deflate else None) as ws:
            got = [await asyncio.wait_for(ws.recv(), 5) for _ in range(3 if deflate else 4)]
        for _ in range(100):  # (the app's end, after the client's close)
            if RAW_SEND not in _scopes[0]:
                break
            await asyncio.sleep(0.01)
    # uvicorn's send is not kept past the socket's end (the protocol holds the scope: a cycle).
    assert RAW_SEND not in _scopes[0]
    if deflate:  # compressed frames cannot be framed once for all: every frame takes ASGI
        assert got == ["a", "c", "writer False"]
    else:
        assert got == ["a", '"b"', "c", "writer True"]


# ---- the socket's rule -------------------------------------------------------------------------


class _Writer:
    def __init__(self) -> None:
        self.wrote: list[bytes] = []
        self.open = True  # (False: the transport paused, or the connection closing)

    def write(self, data: bytes) -> bool:
        if self.open:
            self.wrote.append(data)
        return self.open


class _Socket:
    """The ASGI side: each send waits until ``go`` is set (a transport that takes its time)."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.go = asyncio.Event()
        self.go.set()

    async def send(self, message: dict) -> None:
        await self.go.wait()
        self.sent.append(message["text"])


def _socket() -> tuple[Connection, _Writer, _Socket]:
    raw = _Socket()
    conn = Connection(raw, SimpleNamespace(settings=Settings(jwt_secret="x" * 40, send_queue_frames=4)),
                      channels=None)
    conn.writer = _Writer()  # type: ignore[assignment]
    return conn, conn.writer, raw  # type: ignore[return-value]


async def test_a_frame_goes_straight_only_when_nothing_waits_before_it():
    conn, writer, raw = _socket()
    sender = asyncio.create_task(conn._sender())
    try:
        assert conn.write_now(b"1") and conn.wrote  # nothing queued, the sender idle: straight (no heartbeat due)
        conn.send(b"2")  # (a heartbeat, say: queued)
        assert not conn.write_now(b"3")  # behind 2
        conn._queue(b"3")
        await asyncio.sleep(0.01)
        assert raw.sent == ["2", "3"] and writer.wrote == [framed(b"1")]
        raw.go.clear()  # the transport is slow: the sender holds 4 while it waits
        conn.send(b"4")
        await asyncio.sleep(0.01)
        assert conn.out.empty() and conn.sending
        assert not conn.write_now(b"5")  # (the queue is empty, but 4 is not out yet)
        conn._queue(b"5")
        raw.go.set()
        await asyncio.sleep(0.01)
        assert raw.sent == ["2", "3", "4", "5"] and not conn.sending
        writer.open = False  # the transport paused: nothing is written straight
        assert not conn.write_now(b"6")
        writer.open = True
        conn.close(CLOSE_TOO_SLOW, "gone")
        assert not conn.write_now(b"7")  # closing: nothing more
    finally:
        sender.cancel()


async def test_an_answer_goes_straight_or_in_its_turn():
    conn, writer, raw = _socket()
    sender = asyncio.create_task(conn._sender())
    try:
        conn.answer({"type": "accepted", "cid": "c1"})
        assert len(writer.wrote) == 1 and b'"c1"' in writer.wrote[0] and conn.answers == 0
        conn.send(b"frame")
        conn.answer({"type": "accepted", "cid": "c2"})  # behind the frame, counted as unsent
        assert conn.answers == 1
        await asyncio.sleep(0.01)
        assert raw.sent[0] == "frame" and '"c2"' in raw.sent[1] and conn.answers == 0
    finally:
        sender.cancel()


def test_no_writer_where_the_protocol_lacks_what_it_reads():
    """Another uvicorn whose protocol lacks what the writer reads, or no uvicorn at all: no
    writer, every frame the old way (not a socket closed by an AttributeError)."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    bare = object.__new__(WebSocketsSansIOProtocol)  # (none of its attributes set)
    assert writer_of({RAW_SEND: bare.send}) is None
    assert writer_of({RAW_SEND: print}) is None and writer_of({}) is None
