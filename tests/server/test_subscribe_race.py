"""Subscribes to one table sent at once on one socket (a reconnect racing its own retry):
each waits for the broker and for the table's view, so they run side by side. The later
replaces the earlier, and the earlier, replaced during a wait, must touch nothing of the
later's. Here the socket's ``Connection`` runs for real against a broker and a table that
take their time (fakes), so the interleavings are the ones a broker gives."""

from __future__ import annotations

import asyncio
import collections
from types import SimpleNamespace

import pytest

from games.errors import GameError
from server.auth import Principal
from server.config import Settings
from server.protocol import Accepted, Rejected, Subscribe
from server.ws import connection


class _Subscription:
    """A channel that publishes nothing here."""

    def attach(self, feed) -> None:
        self.feed = feed


class _Broker:
    """Subscribes one at a time, each taking a while (a SUBSCRIBE's round trip)."""

    def __init__(self) -> None:
        self.turn = asyncio.Lock()
        self.live: set[_Subscription] = set()

    async def subscribe(self, channel: str) -> _Subscription:
        async with self.turn:
            await asyncio.sleep(0.01)
        s = _Subscription()
        self.live.add(s)
        return s

    async def unsubscribe(self, s: _Subscription, channel: str) -> None:
        self.live.discard(s)


class _Router:
    """The table's owner: its view takes a while; the first may be refused. It counts each
    player's sockets at the table (``joined``/``left``), as the owner does for seat releases."""

    def __init__(self, refuse_first: bool) -> None:
        self.present: collections.Counter[str] = collections.Counter()
        self.views = 0
        self.refuse_first = refuse_first

    def reachable(self, table: str) -> None:
        return None

    async def view(self, table: str, who: Principal) -> tuple[int, dict]:
        self.views += 1
        n = self.views
        await asyncio.sleep(0.05)
        if self.refuse_first and n == 1:
            raise GameError("table_unavailable", "The table is moving.")
        return 5, {}

    def joined(self, table: str, who: Principal) -> None:
        self.present[who.id] += 1

    def left(self, table: str, who: Principal) -> None:
        self.present[who.id] -= 1


def _eves_socket(router: _Router, broker) -> tuple[connection.Connection, list[Accepted | Rejected]]:
    """Eve's socket on a live roulette table (its owner ``router``), through ``broker``, and
    the answers it gives her."""
    manager = SimpleNamespace(info=lambda t: SimpleNamespace(game="roulette", profile="campione", mode="live",
                                                             currency="CHF"), router=router)
    resources = SimpleNamespace(settings=Settings(jwt_secret="x" * 40), manager=manager, hubs={}, pool=None)
    conn = connection.Connection(SimpleNamespace(), resources, broker)
    conn.who = Principal("eve", "player")
    said: list[Accepted | Rejected] = []
    conn.answer = said.append  # type: ignore[method-assign]
    conn.refuse = said.append  # type: ignore[method-assign]
    return conn, said


@pytest.mark.parametrize(("sent", "refuse_first", "answers"), [
    (2, False, [("Accepted", "s0"), ("Accepted", "s1")]),
    (2, True, [("Rejected", "s0"), ("Accepted", "s1")]),
    (3, False, [("Accepted", "s0"), ("Accepted", "s1"), ("Accepted", "s2")]),
], ids=["two", "the-first-refused", "three"])
async def test_subscribes_at_once_leave_one_subscription_and_one_presence(monkeypatch, sent, refuse_first,
                                                                          answers):
    monkeypatch.setattr(connection.crowd, "filtered_for", lambda info, who: False)
    monkeypatch.setattr(connection, "game_kind", lambda game: None)
    router, broker = _Router(refuse_first), _Broker()
    conn, said = _eves_socket(router, broker)

    async def deliver(frame: bytes) -> bool:
        return True

    conn.deliver = deliver  # type: ignore[method-assign]
    await asyncio.gather(*(conn._subscribe(Subscribe(f"s{i}", "t1")) for i in range(sent)))
    assert sorted((type(m).__name__, m.cid) for m in said) == sorted(answers)
    # One subscription, live at the broker; the player counted at the table once.
    assert list(conn.subs) == ["t1"] and len(broker.live) == 1
    assert conn.present == {"t1"} and router.present["eve"] == 1 and conn.last_seq["t1"] == 5
    await conn._unsubscribe("t1")
    assert broker.live == set() and router.present["eve"] == 0


async def test_a_crowd_socket_reads_what_a_new_hubs_first_frame_skipped_before_it(monkeypatch):
    """A crowd table's hub made for this socket: the table's first frame there starts at 8
    while the socket's snapshot holds 5 (6 and 7 lost on the way, or a table that moved, its
    new owner's frame overtaking the old owner's last). The hub checks holes only from its
    first frame on, so the socket reads 6..7 from PostgreSQL after its snapshot and before
    that frame (``Member.anchor``); a socket at a plain table checks its own holes."""
    import msgspec

    from .test_crowd_review import _frame, _SlowChannels

    monkeypatch.setattr(connection.crowd, "filtered_for", lambda info, who: True)
    monkeypatch.setattr(connection, "game_kind", lambda game: None)
    router, channels = _Router(refuse_first=False), _SlowChannels()
    channels.go.set()

    async def view(table: str, who: Principal) -> tuple[int, dict]:
        channels.sources[0].queue.put_nowait(_frame(8, {"type": "spin_opened", "spin": 2}))
        await asyncio.sleep(0.05)  # (the frame reaches the hub meanwhile: it waits for the socket)
        return 5, {}

    router.view = view  # type: ignore[method-assign]
    conn, said = _eves_socket(router, channels)
    out: list[object] = []

    def sent(frame: bytes) -> None:
        msg = msgspec.json.decode(frame)
        out.append((msg["type"], msg["seq"]))

    async def deliver(frame: bytes) -> bool:
        sent(frame)
        return True

    async def fill_gap(table: str, have: int, upto: int, feed) -> bool:  # (what it reads: the resync tests)
        out.append(("read", have, upto))
        conn.last_seq[table] = upto
        return True

    conn.deliver = deliver  # type: ignore[method-assign]
    conn._fill_gap = fill_gap  # type: ignore[method-assign]
    conn._queue = sent  # type: ignore[method-assign]
    conn._full = lambda: False  # type: ignore[method-assign]
    await conn._subscribe(Subscribe("s0", "t"))
    await asyncio.sleep(0.05)
    assert [type(m).__name__ for m in said] == ["Accepted"]
    assert out == [("snapshot", 5), ("read", 5, 7), ("events", 8)] and conn.last_seq["t"] == 8
    await conn._unsubscribe("t")
