"""A committed batch reaches a socket as one ``events`` frame, forwarded by seq: a frame the
socket already holds is dropped, one overlapping its snapshot or replay is cut to the rest."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from helpers.sockets import FastSocket, push
from server.config import Settings
from server.protocol import Events, TableEvent, encoder
from server.ws import Connection


def batch(first: int, last: int) -> bytes:
    return encoder.encode(Events("t", last, [TableEvent(s, "r1", {"type": "x", "n": s})
                                             for s in range(first, last + 1)]))


async def forwarded(have: int, frames: list[bytes]) -> list[dict]:
    ctx = SimpleNamespace(settings=Settings(jwt_secret="x" * 40, send_queue_frames=10))
    sock = FastSocket()
    conn = Connection(sock, ctx, channels=None)
    conn.last_seq["t"] = have  # what the snapshot or replay gave this socket
    sender = asyncio.create_task(conn._sender())
    try:
        await push(conn, "t", frames)
        for _ in range(10):
            await asyncio.sleep(0)
    finally:
        sender.cancel()
    assert conn.last_seq["t"] == 9
    return [json.loads(s) for s in sock.sent]


async def test_batches_after_the_snapshot_go_out_as_published():
    frames = [batch(5, 7), batch(8, 9)]
    out = await forwarded(4, frames)
    assert [json.dumps(m, separators=(",", ":")).encode() for m in out] == frames


async def test_a_batch_the_snapshot_holds_is_dropped_and_an_overlapping_one_is_cut():
    out = await forwarded(6, [batch(1, 3), batch(4, 6), batch(5, 7), batch(8, 9)])
    assert [(m["seq"], [e["seq"] for e in m["events"]]) for m in out] == [(7, [7]), (9, [8, 9])]
    assert out[0]["events"][0] == {"seq": 7, "round": "r1", "event": {"type": "x", "n": 7}}
