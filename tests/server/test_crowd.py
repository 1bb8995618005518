"""A crowd table's rules and frames (``server.crowd``, ``server.ws.shares``, ``server.ws.hub``),
without a server: what a player's share of a published frame is, byte for byte; a stored
event read back; the view; and which sockets a hub hands each frame to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import msgspec

from server import crowd
from server.channels_backend import RESYNC
from server.ws import hub as hubs
from server.ws.shares import frame_for


def _frame(seq: int, *events: dict) -> bytes:
    first = seq - len(events) + 1
    return msgspec.json.encode({"type": "events", "table": "t", "seq": seq, "events": [
        {"seq": first + i, "round": "spin-1", "event": e} for i, e in enumerate(events)]})


ANN_BET = {"type": "wager_placed", "wager": "s1-w1", "player": "ann", "spot": "rouge", "amount": 2000}
BOB_BET = {"type": "wager_placed", "wager": "s1-w2", "player": "bob", "spot": "noir", "amount": 1000}
RESULT = {"type": "spin_result", "spin": 1, "number": 4, "bets": [
    {"wager": "s1-w1", "player": "ann"}, {"wager": "s1-w2", "player": "bob"}], "partage_players": ["bob"]}
SETTLED = {"type": "spin_settled", "spin": 1}


def test_a_players_share_of_a_frame():
    frame = _frame(12, ANN_BET, BOB_BET, RESULT, SETTLED)
    ann = msgspec.json.decode(frame_for(frame, "ann"))
    assert ann["seq"] == 12 and [e["seq"] for e in ann["events"]] == [9, 11, 12]  # bob's bet (10): a hole
    assert ann["events"][0]["event"] == ANN_BET
    assert ann["events"][1]["event"]["bets"] == [{"wager": "s1-w1", "player": "ann"}]
    assert ann["events"][1]["event"]["partage_players"] == [] and ann["events"][1]["event"]["number"] == 4
    assert ann["events"][2]["event"] == SETTLED
    # A watcher with no bet sees the table's own events; a batch of others' bets is not his.
    cy = msgspec.json.decode(frame_for(frame, "cy"))
    assert [e["event"]["type"] for e in cy["events"]] == ["spin_result", "spin_settled"]
    assert cy["events"][0]["event"]["bets"] == []
    assert frame_for(_frame(2, ANN_BET, BOB_BET), "cy") is None


def test_a_stored_event_read_back_and_the_view():
    assert crowd.sees_stored(msgspec.json.encode(BOB_BET), "ann") is None
    assert bytes(crowd.sees_stored(msgspec.json.encode(ANN_BET), "ann")) == msgspec.json.encode(ANN_BET)
    assert crowd.sees_stored(msgspec.json.encode(RESULT), "bob")["bets"] == [{"wager": "s1-w2", "player": "bob"}]
    view = {"phase": "betting", "bets": [{"player": "ann", "spot": "rouge"}, {"player": "bob", "spot": "noir"}],
            "late": [{"player": "bob", "late": "l1"}]}
    assert crowd.view_for(view, "ann") == {"phase": "betting", "bets": [{"player": "ann", "spot": "rouge"}],
                                           "late": []}


class _Source:
    """The hub's channel subscription: frames as the channels plugin hands them over."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    async def iter_events(self) -> AsyncGenerator[bytes, None]:
        while True:
            yield await self.queue.get()


class _Channels:
    def __init__(self) -> None:
        self.source = _Source()
        self.unsubscribed = False

    async def subscribe(self, channel: str) -> _Source:
        assert channel == "table.t"
        return self.source

    async def unsubscribe(self, subscriber: _Source, channel: str) -> None:
        self.unsubscribed = True


def _drain(member: hubs.Member) -> list[bytes]:
    """What the hub handed the member (no socket's feed attached: it waits in the member)."""
    out, member.early = member.early, []
    return out


async def test_a_hub_hands_each_frame_to_the_sockets_it_concerns():
    channels, registry = _Channels(), {}
    ann = await hubs.join(registry, channels, "t", "ann")
    bob = await hubs.join(registry, channels, "t", "bob")
    cy = await hubs.join(registry, channels, "t", "cy")
    assert len(registry) == 1  # one subscription for the process
    bets, result, lost = _frame(3, ANN_BET, BOB_BET), _frame(5, RESULT, SETTLED), _frame(9, ANN_BET)
    for f in (bets, result, lost):
        channels.source.queue.put_nowait(f)
    await asyncio.sleep(0.05)
    # 6..8 never came: everyone reads them again, from after 5 (what went by before it, each had)
    assert _drain(ann) == [bets, result, RESYNC + b":5", lost]
    assert _drain(bob) == [bets, result, RESYNC + b":5"]
    assert _drain(cy) == [result, RESYNC + b":5"]  # nothing of his in the bets
    for m in (ann, bob):
        await hubs.leave(registry, "t", m)
    assert registry and not channels.unsubscribed
    await hubs.leave(registry, "t", cy)
    assert not registry and channels.unsubscribed  # the last one out ends the subscription
