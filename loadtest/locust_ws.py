"""A locust User speaking the casino's websocket protocol, with its timings in locust's stats.

Locust runs every user as a gevent greenlet and monkey-patches sockets, threads and
selectors, so the *synchronous* client of ``websockets`` (``websockets.sync.client``)
becomes cooperative: its reader thread is a greenlet and a blocking ``recv`` yields to the
other users. That keeps one event loop (gevent's) and no thread hand-offs between the
moment a frame arrives and the moment it is timed, which running the asyncio client in a
thread would add.

Two kinds of entries reach locust's statistics:

- ``WS`` *name of the command*: from sending a command to its ``accepted``; a ``rejected``
  is a failure unless the caller listed its code as an expected outcome of a race with the
  table's clock (then it is a success named ``... refused:<code>``).
- ``EVENT`` *event type*: delivery time of a table event to a subscriber, measured from the
  sending of the command that produced it (by any user in this process) to the frame's
  arrival at this socket. The ``accepted`` answer names the seq of the command's last
  event, so that event is matched to its command; events the server's clock produces
  (RNG tables) have no sender to time from and are only counted (``TIMER_EVENTS``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import gevent
import gevent.queue
from gevent.event import AsyncResult
from locust import User
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

ROUND_WAIT = 60.0  # seconds a user waits for its table's next betting window

COMMAND_TIMEOUT = 15.0  # seconds; a command unanswered by then is a failure


class CommandRefused(Exception):
    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(f"{answer.get('code')}: {answer.get('message')}")
        self.code = answer.get("code", "")
        self.answer = answer


class Origins:
    """When the command behind each (table, seq) was sent, shared by every user of the process.

    A subscriber may receive an event before the sender has its ``accepted`` (both come from
    the same commit): such arrivals wait in ``pending`` until the answer names their seq.
    """

    KEEP = 30.0  # seconds an unmatched arrival or a sent time is kept

    def __init__(self) -> None:
        self.sent: dict[tuple[str, int], float] = {}
        self.pending: dict[tuple[str, int], list[tuple[float, str, int, Callable]]] = {}
        self.timer_events = 0
        self._last_sweep = time.monotonic()

    def acked(self, table: str, seq: int, sent_at: float) -> None:
        key = (table, seq)
        self.sent[key] = sent_at
        for arrived, name, size, fire in self.pending.pop(key, ()):
            fire(name, (arrived - sent_at) * 1000, size)
        self._sweep()

    def arrived(self, table: str, seq: int, name: str, size: int, fire: Callable) -> None:
        now = time.monotonic()
        key = (table, seq)
        sent_at = self.sent.get(key)
        if sent_at is not None:
            fire(name, (now - sent_at) * 1000, size)
        else:
            self.pending.setdefault(key, []).append((now, name, size, fire))

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < 5:
            return
        self._last_sweep = now
        cutoff = now - self.KEEP
        self.sent = {k: t for k, t in self.sent.items() if t >= cutoff}
        for key in [k for k, v in self.pending.items() if v[0][0] < cutoff]:
            self.timer_events += len(self.pending.pop(key))


ORIGINS = Origins()


class TableSocket:
    """One authenticated websocket: commands with timed answers, frames to a handler."""

    def __init__(self, user: CasinoWsUser, url: str, token: str) -> None:
        self.user = user
        self.url = url
        self.fire = user.environment.events.request.fire
        self.answers: dict[str, tuple[AsyncResult, float]] = {}
        self.on_frame: Callable[[dict], None] = lambda msg: None
        self.snapshots: dict[str, dict] = {}
        self._ids = itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]
        started = time.monotonic()
        try:
            self.ws = connect(url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=2**22,
                              open_timeout=COMMAND_TIMEOUT, close_timeout=2, compression=None)
        except Exception as exc:
            self._report("WS", "connect", started, 0, exc)
            raise
        self._report("WS", "connect", started, 0, None)
        self.reader = gevent.spawn(self._read)

    def _report(self, kind: str, name: str, started: float, size: int, exc: Exception | None) -> None:
        self.fire(request_type=kind, name=name, response_time=(time.monotonic() - started) * 1000,
                  response_length=size, exception=exc, context={})

    def _event_timed(self, name: str, ms: float, size: int) -> None:
        self.fire(request_type="EVENT", name=name, response_time=ms, response_length=size, exception=None,
                  context={})

    def _read(self) -> None:
        try:
            for raw in self.ws:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind in ("accepted", "rejected", "pong"):
                    waiting = self.answers.pop(msg.get("cid", ""), None)
                    if waiting is not None:
                        waiting[0].set(msg)
                        if kind == "accepted" and msg.get("seq"):
                            ORIGINS.acked(msg["table"], msg["seq"], waiting[1])
                elif kind == "events":
                    # Each event of a batch is timed on its own; the frame's size is shared out.
                    size = len(raw) // max(len(msg["events"]), 1)
                    for e in msg["events"]:
                        ORIGINS.arrived(msg["table"], e["seq"], e["event"].get("type", "?"), size,
                                        self._event_timed)
                elif kind == "snapshot":
                    self.snapshots[msg["table"]] = msg
                elif kind == "error":
                    self.fire(request_type="WS", name=f"error {msg.get('code')}", response_time=0,
                              response_length=len(raw), exception=RuntimeError(msg.get("message")), context={})
                if kind == "events":  # users see one event at a time, as {"type": "event", ...}
                    for e in msg["events"]:
                        self.on_frame({"type": "event", "table": msg["table"], **e})
                else:
                    self.on_frame(msg)
        except ConnectionClosed:
            pass
        finally:
            for result, _ in self.answers.values():
                if not result.ready():
                    result.set_exception(ConnectionError("the connection closed"))

    def command(self, name: str, msg: dict[str, Any], *, ok_codes: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """Send ``msg`` with a fresh cid and wait for the answer; timed as ``WS name``.

        Returns the ``accepted`` answer, or None for a rejection whose code is in ``ok_codes``;
        raises CommandRefused for any other rejection (after recording the failure)."""
        cid = f"{self._prefix}-{next(self._ids)}"
        result: AsyncResult = AsyncResult()
        started = time.monotonic()
        self.answers[cid] = (result, started)
        try:
            self.ws.send(json.dumps({**msg, "cid": cid}))
            answer = result.get(timeout=COMMAND_TIMEOUT)
        except gevent.Timeout:
            self.answers.pop(cid, None)
            exc = TimeoutError(f"no answer to {name} in {COMMAND_TIMEOUT:.0f} s")
            self._report("WS", name, started, 0, exc)
            raise exc from None
        except Exception as exc:
            self.answers.pop(cid, None)
            self._report("WS", name, started, 0, exc)
            raise
        if answer["type"] == "rejected":
            if answer.get("code") in ok_codes:
                self._report("WS", f"{name} refused:{answer['code']}", started, 0, None)
                return None
            exc = CommandRefused(answer)
            self._report("WS", name, started, 0, exc)
            raise exc
        self._report("WS", name, started, 0, None)
        return answer

    def play(self, name: str, table: str, command: dict[str, Any], *, ok_codes: tuple[str, ...] = ()):
        return self.command(name, {"type": "play", "table": table, "command": command}, ok_codes=ok_codes)

    def subscribe(self, table: str) -> dict[str, Any]:
        self.command("subscribe", {"type": "subscribe", "table": table})
        return self.snapshots[table]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self.reader.kill(block=False)


class CasinoWsUser(User):
    """Base class: log in over HTTP (timed), open the websocket; subclasses play.

    ``self.frames`` receives every frame the socket gets (an ``events`` message as one
    ``{"type": "event", ...}`` per event); a subclass waits on it with
    ``next_frame``/``wait_event`` (each bounded in time)."""

    abstract = True
    role = "player"

    def on_start(self) -> None:
        from loadtest import locust_floor

        self.floor = locust_floor.floor()
        self.account = locust_floor.next_account(self)
        self.token = locust_floor.login(self, self.account)
        url = self.floor["url"].replace("http", "ws", 1) + "/ws"
        self.frames: gevent.queue.Queue = gevent.queue.Queue()
        self.sock = TableSocket(self, url, self.token)
        self.sock.on_frame = self.frames.put

    def place_at(self, table: str) -> None:
        """The socket opened again at ``table``'s owner where the lobby names its address
        (``ws_url``, ``casino serve --workers N --worker-ports``): its commands are then
        served where they arrive, none forwarded, as a placed client's are."""
        import requests

        r = requests.get(f"{self.floor['url']}/tables/{table}", headers={"Authorization": f"Bearer {self.token}"},
                         timeout=30)
        url = r.json()["table"].get("ws_url") if r.status_code == 200 else ""
        if url and url.startswith(("ws://", "wss://")) and url != self.sock.url:
            self.sock.close()
            self.sock = TableSocket(self, url, self.token)
            self.sock.on_frame = self.frames.put

    def on_stop(self) -> None:
        sock = getattr(self, "sock", None)
        if sock is not None:
            sock.close()

    def next_frame(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self.frames.get(timeout=timeout)
        except gevent.queue.Empty:
            return None

    def wait_event(self, table: str, types: tuple[str, ...], timeout: float) -> dict[str, Any] | None:
        """The next event of one of ``types`` at ``table`` (others are handed to ``seen``)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            msg = self.next_frame(left)
            if msg is None:
                return None
            if msg.get("type") == "event" and msg["table"] == table:
                self.seen(msg)
                if msg["event"]["type"] in types:
                    return msg
        return None

    def seen(self, msg: dict[str, Any]) -> None:
        """Every event the user waited past: subclasses keep what they need (their hands...)."""
