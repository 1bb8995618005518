"""Logging out ends the session on the server, not just in the client.

A logout (``DELETE /auth/session`` for the pages, ``POST /auth/logout`` for bearer clients)
revokes the token it came with: a row in ``revoked_tokens`` (migration ``server/0113``),
named by the token's ``jti`` (``auth.token_key``), kept until the token would have expired.
Every HTTP request and websocket handshake looks its token up there in the same statement
that reads its user (``store.get_user(token=...)``): a revoked token is 401 ``unauthorized``
(a socket: 4001). The sockets already open with it close with 4012 on every process, through
the channels, as an exclusion closes a player's (``responsible.watch_exclusions``): each
process closes its own, and looks its open sockets up every ``CASINO_SOCKET_RECHECK_SECONDS``
(one it was never told of: the broker away from the process that logged it out). Another
token of the same user (another device) is not touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from litestar.security.jwt import Token

from server import store
from server.auth import token_expiry, token_key
from server.channels_backend import RESYNC

log = logging.getLogger("casino.sessions")

LOGOUTS_CHANNEL = "casino-logouts"  # a revoked token's key, published when it is logged out


async def log_out(resources: Any, token: Token) -> None:
    """Revoke ``token`` (already authenticated by the caller) and close its sockets everywhere."""
    key = token_key(token)
    await store.revoke_token(resources.pool, key, token.sub, token_expiry(token))
    resources.channels.publish(key.encode(), [LOGOUTS_CHANNEL])


def _close(socket: Any) -> None:
    from server.protocol import CLOSE_LOGGED_OUT

    socket.close(CLOSE_LOGGED_OUT, "logged_out: this session was logged out")


async def watch_logouts(resources: Any) -> None:
    """Close this process's sockets whose token was logged out on any process (close 4012)."""
    await close_named(resources, LOGOUTS_CHANNEL, lambda s: getattr(s, "token_key", None),
                      store.revoked_among, _close)


async def close_named(resources: Any, channel: str, key: Callable[[Any], str | None],
                      among: Callable[[Any, list[str]], Awaitable[set[str]]],
                      close: Callable[[Any], None]) -> None:
    """Close this process's sockets that a message on ``channel`` names by their ``key`` (a
    token's, a player's), published by any process. After the broker came back (``RESYNC``:
    a message may have been published meanwhile, or dropped by a process that could not
    publish it), and every ``socket_recheck_seconds`` besides, the open sockets' keys are
    looked up in PostgreSQL (``among``) instead: a process whose own link to the broker held
    gets no RESYNC when only the publishing process lost it, and would otherwise keep such a
    socket open for good (an excluded player's stakes are refused at the table regardless:
    ``server.play_limits``)."""

    async def look_up() -> None:
        """Never the watcher's end: a failed look-up is logged, the next one comes."""
        try:
            sockets = [s for s in list(resources.sockets) if key(s)]
            if not sockets:
                return
            async with resources.pool.acquire() as conn:
                named = await among(conn, list({key(s) for s in sockets}))
            for socket in sockets:
                if key(socket) in named:
                    close(socket)
        except Exception:
            log.exception("could not look the open sockets up in PostgreSQL (%s)", channel)

    async def every(seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            await look_up()

    # The recheck runs whatever the broker does, from before the subscription is made.
    recheck = asyncio.create_task(every(resources.settings.socket_recheck_seconds), name=f"recheck {channel}")
    try:
        subscriber = await _subscribed(resources.channels, channel)
        try:
            if resources.sockets:  # (what was published while the subscription was being made)
                await look_up()
            async for raw in subscriber.iter_events():
                if raw == RESYNC:
                    await look_up()
                    continue
                named = raw.decode() if isinstance(raw, bytes) else str(raw)
                for socket in list(resources.sockets):
                    if key(socket) == named:
                        close(socket)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(resources.channels.unsubscribe(subscriber, [channel]))
    finally:
        recheck.cancel()
        await asyncio.gather(recheck, return_exceptions=True)


async def _subscribed(channels: Any, channel: str) -> Any:
    """A subscription to ``channel``, tried again every few seconds while the broker is away
    (a watcher that gave up at a start without the broker would hear nothing all day)."""
    wait = 0.5
    while True:
        try:
            return await channels.subscribe([channel])
        except Exception as exc:
            log.warning("could not subscribe to %s (%s); trying again in %.0f s", channel, exc, wait)
            await asyncio.sleep(wait)
            wait = min(wait * 2, 10.0)
