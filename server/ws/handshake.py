"""How a websocket presents its token (never in the URL: URLs are logged)."""

from __future__ import annotations

import asyncio

import msgspec
from litestar import WebSocket

from games.errors import GameError
from server.auth import SESSION_COOKIE, WS_AUTH_SECONDS, bearer_from_subprotocols, same_origin
from server.protocol import Auth, client_decoder


async def presented_token(socket: WebSocket, max_frame_bytes: int) -> tuple[str, str]:
    """The token, and the cid of the frame that brought it ("" from the handshake):
    'Authorization: Bearer <token>', else a 'bearer.<token>' subprotocol, else a first
    frame {"type": "auth", "cid", "token"} within WS_AUTH_SECONDS; from our own pages, the
    session cookie (only when the handshake's Origin is this host: another site's page would
    have the browser send it too). Never the URL's query: URLs end up in access logs, so a
    ?token= is refused even when valid."""
    if "token" in socket.query_params:
        raise GameError("unauthorized", "A token in the URL is refused (URLs are logged): send it as "
                                        "'Authorization: Bearer', a subprotocol or an auth frame.")
    header = socket.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip(), ""
    token = bearer_from_subprotocols(socket.scope.get("subprotocols") or [])
    if token:
        return token, ""
    cookie = socket.cookies.get(SESSION_COOKIE, "")
    if cookie and same_origin(socket.headers):
        return cookie, ""
    refusal = GameError("unauthorized", "Log in first: a token in 'Authorization: Bearer', a "
                                        "'bearer.<token>' subprotocol or a first auth frame.")
    try:
        message = await asyncio.wait_for(socket.receive(), WS_AUTH_SECONDS)
    except TimeoutError:
        raise refusal from None
    raw = message.get("text") or message.get("bytes") or ""
    if message["type"] == "websocket.disconnect" or len(raw) > max_frame_bytes:
        raise refusal
    try:
        msg = client_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        raise refusal from None
    if not isinstance(msg, Auth):
        raise refusal
    return msg.token, msg.cid
