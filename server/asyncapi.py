"""The websocket protocol as an AsyncAPI 3.0 document, generated from the msgspec types
(``msgspec.json.schema_components``), never typed in by hand."""

from __future__ import annotations

from typing import Any, get_args

import msgspec
from litestar import Response, get

from server import protocol
from server.kinds import KINDS

# The protocol's own unions: a message added there is documented here.
_CLIENT: list[Any] = list(get_args(protocol.ClientMessage))
_SERVER: list[Any] = list(get_args(protocol.ServerMessage))


def document() -> dict[str, Any]:
    types: list[Any] = [*_CLIENT, *_SERVER, protocol.ServerEvent]
    games = sorted(KINDS.items())
    for _, k in games:
        types += [k.command_type, k.event_type]
    schemas, components = msgspec.json.schema_components(types, ref_template="#/components/schemas/{name}")
    messages: dict[str, Any] = {}
    for t in _CLIENT + _SERVER:
        name = t.__name__
        messages[name] = {
            "name": t.__struct_config__.tag,
            "title": name,
            "summary": (t.__doc__ or "").strip().split("\n")[0],
            "payload": {"$ref": f"#/components/schemas/{name}"},
        }
    offset = len(_CLIENT) + len(_SERVER) + 1
    game_docs = {}
    for i, (name, _) in enumerate(games):
        game_docs[name] = {"commands": schemas[offset + 2 * i], "events": schemas[offset + 2 * i + 1]}
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "casino websocket protocol",
            "version": "1",
            "description": (
                "One connection per client at /ws. The token from POST /auth/login goes in "
                "'Authorization: Bearer <token>' (non-browser clients), or as a subprotocol: "
                "'Sec-WebSocket-Protocol: casino.v1, bearer.<token>' (browsers; the server answers "
                "'casino.v1' and never echoes the token), or in a first frame "
                "{\"type\": \"auth\", \"cid\": ..., \"token\": ...} sent right after connecting "
                "(within CASINO_WS_AUTH_SECONDS, 5 by default; answered 'accepted'). Never in the URL: "
                "a '?token=' connection is closed with 4001. 'auth' later replaces the token before it "
                "expires. "
                "Every client command carries a client id 'cid' and is answered by "
                "'accepted' or 'rejected' (stable 'code'); a retried cid is answered again, never "
                "applied twice. 'play' carries a game command in that game's format (see "
                "x-game-commands). Table events carry the table's 'seq': 'subscribe' gives a "
                "'snapshot' then every later event; 'subscribe' with 'since' resumes exactly after it. "
                "Table events always come in 'events' messages (one per committed batch, consecutive "
                "seqs in order; 'seq' is the last one's). "
                f"Close codes: {protocol.CLOSE_UNAUTHORIZED} unauthorized, {protocol.CLOSE_TOKEN_EXPIRED} "
                f"token expired, {protocol.CLOSE_TOO_SLOW} client too slow (its queue overflowed), "
                f"{protocol.CLOSE_SESSION_LIMIT} the player's own session limit is up, "
                f"{protocol.CLOSE_EXCLUDED} the player is excluded (cool-off, self-exclusion), "
                f"{protocol.CLOSE_LOGGED_OUT} its token was logged out (POST /auth/logout, DELETE /auth/session)."
            ),
        },
        "channels": {
            "ws": {
                "address": "/ws",
                "messages": {n: {"$ref": f"#/components/messages/{n}"} for n in messages},
            },
            **_tournament_channel(game_docs),
        },
        "operations": {
            "clientSends": {
                "action": "receive",
                "channel": {"$ref": "#/channels/ws"},
                "messages": [{"$ref": f"#/channels/ws/messages/{t.__name__}"} for t in _CLIENT],
            },
            "serverSends": {
                "action": "send",
                "channel": {"$ref": "#/channels/ws"},
                "messages": [{"$ref": f"#/channels/ws/messages/{t.__name__}"} for t in _SERVER],
            },
        },
        "components": {"schemas": components, "messages": messages},
        "x-game-commands": {n: d["commands"] for n, d in game_docs.items()},
        "x-game-events": {n: d["events"] for n, d in game_docs.items()},
        "x-server-events": schemas[len(_CLIENT) + len(_SERVER)],
    }


def _tournament_channel(game_docs: dict[str, Any]) -> dict[str, Any]:
    """A tournament's channel: the same websocket, ``subscribe`` to the tournament's id."""
    if "tournament" not in game_docs:
        return {}
    return {"tournament": {
        "address": "/ws (subscribe to the tournament's id)",
        "title": "A blackjack tournament or Sit&Go (Titano Art. 22-29)",
        "description": (
            "'subscribe' with a tournament's id (GET /tournaments) gives a 'snapshot' of the tournament "
            "(registrations, phase, tables and seats, live standings, the cut line, your own place) and "
            "then its events in 'events' messages, like a table's: registrations and check-ins, the "
            "seating draw (started, phase_started with each table's seats), standings_updated after every "
            "hand a table reports (the ranking and the cut line), eliminated, tie_break, phase_ended, "
            "paused/resumed, expelled, prize_paid and finished (or cancelled). Commands go as 'play' with the "
            "tournament's id (or POST /tournaments/{id}/commands): register, check_in, and the director's "
            "open_registration, close_registration, start, pause, resume, expel, cancel. Each phase's tables "
            "are ordinary blackjack tables in points (PTS): subscribe to them to play."),
        "messages": {"TournamentEvent": {"name": "event", "payload": game_docs["tournament"]["events"]}},
    }}


_cached: bytes | None = None


def document_json() -> bytes:
    global _cached
    if _cached is None:
        _cached = msgspec.json.encode(document())
    return _cached


@get("/asyncapi.json", include_in_schema=False)
async def asyncapi_route() -> Response[bytes]:
    return Response(document_json(), media_type="application/json")
