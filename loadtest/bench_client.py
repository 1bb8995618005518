"""The benchmark drivers' websocket side: asyncio + uvloop, one reader per socket, answers
matched by cid, frames decoded only as far as the driver needs (type, cid, table, seq, and
the seq of each event in an ``events`` message: each event is timed on its own).

The echo endpoint sends a command back verbatim, so its "answer" is the frame carrying the
same cid: bets and echo go through exactly the same client code.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import random
import time
from collections.abc import Callable
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from loadtest.server_process import mint_token

TIMEOUT = 30.0


class _Seq(msgspec.Struct):
    seq: int


class Frame(msgspec.Struct):
    type: str
    cid: str = ""
    table: str = ""
    seq: int = 0
    code: str = ""
    events: list[_Seq] = []


_decode = msgspec.json.Decoder(Frame).decode
# The server encodes ``events`` as {"type":"events","table":...,"seq":<the last one's>,"events":[...]}.
_EVENTS_HEAD = '{"type":"events",'


def _head_seq(raw: str) -> int:
    i = raw.index('"seq":', 0, 512) + 6
    j = i
    while raw[j].isdigit():
        j += 1
    return int(raw[i:j])


class Sock:
    """One websocket. ``waiting[cid]`` resolves to (frame, arrival time)."""

    _ids = itertools.count(1)

    def __init__(self, ws: ClientConnection, on_event: Callable[[str, int, float], None] | None = None,
                 light: bool = False) -> None:
        self.ws = ws
        self.waiting: dict[str, asyncio.Future] = {}
        self.on_event = on_event
        self.light = light
        self.event_messages = 0  # ``events`` messages received, and the events in them (those not when light)
        self.events = 0
        self.last_seq = 0  # the last event seq received, and when its ``events`` message arrived
        self.last_at = 0.0
        self.last_size = 0  # its length (characters)
        self.advanced = asyncio.Event()  # set at each ``events`` message and when the socket closes
        self.ended = False
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, token: str | None = None, on_event=None, light: bool = False) -> Sock:
        """``light``: an ``events`` message is not decoded, only its last seq read from its head
        (a settlement of 10,000 bets is a frame of megabytes that thousands of sockets get:
        decoding each would make the driver, not the server, what the figure measures)."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        # CASINO_BENCH_DEFLATE=1: ask for permessage-deflate, as browsers do (the server
        # grants it only with CASINO_WS_DEFLATE).
        compression = "deflate" if os.environ.get("CASINO_BENCH_DEFLATE") == "1" else None
        ws = await connect(url, additional_headers=headers, max_size=2**25, compression=compression,
                           open_timeout=TIMEOUT, ping_interval=None, close_timeout=2, max_queue=None)
        return cls(ws, on_event, light)

    async def _read(self) -> None:
        waiting, on_event, light = self.waiting, self.on_event, self.light
        try:
            async for raw in self.ws:
                now = time.monotonic()
                if light and raw.startswith(_EVENTS_HEAD):
                    self.event_messages += 1
                    self.last_seq, self.last_at, self.last_size = _head_seq(raw), now, len(raw)
                    self.advanced.set()
                    continue
                f = _decode(raw)
                if f.cid:
                    fut = waiting.pop(f.cid, None)
                    if fut is not None and not fut.done():
                        fut.set_result((f, now))
                elif f.type == "events":
                    self.event_messages += 1
                    self.events += len(f.events)
                    self.last_seq, self.last_at, self.last_size = f.seq, now, len(raw)
                    self.advanced.set()
                    if on_event is not None:
                        for e in f.events:  # one batch, one arrival time for each of its events
                            on_event(f.table, e.seq, now)
        except ConnectionClosed:
            pass
        finally:
            self.ended = True
            self.advanced.set()
            for fut in waiting.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("closed"))

    async def reached(self, seq: int) -> bool:
        """Until an ``events`` message up to ``seq`` has arrived (True) or the socket closed (False)."""
        while self.last_seq < seq:
            if self.ended:
                return False
            self.advanced.clear()
            await self.advanced.wait()
        return True

    def new_cid(self) -> str:
        return f"b{next(self._ids)}"

    async def send(self, cid: str, text: str) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.waiting[cid] = fut
        await self.ws.send(text)
        return fut

    async def request(self, cid: str, text: str) -> tuple[Frame, float]:
        return await asyncio.wait_for(await self.send(cid, text), TIMEOUT)

    async def subscribe(self, table: str) -> Frame:
        cid = self.new_cid()
        frame, _ = await self.request(cid, msgspec.json.encode({"type": "subscribe", "table": table, "cid": cid})
                                      .decode())
        if frame.type != "accepted":
            raise RuntimeError(f"subscribe {table}: {frame.code}")
        return frame

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 5)
        self.reader.cancel()


def bet_text(table: str, cid: str, number: int, amount: int) -> str:
    """A straight bet as a player's client sends it (the echo gets the very same text)."""
    return (f'{{"type":"play","table":"{table}","cid":"{cid}",'
            f'"command":{{"type":"place_bet","spot":"plein {number:d}","amount":{amount:d}}}}}')


async def sleep_until(t: float) -> None:
    delay = t - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


class Croupier:
    """The console of every bench table, over the real protocol."""

    def __init__(self, ws_url: str, tables: list[str]) -> None:
        self.ws_url, self.tables = ws_url, tables
        self.sock: Sock | None = None

    async def open(self, on_event=None) -> None:
        self.sock = await Sock.open(self.ws_url, mint_token("bench-croupier", "croupier"), on_event)
        for t in self.tables:
            await self.sock.subscribe(t)

    async def play(self, table: str, command: dict) -> tuple[Any, float, float]:
        """(answer, sent at, answered at)."""
        assert self.sock is not None
        cid = self.sock.new_cid()
        text = json.dumps({"type": "play", "table": table, "cid": cid, "command": command})
        sent = time.monotonic()
        frame, at = await self.sock.request(cid, text)
        if frame.type != "accepted":
            raise RuntimeError(f"croupier {command['type']} at {table}: {frame.code}")
        return frame, sent, at

    async def open_spins(self) -> None:
        await asyncio.gather(*(self.play(t, {"type": "open_spin"}) for t in self.tables))

    async def settle_spins(self) -> None:
        async def one(t: str) -> None:
            for cmd in ({"type": "launch_ball"}, {"type": "no_more_bets"},
                        {"type": "result", "number": random.randrange(37), "source": "croupier"}):
                await self.play(t, cmd)

        await asyncio.gather(*(one(t) for t in self.tables))
