"""A small async client for the casino server (HTTP via httpx, the table protocol via
``websockets``): what the tests, the load test, the demo bots and a newcomer use.

    async with CasinoClient("http://127.0.0.1:8000") as c:
        await c.login("alice", "alice-pass")
        await c.subscribe("campione-roulette-1")
        await c.play("campione-roulette-1", {"type": "place_bet", "spot": "plein 17", "amount": 1000})
        event = await c.next_event("campione-roulette-1", "spin_result")

``play`` returns the server's ``accepted`` answer or raises ``Rejected`` (with ``code``).
The server sends table events in ``events`` messages (one per committed batch); the client
unpacks each into one dict per event, ``{"type": "event", "table", "seq", "round", "event"}``,
which is what ``next_event``, ``drain`` and ``frames`` hold.
Who you are never goes in a command: the server takes it from your token (a ``by`` or
``role`` field is refused as unknown), and a player's own ``player`` may be left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import uuid
from typing import Any

import httpx
import websockets


class Rejected(Exception):
    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(f"{answer.get('code')}: {answer.get('message')}")
        self.answer = answer
        self.code = answer.get("code", "")
        self.message = answer.get("message", "")


class HTTPError(Exception):
    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status} {problem.get('code')}: {problem.get('detail')}")
        self.status = status
        self.problem = problem
        self.code = problem.get("code", "")


class CasinoClient:
    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, max_frames: int = 100_000) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_frames = max_frames
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=30)
        self.token: str | None = None
        self.user: str | None = None
        self.role: str | None = None
        self.ws: Any = None
        self.ws_url: str | None = None  # where connect() opens the socket (None: base_url's /ws; place_at)
        self.ws_auth = "header"  # how connect() presents the token (see connect)
        self.closed: asyncio.Future | None = None  # the close code, once the server closed us
        self.last_seq: dict[str, int] = {}
        self._seq_moved = asyncio.Event()  # set by the reader each time it moves a last_seq
        self.snapshots: dict[str, dict] = {}
        self.frames: list[dict] = []  # everything received (``events`` unpacked), for inspection
        self.messages = 0  # websocket messages received (an ``events`` message is one)
        self._events: dict[str, asyncio.Queue] = {}
        self._answers: dict[str, asyncio.Future] = {}
        self._reader: asyncio.Task | None = None
        self._ids = itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]

    async def __aenter__(self) -> CasinoClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ---- HTTP ----------------------------------------------------------------------------
    async def request(self, method: str, path: str, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        r = await self.http.request(method, path, headers=headers, **kw)
        if r.status_code >= 400:
            try:
                problem = r.json()
            except ValueError:
                problem = {"code": "http_error", "detail": r.text}
            raise HTTPError(r.status_code, problem)
        return r.json() if r.content else None

    async def login(self, user: str, password: str) -> dict:
        out = await self.request("POST", "/auth/login", json={"user": user, "password": password})
        self.token, self.user, self.role = out["token"], out["user"], out["role"]
        return out

    async def register(self, user: str, password: str, currency: str = "CHF") -> dict:
        out = await self.request("POST", "/auth/register", json={"user": user, "password": password,
                                                                 "currency": currency})
        self.token, self.user, self.role = out["token"], out["user"], out["role"]
        return out

    async def logout(self) -> None:
        """End this client's token on the server (``POST /auth/logout``): it stops working
        everywhere and its sockets close (4012); other logins of the user are untouched."""
        await self.request("POST", "/auth/logout")
        self.token = None

    async def me(self) -> dict:
        return await self.request("GET", "/me")

    async def balance(self, user: str | None = None) -> dict:
        return await self.request("GET", f"/accounts/{user or self.user}/balance")

    async def tables(self) -> list[dict]:
        return await self.request("GET", "/tables")

    # ---- websocket -----------------------------------------------------------------------
    async def connect(self, auth: str | None = None) -> None:
        """Open the websocket, presenting the token as ``auth`` says (kept for reconnects):
        ``"header"`` (default) 'Authorization: Bearer <token>'; ``"subprotocol"`` what a
        browser can send, 'Sec-WebSocket-Protocol: casino.v1, bearer.<token>'; ``"frame"`` a
        first message {"type": "auth", "cid", "token"}. Never in the URL (it would be logged)."""
        self.ws_auth = auth = auth or self.ws_auth
        url = self.ws_url or self.base_url.replace("http", "ws", 1) + "/ws"
        kw: dict[str, Any] = {}
        if auth == "header":
            kw["additional_headers"] = {"Authorization": f"Bearer {self.token}"}
        elif auth == "subprotocol":
            kw["subprotocols"] = ["casino.v1", f"bearer.{self.token}"]
        elif auth != "frame":
            raise ValueError("auth is 'header', 'subprotocol' or 'frame'")
        self.ws = await websockets.connect(url, max_size=2**22, **kw)
        self.closed = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read())
        if auth == "frame":
            await self.command({"type": "auth", "token": self.token})

    async def reconnect(self) -> None:
        """Connect again and resume every table from the last seq seen: nothing missed, nothing twice."""
        await self.disconnect()
        await self.connect()
        for table, seq in list(self.last_seq.items()):
            await self.command({"type": "subscribe", "table": table, "since": seq})

    async def move_to(self, base_url: str) -> None:
        """Follow the tables to another server (failover): resume there from the last seq seen."""
        await self.http.aclose()
        self.base_url = base_url.rstrip("/")
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=30)
        self.ws_url = None
        await self.reconnect()

    async def place_at(self, table: str) -> bool:
        """Open the socket at the process serving ``table``, where the floor names one (the
        lobby's ``ws_url``: the table's owner), resuming every table there: its commands then
        go straight to the table, none forwarded. HTTP stays where it is. True if it moved;
        False where no address is named, it is there already, the address is not a websocket
        one, or it would send the token in clear from a floor reached over https; where the
        new address does not answer, the socket opens again where it was (and it raises)."""
        detail = await self.request("GET", f"/tables/{table}")
        url = detail["table"].get("ws_url") or ""
        secure = self.base_url.startswith("https://")
        if not url.startswith(("wss://", "ws://")) or (secure and not url.startswith("wss://")):
            return False
        if url == (self.ws_url or self.base_url.replace("http", "ws", 1) + "/ws"):
            return False
        before, self.ws_url = self.ws_url, url
        try:
            await self.reconnect()
        except Exception:
            self.ws_url = before
            await self.reconnect()
            raise
        return True

    async def disconnect(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self._reader:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        self.ws = None

    async def close(self) -> None:
        await self.disconnect()
        await self.http.aclose()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                self.messages += 1
                kind = msg.get("type")
                if kind == "events":
                    table = msg["table"]
                    q = self._queue(table)
                    for e in msg["events"]:
                        one = {"type": "event", "table": table, **e}
                        self.frames.append(one)
                        self.last_seq[table] = e["seq"]
                        q.put_nowait(one)
                    self._seq_moved.set()
                else:
                    self.frames.append(msg)
                if len(self.frames) > self.max_frames:  # a long-lived client (a bot) keeps the recent half
                    del self.frames[: self.max_frames // 2]
                if kind in ("accepted", "rejected", "pong"):
                    fut = self._answers.pop(msg.get("cid", ""), None)
                    if fut and not fut.done():
                        fut.set_result(msg)
                elif kind == "snapshot":
                    self.snapshots[msg["table"]] = msg
                    self.last_seq[msg["table"]] = msg["seq"]
                    self._seq_moved.set()
                    self._queue(msg["table"]).put_nowait(msg)
        except websockets.ConnectionClosed:
            pass
        finally:
            code = self.ws.close_code if self.ws is not None else None
            if self.closed and not self.closed.done():
                self.closed.set_result(code)
            for fut in self._answers.values():
                if not fut.done():
                    fut.set_exception(ConnectionError(f"connection closed ({code})"))

    def _queue(self, table: str) -> asyncio.Queue:
        return self._events.setdefault(table, asyncio.Queue())

    def new_cid(self) -> str:
        return f"{self._prefix}-{next(self._ids)}"

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send(data)

    async def command(self, msg: dict, *, cid: str | None = None, timeout: float = 30) -> dict:
        """Send a protocol message with a cid; wait for its answer. Raises Rejected."""
        msg = dict(msg)
        msg.setdefault("cid", cid or self.new_cid())
        fut = asyncio.get_running_loop().create_future()
        self._answers[msg["cid"]] = fut
        await self.ws.send(json.dumps(msg))
        answer = await asyncio.wait_for(fut, timeout)
        if answer["type"] == "rejected":
            raise Rejected(answer)
        return answer

    async def subscribe(self, table: str, since: int | None = None) -> dict:
        msg: dict[str, Any] = {"type": "subscribe", "table": table}
        if since is not None:
            msg["since"] = since
        return await self.command(msg)

    async def unsubscribe(self, table: str) -> dict:
        self.last_seq.pop(table, None)
        return await self.command({"type": "unsubscribe", "table": table})

    async def play(self, table: str, command: dict, *, cid: str | None = None) -> dict:
        """A game command, given as you (the server knows who you are; ``player``, where the
        game names one, is yourself when left out)."""
        return await self.command({"type": "play", "table": table, "command": command}, cid=cid)

    async def next_event(self, table: str, *types: str, timeout: float = 30) -> dict:
        """The next frame for ``table`` (optionally: the next whose event is of one of ``types``),
        within ``timeout`` seconds in all (asyncio.TimeoutError otherwise)."""
        q = self._queue(table)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            msg = await asyncio.wait_for(q.get(), max(deadline - loop.time(), 0))
            if not types or (msg["type"] == "event" and msg["event"].get("type") in types):
                return msg

    async def wait_seq(self, table: str, seq: int, timeout: float = 30) -> None:
        """Until the events of ``table`` up to ``seq`` have arrived."""
        async def reached() -> None:
            while self.last_seq.get(table, -1) < seq:
                self._seq_moved.clear()
                await self._seq_moved.wait()

        await asyncio.wait_for(reached(), timeout)

    def drain(self, table: str) -> list[dict]:
        """Every frame received for ``table`` and not yet taken."""
        q, out = self._queue(table), []
        while not q.empty():
            out.append(q.get_nowait())
        return out

    # ---- roulette ------------------------------------------------------------------------
    async def bet(self, table: str, spot: str, amount: int, *, cid: str | None = None, **kw: Any) -> dict:
        """A roulette bet: ``spot`` as a croupier says it ("plein 17", "cheval 0/3", "rouge")."""
        return await self.play(table, {"type": "place_bet", "spot": spot, "amount": amount, **kw}, cid=cid)

    async def announce(self, table: str, announce: str, unit: int, *, cid: str | None = None, **kw: Any) -> dict:
        """An announced bet ("voisins du zéro", "tiers du cylindre", "17 et 2 voisins") with its unit."""
        return await self.play(table, {"type": "place_announced", "announce": announce, "unit": unit, **kw},
                               cid=cid)

    # ---- blackjack -----------------------------------------------------------------------
    async def sit(self, table: str, box: int, *, cid: str | None = None) -> dict:
        return await self.play(table, {"type": "sit", "box": box}, cid=cid)

    async def stake(self, table: str, box: int, amount: int, *, cid: str | None = None) -> dict:
        """A blackjack bet on ``box`` (your own seat's box, or behind another's)."""
        return await self.play(table, {"type": "place_bet", "box": box, "amount": amount}, cid=cid)

    async def act(self, table: str, action: str, box: int, hand: int = 0, *, cid: str | None = None,
                  **kw: Any) -> dict:
        """``action``: hit, stand, double, split, insure (amount=), even_money, decline_offer."""
        extra = {"hand": hand} if action in ("hit", "stand", "double", "split") else {}
        return await self.play(table, {"type": action, "box": box, **extra, **kw}, cid=cid)
