"""A client that stops reading, over a real socket with a small receive buffer, while a
table produces many events (and it asks for the table's whole history again, more than the
socket buffers hold): the server closes it with 4008 and the table goes on; another client
of the same table keeps receiving every event, in seq order, none twice."""

from __future__ import annotations

import asyncio
import socket

import pytest
import websockets

from server.protocol import CLOSE_TOO_SLOW

from .conftest import Floor, ServerProcess

pytestmark = pytest.mark.slow

T = "roul-slow"
BETS = 1_200


@pytest.fixture(scope="module")
def small_queue(db_url, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("slow"), CASINO_SEND_QUEUE_FRAMES="256",
                        CASINO_HEARTBEAT_SECONDS="60")
    srv.start()
    yield srv
    srv.stop()


async def _stuck_client(server: ServerProcess, token: str):
    """A websocket that reads nothing once subscribed: a 4 KiB receive buffer and a client
    that stops pulling frames off the socket when one is waiting (max_queue=1)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.port))
    return await websockets.connect(f"ws://127.0.0.1:{server.port}/ws", sock=sock, max_queue=1,
                                    additional_headers={"Authorization": f"Bearer {token}"})


async def test_stuck_reader_is_closed_and_the_table_goes_on(small_queue):
    floor = Floor(small_queue)
    croupier = await floor.account("slow-croupier", "croupier")
    ugo = await floor.account("ugo", chips=BETS * 500)
    watcher = await floor.account("vera")
    stuck_user = await floor.account("walt")
    await floor.table("roulette", "campione", T, staff=("slow-croupier",))
    stuck = None
    try:
        for c in (croupier, ugo, watcher):
            await c.connect()
            await c.subscribe(T)
        stuck = await _stuck_client(small_queue, stuck_user.token)
        await stuck.send(f'{{"type": "subscribe", "table": "{T}", "cid": "s1"}}')
        await croupier.play(T, {"type": "open_spin"})
        # Many events at once: bets sent without waiting for each answer.
        for start in range(0, BETS, 50):
            answers = await asyncio.gather(*(ugo.bet(T, f"plein {i % 37}", 500) for i in range(start, start + 50)))
            assert all(a["type"] == "accepted" for a in answers)
        # The table went on: the spin completes and every watcher sees every event in order.
        for step in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                     {"type": "result", "number": 17, "source": "croupier"}):
            await croupier.play(T, step)
        settled = await watcher.next_event(T, "spin_settled")
        seqs = [f["seq"] for f in watcher.frames if f.get("type") == "event" and f["table"] == T]
        first = watcher.snapshots[T]["seq"] + 1
        assert seqs == list(range(first, settled["seq"] + 1))
        # And history again, many times: far more than the socket's buffers hold. (A resume
        # replays up to half the send queue, 128 events here; from further back it is a
        # snapshot.)
        for i in range(300):
            await stuck.send(f'{{"type": "subscribe", "table": "{T}", "since": {settled["seq"] - 128:d}, '
                             f'"cid": "r{i:d}"}}')
        # The stuck client, reading again: what was queued, then the close with 4008.
        with pytest.raises(websockets.ConnectionClosed):
            for _received in range(BETS * 40):
                await asyncio.wait_for(stuck.recv(), 10)
        assert stuck.close_code == CLOSE_TOO_SLOW
        # A resume from further back than half the queue is one snapshot, not a history read.
        n = len(watcher.frames)
        await watcher.subscribe(T, since=0)
        assert [f["type"] for f in watcher.frames[n:]] == ["snapshot", "accepted"]
        assert watcher.snapshots[T]["seq"] == settled["seq"]
    finally:
        if stuck is not None:
            await stuck.close()
        for c in (croupier, ugo, watcher, stuck_user):
            await c.close()
    assert await floor.ledger_problems() == []


BURST = 200


@pytest.fixture(scope="module")
def tiny_queue(db_url, tmp_path_factory):
    srv = ServerProcess(db_url, tmp_path_factory.mktemp("burst"), CASINO_SEND_QUEUE_FRAMES="64",
                        CASINO_HEARTBEAT_SECONDS="60")
    srv.start()
    yield srv
    srv.stop()


async def test_a_reading_client_sending_a_burst_is_not_dropped(tiny_queue):
    """200 commands sent without waiting, under a queue of 64 frames: their 200 answers and
    200 events are queued at once, but the client reads, so it is served, not closed."""
    floor = Floor(tiny_queue)
    croupier = await floor.account("burst-croupier", "croupier")
    xavi = await floor.account("xavi", chips=BURST * 500)
    await floor.table("roulette", "campione", "roul-burst", staff=("burst-croupier",))
    try:
        for c in (croupier, xavi):
            await c.connect()
            await c.subscribe("roul-burst")
        start = (await croupier.play("roul-burst", {"type": "open_spin"}))["seq"]
        await xavi.wait_seq("roul-burst", start)
        answers = await asyncio.gather(*(xavi.bet("roul-burst", f"plein {i % 37}", 500) for i in range(BURST)))
        assert [a["type"] for a in answers] == ["accepted"] * BURST
        last = max(a["seq"] for a in answers)
        await xavi.wait_seq("roul-burst", last)
        seqs = [f["seq"] for f in xavi.frames if f.get("type") == "event" and f["table"] == "roul-burst"]
        assert seqs == list(range(xavi.snapshots["roul-burst"]["seq"] + 1, last + 1))
        placed = [f for f in xavi.frames if f.get("type") == "event" and f["event"]["type"] == "wager_placed"]
        assert len(placed) == BURST
        assert not xavi.closed.done()  # still connected: a ping is answered
        assert (await xavi.command({"type": "ping"}))["type"] == "pong"
    finally:
        for c in (croupier, xavi):
            await c.close()
    assert await floor.ledger_problems() == []
