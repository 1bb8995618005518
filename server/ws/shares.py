"""A crowd table's published frames cut into each player's share (``server.crowd`` says
what a player sees there): the cutting once per frame, shared by every socket like the
frame's text and seqs (``per_frame``), then per socket a join of the parts he may see."""

from __future__ import annotations

from typing import Any

import msgspec

from server.crowd import NAMED_LISTS, entry_owner, head_decoder
from server.protocol import encoder
from server.ws.per_frame import PerFrame


class _Part(msgspec.Struct):
    seq: int
    round: str
    event: msgspec.Raw


class _Frame(msgspec.Struct):
    table: str
    seq: int
    events: list[_Part]


class Split(msgspec.Struct):
    """A published ``events`` frame cut into its events, each encoded once, indexed by whom
    they are about, so that a socket's share costs what it holds, not the frame's size."""

    head: bytes  # '{"type":"events","table":...,"seq":N,"events":['
    public: list[tuple[int, bytes]]  # (position in the frame, the encoded event): everyone's
    own: dict[str, list[tuple[int, bytes]]]  # the player's own events
    # Events that list several players' entries (a spin's result): (position, seq, round, the
    # event without those lists, {list name: {player: his entries}}).
    shared: list[tuple[int, int, str, dict[str, Any], dict[str, dict[str, list[Any]]]]]


_frame_decoder = msgspec.json.Decoder(_Frame)


def _split(frame: bytes) -> Split:
    msg = _frame_decoder.decode(frame)
    public: list[tuple[int, bytes]] = []
    own: dict[str, list[tuple[int, bytes]]] = {}
    shared: list[tuple[int, int, str, dict[str, Any], dict[str, dict[str, list[Any]]]]] = []
    for i, p in enumerate(msg.events):
        who = head_decoder.decode(p.event)
        if who.owner:
            own.setdefault(who.owner, []).append((i, encoder.encode(p)))
        elif who.type in NAMED_LISTS:
            event = msgspec.json.decode(p.event)
            lists: dict[str, dict[str, list[Any]]] = {}
            for name in NAMED_LISTS[who.type]:
                index: dict[str, list[Any]] = {}
                for item in event.pop(name, None) or []:
                    index.setdefault(entry_owner(item), []).append(item)
                lists[name] = index
            shared.append((i, p.seq, p.round, event, lists))
        else:
            public.append((i, encoder.encode(p)))
    head = b'{"type":"events","table":' + encoder.encode(msg.table) + b',"seq":' + str(msg.seq).encode() + \
        b',"events":['
    return Split(head, public, own, shared)


# Cut once per published frame (every socket at a crowd table gets the same bytes object).
split = PerFrame(_split, min_bytes=0)


def frame_for(frame: bytes, player: str) -> bytes | None:
    """The part of a published ``events`` frame ``player`` may see, as a frame of its own; None
    when the batch holds nothing for him."""
    cut = split(frame)
    shown = [*cut.public, *cut.own.get(player, ())]
    for i, seq, round_id, event, lists in cut.shared:
        his = {**event, **{name: index.get(player, []) for name, index in lists.items()}}
        shown.append((i, encoder.encode({"seq": seq, "round": round_id, "event": his})))
    if not shown:
        return None
    shown.sort(key=lambda x: x[0])
    return cut.head + b",".join(raw for _, raw in shown) + b"]}"
