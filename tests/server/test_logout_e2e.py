"""Logging out ends the session on the server (``server.sessions``, migration ``server/0113``):
the token is revoked, so a copy of it is refused on HTTP (401) and on a websocket handshake
(4001), the sockets already open with it close (4012, on every process), and the user's other
tokens (other devices) keep working. Tokens issued before tokens had a ``jti`` are still
accepted until they expire, and can be logged out too."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import asyncpg
import httpx
import jwt
import pytest
import websockets

from helpers.databases import new_database
from server.client import CasinoClient, HTTPError

from .conftest import JWT_SECRET, PASSWORD, Floor, ServerProcess
from .test_many_processes_e2e import redis_url as redis_url  # (a fixture)

pytestmark = pytest.mark.slow


async def _status(client: CasinoClient, method: str, path: str) -> tuple[int, str]:
    try:
        await client.request(method, path)
    except HTTPError as exc:
        return exc.status, exc.code
    return 200, ""


async def _handshake_close(server, token: str) -> int:
    """Open a socket with ``token`` in the header: the close code it gets (0: it was let in)."""
    url = server.url.replace("http", "ws", 1) + "/ws"
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as ws:
        await ws.send(json.dumps({"type": "ping", "cid": "p1"}))
        try:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
        except websockets.ConnectionClosed:
            return ws.close_code
        assert reply["type"] == "pong"
        return 0


async def _closed_with(client: CasinoClient, seconds: float = 10) -> int:
    return await asyncio.wait_for(asyncio.shield(client.closed), seconds)


async def test_a_bearer_logout_revokes_only_that_token(server, floor):
    phone = await floor.account("lo-ann")
    laptop = CasinoClient(server.url)
    await laptop.login("lo-ann", PASSWORD)  # another device of hers: another token
    try:
        await phone.connect()
        await laptop.connect()
        token = phone.token
        await phone.logout()  # POST /auth/logout: 204
        phone.token = token  # (a copy of it, kept)
        # Her phone's socket closes with 4012; a copy of the token gets nowhere.
        assert await _closed_with(phone) == 4012
        assert await _status(phone, "GET", "/me") == (401, "unauthorized")
        assert await _status(phone, "GET", "/accounts/lo-ann/balance") == (401, "unauthorized")
        assert await _handshake_close(server, token) == 4001
        # A revoked token cannot log out again: 401, nothing else changes.
        assert await _status(phone, "POST", "/auth/logout") == (401, "unauthorized")
        # Her laptop is untouched: its socket is still open, its token still works.
        assert (await laptop.command({"type": "ping"}))["type"] == "pong"
        assert (await laptop.me())["id"] == "lo-ann"
        assert await _handshake_close(server, laptop.token) == 0
    finally:
        await phone.close()
        await laptop.close()


async def test_a_socket_whose_token_was_renewed_follows_the_new_token(server, floor):
    """A socket that sent an ``auth`` frame with a fresh token is closed by that token's
    logout, not by the old one's."""
    old = await floor.account("lo-bob")
    new = CasinoClient(server.url)
    await new.login("lo-bob", PASSWORD)
    try:
        await old.connect()
        assert (await old.command({"type": "auth", "token": new.token}))["type"] == "accepted"
        await old.request("POST", "/auth/logout")  # the token it connected with
        assert (await old.command({"type": "ping"}))["type"] == "pong"
        await new.request("POST", "/auth/logout")
        assert await _closed_with(old) == 4012
    finally:
        await old.close()
        await new.close()


async def test_logging_out_of_the_pages_closes_the_pages_sockets(server, floor):
    await floor.account("lo-cat")
    url = server.url.replace("http", "ws", 1) + "/ws"
    async with httpx.AsyncClient(base_url=server.url) as page:
        r = await page.post("/auth/session", json={"user": "lo-cat", "password": PASSWORD},
                            headers={"origin": server.url})
        assert r.status_code == 200
        token = page.cookies["casino_session"]
        async with websockets.connect(url, subprotocols=["casino.v1"], origin=server.url,
                                      additional_headers={"cookie": f"casino_session={token}"}) as ws:
            await ws.send(json.dumps({"type": "ping", "cid": "p1"}))
            assert json.loads(await ws.recv())["type"] == "pong"
            out = await page.delete("/auth/session", headers={"origin": server.url})
            assert out.status_code == 204 and "Max-Age=0" in out.headers["set-cookie"]
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            assert ws.close_code == 4012 and ws.close_reason.startswith("logged_out")
    # The cookie's token, copied before the logout, no longer opens anything.
    async with httpx.AsyncClient(base_url=server.url, cookies={"casino_session": token}) as copy:
        r = await copy.get("/me")
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        r = await copy.delete("/auth/session", headers={"origin": server.url})
        assert r.status_code == 401


async def test_a_token_from_before_jtis_works_until_logged_out(server, floor):
    """Tokens issued before migration 0113 carry no jti: still accepted until they expire (an
    upgrade logs nobody out), and named by their user and issue second for a logout."""
    await floor.account("lo-dan")
    now = datetime.now(UTC).replace(microsecond=0)

    def legacy(issued: datetime) -> str:
        return jwt.encode({"sub": "lo-dan", "exp": now + timedelta(hours=1), "iat": issued, "role": "player"},
                          JWT_SECRET, "HS256")

    first, second = CasinoClient(server.url), CasinoClient(server.url)
    first.token, second.token = legacy(now - timedelta(seconds=5)), legacy(now - timedelta(seconds=3))
    try:
        assert (await first.me())["id"] == "lo-dan"
        await first.connect()
        await first.request("POST", "/auth/logout")
        assert await _closed_with(first) == 4012
        assert await _status(first, "GET", "/me") == (401, "unauthorized")
        assert (await second.me())["id"] == "lo-dan"  # issued another second: another token
    finally:
        await first.close()
        await second.close()


async def test_revocations_of_expired_tokens_are_pruned_by_the_next_logout(server, floor):
    client = await floor.account("lo-eve")
    conn = await asyncpg.connect(server.db_url)
    try:
        await conn.execute("INSERT INTO revoked_tokens (jti, user_id, expires_at) "
                           "VALUES ('lo-old', 'lo-eve', now() - interval '2 minutes')")
        await client.request("POST", "/auth/logout")
        rows = await conn.fetch("SELECT jti, expires_at > now() AS live FROM revoked_tokens WHERE user_id = 'lo-eve'")
        assert [r["live"] for r in rows] == [True] and rows[0]["jti"] != "lo-old"
    finally:
        await conn.close()
        await client.close()


async def test_a_logout_on_one_process_closes_the_sockets_on_another(pg_url, redis_url, tmp_path_factory):
    async with new_database(pg_url, "logout") as url:
        tmp = tmp_path_factory.mktemp("two")
        a, b = (ServerProcess(url, tmp, REDIS_URL=redis_url) for _ in range(2))
        a.start()
        b.start()
        ann = other = None
        try:
            ann = await Floor(a).account("lo-fay")
            other = CasinoClient(b.url)  # her token's socket on the other process
            other.token = ann.token
            await other.connect()
            assert (await other.command({"type": "ping"}))["type"] == "pong"
            await ann.request("POST", "/auth/logout")  # on a
            assert await _closed_with(other) == 4012
            assert await _status(other, "GET", "/me") == (401, "unauthorized")
        finally:
            for c in (ann, other):
                if c is not None:
                    await c.close()
            a.stop()
            b.stop()


class _Socket:
    def __init__(self, key: str | None) -> None:
        self.token_key = key
        self.closing: tuple[int, str] | None = None

    def close(self, code: int, reason: str) -> None:
        self.closing = (code, reason)


_SETTINGS = SimpleNamespace(socket_recheck_seconds=60.0)


class _Channels:
    """One subscriber that hands over ``events``, then ends."""

    def __init__(self, events: list[bytes]) -> None:
        self.events = events

    async def subscribe(self, channels: list[str]) -> _Channels:
        return self

    async def iter_events(self):
        for e in self.events:
            yield e

    async def unsubscribe(self, subscriber, channels: list[str]) -> None:
        pass


async def test_after_the_broker_came_back_the_open_sockets_tokens_are_looked_up(pool):
    """A logout published while this process's broker connection was down never arrives:
    ``RESYNC`` (the connection is back) makes the watcher look its sockets' tokens up."""
    from server.channels_backend import RESYNC
    from server.sessions import watch_logouts

    await pool.execute("INSERT INTO revoked_tokens (jti, user_id, expires_at) "
                       "VALUES ('k-gone', 'u', now() + interval '1 hour')")
    gone, gone_too, kept, unauthenticated = _Socket("k-gone"), _Socket("k-gone"), _Socket("k-kept"), _Socket(None)
    later = _Socket("k-later")
    resources = SimpleNamespace(pool=pool, sockets={gone, gone_too, kept, unauthenticated, later},
                                channels=_Channels([RESYNC, b"k-later"]), settings=_SETTINGS)
    await watch_logouts(resources)
    assert gone.closing[0] == gone_too.closing[0] == later.closing[0] == 4012
    assert kept.closing is None and unauthenticated.closing is None


class _Player:
    """A socket of ``user`` (what the exclusions' watcher reads of one)."""

    def __init__(self, user: str | None) -> None:
        self.who = SimpleNamespace(id=user) if user else None
        self.closing: tuple[int, str] | None = None

    def close(self, code: int, reason: str) -> None:
        self.closing = (code, reason)


async def test_after_the_broker_came_back_the_open_sockets_players_exclusions_are_looked_up(pool):
    """An exclusion published while this process's broker connection was down (or dropped by
    the process that could not publish it) never arrives: ``RESYNC`` makes the watcher look
    its sockets' players up in ``player_exclusions``: a self-exclusion, ended or not, and a
    cool-off still running close them; a lapsed cool-off does not."""
    from server.channels_backend import RESYNC
    from server.protocol import CLOSE_EXCLUDED
    from server.responsible import watch_exclusions

    for user in ("ex-self", "ex-ended", "ex-cool", "ex-lapsed", "ex-free", "ex-later"):
        await pool.execute("INSERT INTO users (id, password_hash, role, currency) VALUES ($1, 'x', 'player', 'CHF')",
                           user)
    await pool.execute(
        """INSERT INTO player_exclusions (user_id, kind, period, until, set_by) VALUES
           ('ex-self', 'self_exclusion', '6m', now() + interval '180 days', 'ex-self'),
           ('ex-ended', 'self_exclusion', '6m', now() - interval '1 day', 'ex-ended'),
           ('ex-cool', 'cool_off', '24h', now() + interval '1 day', 'ex-cool'),
           ('ex-lapsed', 'cool_off', '24h', now() - interval '1 hour', 'ex-lapsed')""")
    socks = {u: _Player(u) for u in ("ex-self", "ex-ended", "ex-cool", "ex-lapsed", "ex-free", "ex-later")}
    anonymous = _Player(None)
    resources = SimpleNamespace(pool=pool, sockets={*socks.values(), anonymous},
                                channels=_Channels([RESYNC, b"ex-later"]), settings=_SETTINGS)
    await watch_exclusions(resources)
    closed = {u for u, s in socks.items() if s.closing and s.closing[0] == CLOSE_EXCLUDED}
    assert closed == {"ex-self", "ex-ended", "ex-cool", "ex-later"}
    assert anonymous.closing is None


class _Quiet(_Channels):
    """A subscriber that never hears anything: no message, no RESYNC (this process's link to
    the broker held while the process that logged out or excluded lost its own). Its first
    subscribe is refused (the broker away at the start), the next is made."""

    def __init__(self) -> None:
        super().__init__([])
        self.subscribes = 0

    async def subscribe(self, channels: list[str]) -> _Channels:
        self.subscribes += 1
        if self.subscribes == 1:
            raise ConnectionError("the broker is away")
        return self

    async def iter_events(self):
        await asyncio.Event().wait()
        yield b""


async def test_sockets_never_told_are_looked_up_every_while(pool):
    """Neither the message nor a RESYNC came: the watchers still look the open sockets up, every
    ``CASINO_SOCKET_RECHECK_SECONDS`` (even while the broker refuses the subscription), and
    close a logged-out token's and an excluded player's."""
    from server.protocol import CLOSE_EXCLUDED, CLOSE_LOGGED_OUT
    from server.responsible import watch_exclusions
    from server.sessions import watch_logouts

    await pool.execute("INSERT INTO users (id, password_hash, role, currency) VALUES ('rc-gone', 'x', 'player', 'CHF')")
    await pool.execute("INSERT INTO player_exclusions (user_id, kind, period, until, set_by) "
                       "VALUES ('rc-gone', 'cool_off', '24h', now() + interval '1 day', 'rc-gone')")
    await pool.execute("INSERT INTO revoked_tokens (jti, user_id, expires_at) "
                       "VALUES ('k-missed', 'u', now() + interval '1 hour')")
    token, token_kept = _Socket("k-missed"), _Socket("k-kept")
    player, player_kept = _Player("rc-gone"), _Player("rc-ok")
    quick = SimpleNamespace(socket_recheck_seconds=0.05)
    brokers = [_Quiet(), _Quiet()]
    watchers = [asyncio.create_task(watch(SimpleNamespace(pool=pool, sockets=sockets, channels=broker,
                                                          settings=quick)))
                for watch, sockets, broker in ((watch_logouts, {token, token_kept}, brokers[0]),
                                               (watch_exclusions, {player, player_kept}, brokers[1]))]
    try:
        for _ in range(100):
            if token.closing and player.closing:
                break
            await asyncio.sleep(0.05)
        assert token.closing[0] == CLOSE_LOGGED_OUT and player.closing[0] == CLOSE_EXCLUDED
        assert token_kept.closing is None and player_kept.closing is None
        assert not any(w.done() for w in watchers)  # (still watching)
        for _ in range(40):  # (the subscription, refused at first, is made half a second on)
            if all(b.subscribes == 2 for b in brokers):
                break
            await asyncio.sleep(0.05)
        assert [b.subscribes for b in brokers] == [2, 2]
    finally:
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
