"""The websocket protocol: one tagged union of client messages, one of server messages.

Every client command carries a client id ``cid``; the server answers it with ``accepted``
or ``rejected`` (stable ``code``), and answers a retried ``cid`` again without applying it
twice. Table events carry the table's sequence number ``seq``: a subscriber gets a
``snapshot`` (what it may see, at ``seq``) then every event after it; resuming with
``since`` replays exactly the events after ``since``. Table events always travel in
``events`` messages: one per committed batch (consecutive seqs, in order), so that a bet
costs each subscriber a share of one frame, not a frame of its own.

Game commands travel inside ``play`` as the game's own JSON (its engine's tagged union),
decoded by that game's decoder once the table is known.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

# Close codes (4000-4999 are ours).
CLOSE_UNAUTHORIZED = 4001
CLOSE_TOKEN_EXPIRED = 4003
CLOSE_TOO_SLOW = 4008
CLOSE_STREAM_FAILED = 1011  # (RFC 6455: the server hit an unexpected condition) a table's stream broke here
CLOSE_SESSION_LIMIT = 4010  # the player's own session time limit is up (server.responsible)
CLOSE_EXCLUDED = 4011  # the player excluded himself (cool-off or self-exclusion)
CLOSE_LOGGED_OUT = 4012  # the token it authenticated with was logged out (server.sessions)


class _Msg(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    pass


# A command's id: the table answers each once, and a retry again (so an empty one would make
# every command sent with it a retry of the first); stored with its answer, hence bounded.
Cid = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


# ---- client -> server ------------------------------------------------------------------


class Auth(_Msg, tag="auth"):
    """The connection's token: as its first frame when the handshake carried none (answered
    ``accepted``), or later to replace it before it expires."""

    cid: Cid
    token: str


class Subscribe(_Msg, tag="subscribe"):
    """Follow a table. ``since``: the last seq seen, to resume without a snapshot."""

    cid: Cid
    table: str
    since: int | None = None


class Unsubscribe(_Msg, tag="unsubscribe"):
    cid: Cid
    table: str


class Play(_Msg, tag="play"):
    """A game command for a subscribed table, in that game's command format."""

    cid: Cid
    table: str
    command: msgspec.Raw


class Ping(_Msg, tag="ping"):
    cid: Annotated[str, msgspec.Meta(max_length=128)] = ""


ClientMessage = Auth | Subscribe | Unsubscribe | Play | Ping


# ---- server -> client ------------------------------------------------------------------


class Accepted(_Msg, tag="accepted"):
    cid: str
    table: str = ""
    # The seq of the last event this command produced (0: none).
    seq: int = 0


class Rejected(_Msg, tag="rejected"):
    cid: str
    code: str
    message: str
    table: str = ""


class Snapshot(_Msg, tag="snapshot"):
    """The table as this connection may see it, after event ``seq``."""

    table: str
    seq: int
    game: str
    profile: str
    mode: str
    currency: str
    view: Any


class TableEvent(msgspec.Struct):
    """One table event inside ``events``: its seq, the round it belongs to, the event."""

    seq: int
    round: str
    event: Any


class Events(_Msg, tag="events"):
    """Table events with consecutive seqs, in order; ``seq`` is the last one's."""

    table: str
    seq: int
    events: list[TableEvent]


class Error(_Msg, tag="error"):
    """A frame that could not be tied to a command (malformed, oversize, unknown type)."""

    code: str
    message: str


class Heartbeat(_Msg, tag="heartbeat"):
    at: str


class Pong(_Msg, tag="pong"):
    cid: str = ""


class RealityCheck(_Msg, tag="reality_check"):
    """Every ``reality_check_minutes`` of a player's session (his own setting): how long he
    has been connected, since when, and his wallet's change since then (minor units)."""

    minutes: int
    since: str
    net: int
    currency: str


# What the server sends (the AsyncAPI document lists these two unions, server.asyncapi).
ServerMessage = Accepted | Rejected | Snapshot | Events | Error | Heartbeat | Pong | RealityCheck

client_decoder = msgspec.json.Decoder(ClientMessage)
encoder = msgspec.json.Encoder()


# Table events the server itself emits (besides the engine's), with the same seq numbering.
class TableInterrupted(msgspec.Struct, frozen=True, tag="table_interrupted"):
    """The server stopped while this table was live; ``outcome`` says what the rules did."""

    outcome: str


class TableResumed(msgspec.Struct, frozen=True, tag="table_resumed"):
    owner: str


ServerEvent = TableInterrupted | TableResumed
